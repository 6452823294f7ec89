// The kiln-to-linalg conversion of ui8 ... ui64: the lowering picks the
// unsigned arith ops from the kiln types, then erases the sign, so that
// everything below kiln (tensors, block arguments, constants, function
// signatures) is signless. i8 and i16 lower like i32.
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @div_rem_ui8
// CHECK-SAME: (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>)
// CHECK: arith.divui %{{.+}}, %{{.+}} : i8
// CHECK-NOT: arith.divsi
// CHECK: arith.remui %{{.+}}, %{{.+}} : i8
// CHECK-NOT: ui8
func.func @div_rem_ui8(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui8>) {
  %0 = kiln.div %a, %b : tensor<4xui8>
  %1 = kiln.rem %a, %b : tensor<4xui8>
  return %0, %1 : tensor<4xui8>, tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @max_min_compare_ui16
// CHECK: arith.maxui %{{.+}}, %{{.+}} : i16
// CHECK: arith.minui %{{.+}}, %{{.+}} : i16
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : i16
// CHECK: arith.cmpi uge, %{{.+}}, %{{.+}} : i16
// CHECK-NOT: ui16
func.func @max_min_compare_ui16(%a: tensor<4xui16>, %b: tensor<4xui16>) -> (tensor<4xui16>, tensor<4xui16>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.max %a, %b : tensor<4xui16>
  %1 = kiln.min %a, %b : tensor<4xui16>
  %2 = kiln.compare lt, %a, %b : tensor<4xui16>
  %3 = kiln.compare ge, %a, %b : tensor<4xui16>
  return %0, %1, %2, %3 : tensor<4xui16>, tensor<4xui16>, tensor<4xi1>, tensor<4xi1>
}

// -----

// The signed counterparts stay signed on i8.
// CHECK-LABEL: func.func @signed_i8
// CHECK: arith.divsi %{{.+}}, %{{.+}} : i8
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : i8
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i8
func.func @signed_i8(%a: tensor<4xi8>, %b: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi1>) {
  %0 = kiln.div %a, %b : tensor<4xi8>
  %1 = kiln.max %a, %b : tensor<4xi8>
  %2 = kiln.compare lt, %a, %b : tensor<4xi8>
  return %0, %1, %2 : tensor<4xi8>, tensor<4xi8>, tensor<4xi1>
}

// -----

// Casts: unsigned to float is uitofp, float to unsigned fptoui (saturated
// by selects), widening an unsigned type extui, and a change of sign only
// a bit cast, which folds away once the sign is gone.
// CHECK-LABEL: func.func @casts_ui32
// CHECK: arith.uitofp %{{.+}} : i32 to f32
// CHECK: arith.fptoui %{{.+}} : f32 to i32
// CHECK: arith.extui %{{.+}} : i32 to i64
// CHECK: arith.bitcast %{{.+}} : i32 to i32
// CHECK-NOT: ui32
func.func @casts_ui32(%a: tensor<4xui32>, %f: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xui32>, tensor<4xi64>, tensor<4xi32>) {
  %0 = kiln.cast %a : tensor<4xui32> to tensor<4xf32>
  %1 = kiln.cast %f : tensor<4xf32> to tensor<4xui32>
  %2 = kiln.cast %a : tensor<4xui32> to tensor<4xi64>
  %3 = kiln.cast %a : tensor<4xui32> to tensor<4xi32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xui32>, tensor<4xi64>, tensor<4xi32>
}

// -----

// Shifts select the result for amounts of at least the width (uge, so that
// negative signed amounts count as huge); right shifts are logical on
// unsigned types and arithmetic on signed ones.
// CHECK-LABEL: func.func @shifts
// CHECK: arith.cmpi uge
// CHECK: arith.shli %{{.+}}, %{{.+}} : i8
// CHECK: arith.cmpi uge
// CHECK: arith.shrui %{{.+}}, %{{.+}} : i8
// CHECK: arith.cmpi uge
// CHECK: arith.shrsi %{{.+}}, %{{.+}} : i64
func.func @shifts(%a: tensor<4xui8>, %b: tensor<4xi64>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xi64>) {
  %0 = kiln.shift_left %a, %a : tensor<4xui8>
  %1 = kiln.shift_right %a, %a : tensor<4xui8>
  %2 = kiln.shift_right %b, %b : tensor<4xi64>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xui8>, tensor<4xi64>
}

// -----

// Reductions and pooling start from the unsigned minimum, 0, and combine
// with maxui; argmax compares with ugt.
// CHECK-LABEL: func.func @reduce_max_ui8
// CHECK: arith.constant 0 : i8
// CHECK: linalg.fill
// CHECK: arith.maxui
// CHECK-NOT: ui8
func.func @reduce_max_ui8(%a: tensor<4x3xui8>) -> tensor<4xui8> {
  %0 = kiln.reduce_max %a, dims = [1] : tensor<4x3xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @argmax_ui64
// CHECK: arith.cmpi ugt
// CHECK-NOT: ui64
func.func @argmax_ui64(%a: tensor<4x3xui64>) -> tensor<4xi64> {
  %0 = kiln.argmax %a, dim = 1 : tensor<4x3xui64>
  return %0 : tensor<4xi64>
}

// -----

// Constants keep their bits: 255 as ui8 is -1 as i8.
// CHECK-LABEL: func.func @constant_ui8
// CHECK-SAME: () -> tensor<2xi8>
// CHECK: arith.constant dense<[-1, 1]> : tensor<2xi8>
func.func @constant_ui8() -> tensor<2xui8> {
  %0 = kiln.constant dense<[255, 1]> : tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// Unsigned values carried through a loop: the scf.for's iteration argument
// and the body's block arguments lose the sign too.
// CHECK-LABEL: func.func @loop_ui16
// CHECK-SAME: (%{{.+}}: tensor<4xi16>) -> tensor<4xi16>
// CHECK: scf.for
// CHECK-NOT: ui16
func.func @loop_ui16(%a: tensor<4xui16>) -> tensor<4xui16> {
  %r = kiln.for 3 iterations (%a) : (tensor<4xui16>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xui16>):
    %n = kiln.div %v, %v : tensor<4xui16>
    kiln.yield %n : tensor<4xui16>
  }
  return %r : tensor<4xui16>
}

// -----

// 8-bit operands widened into i32: a generic that widens each operand by
// its own signedness (extui for ui8, extsi for i8), batched or not.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BA:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BB:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[BC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_widened_bytes
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xi8>, %[[Y:.+]]: tensor<3x4xi8>, %[[U:.+]]: tensor<5x2x3xi8>, %[[V:.+]]: tensor<5x3x4xi8>)
// CHECK: %[[Z:.+]] = arith.constant 0 : i32
// CHECK: %[[F:.+]] = linalg.fill ins(%[[Z]] : i32) outs(%{{.+}} : tensor<2x4xi32>)
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[Y]] : tensor<2x3xi8>, tensor<3x4xi8>) outs(%[[F]] : tensor<2x4xi32>)
// CHECK-NEXT: ^bb0(%[[P:.+]]: i8, %[[Q:.+]]: i8, %[[ACC:.+]]: i32):
// CHECK-NEXT: %[[PW:.+]] = arith.extui %[[P]] : i8 to i32
// CHECK-NEXT: %[[QW:.+]] = arith.extsi %[[Q]] : i8 to i32
// CHECK-NEXT: %[[M:.+]] = arith.muli %[[PW]], %[[QW]] : i32
// CHECK-NEXT: %[[S:.+]] = arith.addi %[[ACC]], %[[M]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK: linalg.generic {indexing_maps = [#[[BA]], #[[BB]], #[[BC]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[U]], %[[V]] : tensor<5x2x3xi8>, tensor<5x3x4xi8>)
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK-NEXT: arith.extui %{{.+}} : i8 to i32
// CHECK-NOT: ui8
func.func @matmul_widened_bytes(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %c: tensor<5x2x3xi8>, %d: tensor<5x3x4xui8>) -> (tensor<2x4xi32>, tensor<5x2x4xi32>) {
  %0 = kiln.matmul %a, %b : tensor<2x3xui8>, tensor<3x4xi8> -> i32
  %1 = kiln.matmul %c, %d : tensor<5x2x3xi8>, tensor<5x3x4xui8> -> i32
  return %0, %1 : tensor<2x4xi32>, tensor<5x2x4xi32>
}
