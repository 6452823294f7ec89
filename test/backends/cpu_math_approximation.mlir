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

// -----

// An f32 log first scales subnormal inputs by 2^24 into the normal range
// (upstream's approximation clamps its input to FLT_MIN) and takes 24 ln 2
// off their result; the polynomial then sees the selected input.
// CHECK-LABEL: func.func @log_subnormal(
// CHECK-SAME:    %[[X:.*]]: vector<16xf32>
// CHECK:         %[[MIN:.*]] = arith.constant dense<1.17549435E-38> : vector<16xf32>
// CHECK:         %[[SUB:.*]] = arith.cmpf olt, %[[X]], %[[MIN]] : vector<16xf32>
// CHECK:         %[[TWO24:.*]] = arith.constant dense<0x4B800000> : vector<16xf32>
// CHECK:         %[[SCALED:.*]] = arith.mulf %[[X]], %[[TWO24]] : vector<16xf32>
// CHECK:         %[[IN:.*]] = arith.select %[[SUB]], %[[SCALED]], %[[X]]
// CHECK-NOT:     math.log
// CHECK:         arith.cmpf ugt, %[[IN]],
// CHECK:         %[[LN:.*]] = arith.constant dense<16.6355324> : vector<16xf32>
// CHECK:         %[[FIXED:.*]] = arith.subf %[[LOG:.*]], %[[LN]] : vector<16xf32>
// CHECK:         %[[R:.*]] = arith.select %[[SUB]], %[[FIXED]], %[[LOG]]
// CHECK:         return %[[R]]
func.func @log_subnormal(%x: vector<16xf32>) -> vector<16xf32> {
  %l = math.log %x : vector<16xf32>
  return %l : vector<16xf32>
}

// -----

// f32 erf and atan become polynomials; asin and acos stay libm calls
// (upstream's asin polynomial is off by up to 1e-2), and so do the math ops
// without an approximation (tan, the hyperbolic functions) and the
// rounding ops, which become LLVM intrinsics later.
// CHECK-LABEL: func.func @new_f32_ops(
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.atan
// CHECK-DAG:     math.asin %{{.*}} : f32
// CHECK-DAG:     math.acos %{{.*}} : f32
// CHECK-DAG:     math.tan %{{.*}} : f32
// CHECK-DAG:     math.sinh %{{.*}} : f32
// CHECK-DAG:     math.acosh %{{.*}} : f32
// CHECK-DAG:     math.roundeven %{{.*}} : f32
// CHECK-DAG:     math.floor %{{.*}} : f32
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.atan
// CHECK:         return
func.func @new_f32_ops(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %e = math.erf %x : f32
  %a = math.atan %x : f32
  %s = math.asin %x : f32
  %c = math.acos %x : f32
  %t = math.tan %x : f32
  %h = math.sinh %x : f32
  %k = math.acosh %x : f32
  %r = math.roundeven %x : f32
  %f = math.floor %x : f32
  return %e, %a, %s, %c, %t, %h, %k, %r, %f : f32, f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

// Powers 2 and 3 (constant exponents, scalar or splat, f32 or f64) are
// products; other exponents and variable ones stay pow.
// CHECK-LABEL: func.func @small_powers(
// CHECK-SAME:    %[[X:[^:]*]]: f32, %[[Y:[^:]*]]: f64, %[[V:[^:]*]]: vector<4xf32>, %[[E:[^:]*]]: f32
// CHECK-DAG:     %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-DAG:     %[[YY:.*]] = arith.mulf %[[Y]], %[[Y]] : f64
// CHECK-DAG:     %[[CU:.*]] = arith.mulf %[[YY]], %[[Y]] : f64
// CHECK-DAG:     %[[VV:.*]] = arith.mulf %[[V]], %[[V]] : vector<4xf32>
// CHECK-DAG:     %[[VC:.*]] = arith.mulf %[[VV]], %[[V]] : vector<4xf32>
// CHECK-DAG:     %[[H:.*]] = math.powf %[[X]], %{{.*}} : f32
// CHECK-DAG:     %[[P:.*]] = math.powf %[[X]], %[[E]] : f32
// CHECK:         return %[[SQ]], %[[CU]], %[[VC]], %[[H]], %[[P]]
func.func @small_powers(%x: f32, %y: f64, %v: vector<4xf32>, %e: f32) -> (f32, f64, vector<4xf32>, f32, f32) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f64
  %threes = arith.constant dense<3.0> : vector<4xf32>
  %half = arith.constant 0.5 : f32
  %sq = math.powf %x, %two : f32
  %cu = math.powf %y, %three : f64
  %vc = math.powf %v, %threes : vector<4xf32>
  %h = math.powf %x, %half : f32
  %p = math.powf %x, %e : f32
  return %sq, %cu, %vc, %h, %p : f32, f64, vector<4xf32>, f32, f32
}

