// reduce_sum, reduce_max and reduce_mean over single dimensions, several
// dimensions and all dimensions (to rank 0), for sizes 1 to 1000.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: sum_f32(arg0: f32[3,17], arg1: f32[1000], arg2: f32[1], arg3: f32[3,4,5]) -> (out0: f32[17], out1: f32[3], out2: f32[], out3: f32[], out4: f32[], out5: f32[4], out6: f32[3,5], out7: f32[])
func.func @sum_f32(%m: tensor<3x17xf32>, %v: tensor<1000xf32>, %one: tensor<1xf32>, %t: tensor<3x4x5xf32>) -> (tensor<17xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<3x5xf32>, tensor<f32>) {
  %r0 = kiln.reduce_sum %m, dims = [0] : tensor<3x17xf32>
  %r1 = kiln.reduce_sum %m, dims = [1] : tensor<3x17xf32>
  %all = kiln.reduce_sum %m, dims = [0, 1] : tensor<3x17xf32>
  %big = kiln.reduce_sum %v, dims = [0] : tensor<1000xf32>
  %single = kiln.reduce_sum %one, dims = [0] : tensor<1xf32>
  %outer = kiln.reduce_sum %t, dims = [0, 2] : tensor<3x4x5xf32>
  %mid = kiln.reduce_sum %t, dims = [1] : tensor<3x4x5xf32>
  %t_all = kiln.reduce_sum %t, dims = [0, 1, 2] : tensor<3x4x5xf32>
  return %r0, %r1, %all, %big, %single, %outer, %mid, %t_all : tensor<17xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<3x5xf32>, tensor<f32>
}

// CHECK: sum_f64(arg0: f64[10,100], arg1: f64[17,1,3]) -> (out0: f64[100], out1: f64[10], out2: f64[], out3: f64[17,3], out4: f64[1])
func.func @sum_f64(%m: tensor<10x100xf64>, %t: tensor<17x1x3xf64>) -> (tensor<100xf64>, tensor<10xf64>, tensor<f64>, tensor<17x3xf64>, tensor<1xf64>) {
  %r0 = kiln.reduce_sum %m, dims = [0] : tensor<10x100xf64>
  %r1 = kiln.reduce_sum %m, dims = [1] : tensor<10x100xf64>
  %all = kiln.reduce_sum %m, dims = [0, 1] : tensor<10x100xf64>
  // Reducing a size-1 dimension only drops it.
  %drop = kiln.reduce_sum %t, dims = [1] : tensor<17x1x3xf64>
  %most = kiln.reduce_sum %t, dims = [0, 2] : tensor<17x1x3xf64>
  return %r0, %r1, %all, %drop, %most : tensor<100xf64>, tensor<10xf64>, tensor<f64>, tensor<17x3xf64>, tensor<1xf64>
}

// Sums of i32 and i64; the i32 sum of squares of products cannot overflow
// here (at most 1000 * 64^2).
// CHECK: sum_int(arg0: i32[1000], arg1: i32[3,17], arg2: i64[17,3]) -> (out0: i32[], out1: i32[17], out2: i32[], out3: i64[3])
func.func @sum_int(%v: tensor<1000xi32>, %m: tensor<3x17xi32>, %w: tensor<17x3xi64>) -> (tensor<i32>, tensor<17xi32>, tensor<i32>, tensor<3xi64>) {
  %sq = kiln.mul %v, %v : tensor<1000xi32>
  %ssq = kiln.reduce_sum %sq, dims = [0] : tensor<1000xi32>
  %r0 = kiln.reduce_sum %m, dims = [0] : tensor<3x17xi32>
  %all = kiln.reduce_sum %m, dims = [1, 0] : tensor<3x17xi32>
  %r64 = kiln.reduce_sum %w, dims = [0] : tensor<17x3xi64>
  return %ssq, %r0, %all, %r64 : tensor<i32>, tensor<17xi32>, tensor<i32>, tensor<3xi64>
}

// CHECK: max_f32(arg0: f32[3,17], arg1: f32[1000], arg2: f32[2,3,4,5], arg3: f32[1,1]) -> (out0: f32[17], out1: f32[3], out2: f32[], out3: f32[3,4], out4: f32[])
func.func @max_f32(%m: tensor<3x17xf32>, %v: tensor<1000xf32>, %q: tensor<2x3x4x5xf32>, %s: tensor<1x1xf32>) -> (tensor<17xf32>, tensor<3xf32>, tensor<f32>, tensor<3x4xf32>, tensor<f32>) {
  %r0 = kiln.reduce_max %m, dims = [0] : tensor<3x17xf32>
  %r1 = kiln.reduce_max %m, dims = [1] : tensor<3x17xf32>
  // All negative values: the result must not be clamped at 0.
  %a = kiln.abs %v : tensor<1000xf32>
  %na = kiln.neg %a : tensor<1000xf32>
  %big = kiln.reduce_max %na, dims = [0] : tensor<1000xf32>
  %q2 = kiln.reduce_max %q, dims = [0, 3] : tensor<2x3x4x5xf32>
  %single = kiln.reduce_max %s, dims = [0, 1] : tensor<1x1xf32>
  return %r0, %r1, %big, %q2, %single : tensor<17xf32>, tensor<3xf32>, tensor<f32>, tensor<3x4xf32>, tensor<f32>
}

