// Round trips for every kiln op: custom form -> print -> parse again, and the
// generic form (--mlir-print-op-generic) parsed back into the custom form.
// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @constants
// CHECK: kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: kiln.constant dense<3.000000e+00> : tensor<2x2xf16>
// CHECK: kiln.constant dense<-1.500000e+00> : tensor<3xbf16>
// CHECK: kiln.constant dense<2.500000e-01> : tensor<f64>
// CHECK: kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK: kiln.constant dense<7> : tensor<i32>
// CHECK: kiln.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>
// GENERIC-LABEL: "func.func"
// GENERIC-SAME: sym_name = "constants"
// GENERIC: "kiln.constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>
func.func @constants() -> (tensor<2xf32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<f64>, tensor<2xi1>, tensor<i32>, tensor<2xi64>) {
  %0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = kiln.constant dense<3.0> : tensor<2x2xf16>
  %2 = kiln.constant dense<-1.5> : tensor<3xbf16>
  %3 = kiln.constant dense<0.25> : tensor<f64>
  %4 = kiln.constant dense<[true, false]> : tensor<2xi1>
  %5 = kiln.constant dense<7> : tensor<i32>
  %6 = kiln.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2xf32>, tensor<2x2xf16>, tensor<3xbf16>, tensor<f64>, tensor<2xi1>, tensor<i32>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @iota
// CHECK: kiln.iota dim = 1 : tensor<2x3xi64>
// CHECK: kiln.iota dim = 0 : tensor<4xf32>
// GENERIC-LABEL: sym_name = "iota"
// GENERIC: "kiln.iota"() <{dimension = 1 : i64}> : () -> tensor<2x3xi64>
func.func @iota() -> (tensor<2x3xi64>, tensor<4xf32>) {
  %0 = kiln.iota dim = 1 : tensor<2x3xi64>
  %1 = kiln.iota dim = 0 : tensor<4xf32>
  return %0, %1 : tensor<2x3xi64>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @binary_f32
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: %[[ADD:.+]] = kiln.add %[[A]], %[[B]] : tensor<2x3xf32>
// CHECK: %[[SUB:.+]] = kiln.sub %[[ADD]], %[[B]] : tensor<2x3xf32>
// CHECK: %[[MUL:.+]] = kiln.mul %[[SUB]], %[[A]] : tensor<2x3xf32>
// CHECK: %[[DIV:.+]] = kiln.div %[[MUL]], %[[B]] : tensor<2x3xf32>
// CHECK: %[[MAX:.+]] = kiln.max %[[DIV]], %[[A]] : tensor<2x3xf32>
// CHECK: %[[MIN:.+]] = kiln.min %[[MAX]], %[[B]] : tensor<2x3xf32>
// CHECK: %[[POW:.+]] = kiln.pow %[[MIN]], %[[A]] : tensor<2x3xf32>
// CHECK: return %[[POW]]
// GENERIC-LABEL: sym_name = "binary_f32"
// GENERIC: "kiln.add"(%{{.+}}, %{{.+}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @binary_f32(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : tensor<2x3xf32>
  %1 = kiln.sub %0, %b : tensor<2x3xf32>
  %2 = kiln.mul %1, %a : tensor<2x3xf32>
  %3 = kiln.div %2, %b : tensor<2x3xf32>
  %4 = kiln.max %3, %a : tensor<2x3xf32>
  %5 = kiln.min %4, %b : tensor<2x3xf32>
  %6 = kiln.pow %5, %a : tensor<2x3xf32>
  return %6 : tensor<2x3xf32>
}

// -----

// Integer, f64 and rank-0 operands of the numeric binary ops.
// CHECK-LABEL: func.func @binary_other_types
// CHECK-SAME: (%[[I32:.+]]: tensor<4xi32>, %[[I64:.+]]: tensor<i64>, %[[F64:.+]]: tensor<2xf64>, %[[F16:.+]]: tensor<2xf16>, %[[BF16:.+]]: tensor<f32>)
// CHECK: kiln.add %[[I32]], %[[I32]] : tensor<4xi32>
// CHECK: kiln.div %[[I64]], %[[I64]] : tensor<i64>
// CHECK: kiln.max %[[F64]], %[[F64]] : tensor<2xf64>
// CHECK: kiln.pow %[[F16]], %[[F16]] : tensor<2xf16>
// CHECK: kiln.min %[[BF16]], %[[BF16]] : tensor<f32>
func.func @binary_other_types(%i32: tensor<4xi32>, %i64: tensor<i64>, %f64: tensor<2xf64>, %f16: tensor<2xf16>, %f32: tensor<f32>) -> (tensor<4xi32>, tensor<i64>, tensor<2xf64>, tensor<2xf16>, tensor<f32>) {
  %0 = kiln.add %i32, %i32 : tensor<4xi32>
  %1 = kiln.div %i64, %i64 : tensor<i64>
  %2 = kiln.max %f64, %f64 : tensor<2xf64>
  %3 = kiln.pow %f16, %f16 : tensor<2xf16>
  %4 = kiln.min %f32, %f32 : tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<i64>, tensor<2xf64>, tensor<2xf16>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<8xbf16>, %[[I:.+]]: tensor<3xi64>)
// CHECK: %[[NEG:.+]] = kiln.neg %[[X]] : tensor<8xbf16>
// CHECK: %[[ABS:.+]] = kiln.abs %[[NEG]] : tensor<8xbf16>
// CHECK: %[[RELU:.+]] = kiln.relu %[[ABS]] : tensor<8xbf16>
// CHECK: %[[EXP:.+]] = kiln.exp %[[RELU]] : tensor<8xbf16>
// CHECK: %[[LOG:.+]] = kiln.log %[[EXP]] : tensor<8xbf16>
// CHECK: %[[SQRT:.+]] = kiln.sqrt %[[LOG]] : tensor<8xbf16>
// CHECK: %[[RSQRT:.+]] = kiln.rsqrt %[[SQRT]] : tensor<8xbf16>
// CHECK: %[[TANH:.+]] = kiln.tanh %[[RSQRT]] : tensor<8xbf16>
// CHECK: %[[SIG:.+]] = kiln.sigmoid %[[TANH]] : tensor<8xbf16>
// CHECK: %[[SIN:.+]] = kiln.sin %[[SIG]] : tensor<8xbf16>
// CHECK: %[[COS:.+]] = kiln.cos %[[SIN]] : tensor<8xbf16>
// CHECK: %[[INEG:.+]] = kiln.neg %[[I]] : tensor<3xi64>
// CHECK: %[[IABS:.+]] = kiln.abs %[[INEG]] : tensor<3xi64>
// CHECK: %[[IRELU:.+]] = kiln.relu %[[IABS]] : tensor<3xi64>
// CHECK: return %[[COS]], %[[IRELU]]
// GENERIC-LABEL: sym_name = "unary"
// GENERIC: "kiln.sigmoid"(%{{.+}}) : (tensor<8xbf16>) -> tensor<8xbf16>
func.func @unary(%x: tensor<8xbf16>, %i: tensor<3xi64>) -> (tensor<8xbf16>, tensor<3xi64>) {
  %0 = kiln.neg %x : tensor<8xbf16>
  %1 = kiln.abs %0 : tensor<8xbf16>
  %2 = kiln.relu %1 : tensor<8xbf16>
  %3 = kiln.exp %2 : tensor<8xbf16>
  %4 = kiln.log %3 : tensor<8xbf16>
  %5 = kiln.sqrt %4 : tensor<8xbf16>
  %6 = kiln.rsqrt %5 : tensor<8xbf16>
  %7 = kiln.tanh %6 : tensor<8xbf16>
  %8 = kiln.sigmoid %7 : tensor<8xbf16>
  %9 = kiln.sin %8 : tensor<8xbf16>
  %10 = kiln.cos %9 : tensor<8xbf16>
  %11 = kiln.neg %i : tensor<3xi64>
  %12 = kiln.abs %11 : tensor<3xi64>
  %13 = kiln.relu %12 : tensor<3xi64>
  return %10, %13 : tensor<8xbf16>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func.func @unary_f16_rank0
// CHECK-SAME: (%[[X:.+]]: tensor<f16>)
// CHECK: %[[E:.+]] = kiln.exp %[[X]] : tensor<f16>
// CHECK: kiln.tanh %[[E]] : tensor<f16>
func.func @unary_f16_rank0(%x: tensor<f16>) -> tensor<f16> {
  %0 = kiln.exp %x : tensor<f16>
  %1 = kiln.tanh %0 : tensor<f16>
  return %1 : tensor<f16>
}

// -----

// CHECK-LABEL: func.func @compare
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>, %[[P:.+]]: tensor<2xi1>, %[[I:.+]]: tensor<i64>)
// CHECK: kiln.compare eq, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: kiln.compare ne, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: kiln.compare lt, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: kiln.compare le, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: kiln.compare gt, %[[I]], %[[I]] : tensor<i64>
// CHECK: kiln.compare ge, %[[P]], %[[P]] : tensor<2xi1>
// GENERIC-LABEL: sym_name = "compare"
// GENERIC: "kiln.compare"(%{{.+}}, %{{.+}}) <{direction = 0 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
func.func @compare(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<2xi1>, %i: tensor<i64>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<i1>, tensor<2xi1>) {
  %0 = kiln.compare eq, %a, %b : tensor<4xf32>
  %1 = kiln.compare ne, %a, %b : tensor<4xf32>
  %2 = kiln.compare lt, %a, %b : tensor<4xf32>
  %3 = kiln.compare le, %a, %b : tensor<4xf32>
  %4 = kiln.compare gt, %i, %i : tensor<i64>
  %5 = kiln.compare ge, %p, %p : tensor<2xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<i1>, tensor<2xi1>
}

// -----

// A rank-0 predicate with rank-0 values. (A rank-0 predicate with shaped
// values is rejected today; see select-rank0-pred.mlir.)
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[P:.+]]: tensor<2x3xi1>, %[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>, %[[S:.+]]: tensor<i1>, %[[C:.+]]: tensor<i64>, %[[D:.+]]: tensor<i64>)
// CHECK: kiln.select %[[P]], %[[A]], %[[B]] : tensor<2x3xi1>, tensor<2x3xf32>
// CHECK: kiln.select %[[S]], %[[C]], %[[D]] : tensor<i1>, tensor<i64>
// GENERIC-LABEL: sym_name = "select"
// GENERIC: "kiln.select"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @select(%p: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %s: tensor<i1>, %c: tensor<i64>, %d: tensor<i64>) -> (tensor<2x3xf32>, tensor<i64>) {
  %0 = kiln.select %p, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>
  %1 = kiln.select %s, %c, %d : tensor<i1>, tensor<i64>
  return %0, %1 : tensor<2x3xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @sort
