// The kiln-to-linalg conversion: one case per op kind. Elementwise ops become
// one linalg.generic with identity maps; data movement becomes tensor ops or
// generics with broadcasting maps; reductions and matmuls accumulate into a
// linalg.fill; control flow becomes scf with the rank-0 predicate read by
// tensor.extract.
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg | FileCheck %s

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_f32
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[INIT]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
// CHECK-NOT: kiln.
func.func @add_f32(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @float_binary
// CHECK: linalg.generic
// CHECK: arith.subf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK: arith.minimumf %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK: math.powf %{{.+}}, %{{.+}} : f32
func.func @float_binary(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %1 = kiln.sub %a, %b : tensor<4xf32>
  %2 = kiln.mul %a, %b : tensor<4xf32>
  %3 = kiln.div %a, %b : tensor<4xf32>
  %4 = kiln.max %a, %b : tensor<4xf32>
  %5 = kiln.min %a, %b : tensor<4xf32>
  %6 = kiln.pow %a, %b : tensor<4xf32>
  return %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Integer division is signed (rounds toward zero), max/min are signed.
// Divisors of 0 and -1 are replaced by 1 before divsi, where they are
// undefined (they trap on x86); -1 then gives 0 - lhs, so INT_MIN / -1
// wraps, and 0 gives -1 (all ones).
// CHECK-LABEL: func.func @int_binary
// CHECK: arith.addi %{{.+}}, %{{.+}} : i32
// CHECK: arith.subi %{{.+}}, %{{.+}} : i32
// CHECK: arith.muli %{{.+}}, %{{.+}} : i32
// CHECK: ^bb0(%[[LHS:.+]]: i32, %[[RHS:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[ZERO:.+]] = arith.cmpi eq, %[[RHS]], %c0_i32 : i32
// CHECK: %[[MINUS1:.+]] = arith.cmpi eq, %[[RHS]], %c-1_i32 : i32
// CHECK: %[[EITHER:.+]] = arith.ori %[[ZERO]], %[[MINUS1]] : i1
// CHECK: %[[DIVISOR:.+]] = arith.select %[[EITHER]], %c1_i32, %[[RHS]] : i32
// CHECK: %[[Q:.+]] = arith.divsi %[[LHS]], %[[DIVISOR]] : i32
// CHECK: %[[NEG:.+]] = arith.subi %{{.+}}, %[[LHS]] : i32
// CHECK: %[[W:.+]] = arith.select %[[MINUS1]], %[[NEG]], %[[Q]] : i32
// CHECK: %[[R:.+]] = arith.select %[[ZERO]], %c-1_i32, %[[W]] : i32
// CHECK: linalg.yield %[[R]] : i32
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : i32
// CHECK: arith.minsi %{{.+}}, %{{.+}} : i32
func.func @int_binary(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = kiln.add %a, %b : tensor<4xi32>
  %1 = kiln.sub %a, %b : tensor<4xi32>
  %2 = kiln.mul %a, %b : tensor<4xi32>
  %3 = kiln.div %a, %b : tensor<4xi32>
  %4 = kiln.max %a, %b : tensor<4xi32>
  %5 = kiln.min %a, %b : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Rank-0 operands give generics with no loops.
// CHECK-DAG: #[[$ID0:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func.func @float_unary
// CHECK-SAME: (%[[X:.+]]: tensor<f64>)
// CHECK: linalg.generic {indexing_maps = [#[[$ID0]], #[[$ID0]]], iterator_types = []} ins(%[[X]] : tensor<f64>)
// CHECK: arith.negf
// CHECK: math.absf
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: arith.maximumf %{{.+}}, %[[ZERO]] : f64
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// rsqrt is 1 / sqrt(x)
// CHECK: %[[ROOT:.+]] = math.sqrt %{{.+}} : f64
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: arith.divf %[[ONE]], %[[ROOT]] : f64
// CHECK: math.tanh
// sigmoid is 1 / (1 + exp(-x))
// CHECK: ^bb0(%[[IN:.+]]: f64, %{{.+}}: f64):
// CHECK-NEXT: %[[ONE2:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[IN]] : f64
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[NEG]] : f64
// CHECK-NEXT: %[[DEN:.+]] = arith.addf %[[ONE2]], %[[EXP]] : f64
// CHECK-NEXT: arith.divf %[[ONE2]], %[[DEN]] : f64
// CHECK: math.sin
// CHECK: math.cos
func.func @float_unary(%x: tensor<f64>) -> (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>) {
  %0 = kiln.neg %x : tensor<f64>
  %1 = kiln.abs %x : tensor<f64>
  %2 = kiln.relu %x : tensor<f64>
  %3 = kiln.exp %x : tensor<f64>
  %4 = kiln.log %x : tensor<f64>
  %5 = kiln.sqrt %x : tensor<f64>
  %6 = kiln.rsqrt %x : tensor<f64>
  %7 = kiln.tanh %x : tensor<f64>
  %8 = kiln.sigmoid %x : tensor<f64>
  %9 = kiln.sin %x : tensor<f64>
  %10 = kiln.cos %x : tensor<f64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>
}

// -----

// CHECK-LABEL: func.func @int_unary
// CHECK: ^bb0(%[[N:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0 : i64
// CHECK-NEXT: arith.subi %[[Z]], %[[N]] : i64
// CHECK: math.absi %{{.+}} : i64
// CHECK: ^bb0(%[[R:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT: %[[Z2:.+]] = arith.constant 0 : i64
// CHECK-NEXT: arith.maxsi %[[R]], %[[Z2]] : i64
func.func @int_unary(%x: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) {
  %0 = kiln.neg %x : tensor<3xi64>
  %1 = kiln.abs %x : tensor<3xi64>
  %2 = kiln.relu %x : tensor<3xi64>
  return %0, %1, %2 : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
}

// -----

// Floats use ordered predicates except `ne` (unordered, true on NaN);
// integers compare signed, i1 unsigned (false < true).
// CHECK-LABEL: func.func @compare
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4xi1>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<4xi1>)
// CHECK: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: i1):
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oge
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi ne, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sgt, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : i1
// CHECK: arith.cmpi ule, %{{.+}}, %{{.+}} : i1
// CHECK: arith.cmpi ugt, %{{.+}}, %{{.+}} : i1
// CHECK: arith.cmpi uge, %{{.+}}, %{{.+}} : i1
func.func @compare(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xi32>, %d: tensor<4xi32>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.compare eq, %a, %b : tensor<4xf32>
  %1 = kiln.compare ne, %a, %b : tensor<4xf32>
  %2 = kiln.compare lt, %a, %b : tensor<4xf32>
  %3 = kiln.compare le, %a, %b : tensor<4xf32>
  %4 = kiln.compare gt, %a, %b : tensor<4xf32>
  %5 = kiln.compare ge, %a, %b : tensor<4xf32>
  %6 = kiln.compare eq, %c, %d : tensor<4xi32>
  %7 = kiln.compare ne, %c, %d : tensor<4xi32>
  %8 = kiln.compare lt, %c, %d : tensor<4xi32>
  %9 = kiln.compare le, %c, %d : tensor<4xi32>
  %10 = kiln.compare gt, %c, %d : tensor<4xi32>
  %11 = kiln.compare ge, %c, %d : tensor<4xi32>
  %12 = kiln.compare lt, %p, %q : tensor<4xi1>
  %13 = kiln.compare le, %p, %q : tensor<4xi1>
  %14 = kiln.compare gt, %p, %q : tensor<4xi1>
  %15 = kiln.compare ge, %p, %q : tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// An elementwise predicate is a third generic input; a rank-0 predicate is
// read once and selects a whole tensor.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[P:.+]]: tensor<2x3xi1>, %[[S:.+]]: tensor<i1>, %[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: %[[R0:.+]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[A]], %[[B]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: ^bb0(%[[IP:.+]]: i1, %[[IA:.+]]: f32, %[[IB:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[SEL:.+]] = arith.select %[[IP]], %[[IA]], %[[IB]] : f32
// CHECK-NEXT: linalg.yield %[[SEL]]
// CHECK: %[[PRED:.+]] = tensor.extract %[[S]][] : tensor<i1>
// CHECK-NEXT: %[[R1:.+]] = arith.select %[[PRED]], %[[A]], %[[B]] : tensor<2x3xf32>
// CHECK: return %[[R0]], %[[R1]]
func.func @select(%p: tensor<2x3xi1>, %s: tensor<i1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = kiln.select %p, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>
  %1 = kiln.select %s, %a, %b : tensor<i1>, tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// CHECK: %[[FZ:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.cmpf une, %{{.+}}, %[[FZ]] : f32
// CHECK: arith.uitofp %{{.+}} : i1 to f32
// CHECK: arith.extui %{{.+}} : i1 to i64
// CHECK: arith.sitofp %{{.+}} : i32 to f64
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: arith.trunci %{{.+}} : i64 to i32
// CHECK: %[[IZ:.+]] = arith.constant 0 : i64
// CHECK-NEXT: arith.cmpi ne, %{{.+}}, %[[IZ]] : i64
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: arith.fptosi %{{.+}} : f64 to i64
func.func @cast(%f: tensor<4xf32>, %d: tensor<4xf64>, %p: tensor<4xi1>, %i: tensor<4xi32>, %l: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>, tensor<4xf64>, tensor<4xi64>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>) {
  %0 = kiln.cast %f : tensor<4xf32> to tensor<4xf64>
  %1 = kiln.cast %d : tensor<4xf64> to tensor<4xf32>
  %2 = kiln.cast %f : tensor<4xf32> to tensor<4xi32>
  %3 = kiln.cast %f : tensor<4xf32> to tensor<4xi1>
  %4 = kiln.cast %p : tensor<4xi1> to tensor<4xf32>
  %5 = kiln.cast %p : tensor<4xi1> to tensor<4xi64>
  %6 = kiln.cast %i : tensor<4xi32> to tensor<4xf64>
  %7 = kiln.cast %i : tensor<4xi32> to tensor<4xi64>
  %8 = kiln.cast %l : tensor<4xi64> to tensor<4xi32>
  %9 = kiln.cast %l : tensor<4xi64> to tensor<4xi1>
  %10 = kiln.cast %l : tensor<4xi64> to tensor<4xf32>
  %11 = kiln.cast %d : tensor<4xf64> to tensor<4xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xf64>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>, tensor<4xf64>, tensor<4xi64>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK: %[[C:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: return %[[C]]
func.func @constant() -> tensor<2x3xf32> {
  %0 = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// iota reads the loop index of its dimension.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @iota
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xi64>
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%{{.+}}: i64):
// CHECK-NEXT: %[[I:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[C:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: linalg.yield %[[C]] : i64
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%{{.+}}: f32):
// CHECK-NEXT: %[[J:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[JC:.+]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT: %[[JF:.+]] = arith.sitofp %[[JC]] : i64 to f32
// CHECK-NEXT: linalg.yield %[[JF]] : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%{{.+}}: i32):
// CHECK-NEXT: %[[K:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[KC:.+]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT: %[[KT:.+]] = arith.trunci %[[KC]] : i64 to i32
// CHECK-NEXT: linalg.yield %[[KT]] : i32
func.func @iota() -> (tensor<2x3xi64>, tensor<3x5xf32>, tensor<4xi32>) {
  %0 = kiln.iota dim = 1 : tensor<2x3xi64>
  %1 = kiln.iota dim = 0 : tensor<3x5xf32>
  %2 = kiln.iota dim = 0 : tensor<4xi32>
  return %0, %1, %2 : tensor<2x3xi64>, tensor<3x5xf32>, tensor<4xi32>
}

// -----

// A rank-0 operand reads no index; a vector reads its mapped dimension; a
// size-1 dimension that broadcasts reads index 0.
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$COL0:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[S:.+]]: tensor<f32>, %[[V:.+]]: tensor<3xf32>, %[[M:.+]]: tensor<3x1xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<f32>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[V]] : tensor<3xf32>) outs(%{{.+}} : tensor<3x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$COL0]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[M]] : tensor<3x1xf32>) outs(%{{.+}} : tensor<3x4xf32>)
func.func @broadcast(%s: tensor<f32>, %v: tensor<3xf32>, %m: tensor<3x1xf32>) -> (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %1 = kiln.broadcast_in_dim %v, dims = [0] : (tensor<3xf32>) -> tensor<3x4xf32>
  %2 = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x4xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// A size-1 dimension that stays size 1 is read through its index, not 0.
// CHECK-DAG: #[[$KEEP:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @broadcast_keep_unit_dim
// CHECK: linalg.generic {indexing_maps = [#[[$KEEP]], #{{.+}}]
func.func @broadcast_keep_unit_dim(%a: tensor<1x1xf32>) -> tensor<1x3x1xf32> {
  %0 = kiln.broadcast_in_dim %a, dims = [0, 2] : (tensor<1x1xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

// Reshape collapses to rank 1 (or 0) and expands to the target.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>, %[[B:.+]]: tensor<6xf32>, %[[C:.+]]: tensor<1x1xf32>, %[[D:.+]]: tensor<f32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[R0:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK: %[[R1:.+]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// CHECK: %[[C1:.+]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
// CHECK: %[[R2:.+]] = tensor.collapse_shape %[[C1]] [] : tensor<1xf32> into tensor<f32>
// CHECK: %[[R3:.+]] = tensor.expand_shape %[[D]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
func.func @reshape(%a: tensor<2x3x4xf32>, %b: tensor<6xf32>, %c: tensor<1x1xf32>, %d: tensor<f32>) -> (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>, tensor<1x1xf32>) {
  %0 = kiln.reshape %a : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  %1 = kiln.reshape %b : (tensor<6xf32>) -> tensor<2x3xf32>
  %2 = kiln.reshape %c : (tensor<1x1xf32>) -> tensor<f32>
  %3 = kiln.reshape %d : (tensor<f32>) -> tensor<1x1xf32>
  return %0, %1, %2, %3 : tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>, tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[A]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: return %[[T]]
func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %a, permutation = [2, 0, 1] : tensor<2x3x4xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Static offsets, result sizes and strides.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[A:.+]]: tensor<10x8xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[A]][1, 0] [3, 4] [3, 2] : tensor<10x8xf32> to tensor<3x4xf32>
// CHECK: return %[[S]]
func.func @slice(%a: tensor<10x8xf32>) -> tensor<3x4xf32> {
  %0 = kiln.slice %a, start = [1, 0], limit = [8, 8], stride = [3, 2] : tensor<10x8xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Each input is inserted at the running offset along the concat dimension.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x1xf32>, %[[C:.+]]: tensor<2x2xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x6xf32>
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x6xf32>
// CHECK: %[[I2:.+]] = tensor.insert_slice %[[C]] into %[[I1]][0, 4] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32>
// CHECK: return %[[I2]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x2xf32>) -> tensor<2x6xf32> {
  %0 = kiln.concat %a, %b, %c dim = 1 : tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// reduce_sum over dims [0, 2]: those iterate as reductions and the output
// map keeps d1; the accumulator starts at 0.
// CHECK-DAG: #[[$IN3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUT1:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IN3]], #[[$OUT1]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[A]] : tensor<2x3x4xf32>) outs(%[[F]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @reduce_sum(%a: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = kiln.reduce_sum %a, dims = [0, 2] : tensor<2x3x4xf32>
  return %0 : tensor<3xf32>
}

// -----

// reduce_max starts from -inf (floats) or the most negative integer.
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @reduce_max
// CHECK: %[[MIN:.+]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[MIN]] : i32) outs(%{{.+}} : tensor<i32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : i32
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFFF0000000000000 : f64
// CHECK: linalg.fill ins(%[[NEGINF]] : f64) outs(%{{.+}} : tensor<3xf64>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f64
func.func @reduce_max(%b: tensor<5xi32>, %c: tensor<3x4xf64>) -> (tensor<i32>, tensor<3xf64>) {
  %0 = kiln.reduce_max %b, dims = [0] : tensor<5xi32>
  %1 = kiln.reduce_max %c, dims = [1] : tensor<3x4xf64>
  return %0, %1 : tensor<i32>, tensor<3xf64>
}

// -----

// reduce_mean is a sum followed by a division by the reduced count (4).
// CHECK-LABEL: func.func @reduce_mean
// CHECK: linalg.fill
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<3xf64>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f64, %{{.+}}: f64):
// CHECK-NEXT: %[[N:.+]] = arith.constant 4.000000e+00 : f64
// CHECK-NEXT: arith.divf %[[IN]], %[[N]] : f64
// CHECK: return %[[MEAN]]
func.func @reduce_mean(%c: tensor<3x4xf64>) -> tensor<3xf64> {
  %0 = kiln.reduce_mean %c, dims = [1] : tensor<3x4xf64>
  return %0 : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<4x5xf32>, %[[C:.+]]: tensor<2x3x4xi32>, %[[D:.+]]: tensor<2x4x5xi32>)
// CHECK: %[[FZ:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%[[FZ]] : f32) outs(%[[E]] : tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[M:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[F]] : tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[IZ:.+]] = arith.constant 0 : i32
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<2x3x5xi32>
// CHECK: %[[F2:.+]] = linalg.fill ins(%[[IZ]] : i32) outs(%[[E2]] : tensor<2x3x5xi32>) -> tensor<2x3x5xi32>
// CHECK: %[[BM:.+]] = linalg.batch_matmul ins(%[[C]], %[[D]] : tensor<2x3x4xi32>, tensor<2x4x5xi32>) outs(%[[F2]] : tensor<2x3x5xi32>) -> tensor<2x3x5xi32>
// CHECK: return %[[M]], %[[BM]]
func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<2x3x4xi32>, %d: tensor<2x4x5xi32>) -> (tensor<3x5xf32>, tensor<2x3x5xi32>) {
  %0 = kiln.matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32>
  %1 = kiln.matmul %c, %d : tensor<2x3x4xi32>, tensor<2x4x5xi32>
  return %0, %1 : tensor<3x5xf32>, tensor<2x3x5xi32>
}

