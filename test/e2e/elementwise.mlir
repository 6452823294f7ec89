// Elementwise ops, compare, select and cast, for every supported dtype.
//
// Each public function is run by the end-to-end harness on random inputs
// (floats in [-2, 2], integers in [-8, 8], random i1) and its native results
// are compared with the reference evaluator. Every result is well defined for
// any such input: logs, roots and divisions only see values >= 1 (or >= 0
// for sqrt), and float-to-integer casts only see values in range.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: float_binary_f32(arg0: f32[17], arg1: f32[17]) -> (out0: f32[17], out1: f32[17], out2: f32[17], out3: f32[17], out4: f32[17], out5: f32[17], out6: f32[17])
func.func @float_binary_f32(%a: tensor<17xf32>, %b: tensor<17xf32>) -> (tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>) {
  %one = kiln.constant dense<1.0> : tensor<17xf32>
  %add = kiln.add %a, %b : tensor<17xf32>
  %sub = kiln.sub %a, %b : tensor<17xf32>
  %mul = kiln.mul %a, %b : tensor<17xf32>
  // Divisor in [1, 3].
  %absb = kiln.abs %b : tensor<17xf32>
  %den = kiln.add %absb, %one : tensor<17xf32>
  %div = kiln.div %a, %den : tensor<17xf32>
  %max = kiln.max %a, %b : tensor<17xf32>
  %min = kiln.min %a, %b : tensor<17xf32>
  // Base in [1, 3], exponent in [-2, 2].
  %absa = kiln.abs %a : tensor<17xf32>
  %base = kiln.add %absa, %one : tensor<17xf32>
  %pow = kiln.pow %base, %b : tensor<17xf32>
  return %add, %sub, %mul, %div, %max, %min, %pow : tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>
}

// CHECK: float_binary_f64(arg0: f64[1000], arg1: f64[1000]) -> (out0: f64[1000], out1: f64[1000], out2: f64[1000], out3: f64[1000], out4: f64[1000], out5: f64[1000], out6: f64[1000])
func.func @float_binary_f64(%a: tensor<1000xf64>, %b: tensor<1000xf64>) -> (tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>) {
  %one = kiln.constant dense<1.0> : tensor<1000xf64>
  %add = kiln.add %a, %b : tensor<1000xf64>
  %sub = kiln.sub %a, %b : tensor<1000xf64>
  %mul = kiln.mul %a, %b : tensor<1000xf64>
  %absb = kiln.abs %b : tensor<1000xf64>
  %den = kiln.add %absb, %one : tensor<1000xf64>
  %div = kiln.div %a, %den : tensor<1000xf64>
  %max = kiln.max %a, %b : tensor<1000xf64>
  %min = kiln.min %a, %b : tensor<1000xf64>
  %absa = kiln.abs %a : tensor<1000xf64>
  %base = kiln.add %absa, %one : tensor<1000xf64>
  %pow = kiln.pow %base, %b : tensor<1000xf64>
  return %add, %sub, %mul, %div, %max, %min, %pow : tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>
}

// CHECK: float_unary_f32(arg0: f32[3,17]) -> (out0: f32[3,17], out1: f32[3,17], out2: f32[3,17], out3: f32[3,17], out4: f32[3,17], out5: f32[3,17], out6: f32[3,17], out7: f32[3,17], out8: f32[3,17], out9: f32[3,17], out10: f32[3,17])
func.func @float_unary_f32(%x: tensor<3x17xf32>) -> (tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>) {
  %one = kiln.constant dense<1.0> : tensor<3x17xf32>
  %neg = kiln.neg %x : tensor<3x17xf32>
  %abs = kiln.abs %x : tensor<3x17xf32>
  %relu = kiln.relu %x : tensor<3x17xf32>
  %exp = kiln.exp %x : tensor<3x17xf32>
  %absp1 = kiln.add %abs, %one : tensor<3x17xf32>
  %log = kiln.log %absp1 : tensor<3x17xf32>
  %sqrt = kiln.sqrt %abs : tensor<3x17xf32>
  %rsqrt = kiln.rsqrt %absp1 : tensor<3x17xf32>
  %tanh = kiln.tanh %x : tensor<3x17xf32>
  %sigmoid = kiln.sigmoid %x : tensor<3x17xf32>
  %sin = kiln.sin %x : tensor<3x17xf32>
  %cos = kiln.cos %x : tensor<3x17xf32>
  return %neg, %abs, %relu, %exp, %log, %sqrt, %rsqrt, %tanh, %sigmoid, %sin, %cos : tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>, tensor<3x17xf32>
}

