// REQUIRES: openmp
// Reduction regions as one loop over their rows
// (kiln-cpu-tile-fused-reductions), at sizes where that loop runs on OpenMP
// threads: softmax, layer norm and log-sum-exp with row lengths that are a
// multiple of the 64 f32 lanes (the reductions are split into lanes) and
// odd ones (they are not), rows over one and two leading dims, and a region
// whose max is also a result of its own. The harness also compiles this
// file with fusion off.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-compile %s --emit=llvm | FileCheck %s --check-prefix=LLVM

// LLVM: call {{.*}}@__kmpc_fork_call

// CHECK: softmax_odd_rows(arg0: f32[300,257]) -> (out0: f32[300,257])
func.func @softmax_odd_rows(%x: tensor<300x257xf32>) -> tensor<300x257xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<300x257xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<300xf32>) -> tensor<300x257xf32>
  %s = kiln.sub %x, %mb : tensor<300x257xf32>
  %e = kiln.exp %s : tensor<300x257xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<300x257xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<300xf32>) -> tensor<300x257xf32>
  %y = kiln.div %e, %zb : tensor<300x257xf32>
  return %y : tensor<300x257xf32>
}

// Rows of 576 = 9 * 64, over two leading dims, with a temperature.
// CHECK: softmax_lanes(arg0: f32[5,27,576], arg1: f32[]) -> (out0: f32[5,27,576])
func.func @softmax_lanes(%x: tensor<5x27x576xf32>, %t: tensor<f32>) -> tensor<5x27x576xf32> {
  %at = kiln.abs %t : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %temp = kiln.add %at, %one : tensor<f32>
  %tb = kiln.broadcast_in_dim %temp, dims = [] : (tensor<f32>) -> tensor<5x27x576xf32>
  %xs = kiln.div %x, %tb : tensor<5x27x576xf32>
  %m = kiln.reduce_max %xs, dims = [2] : tensor<5x27x576xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<5x27xf32>) -> tensor<5x27x576xf32>
  %s = kiln.sub %xs, %mb : tensor<5x27x576xf32>
  %e = kiln.exp %s : tensor<5x27x576xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<5x27x576xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<5x27xf32>) -> tensor<5x27x576xf32>
  %y = kiln.div %e, %zb : tensor<5x27x576xf32>
  return %y : tensor<5x27x576xf32>
}

// Layer norm over rows of 320 = 5 * 64 and of 301, with gain and bias.
// CHECK: layer_norm_lanes(arg0: f32[2,150,320], arg1: f32[320], arg2: f32[320]) -> (out0: f32[2,150,320])
func.func @layer_norm_lanes(%x: tensor<2x150x320xf32>, %g: tensor<320xf32>, %b: tensor<320xf32>) -> tensor<2x150x320xf32> {
  %mean = kiln.reduce_mean %x, dims = [2] : tensor<2x150x320xf32>
  %mb = kiln.broadcast_in_dim %mean, dims = [0, 1] : (tensor<2x150xf32>) -> tensor<2x150x320xf32>
  %xc = kiln.sub %x, %mb : tensor<2x150x320xf32>
  %sq = kiln.mul %xc, %xc : tensor<2x150x320xf32>
  %var = kiln.reduce_mean %sq, dims = [2] : tensor<2x150x320xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<2x150xf32>
  %ve = kiln.add %var, %eps : tensor<2x150xf32>
  %r = kiln.rsqrt %ve : tensor<2x150xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0, 1] : (tensor<2x150xf32>) -> tensor<2x150x320xf32>
  %n = kiln.mul %xc, %rb : tensor<2x150x320xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [2] : (tensor<320xf32>) -> tensor<2x150x320xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [2] : (tensor<320xf32>) -> tensor<2x150x320xf32>
  %ng = kiln.mul %n, %gb : tensor<2x150x320xf32>
  %y = kiln.add %ng, %bb : tensor<2x150x320xf32>
  return %y : tensor<2x150x320xf32>
}

