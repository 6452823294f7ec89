// kiln.dynamic_slice and kiln.dynamic_update_slice: row indices from the
// inputs (uniform in [-8, 8], so both ends clamp), rank 1 to 3, f32, f64,
// i1 and i32, and a loop that reverses the rows of a matrix through them.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: rows(arg0: f32[8,4], arg1: i64[], arg2: f32[2,4]) -> (out0: f32[3,4], out1: f32[8,4])
func.func @rows(%b: tensor<8x4xf32>, %i: tensor<i64>, %u: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<8x4xf32>) {
  %s = kiln.dynamic_slice %b[%i], size = 3 : tensor<8x4xf32>
  %e = kiln.exp %s : tensor<3x4xf32>
  %w = kiln.dynamic_update_slice %b[%i], %u : tensor<8x4xf32>, tensor<2x4xf32>
  %n = kiln.neg %w : tensor<8x4xf32>
  return %e, %n : tensor<3x4xf32>, tensor<8x4xf32>
}

// CHECK: blocks(arg0: f64[4,2,3], arg1: i64[], arg2: f64[1,2,3]) -> (out0: f64[4,2,3])
func.func @blocks(%b: tensor<4x2x3xf64>, %i: tensor<i64>, %u: tensor<1x2x3xf64>) -> tensor<4x2x3xf64> {
  %r = kiln.dynamic_slice %b[%i], size = 1 : tensor<4x2x3xf64>
  %s = kiln.add %r, %u : tensor<1x2x3xf64>
  %w = kiln.dynamic_update_slice %b[%i], %s : tensor<4x2x3xf64>, tensor<1x2x3xf64>
  %two = kiln.constant dense<2.0> : tensor<4x2x3xf64>
  %o = kiln.mul %w, %two : tensor<4x2x3xf64>
  return %o : tensor<4x2x3xf64>
}

// CHECK: integers(arg0: i1[5], arg1: i32[5], arg2: i64[]) -> (out0: i1[2], out1: i32[5])
func.func @integers(%m: tensor<5xi1>, %v: tensor<5xi32>, %i: tensor<i64>) -> (tensor<2xi1>, tensor<5xi32>) {
  %s = kiln.dynamic_slice %m[%i], size = 2 : tensor<5xi1>
  %t = kiln.constant dense<true> : tensor<2xi1>
  %x = kiln.compare ne, %s, %t : tensor<2xi1>
  %one = kiln.constant dense<[7]> : tensor<1xi32>
  %w = kiln.dynamic_update_slice %v[%i], %one : tensor<5xi32>, tensor<1xi32>
  %d = kiln.add %w, %v : tensor<5xi32>
  return %x, %d : tensor<2xi1>, tensor<5xi32>
}

// Row i of x goes to row 5 - i.
// CHECK: reverse_rows(arg0: f32[6,3]) -> (out0: f32[6,3])
func.func @reverse_rows(%x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %zero = kiln.constant dense<0.0> : tensor<6x3xf32>
  %r:2 = kiln.for 6 iterations (%zero, %x) : (tensor<6x3xf32>, tensor<6x3xf32>) {
  ^bb0(%i: tensor<i64>, %acc: tensor<6x3xf32>, %src: tensor<6x3xf32>):
    %row = kiln.dynamic_slice %src[%i], size = 1 : tensor<6x3xf32>
    %five = kiln.constant dense<5> : tensor<i64>
    %j = kiln.sub %five, %i : tensor<i64>
    %next = kiln.dynamic_update_slice %acc[%j], %row : tensor<6x3xf32>, tensor<1x3xf32>
    kiln.yield %next, %src : tensor<6x3xf32>, tensor<6x3xf32>
  }
  %one = kiln.constant dense<1.0> : tensor<6x3xf32>
  %o = kiln.add %r#0, %one : tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

// A kiln.while that reads and updates row i of a table each iteration, i
// counting up to n (at most 8 here): on a GPU its kernels read i
// themselves, and the loop runs as a CUDA graph.
// CHECK: accumulate_rows(arg0: f32[16,4], arg1: f32[1,4], arg2: i64[]) -> (out0: f32[16,4])
func.func @accumulate_rows(%table: tensor<16x4xf32>, %row: tensor<1x4xf32>, %n: tensor<i64>) -> tensor<16x4xf32> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %w:4 = kiln.while (%table, %zero, %n, %row) : (tensor<16x4xf32>, tensor<i64>, tensor<i64>, tensor<1x4xf32>) cond {
  ^bb0(%t: tensor<16x4xf32>, %i: tensor<i64>, %m: tensor<i64>, %r: tensor<1x4xf32>):
    %go = kiln.compare lt, %i, %m : tensor<i64>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%t: tensor<16x4xf32>, %i: tensor<i64>, %m: tensor<i64>, %r: tensor<1x4xf32>):
    %prev = kiln.dynamic_slice %t[%i], size = 1 : tensor<16x4xf32>
    %scaled = kiln.mul %prev, %r : tensor<1x4xf32>
    %next = kiln.add %scaled, %r : tensor<1x4xf32>
    %u = kiln.dynamic_update_slice %t[%i], %next : tensor<16x4xf32>, tensor<1x4xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.add %i, %one : tensor<i64>
    kiln.yield %u, %j, %m, %r : tensor<16x4xf32>, tensor<i64>, tensor<i64>, tensor<1x4xf32>
  }
  return %w#0 : tensor<16x4xf32>
}
