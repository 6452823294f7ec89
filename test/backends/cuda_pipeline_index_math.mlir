// The index arithmetic of generated kernels, on CUDA. Each thread splits a
// linear index into one index per dimension, once per element, so the
// divisions must be cheap: by constants, which the pipeline moves into the
// launches before outlining (gpu-launch-sink-index-computations), and in 32
// bits where the index space fits (Delinearize.h). Before, the extents
// became kernel parameters and every element paid run-time 64-bit
// divisions (div.s64): a ReLU gradient over a 103 MB tensor ran at half the
// GPU's memory bandwidth.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --emit=ptx -o - | FileCheck %s

// The elementwise kernel and the bias gradient's kernels (a split block
// reduction) each divide only by constants, in 32 bits: multiply-highs, no
// div instruction at all.
// CHECK-NOT:   div.
// CHECK:       .entry kiln_impl_relu_grad_kernel(
// CHECK-NOT:   div.
// CHECK:       mul.hi.u32
// CHECK-NOT:   div.
// CHECK:       .entry kiln_impl_relu_grad_kernel_
// CHECK-NOT:   div.
// CHECK:       mul.hi.u32
// CHECK-NOT:   div.
func.func @relu_grad(%x: tensor<32x64x56x56xf32>, %dy: tensor<32x64x56x56xf32>) -> (tensor<32x64x56x56xf32>, tensor<64xf32>) {
  %z = kiln.constant dense<0.000000e+00> : tensor<32x64x56x56xf32>
  %c = kiln.compare gt, %x, %z : tensor<32x64x56x56xf32>
  %s = kiln.select %c, %dy, %z : tensor<32x64x56x56xi1>, tensor<32x64x56x56xf32>
  %g = kiln.reduce_sum %s, dims = [0, 2, 3] : tensor<32x64x56x56xf32>
  return %s, %g : tensor<32x64x56x56xf32>, tensor<64xf32>
}