// CHECK: %{{.+}}, %{{.+}} = kiln.sort %{{.+}}, dim = 1 : tensor<3x4xf32>
// CHECK: %{{.+}}, %{{.+}} = kiln.sort %{{.+}}, dim = 0 descending : tensor<3x4xf32>
// GENERIC-LABEL: sym_name = "sort"
// GENERIC: "kiln.sort"(%{{.+}}) <{dim = 1 : i64}> : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)
func.func @sort(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>, tensor<3x4xf32>) {
  %v, %i = kiln.sort %x, dim = 1 : tensor<3x4xf32>
  %w, %j = kiln.sort %x, dim = 0 descending : tensor<3x4xf32>
  return %v, %i, %w : tensor<3x4xf32>, tensor<3x4xi64>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @bitcast
// CHECK: kiln.bitcast %{{.+}} : tensor<4xf32> to tensor<4xi32>
// CHECK: kiln.bitcast %{{.+}} : tensor<4xi32> to tensor<4xui32>
// CHECK: kiln.bitcast %{{.+}} : tensor<4xbf16> to tensor<4xf16>
// GENERIC-LABEL: sym_name = "bitcast"
// GENERIC: "kiln.bitcast"(%{{.+}}) : (tensor<4xf32>) -> tensor<4xi32>
func.func @bitcast(%x: tensor<4xf32>, %h: tensor<4xbf16>) -> (tensor<4xui32>, tensor<4xf16>) {
  %0 = kiln.bitcast %x : tensor<4xf32> to tensor<4xi32>
  %1 = kiln.bitcast %0 : tensor<4xi32> to tensor<4xui32>
  %2 = kiln.bitcast %h : tensor<4xbf16> to tensor<4xf16>
  return %1, %2 : tensor<4xui32>, tensor<4xf16>
}

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<i1>)
// CHECK: %[[H:.+]] = kiln.cast %[[X]] : tensor<4xf32> to tensor<4xf16>
// CHECK: %[[BF:.+]] = kiln.cast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK: %[[D:.+]] = kiln.cast %[[BF]] : tensor<4xbf16> to tensor<4xf64>
// CHECK: %[[I:.+]] = kiln.cast %[[D]] : tensor<4xf64> to tensor<4xi32>
// CHECK: %[[L:.+]] = kiln.cast %[[I]] : tensor<4xi32> to tensor<4xi64>
// CHECK: kiln.cast %[[L]] : tensor<4xi64> to tensor<4xi1>
// CHECK: kiln.cast %[[B]] : tensor<i1> to tensor<f32>
// GENERIC-LABEL: sym_name = "cast"
// GENERIC: "kiln.cast"(%{{.+}}) : (tensor<4xf32>) -> tensor<4xf16>
func.func @cast(%x: tensor<4xf32>, %b: tensor<i1>) -> (tensor<4xi1>, tensor<f32>) {
  %0 = kiln.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = kiln.cast %0 : tensor<4xf16> to tensor<4xbf16>
  %2 = kiln.cast %1 : tensor<4xbf16> to tensor<4xf64>
  %3 = kiln.cast %2 : tensor<4xf64> to tensor<4xi32>
  %4 = kiln.cast %3 : tensor<4xi32> to tensor<4xi64>
  %5 = kiln.cast %4 : tensor<4xi64> to tensor<4xi1>
  %6 = kiln.cast %b : tensor<i1> to tensor<f32>
  return %5, %6 : tensor<4xi1>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @shape_ops
// CHECK-SAME: (%[[X:.+]]: tensor<3x1xf32>, %[[S:.+]]: tensor<f32>)
// CHECK: %[[BC:.+]] = kiln.broadcast_in_dim %[[X]], dims = [1, 2] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK: kiln.broadcast_in_dim %[[S]], dims = [] : (tensor<f32>) -> tensor<5xf32>
// CHECK: %[[RS:.+]] = kiln.reshape %[[BC]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: kiln.reshape %[[S]] : (tensor<f32>) -> tensor<1x1xf32>
// CHECK: %[[TR:.+]] = kiln.transpose %[[RS]], permutation = [1, 0] : tensor<6x4xf32>
// CHECK: %[[SL:.+]] = kiln.slice %[[TR]], start = [1, 0], limit = [4, 6], stride = [2, 3] : tensor<4x6xf32>
// CHECK: kiln.concat %[[SL]], %[[SL]], %[[SL]] dim = 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
// GENERIC-LABEL: sym_name = "shape_ops"
// GENERIC: "kiln.broadcast_in_dim"(%{{.+}}) <{dims = array<i64: 1, 2>}> : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// GENERIC: "kiln.transpose"(%{{.+}}) <{permutation = array<i64: 1, 0>}> : (tensor<6x4xf32>) -> tensor<4x6xf32>
// GENERIC: "kiln.slice"(%{{.+}}) <{limit = array<i64: 4, 6>, start = array<i64: 1, 0>, stride = array<i64: 2, 3>}> : (tensor<4x6xf32>) -> tensor<2x2xf32>
// GENERIC: "kiln.concat"(%{{.+}}, %{{.+}}, %{{.+}}) <{dimension = 1 : i64}> : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
func.func @shape_ops(%x: tensor<3x1xf32>, %s: tensor<f32>) -> (tensor<5xf32>, tensor<1x1xf32>, tensor<2x6xf32>) {
  %0 = kiln.broadcast_in_dim %x, dims = [1, 2] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<5xf32>
  %2 = kiln.reshape %0 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %3 = kiln.reshape %s : (tensor<f32>) -> tensor<1x1xf32>
  %4 = kiln.transpose %2, permutation = [1, 0] : tensor<6x4xf32>
  %5 = kiln.slice %4, start = [1, 0], limit = [4, 6], stride = [2, 3] : tensor<4x6xf32>
  %6 = kiln.concat %5, %5, %5 dim = 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
  return %1, %3, %6 : tensor<5xf32>, tensor<1x1xf32>, tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @shape_ops_other_types
// CHECK-SAME: (%[[P:.+]]: tensor<2x3xi1>, %[[I:.+]]: tensor<4xi64>)
// CHECK: kiln.transpose %[[P]], permutation = [1, 0] : tensor<2x3xi1>
// CHECK: kiln.slice %[[I]], start = [4], limit = [4], stride = [1] : tensor<4xi64>
// CHECK: kiln.concat %[[P]] dim = 0 : tensor<2x3xi1>
func.func @shape_ops_other_types(%p: tensor<2x3xi1>, %i: tensor<4xi64>) -> (tensor<3x2xi1>, tensor<0xi64>, tensor<2x3xi1>) {
  %0 = kiln.transpose %p, permutation = [1, 0] : tensor<2x3xi1>
  %1 = kiln.slice %i, start = [4], limit = [4], stride = [1] : tensor<4xi64>
  %2 = kiln.concat %p dim = 0 : tensor<2x3xi1>
  return %0, %1, %2 : tensor<3x2xi1>, tensor<0xi64>, tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[I:.+]]: tensor<5xi32>)
// CHECK: kiln.reduce_sum %[[X]], dims = [0, 2] : tensor<2x3x4xf32>
// CHECK: kiln.reduce_max %[[X]], dims = [1] : tensor<2x3x4xf32>
// CHECK: kiln.reduce_mean %[[X]], dims = [0, 1, 2] : tensor<2x3x4xf32>
// CHECK: kiln.reduce_sum %[[I]], dims = [0] : tensor<5xi32>
// CHECK: kiln.reduce_max %[[I]], dims = [] : tensor<5xi32>
// GENERIC-LABEL: sym_name = "reductions"
// GENERIC: "kiln.reduce_sum"(%{{.+}}) <{dims = array<i64: 0, 2>}> : (tensor<2x3x4xf32>) -> tensor<3xf32>
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>) -> (tensor<3xf32>, tensor<2x4xf32>, tensor<f32>, tensor<i32>, tensor<5xi32>) {
  %0 = kiln.reduce_sum %x, dims = [0, 2] : tensor<2x3x4xf32>
  %1 = kiln.reduce_max %x, dims = [1] : tensor<2x3x4xf32>
  %2 = kiln.reduce_mean %x, dims = [0, 1, 2] : tensor<2x3x4xf32>
  %3 = kiln.reduce_sum %i, dims = [0] : tensor<5xi32>
  %4 = kiln.reduce_max %i, dims = [] : tensor<5xi32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<2x4xf32>, tensor<f32>, tensor<i32>, tensor<5xi32>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<3x4xf32>, %[[C:.+]]: tensor<5x2x3xi32>, %[[D:.+]]: tensor<5x3x7xi32>)
