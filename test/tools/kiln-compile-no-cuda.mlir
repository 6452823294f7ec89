// A kiln built without the CUDA backend (-DKILN_CUDA_BACKEND=OFF) refuses
// --target=cuda with an error that names the option, not a crash.
// UNSUPPORTED: cuda-backend
// RUN: not kiln-compile %s --target=cuda --emit=ptx 2>&1 | FileCheck %s
// CHECK: built without the CUDA backend (-DKILN_CUDA_BACKEND=OFF)

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.add %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