// CHECK: max_f64(arg0: f64[17,3]) -> (out0: f64[3], out1: f64[])
func.func @max_f64(%m: tensor<17x3xf64>) -> (tensor<3xf64>, tensor<f64>) {
  %r0 = kiln.reduce_max %m, dims = [0] : tensor<17x3xf64>
  %all = kiln.reduce_max %m, dims = [0, 1] : tensor<17x3xf64>
  return %r0, %all : tensor<3xf64>, tensor<f64>
}

// CHECK: max_int(arg0: i32[3,17], arg1: i32[1000], arg2: i64[1,3]) -> (out0: i32[3], out1: i32[17], out2: i32[], out3: i64[3])
func.func @max_int(%m: tensor<3x17xi32>, %v: tensor<1000xi32>, %w: tensor<1x3xi64>) -> (tensor<3xi32>, tensor<17xi32>, tensor<i32>, tensor<3xi64>) {
  %r1 = kiln.reduce_max %m, dims = [1] : tensor<3x17xi32>
  // -|m| - 9 is always negative.
  %a = kiln.abs %m : tensor<3x17xi32>
  %na = kiln.neg %a : tensor<3x17xi32>
  %nine = kiln.constant dense<9> : tensor<3x17xi32>
  %neg = kiln.sub %na, %nine : tensor<3x17xi32>
  %r0 = kiln.reduce_max %neg, dims = [0] : tensor<3x17xi32>
  %big = kiln.reduce_max %v, dims = [0] : tensor<1000xi32>
  %single = kiln.reduce_max %w, dims = [0] : tensor<1x3xi64>
  return %r1, %r0, %big, %single : tensor<3xi32>, tensor<17xi32>, tensor<i32>, tensor<3xi64>
}

// CHECK: mean(arg0: f32[3,17], arg1: f32[1000], arg2: f64[2,3,4], arg3: f64[1]) -> (out0: f32[17], out1: f32[3], out2: f32[], out3: f64[3], out4: f64[], out5: f64[])
func.func @mean(%m: tensor<3x17xf32>, %v: tensor<1000xf32>, %t: tensor<2x3x4xf64>, %one: tensor<1xf64>) -> (tensor<17xf32>, tensor<3xf32>, tensor<f32>, tensor<3xf64>, tensor<f64>, tensor<f64>) {
  %r0 = kiln.reduce_mean %m, dims = [0] : tensor<3x17xf32>
  %r1 = kiln.reduce_mean %m, dims = [1] : tensor<3x17xf32>
  %big = kiln.reduce_mean %v, dims = [0] : tensor<1000xf32>
  %t02 = kiln.reduce_mean %t, dims = [0, 2] : tensor<2x3x4xf64>
  %tall = kiln.reduce_mean %t, dims = [0, 1, 2] : tensor<2x3x4xf64>
  %single = kiln.reduce_mean %one, dims = [0] : tensor<1xf64>
  return %r0, %r1, %big, %t02, %tall, %single : tensor<17xf32>, tensor<3xf32>, tensor<f32>, tensor<3xf64>, tensor<f64>, tensor<f64>
}

// Reductions composed with elementwise ops: variance and an L2 norm.
// CHECK: variance_norm(arg0: f32[17,3]) -> (out0: f32[3], out1: f32[])
func.func @variance_norm(%x: tensor<17x3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %mu = kiln.reduce_mean %x, dims = [0] : tensor<17x3xf32>
  %mub = kiln.broadcast_in_dim %mu, dims = [1] : (tensor<3xf32>) -> tensor<17x3xf32>
  %d = kiln.sub %x, %mub : tensor<17x3xf32>
  %d2 = kiln.mul %d, %d : tensor<17x3xf32>
  %var = kiln.reduce_mean %d2, dims = [0] : tensor<17x3xf32>
  %x2 = kiln.mul %x, %x : tensor<17x3xf32>
  %ss = kiln.reduce_sum %x2, dims = [0, 1] : tensor<17x3xf32>
  %norm = kiln.sqrt %ss : tensor<f32>
  return %var, %norm : tensor<3xf32>, tensor<f32>
}
