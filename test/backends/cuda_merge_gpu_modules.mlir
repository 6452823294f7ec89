// REQUIRES: cuda-backend
// RUN: kiln-opt %s --kiln-cuda-merge-gpu-modules | FileCheck %s

// Two outlined kernels with the same function name end up in one module,
// each named after the module it came from, and the launches follow them.
// CHECK:     gpu.module @kiln_kernels {
// CHECK:       gpu.func @f_kernel(%{{.+}}: memref<4xf32>) kernel
// CHECK:       gpu.func @f_kernel_0(%{{.+}}: memref<4xf32>) kernel
// CHECK:     }
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @f
// CHECK:       gpu.launch_func  @kiln_kernels::@f_kernel
// CHECK:       gpu.launch_func  @kiln_kernels::@f_kernel_0
module attributes {gpu.container_module} {
  gpu.module @f_kernel {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @f(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}
