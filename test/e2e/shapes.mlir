// Shape manipulation: broadcast_in_dim, reshape, transpose, slice, concat,
// iota and constant. Most results are combined with an elementwise op so
// that the data movement is materialized, not only viewed.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// Rank 0 to rank 3, a size-1 dimension broadcast along a new one, and a
// vector placed in the middle dimension of a rank-3 result.
// CHECK: broadcast_f32(arg0: f32[], arg1: f32[3,1], arg2: f32[1,17], arg3: f32[17]) -> (out0: f32[3,1,17], out1: f32[3,17], out2: f32[3,17,5])
func.func @broadcast_f32(%s: tensor<f32>, %col: tensor<3x1xf32>, %row: tensor<1x17xf32>, %v: tensor<17xf32>) -> (tensor<3x1x17xf32>, tensor<3x17xf32>, tensor<3x17x5xf32>) {
  %b0 = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3x1x17xf32>
  %bc = kiln.broadcast_in_dim %col, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x17xf32>
  %br = kiln.broadcast_in_dim %row, dims = [0, 1] : (tensor<1x17xf32>) -> tensor<3x17xf32>
  // outer sum: col[i] + row[j]
  %outer = kiln.add %bc, %br : tensor<3x17xf32>
  %bv = kiln.broadcast_in_dim %v, dims = [1] : (tensor<17xf32>) -> tensor<3x17x5xf32>
  %b3 = kiln.broadcast_in_dim %outer, dims = [0, 1] : (tensor<3x17xf32>) -> tensor<3x17x5xf32>
  %prod = kiln.mul %bv, %b3 : tensor<3x17x5xf32>
  return %b0, %outer, %prod : tensor<3x1x17xf32>, tensor<3x17xf32>, tensor<3x17x5xf32>
}

// Size-1 operand dims that map to size-1 result dims (no broadcast) next
// to ones that do broadcast; integer and i1 element types.
// CHECK: broadcast_int(arg0: i64[1,1], arg1: i1[3], arg2: i32[1]) -> (out0: i64[1,3,17], out1: i1[3,1000], out2: i32[1000])
func.func @broadcast_int(%a: tensor<1x1xi64>, %p: tensor<3xi1>, %n: tensor<1xi32>) -> (tensor<1x3x17xi64>, tensor<3x1000xi1>, tensor<1000xi32>) {
  %ba = kiln.broadcast_in_dim %a, dims = [0, 2] : (tensor<1x1xi64>) -> tensor<1x3x17xi64>
  %iota = kiln.iota dim = 2 : tensor<1x3x17xi64>
  %sum = kiln.add %ba, %iota : tensor<1x3x17xi64>
  %bp = kiln.broadcast_in_dim %p, dims = [0] : (tensor<3xi1>) -> tensor<3x1000xi1>
  %bn = kiln.broadcast_in_dim %n, dims = [0] : (tensor<1xi32>) -> tensor<1000xi32>
  return %sum, %bp, %bn : tensor<1x3x17xi64>, tensor<3x1000xi1>, tensor<1000xi32>
}

// Reshapes between ranks 0..3, including to and from rank 0, each followed
// by an op that depends on the element order.
// CHECK: reshape_f32(arg0: f32[3,17], arg1: f32[1], arg2: f32[], arg3: f32[2,3,4]) -> (out0: f32[17,3], out1: f32[], out2: f32[1,1,1], out3: f32[4,6], out4: f32[1])
func.func @reshape_f32(%x: tensor<3x17xf32>, %one: tensor<1xf32>, %s: tensor<f32>, %t: tensor<2x3x4xf32>) -> (tensor<17x3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<4x6xf32>, tensor<1xf32>) {
  %flat = kiln.reshape %x : (tensor<3x17xf32>) -> tensor<51xf32>
  %r = kiln.reshape %flat : (tensor<51xf32>) -> tensor<17x3xf32>
  %i0 = kiln.iota dim = 0 : tensor<17x3xf32>
  %i1 = kiln.iota dim = 1 : tensor<17x3xf32>
  %ten = kiln.constant dense<10.0> : tensor<17x3xf32>
  %i0s = kiln.mul %i0, %ten : tensor<17x3xf32>
  %pos = kiln.add %i0s, %i1 : tensor<17x3xf32>
  %rr = kiln.add %r, %pos : tensor<17x3xf32>
  %scalar = kiln.reshape %one : (tensor<1xf32>) -> tensor<f32>
  %sum = kiln.add %scalar, %s : tensor<f32>
  %up = kiln.reshape %s : (tensor<f32>) -> tensor<1x1x1xf32>
  %up2 = kiln.add %up, %up : tensor<1x1x1xf32>
  %t46 = kiln.reshape %t : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  %j = kiln.iota dim = 1 : tensor<4x6xf32>
  %t46j = kiln.mul %t46, %j : tensor<4x6xf32>
  %s1 = kiln.reshape %sum : (tensor<f32>) -> tensor<1xf32>
  return %rr, %sum, %up2, %t46j, %s1 : tensor<17x3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<4x6xf32>, tensor<1xf32>
}

