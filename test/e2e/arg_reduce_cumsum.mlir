// argmax / argmin along each dimension, with and without
// select_last_index, and cumsum in its four directions (plain, exclusive,
// reverse, both) along each dimension.
//
// Integer inputs are drawn in [-8, 8], so slices hold ties on most seeds
// and the first/last index rules are exercised; NaNs are placed at run time
// (0 / 0) where a constant mask says so, and must win as the extreme value.
// cumsum accumulates in order in both the evaluator and compiled code, so
// f32 results match exactly.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: arg_f32(arg0: f32[3,17], arg1: f32[2,3,4]) -> (out0: i64[17], out1: i64[3], out2: i64[3], out3: i64[2,4], out4: i64[3,4])
func.func @arg_f32(%x: tensor<3x17xf32>, %y: tensor<2x3x4xf32>) -> (tensor<17xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2x4xi64>, tensor<3x4xi64>) {
  %a = kiln.argmax %x, dim = 0 : tensor<3x17xf32>
  %b = kiln.argmax %x, dim = 1 select_last_index : tensor<3x17xf32>
  %c = kiln.argmin %x, dim = 1 : tensor<3x17xf32>
  %d = kiln.argmin %y, dim = 1 : tensor<2x3x4xf32>
  %e = kiln.argmax %y, dim = 0 : tensor<2x3x4xf32>
  return %a, %b, %c, %d, %e : tensor<17xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2x4xi64>, tensor<3x4xi64>
}

// CHECK: arg_f64(arg0: f64[1000]) -> (out0: i64[], out1: i64[])
func.func @arg_f64(%x: tensor<1000xf64>) -> (tensor<i64>, tensor<i64>) {
  %a = kiln.argmax %x, dim = 0 : tensor<1000xf64>
  %b = kiln.argmin %x, dim = 0 select_last_index : tensor<1000xf64>
  return %a, %b : tensor<i64>, tensor<i64>
}

// CHECK: arg_int_ties(arg0: i32[5,17], arg1: i64[17,3]) -> (out0: i64[5], out1: i64[5], out2: i64[17], out3: i64[17], out4: i64[3], out5: i64[3], out6: i64[17])
func.func @arg_int_ties(%x: tensor<5x17xi32>, %y: tensor<17x3xi64>) -> (tensor<5xi64>, tensor<5xi64>, tensor<17xi64>, tensor<17xi64>, tensor<3xi64>, tensor<3xi64>, tensor<17xi64>) {
  %a = kiln.argmax %x, dim = 1 : tensor<5x17xi32>
  %b = kiln.argmax %x, dim = 1 select_last_index : tensor<5x17xi32>
  %c = kiln.argmin %x, dim = 0 : tensor<5x17xi32>
  %d = kiln.argmin %x, dim = 0 select_last_index : tensor<5x17xi32>
  %e = kiln.argmax %y, dim = 0 select_last_index : tensor<17x3xi64>
  %f = kiln.argmin %y, dim = 0 : tensor<17x3xi64>
  %g = kiln.argmax %y, dim = 1 : tensor<17x3xi64>
  return %a, %b, %c, %d, %e, %f, %g : tensor<5xi64>, tensor<5xi64>, tensor<17xi64>, tensor<17xi64>, tensor<3xi64>, tensor<3xi64>, tensor<17xi64>
}

