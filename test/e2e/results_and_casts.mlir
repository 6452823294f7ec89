// RUN: kiln-opt %s | kiln-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// ROUNDTRIP: func.func @returns_arguments
// CHECK: returns_arguments(arg0: f64[3], arg1: f32[17]) -> (out0: f64[3], out1: f64[3], out2: f32[17], out3: f64[3])
// CHECK: saturating_casts(arg0: f32[17], arg1: f64[3]) -> (out0: i32[17], out1: i64[17], out2: i32[3], out3: i64[3])

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