// -----

// gather: the indices are a generic input; each row index is clamped to
// [0, rows - 1] and the table is read with tensor.extract.
// CHECK-DAG: #[[$IDX:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[T:.+]]: tensor<5x3xf32>, %[[I:.+]]: tensor<2x4xi32>)
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x4xi32>) outs(%{{.+}} : tensor<2x4x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: i32, %{{.+}}: f32):
// CHECK-NEXT: %[[ROW:.+]] = arith.index_cast %[[IN]] : i32 to index
// CHECK-NEXT: %[[LO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[HI:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[MAX:.+]] = arith.maxsi %[[ROW]], %[[LO]] : index
// CHECK-NEXT: %[[MIN:.+]] = arith.minsi %[[MAX]], %[[HI]] : index
// CHECK-NEXT: %[[COL:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[V:.+]] = tensor.extract %[[T]][%[[MIN]], %[[COL]]] : tensor<5x3xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @gather(%t: tensor<5x3xf32>, %i: tensor<2x4xi32>) -> tensor<2x4x3xf32> {
  %0 = kiln.gather %t, %i : tensor<5x3xf32>, tensor<2x4xi32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// A lookup in a 256-entry table at a widened byte (kiln-byte-tables' form;
// an i8 byte is shifted by 128): the generic reads the bytes and widens
// them itself (zero-extending a ui8 byte, sign-extending an i8 one), so no
// loop writes the 32-bit indices for it (the casts' own generics are left
// without readers, to the canonicalizer).
// CHECK-LABEL: func.func @byte_lookups
// CHECK-SAME: (%[[T:.+]]: tensor<256xi8>, %[[X:.+]]: tensor<4x8xi8>, %[[Y:.+]]: tensor<4x8xi8>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xi8>) outs(%{{.+}} : tensor<4x8xi8>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT: %[[W:.+]] = arith.extui %[[IN]] : i8 to i32
// CHECK-NEXT: arith.index_cast %[[W]] : i32 to index
// CHECK-NEXT: arith.constant 0 : index
// CHECK: tensor.extract %[[T]]
// CHECK: linalg.generic {{.*}} ins(%[[Y]] : tensor<4x8xi8>) outs(%{{.+}} : tensor<4x8xi8>)
// CHECK-NEXT: ^bb0(%[[IN2:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT: %[[W2:.+]] = arith.extsi %[[IN2]] : i8 to i32
// CHECK-NEXT: %[[ROW2:.+]] = arith.index_cast %[[W2]] : i32 to index
// CHECK-NEXT: %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT: arith.addi %[[ROW2]], %[[C128]] : index
// CHECK: tensor.extract %[[T]]
func.func @byte_lookups(%t: tensor<256xui8>, %x: tensor<4x8xui8>, %y: tensor<4x8xi8>) -> (tensor<4x8xui8>, tensor<4x8xui8>) {
  %i = kiln.cast %x : tensor<4x8xui8> to tensor<4x8xi32>
  %a = kiln.gather %t, %i : tensor<256xui8>, tensor<4x8xi32>
  %j = kiln.cast %y : tensor<4x8xi8> to tensor<4x8xi32>
  %c = kiln.constant dense<128> : tensor<4x8xi32>
  %k = kiln.add %j, %c : tensor<4x8xi32>
  %b = kiln.gather %t, %k : tensor<256xui8>, tensor<4x8xi32>
  return %a, %b : tensor<4x8xui8>, tensor<4x8xui8>
}