// CHECK: kiln.matmul %[[A]], %[[B]] : tensor<2x3xf32>, tensor<3x4xf32>
// CHECK: kiln.matmul %[[C]], %[[D]] : tensor<5x2x3xi32>, tensor<5x3x7xi32>
// GENERIC-LABEL: sym_name = "matmul"
// GENERIC: "kiln.matmul"(%{{.+}}, %{{.+}}) : (tensor<5x2x3xi32>, tensor<5x3x7xi32>) -> tensor<5x2x7xi32>
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<5x2x3xi32>, %d: tensor<5x3x7xi32>) -> (tensor<2x4xf32>, tensor<5x2x7xi32>) {
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32>
  %1 = kiln.matmul %c, %d : tensor<5x2x3xi32>, tensor<5x3x7xi32>
  return %0, %1 : tensor<2x4xf32>, tensor<5x2x7xi32>
}

// -----

// CHECK-LABEL: func.func @matmul_widened
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x3xbf16>, tensor<3x4xbf16> -> f32
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x3xf16>, tensor<3x4xf16>{{$}}
// GENERIC-LABEL: sym_name = "matmul_widened"
// GENERIC: "kiln.matmul"(%{{.+}}, %{{.+}}) <{result_element_type = f32}> : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xf32>
func.func @matmul_widened(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>, %c: tensor<2x3xf16>, %d: tensor<3x4xf16>) -> (tensor<2x4xf32>, tensor<2x4xf16>) {
  %0 = kiln.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> f32
  %1 = kiln.matmul %c, %d : tensor<2x3xf16>, tensor<3x4xf16>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf16>
}