// CHECK: float_unary_f64(arg0: f64[1000]) -> (out0: f64[1000], out1: f64[1000], out2: f64[1000], out3: f64[1000], out4: f64[1000], out5: f64[1000], out6: f64[1000], out7: f64[1000], out8: f64[1000], out9: f64[1000], out10: f64[1000])
func.func @float_unary_f64(%x: tensor<1000xf64>) -> (tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>) {
  %one = kiln.constant dense<1.0> : tensor<1000xf64>
  %neg = kiln.neg %x : tensor<1000xf64>
  %abs = kiln.abs %x : tensor<1000xf64>
  %relu = kiln.relu %x : tensor<1000xf64>
  %exp = kiln.exp %x : tensor<1000xf64>
  %absp1 = kiln.add %abs, %one : tensor<1000xf64>
  %log = kiln.log %absp1 : tensor<1000xf64>
  %sqrt = kiln.sqrt %abs : tensor<1000xf64>
  %rsqrt = kiln.rsqrt %absp1 : tensor<1000xf64>
  %tanh = kiln.tanh %x : tensor<1000xf64>
  %sigmoid = kiln.sigmoid %x : tensor<1000xf64>
  %sin = kiln.sin %x : tensor<1000xf64>
  %cos = kiln.cos %x : tensor<1000xf64>
  return %neg, %abs, %relu, %exp, %log, %sqrt, %rsqrt, %tanh, %sigmoid, %sin, %cos : tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>
}

// Rank-0 and single-element operands, and a chain of ops (a GELU-like
// activation and a softplus) that the backend may fuse.
// CHECK: float_small_chain(arg0: f32[], arg1: f64[1]) -> (out0: f32[], out1: f64[1])
func.func @float_small_chain(%x: tensor<f32>, %y: tensor<1xf64>) -> (tensor<f32>, tensor<1xf64>) {
  %c = kiln.constant dense<1.702> : tensor<f32>
  %cx = kiln.mul %c, %x : tensor<f32>
  %s = kiln.sigmoid %cx : tensor<f32>
  %gelu = kiln.mul %x, %s : tensor<f32>
  // softplus(y) = log(1 + exp(y))
  %one = kiln.constant dense<1.0> : tensor<1xf64>
  %e = kiln.exp %y : tensor<1xf64>
  %e1 = kiln.add %e, %one : tensor<1xf64>
  %softplus = kiln.log %e1 : tensor<1xf64>
  return %gelu, %softplus : tensor<f32>, tensor<1xf64>
}

// CHECK: int_binary_i32(arg0: i32[1000], arg1: i32[1000]) -> (out0: i32[1000], out1: i32[1000], out2: i32[1000], out3: i32[1000], out4: i32[1000], out5: i32[1000], out6: i32[1000])
func.func @int_binary_i32(%a: tensor<1000xi32>, %b: tensor<1000xi32>) -> (tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>) {
  %one = kiln.constant dense<1> : tensor<1000xi32>
  %add = kiln.add %a, %b : tensor<1000xi32>
  %sub = kiln.sub %a, %b : tensor<1000xi32>
  %mul = kiln.mul %a, %b : tensor<1000xi32>
  // Divisor in [1, 9]; negative dividends round toward zero.
  %absb = kiln.abs %b : tensor<1000xi32>
  %den = kiln.add %absb, %one : tensor<1000xi32>
  %div = kiln.div %a, %den : tensor<1000xi32>
  %max = kiln.max %a, %b : tensor<1000xi32>
  %min = kiln.min %a, %b : tensor<1000xi32>
  // Multiplying by 3e8 overflows i32 for |a| >= 8: the result wraps.
  %big = kiln.constant dense<300000000> : tensor<1000xi32>
  %wrap = kiln.mul %a, %big : tensor<1000xi32>
  return %add, %sub, %mul, %div, %max, %min, %wrap : tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>, tensor<1000xi32>
}