// CHECK: reshape_int(arg0: i32[1000], arg1: i64[1,1]) -> (out0: i32[8,125], out1: i32[10,10,10], out2: i64[])
func.func @reshape_int(%x: tensor<1000xi32>, %y: tensor<1x1xi64>) -> (tensor<8x125xi32>, tensor<10x10x10xi32>, tensor<i64>) {
  %a = kiln.reshape %x : (tensor<1000xi32>) -> tensor<8x125xi32>
  %ia = kiln.iota dim = 0 : tensor<8x125xi32>
  %a2 = kiln.mul %a, %ia : tensor<8x125xi32>
  %b = kiln.reshape %a : (tensor<8x125xi32>) -> tensor<10x10x10xi32>
  %ib = kiln.iota dim = 2 : tensor<10x10x10xi32>
  %b2 = kiln.sub %b, %ib : tensor<10x10x10xi32>
  %s = kiln.reshape %y : (tensor<1x1xi64>) -> tensor<i64>
  %s2 = kiln.mul %s, %s : tensor<i64>
  return %a2, %b2, %s2 : tensor<8x125xi32>, tensor<10x10x10xi32>, tensor<i64>
}

// CHECK: transpose_f32(arg0: f32[17,3], arg1: f32[3,1,17], arg2: f32[2,3,4,5]) -> (out0: f32[3,17], out1: f32[17,3,1], out2: f32[1,17,3], out3: f32[5,3,2,4], out4: f32[2,3,4,5])
func.func @transpose_f32(%m: tensor<17x3xf32>, %t: tensor<3x1x17xf32>, %q: tensor<2x3x4x5xf32>) -> (tensor<3x17xf32>, tensor<17x3x1xf32>, tensor<1x17x3xf32>, tensor<5x3x2x4xf32>, tensor<2x3x4x5xf32>) {
  %mt = kiln.transpose %m, permutation = [1, 0] : tensor<17x3xf32>
  %i = kiln.iota dim = 1 : tensor<3x17xf32>
  %mti = kiln.add %mt, %i : tensor<3x17xf32>
  %t1 = kiln.transpose %t, permutation = [2, 0, 1] : tensor<3x1x17xf32>
  %t2 = kiln.transpose %t, permutation = [1, 2, 0] : tensor<3x1x17xf32>
  %q1 = kiln.transpose %q, permutation = [3, 1, 0, 2] : tensor<2x3x4x5xf32>
  // The inverse permutation restores q; q - that must be zero everywhere.
  %q2 = kiln.transpose %q1, permutation = [2, 1, 3, 0] : tensor<5x3x2x4xf32>
  %d = kiln.sub %q, %q2 : tensor<2x3x4x5xf32>
  return %mti, %t1, %t2, %q1, %d : tensor<3x17xf32>, tensor<17x3x1xf32>, tensor<1x17x3xf32>, tensor<5x3x2x4xf32>, tensor<2x3x4x5xf32>
}

// CHECK: transpose_int(arg0: i64[3,17], arg1: i1[2,3,4]) -> (out0: i64[17,3], out1: i1[4,2,3])
func.func @transpose_int(%m: tensor<3x17xi64>, %p: tensor<2x3x4xi1>) -> (tensor<17x3xi64>, tensor<4x2x3xi1>) {
  %mt = kiln.transpose %m, permutation = [1, 0] : tensor<3x17xi64>
  %pt = kiln.transpose %p, permutation = [2, 0, 1] : tensor<2x3x4xi1>
  return %mt, %pt : tensor<17x3xi64>, tensor<4x2x3xi1>
}