// -----

// CHECK-LABEL: func.func @matmul_widened_bytes
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x3xui8>, tensor<3x4xi8> -> i32
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<5x2x3xi8>, tensor<5x3x4xi8> -> i32
// CHECK: kiln.matmul %{{.+}}, %{{.+}} : tensor<2x3xui8>, tensor<3x4xui8>{{$}}
// GENERIC-LABEL: sym_name = "matmul_widened_bytes"
// GENERIC: "kiln.matmul"(%{{.+}}, %{{.+}}) <{result_element_type = i32}> : (tensor<2x3xui8>, tensor<3x4xi8>) -> tensor<2x4xi32>
func.func @matmul_widened_bytes(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %c: tensor<5x2x3xi8>, %d: tensor<5x3x4xi8>, %e: tensor<3x4xui8>) -> (tensor<2x4xi32>, tensor<5x2x4xi32>, tensor<2x4xui8>) {
  %0 = kiln.matmul %a, %b : tensor<2x3xui8>, tensor<3x4xi8> -> i32
  %1 = kiln.matmul %c, %d : tensor<5x2x3xi8>, tensor<5x3x4xi8> -> i32
  %2 = kiln.matmul %a, %e : tensor<2x3xui8>, tensor<3x4xui8>
  return %0, %1, %2 : tensor<2x4xi32>, tensor<5x2x4xi32>, tensor<2x4xui8>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[T:.+]]: tensor<10x4xf16>, %[[I:.+]]: tensor<2x3xi32>, %[[J:.+]]: tensor<i64>)
