// RUN: kiln-opt %s | kiln-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// ROUNDTRIP: func.func @returns_arguments
// CHECK: returns_arguments(arg0: f64[3], arg1: f32[17]) -> (out0: f64[3], out1: f64[3], out2: f32[17], out3: f64[3])
// CHECK: saturating_casts(arg0: f32[17], arg1: f64[3]) -> (out0: i32[17], out1: i64[17], out2: i32[3], out3: i64[3])
// CHECK: cast_edge_cases(arg0: f32[12], arg1: f64[8]) -> (out0: i32[12], out1: i32[12], out2: i64[12], out3: i1[12], out4: i32[8], out5: i32[8], out6: i64[8])
// CHECK: int_div_edge_cases(arg0: i32[4], arg1: i64[4]) -> (out0: i32[4], out1: i32[4], out2: i64[4], out3: i64[4])

// Results that alias each other or an argument: an argument returned
// directly and twice, a loop that runs zero times, a value returned twice,
// and a private function named like a libm routine. Each result must be a
// separate, correct output buffer.

func.func private @tanh(%x: tensor<3xf64>) -> tensor<3xf64> {
  %t = kiln.tanh %x : tensor<3xf64>
  return %t : tensor<3xf64>
}

func.func @returns_arguments(%x: tensor<3xf64>, %y: tensor<17xf32>) -> (tensor<3xf64>, tensor<3xf64>, tensor<17xf32>, tensor<3xf64>) {
  %r = kiln.for 0 iterations (%x) : (tensor<3xf64>) {
  ^bb0(%i: tensor<i64>, %a: tensor<3xf64>):
    %n = kiln.neg %a : tensor<3xf64>
    kiln.yield %n : tensor<3xf64>
  }
  %t = call @tanh(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %x, %r, %y, %t : tensor<3xf64>, tensor<3xf64>, tensor<17xf32>, tensor<3xf64>
}

func.func @same_value_twice(%x: tensor<17xf32>) -> (tensor<17xf32>, tensor<17xf32>, tensor<17xf32>) {
  %e = kiln.exp %x : tensor<17xf32>
  %f = kiln.exp %x : tensor<17xf32>
  return %e, %f, %e : tensor<17xf32>, tensor<17xf32>, tensor<17xf32>
}

// Float to integer casts saturate and map NaN to 0, also out of range.
func.func @saturating_casts(%x: tensor<17xf32>, %y: tensor<3xf64>) -> (tensor<17xi32>, tensor<17xi64>, tensor<3xi32>, tensor<3xi64>) {
  %big = kiln.constant dense<1.0e10> : tensor<17xf32>
  %huge = kiln.constant dense<1.0e30> : tensor<17xf32>
  %a = kiln.mul %x, %big : tensor<17xf32>
  %b = kiln.mul %x, %huge : tensor<17xf32>
  %zero = kiln.constant dense<0.0> : tensor<3xf64>
  %z = kiln.div %zero, %zero : tensor<3xf64>
  %nan = kiln.add %y, %z : tensor<3xf64>
  %ca = kiln.cast %a : tensor<17xf32> to tensor<17xi32>
  %cb = kiln.cast %b : tensor<17xf32> to tensor<17xi64>
  %cn = kiln.cast %nan : tensor<3xf64> to tensor<3xi32>
  %big64 = kiln.constant dense<1.0e19> : tensor<3xf64>
  %y2 = kiln.mul %y, %big64 : tensor<3xf64>
  %cy = kiln.cast %y2 : tensor<3xf64> to tensor<3xi64>
  return %ca, %cb, %cn, %cy : tensor<17xi32>, tensor<17xi64>, tensor<3xi32>, tensor<3xi64>
}

// Float-to-integer casts at their edges, as kiln.cast defines them: NaN
// (either sign) gives 0, +-inf and values beyond the range saturate,
// values in range truncate toward zero. f32: the largest value below 2^31,
// 2^31, -2^31, the next f32 below -2^31, the largest value below 2^63,
// 9.3e18 (above 2^63), -2.9, 0.9. f64: values just inside and outside
// the i32 range, beyond the i64 range. Each cast runs on the constants
// themselves (folded while compiling) and on `c + x * 0`, which equals c
// but is only known at run time, so the compiled cast runs too.
func.func @cast_edge_cases(%x: tensor<12xf32>, %y: tensor<8xf64>) -> (tensor<12xi32>, tensor<12xi32>, tensor<12xi64>, tensor<12xi1>, tensor<8xi32>, tensor<8xi32>, tensor<8xi64>) {
  %c = kiln.constant dense<[0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 9223371487098961920.0, 9.3e18, -2.9, 0.9]> : tensor<12xf32>
  %zero = kiln.constant dense<0.0> : tensor<12xf32>
  %x0 = kiln.mul %x, %zero : tensor<12xf32>
  %v = kiln.add %c, %x0 : tensor<12xf32>
  %folded = kiln.cast %c : tensor<12xf32> to tensor<12xi32>
  %to32 = kiln.cast %v : tensor<12xf32> to tensor<12xi32>
  %to64 = kiln.cast %v : tensor<12xf32> to tensor<12xi64>
  %to1 = kiln.cast %v : tensor<12xf32> to tensor<12xi1>
  %d = kiln.constant dense<[0x7FF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 2147483647.9, -2147483648.9, 2147483648.0, -2147483649.0, -9.3e18]> : tensor<8xf64>
  %dzero = kiln.constant dense<0.0> : tensor<8xf64>
  %y0 = kiln.mul %y, %dzero : tensor<8xf64>
  %w = kiln.add %d, %y0 : tensor<8xf64>
  %dfolded = kiln.cast %d : tensor<8xf64> to tensor<8xi32>
  %dto32 = kiln.cast %w : tensor<8xf64> to tensor<8xi32>
  %dto64 = kiln.cast %w : tensor<8xf64> to tensor<8xi64>
  return %folded, %to32, %to64, %to1, %dfolded, %dto32, %dto64 : tensor<12xi32>, tensor<12xi32>, tensor<12xi64>, tensor<12xi1>, tensor<8xi32>, tensor<8xi32>, tensor<8xi64>
}

// Integer division at its edges: the most negative value divided by -1
// wraps to itself; quotients round toward zero (-7 / 2 is -3, 7 / -2 is
// -3). `max(min(x, 0), 0)` is 0 but only known at run time, so the
// compiled division runs on the same numbers the folder sees as constants.
func.func @int_div_edge_cases(%x: tensor<4xi32>, %y: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>) {
  %a = kiln.constant dense<[-2147483648, -2147483647, -7, 7]> : tensor<4xi32>
  %b = kiln.constant dense<[-1, -1, 2, -2]> : tensor<4xi32>
  %zero = kiln.constant dense<0> : tensor<4xi32>
  %m = kiln.min %x, %zero : tensor<4xi32>
  %k = kiln.max %m, %zero : tensor<4xi32>
  %ak = kiln.add %a, %k : tensor<4xi32>
  %bk = kiln.add %b, %k : tensor<4xi32>
  %folded = kiln.div %a, %b : tensor<4xi32>
  %q = kiln.div %ak, %bk : tensor<4xi32>
  %c = kiln.constant dense<[-9223372036854775808, 9223372036854775807, -7, 7]> : tensor<4xi64>
  %d = kiln.constant dense<[-1, -1, 2, -2]> : tensor<4xi64>
  %zero64 = kiln.constant dense<0> : tensor<4xi64>
  %m64 = kiln.min %y, %zero64 : tensor<4xi64>
  %k64 = kiln.max %m64, %zero64 : tensor<4xi64>
  %ck = kiln.add %c, %k64 : tensor<4xi64>
  %dk = kiln.add %d, %k64 : tensor<4xi64>
  %folded64 = kiln.div %c, %d : tensor<4xi64>
  %q64 = kiln.div %ck, %dk : tensor<4xi64>
  return %folded, %q, %folded64, %q64 : tensor<4xi32>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>
}