// Strided slices with offsets, slices that keep a size-1 dimension, and
// a slice of a computed value.
// CHECK: slice_f32(arg0: f32[1000], arg1: f32[17,17], arg2: f32[3,4,5]) -> (out0: f32[143], out1: f32[5,8], out2: f32[1,2,3], out3: f32[1], out4: f32[17,1])
func.func @slice_f32(%v: tensor<1000xf32>, %m: tensor<17x17xf32>, %t: tensor<3x4x5xf32>) -> (tensor<143xf32>, tensor<5x8xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<17x1xf32>) {
  %a = kiln.slice %v, start = [3], limit = [1000], stride = [7] : tensor<1000xf32>
  %m2 = kiln.mul %m, %m : tensor<17x17xf32>
  %b = kiln.slice %m2, start = [1, 2], limit = [16, 17], stride = [3, 2] : tensor<17x17xf32>
  %c = kiln.slice %t, start = [2, 1, 0], limit = [3, 4, 5], stride = [1, 2, 2] : tensor<3x4x5xf32>
  %d = kiln.slice %v, start = [999], limit = [1000], stride = [1] : tensor<1000xf32>
  %e = kiln.slice %m, start = [0, 16], limit = [17, 17], stride = [1, 1] : tensor<17x17xf32>
  return %a, %b, %c, %d, %e : tensor<143xf32>, tensor<5x8xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<17x1xf32>
}

// CHECK: slice_int(arg0: i32[17,3], arg1: i64[1000]) -> (out0: i32[6,2], out1: i64[250], out2: i64[10])
func.func @slice_int(%m: tensor<17x3xi32>, %v: tensor<1000xi64>) -> (tensor<6x2xi32>, tensor<250xi64>, tensor<10xi64>) {
  %a = kiln.slice %m, start = [0, 1], limit = [17, 3], stride = [3, 1] : tensor<17x3xi32>
  %b = kiln.slice %v, start = [1], limit = [1000], stride = [4] : tensor<1000xi64>
  // A slice of a slice.
  %c = kiln.slice %b, start = [5], limit = [250], stride = [25] : tensor<250xi64>
  return %a, %b, %c : tensor<6x2xi32>, tensor<250xi64>, tensor<10xi64>
}