// -----

// The cond regions are inlined into scf.if with the inputs substituted.
// CHECK-LABEL: func.func @cond
// CHECK-SAME: (%[[P:.+]]: tensor<i1>, %[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK: %[[R:.+]] = scf.if %[[C]] -> (tensor<4xf32>) {
// CHECK: %[[S:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK: scf.yield %[[S]] : tensor<4xf32>
// CHECK: } else {
// CHECK: %[[N:.+]] = linalg.generic {{.+}} ins(%[[Y]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: scf.yield %[[N]] : tensor<4xf32>
// CHECK: }
// CHECK: return %[[R]]
func.func @cond(%p: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.cond %p, (%x, %y) : tensor<i1>, (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = kiln.add %a, %b : tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %n = kiln.neg %b : tensor<4xf32>
    kiln.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A cond without results still gets both regions.
// CHECK-LABEL: func.func @cond_no_results
// CHECK: %[[C:.+]] = tensor.extract %{{.+}}[] : tensor<i1>
// CHECK: scf.if %[[C]] {
// CHECK: } else {
// CHECK: }
// CHECK: return
func.func @cond_no_results(%p: tensor<i1>, %x: tensor<4xf32>) {
  kiln.cond %p, (%x) : tensor<i1>, (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield
  } else {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield
  }
  return
}

// -----

// The cond region becomes the `before` region ending in scf.condition on the
// extracted predicate; the body becomes the `after` region.
// CHECK-LABEL: func.func @while
// CHECK-SAME: (%[[N:.+]]: tensor<i32>, %[[X:.+]]: tensor<4xf32>)
// CHECK: %[[W:.+]]:2 = scf.while (%[[C:.+]] = %[[N]], %[[V:.+]] = %[[X]]) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
// CHECK: %[[CMP:.+]] = linalg.generic {{.+}} ins(%[[C]], %{{.+}} : tensor<i32>, tensor<i32>) outs(%{{.+}} : tensor<i1>)
// CHECK: arith.cmpi sgt
// CHECK: %[[GO:.+]] = tensor.extract %[[CMP]][] : tensor<i1>
// CHECK: scf.condition(%[[GO]]) %[[C]], %[[V]] : tensor<i32>, tensor<4xf32>
// CHECK: } do {
// CHECK: ^bb0(%[[C2:.+]]: tensor<i32>, %[[V2:.+]]: tensor<4xf32>):
// CHECK: %[[DEC:.+]] = linalg.generic {{.+}} ins(%[[C2]], %{{.+}} : tensor<i32>, tensor<i32>)
// CHECK: arith.subi
// CHECK: %[[EXP:.+]] = linalg.generic {{.+}} ins(%[[V2]] : tensor<4xf32>)
// CHECK: math.exp
// CHECK: scf.yield %[[DEC]], %[[EXP]] : tensor<i32>, tensor<4xf32>
// CHECK: return %[[W]]#0, %[[W]]#1
func.func @while(%n: tensor<i32>, %x: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
  %r:2 = kiln.while (%n, %x) : (tensor<i32>, tensor<4xf32>) cond {
  ^bb0(%c: tensor<i32>, %v: tensor<4xf32>):
    %z = kiln.constant dense<0> : tensor<i32>
    %p = kiln.compare gt, %c, %z : tensor<i32>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%c: tensor<i32>, %v: tensor<4xf32>):
    %one = kiln.constant dense<1> : tensor<i32>
    %c1 = kiln.sub %c, %one : tensor<i32>
    %v1 = kiln.exp %v : tensor<4xf32>
    kiln.yield %c1, %v1 : tensor<i32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<4xf32>
}

// -----

// The body gets the induction variable as a rank-0 i64 tensor.
// CHECK-LABEL: func.func @for
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-DAG: %[[LB:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[UB:.+]] = arith.constant 7 : index
// CHECK-DAG: %[[STEP:.+]] = arith.constant 1 : index
// CHECK: %[[R:.+]] = scf.for %[[IV:.+]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.+]] = %[[X]]) -> (tensor<4xf32>) {
// CHECK-NEXT: %[[I:.+]] = arith.index_cast %[[IV]] : index to i64
// CHECK-NEXT: %[[IT:.+]] = tensor.from_elements %[[I]] : tensor<i64>
// CHECK: linalg.generic {{.+}} ins(%[[IT]] : tensor<i64>)
// CHECK: arith.sitofp
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[ACC]], %{{.+}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: scf.yield %[[SUM]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @for(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.for 7 iterations (%x) : (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %f = kiln.cast %i : tensor<i64> to tensor<f32>
    %b = kiln.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %s = kiln.add %v, %b : tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Nested loops lower inside out; no kiln op survives.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: scf.if
// CHECK-NOT: kiln.
func.func @nested(%x: tensor<i32>) -> tensor<i32> {
  %r = kiln.for 3 iterations (%x) : (tensor<i32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<i32>):
    %w = kiln.while (%v) : (tensor<i32>) cond {
    ^bb0(%c: tensor<i32>):
      %z = kiln.constant dense<10> : tensor<i32>
      %p = kiln.compare lt, %c, %z : tensor<i32>
      kiln.yield %p : tensor<i1>
    } do {
    ^bb0(%c: tensor<i32>):
      %z = kiln.constant dense<0> : tensor<i32>
      %p = kiln.compare gt, %c, %z : tensor<i32>
      %n = kiln.cond %p, (%c) : tensor<i1>, (tensor<i32>) -> (tensor<i32>) {
      ^bb0(%a: tensor<i32>):
        %two = kiln.constant dense<2> : tensor<i32>
        %m = kiln.mul %a, %two : tensor<i32>
        kiln.yield %m : tensor<i32>
      } else {
      ^bb0(%a: tensor<i32>):
        %one = kiln.constant dense<1> : tensor<i32>
        %m = kiln.add %a, %one : tensor<i32>
        kiln.yield %m : tensor<i32>
      }
      kiln.yield %n : tensor<i32>
    }
    kiln.yield %w : tensor<i32>
  }
  return %r : tensor<i32>
}

// -----

// The float functions become their math ops; round is roundeven.
// CHECK-LABEL: func.func @math_functions
// CHECK: math.erf
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.roundeven
// CHECK: math.tan
// CHECK: math.asin
// CHECK: math.acos
// CHECK: math.atan
// CHECK: math.sinh
// CHECK: math.cosh
// CHECK: math.asinh
// CHECK: math.acosh
// CHECK: math.atanh
// CHECK-NOT: kiln.
func.func @math_functions(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.erf %x : tensor<4xf32>
  %1 = kiln.floor %0 : tensor<4xf32>
  %2 = kiln.ceil %1 : tensor<4xf32>
  %3 = kiln.round %2 : tensor<4xf32>
  %4 = kiln.tan %3 : tensor<4xf32>
  %5 = kiln.asin %4 : tensor<4xf32>
  %6 = kiln.acos %5 : tensor<4xf32>
  %7 = kiln.atan %6 : tensor<4xf32>
  %8 = kiln.sinh %7 : tensor<4xf32>
  %9 = kiln.cosh %8 : tensor<4xf32>
  %10 = kiln.asinh %9 : tensor<4xf32>
  %11 = kiln.acosh %10 : tensor<4xf32>
  %12 = kiln.atanh %11 : tensor<4xf32>
  return %12 : tensor<4xf32>
}

// -----

// kiln.conv: the input with its padding (and input dilation, as the stride
// of the insertion) in a zero-filled tensor, viewed as [N, G, C/G, ...];
// the weight as [G, O/G, C/G, ...]; one generic over (n, g, o, e0, e1, c,
// k0, k1) reading x^ at e * stride + k * rhs_dilation, accumulating into a
// zero fill; the result viewed as [N, O, ...].
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 + d7 * 3)>
// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x5x6xf32>, %[[W:.*]]: tensor<6x2x3x2xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4x11x7xf32>
// CHECK:         %[[PAD:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x4x11x7xf32>)
// CHECK:         %[[XHAT:.*]] = tensor.insert_slice %[[X]] into %[[PAD]][0, 0, 1, 1] [2, 4, 5, 6] [1, 1, 2, 1]
// CHECK:         %[[XG:.*]] = tensor.expand_shape %[[XHAT]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 2, 11, 7]
// CHECK:         %[[WG:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 2]
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x2x3x5x4xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME:      ins(%[[XG]], %[[WG]] : tensor<2x2x2x11x7xf32>, tensor<2x3x2x3x2xf32>) outs(%[[INIT]] : tensor<2x2x3x5x4xf32>)
// CHECK:           %[[P:.*]] = arith.mulf
// CHECK:           %[[S:.*]] = arith.addf %{{.*}}, %[[P]]
// CHECK:           linalg.yield %[[S]]
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x3x5x4xf32> into tensor<2x6x5x4xf32>
// CHECK:         return %[[R]]
func.func @conv(%x: tensor<2x4x5x6xf32>, %w: tensor<6x2x3x2xf32>) -> tensor<2x6x5x4xf32> {
  %y = kiln.conv %x, %w, strides = [2, 1], padding_low = [1, 1], padding_high = [1, 0], lhs_dilation = [2, 1], rhs_dilation = [1, 3], groups = 2 : tensor<2x4x5x6xf32>, tensor<6x2x3x2xf32>
  return %y : tensor<2x6x5x4xf32>
}

// -----

// sign: x > 0 ? 1 : (x < 0 ? -1 : x), so zeros and NaN pass through.
// CHECK-LABEL: func.func @sign_f64
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.+]]: f64, %{{.+}}: f64):
// CHECK-DAG: %[[POS:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : f64
// CHECK-DAG: %[[NEG:.+]] = arith.cmpf olt, %[[X]], %{{.+}} : f64
// CHECK: %[[INNER:.+]] = arith.select %[[NEG]], %{{.+}}, %[[X]] : f64
// CHECK: %[[OUT:.+]] = arith.select %[[POS]], %{{.+}}, %[[INNER]] : f64
// CHECK: linalg.yield %[[OUT]]
func.func @sign_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = kiln.sign %x : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// Without padding or input dilation the input is read as it is; an empty
// result is a fill.
// CHECK-LABEL: func.func @conv_plain(
// CHECK-SAME:    %[[X:.*]]: tensor<1x2x5xf64>
// CHECK-NOT:     tensor.insert_slice
// CHECK:         tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3]] output_shape [1, 1, 2, 5]
// CHECK:         linalg.generic
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<1x3x0xf64>
// CHECK:         %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%[[EMPTY]] : tensor<1x3x0xf64>)
// CHECK:         return %{{.*}}, %[[FILLED]]
func.func @conv_plain(%x: tensor<1x2x5xf64>, %w: tensor<3x2x2xf64>, %v: tensor<3x2x7xf64>) -> (tensor<1x3x4xf64>, tensor<1x3x0xf64>) {
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x2x5xf64>, tensor<3x2x2xf64>
  %z = kiln.conv %x, %v, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x2x5xf64>, tensor<3x2x7xf64>
  return %y, %z : tensor<1x3x4xf64>, tensor<1x3x0xf64>
}

// -----

// Integer rem never divides by 0 or -1: both become 1 (remainder 0), and a
// zero divisor selects the dividend. Float rem is arith.remf (fmod).
// CHECK-LABEL: func.func @rem
// CHECK: ^bb0(%[[A:.+]]: i32, %[[B:.+]]: i32, %{{.+}}: i32):
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[M1:.+]] = arith.constant -1 : i32
// CHECK-DAG: %[[ISZERO:.+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i32
// CHECK-DAG: %[[ISM1:.+]] = arith.cmpi eq, %[[B]], %[[M1]] : i32
// CHECK: %[[UNSAFE:.+]] = arith.ori %[[ISZERO]], %[[ISM1]] : i1
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: %[[DIV:.+]] = arith.select %[[UNSAFE]], %[[ONE]], %[[B]] : i32
// CHECK: %[[REM:.+]] = arith.remsi %[[A]], %[[DIV]] : i32
// CHECK: %[[OUT:.+]] = arith.select %[[ISZERO]], %[[A]], %[[REM]] : i32
// CHECK: linalg.yield %[[OUT]]
// CHECK: arith.remf %{{.+}}, %{{.+}} : f32
func.func @rem(%a: tensor<4xi32>, %b: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>) {
  %0 = kiln.rem %a, %b : tensor<4xi32>
  %1 = kiln.rem %x, %y : tensor<4xf32>
  return %0, %1 : tensor<4xi32>, tensor<4xf32>
}

