// kiln-sparse-updates: uniform scalings of a scatter into zeros move onto
// its updates, and the addition or subtraction that reads it becomes a
// scatter into the other operand.
// RUN: kiln-opt %s --split-input-file --kiln-sparse-updates | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-sparse-updates --cse | FileCheck %s --check-prefix=ROWS

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

// -----

// Adagrad on an embedding table (kiln::optim::Adagrad's step): the
// gradient has two readers, g * g and -clr * g, so the scalings cannot
// move; the step is computed on the touched rows instead. SAME says which
// ids name one row, FIRST the first id naming each id's row; the updates
// are summed into those slots in the ids' order (SUMS, the gradient's rows
// bit for bit), and only slots that are their own first (USED) are
// applied. The accumulator and the parameter are updated by scatters of
// those rows, the new accumulator's rows recomputed from the old one's
// (gather of %S). No op of the table's shape remains but the two scatters.
// ROWS-LABEL: func.func @adagrad
// ROWS-SAME:      (%[[P:.*]]: tensor<10x4xf32>, %[[S:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<3xi32>, %[[DY:.*]]: tensor<3x4xf32>, %[[C:.*]]: tensor<f32>)
// ROWS:         %[[ROWS:.*]] = kiln.max %{{.*}}, %{{.*}} : tensor<3xi64>
// ROWS:         %[[SAME:.*]] = kiln.compare eq, %{{.*}}, %{{.*}} : tensor<3x3xi64>
// ROWS:         %[[SAMEI:.*]] = kiln.cast %[[SAME]] : tensor<3x3xi1> to tensor<3x3xi64>
// ROWS:         %[[FIRST:.*]] = kiln.argmax %[[SAMEI]], dim = 1 : tensor<3x3xi64>
// ROWS:         %[[K:.*]] = kiln.iota dim = 0 : tensor<3xi64>
// ROWS:         %[[USED:.*]] = kiln.compare eq, %[[FIRST]], %[[K]] : tensor<3xi64>
// ROWS:         %[[SUMS:.*]] = kiln.scatter_add %{{.*}}, %[[FIRST]], %[[DY]] : tensor<3x4xf32>, tensor<3xi64>, tensor<3x4xf32>
// ROWS:         %[[GG:.*]] = kiln.mul %[[SUMS]], %[[SUMS]] : tensor<3x4xf32>
// ROWS:         %[[MASK:.*]] = kiln.broadcast_in_dim %[[USED]], dims = [0] : (tensor<3xi1>) -> tensor<3x4xi1>
// ROWS:         %[[DS:.*]] = kiln.select %[[MASK]], %[[GG]], %{{.*}} : tensor<3x4xi1>, tensor<3x4xf32>
// ROWS:         %[[S2:.*]] = kiln.scatter_add %[[S]], %[[ROWS]], %[[DS]] : tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>
// ROWS-DAG:     %[[OLD:.*]] = kiln.gather %[[S]], %[[ROWS]] : tensor<10x4xf32>, tensor<3xi64>
// ROWS-DAG:     %[[NEW:.*]] = kiln.add %[[OLD]], %[[GG]] : tensor<3x4xf32>
// ROWS:         kiln.sqrt %[[NEW]] : tensor<3x4xf32>
// ROWS:         %[[Q:.*]] = kiln.div %{{.*}}, %{{.*}} : tensor<3x4xf32>
// ROWS:         %[[DP:.*]] = kiln.select %[[MASK]], %[[Q]], %{{.*}} : tensor<3x4xi1>, tensor<3x4xf32>
// ROWS:         %[[P2:.*]] = kiln.scatter_add %[[P]], %[[ROWS]], %[[DP]] : tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>
// ROWS-NOT:     tensor<10x4xf32>
// ROWS:         return %[[P2]], %[[S2]]
func.func @adagrad(%p: tensor<10x4xf32>, %s: tensor<10x4xf32>, %i: tensor<3xi32>, %dy: tensor<3x4xf32>, %clr: tensor<f32>) -> (tensor<10x4xf32>, tensor<10x4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<10x4xf32>
  %g = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %gg = kiln.mul %g, %g : tensor<10x4xf32>
  %s2 = kiln.add %s, %gg : tensor<10x4xf32>
  %r = kiln.sqrt %s2 : tensor<10x4xf32>
  %eps = kiln.constant dense<1.0e-10> : tensor<10x4xf32>
  %std = kiln.add %r, %eps : tensor<10x4xf32>
  %nc = kiln.broadcast_in_dim %clr, dims = [] : (tensor<f32>) -> tensor<10x4xf32>
  %step = kiln.mul %nc, %g : tensor<10x4xf32>
  %q = kiln.div %step, %std : tensor<10x4xf32>
  %p2 = kiln.add %p, %q : tensor<10x4xf32>
  return %p2, %s2 : tensor<10x4xf32>, tensor<10x4xf32>
}

// -----

// Left dense: an update that is not zero where the gradient is (g + w
// changes every row), a table with no more rows than ids, and a
// subtraction of a product with another table, which is made sparse.
// ROWS-LABEL: func.func @rows_kept_and_taken
// ROWS:         %[[G:.*]] = kiln.scatter_add %{{.*}} : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
// ROWS:         kiln.argmax
// ROWS:         %[[A:.*]] = kiln.add %[[G]], %{{.*}} : tensor<10x4xf32>
// ROWS:         kiln.add %{{.*}}, %[[A]] : tensor<10x4xf32>
// ROWS:         kiln.mul %{{.*}}, %{{.*}} : tensor<2x4xf32>
// ROWS:         kiln.add %{{.*}}, %{{.*}} : tensor<2x4xf32>
// ROWS-NOT:     kiln.argmax
// ROWS:         %[[W:.*]] = kiln.gather %{{.*}}, %{{.*}} : tensor<10x4xf32>, tensor<3xi64>
// ROWS:         %[[M:.*]] = kiln.mul %{{.*}}, %[[W]] : tensor<3x4xf32>
// ROWS:         %[[N:.*]] = kiln.neg %[[M]] : tensor<3x4xf32>
// ROWS:         kiln.select %{{.*}}, %[[N]], %{{.*}}
// ROWS:         kiln.scatter_add
func.func @rows_kept_and_taken(%p: tensor<10x4xf32>, %w: tensor<10x4xf32>, %i: tensor<3xi32>, %dy: tensor<3x4xf32>,
                               %small: tensor<2x4xf32>, %j: tensor<3xi32>) -> (tensor<10x4xf32>, tensor<2x4xf32>, tensor<10x4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<10x4xf32>
  %g = kiln.scatter_add %zero, %i, %dy : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %gw = kiln.add %g, %w : tensor<10x4xf32>
  %r1 = kiln.add %p, %gw : tensor<10x4xf32>
  %zero2 = kiln.constant dense<0.0> : tensor<2x4xf32>
  %h = kiln.scatter_add %zero2, %j, %dy : tensor<2x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %hh = kiln.mul %h, %h : tensor<2x4xf32>
  %r2 = kiln.add %small, %hh : tensor<2x4xf32>
  %gx = kiln.mul %g, %w : tensor<10x4xf32>
  %r3 = kiln.sub %p, %gx : tensor<10x4xf32>
  return %r1, %r2, %r3 : tensor<10x4xf32>, tensor<2x4xf32>, tensor<10x4xf32>
}