// CHECK: kiln.gather %[[T]], %[[I]] : tensor<10x4xf16>, tensor<2x3xi32>
// CHECK: kiln.gather %[[T]], %[[J]] : tensor<10x4xf16>, tensor<i64>
// GENERIC-LABEL: sym_name = "gather"
// GENERIC: "kiln.gather"(%{{.+}}, %{{.+}}) : (tensor<10x4xf16>, tensor<2x3xi32>) -> tensor<2x3x4xf16>
func.func @gather(%t: tensor<10x4xf16>, %i: tensor<2x3xi32>, %j: tensor<i64>) -> (tensor<2x3x4xf16>, tensor<4xf16>) {
  %0 = kiln.gather %t, %i : tensor<10x4xf16>, tensor<2x3xi32>
  %1 = kiln.gather %t, %j : tensor<10x4xf16>, tensor<i64>
  return %0, %1 : tensor<2x3x4xf16>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @cond
// CHECK-SAME: (%[[P:.+]]: tensor<i1>, %[[X:.+]]: tensor<4xf32>, %[[N:.+]]: tensor<i32>)
// CHECK: %[[R:.+]]:2 = kiln.cond %[[P]], (%[[X]], %[[N]]) : tensor<i1>, (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<i32>):
// CHECK-NEXT:   kiln.yield %[[A]], %[[B]] : tensor<4xf32>, tensor<i32>
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%[[C:.+]]: tensor<4xf32>, %[[D:.+]]: tensor<i32>):
// CHECK-NEXT:   %[[NEG:.+]] = kiln.neg %[[C]] : tensor<4xf32>
// CHECK-NEXT:   kiln.yield %[[NEG]], %[[D]] : tensor<4xf32>, tensor<i32>
// CHECK-NEXT: }
// CHECK: return %[[R]]#0, %[[R]]#1
// GENERIC-LABEL: sym_name = "cond"
// GENERIC: "kiln.cond"(%{{.+}}, %{{.+}}, %{{.+}}) ({
// GENERIC: "kiln.yield"(%{{.+}}, %{{.+}}) : (tensor<4xf32>, tensor<i32>) -> ()
// GENERIC: }, {
// GENERIC: }) : (tensor<i1>, tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
func.func @cond(%p: tensor<i1>, %x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %0:2 = kiln.cond %p, (%x, %n) : tensor<i1>, (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<i32>):
    kiln.yield %a, %b : tensor<4xf32>, tensor<i32>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<i32>):
    %n2 = kiln.neg %a : tensor<4xf32>
    kiln.yield %n2, %b : tensor<4xf32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<i32>
}

// -----

