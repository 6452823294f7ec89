// kiln-canonicalize-buffers: the canonicalizer, but a generic on buffers
// whose body yields only values from outside it becomes a fill instead of
// being erased as an identity.
// RUN: kiln-opt %s --split-input-file --kiln-canonicalize-buffers | FileCheck %s

// An elementwise kernel written in place whose body folded to a constant:
// MLIR 19's canonicalizer alone erases it (test/fuzz/known/memref_repro.mlir).
// CHECK-LABEL: func.func @in_place_constant_body(
// CHECK-SAME:    %[[BUF:[^:]*]]: memref<2x2xi64>)
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         linalg.fill ins(%[[ONE]] : i64) outs(%[[BUF]] : memref<2x2xi64>)
// CHECK-NOT:     linalg.generic
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @in_place_constant_body(%buf: memref<2x2xi64>) {
  %c1 = arith.constant 1 : i64
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%buf : memref<2x2xi64>) outs(%buf : memref<2x2xi64>) {
  ^bb0(%in: i64, %out: i64):
    linalg.yield %c1 : i64
  }
  return
}

// -----

// The body folds here, in the same run: (x + 1) - x is 1.
// CHECK-LABEL: func.func @body_folds_first(
// CHECK-SAME:    %[[BUF:[^:]*]]: memref<4xi64>)
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         linalg.fill ins(%[[ONE]] : i64) outs(%[[BUF]] : memref<4xi64>)
// CHECK-NOT:     linalg.generic
#map = affine_map<(d0) -> (d0)>
func.func @body_folds_first(%buf: memref<4xi64>) {
  %c1 = arith.constant 1 : i64
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%buf : memref<4xi64>) outs(%buf : memref<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    %p = arith.addi %in, %c1 : i64
    %r = arith.subi %p, %in : i64
    linalg.yield %r : i64
  }
  return
}

// -----

// Two outputs, one with a transposed map, each filled with its value.
// CHECK-LABEL: func.func @two_outputs(
// CHECK-SAME:    %[[A:[^:]*]]: memref<2x3xf32>, %[[B:[^:]*]]: memref<3x2xf32>, %[[V:[^:]*]]: f32)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[A]] : memref<2x3xf32>)
// CHECK:         linalg.fill ins(%[[V]] : f32) outs(%[[B]] : memref<3x2xf32>)
// CHECK-NOT:     linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @two_outputs(%a: memref<2x3xf32>, %b: memref<3x2xf32>, %v: f32) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #t], iterator_types = ["parallel", "parallel"]} outs(%a, %b : memref<2x3xf32>, memref<3x2xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %zero, %v : f32, f32
  }
  return
}

// -----

// Left alone: a copy of the input onto itself is still erased (upstream's
// identity), a body that reads its operands stays a generic, a reduction
// writes an element more than once, and tensors are not buffers.
// CHECK-LABEL: func.func @not_fills(
// CHECK-NOT:     linalg.fill
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK-SAME:      "reduction"
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}} : tensor<4xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         return
#map = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @not_fills(%buf: memref<4xf32>, %other: memref<4xf32>, %acc: memref<f32>, %t: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%buf : memref<4xf32>) outs(%buf : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%other : memref<4xf32>) outs(%buf : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction"]} ins(%buf : memref<4xf32>) outs(%acc : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %c : f32
  }
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %c : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