// CHECK: int_binary_i64(arg0: i64[3,5], arg1: i64[3,5]) -> (out0: i64[3,5], out1: i64[3,5], out2: i64[3,5], out3: i64[3,5], out4: i64[3,5], out5: i64[3,5], out6: i64[3,5])
func.func @int_binary_i64(%a: tensor<3x5xi64>, %b: tensor<3x5xi64>) -> (tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>) {
  %one = kiln.constant dense<1> : tensor<3x5xi64>
  %add = kiln.add %a, %b : tensor<3x5xi64>
  %sub = kiln.sub %a, %b : tensor<3x5xi64>
  %mul = kiln.mul %a, %b : tensor<3x5xi64>
  %absb = kiln.abs %b : tensor<3x5xi64>
  %den = kiln.add %absb, %one : tensor<3x5xi64>
  %div = kiln.div %a, %den : tensor<3x5xi64>
  %max = kiln.max %a, %b : tensor<3x5xi64>
  %min = kiln.min %a, %b : tensor<3x5xi64>
  // Values beyond the i32 range must keep all 64 bits.
  %big = kiln.constant dense<1099511627776> : tensor<3x5xi64>
  %wide = kiln.mul %a, %big : tensor<3x5xi64>
  %wide2 = kiln.add %wide, %b : tensor<3x5xi64>
  return %add, %sub, %mul, %div, %max, %min, %wide2 : tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>, tensor<3x5xi64>
}

// CHECK: int_unary(arg0: i32[17], arg1: i64[1], arg2: i32[]) -> (out0: i32[17], out1: i32[17], out2: i32[17], out3: i64[1], out4: i64[1], out5: i64[1], out6: i32[], out7: i32[], out8: i32[])
func.func @int_unary(%a: tensor<17xi32>, %b: tensor<1xi64>, %c: tensor<i32>) -> (tensor<17xi32>, tensor<17xi32>, tensor<17xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<i32>, tensor<i32>, tensor<i32>) {
  %neg32 = kiln.neg %a : tensor<17xi32>
  %abs32 = kiln.abs %a : tensor<17xi32>
  %relu32 = kiln.relu %a : tensor<17xi32>
  %neg64 = kiln.neg %b : tensor<1xi64>
  %abs64 = kiln.abs %b : tensor<1xi64>
  %relu64 = kiln.relu %b : tensor<1xi64>
  %neg0 = kiln.neg %c : tensor<i32>
  %abs0 = kiln.abs %c : tensor<i32>
  %relu0 = kiln.relu %c : tensor<i32>
  return %neg32, %abs32, %relu32, %neg64, %abs64, %relu64, %neg0, %abs0, %relu0 : tensor<17xi32>, tensor<17xi32>, tensor<17xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<i32>, tensor<i32>, tensor<i32>
}

// Float comparisons on values quantized to small integers (so that `eq`,
// `le` and `ge` see ties) and on the raw inputs.
// CHECK: compare_f32(arg0: f32[17], arg1: f32[17]) -> (out0: i1[17], out1: i1[17], out2: i1[17], out3: i1[17], out4: i1[17], out5: i1[17], out6: i1[17], out7: i1[17])
func.func @compare_f32(%a: tensor<17xf32>, %b: tensor<17xf32>) -> (tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>) {
  %two = kiln.constant dense<2.0> : tensor<17xf32>
  %a2 = kiln.mul %a, %two : tensor<17xf32>
  %b2 = kiln.mul %b, %two : tensor<17xf32>
  %ai = kiln.cast %a2 : tensor<17xf32> to tensor<17xi32>
  %bi = kiln.cast %b2 : tensor<17xf32> to tensor<17xi32>
  %qa = kiln.cast %ai : tensor<17xi32> to tensor<17xf32>
  %qb = kiln.cast %bi : tensor<17xi32> to tensor<17xf32>
  %eq = kiln.compare eq, %qa, %qb : tensor<17xf32>
  %ne = kiln.compare ne, %qa, %qb : tensor<17xf32>
  %lt = kiln.compare lt, %qa, %qb : tensor<17xf32>
  %le = kiln.compare le, %qa, %qb : tensor<17xf32>
  %gt = kiln.compare gt, %qa, %qb : tensor<17xf32>
  %ge = kiln.compare ge, %qa, %qb : tensor<17xf32>
  %rawlt = kiln.compare lt, %a, %b : tensor<17xf32>
  %raweq = kiln.compare eq, %a, %a : tensor<17xf32>
  return %eq, %ne, %lt, %le, %gt, %ge, %rawlt, %raweq : tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>
}