// Concatenation of two and three inputs along every dimension.
// CHECK: concat_f32(arg0: f32[3,17], arg1: f32[1,17], arg2: f32[3,1], arg3: f32[2,3,4], arg4: f32[2,3,4]) -> (out0: f32[4,17], out1: f32[3,35], out2: f32[6,3,4], out3: f32[2,9,4], out4: f32[2,3,12], out5: f32[1000])
func.func @concat_f32(%a: tensor<3x17xf32>, %b: tensor<1x17xf32>, %c: tensor<3x1xf32>, %x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> (tensor<4x17xf32>, tensor<3x35xf32>, tensor<6x3x4xf32>, tensor<2x9x4xf32>, tensor<2x3x12xf32>, tensor<1000xf32>) {
  %r0 = kiln.concat %a, %b dim = 0 : tensor<3x17xf32>, tensor<1x17xf32>
  %r1 = kiln.concat %a, %c, %a dim = 1 : tensor<3x17xf32>, tensor<3x1xf32>, tensor<3x17xf32>
  %ny = kiln.neg %y : tensor<2x3x4xf32>
  %s0 = kiln.concat %x, %y, %ny dim = 0 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %s1 = kiln.concat %x, %ny, %y dim = 1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %s2 = kiln.concat %ny, %x, %y dim = 2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
  // 51 + 949 elements.
  %fa = kiln.reshape %a : (tensor<3x17xf32>) -> tensor<51xf32>
  %fill = kiln.iota dim = 0 : tensor<949xf32>
  %long = kiln.concat %fa, %fill dim = 0 : tensor<51xf32>, tensor<949xf32>
  return %r0, %r1, %s0, %s1, %s2, %long : tensor<4x17xf32>, tensor<3x35xf32>, tensor<6x3x4xf32>, tensor<2x9x4xf32>, tensor<2x3x12xf32>, tensor<1000xf32>
}

// CHECK: concat_int(arg0: i32[3], arg1: i32[1], arg2: i1[2,1], arg3: i1[2,2], arg4: i64[1,3], arg5: i64[1,3]) -> (out0: i32[4], out1: i1[2,3], out2: i64[2,3])
func.func @concat_int(%a: tensor<3xi32>, %b: tensor<1xi32>, %p: tensor<2x1xi1>, %q: tensor<2x2xi1>, %x: tensor<1x3xi64>, %y: tensor<1x3xi64>) -> (tensor<4xi32>, tensor<2x3xi1>, tensor<2x3xi64>) {
  %r0 = kiln.concat %b, %a dim = 0 : tensor<1xi32>, tensor<3xi32>
  %r1 = kiln.concat %q, %p dim = 1 : tensor<2x2xi1>, tensor<2x1xi1>
  %r2 = kiln.concat %y, %x dim = 0 : tensor<1x3xi64>, tensor<1x3xi64>
  return %r0, %r1, %r2 : tensor<4xi32>, tensor<2x3xi1>, tensor<2x3xi64>
}

// iota along each dimension, as floats and integers, offset by an input.
// CHECK: iota(arg0: f32[3,17], arg1: i64[]) -> (out0: f32[3,17], out1: f32[3,17], out2: i64[2,3,4], out3: i64[2,3,4], out4: i64[2,3,4], out5: i32[1000], out6: f64[1])
func.func @iota(%x: tensor<3x17xf32>, %k: tensor<i64>) -> (tensor<3x17xf32>, tensor<3x17xf32>, tensor<2x3x4xi64>, tensor<2x3x4xi64>, tensor<2x3x4xi64>, tensor<1000xi32>, tensor<1xf64>) {
  %f0 = kiln.iota dim = 0 : tensor<3x17xf32>
  %f1 = kiln.iota dim = 1 : tensor<3x17xf32>
  %x0 = kiln.add %x, %f0 : tensor<3x17xf32>
  %x1 = kiln.mul %x, %f1 : tensor<3x17xf32>
  %kb = kiln.broadcast_in_dim %k, dims = [] : (tensor<i64>) -> tensor<2x3x4xi64>
  %i0 = kiln.iota dim = 0 : tensor<2x3x4xi64>
  %i1 = kiln.iota dim = 1 : tensor<2x3x4xi64>
  %i2 = kiln.iota dim = 2 : tensor<2x3x4xi64>
  %k0 = kiln.add %i0, %kb : tensor<2x3x4xi64>
  %k1 = kiln.mul %i1, %kb : tensor<2x3x4xi64>
  %k2 = kiln.sub %i2, %kb : tensor<2x3x4xi64>
  %long = kiln.iota dim = 0 : tensor<1000xi32>
  %single = kiln.iota dim = 0 : tensor<1xf64>
  return %x0, %x1, %k0, %k1, %k2, %long, %single : tensor<3x17xf32>, tensor<3x17xf32>, tensor<2x3x4xi64>, tensor<2x3x4xi64>, tensor<2x3x4xi64>, tensor<1000xi32>, tensor<1xf64>
}

// Splat and non-splat constants of each dtype, used with inputs.
// CHECK: constants(arg0: f32[2,3], arg1: i32[3], arg2: i1[3]) -> (out0: f32[2,3], out1: f64[3], out2: i32[3], out3: i64[2,2], out4: i1[3], out5: f32[1000], out6: i64[])
func.func @constants(%x: tensor<2x3xf32>, %n: tensor<3xi32>, %p: tensor<3xi1>) -> (tensor<2x3xf32>, tensor<3xf64>, tensor<3xi32>, tensor<2x2xi64>, tensor<3xi1>, tensor<1000xf32>, tensor<i64>) {
  %c = kiln.constant dense<[[0.5, -1.0, 2.0], [3.25, 0.0, -0.125]]> : tensor<2x3xf32>
  %xc = kiln.mul %x, %c : tensor<2x3xf32>
  %d = kiln.constant dense<[1.0e-300, 2.5, -1.0e300]> : tensor<3xf64>
  %ni = kiln.constant dense<[7, -8, 2147483647]> : tensor<3xi32>
  %nn = kiln.max %n, %ni : tensor<3xi32>
  %m = kiln.constant dense<[[-9223372036854775808, 1], [0, 9223372036854775807]]> : tensor<2x2xi64>
  %mask = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %pm = kiln.compare eq, %p, %mask : tensor<3xi1>
  %splat = kiln.constant dense<0.75> : tensor<1000xf32>
  %s = kiln.constant dense<42> : tensor<i64>
  return %xc, %d, %nn, %m, %pm, %splat, %s : tensor<2x3xf32>, tensor<3xf64>, tensor<3xi32>, tensor<2x2xi64>, tensor<3xi1>, tensor<1000xf32>, tensor<i64>
}
