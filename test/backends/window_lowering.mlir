// kiln.pad, kiln.reduce_window and kiln.reduce_window_max_grad lowered to
// linalg: pad is a broadcast of the value and a strided insert_slice; the
// pools are parallel generics (no reduction iterators) that walk the window
// with scf.for and read the operand with tensor.extract at clamped
// positions; max_grad is two parallel generics.
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg --canonicalize | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg=row-loops=true --canonicalize | FileCheck %s --check-prefix=ROWS

// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[V:.+]]: tensor<f32>)
// CHECK: %[[FILL:.+]] = linalg.generic {indexing_maps = [#[[$SCALAR]], {{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V]] : tensor<f32>)
// CHECK: %[[R:.+]] = tensor.insert_slice %[[X]] into %[[FILL]][1, 0] [2, 3] [2, 3] : tensor<2x3xf32> into tensor<4x9xf32>
// CHECK: return %[[R]]
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<4x9xf32> {
  %p = kiln.pad %x, %v, low = [1, 0], high = [0, 2], interior = [1, 2] : tensor<2x3xf32>, tensor<f32>
  return %p : tensor<4x9xf32>
}

// -----

// An empty operand leaves only the fill; a rank-0 pad is the operand.
// CHECK-LABEL: func.func @pad_empty
// CHECK-SAME: (%[[X:.+]]: tensor<0xi32>, %[[V:.+]]: tensor<i32>)
// CHECK: %[[FILL:.+]] = linalg.generic
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[FILL]], %[[V]]
func.func @pad_empty(%x: tensor<0xi32>, %v: tensor<i32>) -> (tensor<3xi32>, tensor<i32>) {
  %p = kiln.pad %x, %v, low = [1], high = [2], interior = [4] : tensor<0xi32>, tensor<i32>
  %q = kiln.pad %v, %v, low = [], high = [], interior = [] : tensor<i32>, tensor<i32>
  return %p, %q : tensor<3xi32>, tensor<i32>
}

// -----

// A 2x2 window with padding only below the last dim: positions are
// checked and clamped there only; dims with a one-element window get no
// loop.
// CHECK-LABEL: func.func @max_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4xf32>)
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: %[[I2:.+]] = linalg.index 2 : index
// CHECK: scf.for %[[W1:.+]] = {{.+}} iter_args(%[[ACC1:.+]] = %[[NEGINF]]) -> (f32)
// CHECK: scf.for %[[W2:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[ACC1]]) -> (f32)
// CHECK: arith.cmpi sge
// CHECK: arith.maxsi
// CHECK-NOT: arith.cmpi
// CHECK: %[[E:.+]] = tensor.extract %[[X]]
// CHECK: %[[S:.+]] = arith.select %{{.+}}, %[[E]], %[[NEGINF]] : f32
// CHECK: %[[M:.+]] = arith.maximumf %[[ACC]], %[[S]] : f32
// CHECK: scf.yield %[[M]] : f32
// CHECK-NOT: kiln.
func.func @max_pool(%x: tensor<1x4x4xf32>) -> tensor<1x3x4xf32> {
  %y = kiln.reduce_window %x, kind = max, window = [1, 2, 2], strides = [1, 1, 1], padding_low = [0, 0, 1], padding_high = [0, 0, 0], dilations = [1, 1, 1] : tensor<1x4x4xf32>
  return %y : tensor<1x3x4xf32>
}

// -----

// Integer sums: no padding, so no checks; stride and dilation scale the
// position.
// CHECK-LABEL: func.func @sum_pool
// CHECK: linalg.generic
// CHECK: scf.for
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: tensor.extract
// CHECK: arith.addi %{{.+}}, %{{.+}} : i32
func.func @sum_pool(%x: tensor<9xi32>) -> tensor<3xi32> {
  %y = kiln.reduce_window %x, kind = sum, window = [3], strides = [2], padding_low = [0], padding_high = [0], dilations = [2] : tensor<9xi32>
  return %y : tensor<3xi32>
}

// -----

// An empty operand: every window is padding, so the result is the identity.
// CHECK-LABEL: func.func @empty_operand
// CHECK: %[[ID:.+]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[ID]] : i32)
// CHECK-NOT: linalg.generic
func.func @empty_operand(%x: tensor<0xi32>) -> tensor<3xi32> {
  %y = kiln.reduce_window %x, kind = max, window = [1], strides = [1], padding_low = [1], padding_high = [2], dilations = [1] : tensor<0xi32>
  return %y : tensor<3xi32>
}

