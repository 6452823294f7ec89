// i8, i16 and ui8 ... ui64 end to end. The harness draws integers in
// [-8, 8] wrapped to the type, so unsigned inputs are 0 ... 8 or among the
// type's eight largest values, where unsigned and signed semantics differ
// (division, remainder, order, conversion to float, right shifts).
// Divisors are made odd (`or 1`) in the first functions; the last one
// divides by anything, zero included (x / 0 is all ones, rem(x, 0) is x).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: arith_ui8(arg0: ui8[17], arg1: ui8[17]) -> (out0: ui8[17], out1: ui8[17], out2: ui8[17], out3: ui8[17], out4: ui8[17], out5: ui8[17], out6: ui8[17], out7: i1[17], out8: i1[17])
func.func @arith_ui8(%a: tensor<17xui8>, %b: tensor<17xui8>) -> (tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xi1>, tensor<17xi1>) {
  %one = kiln.constant dense<1> : tensor<17xui8>
  %odd = kiln.or %b, %one : tensor<17xui8>
  %add = kiln.add %a, %b : tensor<17xui8>
  %sub = kiln.sub %a, %b : tensor<17xui8>
  %mul = kiln.mul %a, %b : tensor<17xui8>
  %div = kiln.div %a, %odd : tensor<17xui8>
  %rem = kiln.rem %a, %b : tensor<17xui8>
  %max = kiln.max %a, %b : tensor<17xui8>
  %min = kiln.min %a, %b : tensor<17xui8>
  %lt = kiln.compare lt, %a, %b : tensor<17xui8>
  %ge = kiln.compare ge, %a, %b : tensor<17xui8>
  return %add, %sub, %mul, %div, %rem, %max, %min, %lt, %ge : tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xui8>, tensor<17xi1>, tensor<17xi1>
}

// CHECK: arith_ui16_ui32(arg0: ui16[3,5], arg1: ui32[3,5]) -> (out0: ui16[3,5], out1: ui16[3,5], out2: ui32[3,5], out3: ui32[3,5], out4: ui16[3,5], out5: ui32[3,5])
func.func @arith_ui16_ui32(%a: tensor<3x5xui16>, %b: tensor<3x5xui32>) -> (tensor<3x5xui16>, tensor<3x5xui16>, tensor<3x5xui32>, tensor<3x5xui32>, tensor<3x5xui16>, tensor<3x5xui32>) {
  %seven = kiln.constant dense<7> : tensor<3x5xui16>
  %nine = kiln.constant dense<9> : tensor<3x5xui32>
  %div = kiln.div %a, %seven : tensor<3x5xui16>
  %rem = kiln.rem %a, %seven : tensor<3x5xui16>
  %bdiv = kiln.div %b, %nine : tensor<3x5xui32>
  %brem = kiln.rem %nine, %b : tensor<3x5xui32>
  %sign = kiln.sign %a : tensor<3x5xui16>
  %neg = kiln.neg %b : tensor<3x5xui32>
  return %div, %rem, %bdiv, %brem, %sign, %neg : tensor<3x5xui16>, tensor<3x5xui16>, tensor<3x5xui32>, tensor<3x5xui32>, tensor<3x5xui16>, tensor<3x5xui32>
}

// ui64 values from 2^64 - 8 up: above every i64, so order and conversion
// to float are only right when read unsigned.
// CHECK: wide_ui64(arg0: ui64[9], arg1: ui64[9]) -> (out0: ui64[9], out1: ui64[9], out2: i1[9], out3: f64[9], out4: f32[9], out5: ui64[9])
func.func @wide_ui64(%a: tensor<9xui64>, %b: tensor<9xui64>) -> (tensor<9xui64>, tensor<9xui64>, tensor<9xi1>, tensor<9xf64>, tensor<9xf32>, tensor<9xui64>) {
  %one = kiln.constant dense<1> : tensor<9xui64>
  %odd = kiln.or %b, %one : tensor<9xui64>
  %div = kiln.div %a, %odd : tensor<9xui64>
  %max = kiln.max %a, %b : tensor<9xui64>
  %gt = kiln.compare gt, %a, %b : tensor<9xui64>
  %f = kiln.cast %a : tensor<9xui64> to tensor<9xf64>
  %g = kiln.cast %a : tensor<9xui64> to tensor<9xf32>
  %back = kiln.cast %f : tensor<9xf64> to tensor<9xui64>
  return %div, %max, %gt, %f, %g, %back : tensor<9xui64>, tensor<9xui64>, tensor<9xi1>, tensor<9xf64>, tensor<9xf32>, tensor<9xui64>
}

