// The CUDA target's program with its kernels run on the host: a module for
// the CPU that kiln-run calls anywhere. Block reductions (gpu.all_reduce
// over a block of threads, a block per row) sum 64 squares of the input in
// each of 1024 rows, a one-thread kernel doubles.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda-on-cpu -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST
// RUN: kiln-run %t.kmod --device=cpu --function sum_to --input 1.5 2>&1 | FileCheck %s --check-prefix=SUM
// RUN: kiln-run %t.kmod --device=cpu --function twice --input 1.5 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: kiln-compile %s --target=cuda-on-cpu --emit=mlir | FileCheck %s --check-prefix=LOWERED

// LIST: cpu-x86_64
// LIST: sum_to(arg0: f32[]) -> (out0: f32[1024])
// SUM: out0: f32[1024] = [144, 144, 144,
// TWICE: 3
// RUN: kiln-compile %s --target=cuda-on-cpu --emit=mlir --mlir-print-ir-before=kiln-cuda-launches-on-cpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNELS
// KERNELS: gpu.all_reduce add
// No GPU op or GPU runtime call is left.
// LOWERED-NOT: gpu.
// LOWERED-NOT: mgpu
func.func @sum_to(%start: tensor<f32>) -> tensor<1024xf32> {
  %first = kiln.broadcast_in_dim %start, dims = [] : (tensor<f32>) -> tensor<1024x64xf32>
  %x = kiln.mul %first, %first : tensor<1024x64xf32>
  %s = kiln.reduce_sum %x, dims = [1] : tensor<1024x64xf32>
  return %s : tensor<1024xf32>
}
func.func @twice(%x: tensor<f32>) -> tensor<f32> {
  %y = kiln.add %x, %x : tensor<f32>
  return %y : tensor<f32>
}