// -----

// First the position each window selects (-1 before any), then each
// element sums the cotangents of the windows that selected it, visiting
// the window offsets backwards.
// CHECK-LABEL: func.func @max_grad
// CHECK-SAME: (%[[X:.+]]: tensor<5xf32>, %[[DY:.+]]: tensor<3xf32>)
// CHECK-DAG: %[[NONE:.+]] = arith.constant -1 : i64
// CHECK: %[[SEL:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<3xi64>)
// CHECK: scf.for {{.+}} iter_args(%[[BEST:.+]] = %{{.+}}, %[[INDEX:.+]] = %[[NONE]]) -> (f32, i64)
// CHECK: %[[E:.+]] = tensor.extract %[[X]]
// CHECK: arith.cmpf ogt, %[[E]], %[[BEST]] : f32
// CHECK: arith.cmpf uno, %[[E]], %[[E]] : f32
// CHECK: %[[DX:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<5xf32>)
// CHECK: scf.for
// CHECK: arith.subi %c1, %{{.+}} : index
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: %[[CHOSEN:.+]] = tensor.extract %[[SEL]]
// CHECK: arith.cmpi eq, %[[CHOSEN]]
// CHECK: tensor.extract %[[DY]]
// CHECK: arith.addf
// CHECK: return %[[DX]]
func.func @max_grad(%x: tensor<5xf32>, %dy: tensor<3xf32>) -> tensor<5xf32> {
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [2], strides = [2], padding_low = [1], padding_high = [0], dilations = [1] : tensor<5xf32>, tensor<3xf32>
  return %dx : tensor<5xf32>
}

// -----

// With row-loops (the CPU's choice) the last result dim is a sequential
// inner loop (declared a reduction) and is split where the windows stop
// reaching into the padding: column 0 (window at -2 and 0, dilation 2) and
// column 4 (at 6 and 8) are checked, columns 1 to 3 are not. Without
// padding in the last dim there is one generic.
// ROWS-LABEL: func.func @rows
// ROWS-SAME: (%[[X:.+]]: tensor<3x8xf32>)
// ROWS: %[[E:.+]] = tensor.empty() : tensor<3x5xf32>
// ROWS: %[[S0:.+]] = tensor.extract_slice %[[E]][0, 0] [3, 1] [1, 1]
// ROWS: %[[G0:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]} outs(%[[S0]] : tensor<3x1xf32>)
// ROWS: arith.cmpi sge
// ROWS: %[[I0:.+]] = tensor.insert_slice %[[G0]] into %[[E]][0, 0] [3, 1] [1, 1]
// ROWS: %[[S1:.+]] = tensor.extract_slice %[[I0]][0, 1] [3, 3] [1, 1]
// ROWS: %[[G1:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]} outs(%[[S1]] : tensor<3x3xf32>)
// ROWS-NOT: arith.cmpi
// ROWS-NOT: arith.select
// ROWS: %[[I1:.+]] = tensor.insert_slice %[[G1]] into %[[I0]][0, 1] [3, 3] [1, 1]
// ROWS: %[[S2:.+]] = tensor.extract_slice %[[I1]][0, 4] [3, 1] [1, 1]
// ROWS: %[[G2:.+]] = linalg.generic {{.+}} outs(%[[S2]] : tensor<3x1xf32>)
// ROWS: arith.cmpi sle
// ROWS: %[[I2:.+]] = tensor.insert_slice %[[G2]] into %[[I1]][0, 4] [3, 1] [1, 1]
// ROWS: linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]} outs(%{{.+}} : tensor<4x4xf32>)
// ROWS-NOT: tensor.insert_slice
// ROWS: return %[[I2]]
func.func @rows(%x: tensor<3x8xf32>) -> (tensor<3x5xf32>, tensor<4x4xf32>) {
  %y = kiln.reduce_window %x, kind = sum, window = [1, 2], strides = [1, 2], padding_low = [0, 2], padding_high = [0, 1], dilations = [1, 2] : tensor<3x8xf32>
  %z = kiln.reduce_window %x, kind = max, window = [1, 2], strides = [1, 2], padding_low = [1, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<3x8xf32>
  return %y, %z : tensor<3x5xf32>, tensor<4x4xf32>
}