// -----

// not is xor with all ones; and/or/xor are the arith ops.
// CHECK-LABEL: func.func @bitwise
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: arith.xori %{{.+}}, %[[TRUE]] : i1
// CHECK: %[[ONES:.+]] = arith.constant -1 : i64
// CHECK: arith.xori %{{.+}}, %[[ONES]] : i64
// CHECK: arith.andi %{{.+}}, %{{.+}} : i64
// CHECK: arith.ori %{{.+}}, %{{.+}} : i64
// CHECK: arith.xori %{{.+}}, %{{.+}} : i1
func.func @bitwise(%p: tensor<4xi1>, %q: tensor<4xi1>, %i: tensor<4xi64>, %j: tensor<4xi64>) -> (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi1>) {
  %0 = kiln.not %p : tensor<4xi1>
  %1 = kiln.not %i : tensor<4xi64>
  %2 = kiln.and %i, %j : tensor<4xi64>
  %3 = kiln.or %i, %j : tensor<4xi64>
  %4 = kiln.xor %p, %q : tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi1>
}

// -----

// argmax: a parallel generic over the result whose body scans the slice
// from index 1, starting from element 0. Floats replace the best on a NaN
// or a larger value, unless the best is already NaN.
// CHECK-LABEL: func.func @argmax_f32
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}], iterator_types = ["parallel"]} outs(%{{.+}} : tensor<3xi64>)
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[FIRST:.+]] = tensor.extract %[[X]][%[[ROW]], %[[C0:.+]]] : tensor<3x5xf32>
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[BEST:.+]] = %[[FIRST]], %[[IDX:.+]] = %[[C0]]) -> (f32, index)
// CHECK: %[[CAND:.+]] = tensor.extract %[[X]][%[[ROW]], %[[K]]]
// CHECK-DAG: %[[BESTNAN:.+]] = arith.cmpf uno, %[[BEST]], %[[BEST]]
// CHECK-DAG: %[[CANDNAN:.+]] = arith.cmpf uno, %[[CAND]], %[[CAND]]
// CHECK-DAG: %[[BETTER:.+]] = arith.cmpf ogt, %[[CAND]], %[[BEST]]
// CHECK: %[[EITHER:.+]] = arith.ori %[[CANDNAN]], %[[BETTER]]
// CHECK: %[[REPLACE:.+]] = arith.select %[[BESTNAN]], %{{.+}}, %[[EITHER]] : i1
// CHECK: arith.select %[[REPLACE]], %[[CAND]], %[[BEST]] : f32
// CHECK: arith.select %[[REPLACE]], %[[K]], %[[IDX]] : index
// CHECK: arith.index_cast %[[LOOP]]#1 : index to i64
func.func @argmax_f32(%x: tensor<3x5xf32>) -> tensor<3xi64> {
  %0 = kiln.argmax %x, dim = 1 : tensor<3x5xf32>
  return %0 : tensor<3xi64>
}