// A cond without inputs or results: both regions just yield.
// CHECK-LABEL: func.func @cond_empty
// CHECK-SAME: (%[[P:.+]]: tensor<i1>)
// CHECK: kiln.cond %[[P]], () : tensor<i1>, () -> () {
// CHECK-NEXT:   kiln.yield
// CHECK-NEXT: } else {
// CHECK-NEXT:   kiln.yield
// CHECK-NEXT: }
func.func @cond_empty(%p: tensor<i1>) {
  kiln.cond %p, () : tensor<i1>, () -> () {
    kiln.yield
  } else {
    kiln.yield
  }
  return
}

// -----

// CHECK-LABEL: func.func @while
// CHECK-SAME: (%[[I:.+]]: tensor<i64>, %[[X:.+]]: tensor<3xf64>)
// CHECK: %[[R:.+]]:2 = kiln.while(%[[I]], %[[X]]) : (tensor<i64>, tensor<3xf64>) cond {
// CHECK-NEXT: ^bb0(%[[CI:.+]]: tensor<i64>, %[[CX:.+]]: tensor<3xf64>):
// CHECK-NEXT:   %[[LIMIT:.+]] = kiln.constant dense<10> : tensor<i64>
// CHECK-NEXT:   %[[LT:.+]] = kiln.compare lt, %[[CI]], %[[LIMIT]] : tensor<i64>
// CHECK-NEXT:   kiln.yield %[[LT]] : tensor<i1>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[BI:.+]]: tensor<i64>, %[[BX:.+]]: tensor<3xf64>):
// CHECK-NEXT:   %[[ONE:.+]] = kiln.constant dense<1> : tensor<i64>
// CHECK-NEXT:   %[[NEXT:.+]] = kiln.add %[[BI]], %[[ONE]] : tensor<i64>
// CHECK-NEXT:   %[[EXP:.+]] = kiln.exp %[[BX]] : tensor<3xf64>
// CHECK-NEXT:   kiln.yield %[[NEXT]], %[[EXP]] : tensor<i64>, tensor<3xf64>
// CHECK-NEXT: }
// CHECK: return %[[R]]#1
// GENERIC-LABEL: sym_name = "while"
// GENERIC: "kiln.while"(%{{.+}}, %{{.+}}) ({
// GENERIC: }) : (tensor<i64>, tensor<3xf64>) -> (tensor<i64>, tensor<3xf64>)
func.func @while(%i: tensor<i64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %0:2 = kiln.while(%i, %x) : (tensor<i64>, tensor<3xf64>) cond {
  ^bb0(%ci: tensor<i64>, %cx: tensor<3xf64>):
    %limit = kiln.constant dense<10> : tensor<i64>
    %lt = kiln.compare lt, %ci, %limit : tensor<i64>
    kiln.yield %lt : tensor<i1>
  } do {
  ^bb0(%bi: tensor<i64>, %bx: tensor<3xf64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %next = kiln.add %bi, %one : tensor<i64>
    %e = kiln.exp %bx : tensor<3xf64>
    kiln.yield %next, %e : tensor<i64>, tensor<3xf64>
  }
  return %0#1 : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @for
// CHECK-SAME: (%[[X:.+]]: tensor<2xf32>)
// CHECK: %[[R:.+]] = kiln.for 5 iterations(%[[X]]) : (tensor<2xf32>) {
// CHECK-NEXT: ^bb0(%[[IV:.+]]: tensor<i64>, %[[ACC:.+]]: tensor<2xf32>):
// CHECK-NEXT:   %[[F:.+]] = kiln.cast %[[IV]] : tensor<i64> to tensor<f32>
// CHECK-NEXT:   %[[B:.+]] = kiln.broadcast_in_dim %[[F]], dims = [] : (tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:   %[[SUM:.+]] = kiln.add %[[ACC]], %[[B]] : tensor<2xf32>
// CHECK-NEXT:   kiln.yield %[[SUM]] : tensor<2xf32>
// CHECK-NEXT: }
// CHECK: return %[[R]]
// GENERIC-LABEL: sym_name = "for"
// GENERIC: "kiln.for"(%{{.+}}) <{trip_count = 5 : i64}> ({
// GENERIC: ^bb0(%{{.+}}: tensor<i64>, %{{.+}}: tensor<2xf32>):
func.func @for(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.for 5 iterations(%x) : (tensor<2xf32>) {
  ^bb0(%iv: tensor<i64>, %acc: tensor<2xf32>):
    %f = kiln.cast %iv : tensor<i64> to tensor<f32>
    %b = kiln.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %s = kiln.add %acc, %b : tensor<2xf32>
    kiln.yield %s : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// A zero trip count. (Loops with no carried values do not round-trip today;
// see loops-no-carried-values.mlir.)
// CHECK-LABEL: func.func @for_zero_trips
// CHECK-SAME: (%[[X:.+]]: tensor<i1>)
// CHECK: kiln.for 0 iterations(%[[X]]) : (tensor<i1>) {
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<i64>, %[[B:.+]]: tensor<i1>):
// CHECK-NEXT:   kiln.yield %[[B]] : tensor<i1>
// CHECK-NEXT: }
func.func @for_zero_trips(%x: tensor<i1>) -> tensor<i1> {
  %0 = kiln.for 0 iterations(%x) : (tensor<i1>) {
  ^bb0(%iv: tensor<i64>, %b: tensor<i1>):
    kiln.yield %b : tensor<i1>
  }
  return %0 : tensor<i1>
}

// -----

// Nested control flow: a cond inside a for inside a while; each region only
// sees its own block arguments (the ops are isolated from above).
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[N:.+]]: tensor<i32>)
// CHECK: %[[W:.+]]:2 = kiln.while(%[[X]], %[[N]]) : (tensor<4xf32>, tensor<i32>) cond {
// CHECK:   kiln.compare gt
// CHECK:   kiln.yield %{{.+}} : tensor<i1>
// CHECK: } do {
// CHECK: ^bb0(%[[WX:.+]]: tensor<4xf32>, %[[WN:.+]]: tensor<i32>):
// CHECK:   %[[F:.+]] = kiln.for 3 iterations(%[[WX]]) : (tensor<4xf32>) {
// CHECK:   ^bb0(%[[IV:.+]]: tensor<i64>, %[[FX:.+]]: tensor<4xf32>):
// CHECK:     %[[EVEN:.+]] = kiln.compare eq, %[[IV]], %{{.+}} : tensor<i64>
// CHECK:     %[[C:.+]] = kiln.cond %[[EVEN]], (%[[FX]]) : tensor<i1>, (tensor<4xf32>) -> tensor<4xf32> {
// CHECK:       kiln.relu
// CHECK:     } else {
// CHECK:       kiln.neg
// CHECK:     }
// CHECK:     kiln.yield %[[C]] : tensor<4xf32>
// CHECK:   }
// CHECK:   kiln.yield %[[F]], %{{.+}} : tensor<4xf32>, tensor<i32>
// CHECK: }
// CHECK: return %[[W]]#0
func.func @nested(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0:2 = kiln.while(%x, %n) : (tensor<4xf32>, tensor<i32>) cond {
  ^bb0(%cx: tensor<4xf32>, %cn: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %gt = kiln.compare gt, %cn, %zero : tensor<i32>
    kiln.yield %gt : tensor<i1>
  } do {
  ^bb0(%wx: tensor<4xf32>, %wn: tensor<i32>):
    %r = kiln.for 3 iterations(%wx) : (tensor<4xf32>) {
    ^bb0(%iv: tensor<i64>, %fx: tensor<4xf32>):
      %zero = kiln.constant dense<0> : tensor<i64>
      %even = kiln.compare eq, %iv, %zero : tensor<i64>
      %c = kiln.cond %even, (%fx) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
      ^bb0(%a: tensor<4xf32>):
        %y = kiln.relu %a : tensor<4xf32>
        kiln.yield %y : tensor<4xf32>
      } else {
      ^bb0(%a: tensor<4xf32>):
        %y = kiln.neg %a : tensor<4xf32>
        kiln.yield %y : tensor<4xf32>
      }
      kiln.yield %c : tensor<4xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %next = kiln.sub %wn, %one : tensor<i32>
    kiln.yield %r, %next : tensor<4xf32>, tensor<i32>
  }
  return %0#0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @math_functions
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[D:.+]]: tensor<4xf64>)
// CHECK: kiln.erf %[[X]] : tensor<2x3xf32>
// CHECK: kiln.floor %[[X]] : tensor<2x3xf32>
// CHECK: kiln.ceil %[[X]] : tensor<2x3xf32>
// CHECK: kiln.round %[[X]] : tensor<2x3xf32>
// CHECK: kiln.tan %[[X]] : tensor<2x3xf32>
// CHECK: kiln.asin %[[X]] : tensor<2x3xf32>
// CHECK: kiln.acos %[[X]] : tensor<2x3xf32>
// CHECK: kiln.atan %[[X]] : tensor<2x3xf32>
// CHECK: kiln.sinh %[[D]] : tensor<4xf64>
// CHECK: kiln.cosh %[[D]] : tensor<4xf64>
// CHECK: kiln.asinh %[[D]] : tensor<4xf64>
// CHECK: kiln.acosh %[[D]] : tensor<4xf64>
// CHECK: kiln.atanh %[[D]] : tensor<4xf64>
// CHECK: kiln.sign %[[D]] : tensor<4xf64>
// GENERIC-LABEL: sym_name = "math_functions"
// GENERIC: "kiln.erf"(%{{.+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC: "kiln.round"(%{{.+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @math_functions(%x: tensor<2x3xf32>, %d: tensor<4xf64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %0 = kiln.erf %x : tensor<2x3xf32>
  %1 = kiln.floor %x : tensor<2x3xf32>
  %2 = kiln.ceil %x : tensor<2x3xf32>
  %3 = kiln.round %x : tensor<2x3xf32>
  %4 = kiln.tan %x : tensor<2x3xf32>
  %5 = kiln.asin %x : tensor<2x3xf32>
  %6 = kiln.acos %x : tensor<2x3xf32>
  %7 = kiln.atan %x : tensor<2x3xf32>
  %8 = kiln.sinh %d : tensor<4xf64>
  %9 = kiln.cosh %d : tensor<4xf64>
  %10 = kiln.asinh %d : tensor<4xf64>
  %11 = kiln.acosh %d : tensor<4xf64>
  %12 = kiln.atanh %d : tensor<4xf64>
  %13 = kiln.sign %d : tensor<4xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @logic_and_rem
// CHECK-SAME: (%[[P:.+]]: tensor<3xi1>, %[[Q:.+]]: tensor<3xi1>, %[[I:.+]]: tensor<3xi32>, %[[J:.+]]: tensor<3xi32>, %[[F:.+]]: tensor<3xf32>)
// CHECK: kiln.not %[[P]] : tensor<3xi1>
// CHECK: kiln.and %[[P]], %[[Q]] : tensor<3xi1>
// CHECK: kiln.or %[[I]], %[[J]] : tensor<3xi32>
// CHECK: kiln.xor %[[I]], %[[J]] : tensor<3xi32>
// CHECK: kiln.not %[[I]] : tensor<3xi32>
// CHECK: kiln.rem %[[I]], %[[J]] : tensor<3xi32>
// CHECK: kiln.rem %[[F]], %[[F]] : tensor<3xf32>
// CHECK: kiln.sign %[[I]] : tensor<3xi32>
func.func @logic_and_rem(%p: tensor<3xi1>, %q: tensor<3xi1>, %i: tensor<3xi32>, %j: tensor<3xi32>, %f: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) {
  %0 = kiln.not %p : tensor<3xi1>
  %1 = kiln.and %p, %q : tensor<3xi1>
  %2 = kiln.or %i, %j : tensor<3xi32>
  %3 = kiln.xor %i, %j : tensor<3xi32>
  %4 = kiln.not %i : tensor<3xi32>
  %5 = kiln.rem %i, %j : tensor<3xi32>
  %6 = kiln.rem %f, %f : tensor<3xf32>
  %7 = kiln.sign %i : tensor<3xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<3xi1>, tensor<3xi1>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>
}

// -----

// The result type of argmax/argmin is inferred: i64 with `dim` removed.
// CHECK-LABEL: func.func @arg_reduce_and_cumsum
// CHECK: kiln.argmax %{{.+}}, dim = 1 : tensor<2x3x4xf32>
// CHECK: kiln.argmin %{{.+}}, dim = 0 select_last_index : tensor<2x3x4xf32>
// CHECK: kiln.argmax %{{.+}}, dim = 0 select_last_index : tensor<5xi32>
// CHECK: kiln.cumsum %{{.+}}, dim = 2 : tensor<2x3x4xf32>
// CHECK: kiln.cumsum %{{.+}}, dim = 0 exclusive : tensor<2x3x4xf32>
// CHECK: kiln.cumsum %{{.+}}, dim = 1 reverse : tensor<2x3x4xf32>
// CHECK: kiln.cumsum %{{.+}}, dim = 0 exclusive reverse : tensor<5xi32>
// GENERIC-LABEL: sym_name = "arg_reduce_and_cumsum"
// GENERIC: "kiln.argmax"(%{{.+}}) <{dim = 1 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
// GENERIC: "kiln.argmin"(%{{.+}}) <{dim = 0 : i64, select_last_index}> : (tensor<2x3x4xf32>) -> tensor<3x4xi64>
// GENERIC: "kiln.argmax"(%{{.+}}) <{dim = 0 : i64, select_last_index}> : (tensor<5xi32>) -> tensor<i64>
// GENERIC: "kiln.cumsum"(%{{.+}}) <{dim = 2 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// GENERIC: "kiln.cumsum"(%{{.+}}) <{dim = 0 : i64, exclusive}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// GENERIC: "kiln.cumsum"(%{{.+}}) <{dim = 1 : i64, reverse}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// GENERIC: "kiln.cumsum"(%{{.+}}) <{dim = 0 : i64, exclusive, reverse}> : (tensor<5xi32>) -> tensor<5xi32>
func.func @arg_reduce_and_cumsum(%x: tensor<2x3x4xf32>, %v: tensor<5xi32>) -> (tensor<2x4xi64>, tensor<3x4xi64>, tensor<i64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<5xi32>) {
  %0 = kiln.argmax %x, dim = 1 : tensor<2x3x4xf32>
  %1 = kiln.argmin %x, dim = 0 select_last_index : tensor<2x3x4xf32>
  %2 = kiln.argmax %v, dim = 0 select_last_index : tensor<5xi32>
  %3 = kiln.cumsum %x, dim = 2 : tensor<2x3x4xf32>
  %4 = kiln.cumsum %x, dim = 0 exclusive : tensor<2x3x4xf32>
  %5 = kiln.cumsum %x, dim = 1 reverse : tensor<2x3x4xf32>
  %6 = kiln.cumsum %v, dim = 0 exclusive reverse : tensor<5xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x4xi64>, tensor<3x4xi64>, tensor<i64>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<5xi32>
}
