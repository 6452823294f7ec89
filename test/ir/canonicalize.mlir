// Folds and canonicalizations of the kiln ops, and the rewrites that must not
// happen (float identities that are wrong for NaN, inf or -0.0; integer
// results the runtime leaves undefined; constants too big to fold).
// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: kiln-opt %s --split-input-file --canonicalize --cse | FileCheck %s --check-prefix=CSE

// Constants fold to their value, so the canonicalizer shares equal constants
// and keeps constants of the same type with different values apart.
// CHECK-LABEL: func.func @constants_distinct
// CHECK-DAG: %[[ONE:.+]] = kiln.constant dense<1> : tensor<2xi32>
// CHECK-DAG: %[[TWO:.+]] = kiln.constant dense<[2, 3]> : tensor<2xi32>
// CHECK: return %[[ONE]], %[[TWO]], %[[ONE]]
func.func @constants_distinct() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {
  %0 = kiln.constant dense<1> : tensor<2xi32>
  %1 = kiln.constant dense<[2, 3]> : tensor<2xi32>
  %2 = kiln.constant dense<1> : tensor<2xi32>
  return %0, %1, %2 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
}

// -----

//===----------------------------------------------------------------------===//
// Constant folding of elementwise ops
//===----------------------------------------------------------------------===//

// Float arithmetic is rounded as f32 code rounds it (0.1 + 0.2 is the f32
// 0.3, 0.1 * 0.2 is 0.0200000014) and IEEE division by zero gives inf.
// CHECK-LABEL: func.func @fold_binary_f32
// CHECK-DAG: %[[ADD:.+]] = kiln.constant dense<[1.500000e+00, 2.000000e+00, 3.000000e-01, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[SUB:.+]] = kiln.constant dense<[5.000000e-01, -6.000000e+00, -1.000000e-01, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[MUL:.+]] = kiln.constant dense<[5.000000e-01, -8.000000e+00, 0.0200000014, 0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[DIV:.+]] = kiln.constant dense<[2.000000e+00, -5.000000e-01, 5.000000e-01, 0x7F800000]> : tensor<4xf32>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[1.000000e+00, 4.000000e+00, 2.000000e-01, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<[5.000000e-01, -2.000000e+00, 1.000000e-01, 0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[POW:.+]] = kiln.constant dense<[1.000000e+00, 1.600000e+01, 0.630957365, 1.000000e+00]> : tensor<4xf32>
// CHECK-NOT: kiln.add
// CHECK-NOT: kiln.pow
// CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]], %[[POW]]
func.func @fold_binary_f32() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = kiln.constant dense<[1.0, -2.0, 0.1, 3.0]> : tensor<4xf32>
  %b = kiln.constant dense<[0.5, 4.0, 0.2, 0.0]> : tensor<4xf32>
  %0 = kiln.add %a, %b : tensor<4xf32>
  %1 = kiln.sub %a, %b : tensor<4xf32>
  %2 = kiln.mul %a, %b : tensor<4xf32>
  %3 = kiln.div %a, %b : tensor<4xf32>
  %4 = kiln.max %a, %b : tensor<4xf32>
  %5 = kiln.min %a, %b : tensor<4xf32>
  %6 = kiln.pow %a, %b : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// kiln.max/min propagate NaN and order -0.0 below +0.0.
