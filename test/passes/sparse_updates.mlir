// kiln-sparse-updates: uniform scalings of a scatter into zeros move onto
// its updates, and the addition or subtraction that reads it becomes a
// scatter into the other operand.
// RUN: kiln-opt %s --split-input-file --kiln-sparse-updates | FileCheck %s

// SGD on an embedding table: p - lr * scatter_add(0, ids, dy).
// CHECK-LABEL: func.func @sgd
// CHECK-SAME:      (%[[P:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<3xi32>, %[[DY:.*]]: tensor<3x4xf32>, %[[LR:.*]]: tensor<f32>)
// CHECK:         %[[LRB:.*]] = kiln.broadcast_in_dim %[[LR]], dims = [] : (tensor<f32>) -> tensor<3x4xf32>
// CHECK:         %[[S:.*]] = kiln.mul %[[LRB]], %[[DY]] : tensor<3x4xf32>
// CHECK:         %[[N:.*]] = kiln.neg %[[S]] : tensor<3x4xf32>
// CHECK:         %[[R:.*]] = kiln.scatter_add %[[P]], %[[I]], %[[N]] : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
// CHECK:         return %[[R]]
func.func @sgd(%p: tensor<10x4xf32>, %i: tensor<3xi32>, %dy: tensor<3x4xf32>, %lr: tensor<f32>) -> tensor<10x4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<10x4xf32>
  %g = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %lrb = kiln.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<10x4xf32>
  %step = kiln.mul %lrb, %g : tensor<10x4xf32>
  %new = kiln.sub %p, %step : tensor<10x4xf32>
  return %new : tensor<10x4xf32>
}

// -----

// A splat scale on the right, a division, an addition from either side.
// CHECK-LABEL: func.func @forms
// CHECK-DAG:     %[[C:.*]] = kiln.constant dense<5.000000e-01> : tensor<3x4xf32>
// CHECK-DAG:     %[[D:.*]] = kiln.constant dense<4.000000e+00> : tensor<3x4xf32>
// CHECK:         %[[M:.*]] = kiln.mul %{{.*}}, %[[C]] : tensor<3x4xf32>
// CHECK:         kiln.scatter_add %{{.*}}, %{{.*}}, %[[M]]
// CHECK:         %[[Q:.*]] = kiln.div %{{.*}}, %[[D]] : tensor<3x4xf32>
// CHECK:         kiln.scatter_add %{{.*}}, %{{.*}}, %[[Q]]
func.func @forms(%p: tensor<10x4xf32>, %i: tensor<3xi32>, %dy: tensor<3x4xf32>) -> (tensor<10x4xf32>, tensor<10x4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<10x4xf32>
  %g1 = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %half = kiln.constant dense<0.5> : tensor<10x4xf32>
  %a = kiln.mul %g1, %half : tensor<10x4xf32>
  %r1 = kiln.add %a, %p : tensor<10x4xf32>
  %g2 = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %four = kiln.constant dense<4.0> : tensor<10x4xf32>
  %b = kiln.div %g2, %four : tensor<10x4xf32>
  %r2 = kiln.add %p, %b : tensor<10x4xf32>
  return %r1, %r2 : tensor<10x4xf32>, tensor<10x4xf32>
}

// -----

// Left alone: a gradient that is also returned, a scale that differs per
// element, an integer division, a scatter into a table that is not zero.
// CHECK-LABEL: func.func @kept
// CHECK:         %[[G:.*]] = kiln.scatter_add %{{.*}}, %{{.*}}, %{{.*}} : tensor<10x4xf32>
// CHECK:         kiln.sub %{{.*}}, %[[G]] : tensor<10x4xf32>
// CHECK:         kiln.mul %{{.*}}, %{{.*}} : tensor<10x4xf32>
// CHECK:         kiln.div %{{.*}}, %{{.*}} : tensor<10x4xi32>
// CHECK:         kiln.sub %{{.*}}, %{{.*}} : tensor<10x4xf32>
func.func @kept(%p: tensor<10x4xf32>, %i: tensor<3xi32>, %dy: tensor<3x4xf32>, %w: tensor<10x4xf32>,
                %n: tensor<3x4xi32>) -> (tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xi32>, tensor<10x4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<10x4xf32>
  %g = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %r1 = kiln.sub %p, %g : tensor<10x4xf32>
  %g2 = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %r2 = kiln.mul %w, %g2 : tensor<10x4xf32>
  %izero = kiln.constant dense<0> : tensor<10x4xi32>
  %gi = kiln.scatter_add %izero, %i, %n : tensor<10x4xi32>, tensor<3xi32>, tensor<3x4xi32>
  %three = kiln.constant dense<3> : tensor<10x4xi32>
  %r3 = kiln.div %gi, %three : tensor<10x4xi32>
  %g4 = kiln.scatter_add %w, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %r4 = kiln.sub %p, %g4 : tensor<10x4xf32>
  return %r1, %g, %r2, %r3, %r4 : tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>, tensor<10x4xi32>, tensor<10x4xf32>
}