// CHECK: layer_norm_odd_rows(arg0: f32[240,301]) -> (out0: f32[240,301])
func.func @layer_norm_odd_rows(%x: tensor<240x301xf32>) -> tensor<240x301xf32> {
  %mean = kiln.reduce_mean %x, dims = [1] : tensor<240x301xf32>
  %mb = kiln.broadcast_in_dim %mean, dims = [0] : (tensor<240xf32>) -> tensor<240x301xf32>
  %xc = kiln.sub %x, %mb : tensor<240x301xf32>
  %sq = kiln.mul %xc, %xc : tensor<240x301xf32>
  %var = kiln.reduce_mean %sq, dims = [1] : tensor<240x301xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<240xf32>
  %ve = kiln.add %var, %eps : tensor<240xf32>
  %r = kiln.rsqrt %ve : tensor<240xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : (tensor<240xf32>) -> tensor<240x301xf32>
  %y = kiln.mul %xc, %rb : tensor<240x301xf32>
  return %y : tensor<240x301xf32>
}

// log(sum(exp(x - max))) + max over rows of 192 = 3 * 64, also returning
// twice the max (a value of the region read outside it).
// CHECK: log_sum_exp_rows(arg0: f32[520,192]) -> (out0: f32[520], out1: f32[520])
func.func @log_sum_exp_rows(%x: tensor<520x192xf32>) -> (tensor<520xf32>, tensor<520xf32>) {
  %m = kiln.reduce_max %x, dims = [1] : tensor<520x192xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<520xf32>) -> tensor<520x192xf32>
  %s = kiln.sub %x, %mb : tensor<520x192xf32>
  %e = kiln.exp %s : tensor<520x192xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<520x192xf32>
  %l = kiln.log %z : tensor<520xf32>
  %y = kiln.add %l, %m : tensor<520xf32>
  %two = kiln.constant dense<2.0> : tensor<520xf32>
  %m2 = kiln.mul %m, %two : tensor<520xf32>
  return %y, %m2 : tensor<520xf32>, tensor<520xf32>
}

// An attention softmax as BERT's exporters write it: scores plus a bias
// chosen by an i1 mask of 1x1x1x128, broadcast over the heads and rows.
// The reductions read the mask through 1x128 (its unit dims dropped) and
// are split into 64 lanes.
// CHECK: masked_softmax_lanes(arg0: f32[1,12,64,128], arg1: i1[1,1,1,128]) -> (out0: f32[1,12,64,128])
func.func @masked_softmax_lanes(%x: tensor<1x12x64x128xf32>, %mask: tensor<1x1x1x128xi1>) -> tensor<1x12x64x128xf32> {
  %zero = kiln.constant dense<0.0> : tensor<1x1x1x128xf32>
  %low = kiln.constant dense<-10000.0> : tensor<1x1x1x128xf32>
  %bias = kiln.select %mask, %zero, %low : tensor<1x1x1x128xi1>, tensor<1x1x1x128xf32>
  %bb = kiln.broadcast_in_dim %bias, dims = [0, 1, 2, 3] : (tensor<1x1x1x128xf32>) -> tensor<1x12x64x128xf32>
  %xm = kiln.add %x, %bb : tensor<1x12x64x128xf32>
  %mx = kiln.reduce_max %xm, dims = [3] : tensor<1x12x64x128xf32>
  %mxb = kiln.broadcast_in_dim %mx, dims = [0, 1, 2] : (tensor<1x12x64xf32>) -> tensor<1x12x64x128xf32>
  %s = kiln.sub %xm, %mxb : tensor<1x12x64x128xf32>
  %e = kiln.exp %s : tensor<1x12x64x128xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<1x12x64x128xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<1x12x64xf32>) -> tensor<1x12x64x128xf32>
  %y = kiln.div %e, %zb : tensor<1x12x64x128xf32>
  return %y : tensor<1x12x64x128xf32>
}

// Log-sum-exp of rows shifted by one value broadcast from 1x1: the
// reductions read it as a rank-0 tensor and are split into 64 lanes.
// CHECK: shifted_log_sum_exp_rows(arg0: f32[200,256], arg1: f32[1,1]) -> (out0: f32[200])
func.func @shifted_log_sum_exp_rows(%x: tensor<200x256xf32>, %c: tensor<1x1xf32>) -> tensor<200xf32> {
  %cb = kiln.broadcast_in_dim %c, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<200x256xf32>
  %xs = kiln.mul %x, %cb : tensor<200x256xf32>
  %m = kiln.reduce_max %xs, dims = [1] : tensor<200x256xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<200xf32>) -> tensor<200x256xf32>
  %s = kiln.sub %xs, %mb : tensor<200x256xf32>
  %e = kiln.exp %s : tensor<200x256xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<200x256xf32>
  %l = kiln.log %z : tensor<200xf32>
  %y = kiln.add %l, %m : tensor<200xf32>
  return %y : tensor<200xf32>
}