// Signed i8 and i16: truncating division (with -128 / -1 wrapping), C's
// remainder, abs and neg wrapping at the most negative value.
// CHECK: signed_i8_i16(arg0: i8[17], arg1: i8[17], arg2: i16[17]) -> (out0: i8[17], out1: i8[17], out2: i8[17], out3: i8[17], out4: i8[17], out5: i16[17], out6: i16[17])
func.func @signed_i8_i16(%a: tensor<17xi8>, %b: tensor<17xi8>, %c: tensor<17xi16>) -> (tensor<17xi8>, tensor<17xi8>, tensor<17xi8>, tensor<17xi8>, tensor<17xi8>, tensor<17xi16>, tensor<17xi16>) {
  %one = kiln.constant dense<1> : tensor<17xi8>
  %odd = kiln.or %b, %one : tensor<17xi8>
  %min = kiln.constant dense<-128> : tensor<17xi8>
  %scaled = kiln.mul %a, %b : tensor<17xi8>
  %div = kiln.div %scaled, %odd : tensor<17xi8>
  %rem = kiln.rem %a, %b : tensor<17xi8>
  %abs = kiln.abs %min : tensor<17xi8>
  %wrap = kiln.div %min, %odd : tensor<17xi8>
  %sign = kiln.sign %a : tensor<17xi8>
  %k = kiln.constant dense<1000> : tensor<17xi16>
  %big = kiln.mul %c, %k : tensor<17xi16>
  %cmax = kiln.max %big, %c : tensor<17xi16>
  return %div, %rem, %abs, %wrap, %sign, %big, %cmax : tensor<17xi8>, tensor<17xi8>, tensor<17xi8>, tensor<17xi8>, tensor<17xi8>, tensor<17xi16>, tensor<17xi16>
}

// Casts between the integer types (sign- or zero-extension by the source,
// truncation), to and from floats (saturating at the target's range).
// CHECK: integer_casts(arg0: i8[17], arg1: ui8[17], arg2: f32[17]) -> (out0: ui16[17], out1: i32[17], out2: i16[17], out3: ui8[17], out4: i8[17], out5: ui8[17], out6: i8[17], out7: f32[17], out8: ui16[17])
func.func @integer_casts(%a: tensor<17xi8>, %u: tensor<17xui8>, %f: tensor<17xf32>) -> (tensor<17xui16>, tensor<17xi32>, tensor<17xi16>, tensor<17xui8>, tensor<17xi8>, tensor<17xui8>, tensor<17xi8>, tensor<17xf32>, tensor<17xui16>) {
  %0 = kiln.cast %a : tensor<17xi8> to tensor<17xui16>
  %1 = kiln.cast %u : tensor<17xui8> to tensor<17xi32>
  %2 = kiln.cast %u : tensor<17xui8> to tensor<17xi16>
  %3 = kiln.cast %a : tensor<17xi8> to tensor<17xui8>
  %4 = kiln.cast %u : tensor<17xui8> to tensor<17xi8>
  %k = kiln.constant dense<150.0> : tensor<17xf32>
  %wide = kiln.mul %f, %k : tensor<17xf32>
  %5 = kiln.cast %wide : tensor<17xf32> to tensor<17xui8>
  %6 = kiln.cast %wide : tensor<17xf32> to tensor<17xi8>
  %7 = kiln.cast %u : tensor<17xui8> to tensor<17xf32>
  %w = kiln.cast %1 : tensor<17xi32> to tensor<17xui16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %w : tensor<17xui16>, tensor<17xi32>, tensor<17xi16>, tensor<17xui8>, tensor<17xi8>, tensor<17xui8>, tensor<17xi8>, tensor<17xf32>, tensor<17xui16>
}

