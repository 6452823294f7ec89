// kiln.pad, kiln.reduce_window and kiln.reduce_window_max_grad: custom and
// generic forms round-trip, result types are inferred (the custom form
// spells only the operand types), and the window kind prints as a keyword.
// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @pads
// CHECK-SAME:      (%[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>,
// CHECK: kiln.pad %[[X]], %[[V]], low = [1, 0], high = [0, 2], interior = [0, 1] : tensor<2x3xf32>, tensor<f32>
// CHECK: kiln.pad %{{.*}}, %{{.*}}, low = [0], high = [3], interior = [4] : tensor<0xi1>, tensor<i1>
// CHECK: kiln.pad %{{.*}}, %{{.*}}, low = [], high = [], interior = [] : tensor<i64>, tensor<i64>
// GENERIC: "kiln.pad"(%{{.*}}, %{{.*}}) <{high = array<i64: 0, 2>, interior = array<i64: 0, 1>, low = array<i64: 1, 0>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x7xf32>
// GENERIC: "kiln.pad"(%{{.*}}, %{{.*}}) <{high = array<i64: 3>, interior = array<i64: 4>, low = array<i64: 0>}> : (tensor<0xi1>, tensor<i1>) -> tensor<3xi1>
func.func @pads(%x: tensor<2x3xf32>, %v: tensor<f32>, %e: tensor<0xi1>, %b: tensor<i1>, %s: tensor<i64>) -> (tensor<3x7xf32>, tensor<3xi1>, tensor<i64>) {
  %0 = kiln.pad %x, %v, low = [1, 0], high = [0, 2], interior = [0, 1] : tensor<2x3xf32>, tensor<f32>
  %1 = kiln.pad %e, %b, low = [0], high = [3], interior = [4] : tensor<0xi1>, tensor<i1>
  %2 = kiln.pad %s, %s, low = [], high = [], interior = [] : tensor<i64>, tensor<i64>
  return %0, %1, %2 : tensor<3x7xf32>, tensor<3xi1>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @pools
// CHECK: kiln.reduce_window %{{.*}}, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x2x8x8xf32>
// CHECK: kiln.reduce_window %{{.*}}, kind = sum, window = [3], strides = [1], padding_low = [0], padding_high = [0], dilations = [2] : tensor<7xi32>
// CHECK: kiln.reduce_window %{{.*}}, kind = max, window = [2], strides = [1], padding_low = [1], padding_high = [1], dilations = [1] : tensor<0xf64>
// GENERIC: "kiln.reduce_window"(%{{.*}}) <{dilations = array<i64: 1, 1, 1, 1>, kind = 0 : i32, padding_high = array<i64: 0, 0, 1, 1>, padding_low = array<i64: 0, 0, 1, 1>, strides = array<i64: 1, 1, 2, 2>, window = array<i64: 1, 1, 3, 3>}> : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
// GENERIC: "kiln.reduce_window"(%{{.*}}) <{dilations = array<i64: 2>, kind = 1 : i32,
// GENERIC-SAME: -> tensor<3xi32>
// GENERIC: "kiln.reduce_window"{{.*}} : (tensor<0xf64>) -> tensor<1xf64>
func.func @pools(%x: tensor<1x2x8x8xf32>, %i: tensor<7xi32>, %e: tensor<0xf64>) -> (tensor<1x2x4x4xf32>, tensor<3xi32>, tensor<1xf64>) {
  %0 = kiln.reduce_window %x, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x2x8x8xf32>
  %1 = kiln.reduce_window %i, kind = sum, window = [3], strides = [1], padding_low = [0], padding_high = [0], dilations = [2] : tensor<7xi32>
  %2 = kiln.reduce_window %e, kind = max, window = [2], strides = [1], padding_low = [1], padding_high = [1], dilations = [1] : tensor<0xf64>
  return %0, %1, %2 : tensor<1x2x4x4xf32>, tensor<3xi32>, tensor<1xf64>
}

// -----

// An empty padded dimension has no placements; window and stride 1 on N and
// C keep them.
// CHECK-LABEL: func.func @empty_batch
// CHECK: kiln.reduce_window %{{.*}} : tensor<0x3x4xf32>
// GENERIC: -> tensor<0x3x2xf32>
func.func @empty_batch(%x: tensor<0x3x4xf32>) -> tensor<0x3x2xf32> {
  %0 = kiln.reduce_window %x, kind = sum, window = [1, 1, 2], strides = [1, 1, 2], padding_low = [0, 0, 0], padding_high = [0, 0, 0], dilations = [1, 1, 1] : tensor<0x3x4xf32>
  return %0 : tensor<0x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @max_grad
// CHECK: kiln.reduce_window_max_grad %{{.*}}, %{{.*}}, window = [2, 2], strides = [2, 1], padding_low = [0, 1], padding_high = [1, 0], dilations = [1, 2] : tensor<4x5xf32>, tensor<2x4xf32>
// GENERIC: "kiln.reduce_window_max_grad"(%{{.*}}, %{{.*}}) <{dilations = array<i64: 1, 2>, padding_high = array<i64: 1, 0>, padding_low = array<i64: 0, 1>, strides = array<i64: 2, 1>, window = array<i64: 2, 2>}> : (tensor<4x5xf32>, tensor<2x4xf32>) -> tensor<4x5xf32>
func.func @max_grad(%x: tensor<4x5xf32>, %dy: tensor<2x4xf32>) -> tensor<4x5xf32> {
  %0 = kiln.reduce_window_max_grad %x, %dy, window = [2, 2], strides = [2, 1], padding_low = [0, 1], padding_high = [1, 0], dilations = [1, 2] : tensor<4x5xf32>, tensor<2x4xf32>
  return %0 : tensor<4x5xf32>
}
