// f16 and bf16 on the CPU: elementwise arithmetic (computed in f32 and
// rounded once, which for + - * / sqrt and fmod is what native f16/bf16
// arithmetic gives, bit for bit), comparisons, selects, min/max, and casts
// to and from every other type, with overflow to infinity and saturation
// back to integers.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: arith_f16(arg0: f16[17], arg1: f16[17]) -> (out0: f16[17], out1: f16[17], out2: f16[17], out3: f16[17], out4: f16[17], out5: f16[17], out6: f16[17], out7: f16[17], out8: i1[17])
func.func @arith_f16(%a: tensor<17xf16>, %b: tensor<17xf16>) -> (tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xi1>) {
  %add = kiln.add %a, %b : tensor<17xf16>
  %sub = kiln.sub %a, %b : tensor<17xf16>
  %mul = kiln.mul %a, %b : tensor<17xf16>
  %div = kiln.div %a, %b : tensor<17xf16>
  %max = kiln.max %a, %b : tensor<17xf16>
  %min = kiln.min %a, %b : tensor<17xf16>
  %rem = kiln.rem %a, %b : tensor<17xf16>
  %abs = kiln.abs %a : tensor<17xf16>
  %sqrt = kiln.sqrt %abs : tensor<17xf16>
  %lt = kiln.compare lt, %a, %b : tensor<17xf16>
  return %add, %sub, %mul, %div, %max, %min, %rem, %sqrt, %lt : tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xf16>, tensor<17xi1>
}

// CHECK: arith_bf16(arg0: bf16[3,5], arg1: bf16[3,5]) -> (out0: bf16[3,5], out1: bf16[3,5], out2: bf16[3,5], out3: bf16[3,5], out4: bf16[3,5], out5: bf16[3,5])
func.func @arith_bf16(%a: tensor<3x5xbf16>, %b: tensor<3x5xbf16>) -> (tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>) {
  %add = kiln.add %a, %b : tensor<3x5xbf16>
  %mul = kiln.mul %a, %b : tensor<3x5xbf16>
  %div = kiln.div %a, %b : tensor<3x5xbf16>
  %max = kiln.max %a, %b : tensor<3x5xbf16>
  %rem = kiln.rem %a, %b : tensor<3x5xbf16>
  %neg = kiln.neg %a : tensor<3x5xbf16>
  %pos = kiln.compare gt, %a, %b : tensor<3x5xbf16>
  %sel = kiln.select %pos, %neg, %add : tensor<3x5xi1>, tensor<3x5xbf16>
  return %sel, %mul, %div, %max, %rem, %neg : tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xbf16>
}

// Narrowing rounds to nearest even and overflows to infinity (f16's largest
// finite value is 65504); f64 narrows with a single rounding.
// CHECK: narrowing(arg0: f32[17], arg1: f64[17]) -> (out0: f16[17], out1: bf16[17], out2: f16[17], out3: bf16[17], out4: f16[17])
func.func @narrowing(%x: tensor<17xf32>, %y: tensor<17xf64>) -> (tensor<17xf16>, tensor<17xbf16>, tensor<17xf16>, tensor<17xbf16>, tensor<17xf16>) {
  %k = kiln.constant dense<40000.0> : tensor<17xf32>
  %big = kiln.mul %x, %k : tensor<17xf32>
  %third = kiln.constant dense<0.333333333333333314829616256247> : tensor<17xf64>
  %fine = kiln.mul %y, %third : tensor<17xf64>
  %0 = kiln.cast %x : tensor<17xf32> to tensor<17xf16>
  %1 = kiln.cast %x : tensor<17xf32> to tensor<17xbf16>
  %2 = kiln.cast %fine : tensor<17xf64> to tensor<17xf16>
  %3 = kiln.cast %fine : tensor<17xf64> to tensor<17xbf16>
  %4 = kiln.cast %big : tensor<17xf32> to tensor<17xf16>
  return %0, %1, %2, %3, %4 : tensor<17xf16>, tensor<17xbf16>, tensor<17xf16>, tensor<17xbf16>, tensor<17xf16>
}

// Widening is exact; to integers truncates and saturates; from integers
// rounds once.
// CHECK: widening_and_integers(arg0: f16[17], arg1: bf16[17], arg2: i32[17], arg3: ui8[17]) -> (out0: f32[17], out1: f64[17], out2: f64[17], out3: i32[17], out4: ui8[17], out5: i1[17], out6: f16[17], out7: bf16[17], out8: f16[17], out9: bf16[17])
func.func @widening_and_integers(%h: tensor<17xf16>, %b: tensor<17xbf16>, %i: tensor<17xi32>, %u: tensor<17xui8>) -> (tensor<17xf32>, tensor<17xf64>, tensor<17xf64>, tensor<17xi32>, tensor<17xui8>, tensor<17xi1>, tensor<17xf16>, tensor<17xbf16>, tensor<17xf16>, tensor<17xbf16>) {
  %0 = kiln.cast %h : tensor<17xf16> to tensor<17xf32>
  %1 = kiln.cast %h : tensor<17xf16> to tensor<17xf64>
  %2 = kiln.cast %b : tensor<17xbf16> to tensor<17xf64>
  %k = kiln.constant dense<1000.0> : tensor<17xf16>
  %big = kiln.mul %h, %k : tensor<17xf16>
  %3 = kiln.cast %big : tensor<17xf16> to tensor<17xi32>
  %4 = kiln.cast %big : tensor<17xf16> to tensor<17xui8>
  %5 = kiln.cast %b : tensor<17xbf16> to tensor<17xi1>
  %m = kiln.constant dense<1234567> : tensor<17xi32>
  %wide = kiln.mul %i, %m : tensor<17xi32>
  %6 = kiln.cast %wide : tensor<17xi32> to tensor<17xf16>
  %7 = kiln.cast %wide : tensor<17xi32> to tensor<17xbf16>
  %8 = kiln.cast %u : tensor<17xui8> to tensor<17xf16>
  %9 = kiln.cast %u : tensor<17xui8> to tensor<17xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<17xf32>, tensor<17xf64>, tensor<17xf64>, tensor<17xi32>, tensor<17xui8>, tensor<17xi1>, tensor<17xf16>, tensor<17xbf16>, tensor<17xf16>, tensor<17xbf16>
}