// NaN operands: sqrt of a negative input is NaN, which compares unequal to
// everything (only `ne` is true), also to itself.
// CHECK: compare_nan_f64(arg0: f64[3], arg1: f64[3]) -> (out0: i1[3], out1: i1[3], out2: i1[3], out3: i1[3], out4: i1[3], out5: i1[3], out6: i1[3])
func.func @compare_nan_f64(%a: tensor<3xf64>, %b: tensor<3xf64>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %s = kiln.sqrt %a : tensor<3xf64>
  %eq = kiln.compare eq, %s, %b : tensor<3xf64>
  %ne = kiln.compare ne, %s, %b : tensor<3xf64>
  %lt = kiln.compare lt, %s, %b : tensor<3xf64>
  %le = kiln.compare le, %s, %b : tensor<3xf64>
  %gt = kiln.compare gt, %s, %b : tensor<3xf64>
  %ge = kiln.compare ge, %s, %b : tensor<3xf64>
  // max propagates NaN, so max(s, b) != max(s, b) exactly where a < 0.
  %m = kiln.max %s, %b : tensor<3xf64>
  %isnan = kiln.compare ne, %m, %m : tensor<3xf64>
  return %eq, %ne, %lt, %le, %gt, %ge, %isnan : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK: compare_int(arg0: i32[1000], arg1: i32[1000], arg2: i64[3], arg3: i64[3]) -> (out0: i1[1000], out1: i1[1000], out2: i1[1000], out3: i1[1000], out4: i1[1000], out5: i1[1000], out6: i1[3], out7: i1[3], out8: i1[3], out9: i1[3], out10: i1[3], out11: i1[3])
func.func @compare_int(%a: tensor<1000xi32>, %b: tensor<1000xi32>, %c: tensor<3xi64>, %d: tensor<3xi64>) -> (tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %eq = kiln.compare eq, %a, %b : tensor<1000xi32>
  %ne = kiln.compare ne, %a, %b : tensor<1000xi32>
  %lt = kiln.compare lt, %a, %b : tensor<1000xi32>
  %le = kiln.compare le, %a, %b : tensor<1000xi32>
  %gt = kiln.compare gt, %a, %b : tensor<1000xi32>
  %ge = kiln.compare ge, %a, %b : tensor<1000xi32>
  %eq64 = kiln.compare eq, %c, %d : tensor<3xi64>
  %ne64 = kiln.compare ne, %c, %d : tensor<3xi64>
  %lt64 = kiln.compare lt, %c, %d : tensor<3xi64>
  %le64 = kiln.compare le, %c, %d : tensor<3xi64>
  %gt64 = kiln.compare gt, %c, %d : tensor<3xi64>
  %ge64 = kiln.compare ge, %c, %d : tensor<3xi64>
  return %eq, %ne, %lt, %le, %gt, %ge, %eq64, %ne64, %lt64, %le64, %gt64, %ge64 : tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<1000xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// i1 compares as false < true.
// CHECK: compare_i1(arg0: i1[17], arg1: i1[17]) -> (out0: i1[17], out1: i1[17], out2: i1[17], out3: i1[17], out4: i1[17], out5: i1[17])
func.func @compare_i1(%a: tensor<17xi1>, %b: tensor<17xi1>) -> (tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>) {
  %eq = kiln.compare eq, %a, %b : tensor<17xi1>
  %ne = kiln.compare ne, %a, %b : tensor<17xi1>
  %lt = kiln.compare lt, %a, %b : tensor<17xi1>
  %le = kiln.compare le, %a, %b : tensor<17xi1>
  %gt = kiln.compare gt, %a, %b : tensor<17xi1>
  %ge = kiln.compare ge, %a, %b : tensor<17xi1>
  return %eq, %ne, %lt, %le, %gt, %ge : tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>, tensor<17xi1>
}

// Elementwise predicates (computed and given) over f32, i64 and i1 values.
// CHECK: select_elementwise(arg0: f32[3,17], arg1: f32[3,17], arg2: i1[1000], arg3: i64[1000], arg4: i64[1000], arg5: i1[1000]) -> (out0: f32[3,17], out1: i64[1000], out2: i1[1000])
func.func @select_elementwise(%a: tensor<3x17xf32>, %b: tensor<3x17xf32>, %p: tensor<1000xi1>, %c: tensor<1000xi64>, %d: tensor<1000xi64>, %q: tensor<1000xi1>) -> (tensor<3x17xf32>, tensor<1000xi64>, tensor<1000xi1>) {
  %gt = kiln.compare gt, %a, %b : tensor<3x17xf32>
  %na = kiln.neg %a : tensor<3x17xf32>
  // max(a, b) where a > b, else -a.
  %sf = kiln.select %gt, %a, %na : tensor<3x17xi1>, tensor<3x17xf32>
  %si = kiln.select %p, %c, %d : tensor<1000xi1>, tensor<1000xi64>
  %nq = kiln.compare eq, %q, %p : tensor<1000xi1>
  %sb = kiln.select %p, %q, %nq : tensor<1000xi1>, tensor<1000xi1>
  return %sf, %si, %sb : tensor<3x17xf32>, tensor<1000xi64>, tensor<1000xi1>
}

// A rank-0 predicate picks whole tensors; one given, one computed.
// CHECK: select_scalar_pred(arg0: i1[], arg1: f64[1000], arg2: f64[1000], arg3: i32[], arg4: i32[17], arg5: i32[17]) -> (out0: f64[1000], out1: i32[17])
func.func @select_scalar_pred(%p: tensor<i1>, %a: tensor<1000xf64>, %b: tensor<1000xf64>, %n: tensor<i32>, %c: tensor<17xi32>, %d: tensor<17xi32>) -> (tensor<1000xf64>, tensor<17xi32>) {
  %sf = kiln.select %p, %a, %b : tensor<i1>, tensor<1000xf64>
  %zero = kiln.constant dense<0> : tensor<i32>
  %pos = kiln.compare ge, %n, %zero : tensor<i32>
  %si = kiln.select %pos, %c, %d : tensor<i1>, tensor<17xi32>
  return %sf, %si : tensor<1000xf64>, tensor<17xi32>
}

// Casts from f32. Float-to-integer casts truncate toward zero; the
// operands are at most 200 in magnitude. `x != 0` (cast to i1) is tested on
// values truncated to -1, 0 or 1, so that zeros occur.
// CHECK: cast_from_f32(arg0: f32[17]) -> (out0: f64[17], out1: i1[17], out2: i32[17], out3: i64[17])
func.func @cast_from_f32(%x: tensor<17xf32>) -> (tensor<17xf64>, tensor<17xi1>, tensor<17xi32>, tensor<17xi64>) {
  %hundred = kiln.constant dense<100.0> : tensor<17xf32>
  %y = kiln.mul %x, %hundred : tensor<17xf32>
  %f64 = kiln.cast %y : tensor<17xf32> to tensor<17xf64>
  %t = kiln.cast %x : tensor<17xf32> to tensor<17xi32>
  %q = kiln.cast %t : tensor<17xi32> to tensor<17xf32>
  %i1 = kiln.cast %q : tensor<17xf32> to tensor<17xi1>
  %i32 = kiln.cast %y : tensor<17xf32> to tensor<17xi32>
  %i64 = kiln.cast %y : tensor<17xf32> to tensor<17xi64>
  return %f64, %i1, %i32, %i64 : tensor<17xf64>, tensor<17xi1>, tensor<17xi32>, tensor<17xi64>
}

// CHECK: cast_from_f64(arg0: f64[3,5]) -> (out0: f32[3,5], out1: i1[3,5], out2: i32[3,5], out3: i64[3,5])
func.func @cast_from_f64(%x: tensor<3x5xf64>) -> (tensor<3x5xf32>, tensor<3x5xi1>, tensor<3x5xi32>, tensor<3x5xi64>) {
  %scale = kiln.constant dense<1.0e6> : tensor<3x5xf64>
  %y = kiln.mul %x, %scale : tensor<3x5xf64>
  // Rounds to nearest f32.
  %f32 = kiln.cast %x : tensor<3x5xf64> to tensor<3x5xf32>
  %t = kiln.cast %x : tensor<3x5xf64> to tensor<3x5xi64>
  %q = kiln.cast %t : tensor<3x5xi64> to tensor<3x5xf64>
  %i1 = kiln.cast %q : tensor<3x5xf64> to tensor<3x5xi1>
  %i32 = kiln.cast %y : tensor<3x5xf64> to tensor<3x5xi32>
  %i64 = kiln.cast %y : tensor<3x5xf64> to tensor<3x5xi64>
  return %f32, %i1, %i32, %i64 : tensor<3x5xf32>, tensor<3x5xi1>, tensor<3x5xi32>, tensor<3x5xi64>
}

// i1 converts to 0 or 1.
// CHECK: cast_from_i1(arg0: i1[1000]) -> (out0: f32[1000], out1: f64[1000], out2: i32[1000], out3: i64[1000])
func.func @cast_from_i1(%p: tensor<1000xi1>) -> (tensor<1000xf32>, tensor<1000xf64>, tensor<1000xi32>, tensor<1000xi64>) {
  %f32 = kiln.cast %p : tensor<1000xi1> to tensor<1000xf32>
  %f64 = kiln.cast %p : tensor<1000xi1> to tensor<1000xf64>
  %i32 = kiln.cast %p : tensor<1000xi1> to tensor<1000xi32>
  %i64 = kiln.cast %p : tensor<1000xi1> to tensor<1000xi64>
  return %f32, %f64, %i32, %i64 : tensor<1000xf32>, tensor<1000xf64>, tensor<1000xi32>, tensor<1000xi64>
}

// CHECK: cast_from_i32(arg0: i32[17]) -> (out0: f32[17], out1: f64[17], out2: i1[17], out3: i64[17], out4: i32[17])
func.func @cast_from_i32(%n: tensor<17xi32>) -> (tensor<17xf32>, tensor<17xf64>, tensor<17xi1>, tensor<17xi64>, tensor<17xi32>) {
  %f32 = kiln.cast %n : tensor<17xi32> to tensor<17xf32>
  %f64 = kiln.cast %n : tensor<17xi32> to tensor<17xf64>
  %i1 = kiln.cast %n : tensor<17xi32> to tensor<17xi1>
  // Sign extension: negative values stay negative in i64.
  %i64 = kiln.cast %n : tensor<17xi32> to tensor<17xi64>
  // i32 -> f64 -> i32 is exact.
  %back = kiln.cast %f64 : tensor<17xf64> to tensor<17xi32>
  return %f32, %f64, %i1, %i64, %back : tensor<17xf32>, tensor<17xf64>, tensor<17xi1>, tensor<17xi64>, tensor<17xi32>
}

// Large i64 values: to f32 rounds, to i32 keeps the low 32 bits.
// CHECK: cast_from_i64(arg0: i64[3]) -> (out0: f32[3], out1: f64[3], out2: i1[3], out3: i32[3])
func.func @cast_from_i64(%n: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xf64>, tensor<3xi1>, tensor<3xi32>) {
  %big = kiln.constant dense<1099511640123> : tensor<3xi64>
  %m = kiln.mul %n, %big : tensor<3xi64>
  %w = kiln.add %m, %n : tensor<3xi64>
  %f32 = kiln.cast %w : tensor<3xi64> to tensor<3xf32>
  %f64 = kiln.cast %w : tensor<3xi64> to tensor<3xf64>
  %i1 = kiln.cast %n : tensor<3xi64> to tensor<3xi1>
  %i32 = kiln.cast %w : tensor<3xi64> to tensor<3xi32>
  return %f32, %f64, %i1, %i32 : tensor<3xf32>, tensor<3xf64>, tensor<3xi1>, tensor<3xi32>
}
