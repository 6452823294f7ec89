// kiln-compile --autocast: attention written as ops is fused before the
// products it is made of are cast, and stays one kiln.attention while the
// other products become bf16 products: f32 on the CPU, whose attention
// kernel is f32; bf16 (its operands cast, its result widened) on the CUDA
// targets from sm_80 on, whose tensor-core kernels (or cuDNN) take it, as
// PyTorch's autocast runs scaled_dot_product_attention in half precision.
//
// RUN: kiln-compile %s --autocast=bf16 --emit=mlir -o /dev/null --mlir-print-ir-after=kiln-autocast 2>&1 | FileCheck %s
// RUN: kiln-compile %s --autocast=bf16 --emit=mlir -o - | FileCheck %s --check-prefix=CPU
// RUN: %if cuda-backend %{ kiln-compile %s --autocast=bf16 --target=cuda-on-cpu --emit=mlir -o /dev/null --mlir-print-ir-after=kiln-autocast 2>&1 | FileCheck %s --check-prefix=CUDA %}
// RUN: %if cuda-backend %{ kiln-compile %s --autocast=bf16 --target=cuda --cuda-arch=sm_90 --emit=mlir -o /dev/null --mlir-print-ir-after=kiln-autocast 2>&1 | FileCheck %s --check-prefix=CUDA %}
// RUN: %if cuda-backend %{ kiln-compile %s --autocast=bf16 --target=cuda --cuda-arch=sm_75 --emit=mlir -o /dev/null --mlir-print-ir-after=kiln-autocast 2>&1 | FileCheck %s %}

// CHECK-LABEL: func.func @layer
// CHECK:         %[[X:.*]] = kiln.cast %arg0 : tensor<2x8x16xf32> to tensor<2x8x16xbf16>
// CHECK:         kiln.matmul %[[X]], %{{.*}} : tensor<2x8x16xbf16>, tensor<2x16x16xbf16> -> f32
// CHECK-NOT:     kiln.matmul
// CHECK:         kiln.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
// CHECK-NOT:     kiln.matmul
// CHECK:         return

// CUDA-LABEL: func.func @layer
// CUDA:         %[[X:.*]] = kiln.cast %arg0 : tensor<2x8x16xf32> to tensor<2x8x16xbf16>
// CUDA-DAG:     %[[KH:.*]] = kiln.cast %arg2 : tensor<2x8x16xf32> to tensor<2x8x16xbf16>
// CUDA-DAG:     %[[VH:.*]] = kiln.cast %arg3 : tensor<2x8x16xf32> to tensor<2x8x16xbf16>
// CUDA:         %[[Q:.*]] = kiln.matmul %[[X]], %{{.*}} : tensor<2x8x16xbf16>, tensor<2x16x16xbf16> -> f32
// CUDA:         %[[QH:.*]] = kiln.cast %[[Q]] : tensor<2x8x16xf32> to tensor<2x8x16xbf16>
// CUDA:         %[[O:[a-z_0-9]+]], %{{.*}} = kiln.attention %[[QH]], %[[KH]], %[[VH]] {scale = 2.500000e-01 : f64} : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
// CUDA:         %[[W:.*]] = kiln.cast %[[O]] : tensor<2x8x16xbf16> to tensor<2x8x16xf32>
// CUDA:         return %[[W]]

// The CPU's f32 attention kernel is called.
// CPU: llvm.call @kiln_attention_f32_forward(


func.func @layer(%x: tensor<2x8x16xf32>, %w: tensor<2x16x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %q = kiln.matmul %x, %w : tensor<2x8x16xf32>, tensor<2x16x16xf32>
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<2x8x16xf32>
  %qk = kiln.matmul %q, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32>
  %c = kiln.constant dense<0.25> : tensor<2x8x8xf32>
  %s = kiln.mul %qk, %c : tensor<2x8x8xf32>
  %m = kiln.reduce_max %s, dims = [2] : tensor<2x8x8xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %sh = kiln.sub %s, %bm : tensor<2x8x8xf32>
  %e = kiln.exp %sh : tensor<2x8x8xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<2x8x8xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x8xf32>
  %p = kiln.div %e, %bz : tensor<2x8x8xf32>
  %o = kiln.matmul %p, %v : tensor<2x8x8xf32>, tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}
