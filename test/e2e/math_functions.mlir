// The float math functions (erf, floor, ceil, round, tan, asin, acos,
// atan, sinh, cosh, asinh, acosh, atanh) and sign, in f32 and f64, and
// sign on integers.
//
// Inputs are drawn in [-2, 2]; asin, acos and atanh see x / 2 (in [-1, 1]),
// acosh sees |x| + 1, and tan sees 0.7 x, away from its poles. round is
// also given halfway cases (x * 0 + c for constants c), which must go to
// the even neighbour, and floor, ceil and sign zeros of both signs.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: unary_f32(arg0: f32[3,17]) -> (out0: f32[3,17], out1: f32[3,17], out2: f32[3,17], out3: f32[3,17], out4: f32[3,17], out5: f32[3,17], out6: f32[3,17], out7: f32[3,17], out8: f32[3,17], out9: f32[3,17], out10: f32[3,17], out11: f32[3,17], out12: f32[3,17], out13: f32[3,17])
func.func @unary_f32(%x: tensor<3x17xf32>) -> (tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>) {
  %half = kiln.constant dense<0.5> : tensor<3x17xf32>
  %one = kiln.constant dense<1.0> : tensor<3x17xf32>
  %scale = kiln.constant dense<0.7> : tensor<3x17xf32>
  %x2 = kiln.mul %x, %half : tensor<3x17xf32>
  %abs = kiln.abs %x : tensor<3x17xf32>
  %x1 = kiln.add %abs, %one : tensor<3x17xf32>
  %x7 = kiln.mul %x, %scale : tensor<3x17xf32>
  %erf = kiln.erf %x : tensor<3x17xf32>
  %floor = kiln.floor %x : tensor<3x17xf32>
  %ceil = kiln.ceil %x : tensor<3x17xf32>
  %round = kiln.round %x : tensor<3x17xf32>
  %tan = kiln.tan %x7 : tensor<3x17xf32>
  %asin = kiln.asin %x2 : tensor<3x17xf32>
  %acos = kiln.acos %x2 : tensor<3x17xf32>
  %atan = kiln.atan %x : tensor<3x17xf32>
  %sinh = kiln.sinh %x : tensor<3x17xf32>
  %cosh = kiln.cosh %x : tensor<3x17xf32>
  %asinh = kiln.asinh %x : tensor<3x17xf32>
  %acosh = kiln.acosh %x1 : tensor<3x17xf32>
  %atanh = kiln.atanh %x2 : tensor<3x17xf32>
  %sign = kiln.sign %x : tensor<3x17xf32>
  return %erf, %floor, %ceil, %round, %tan, %asin, %acos, %atan, %sinh, %cosh, %asinh, %acosh, %atanh, %sign : tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>
}

// CHECK: unary_f64(arg0: f64[1000]) -> (out0: f64[1000], out1: f64[1000], out2: f64[1000], out3: f64[1000], out4: f64[1000], out5: f64[1000], out6: f64[1000], out7: f64[1000], out8: f64[1000], out9: f64[1000], out10: f64[1000], out11: f64[1000], out12: f64[1000], out13: f64[1000])
func.func @unary_f64(%x: tensor<1000xf64>) -> (tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>) {
  %half = kiln.constant dense<0.5> : tensor<1000xf64>
  %one = kiln.constant dense<1.0> : tensor<1000xf64>
  %scale = kiln.constant dense<0.7> : tensor<1000xf64>
  %x2 = kiln.mul %x, %half : tensor<1000xf64>
  %abs = kiln.abs %x : tensor<1000xf64>
  %x1 = kiln.add %abs, %one : tensor<1000xf64>
  %x7 = kiln.mul %x, %scale : tensor<1000xf64>
  %erf = kiln.erf %x : tensor<1000xf64>
  %floor = kiln.floor %x : tensor<1000xf64>
  %ceil = kiln.ceil %x : tensor<1000xf64>
  %round = kiln.round %x : tensor<1000xf64>
  %tan = kiln.tan %x7 : tensor<1000xf64>
  %asin = kiln.asin %x2 : tensor<1000xf64>
  %acos = kiln.acos %x2 : tensor<1000xf64>
  %atan = kiln.atan %x : tensor<1000xf64>
  %sinh = kiln.sinh %x : tensor<1000xf64>
  %cosh = kiln.cosh %x : tensor<1000xf64>
  %asinh = kiln.asinh %x : tensor<1000xf64>
  %acosh = kiln.acosh %x1 : tensor<1000xf64>
  %atanh = kiln.atanh %x2 : tensor<1000xf64>
  %sign = kiln.sign %x : tensor<1000xf64>
  return %erf, %floor, %ceil, %round, %tan, %asin, %acos, %atan, %sinh, %cosh, %asinh, %acosh, %atanh, %sign : tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>
}

// CHECK: halfway_f32(arg0: f32[16]) -> (out0: f32[16], out1: f32[16], out2: f32[16], out3: f32[16])
func.func @halfway_f32(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  // x * 0 is +-0, and adding it to c gives c at run time, unfolded.
  %zero = kiln.constant dense<0.0> : tensor<16xf32>
  %c = kiln.constant dense<[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5, 0.49999997, -0.0, 0.0, 1.0, -1.0, 4.5, 8388607.5, -7.5]> : tensor<16xf32>
  %z = kiln.mul %x, %zero : tensor<16xf32>
  %v = kiln.add %c, %z : tensor<16xf32>
  %round = kiln.round %v : tensor<16xf32>
  %floor = kiln.floor %v : tensor<16xf32>
  %ceil = kiln.ceil %v : tensor<16xf32>
  %sign = kiln.sign %v : tensor<16xf32>
  return %round, %floor, %ceil, %sign : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// CHECK: halfway_f64(arg0: f64[16]) -> (out0: f64[16], out1: f64[16], out2: f64[16], out3: f64[16])
func.func @halfway_f64(%x: tensor<16xf64>) -> (tensor<16xf64>, tensor<16xf64>, tensor<16xf64>, tensor<16xf64>) {
  // x * 0 is +-0, and adding it to c gives c at run time, unfolded.
  %zero = kiln.constant dense<0.0> : tensor<16xf64>
  %c = kiln.constant dense<[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5, 0.49999997, -0.0, 0.0, 1.0, -1.0, 4.5, 10000000.5, -7.5]> : tensor<16xf64>
  %z = kiln.mul %x, %zero : tensor<16xf64>
  %v = kiln.add %c, %z : tensor<16xf64>
  %round = kiln.round %v : tensor<16xf64>
  %floor = kiln.floor %v : tensor<16xf64>
  %ceil = kiln.ceil %v : tensor<16xf64>
  %sign = kiln.sign %v : tensor<16xf64>
  return %round, %floor, %ceil, %sign : tensor<16xf64>, tensor<16xf64>, tensor<16xf64>, tensor<16xf64>
}

// CHECK: sign_int(arg0: i32[17], arg1: i64[3,5]) -> (out0: i32[17], out1: i64[3,5])
func.func @sign_int(%a: tensor<17xi32>, %b: tensor<3x5xi64>) -> (tensor<17xi32>, tensor<3x5xi64>) {
  %sa = kiln.sign %a : tensor<17xi32>
  %sb = kiln.sign %b : tensor<3x5xi64>
  return %sa, %sb : tensor<17xi32>, tensor<3x5xi64>
}
