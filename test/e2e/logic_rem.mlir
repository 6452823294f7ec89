// The bitwise ops (not, and, or, xor) on i1, i32 and i64, and rem on
// integers and floats.
//
// Integer inputs are drawn in [-8, 8], so rem sees zero divisors (rem(x, 0)
// is x) and -1 (rem(x, -1) is 0) on most seeds; the most negative i32 and
// i64 are also divided by -1 and by 0 at run time. Float divisors are
// |b| + 0.25, and fmod is exact, so results match bit for bit.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: bitwise_i1(arg0: i1[17], arg1: i1[17]) -> (out0: i1[17], out1: i1[17], out2: i1[17], out3: i1[17])
func.func @bitwise_i1(%a: tensor<17xi1>, %b: tensor<17xi1>) -> (tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>) {
  %not = kiln.not %a : tensor<17xi1>
  %and = kiln.and %a, %b : tensor<17xi1>
  %or = kiln.or %a, %b : tensor<17xi1>
  %xor = kiln.xor %a, %b : tensor<17xi1>
  return %not, %and, %or, %xor : tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>
}

// CHECK: bitwise_i32(arg0: i32[3,17], arg1: i32[3,17]) -> (out0: i32[3,17], out1: i32[3,17], out2: i32[3,17], out3: i32[3,17])
func.func @bitwise_i32(%a: tensor<3x17xi32>, %b: tensor<3x17xi32>) -> (tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>) {
  %not = kiln.not %a : tensor<3x17xi32>
  %and = kiln.and %a, %b : tensor<3x17xi32>
  %or = kiln.or %a, %b : tensor<3x17xi32>
  %xor = kiln.xor %a, %b : tensor<3x17xi32>
  return %not, %and, %or, %xor : tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>
}

// CHECK: bitwise_i64(arg0: i64[1000], arg1: i64[1000]) -> (out0: i64[1000], out1: i64[1000], out2: i64[1000], out3: i64[1000])
func.func @bitwise_i64(%a: tensor<1000xi64>, %b: tensor<1000xi64>) -> (tensor<1000xi64>, tensor<1000xi64>, tensor<1000xi64>, tensor<1000xi64>) {
  %not = kiln.not %a : tensor<1000xi64>
  %and = kiln.and %a, %b : tensor<1000xi64>
  %or = kiln.or %a, %b : tensor<1000xi64>
  %xor = kiln.xor %a, %b : tensor<1000xi64>
  return %not, %and, %or, %xor : tensor<1000xi64>, tensor<1000xi64>, tensor<1000xi64>, tensor<1000xi64>
}

// A mask built from a comparison, combined and used by select.
// CHECK: masks(arg0: f32[17], arg1: f32[17]) -> (out0: f32[17])
func.func @masks(%a: tensor<17xf32>, %b: tensor<17xf32>) -> tensor<17xf32> {
  %zero = kiln.constant dense<0.0> : tensor<17xf32>
  %pa = kiln.compare gt, %a, %zero : tensor<17xf32>
  %pb = kiln.compare lt, %b, %zero : tensor<17xf32>
  %both = kiln.and %pa, %pb : tensor<17xi1>
  %either = kiln.or %pa, %pb : tensor<17xi1>
  %one = kiln.xor %both, %either : tensor<17xi1>
  %none = kiln.not %either : tensor<17xi1>
  %s1 = kiln.select %one, %a, %b : tensor<17xi1>, tensor<17xf32>
  %s2 = kiln.select %none, %zero, %s1 : tensor<17xi1>, tensor<17xf32>
  return %s2 : tensor<17xf32>
}

// CHECK: rem_i32(arg0: i32[3,17], arg1: i32[3,17]) -> (out0: i32[3,17], out1: i32[3,17], out2: i32[3,17], out3: i32[3,17])
func.func @rem_i32(%a: tensor<3x17xi32>, %b: tensor<3x17xi32>) -> (tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>) {
  %r = kiln.rem %a, %b : tensor<3x17xi32>
  %s = kiln.rem %b, %a : tensor<3x17xi32>
  // The most negative value, and divisors -1 and 0, made at run time.
  %zero = kiln.constant dense<0> : tensor<3x17xi32>
  %z = kiln.mul %a, %zero : tensor<3x17xi32>
  %min = kiln.constant dense<-2147483648> : tensor<3x17xi32>
  %m1 = kiln.constant dense<-1> : tensor<3x17xi32>
  %lo = kiln.add %min, %z : tensor<3x17xi32>
  %d = kiln.add %m1, %z : tensor<3x17xi32>
  %t = kiln.rem %lo, %d : tensor<3x17xi32>
  %u = kiln.rem %lo, %z : tensor<3x17xi32>
  return %r, %s, %t, %u : tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>, tensor<3x17xi32>
}

// CHECK: rem_i64(arg0: i64[1000], arg1: i64[1000]) -> (out0: i64[1000], out1: i64[1000], out2: i64[1000])
func.func @rem_i64(%a: tensor<1000xi64>, %b: tensor<1000xi64>) -> (tensor<1000xi64>, tensor<1000xi64>, tensor<1000xi64>) {
  %r = kiln.rem %a, %b : tensor<1000xi64>
  %zero = kiln.constant dense<0> : tensor<1000xi64>
  %z = kiln.mul %a, %zero : tensor<1000xi64>
  %min = kiln.constant dense<-9223372036854775808> : tensor<1000xi64>
  %m1 = kiln.constant dense<-1> : tensor<1000xi64>
  %lo = kiln.add %min, %z : tensor<1000xi64>
  %d = kiln.add %m1, %z : tensor<1000xi64>
  %t = kiln.rem %lo, %d : tensor<1000xi64>
  %u = kiln.rem %lo, %b : tensor<1000xi64>
  return %r, %t, %u : tensor<1000xi64>, tensor<1000xi64>, tensor<1000xi64>
}

// CHECK: rem_f32(arg0: f32[3,17], arg1: f32[3,17]) -> (out0: f32[3,17], out1: f32[3,17])
func.func @rem_f32(%a: tensor<3x17xf32>, %b: tensor<3x17xf32>) -> (tensor<3x17xf32>, tensor<3x17xf32>) {
  %q = kiln.constant dense<0.25> : tensor<3x17xf32>
  %absb = kiln.abs %b : tensor<3x17xf32>
  %d = kiln.add %absb, %q : tensor<3x17xf32>
  %r = kiln.rem %a, %d : tensor<3x17xf32>
  %nd = kiln.neg %d : tensor<3x17xf32>
  %s = kiln.rem %a, %nd : tensor<3x17xf32>
  return %r, %s : tensor<3x17xf32>, tensor<3x17xf32>
}

// CHECK: rem_f64(arg0: f64[1000], arg1: f64[1000]) -> (out0: f64[1000])
func.func @rem_f64(%a: tensor<1000xf64>, %b: tensor<1000xf64>) -> tensor<1000xf64> {
  %q = kiln.constant dense<0.25> : tensor<1000xf64>
  %absb = kiln.abs %b : tensor<1000xf64>
  %d = kiln.add %absb, %q : tensor<1000xf64>
  %r = kiln.rem %a, %d : tensor<1000xf64>
  return %r : tensor<1000xf64>
}
