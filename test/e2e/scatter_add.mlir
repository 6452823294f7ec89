// kiln.scatter_add: ids from the inputs (uniform in [-8, 8], so both ends
// clamp and most rows are named several times), tables of rank 1 to 3,
// indices of rank 0 to 2, f32, f64, f16, bf16, i32 (wrapping) and ui8, no
// ids at all, a table large enough for the parallel paths, a scatter
// carried through a loop, and SGD steps that kiln-sparse-updates turns into
// one scatter of the scaled rows into the parameter.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: rows(arg0: f32[9,4], arg1: i32[6], arg2: f32[6,4]) -> (out0: f32[9,4])
func.func @rows(%t: tensor<9x4xf32>, %i: tensor<6xi32>, %u: tensor<6x4xf32>) -> tensor<9x4xf32> {
  %s = kiln.scatter_add %t, %i, %u : tensor<9x4xf32>, tensor<6xi32>, tensor<6x4xf32>
  return %s : tensor<9x4xf32>
}

// CHECK: shapes(arg0: f64[5], arg1: i64[], arg2: f64[], arg3: f64[4,2,3], arg4: i64[2,3], arg5: f64[2,3,2,3]) -> (out0: f64[5], out1: f64[4,2,3])
func.func @shapes(%v: tensor<5xf64>, %j: tensor<i64>, %x: tensor<f64>,
                  %t: tensor<4x2x3xf64>, %i: tensor<2x3xi64>, %u: tensor<2x3x2x3xf64>)
    -> (tensor<5xf64>, tensor<4x2x3xf64>) {
  %a = kiln.scatter_add %v, %j, %x : tensor<5xf64>, tensor<i64>, tensor<f64>
  %b = kiln.scatter_add %t, %i, %u : tensor<4x2x3xf64>, tensor<2x3xi64>, tensor<2x3x2x3xf64>
  return %a, %b : tensor<5xf64>, tensor<4x2x3xf64>
}

// Rounded once per addition, like the evaluator.
// CHECK: half(arg0: f16[6,3], arg1: bf16[6,3], arg2: i32[5], arg3: f16[5,3], arg4: bf16[5,3]) -> (out0: f16[6,3], out1: bf16[6,3])
func.func @half(%t: tensor<6x3xf16>, %b: tensor<6x3xbf16>, %i: tensor<5xi32>,
                %u: tensor<5x3xf16>, %w: tensor<5x3xbf16>) -> (tensor<6x3xf16>, tensor<6x3xbf16>) {
  %s = kiln.scatter_add %t, %i, %u : tensor<6x3xf16>, tensor<5xi32>, tensor<5x3xf16>
  %r = kiln.scatter_add %b, %i, %w : tensor<6x3xbf16>, tensor<5xi32>, tensor<5x3xbf16>
  return %s, %r : tensor<6x3xf16>, tensor<6x3xbf16>
}

// CHECK: integers(arg0: i32[4,2], arg1: i64[7], arg2: i32[7,2], arg3: ui8[3], arg4: ui8[7]) -> (out0: i32[4,2], out1: ui8[3])
func.func @integers(%t: tensor<4x2xi32>, %i: tensor<7xi64>, %u: tensor<7x2xi32>,
                    %c: tensor<3xui8>, %d: tensor<7xui8>) -> (tensor<4x2xi32>, tensor<3xui8>) {
  %big = kiln.constant dense<2147483647> : tensor<7x2xi32>
  %w = kiln.add %u, %big : tensor<7x2xi32>
  %s = kiln.scatter_add %t, %i, %w : tensor<4x2xi32>, tensor<7xi64>, tensor<7x2xi32>
  %n = kiln.scatter_add %c, %i, %d : tensor<3xui8>, tensor<7xi64>, tensor<7xui8>
  return %s, %n : tensor<4x2xi32>, tensor<3xui8>
}

// CHECK: no_ids(arg0: f32[3,2], arg1: i32[0], arg2: f32[0,2]) -> (out0: f32[3,2])
func.func @no_ids(%t: tensor<3x2xf32>, %i: tensor<0xi32>, %u: tensor<0x2xf32>) -> tensor<3x2xf32> {
  %s = kiln.scatter_add %t, %i, %u : tensor<3x2xf32>, tensor<0xi32>, tensor<0x2xf32>
  %e = kiln.exp %s : tensor<3x2xf32>
  return %e : tensor<3x2xf32>
}