// Shifts by amounts 0 ... 15 (some at least the width of ui8 and i8),
// logical on unsigned types and arithmetic on signed ones.
// CHECK: shifts(arg0: ui8[17], arg1: i8[17], arg2: ui32[17]) -> (out0: ui8[17], out1: ui8[17], out2: i8[17], out3: i8[17], out4: ui32[17])
func.func @shifts(%u: tensor<17xui8>, %s: tensor<17xi8>, %w: tensor<17xui32>) -> (tensor<17xui8>, tensor<17xui8>, tensor<17xi8>, tensor<17xi8>, tensor<17xui32>) {
  %m = kiln.constant dense<15> : tensor<17xui8>
  %n = kiln.and %u, %m : tensor<17xui8>
  %sm = kiln.constant dense<15> : tensor<17xi8>
  %sn = kiln.and %s, %sm : tensor<17xi8>
  %wm = kiln.constant dense<31> : tensor<17xui32>
  %wn = kiln.and %w, %wm : tensor<17xui32>
  %0 = kiln.shift_left %u, %n : tensor<17xui8>
  %1 = kiln.shift_right %u, %n : tensor<17xui8>
  %2 = kiln.shift_left %s, %sn : tensor<17xi8>
  %3 = kiln.shift_right %s, %sn : tensor<17xi8>
  %4 = kiln.shift_right %w, %wn : tensor<17xui32>
  return %0, %1, %2, %3, %4 : tensor<17xui8>, tensor<17xui8>, tensor<17xi8>, tensor<17xi8>, tensor<17xui32>
}

// Reductions, argmax and max pooling on unsigned values start from 0 and
// compare unsigned.
// CHECK: reductions_ui8(arg0: ui8[4,6], arg1: ui16[1,2,5,5]) -> (out0: ui8[4], out1: ui8[4], out2: i64[4], out3: ui16[1,2,2,2])
func.func @reductions_ui8(%a: tensor<4x6xui8>, %p: tensor<1x2x5x5xui16>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xi64>, tensor<1x2x2x2xui16>) {
  %max = kiln.reduce_max %a, dims = [1] : tensor<4x6xui8>
  %sum = kiln.reduce_sum %a, dims = [1] : tensor<4x6xui8>
  %arg = kiln.argmax %a, dim = 1 : tensor<4x6xui8>
  %pool = kiln.reduce_window %p, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<1x2x5x5xui16>
  return %max, %sum, %arg, %pool : tensor<4xui8>, tensor<4xui8>, tensor<4xi64>, tensor<1x2x2x2xui16>
}

// Division by divisors that include 0 and -1 (the harness draws [-8, 8]):
// x / 0 is all ones (-1, or the largest unsigned value), INT_MIN / -1
// wraps, and nothing traps. The constant column puts INT_MIN / -1 and
// x / 0 in every call.
// CHECK: divide_by_anything(arg0: i8[17], arg1: i8[17], arg2: i32[17], arg3: i32[17], arg4: ui16[17], arg5: ui16[17], arg6: i64[4]) -> (out0: i8[17], out1: i32[17], out2: ui16[17], out3: i64[4], out4: i32[17])
func.func @divide_by_anything(%a: tensor<17xi8>, %b: tensor<17xi8>, %c: tensor<17xi32>, %d: tensor<17xi32>, %e: tensor<17xui16>, %f: tensor<17xui16>, %g: tensor<4xi64>) -> (tensor<17xi8>, tensor<17xi32>, tensor<17xui16>, tensor<4xi64>, tensor<17xi32>) {
  %q8 = kiln.div %a, %b : tensor<17xi8>
  %q32 = kiln.div %c, %d : tensor<17xi32>
  %qu = kiln.div %e, %f : tensor<17xui16>
  %edge = kiln.constant dense<[-9223372036854775808, 5, -5, 0]> : tensor<4xi64>
  %by = kiln.constant dense<[-1, 0, 0, 0]> : tensor<4xi64>
  %e1 = kiln.add %edge, %g : tensor<4xi64>
  %e2 = kiln.sub %e1, %g : tensor<4xi64>
  %q64 = kiln.div %e2, %by : tensor<4xi64>
  %r32 = kiln.rem %c, %d : tensor<17xi32>
  return %q8, %q32, %qu, %q64, %r32 : tensor<17xi8>, tensor<17xi32>, tensor<17xui16>, tensor<4xi64>, tensor<17xi32>
}