// CHECK-LABEL: func.func @fold_max_min_nan_and_signed_zero
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[0x7FC00000, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<[0x7FC00000, -0.000000e+00]> : tensor<2xf32>
// CHECK: return %[[MAX]], %[[MIN]]
func.func @fold_max_min_nan_and_signed_zero() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = kiln.constant dense<[0x7FC00000, -0.0]> : tensor<2xf32>
  %b = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %0 = kiln.max %a, %b : tensor<2xf32>
  %1 = kiln.min %a, %b : tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Integer arithmetic wraps; division rounds toward zero; max/min are signed.
// CHECK-LABEL: func.func @fold_binary_i32
// CHECK-DAG: %[[ADD:.+]] = kiln.constant dense<[2147483646, 4, -10]> : tensor<3xi32>
// CHECK-DAG: %[[SUB:.+]] = kiln.constant dense<[-2147483648, 10, -4]> : tensor<3xi32>
// CHECK-DAG: %[[MUL:.+]] = kiln.constant dense<[-2147483647, -21, 21]> : tensor<3xi32>
// CHECK-DAG: %[[DIV:.+]] = kiln.constant dense<[-2147483647, -2, 2]> : tensor<3xi32>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[2147483647, 7, -3]> : tensor<3xi32>
// CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<[-1, -3, -7]> : tensor<3xi32>
// CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]]
func.func @fold_binary_i32() -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %a = kiln.constant dense<[2147483647, 7, -7]> : tensor<3xi32>
  %b = kiln.constant dense<[-1, -3, -3]> : tensor<3xi32>
  %0 = kiln.add %a, %b : tensor<3xi32>
  %1 = kiln.sub %a, %b : tensor<3xi32>
  %2 = kiln.mul %a, %b : tensor<3xi32>
  %3 = kiln.div %a, %b : tensor<3xi32>
  %4 = kiln.max %a, %b : tensor<3xi32>
  %5 = kiln.min %a, %b : tensor<3xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

// -----

// Splat operands fold to a splat, whatever the size.
// CHECK-LABEL: func.func @fold_splat_stays_splat
// CHECK: %[[C:.+]] = kiln.constant dense<5.000000e+00> : tensor<64x1024xf32>
// CHECK-NOT: kiln.add
// CHECK: return %[[C]]
func.func @fold_splat_stays_splat() -> tensor<64x1024xf32> {
  %a = kiln.constant dense<2.0> : tensor<64x1024xf32>
  %b = kiln.constant dense<3.0> : tensor<64x1024xf32>
  %0 = kiln.add %a, %b : tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// -----

// Rank-0 and i64 operands.
// CHECK-LABEL: func.func @fold_rank0_i64
// CHECK: %[[C:.+]] = kiln.constant dense<-9223372036854775808> : tensor<i64>
// CHECK: return %[[C]]
func.func @fold_rank0_i64() -> tensor<i64> {
  %a = kiln.constant dense<9223372036854775807> : tensor<i64>
  %b = kiln.constant dense<1> : tensor<i64>
  %0 = kiln.add %a, %b : tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Integer division by zero is all ones (-1 signed, the largest value
// unsigned), whatever the dividend: constants fold elementwise, and a
// division of anything by a zero splat folds to that splat.
// CHECK-LABEL: func.func @fold_int_div_by_zero
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<[2, -1]> : tensor<2xi32>
// CHECK-DAG: %[[ONES:.+]] = kiln.constant dense<-1> : tensor<2xi32>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<255> : tensor<3xui8>
// CHECK-NOT: kiln.div
// CHECK: return %[[Q]], %[[ONES]], %[[MAX]]
func.func @fold_int_div_by_zero(%x: tensor<2xi32>, %u: tensor<3xui8>) -> (tensor<2xi32>, tensor<2xi32>, tensor<3xui8>) {
  %num = kiln.constant dense<[6, 1]> : tensor<2xi32>
  %den = kiln.constant dense<[3, 0]> : tensor<2xi32>
  %zero = kiln.constant dense<0> : tensor<2xi32>
  %uzero = kiln.constant dense<0> : tensor<3xui8>
  %0 = kiln.div %num, %den : tensor<2xi32>
  %1 = kiln.div %x, %zero : tensor<2xi32>
  %2 = kiln.div %u, %uzero : tensor<3xui8>
  return %0, %1, %2 : tensor<2xi32>, tensor<2xi32>, tensor<3xui8>
}

// -----

// The one overflowing quotient, INT_MIN / -1, wraps to INT_MIN (in i32 and
// in i64), like the lowering and the reference evaluator.
// CHECK-LABEL: func.func @fold_int_div_overflow_wraps
// CHECK-DAG: %[[Q32:.+]] = kiln.constant dense<[-2147483648, 2147483647, 3]> : tensor<3xi32>
// CHECK-DAG: %[[Q64:.+]] = kiln.constant dense<-9223372036854775808> : tensor<i64>
// CHECK-NOT: kiln.div
// CHECK: return %[[Q32]], %[[Q64]]
func.func @fold_int_div_overflow_wraps() -> (tensor<3xi32>, tensor<i64>) {
  %a = kiln.constant dense<[-2147483648, -2147483647, -7]> : tensor<3xi32>
  %b = kiln.constant dense<[-1, -1, -2]> : tensor<3xi32>
  %0 = kiln.div %a, %b : tensor<3xi32>
  %c = kiln.constant dense<-9223372036854775808> : tensor<i64>
  %d = kiln.constant dense<-1> : tensor<i64>
  %1 = kiln.div %c, %d : tensor<i64>
  return %0, %1 : tensor<3xi32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @fold_unary_int
// CHECK-DAG: %[[NEG:.+]] = kiln.constant dense<[-2147483648, 3, -5, 0]> : tensor<4xi32>
// CHECK-DAG: %[[ABS:.+]] = kiln.constant dense<[-2147483648, 3, 5, 0]> : tensor<4xi32>
// CHECK-DAG: %[[RELU:.+]] = kiln.constant dense<[0, 0, 5, 0]> : tensor<4xi32>
// CHECK: return %[[NEG]], %[[ABS]], %[[RELU]]
func.func @fold_unary_int() -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %a = kiln.constant dense<[-2147483648, -3, 5, 0]> : tensor<4xi32>
  %0 = kiln.neg %a : tensor<4xi32>
  %1 = kiln.abs %a : tensor<4xi32>
  %2 = kiln.relu %a : tensor<4xi32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// neg flips the sign bit, of NaN too; relu is max(x, 0) with kiln.max's NaN
// propagation, so relu(-0.0) is +0.0 and relu(NaN) is NaN.
// CHECK-LABEL: func.func @fold_unary_f64
// CHECK-DAG: %[[NEG:.+]] = kiln.constant dense<[2.500000e+00, -0.000000e+00, 0xFFF8000000000000]> : tensor<3xf64>
// CHECK-DAG: %[[ABS:.+]] = kiln.constant dense<[2.500000e+00, 0.000000e+00, 0x7FF8000000000000]> : tensor<3xf64>
// CHECK-DAG: %[[RELU:.+]] = kiln.constant dense<[0.000000e+00, 0.000000e+00, 0x7FF8000000000000]> : tensor<3xf64>
// CHECK: return %[[NEG]], %[[ABS]], %[[RELU]]
func.func @fold_unary_f64() -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) {
  %a = kiln.constant dense<[-2.5, 0.0, 0x7FF8000000000000]> : tensor<3xf64>
  %0 = kiln.neg %a : tensor<3xf64>
  %1 = kiln.abs %a : tensor<3xf64>
  %b = kiln.constant dense<[-2.5, -0.0, 0x7FF8000000000000]> : tensor<3xf64>
  %2 = kiln.relu %b : tensor<3xf64>
  return %0, %1, %2 : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>
}

// -----

// Transcendental functions, evaluated in double and rounded to f32: exact
// cases first, then f32 roundings of e, log 2, sqrt 2, ...
// CHECK-LABEL: func.func @fold_transcendental_f32
// CHECK-DAG: %[[EXP:.+]] = kiln.constant dense<[1.000000e+00, 2.71828175]> : tensor<2xf32>
// CHECK-DAG: %[[LOG:.+]] = kiln.constant dense<[0.000000e+00, 0.693147182]> : tensor<2xf32>
// CHECK-DAG: %[[SQRT:.+]] = kiln.constant dense<[2.000000e+00, 1.41421354]> : tensor<2xf32>
// CHECK-DAG: %[[RSQRT:.+]] = kiln.constant dense<[5.000000e-01, 0.707106769]> : tensor<2xf32>
// CHECK-DAG: %[[TANH:.+]] = kiln.constant dense<[0.000000e+00, 0.761594176]> : tensor<2xf32>
// CHECK-DAG: %[[SIGMOID:.+]] = kiln.constant dense<[5.000000e-01, 0.731058597]> : tensor<2xf32>
// CHECK-DAG: %[[SIN:.+]] = kiln.constant dense<[0.000000e+00, 0.841470957]> : tensor<2xf32>
// CHECK-DAG: %[[COS:.+]] = kiln.constant dense<[1.000000e+00, 0.540302277]> : tensor<2xf32>
// CHECK-NOT: kiln.exp
// CHECK: return %[[EXP]], %[[LOG]], %[[SQRT]], %[[RSQRT]], %[[TANH]], %[[SIGMOID]], %[[SIN]], %[[COS]]
func.func @fold_transcendental_f32() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %zero_one = kiln.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %one_two = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %four_two = kiln.constant dense<[4.0, 2.0]> : tensor<2xf32>
  %0 = kiln.exp %zero_one : tensor<2xf32>
  %1 = kiln.log %one_two : tensor<2xf32>
  %2 = kiln.sqrt %four_two : tensor<2xf32>
  %3 = kiln.rsqrt %four_two : tensor<2xf32>
  %4 = kiln.tanh %zero_one : tensor<2xf32>
  %5 = kiln.sigmoid %zero_one : tensor<2xf32>
  %6 = kiln.sin %zero_one : tensor<2xf32>
  %7 = kiln.cos %zero_one : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Results are rounded to the element type: e^2 is 7.390625 in f16 but 7.375
// in bf16, and keeps full precision in f64.
// CHECK-LABEL: func.func @fold_transcendental_rounding
// CHECK-DAG: %[[F16:.+]] = kiln.constant dense<7.390630e+00> : tensor<2xf16>
// CHECK-DAG: %[[BF16:.+]] = kiln.constant dense<7.375000e+00> : tensor<2xbf16>
// CHECK-DAG: %[[F64:.+]] = kiln.constant dense<7.3890560989306504> : tensor<f64>
// CHECK: return %[[F16]], %[[BF16]], %[[F64]]
func.func @fold_transcendental_rounding() -> (tensor<2xf16>, tensor<2xbf16>, tensor<f64>) {
  %h = kiln.constant dense<2.0> : tensor<2xf16>
  %b = kiln.constant dense<2.0> : tensor<2xbf16>
  %d = kiln.constant dense<2.0> : tensor<f64>
  %0 = kiln.exp %h : tensor<2xf16>
  %1 = kiln.exp %b : tensor<2xbf16>
  %2 = kiln.exp %d : tensor<f64>
  return %0, %1, %2 : tensor<2xf16>, tensor<2xbf16>, tensor<f64>
}

// -----

// Comparisons of floats follow C: NaN compares false except with ne, and
// -0.0 == +0.0. (eq and ge give equal constants, which the folder shares.)
// CHECK-LABEL: func.func @fold_compare_f32
// CHECK-DAG: %[[EQ:.+]] = kiln.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[NE:.+]] = kiln.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[LT:.+]] = kiln.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[LE:.+]] = kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[GT:.+]] = kiln.constant dense<false> : tensor<3xi1>
// CHECK: return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[EQ]]
func.func @fold_compare_f32() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = kiln.constant dense<[1.0, 0x7FC00000, -0.0]> : tensor<3xf32>
  %b = kiln.constant dense<[2.0, 1.0, 0.0]> : tensor<3xf32>
  %0 = kiln.compare eq, %a, %b : tensor<3xf32>
  %1 = kiln.compare ne, %a, %b : tensor<3xf32>
  %2 = kiln.compare lt, %a, %b : tensor<3xf32>
  %3 = kiln.compare le, %a, %b : tensor<3xf32>
  %4 = kiln.compare gt, %a, %b : tensor<3xf32>
  %5 = kiln.compare ge, %a, %b : tensor<3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// -----

// Integer comparisons are signed. On i1 only eq and ne fold: whether true
// orders above false is the lowering's choice.
// CHECK-LABEL: func.func @fold_compare_int
// CHECK-DAG: %[[LT:.+]] = kiln.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[EQ:.+]] = kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: %[[P:.+]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<false> : tensor<2xi1>
// CHECK: %[[BLT:.+]] = kiln.compare lt, %[[P]], %[[Q]] : tensor<2xi1>
// CHECK: return %[[LT]], %[[EQ]], %[[BLT]]
func.func @fold_compare_int() -> (tensor<3xi1>, tensor<2xi1>, tensor<2xi1>) {
  %a = kiln.constant dense<[-1, 5, 2]> : tensor<3xi64>
  %b = kiln.constant dense<[1, 5, -3]> : tensor<3xi64>
  %0 = kiln.compare lt, %a, %b : tensor<3xi64>
  %p = kiln.constant dense<[true, false]> : tensor<2xi1>
  %q = kiln.constant dense<false> : tensor<2xi1>
  %1 = kiln.compare eq, %p, %q : tensor<2xi1>
  %2 = kiln.compare lt, %p, %q : tensor<2xi1>
  return %0, %1, %2 : tensor<3xi1>, tensor<2xi1>, tensor<2xi1>
}

// -----

// x cmp x is known for integers but not for floats (x may be NaN).
// CHECK-LABEL: func.func @compare_same_operand
// CHECK-SAME: (%[[I:.+]]: tensor<4xi32>, %[[F:.+]]: tensor<4xf32>)
// CHECK-DAG: %[[TRUE:.+]] = kiln.constant dense<true> : tensor<4xi1>
// CHECK-DAG: %[[FALSE:.+]] = kiln.constant dense<false> : tensor<4xi1>
// CHECK: %[[FEQ:.+]] = kiln.compare eq, %[[F]], %[[F]] : tensor<4xf32>
// CHECK: return %[[TRUE]], %[[FALSE]], %[[FEQ]]
func.func @compare_same_operand(%i: tensor<4xi32>, %f: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.compare le, %i, %i : tensor<4xi32>
  %1 = kiln.compare ne, %i, %i : tensor<4xi32>
  %2 = kiln.compare eq, %f, %f : tensor<4xf32>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @fold_select_constants
// CHECK: %[[C:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+01, 3.000000e+00]> : tensor<3xf32>
// CHECK-NOT: kiln.select
// CHECK: return %[[C]]
func.func @fold_select_constants() -> tensor<3xf32> {
  %p = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %a = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = kiln.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %0 = kiln.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A splat predicate picks a whole operand, even when the values are not
// constants; so does a select whose two values are the same.
// CHECK-LABEL: func.func @select_splat_predicate
// CHECK-SAME: (%[[A:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<3xf32>, %[[P:.+]]: tensor<3xi1>, %[[C:.+]]: tensor<i64>, %[[D:.+]]: tensor<i64>)
// CHECK-NOT: kiln.select
// CHECK: return %[[A]], %[[B]], %[[A]], %[[D]]
func.func @select_splat_predicate(%a: tensor<3xf32>, %b: tensor<3xf32>, %p: tensor<3xi1>, %c: tensor<i64>, %d: tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) {
  %t = kiln.constant dense<true> : tensor<3xi1>
  %f = kiln.constant dense<false> : tensor<3xi1>
  %0 = kiln.select %t, %a, %b : tensor<3xi1>, tensor<3xf32>
  %1 = kiln.select %f, %a, %b : tensor<3xi1>, tensor<3xf32>
  %2 = kiln.select %p, %a, %a : tensor<3xi1>, tensor<3xf32>
  %f0 = kiln.constant dense<false> : tensor<i1>
  %3 = kiln.select %f0, %c, %d : tensor<i1>, tensor<i64>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>
}

// -----

// A non-constant predicate keeps the select.
// CHECK-LABEL: func.func @no_fold_select
// CHECK-SAME: (%[[P:.+]]: tensor<3xi1>, %[[A:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<3xf32>)
// CHECK: %[[S:.+]] = kiln.select %[[P]], %[[A]], %[[B]] : tensor<3xi1>, tensor<3xf32>
// CHECK: return %[[S]]
func.func @no_fold_select(%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kiln.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Float to integer truncates toward zero; to i1 means x != 0 (true for NaN);
// from i1 gives 0 or 1; i64 to i32 wraps; f64 to f32 rounds to nearest.
// CHECK-LABEL: func.func @fold_cast
// CHECK-DAG: %[[TOI:.+]] = kiln.constant dense<[1, -2, 0]> : tensor<3xi32>
// CHECK-DAG: %[[TOB:.+]] = kiln.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[NANB:.+]] = kiln.constant dense<true> : tensor<i1>
// CHECK-DAG: %[[FROMB:.+]] = kiln.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[FROMBI:.+]] = kiln.constant dense<[1, 0]> : tensor<2xi64>
// CHECK-DAG: %[[TRUNC:.+]] = kiln.constant dense<[-1, 5]> : tensor<2xi32>
// CHECK-DAG: %[[WIDEN:.+]] = kiln.constant dense<[-1, 5]> : tensor<2xi64>
// CHECK-DAG: %[[TOF:.+]] = kiln.constant dense<[-1.000000e+00, 5.000000e+00]> : tensor<2xf16>
// CHECK-DAG: %[[NARROW:.+]] = kiln.constant dense<[1.000000e-01, 0x7F800000]> : tensor<2xf32>
// CHECK-DAG: %[[BF:.+]] = kiln.constant dense<1.000980e-01> : tensor<bf16>
// CHECK-NOT: kiln.cast
// CHECK: return %[[TOI]], %[[TOB]], %[[NANB]], %[[FROMB]], %[[FROMBI]], %[[TRUNC]], %[[WIDEN]], %[[TOF]], %[[NARROW]], %[[BF]]
func.func @fold_cast() -> (tensor<3xi32>, tensor<3xi1>, tensor<i1>, tensor<2xf32>, tensor<2xi64>, tensor<2xi32>, tensor<2xi64>, tensor<2xf16>, tensor<2xf32>, tensor<bf16>) {
  %f = kiln.constant dense<[1.9, -2.7, -0.0]> : tensor<3xf32>
  %0 = kiln.cast %f : tensor<3xf32> to tensor<3xi32>
  %1 = kiln.cast %f : tensor<3xf32> to tensor<3xi1>
  %nan = kiln.constant dense<0x7FC00000> : tensor<f32>
  %2 = kiln.cast %nan : tensor<f32> to tensor<i1>
  %b = kiln.constant dense<[true, false]> : tensor<2xi1>
  %3 = kiln.cast %b : tensor<2xi1> to tensor<2xf32>
  %4 = kiln.cast %b : tensor<2xi1> to tensor<2xi64>
  %big = kiln.constant dense<[4294967295, 5]> : tensor<2xi64>
  %5 = kiln.cast %big : tensor<2xi64> to tensor<2xi32>
  %6 = kiln.cast %5 : tensor<2xi32> to tensor<2xi64>
  %7 = kiln.cast %5 : tensor<2xi32> to tensor<2xf16>
  %d = kiln.constant dense<[0.1, 1.0e300]> : tensor<2xf64>
  %8 = kiln.cast %d : tensor<2xf64> to tensor<2xf32>
  %s = kiln.constant dense<0.1> : tensor<f32>
  %9 = kiln.cast %s : tensor<f32> to tensor<bf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<3xi32>, tensor<3xi1>, tensor<i1>, tensor<2xf32>, tensor<2xi64>, tensor<2xi32>, tensor<2xi64>, tensor<2xf16>, tensor<2xf32>, tensor<bf16>
}

// -----

// Float to i32/i64 saturates: values at or above 2^(w-1) (and +inf) give
// the largest integer, values below -2^(w-1) (and -inf) the smallest, NaN
// gives 0; in range, the value is truncated toward zero. f32 2147483520 is
// the largest f32 below 2^31; -2147483648 is exactly INT32_MIN; f64
// 2147483647.9 and -2147483648.9 truncate into range.
// CHECK-LABEL: func.func @fold_cast_saturates
// CHECK-DAG: %[[I32:.+]] = kiln.constant dense<[0, 0, 2147483647, -2147483648, 2147483647, -2147483648, 2147483520, -2147483648, 2147483647, -2]> : tensor<10xi32>
// CHECK-DAG: %[[F64:.+]] = kiln.constant dense<[2147483647, -2147483648, 2147483647, -2147483648]> : tensor<4xi32>
// CHECK-DAG: %[[I64:.+]] = kiln.constant dense<[0, 9223372036854775807, -9223372036854775808, 9223372036854775807, -9223372036854775808, 9223371487098961920]> : tensor<6xi64>
// CHECK-NOT: kiln.cast
// CHECK: return %[[I32]], %[[F64]], %[[I64]]
func.func @fold_cast_saturates() -> (tensor<10xi32>, tensor<4xi32>, tensor<6xi64>) {
  %f = kiln.constant dense<[0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 3.0e9, -3.0e9, 2147483520.0, -2147483648.0, 2147483648.0, -2.9]> : tensor<10xf32>
  %0 = kiln.cast %f : tensor<10xf32> to tensor<10xi32>
  %d = kiln.constant dense<[2147483647.9, -2147483648.9, 2147483648.0, -2147483649.0]> : tensor<4xf64>
  %1 = kiln.cast %d : tensor<4xf64> to tensor<4xi32>
  %g = kiln.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, 1.0e19, -1.0e19, 9223371487098961920.0]> : tensor<6xf32>
  %2 = kiln.cast %g : tensor<6xf32> to tensor<6xi64>
  return %0, %1, %2 : tensor<10xi32>, tensor<4xi32>, tensor<6xi64>
}

// -----

// CHECK-LABEL: func.func @cast_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<4xbf16>)
// CHECK-NOT: kiln.cast
// CHECK: return %[[X]]
func.func @cast_same_type(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = kiln.cast %x : tensor<4xbf16> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// Folding is limited to small results
//===----------------------------------------------------------------------===//

// A non-splat result with more than 1024 elements is not folded.
// CHECK-LABEL: func.func @no_fold_large_result
// CHECK: %[[P:.+]] = kiln.constant dense<"0x{{.+}}"> : tensor<1040xi1>
// CHECK: %[[C:.+]] = kiln.cast %[[P]] : tensor<1040xi1> to tensor<1040xi32>
// CHECK: return %[[C]]
func.func @no_fold_large_result() -> tensor<1040xi32> {
  %p = kiln.constant dense<"0x55555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555"> : tensor<1040xi1>
  %0 = kiln.cast %p : tensor<1040xi1> to tensor<1040xi32>
  return %0 : tensor<1040xi32>
}

// -----

// A transpose or reshape of a constant it is the only user of folds at any
// size: the source dies, so the IR grows by nothing (a model's weights
// rearranged once at compile time). Rows of 1s and 2s, transposed.
// CHECK-LABEL: func.func @fold_large_transpose_of_only_use
// CHECK: %[[C:.+]] = kiln.constant dense<"0x{{(0102)+}}"> : tensor<600x2xi8>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[C]]
func.func @fold_large_transpose_of_only_use() -> tensor<600x2xi8> {
  %w = kiln.constant dense<"0x010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202"> : tensor<2x600xi8>
  %t = kiln.transpose %w, permutation = [1, 0] : tensor<2x600xi8>
  return %t : tensor<600x2xi8>
}

// -----

// CHECK-LABEL: func.func @fold_large_reshape_of_only_use
// CHECK: %[[C:.+]] = kiln.constant dense<"0x{{(01)+(02)+}}"> : tensor<1200xi8>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[C]]
func.func @fold_large_reshape_of_only_use() -> tensor<1200xi8> {
  %w = kiln.constant dense<"0x010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202"> : tensor<2x600xi8>
  %r = kiln.reshape %w : (tensor<2x600xi8>) -> tensor<1200xi8>
  return %r : tensor<1200xi8>
}

// -----

// A narrowing cast of a constant it is the only user of folds at any size
// (a weight cast for a bf16 convolution): f32 halfway cases round to the
// even bf16 (1 + 2^-8 to 1, 1 + 3 * 2^-8 to 1 + 2^-6).
// CHECK-LABEL: func.func @fold_large_narrowing_cast_of_only_use
// CHECK: %[[C:.+]] = kiln.constant dense<"0x{{(803F)+(823F)+}}"> : tensor<1100xbf16>
// CHECK-NOT: kiln.cast
// CHECK: return %[[C]]
func.func @fold_large_narrowing_cast_of_only_use() -> tensor<1100xbf16> {
  %w = kiln.constant dense<"0x0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080803F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F0080813F"> : tensor<1100xf32>
  %c = kiln.cast %w : tensor<1100xf32> to tensor<1100xbf16>
  return %c : tensor<1100xbf16>
}

// -----

// With another user the constant stays, so the transpose does too.
// CHECK-LABEL: func.func @no_fold_large_transpose_of_shared
// CHECK: %[[W:.+]] = kiln.constant
// CHECK: %[[T:.+]] = kiln.transpose %[[W]]
// CHECK: return %[[T]], %[[W]]
func.func @no_fold_large_transpose_of_shared() -> (tensor<600x2xi8>, tensor<2x600xi8>) {
  %w = kiln.constant dense<"0x010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202"> : tensor<2x600xi8>
  %t = kiln.transpose %w, permutation = [1, 0] : tensor<2x600xi8>
  return %t, %w : tensor<600x2xi8>, tensor<2x600xi8>
}

// -----

// A 1024-element non-splat result still folds (to 1, 0, 1, 0, ...).
// CHECK-LABEL: func.func @fold_at_size_limit
// CHECK: %[[C:.+]] = kiln.constant dense<"0x{{(0100000000000000)+}}"> : tensor<1024xi32>
// CHECK-NOT: kiln.cast
// CHECK: return %[[C]]
func.func @fold_at_size_limit() -> tensor<1024xi32> {
  %p = kiln.constant dense<"0x5555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555"> : tensor<1024xi1>
  %0 = kiln.cast %p : tensor<1024xi1> to tensor<1024xi32>
  return %0 : tensor<1024xi32>
}

// -----

// Broadcasting a small non-splat constant to 2x600 elements is not folded;
// broadcasting a splat is, at any size.
// CHECK-LABEL: func.func @broadcast_constant_limit
// CHECK-DAG: %[[ROW:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[SPLAT:.+]] = kiln.constant dense<7.000000e+00> : tensor<600x2xf32>
// CHECK: %[[B:.+]] = kiln.broadcast_in_dim %[[ROW]], dims = [1] : (tensor<2xf32>) -> tensor<600x2xf32>
// CHECK: return %[[B]], %[[SPLAT]]
func.func @broadcast_constant_limit() -> (tensor<600x2xf32>, tensor<600x2xf32>) {
  %row = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.broadcast_in_dim %row, dims = [1] : (tensor<2xf32>) -> tensor<600x2xf32>
  %s = kiln.constant dense<7.0> : tensor<2xf32>
  %1 = kiln.broadcast_in_dim %s, dims = [1] : (tensor<2xf32>) -> tensor<600x2xf32>
  return %0, %1 : tensor<600x2xf32>, tensor<600x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Algebraic identities
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_zero_int
// CHECK-SAME: (%[[X:.+]]: tensor<4xi32>)
// CHECK-NOT: kiln.add
// CHECK: return %[[X]], %[[X]]
func.func @add_zero_int(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %zero = kiln.constant dense<0> : tensor<4xi32>
  %0 = kiln.add %x, %zero : tensor<4xi32>
  %1 = kiln.add %zero, %x : tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// x + -0.0 is x for every float x; x + +0.0 is not (-0.0 + +0.0 is +0.0), so
// it stays.
// CHECK-LABEL: func.func @add_zero_float
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[PZ:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[ADD:.+]] = kiln.add %[[X]], %[[PZ]] : tensor<4xf32>
// CHECK: return %[[X]], %[[X]], %[[ADD]]
func.func @add_zero_float(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %nz = kiln.constant dense<-0.0> : tensor<4xf32>
  %pz = kiln.constant dense<0.0> : tensor<4xf32>
  %0 = kiln.add %x, %nz : tensor<4xf32>
  %1 = kiln.add %nz, %x : tensor<4xf32>
  %2 = kiln.add %x, %pz : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// x - 0 is x (for floats with +0.0, exact for -0.0 too). x - x is 0 for
// integers only: inf - inf is NaN.
// CHECK-LABEL: func.func @sub_identities
// CHECK-SAME: (%[[X:.+]]: tensor<4xf16>, %[[I:.+]]: tensor<4xi64>)
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0> : tensor<4xi64>
// CHECK-DAG: %[[FSUB:.+]] = kiln.sub %[[X]], %[[X]] : tensor<4xf16>
// CHECK: return %[[X]], %[[I]], %[[ZERO]], %[[FSUB]]
func.func @sub_identities(%x: tensor<4xf16>, %i: tensor<4xi64>) -> (tensor<4xf16>, tensor<4xi64>, tensor<4xi64>, tensor<4xf16>) {
  %fz = kiln.constant dense<0.0> : tensor<4xf16>
  %iz = kiln.constant dense<0> : tensor<4xi64>
  %0 = kiln.sub %x, %fz : tensor<4xf16>
  %1 = kiln.sub %i, %iz : tensor<4xi64>
  %2 = kiln.sub %i, %i : tensor<4xi64>
  %3 = kiln.sub %x, %x : tensor<4xf16>
  return %0, %1, %2, %3 : tensor<4xf16>, tensor<4xi64>, tensor<4xi64>, tensor<4xf16>
}

// -----

// 0 - x is not x.
// CHECK-LABEL: func.func @no_fold_zero_minus_x
// CHECK-SAME: (%[[X:.+]]: tensor<4xi32>)
// CHECK: %[[Z:.+]] = kiln.constant dense<0> : tensor<4xi32>
// CHECK: %[[S:.+]] = kiln.sub %[[Z]], %[[X]] : tensor<4xi32>
// CHECK: return %[[S]]
func.func @no_fold_zero_minus_x(%x: tensor<4xi32>) -> tensor<4xi32> {
  %zero = kiln.constant dense<0> : tensor<4xi32>
  %0 = kiln.sub %zero, %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @mul_one
// CHECK-SAME: (%[[X:.+]]: tensor<2x2xbf16>, %[[I:.+]]: tensor<3xi32>)
// CHECK-NOT: kiln.mul
// CHECK: return %[[X]], %[[X]], %[[I]]
func.func @mul_one(%x: tensor<2x2xbf16>, %i: tensor<3xi32>) -> (tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<3xi32>) {
  %one = kiln.constant dense<1.0> : tensor<2x2xbf16>
  %ione = kiln.constant dense<1> : tensor<3xi32>
  %0 = kiln.mul %x, %one : tensor<2x2xbf16>
  %1 = kiln.mul %one, %x : tensor<2x2xbf16>
  %2 = kiln.mul %ione, %i : tensor<3xi32>
  return %0, %1, %2 : tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<3xi32>
}

// -----

// x * 0 is 0 for integers, but not for floats (NaN * 0 and inf * 0 are NaN).
// CHECK-LABEL: func.func @mul_zero
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>)
// CHECK-DAG: %[[IZ:.+]] = kiln.constant dense<0> : tensor<4xi32>
// CHECK-DAG: %[[FZ:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[X]], %[[FZ]] : tensor<4xf32>
// CHECK: return %[[M]], %[[IZ]], %[[IZ]]
func.func @mul_zero(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %fz = kiln.constant dense<0.0> : tensor<4xf32>
  %iz = kiln.constant dense<0> : tensor<4xi32>
  %0 = kiln.mul %x, %fz : tensor<4xf32>
  %1 = kiln.mul %i, %iz : tensor<4xi32>
  %2 = kiln.mul %iz, %i : tensor<4xi32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// x / 1 is x; 1 / x is not.
// CHECK-LABEL: func.func @div_one
// CHECK-SAME: (%[[X:.+]]: tensor<4xf64>, %[[I:.+]]: tensor<4xi64>)
// CHECK: %[[ONE:.+]] = kiln.constant dense<1.000000e+00> : tensor<4xf64>
// CHECK: %[[RECIP:.+]] = kiln.div %[[ONE]], %[[X]] : tensor<4xf64>
// CHECK: return %[[X]], %[[I]], %[[RECIP]]
func.func @div_one(%x: tensor<4xf64>, %i: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xi64>, tensor<4xf64>) {
  %one = kiln.constant dense<1.0> : tensor<4xf64>
  %ione = kiln.constant dense<1> : tensor<4xi64>
  %0 = kiln.div %x, %one : tensor<4xf64>
  %1 = kiln.div %i, %ione : tensor<4xi64>
  %2 = kiln.div %one, %x : tensor<4xf64>
  return %0, %1, %2 : tensor<4xf64>, tensor<4xi64>, tensor<4xf64>
}

// -----

// Identities need a splat of exactly the identity value.
// CHECK-LABEL: func.func @no_fold_non_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2xf32>)
// CHECK-DAG: %[[ALMOST:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[NEAR:.+]] = kiln.constant dense<1.00000012> : tensor<2xf32>
// CHECK: %[[M0:.+]] = kiln.mul %[[X]], %[[ALMOST]] : tensor<2xf32>
// CHECK: %[[M1:.+]] = kiln.mul %[[X]], %[[NEAR]] : tensor<2xf32>
// CHECK: return %[[M0]], %[[M1]]
func.func @no_fold_non_identity(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %almost = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %near = kiln.constant dense<1.00000012> : tensor<2xf32>
  %0 = kiln.mul %x, %almost : tensor<2xf32>
  %1 = kiln.mul %x, %near : tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @max_min_same_operand
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NOT: kiln.max
// CHECK-NOT: kiln.min
// CHECK: return %[[X]], %[[X]]
func.func @max_min_same_operand(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.max %x, %x : tensor<4xf32>
  %1 = kiln.min %x, %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow_one
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NOT: kiln.pow
// CHECK: return %[[X]]
func.func @pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %0 = kiln.pow %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>)
// CHECK-NOT: kiln.neg
// CHECK: return %[[X]], %[[I]]
func.func @neg_neg(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = kiln.neg %x : tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32>
  %2 = kiln.neg %i : tensor<4xi32>
  %3 = kiln.neg %2 : tensor<4xi32>
  return %1, %3 : tensor<4xf32>, tensor<4xi32>
}

// -----

// Three negations leave one.
// CHECK-LABEL: func.func @neg_neg_neg
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[N:.+]] = kiln.neg %[[X]] : tensor<4xf32>
// CHECK-NOT: kiln.neg
// CHECK: return %[[N]]
func.func @neg_neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.neg %x : tensor<4xf32>
  %1 = kiln.neg %0 : tensor<4xf32>
  %2 = kiln.neg %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// abs and relu are idempotent; abs(neg x) is abs x.
// CHECK-LABEL: func.func @idempotent
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi64>)
// CHECK: %[[ABS:.+]] = kiln.abs %[[X]] : tensor<4xf32>
// CHECK: %[[RELU:.+]] = kiln.relu %[[I]] : tensor<4xi64>
// CHECK: %[[ABSI:.+]] = kiln.abs %[[I]] : tensor<4xi64>
// CHECK-NOT: kiln.neg
// CHECK: return %[[ABS]], %[[RELU]], %[[ABSI]]
func.func @idempotent(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xi64>) {
  %0 = kiln.abs %x : tensor<4xf32>
  %1 = kiln.abs %0 : tensor<4xf32>
  %2 = kiln.relu %i : tensor<4xi64>
  %3 = kiln.relu %2 : tensor<4xi64>
  %4 = kiln.neg %i : tensor<4xi64>
  %5 = kiln.abs %4 : tensor<4xi64>
  return %1, %3, %5 : tensor<4xf32>, tensor<4xi64>, tensor<4xi64>
}

// -----

// relu(neg x) and neg(abs x) are not simplified.
// CHECK-LABEL: func.func @no_fold_mixed_unary
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[N:.+]] = kiln.neg %[[X]] : tensor<4xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[N]] : tensor<4xf32>
// CHECK: %[[A:.+]] = kiln.abs %[[X]] : tensor<4xf32>
// CHECK: %[[NA:.+]] = kiln.neg %[[A]] : tensor<4xf32>
// CHECK: return %[[R]], %[[NA]]
func.func @no_fold_mixed_unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.neg %x : tensor<4xf32>
  %1 = kiln.relu %0 : tensor<4xf32>
  %2 = kiln.abs %x : tensor<4xf32>
  %3 = kiln.neg %2 : tensor<4xf32>
  return %1, %3 : tensor<4xf32>, tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.reshape
// CHECK: return %[[X]]
func.func @reshape_same_type(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.+]] = kiln.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[R]], %[[X]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  %0 = kiln.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = kiln.reshape %0 : (tensor<24xf32>) -> tensor<4x6xf32>
  %2 = kiln.reshape %1 : (tensor<4x6xf32>) -> tensor<2x3x4xf32>
  return %1, %2 : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<1.500000e+00> : tensor<1x1xf32>
// CHECK-NOT: kiln.reshape
// CHECK: return %[[R]], %[[S]]
func.func @reshape_constant() -> (tensor<3x2xi32>, tensor<1x1xf32>) {
  %c = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %0 = kiln.reshape %c : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %s = kiln.constant dense<1.5> : tensor<f32>
  %1 = kiln.reshape %s : (tensor<f32>) -> tensor<1x1xf32>
  return %0, %1 : tensor<3x2xi32>, tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.transpose %x, permutation = [0, 1] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Two transposes compose into one: result dim i is x's dim inner[outer[i]].
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.+]] = kiln.transpose %[[X]], permutation = [2, 0, 1] : tensor<2x3x4xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xf32>
  %1 = kiln.transpose %0, permutation = [1, 2, 0] : tensor<3x4x2xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xf32>
  %1 = kiln.transpose %0, permutation = [2, 0, 1] : tensor<3x4x2xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_constant
// CHECK-DAG: %[[T:.+]] = kiln.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<{{\[}}[true, false], [false, false], [true, true]]> : tensor<3x2xi1>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<2.000000e+00> : tensor<4x3xf16>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]], %[[B]], %[[S]]
func.func @transpose_constant() -> (tensor<3x2xi64>, tensor<3x2xi1>, tensor<4x3xf16>) {
  %c = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = kiln.transpose %c, permutation = [1, 0] : tensor<2x3xi64>
  %b = kiln.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  %1 = kiln.transpose %b, permutation = [1, 0] : tensor<2x3xi1>
  %s = kiln.constant dense<2.0> : tensor<3x4xf16>
  %2 = kiln.transpose %s, permutation = [1, 0] : tensor<3x4xf16>
  return %0, %1, %2 : tensor<3x2xi64>, tensor<3x2xi1>, tensor<4x3xf16>
}

// -----

// CHECK-LABEL: func.func @broadcast_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xi1>)
// CHECK-NOT: kiln.broadcast_in_dim
// CHECK: return %[[X]]
func.func @broadcast_same_type(%x: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %0 = kiln.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// A size-1 dimension broadcast to itself is still a real broadcast elsewhere.
// CHECK-LABEL: func.func @no_fold_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<1x3xf32>)
// CHECK: %[[B:.+]] = kiln.broadcast_in_dim %[[X]], dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[B]]
func.func @no_fold_broadcast(%x: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.broadcast_in_dim %x, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// broadcast(broadcast x) composes the dims: x's dim i lands in outer[inner[i]].
// CHECK-LABEL: func.func @broadcast_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
// CHECK: %[[B:.+]] = kiln.broadcast_in_dim %[[X]], dims = [2] : (tensor<3xf32>) -> tensor<5x2x3xf32>
// CHECK-NOT: kiln.broadcast_in_dim
// CHECK: return %[[B]]
func.func @broadcast_broadcast(%x: tensor<3xf32>) -> tensor<5x2x3xf32> {
  %0 = kiln.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.broadcast_in_dim %0, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
  return %1 : tensor<5x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_constant
// CHECK-DAG: %[[B:.+]] = kiln.constant dense<{{\[}}[1, 1, 1], [2, 2, 2]]> : tensor<2x3xi32>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<-1.000000e+00> : tensor<4x4xbf16>
// CHECK-NOT: kiln.broadcast_in_dim
// CHECK: return %[[B]], %[[S]]
func.func @broadcast_constant() -> (tensor<2x3xi32>, tensor<4x4xbf16>) {
  %c = kiln.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %0 = kiln.broadcast_in_dim %c, dims = [0, 1] : (tensor<2x1xi32>) -> tensor<2x3xi32>
  %s = kiln.constant dense<-1.0> : tensor<bf16>
  %1 = kiln.broadcast_in_dim %s, dims = [] : (tensor<bf16>) -> tensor<4x4xbf16>
  return %0, %1 : tensor<2x3xi32>, tensor<4x4xbf16>
}

// -----

// A slice from 0 to the end with stride 1 is the whole tensor; so is a slice
// of a size-1 dimension with any stride.
// CHECK-LABEL: func.func @slice_whole
// CHECK-SAME: (%[[X:.+]]: tensor<4x1xf32>)
// CHECK-NOT: kiln.slice
// CHECK: return %[[X]], %[[X]]
func.func @slice_whole(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = kiln.slice %x, start = [0, 0], limit = [4, 1], stride = [1, 1] : tensor<4x1xf32>
  %1 = kiln.slice %x, start = [0, 0], limit = [4, 1], stride = [1, 3] : tensor<4x1xf32>
  return %0, %1 : tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_slice
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[S0:.+]] = kiln.slice %[[X]], start = [1], limit = [4], stride = [1] : tensor<4xf32>
// CHECK: %[[S1:.+]] = kiln.slice %[[X]], start = [0], limit = [4], stride = [2] : tensor<4xf32>
// CHECK: return %[[S0]], %[[S1]]
func.func @no_fold_slice(%x: tensor<4xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  %0 = kiln.slice %x, start = [1], limit = [4], stride = [1] : tensor<4xf32>
  %1 = kiln.slice %x, start = [0], limit = [4], stride = [2] : tensor<4xf32>
  return %0, %1 : tensor<3xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @slice_constant
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<{{\[}}[2, 4], [10, 12]]> : tensor<2x2xi32>
// CHECK-DAG: %[[SPLAT:.+]] = kiln.constant dense<3.000000e+00> : tensor<2xf64>
// CHECK-DAG: %[[EMPTY:.+]] = kiln.constant dense<> : tensor<0xi32>
// CHECK-NOT: kiln.slice
// CHECK: return %[[S]], %[[SPLAT]], %[[EMPTY]]
func.func @slice_constant() -> (tensor<2x2xi32>, tensor<2xf64>, tensor<0xi32>) {
  %c = kiln.constant dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]> : tensor<3x4xi32>
  %0 = kiln.slice %c, start = [0, 1], limit = [3, 4], stride = [2, 2] : tensor<3x4xi32>
  %s = kiln.constant dense<3.0> : tensor<8xf64>
  %1 = kiln.slice %s, start = [2], limit = [6], stride = [3] : tensor<8xf64>
  %e = kiln.constant dense<[1, 2]> : tensor<2xi32>
  %2 = kiln.slice %e, start = [1], limit = [1], stride = [1] : tensor<2xi32>
  return %0, %1, %2 : tensor<2x2xi32>, tensor<2xf64>, tensor<0xi32>
}

// -----

// CHECK-LABEL: func.func @concat_single_input
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: kiln.concat
// CHECK: return %[[X]]
func.func @concat_single_input(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.concat %x dim = 1 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_concat
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[C:.+]] = kiln.concat %[[X]], %[[X]] dim = 1 : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: return %[[C]]
func.func @no_fold_concat(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = kiln.concat %x, %x dim = 1 : tensor<2x3xf32>, tensor<2x3xf32>
  return %0 : tensor<2x6xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_no_dims
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[I:.+]]: tensor<4xi32>)
// CHECK-NOT: kiln.reduce
// CHECK: return %[[X]], %[[I]], %[[X]]
func.func @reduce_no_dims(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>, tensor<2x3xf32>) {
  %0 = kiln.reduce_sum %x, dims = [] : tensor<2x3xf32>
  %1 = kiln.reduce_max %i, dims = [] : tensor<4xi32>
  %2 = kiln.reduce_mean %x, dims = [] : tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<4xi32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_reduce
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[R:.+]] = kiln.reduce_sum %[[X]], dims = [1] : tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @no_fold_reduce(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = kiln.reduce_sum %x, dims = [1] : tensor<2x3xf32>
  return %0 : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Interplay with control flow and CSE
//===----------------------------------------------------------------------===//

// Folds apply inside kiln.cond/while/for regions, and constants are
// materialized as kiln.constant inside the (isolated) region.
// CHECK-LABEL: func.func @fold_in_region
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: kiln.for 3 iterations(%[[X]]) : (tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<i64>, %[[ACC:.+]]: tensor<4xf32>):
// CHECK-NEXT:   %[[C:.+]] = kiln.constant dense<6.000000e+00> : tensor<4xf32>
// CHECK-NEXT:   %[[SUM:.+]] = kiln.add %[[ACC]], %[[C]] : tensor<4xf32>
// CHECK-NEXT:   kiln.yield %[[SUM]] : tensor<4xf32>
// CHECK-NEXT: }
func.func @fold_in_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.for 3 iterations(%x) : (tensor<4xf32>) {
  ^bb0(%iv: tensor<i64>, %acc: tensor<4xf32>):
    %a = kiln.constant dense<2.0> : tensor<4xf32>
    %b = kiln.constant dense<3.0> : tensor<4xf32>
    %one = kiln.constant dense<1.0> : tensor<4xf32>
    %p = kiln.mul %a, %b : tensor<4xf32>
    %q = kiln.mul %p, %one : tensor<4xf32>
    %s = kiln.add %acc, %q : tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Once x * 1 folds, the two exps compute the same value; --cse keeps one.
// CHECK-LABEL: func.func @cse_after_fold
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[E0:.+]] = kiln.exp %[[X]] : tensor<4xf32>
// CHECK: %[[E1:.+]] = kiln.exp %[[X]] : tensor<4xf32>
// CHECK: kiln.add %[[E0]], %[[E1]] : tensor<4xf32>
// CSE-LABEL: func.func @cse_after_fold
// CSE-SAME: (%[[X:.+]]: tensor<4xf32>)
// CSE: %[[E:.+]] = kiln.exp %[[X]] : tensor<4xf32>
// CSE-NOT: kiln.exp
// CSE: kiln.add %[[E]], %[[E]] : tensor<4xf32>
func.func @cse_after_fold(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %m = kiln.mul %x, %one : tensor<4xf32>
  %0 = kiln.exp %m : tensor<4xf32>
  %1 = kiln.exp %x : tensor<4xf32>
  %2 = kiln.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Rounding, sign, math functions, rem and the bitwise ops
//===----------------------------------------------------------------------===//

// floor/ceil/round fold exactly, keeping the sign of zero; round goes to
// the even neighbour. sign keeps zeros and NaN and gives -1 for -inf.
// CHECK-LABEL: func.func @fold_rounding_f32
// CHECK-DAG: %[[F:.+]] = kiln.constant dense<[-3.000000e+00, -1.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00, -1.000000e+00]> : tensor<6xf32>
// CHECK-DAG: %[[C:.+]] = kiln.constant dense<[-2.000000e+00, -0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, -0.000000e+00]> : tensor<6xf32>
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<[-2.000000e+00, -0.000000e+00, 0.000000e+00, 2.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<6xf32>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<[-1.000000e+00, -0.000000e+00, 0.000000e+00, 1.000000e+00, 0x7FC00000, -1.000000e+00]> : tensor<6xf32>
// CHECK: return %[[F]], %[[C]], %[[R]], %[[S]]
func.func @fold_rounding_f32() -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %x = kiln.constant dense<[-2.5, -0.5, 0.5, 1.5, 2.5, -0.4]> : tensor<6xf32>
  %s = kiln.constant dense<[-3.0, -0.0, 0.0, 2.0, 0x7FC00000, 0xFF800000]> : tensor<6xf32>
  %f = kiln.floor %x : tensor<6xf32>
  %c = kiln.ceil %x : tensor<6xf32>
  %r = kiln.round %x : tensor<6xf32>
  %g = kiln.sign %s : tensor<6xf32>
  return %f, %c, %r, %g : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----

// The transcendentals fold through C's functions in double (values as
// Python's math module gives them); atanh(1) is +inf.
// CHECK-LABEL: func.func @fold_functions_f64
// CHECK-DAG: %[[ERF:.+]] = kiln.constant dense<[0.52049987781304652, -0.2763263901682369, 0.000000e+00, 0.84270079294971489]>
// CHECK-DAG: %[[TAN:.+]] = kiln.constant dense<[0.54630248984379048, -0.25534192122103627, 0.000000e+00, 1.5574077246549023]>
// CHECK-DAG: %[[ASIN:.+]] = kiln.constant dense<[0.52359877559829893, -0.25268025514207865, 0.000000e+00, 1.5707963267948966]>
// CHECK-DAG: %[[ACOS:.+]] = kiln.constant dense<[1.0471975511965979, 1.8234765819369754, 1.5707963267948966, 0.000000e+00]>
// CHECK-DAG: %[[ATAN:.+]] = kiln.constant dense<[0.46364760900080609, -0.24497866312686414, 0.000000e+00, 0.78539816339744828]>
// CHECK-DAG: %[[SINH:.+]] = kiln.constant dense<[0.52109530549374738, -0.25261231680816831, 0.000000e+00, 1.1752011936438014]>
// CHECK-DAG: %[[COSH:.+]] = kiln.constant dense<[1.1276259652063807, 1.0314130998795732, 1.000000e+00, 1.5430806348152437]>
// CHECK-DAG: %[[ASINH:.+]] = kiln.constant dense<[0.48121182505960347, -0.24746646154726346, 0.000000e+00, 0.88137358701954305]>
// CHECK-DAG: %[[ACOSH:.+]] = kiln.constant dense<[0.96242365011920694, 1.3169578969248166, 0.000000e+00, 2.0634370688955608]>
// CHECK-DAG: %[[ATANH:.+]] = kiln.constant dense<[0.54930614433405478, -0.25541281188299536, 0.000000e+00, 0x7FF0000000000000]>
// CHECK: return %[[ERF]], %[[TAN]], %[[ASIN]], %[[ACOS]], %[[ATAN]], %[[SINH]], %[[COSH]], %[[ASINH]], %[[ACOSH]], %[[ATANH]]
func.func @fold_functions_f64() -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %x = kiln.constant dense<[0.5, -0.25, 0.0, 1.0]> : tensor<4xf64>
  %y = kiln.constant dense<[1.5, 2.0, 1.0, 4.0]> : tensor<4xf64>
  %0 = kiln.erf %x : tensor<4xf64>
  %1 = kiln.tan %x : tensor<4xf64>
  %2 = kiln.asin %x : tensor<4xf64>
  %3 = kiln.acos %x : tensor<4xf64>
  %4 = kiln.atan %x : tensor<4xf64>
  %5 = kiln.sinh %x : tensor<4xf64>
  %6 = kiln.cosh %x : tensor<4xf64>
  %7 = kiln.asinh %x : tensor<4xf64>
  %8 = kiln.acosh %y : tensor<4xf64>
  %9 = kiln.atanh %x : tensor<4xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// -----

// rem: the dividend's sign; rem(x, 0) is x and INT_MIN rem -1 is 0 for
// integers, fmod for floats (rem(x, 0) is NaN, rem(x, inf) is x).
// CHECK-LABEL: func.func @fold_rem_and_bitwise
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<[1, -1, 1, -1, 5, 0]> : tensor<6xi32>
// CHECK-DAG: %[[FR:.+]] = kiln.constant dense<[1.500000e+00, -1.500000e+00, 0x7FC00000, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[SI:.+]] = kiln.constant dense<[-1, 0, 1]> : tensor<3xi32>
// CHECK-DAG: %[[NP:.+]] = kiln.constant dense<[false, false, true, true]> : tensor<4xi1>
// CHECK-DAG: %[[AND:.+]] = kiln.constant dense<[true, false, false, false]> : tensor<4xi1>
// CHECK-DAG: %[[OR:.+]] = kiln.constant dense<[true, true, true, false]> : tensor<4xi1>
// CHECK-DAG: %[[XOR:.+]] = kiln.constant dense<[false, true, true, false]> : tensor<4xi1>
// CHECK-DAG: %[[NU:.+]] = kiln.constant dense<[-13, 0, -1]> : tensor<3xi64>
// CHECK-DAG: %[[ANDI:.+]] = kiln.constant dense<[8, 5, 0]> : tensor<3xi64>
// CHECK-DAG: %[[ORI:.+]] = kiln.constant dense<[14, -1, -1]> : tensor<3xi64>
// CHECK-DAG: %[[XORI:.+]] = kiln.constant dense<[6, -6, -1]> : tensor<3xi64>
// CHECK: return %[[R]], %[[FR]], %[[SI]], %[[NP]], %[[AND]], %[[OR]], %[[XOR]], %[[NU]], %[[ANDI]], %[[ORI]], %[[XORI]]
func.func @fold_rem_and_bitwise() -> (tensor<6xi32>, tensor<4xf32>, tensor<3xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) {
  %a = kiln.constant dense<[7, -7, 7, -7, 5, -2147483648]> : tensor<6xi32>
  %b = kiln.constant dense<[3, 3, -3, -3, 0, -1]> : tensor<6xi32>
  %r = kiln.rem %a, %b : tensor<6xi32>
  %fa = kiln.constant dense<[5.5, -5.5, 1.0, 3.0]> : tensor<4xf32>
  %fb = kiln.constant dense<[2.0, 2.0, 0.0, 0x7F800000]> : tensor<4xf32>
  %fr = kiln.rem %fa, %fb : tensor<4xf32>
  %i = kiln.constant dense<[-5, 0, 7]> : tensor<3xi32>
  %si = kiln.sign %i : tensor<3xi32>
  %p = kiln.constant dense<[true, true, false, false]> : tensor<4xi1>
  %q = kiln.constant dense<[true, false, true, false]> : tensor<4xi1>
  %np = kiln.not %p : tensor<4xi1>
  %and = kiln.and %p, %q : tensor<4xi1>
  %or = kiln.or %p, %q : tensor<4xi1>
  %xor = kiln.xor %p, %q : tensor<4xi1>
  %u = kiln.constant dense<[12, -1, 0]> : tensor<3xi64>
  %v = kiln.constant dense<[10, 5, -1]> : tensor<3xi64>
  %nu = kiln.not %u : tensor<3xi64>
  %andi = kiln.and %u, %v : tensor<3xi64>
  %ori = kiln.or %u, %v : tensor<3xi64>
  %xori = kiln.xor %u, %v : tensor<3xi64>
  return %r, %fr, %si, %np, %and, %or, %xor, %nu, %andi, %ori, %xori : tensor<6xi32>, tensor<4xf32>, tensor<3xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
}

// -----

// Idempotent ops fold when applied twice; x and x, x or x are x; x xor x is
// zero; not(not x) is x.
// CHECK-LABEL: func.func @fold_idempotent
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>, %[[I:.+]]: tensor<3xi32>)
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0> : tensor<3xi32>
// CHECK-DAG: %[[FL:.+]] = kiln.floor %[[X]]
// CHECK-DAG: %[[CE:.+]] = kiln.ceil %[[X]]
// CHECK-DAG: %[[RO:.+]] = kiln.round %[[X]]
// CHECK-DAG: %[[SG:.+]] = kiln.sign %[[X]]
// CHECK-NOT: kiln.floor
// CHECK-NOT: kiln.not
// CHECK-NOT: kiln.and
// CHECK-NOT: kiln.or
// CHECK-NOT: kiln.xor
// CHECK: return %[[FL]], %[[CE]], %[[RO]], %[[SG]], %[[I]], %[[I]], %[[I]], %[[ZERO]]
func.func @fold_idempotent(%x: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %f = kiln.floor %x : tensor<3xf32>
  %ff = kiln.floor %f : tensor<3xf32>
  %c = kiln.ceil %x : tensor<3xf32>
  %cc = kiln.ceil %c : tensor<3xf32>
  %r = kiln.round %x : tensor<3xf32>
  %rr = kiln.round %r : tensor<3xf32>
  %s = kiln.sign %x : tensor<3xf32>
  %ss = kiln.sign %s : tensor<3xf32>
  %n = kiln.not %i : tensor<3xi32>
  %nn = kiln.not %n : tensor<3xi32>
  %a = kiln.and %i, %i : tensor<3xi32>
  %o = kiln.or %i, %i : tensor<3xi32>
  %e = kiln.xor %i, %i : tensor<3xi32>
  return %ff, %cc, %rr, %ss, %nn, %a, %o, %e : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

// -----

// and / or with a splat constant on either side: false (0) and anything is
// false, true (all ones) or anything is true, and the identities give the
// other operand. A reduction whose only use is anded with false dies here,
// before fusion (kiln-program-fuzz seed 11242).
// CHECK-LABEL: func.func @fold_and_or_splat
// CHECK-SAME: (%[[P:.+]]: tensor<4xi1>, %[[I:.+]]: tensor<3xi32>)
// CHECK-DAG: %[[F:.+]] = kiln.constant dense<false> : tensor<4xi1>
// CHECK-DAG: %[[T:.+]] = kiln.constant dense<true> : tensor<4xi1>
// CHECK-DAG: %[[Z:.+]] = kiln.constant dense<0> : tensor<3xi32>
// CHECK-DAG: %[[ONES:.+]] = kiln.constant dense<-1> : tensor<3xi32>
// CHECK-DAG: %[[SEVEN:.+]] = kiln.constant dense<7> : tensor<3xi32>
// CHECK-DAG: %[[A7:.+]] = kiln.and %[[I]], %[[SEVEN]] : tensor<3xi32>
// CHECK-DAG: %[[O7:.+]] = kiln.or %[[I]], %[[SEVEN]] : tensor<3xi32>
// CHECK: return %[[F]], %[[F]], %[[P]], %[[T]], %[[T]], %[[P]], %[[Z]], %[[I]], %[[ONES]], %[[I]], %[[A7]], %[[O7]]
func.func @fold_and_or_splat(%p: tensor<4xi1>, %i: tensor<3xi32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %f = kiln.constant dense<false> : tensor<4xi1>
  %t = kiln.constant dense<true> : tensor<4xi1>
  %z = kiln.constant dense<0> : tensor<3xi32>
  %ones = kiln.constant dense<-1> : tensor<3xi32>
  %seven = kiln.constant dense<7> : tensor<3xi32>
  %0 = kiln.and %p, %f : tensor<4xi1>
  %1 = kiln.and %f, %p : tensor<4xi1>
  %2 = kiln.and %t, %p : tensor<4xi1>
  %3 = kiln.or %p, %t : tensor<4xi1>
  %4 = kiln.or %t, %p : tensor<4xi1>
  %5 = kiln.or %f, %p : tensor<4xi1>
  %6 = kiln.and %z, %i : tensor<3xi32>
  %7 = kiln.and %i, %ones : tensor<3xi32>
  %8 = kiln.or %i, %ones : tensor<3xi32>
  %9 = kiln.or %z, %i : tensor<3xi32>
  %10 = kiln.and %i, %seven : tensor<3xi32>
  %11 = kiln.or %seven, %i : tensor<3xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

// -----

// kiln.reverse of a constant folds; reversing only dims of size 1 is the
// operand itself.
// CHECK-LABEL: func.func @fold_reverse
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<{{\[}}[3, 2, 1], [6, 5, 4]]> : tensor<2x3xi32>
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<{{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK: return %[[R]], %[[S]], %arg0
func.func @fold_reverse(%x: tensor<1x4xf32>) -> (tensor<2x3xi32>, tensor<2x3xf32>, tensor<1x4xf32>) {
  %c = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %r = kiln.reverse %c, dims = [1] : tensor<2x3xi32>
  %f = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = kiln.reverse %f, dims = [0] : tensor<2x3xf32>
  %t = kiln.reverse %x, dims = [0] : tensor<1x4xf32>
  return %r, %s, %t : tensor<2x3xi32>, tensor<2x3xf32>, tensor<1x4xf32>
}

// -----

// numpy's keepdims: a reduced value reshaped to a unit dimension, computed
// on, then broadcast. The reshape sinks below the elementwise ops (the splat
// constant is rebuilt in the reduced shape) and the broadcast absorbs it.
// CHECK-LABEL: func.func @keepdims_chain
// CHECK-DAG: %[[EPS:.+]] = kiln.constant dense<9.99999974E-6> : tensor<8xf32>
// CHECK-DAG: %[[MEAN:.+]] = kiln.reduce_mean %arg0, dims = [1] : tensor<8x16xf32>
// CHECK: %[[ADD:.+]] = kiln.add %[[MEAN]], %[[EPS]] : tensor<8xf32>
// CHECK: %[[SQRT:.+]] = kiln.sqrt %[[ADD]] : tensor<8xf32>
// CHECK: %[[B:.+]] = kiln.broadcast_in_dim %[[SQRT]], dims = [0] : (tensor<8xf32>) -> tensor<8x16xf32>
// CHECK-NOT: kiln.reshape
// CHECK: kiln.div %arg0, %[[B]]
func.func @keepdims_chain(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = kiln.reduce_mean %arg0, dims = [1] : tensor<8x16xf32>
  %1 = kiln.reshape %0 : (tensor<8xf32>) -> tensor<8x1xf32>
  %2 = kiln.constant dense<9.99999974E-6> : tensor<8x1xf32>
  %3 = kiln.add %1, %2 : tensor<8x1xf32>
  %4 = kiln.sqrt %3 : tensor<8x1xf32>
  %5 = kiln.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x16xf32>
  %6 = kiln.div %arg0, %5 : tensor<8x16xf32>
  return %6 : tensor<8x16xf32>
}

// -----

// Two unit reshapes of the same shape meet in one op, which then runs on
// the unreshaped values; a reshape with another user stays where it is.
// CHECK-LABEL: func.func @two_reshapes_meet
// CHECK: %[[MUL:.+]] = kiln.mul %arg0, %arg1 : tensor<4x3xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[MUL]] : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
// CHECK: return %[[R]]
func.func @two_reshapes_meet(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x1x3xf32> {
  %0 = kiln.reshape %a : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
  %1 = kiln.reshape %b : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
  %2 = kiln.mul %0, %1 : tensor<4x1x3xf32>
  return %2 : tensor<4x1x3xf32>
}

// CHECK-LABEL: func.func @shared_reshape_stays
// CHECK: %[[R:.+]] = kiln.reshape %arg0 : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK: %[[E:.+]] = kiln.exp %[[R]] : tensor<4x1xf32>
// CHECK: return %[[R]], %[[E]]
func.func @shared_reshape_stays(%a: tensor<4xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = kiln.reshape %a : (tensor<4xf32>) -> tensor<4x1xf32>
  %1 = kiln.exp %0 : tensor<4x1xf32>
  return %0, %1 : tensor<4x1xf32>, tensor<4x1xf32>
}

// A reshape that moves elements across dimensions is not a unit reshape:
// nothing sinks and the broadcast keeps its operand.
// CHECK-LABEL: func.func @real_reshape_stays
// CHECK: %[[R:.+]] = kiln.reshape %arg0 : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK: %[[N:.+]] = kiln.neg %[[R]]
// CHECK: kiln.broadcast_in_dim %[[N]], dims = [1, 2]
func.func @real_reshape_stays(%a: tensor<6xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.reshape %a : (tensor<6xf32>) -> tensor<2x3xf32>
  %1 = kiln.neg %0 : tensor<2x3xf32>
  %2 = kiln.broadcast_in_dim %1, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  return %2 : tensor<4x2x3xf32>
}

// -----

// broadcast(reshape(x)) for a unit reshape broadcasts x: its dimensions go
// where their images went, also when x has unit dimensions of its own; a
// unit dimension of x that the reshape drops keeps the reshape.
// CHECK-LABEL: func.func @broadcast_of_unit_reshape
// CHECK: kiln.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<5x1xf32>) -> tensor<5x4x6xf32>
// CHECK: %[[R:.+]] = kiln.reshape %arg1 : (tensor<1x5xf32>) -> tensor<5xf32>
// CHECK: kiln.broadcast_in_dim %[[R]], dims = [0] : (tensor<5xf32>) -> tensor<5x3xf32>
func.func @broadcast_of_unit_reshape(%x: tensor<5x1xf32>, %y: tensor<1x5xf32>) -> (tensor<5x4x6xf32>, tensor<5x3xf32>) {
  %0 = kiln.reshape %x : (tensor<5x1xf32>) -> tensor<5x1x1xf32>
  %1 = kiln.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<5x1x1xf32>) -> tensor<5x4x6xf32>
  %2 = kiln.reshape %y : (tensor<1x5xf32>) -> tensor<5xf32>
  %3 = kiln.broadcast_in_dim %2, dims = [0] : (tensor<5xf32>) -> tensor<5x3xf32>
  return %1, %3 : tensor<5x4x6xf32>, tensor<5x3xf32>
}

// -----

// A carried value the body yields unchanged and that starts as a constant
// is that constant inside the loop (a copy in the isolated body, which a
// narrowing cast then folds into: a weight autocast narrows inside an RNN's
// loop is not cast every step) and after it. A carried value the body
// changes stays carried.
// CHECK-LABEL: func.func @constant_carried_for(
// CHECK-SAME:      %[[X:.+]]: tensor<1x2xf32>)
// CHECK:         %[[W:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK:         %[[R:.+]]:2 = kiln.for 3 iterations(%[[X]], %[[W]])
// CHECK-NEXT:    ^bb0(%{{.+}}: tensor<i64>, %[[H:.+]]: tensor<1x2xf32>, %[[V:.+]]: tensor<2x2xf32>):
// CHECK-NEXT:      %[[N:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xbf16>
// CHECK-NEXT:      %[[HB:.+]] = kiln.cast %[[H]]
// CHECK-NEXT:      %[[P:.+]] = kiln.matmul %[[HB]], %[[N]]
// CHECK-NEXT:      kiln.yield %[[P]], %[[V]]
// CHECK:         return %[[R]]#0, %[[W]]
func.func @constant_carried_for(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<2x2xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r:2 = kiln.for 3 iterations (%x, %w) : (tensor<1x2xf32>, tensor<2x2xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<1x2xf32>, %v: tensor<2x2xf32>):
    %hb = kiln.cast %h : tensor<1x2xf32> to tensor<1x2xbf16>
    %vb = kiln.cast %v : tensor<2x2xf32> to tensor<2x2xbf16>
    %p = kiln.matmul %hb, %vb : tensor<1x2xbf16>, tensor<2x2xbf16> -> f32
    kiln.yield %p, %v : tensor<1x2xf32>, tensor<2x2xf32>
  }
  return %r#0, %r#1 : tensor<1x2xf32>, tensor<2x2xf32>
}

// -----

// The same in a kiln.while: the cond region reads the constant too.
// CHECK-LABEL: func.func @constant_carried_while(
// CHECK:         kiln.while
// CHECK-NEXT:    ^bb0(%{{.+}}: tensor<f32>, %{{.+}}: tensor<f32>):
// CHECK-NEXT:      %[[LIMIT:.+]] = kiln.constant dense<1.000000e+01> : tensor<f32>
// CHECK-NEXT:      kiln.compare lt, %{{.+}}, %[[LIMIT]]
// CHECK:         } do {
// CHECK-NEXT:    ^bb0(%{{.+}}: tensor<f32>, %[[S:.+]]: tensor<f32>):
// CHECK-NEXT:      %[[STEP:.+]] = kiln.constant dense<1.000000e+01> : tensor<f32>
// CHECK:           kiln.yield %{{.+}}, %[[S]]
func.func @constant_carried_while(%x: tensor<f32>) -> tensor<f32> {
  %ten = kiln.constant dense<10.0> : tensor<f32>
  %r:2 = kiln.while (%x, %ten) : (tensor<f32>, tensor<f32>) cond {
  ^bb0(%v: tensor<f32>, %limit: tensor<f32>):
    %c = kiln.compare lt, %v, %limit : tensor<f32>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%v: tensor<f32>, %step: tensor<f32>):
    %n = kiln.add %v, %step : tensor<f32>
    kiln.yield %n, %step : tensor<f32>, tensor<f32>
  }
  return %r#0 : tensor<f32>
}

// -----

// A gather of a dequantized table picks the table's bytes, and only the
// picked rows are dequantized (the splats rebuilt in the gathered shape).
// CHECK-LABEL: func.func @gather_dequantized(
// CHECK-DAG:     %[[Z:.*]] = kiln.constant dense<3.000000e+00> : tensor<4x8xf32>
// CHECK-DAG:     %[[H:.*]] = kiln.constant dense<5.000000e-01> : tensor<4x8xf32>
// CHECK:         %[[G:.*]] = kiln.gather %arg0, %arg1 : tensor<100x8xui8>, tensor<4xi64>
// CHECK:         %[[C:.*]] = kiln.cast %[[G]] : tensor<4x8xui8> to tensor<4x8xf32>
// CHECK:         %[[S:.*]] = kiln.sub %[[C]], %[[Z]] : tensor<4x8xf32>
// CHECK:         %[[M:.*]] = kiln.mul %[[S]], %[[H]] : tensor<4x8xf32>
// CHECK:         return %[[M]]
func.func @gather_dequantized(%t: tensor<100x8xui8>, %i: tensor<4xi64>) -> tensor<4x8xf32> {
  %z = kiln.constant dense<3.0> : tensor<100x8xf32>
  %s = kiln.constant dense<0.5> : tensor<100x8xf32>
  %c = kiln.cast %t : tensor<100x8xui8> to tensor<100x8xf32>
  %d = kiln.sub %c, %z : tensor<100x8xf32>
  %m = kiln.mul %d, %s : tensor<100x8xf32>
  %g = kiln.gather %m, %i : tensor<100x8xf32>, tensor<4xi64>
  return %g : tensor<4x8xf32>
}

// -----

// Stay: more rows gathered than the table has (the op would run on more
// values), and an op with two operands that are not splats.
// CHECK-LABEL: func.func @gather_stays(
// CHECK:         %[[E:.*]] = kiln.exp %arg0 : tensor<2x8xf32>
// CHECK:         kiln.gather %[[E]], %arg1 : tensor<2x8xf32>, tensor<4xi64>
// CHECK:         %[[V:.*]] = kiln.add %arg2, %arg2 : tensor<100x8xf32>
// CHECK:         kiln.gather %[[V]], %arg3 : tensor<100x8xf32>, tensor<4xi64>
func.func @gather_stays(%t: tensor<2x8xf32>, %i: tensor<4xi64>, %u: tensor<100x8xf32>, %j: tensor<4xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = kiln.exp %t : tensor<2x8xf32>
  %g = kiln.gather %e, %i : tensor<2x8xf32>, tensor<4xi64>
  %v = kiln.add %u, %u : tensor<100x8xf32>
  %h = kiln.gather %v, %j : tensor<100x8xf32>, tensor<4xi64>
  return %g, %h : tensor<4x8xf32>, tensor<4x8xf32>
}
