// REQUIRES: openmp
// Reductions large enough for the CPU backend's split into per-chunk
// partials (kiln-cpu-parallel-reductions: at least 65536 iterations and
// fewer than 64 outputs): full reductions, a few rows, a few columns, an
// elementwise producer fused into the reduction, integers. Odd sizes leave
// a short last chunk and vector remainders. The chunks sum in another
// order than the evaluator, so the f32 sums widen the absolute tolerance
// (a sum of 100000 inputs in [-2, 2] reaches a few hundred; a lost chunk
// or a doubled one is off by tens).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-compile %s --emit=llvm | FileCheck %s --check-prefix=LLVM

// The chunks run on OpenMP threads and their folds are vectorized.
// LLVM-DAG: call {{.*}}@__kmpc_fork_call
// LLVM-DAG: fadd reassoc <{{8|16}} x float>

// CHECK: sum_all(arg0: f32[100003]) -> (out0: f32[])
func.func @sum_all(%x: tensor<100003xf32>) -> tensor<f32>
    attributes {kiln.e2e_atol = 5.0e-2 : f64} {
  %s = kiln.reduce_sum %x, dims = [0] : tensor<100003xf32>
  return %s : tensor<f32>
}

// CHECK: max_all(arg0: f32[317,331]) -> (out0: f32[])
func.func @max_all(%x: tensor<317x331xf32>) -> tensor<f32> {
  %m = kiln.reduce_max %x, dims = [0, 1] : tensor<317x331xf32>
  return %m : tensor<f32>
}

// CHECK: row_sums(arg0: f32[3,40009]) -> (out0: f32[3])
func.func @row_sums(%x: tensor<3x40009xf32>) -> tensor<3xf32>
    attributes {kiln.e2e_atol = 5.0e-2 : f64} {
  %s = kiln.reduce_sum %x, dims = [1] : tensor<3x40009xf32>
  return %s : tensor<3xf32>
}

// CHECK: column_means(arg0: f32[50021,2]) -> (out0: f32[2])
func.func @column_means(%x: tensor<50021x2xf32>) -> tensor<2xf32> {
  %m = kiln.reduce_mean %x, dims = [0] : tensor<50021x2xf32>
  return %m : tensor<2xf32>
}

// sum(x * x + y): the elementwise producer is fused into the reduction.
// CHECK: sum_of_squares(arg0: f32[70001], arg1: f32[70001]) -> (out0: f32[])
func.func @sum_of_squares(%x: tensor<70001xf32>, %y: tensor<70001xf32>) -> tensor<f32>
    attributes {kiln.e2e_atol = 1.0e-1 : f64} {
  %xx = kiln.mul %x, %x : tensor<70001xf32>
  %z = kiln.add %xx, %y : tensor<70001xf32>
  %s = kiln.reduce_sum %z, dims = [0] : tensor<70001xf32>
  return %s : tensor<f32>
}

// CHECK: sum_i32(arg0: i32[3,33335]) -> (out0: i32[])
func.func @sum_i32(%x: tensor<3x33335xi32>) -> tensor<i32> {
  %s = kiln.reduce_sum %x, dims = [0, 1] : tensor<3x33335xi32>
  return %s : tensor<i32>
}

// CHECK: min_i64(arg0: i64[65537]) -> (out0: i64[])
func.func @min_i64(%x: tensor<65537xi64>) -> tensor<i64> {
  %n = kiln.neg %x : tensor<65537xi64>
  %m = kiln.reduce_max %n, dims = [0] : tensor<65537xi64>
  return %m : tensor<i64>
}
