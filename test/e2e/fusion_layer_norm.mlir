// Layer norm and RMS norm: two reductions over the same rows with the
// elementwise work between and after them, one region each. The harness
// also compiles this file with fusion off and evaluates the fused IR.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-opt %s --kiln-fuse | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// FUSED-LABEL: func.func @layer_norm(
// FUSED-NEXT:    kiln.fused reduction
// FUSED-COUNT-2:   kiln.reduce_mean
// FUSED-NOT:     kiln.fused
// FUSED:         return
// CHECK: layer_norm(arg0: f32[6,20], arg1: f32[20], arg2: f32[20]) -> (out0: f32[6,20])
func.func @layer_norm(%x: tensor<6x20xf32>, %g: tensor<20xf32>, %b: tensor<20xf32>) -> tensor<6x20xf32> {
  %mean = kiln.reduce_mean %x, dims = [1] : tensor<6x20xf32>
  %mb = kiln.broadcast_in_dim %mean, dims = [0] : (tensor<6xf32>) -> tensor<6x20xf32>
  %xc = kiln.sub %x, %mb : tensor<6x20xf32>
  %sq = kiln.mul %xc, %xc : tensor<6x20xf32>
  %var = kiln.reduce_mean %sq, dims = [1] : tensor<6x20xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<6xf32>
  %ve = kiln.add %var, %eps : tensor<6xf32>
  %r = kiln.rsqrt %ve : tensor<6xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : (tensor<6xf32>) -> tensor<6x20xf32>
  %n = kiln.mul %xc, %rb : tensor<6x20xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [1] : (tensor<20xf32>) -> tensor<6x20xf32>
  %s = kiln.mul %n, %gb : tensor<6x20xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<20xf32>) -> tensor<6x20xf32>
  %y = kiln.add %s, %bb : tensor<6x20xf32>
  return %y : tensor<6x20xf32>
}

// Over the last dim of a rank-3 activation, in f64, also returning the
// per-row variance (an extra result of the region).
// FUSED-LABEL: func.func @layer_norm_3d_f64(
// FUSED-NEXT:    kiln.fused reduction {{.*}} -> (tensor<2x5x16xf64>, tensor<2x5xf64>)
// FUSED-NOT:     kiln.fused
// CHECK: layer_norm_3d_f64(arg0: f64[2,5,16], arg1: f64[16]) -> (out0: f64[2,5,16], out1: f64[2,5])
func.func @layer_norm_3d_f64(%x: tensor<2x5x16xf64>, %g: tensor<16xf64>) -> (tensor<2x5x16xf64>, tensor<2x5xf64>) {
  %mean = kiln.reduce_mean %x, dims = [2] : tensor<2x5x16xf64>
  %mb = kiln.broadcast_in_dim %mean, dims = [0, 1] : (tensor<2x5xf64>) -> tensor<2x5x16xf64>
  %xc = kiln.sub %x, %mb : tensor<2x5x16xf64>
  %sq = kiln.mul %xc, %xc : tensor<2x5x16xf64>
  %var = kiln.reduce_mean %sq, dims = [2] : tensor<2x5x16xf64>
  %eps = kiln.constant dense<1.0e-5> : tensor<2x5xf64>
  %ve = kiln.add %var, %eps : tensor<2x5xf64>
  %r = kiln.rsqrt %ve : tensor<2x5xf64>
  %rb = kiln.broadcast_in_dim %r, dims = [0, 1] : (tensor<2x5xf64>) -> tensor<2x5x16xf64>
  %n = kiln.mul %xc, %rb : tensor<2x5x16xf64>
  %gb = kiln.broadcast_in_dim %g, dims = [2] : (tensor<16xf64>) -> tensor<2x5x16xf64>
  %y = kiln.mul %n, %gb : tensor<2x5x16xf64>
  %v2 = kiln.add %var, %var : tensor<2x5xf64>
  return %y, %v2 : tensor<2x5x16xf64>, tensor<2x5xf64>
}

// RMS norm: x / sqrt(mean(x^2) + eps) * g.
// FUSED-LABEL: func.func @rms_norm(
// FUSED-NEXT:    kiln.fused reduction
// FUSED-NOT:     kiln.fused
// CHECK: rms_norm(arg0: f32[8,64], arg1: f32[64]) -> (out0: f32[8,64])
func.func @rms_norm(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %sq = kiln.mul %x, %x : tensor<8x64xf32>
  %ms = kiln.reduce_mean %sq, dims = [1] : tensor<8x64xf32>
  %eps = kiln.constant dense<1.0e-6> : tensor<8xf32>
  %mse = kiln.add %ms, %eps : tensor<8xf32>
  %rms = kiln.sqrt %mse : tensor<8xf32>
  %rb = kiln.broadcast_in_dim %rms, dims = [0] : (tensor<8xf32>) -> tensor<8x64xf32>
  %n = kiln.div %x, %rb : tensor<8x64xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [1] : (tensor<64xf32>) -> tensor<8x64xf32>
  %y = kiln.mul %n, %gb : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