// 20000 x 4 = 80000 elements: the copy of the table and the ops around it
// take the parallel paths.
// CHECK: large(arg0: f32[20000,4], arg1: i32[64], arg2: f32[64,4]) -> (out0: f32[20000,4])
func.func @large(%t: tensor<20000x4xf32>, %i: tensor<64xi32>, %u: tensor<64x4xf32>) -> tensor<20000x4xf32> {
  %two = kiln.constant dense<2.0> : tensor<20000x4xf32>
  %d = kiln.mul %t, %two : tensor<20000x4xf32>
  %s = kiln.scatter_add %d, %i, %u : tensor<20000x4xf32>, tensor<64xi32>, tensor<64x4xf32>
  %n = kiln.neg %s : tensor<20000x4xf32>
  return %n : tensor<20000x4xf32>
}

// Each iteration adds the rows again at ids shifted by the counter.
// CHECK: in_a_loop(arg0: f32[8,3], arg1: i64[4], arg2: f32[4,3]) -> (out0: f32[8,3])
func.func @in_a_loop(%t: tensor<8x3xf32>, %i: tensor<4xi64>, %u: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %r:3 = kiln.for 3 iterations (%t, %i, %u) : (tensor<8x3xf32>, tensor<4xi64>, tensor<4x3xf32>) {
  ^bb0(%k: tensor<i64>, %acc: tensor<8x3xf32>, %ids: tensor<4xi64>, %rows: tensor<4x3xf32>):
    %kb = kiln.broadcast_in_dim %k, dims = [] : (tensor<i64>) -> tensor<4xi64>
    %j = kiln.add %ids, %kb : tensor<4xi64>
    %next = kiln.scatter_add %acc, %j, %rows : tensor<8x3xf32>, tensor<4xi64>, tensor<4x3xf32>
    kiln.yield %next, %ids, %rows : tensor<8x3xf32>, tensor<4xi64>, tensor<4x3xf32>
  }
  return %r#0 : tensor<8x3xf32>
}

// p - lr * scatter_add(0, ids, g), lr a splat and a broadcast scalar, and
// p + scatter_add(0, ids, g) / c: kiln-sparse-updates makes each one
// scatter into p.
// CHECK: sgd(arg0: f32[12,5], arg1: i32[2,3], arg2: f32[2,3,5], arg3: f32[]) -> (out0: f32[12,5], out1: f32[12,5], out2: f32[12,5])
func.func @sgd(%p: tensor<12x5xf32>, %i: tensor<2x3xi32>, %g: tensor<2x3x5xf32>, %lr: tensor<f32>)
    -> (tensor<12x5xf32>, tensor<12x5xf32>, tensor<12x5xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<12x5xf32>
  %s1 = kiln.scatter_add %zero, %i, %g : tensor<12x5xf32>, tensor<2x3xi32>, tensor<2x3x5xf32>
  %c = kiln.constant dense<0.125> : tensor<12x5xf32>
  %m1 = kiln.mul %c, %s1 : tensor<12x5xf32>
  %p1 = kiln.sub %p, %m1 : tensor<12x5xf32>
  %s2 = kiln.scatter_add %zero, %i, %g : tensor<12x5xf32>, tensor<2x3xi32>, tensor<2x3x5xf32>
  %lrb = kiln.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<12x5xf32>
  %m2 = kiln.mul %s2, %lrb : tensor<12x5xf32>
  %p2 = kiln.sub %p, %m2 : tensor<12x5xf32>
  %s3 = kiln.scatter_add %zero, %i, %g : tensor<12x5xf32>, tensor<2x3xi32>, tensor<2x3x5xf32>
  %three = kiln.constant dense<3.0> : tensor<12x5xf32>
  %d3 = kiln.div %s3, %three : tensor<12x5xf32>
  %p3 = kiln.add %d3, %p : tensor<12x5xf32>
  return %p1, %p2, %p3 : tensor<12x5xf32>, tensor<12x5xf32>, tensor<12x5xf32>
}