// -----

// An f32 sigmoid as kiln lowers it (either order of the addition) becomes
// its own polynomial: the input clamped to [-88, 87.33] by selects that
// keep NaN, one fma with the rounding constant 1.5 * 2^23 + 127
// (12583039), k by subtracting it again, r = x + k ln 2 in two fmas,
// eight coefficients, the power of two from the bits shifted by 23, and a
// division whose reciprocal may be estimated. No exp and no second
// division remain.
// CHECK-LABEL: func.func @sigmoid(
// CHECK-SAME:    %[[X:.*]]: vector<16xf32>
// CHECK-NOT:     math.exp
// CHECK:         %[[LO:.*]] = arith.cmpf uge, %[[X]], %{{.*}} : vector<16xf32>
// CHECK:         %[[X1:.*]] = arith.select %[[LO]], %[[X]], %{{.*}}
// CHECK:         %[[HI:.*]] = arith.cmpf ule, %[[X1]], %{{.*}} : vector<16xf32>
// CHECK:         %[[XC:.*]] = arith.select %[[HI]], %[[X1]], %{{.*}}
// CHECK:         %[[V:.*]] = math.fma %[[XC]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:         %[[K:.*]] = arith.subf %[[V]], %{{.*}}
// CHECK:         %[[R0:.*]] = math.fma %[[K]], %{{.*}}, %[[XC]]
// CHECK:         %[[R:.*]] = math.fma %[[K]], %{{.*}}, %[[R0]]
// CHECK-COUNT-7: math.fma %{{.*}}, %[[R]], %{{.*}}
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[V]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[SHIFTED:.*]] = arith.shli %[[BITS]], %{{.*}} : vector<16xi32>
// CHECK:         %[[SCALE:.*]] = arith.bitcast %[[SHIFTED]] : vector<16xi32> to vector<16xf32>
// CHECK:         %[[E:.*]] = arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:         %[[D:.*]] = arith.addf %[[E]], %{{.*}}
// CHECK:         arith.divf %{{.*}}, %[[D]] fastmath<ninf,arcp,contract> : vector<16xf32>
// CHECK-NOT:     arith.divf
// CHECK-NOT:     math.exp
// CHECK:         return
// CHECK-LABEL: func.func @sigmoid_scalar(
// CHECK-NOT:     math.exp
// CHECK:         fastmath<ninf,arcp,contract> : f32
func.func @sigmoid(%x: vector<16xf32>) -> vector<16xf32> {
  %one = arith.constant dense<1.0> : vector<16xf32>
  %n = arith.negf %x : vector<16xf32>
  %e = math.exp %n : vector<16xf32>
  %d = arith.addf %e, %one : vector<16xf32>
  %s = arith.divf %one, %d : vector<16xf32>
  return %s : vector<16xf32>
}
func.func @sigmoid_scalar(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %one, %e : f32
  %s = arith.divf %one, %d : f32
  return %s : f32
}

// -----

// Not a sigmoid: the exp has another user (it stays, and upstream's
// polynomial replaces it), a numerator other than 1, or f64.
// CHECK-LABEL: func.func @not_sigmoids(
// CHECK-NOT:     fastmath<ninf,arcp,contract>
// CHECK:         return
func.func @not_sigmoids(%x: f32, %y: f64) -> (f32, f32, f32, f64) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %n = arith.negf %x : f32
  %e = math.exp %n : f32
  %d = arith.addf %e, %one : f32
  %s = arith.divf %one, %d : f32
  %n2 = arith.negf %x : f32
  %e2 = math.exp %n2 : f32
  %d2 = arith.addf %e2, %one : f32
  %s2 = arith.divf %two, %d2 : f32
  %one64 = arith.constant 1.0 : f64
  %n3 = arith.negf %y : f64
  %e3 = math.exp %n3 : f64
  %d3 = arith.addf %e3, %one64 : f64
  %s3 = arith.divf %one64, %d3 : f64
  return %s, %e, %s2, %s3 : f32, f32, f32, f64
}