// Row 0 has no NaN, row 1 one, row 2 two, row 3 is all NaN.
// CHECK: arg_nan(arg0: f32[4,5]) -> (out0: i64[4], out1: i64[4], out2: i64[4], out3: i64[4])
func.func @arg_nan(%x: tensor<4x5xf32>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %zero = kiln.constant dense<0.0> : tensor<4x5xf32>
  %z = kiln.mul %x, %zero : tensor<4x5xf32>
  %nan = kiln.div %z, %z : tensor<4x5xf32>
  %mask = kiln.constant dense<[[false, false, false, false, false], [false, false, true, false, false], [false, true, false, false, true], [true, true, true, true, true]]> : tensor<4x5xi1>
  %v = kiln.select %mask, %nan, %x : tensor<4x5xi1>, tensor<4x5xf32>
  %a = kiln.argmax %v, dim = 1 : tensor<4x5xf32>
  %b = kiln.argmax %v, dim = 1 select_last_index : tensor<4x5xf32>
  %c = kiln.argmin %v, dim = 1 : tensor<4x5xf32>
  %d = kiln.argmin %v, dim = 1 select_last_index : tensor<4x5xf32>
  return %a, %b, %c, %d : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// CHECK: cumsum_f32(arg0: f32[3,17]) -> (out0: f32[3,17], out1: f32[3,17], out2: f32[3,17], out3: f32[3,17], out4: f32[3,17], out5: f32[3,17])
func.func @cumsum_f32(%x: tensor<3x17xf32>) -> (tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>) {
  %a = kiln.cumsum %x, dim = 1 : tensor<3x17xf32>
  %b = kiln.cumsum %x, dim = 1 exclusive : tensor<3x17xf32>
  %c = kiln.cumsum %x, dim = 1 reverse : tensor<3x17xf32>
  %d = kiln.cumsum %x, dim = 1 exclusive reverse : tensor<3x17xf32>
  %e = kiln.cumsum %x, dim = 0 : tensor<3x17xf32>
  %f = kiln.cumsum %x, dim = 0 exclusive reverse : tensor<3x17xf32>
  return %a, %b, %c, %d, %e, %f : tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>
}

// CHECK: cumsum_f64(arg0: f64[2,3,4], arg1: f64[1000]) -> (out0: f64[2,3,4], out1: f64[2,3,4], out2: f64[1000])
func.func @cumsum_f64(%x: tensor<2x3x4xf64>, %y: tensor<1000xf64>) -> (tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<1000xf64>) {
  %a = kiln.cumsum %x, dim = 1 reverse : tensor<2x3x4xf64>
  %b = kiln.cumsum %x, dim = 2 exclusive : tensor<2x3x4xf64>
  %c = kiln.cumsum %y, dim = 0 : tensor<1000xf64>
  return %a, %b, %c : tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<1000xf64>
}

// CHECK: cumsum_int(arg0: i32[5,7], arg1: i64[1,9]) -> (out0: i32[5,7], out1: i32[5,7], out2: i64[1,9], out3: i64[1,9])
func.func @cumsum_int(%x: tensor<5x7xi32>, %y: tensor<1x9xi64>) -> (tensor<5x7xi32>, tensor<5x7xi32>, tensor<1x9xi64>, tensor<1x9xi64>) {
  %a = kiln.cumsum %x, dim = 0 exclusive : tensor<5x7xi32>
  %b = kiln.cumsum %x, dim = 1 reverse : tensor<5x7xi32>
  %c = kiln.cumsum %y, dim = 1 : tensor<1x9xi64>
  %d = kiln.cumsum %y, dim = 0 exclusive : tensor<1x9xi64>
  return %a, %b, %c, %d : tensor<5x7xi32>, tensor<5x7xi32>, tensor<1x9xi64>, tensor<1x9xi64>
}

// A cumsum feeding elementwise work and an argmax of its result.
// CHECK: cumsum_chain(arg0: f32[4,6]) -> (out0: f32[4,6], out1: i64[4])
func.func @cumsum_chain(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4xi64>) {
  %t = kiln.tanh %x : tensor<4x6xf32>
  %c = kiln.cumsum %t, dim = 1 : tensor<4x6xf32>
  %s = kiln.mul %c, %c : tensor<4x6xf32>
  %i = kiln.argmax %c, dim = 1 : tensor<4x6xf32>
  return %s, %i : tensor<4x6xf32>, tensor<4xi64>
}