// -----

// argmin with select_last_index on integers: smaller, or equal.
// CHECK-LABEL: func.func @argmin_last_i32
// CHECK: scf.for
// CHECK-DAG: %[[LESS:.+]] = arith.cmpi slt
// CHECK-DAG: %[[TIE:.+]] = arith.cmpi eq
// CHECK: arith.ori %[[LESS]], %[[TIE]] : i1
func.func @argmin_last_i32(%x: tensor<4x3xi32>) -> tensor<3xi64> {
  %0 = kiln.argmin %x, dim = 0 select_last_index : tensor<4x3xi32>
  return %0 : tensor<3xi64>
}

// -----

// cumsum: an scf.for over the summed dim carrying the running sum of one
// slice and the result; the addition writes into the running sum. Reverse
// visits k = n-1-i; exclusive inserts before adding.
// CHECK-LABEL: func.func @cumsum_exclusive_reverse
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>)
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x1xf32>)
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<4x3xf32>
// CHECK-DAG: %[[N:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[LAST:.+]] = arith.constant 2 : index
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[SUM:.+]] = %[[INIT]], %[[RES:.+]] = %[[OUT]])
// CHECK: %[[K:.+]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK: %[[ROW:.+]] = tensor.extract_slice %[[X]][0, %[[K]]] [4, 1] [1, 1] : tensor<4x3xf32> to tensor<4x1xf32>
// CHECK: %[[INS:.+]] = tensor.insert_slice %[[SUM]] into %[[RES]][0, %[[K]]] [4, 1] [1, 1]
// CHECK: %[[NEXT:.+]] = linalg.generic {{.+}} ins(%[[ROW]] : tensor<4x1xf32>) outs(%[[SUM]] : tensor<4x1xf32>)
// CHECK: arith.addf
// CHECK: scf.yield %[[NEXT]], %[[INS]]
// CHECK: return %[[LOOP]]#1
func.func @cumsum_exclusive_reverse(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.cumsum %x, dim = 1 exclusive reverse : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Inclusive and forward on integers: add, then insert, at k = i.
// CHECK-LABEL: func.func @cumsum_i64
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[SUM:.+]] = %{{.+}}, %[[RES:.+]] = %{{.+}})
// CHECK: %[[ROW:.+]] = tensor.extract_slice %{{.+}}[%[[I]], 0] [1, 2] [1, 1]
// CHECK: %[[NEXT:.+]] = linalg.generic {{.+}} ins(%[[ROW]] : tensor<1x2xi64>) outs(%[[SUM]] : tensor<1x2xi64>)
// CHECK: arith.addi
// CHECK: %[[INS:.+]] = tensor.insert_slice %[[NEXT]] into %[[RES]][%[[I]], 0] [1, 2] [1, 1]
// CHECK: scf.yield %[[NEXT]], %[[INS]]
func.func @cumsum_i64(%x: tensor<5x2xi64>) -> tensor<5x2xi64> {
  %0 = kiln.cumsum %x, dim = 0 : tensor<5x2xi64>
  return %0 : tensor<5x2xi64>
}

// -----

// An empty cumsum is its operand.
// CHECK-LABEL: func.func @cumsum_empty
// CHECK-SAME: (%[[X:.+]]: tensor<0x3xf32>)
// CHECK-NOT: scf.for
// CHECK: return %[[X]]
func.func @cumsum_empty(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %0 = kiln.cumsum %x, dim = 1 : tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

// kiln.reverse: a generic reading the reversed dims from the end.
// CHECK-DAG: #[[$REV:.+]] = affine_map<(d0, d1, d2) -> (-d0 + 2, d1, -d2 + 3)>
// CHECK-LABEL: func.func @reverse(
// CHECK:         linalg.generic {indexing_maps = [#[[$REV]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      linalg.yield %[[IN]] : i32
func.func @reverse(%x: tensor<3x2x4xi32>) -> tensor<3x2x4xi32> {
  %r = kiln.reverse %x, dims = [0, 2] : tensor<3x2x4xi32>
  return %r : tensor<3x2x4xi32>
}
