// kiln-combine-collectives: independent small exchanges of one kind, group
// and element type become one asynchronous exchange per bucket, each
// result sliced out of it; the ops computing a later operand move up first.
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-combine-collectives))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-combine-collectives{cap-mb=0.00001}))' | FileCheck %s --check-prefix=CAP

// Two gathers traced one after another, the second's operand computed only
// after the first's result is used: the negation moves up, and one gather
// of both (4 + 2 elements per rank) replaces them; each result is its
// columns of the [2, 6] gathered matrix.
// CHECK-LABEL: func.func @gathers(
// CHECK-SAME:      %[[A:[^:]+]]: tensor<4xi64>, %[[B:[^:]+]]: tensor<2xi64>
// CHECK:         %[[NB:.+]] = kiln.neg %[[B]]
// CHECK:         %[[CAT:.+]] = kiln.concat %[[A]], %[[NB]]
// CHECK:         %[[START:.+]] = kiln.all_gather_start %[[CAT]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<6xi64>) -> tensor<12xi64>
// CHECK:         %[[ALL:.+]] = kiln.collective_wait %[[START]], %[[CAT]]
// CHECK:         %[[M0:.+]] = kiln.reshape %[[ALL]] : (tensor<12xi64>) -> tensor<2x6xi64>
// CHECK:         kiln.slice %[[M0]], start = [0, 0], limit = [2, 4]
// CHECK:         %[[M1:.+]] = kiln.reshape %[[ALL]] : (tensor<12xi64>) -> tensor<2x6xi64>
// CHECK:         kiln.slice %[[M1]], start = [0, 4], limit = [2, 6]
// CHECK-NOT:     kiln.all_gather
// CAP-LABEL:   func.func @gathers(
// CAP-COUNT-2:   kiln.all_gather %
func.func @gathers(%a: tensor<4xi64>, %b: tensor<2xi64>) -> (tensor<8xi64>, tensor<4xi64>) {
  %ga = kiln.all_gather %a, dim = 0, groups = [[0, 1]] : (tensor<4xi64>) -> tensor<8xi64>
  %sa = kiln.add %ga, %ga : tensor<8xi64>
  %nb = kiln.neg %b : tensor<2xi64>
  %gb = kiln.all_gather %nb, dim = 0, groups = [[0, 1]] : (tensor<2xi64>) -> tensor<4xi64>
  return %sa, %gb : tensor<8xi64>, tensor<4xi64>
}

// -----

// Reduce-scatters: each operand as a [ranks, block] matrix, side by side,
// so that each rank's reduced row holds its block of both.
// CHECK-LABEL: func.func @scatters(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x3xf32>, %[[Y:[^:]+]]: tensor<2xf32>
// CHECK-DAG:     %[[MX:.+]] = kiln.reshape %[[X]] : (tensor<4x3xf32>) -> tensor<2x6xf32>
// CHECK-DAG:     %[[MY:.+]] = kiln.reshape %[[Y]] : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK:         %[[SIDE:.+]] = kiln.concat %[[MX]], %[[MY]] dim = 1
// CHECK:         %[[FLAT:.+]] = kiln.reshape %[[SIDE]] : (tensor<2x7xf32>) -> tensor<14xf32>
// CHECK:         %[[START:.+]] = kiln.reduce_scatter_start %[[FLAT]], kind = sum, dim = 0
// CHECK:         %[[ROW:.+]] = kiln.collective_wait %[[START]], %[[FLAT]]
// CHECK:         %[[PX:.+]] = kiln.slice %[[ROW]], start = [0], limit = [6]
// CHECK:         kiln.reshape %[[PX]] : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK:         kiln.slice %[[ROW]], start = [6], limit = [7]
func.func @scatters(%x: tensor<4x3xf32>, %y: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<1xf32>) {
  %sx = kiln.reduce_scatter %x, kind = sum, dim = 0, groups = [[0, 1]] : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %sy = kiln.reduce_scatter %y, kind = sum, dim = 0, groups = [[0, 1]] : (tensor<2xf32>) -> tensor<1xf32>
  return %sx, %sy : tensor<2x3xf32>, tensor<1xf32>
}

// -----

// Exchanges that must stay apart: other reductions, other groups, other
// element types, a gather along another dimension, and one whose operand
// needs the other's result.
// CHECK-LABEL: func.func @apart(
// CHECK-NOT:     _start
// CHECK-COUNT-5: kiln.all_reduce %
// CHECK-COUNT-2: kiln.all_gather %
// CHECK-NOT:     _start
func.func @apart(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>, %m: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<2x4xf32>, tensor<8xf32>) {
  %s = kiln.all_reduce %x, kind = sum, groups = [[0, 1]] : tensor<4xf32>
  %t = kiln.all_reduce %s, kind = sum, groups = [[0, 1]] : tensor<4xf32>
  %u = kiln.all_reduce %y, kind = max, groups = [[0, 1]] : tensor<4xf32>
  %v = kiln.all_reduce %i, kind = sum, groups = [[0, 1]] : tensor<4xi32>
  %w = kiln.all_reduce %y, kind = max, groups = [[0], [1]] : tensor<4xf32>
  %g = kiln.all_gather %m, dim = 1, groups = [[0, 1]] : (tensor<2x2xf32>) -> tensor<2x4xf32>
  %h = kiln.all_gather %y, dim = 0, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<8xf32>
  return %t, %u, %v, %w, %g, %h : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<2x4xf32>, tensor<8xf32>
}
