// kiln-cpu-math-approximation replaces f32 transcendentals by polynomials
// (plain arith, so loops around them vectorize); f64 math, sin and cos stay
// for libm.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-math-approximation | FileCheck %s

// CHECK-LABEL: func.func @f32_ops(
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK:         math.fma
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK:         return
func.func @f32_ops(%x: f32) -> (f32, f32, f32, f32) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %l1 = math.log1p %x : f32
  return %t, %e, %l, %l1 : f32, f32, f32, f32
}

// -----

// CHECK-LABEL: func.func @trig(
// CHECK:         math.sin %{{.*}} : f32
// CHECK:         math.cos %{{.*}} : f32
func.func @trig(%x: f32) -> (f32, f32) {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  return %s, %c : f32, f32
}

// -----

// CHECK-LABEL: func.func @f64_ops(
// CHECK:         math.tanh %{{.*}} : f64
// CHECK:         math.exp %{{.*}} : f64
func.func @f64_ops(%x: f64) -> (f64, f64) {
  %t = math.tanh %x : f64
  %e = math.exp %x : f64
  return %t, %e : f64, f64
}
