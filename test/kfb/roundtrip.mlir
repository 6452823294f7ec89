// Round trip through the .kfb format: MLIR -> .kfb -> MLIR must print exactly
// as kiln-opt prints the original, in the custom and the generic form (which
// shows every inherent attribute). The module exercises constants of every
// dtype (splat, non-splat, rank-0, empty), nested control flow, calls,
// declarations, and attributes of every kind the format stores, on the
// module, functions, arguments, results and ops.
//
// RUN: kiln-translate --mlir-to-kfb %s -o %t.kfb
// RUN: kiln-translate --kfb-to-mlir %t.kfb -o %t.mlir
// RUN: kiln-opt %s -o %t.expected.mlir
// RUN: diff %t.expected.mlir %t.mlir
// RUN: kiln-translate --kfb-to-mlir %t.kfb --mlir-print-op-generic -o %t.generic.mlir
// RUN: kiln-opt %s --mlir-print-op-generic -o %t.expected.generic.mlir
// RUN: diff %t.expected.generic.mlir %t.generic.mlir
// RUN: FileCheck %s --input-file=%t.mlir
//
// Writing is deterministic, and kiln-compile writes the same bytes, and reads
// a .kfb file by its identifier whatever the file is called.
// RUN: kiln-translate --mlir-to-kfb %t.mlir -o %t.again.kfb
// RUN: cmp %t.kfb %t.again.kfb
// RUN: kiln-compile %s --emit=kfb -o %t.compiled.kfb
// RUN: cmp %t.kfb %t.compiled.kfb
// RUN: cp %t.kfb %t.model.bin
// RUN: kiln-compile %t.model.bin --emit=kfb -o %t.from-bin.kfb
// RUN: cmp %t.kfb %t.from-bin.kfb

// CHECK: module @roundtrip attributes {kiln.flags = [1, 2.500000e+00 : f32, "s", unit, true, @constants, {k = array<i64: 1, -2>}], kiln.version = "1.0"}
module @roundtrip attributes {kiln.version = "1.0", kiln.flags = [1, 2.5 : f32, "s", unit, true, @constants, {k = array<i64: 1, -2>}]} {

// CHECK-LABEL: func.func @constants
// CHECK: kiln.constant dense<[1.000000e+00, -2.500000e+00, 0x7FC00000]> : tensor<3xf32>
// CHECK: kiln.constant dense<2.500000e-01> : tensor<2x3xf64>
// CHECK: kiln.constant dense<[1.000000e+00, 6.550400e+04]> : tensor<2xf16>
// CHECK: kiln.constant dense<-1.500000e+00> : tensor<3xbf16>
// CHECK: kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK: kiln.constant dense<false> : tensor<2x2xi1>
// CHECK: kiln.constant dense<7> : tensor<i32>
// CHECK: kiln.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>
// CHECK: kiln.constant dense<> : tensor<0x4xf32>
// CHECK: kiln.constant dense<[{{\[}}1, 2], [3, 4]]> : tensor<2x2xi32>
// CHECK: kiln.constant dense<5.000000e-01> : tensor<0x1x7xf64>
// CHECK: kiln.constant dense<true> : tensor<3x0xi1>
func.func @constants() -> (tensor<3xf32>, tensor<2x3xf64>, tensor<2xf16>, tensor<3xbf16>, tensor<3xi1>, tensor<2x2xi1>, tensor<i32>, tensor<2xi64>, tensor<0x4xf32>, tensor<2x2xi32>, tensor<0x1x7xf64>, tensor<3x0xi1>) {
  %0 = kiln.constant dense<[1.0, -2.5, 0x7FC00000]> : tensor<3xf32>
  %1 = kiln.constant dense<0.25> : tensor<2x3xf64>
  %2 = kiln.constant dense<[1.0, 65504.0]> : tensor<2xf16>
  %3 = kiln.constant dense<-1.5> : tensor<3xbf16>
  %4 = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %5 = kiln.constant dense<false> : tensor<2x2xi1>
  %6 = kiln.constant dense<7> : tensor<i32>
  %7 = kiln.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>
  %8 = kiln.constant dense<> : tensor<0x4xf32>
  %9 = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  // Splats of no elements keep their value (found by kiln-program-fuzz).
  %10 = kiln.constant dense<0.5> : tensor<0x1x7xf64>
  %11 = kiln.constant dense<true> : tensor<3x0xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<3xf32>, tensor<2x3xf64>, tensor<2xf16>, tensor<3xbf16>, tensor<3xi1>, tensor<2x2xi1>, tensor<i32>, tensor<2xi64>, tensor<0x4xf32>, tensor<2x2xi32>, tensor<0x1x7xf64>, tensor<3x0xi1>
}

// Control flow nested three deep: a for inside a cond inside a while, with
// constants inside the regions. Values are numbered across the regions.
// CHECK-LABEL: func.func @nested
// CHECK: kiln.while
// CHECK: kiln.compare lt
// CHECK: kiln.cond
// CHECK: kiln.for 3 iterations
// CHECK: kiln.yield
// CHECK: } else {
func.func @nested(%x: tensor<4xf32> {kiln.name = "x"}, %n: tensor<i64> {kiln.name = "limit", kiln.note = 3 : i32})
    -> (tensor<4xf32> {kiln.name = "y"}, tensor<i64>) {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%x, %zero, %n) : (tensor<4xf32>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i64>, %m: tensor<i64>):
    %go = kiln.compare lt, %i, %m : tensor<i64>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i64>, %m: tensor<i64>):
    %two = kiln.constant dense<2> : tensor<i64>
    %rem = kiln.div %i, %two : tensor<i64>
    %back = kiln.mul %rem, %two : tensor<i64>
    %even = kiln.compare eq, %back, %i : tensor<i64>
    %w = kiln.cond %even, (%v) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
    ^bb0(%a: tensor<4xf32>):
      %s = kiln.for 3 iterations (%a) : (tensor<4xf32>) {
      ^bb0(%k: tensor<i64>, %h: tensor<4xf32>):
        %t = kiln.tanh %h : tensor<4xf32>
        kiln.yield %t : tensor<4xf32>
      }
      kiln.yield %s : tensor<4xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      %neg = kiln.neg %a {kiln.tag = "else"} : tensor<4xf32>
      kiln.yield %neg : tensor<4xf32>
    }
    %one = kiln.constant dense<1> : tensor<i64>
    %i1 = kiln.add %i, %one : tensor<i64>
    kiln.yield %w, %i1, %m : tensor<4xf32>, tensor<i64>, tensor<i64>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<i64>
}

// Shape ops and their dense-array and integer attributes, every compare
// direction, select, cast, gather and matmul.
// CHECK-LABEL: func.func @shapes
// CHECK: kiln.transpose %{{.*}}, permutation = [1, 0] : tensor<2x3xf32>
// CHECK: kiln.slice %{{.*}}, start = [0, 1], limit = [2, 3], stride = [1, 2] : tensor<2x3xf32>
// CHECK: kiln.concat %{{.*}}, %{{.*}} dim = 0 : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: kiln.iota dim = 1 : tensor<2x3xi64>
// CHECK-COUNT-6: kiln.compare
func.func @shapes(%a: tensor<2x3xf32>, %idx: tensor<2xi32>) -> (tensor<3x2xf32>, tensor<2x1xf32>, tensor<4x3xf32>, tensor<2x3xi64>, tensor<6xf32>, tensor<4x2x3xf32>, tensor<3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %t = kiln.transpose %a, permutation = [1, 0] : tensor<2x3xf32>
  %s = kiln.slice %a, start = [0, 1], limit = [2, 3], stride = [1, 2] : tensor<2x3xf32>
  %c = kiln.concat %a, %a dim = 0 : tensor<2x3xf32>, tensor<2x3xf32>
  %i = kiln.iota dim = 1 : tensor<2x3xi64>
  %r = kiln.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>
  %b = kiln.broadcast_in_dim %a, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %m = kiln.reduce_mean %a, dims = [0] : tensor<2x3xf32>
  %eq = kiln.compare eq, %a, %a : tensor<2x3xf32>
  %ne = kiln.compare ne, %a, %a : tensor<2x3xf32>
  %lt = kiln.compare lt, %a, %a : tensor<2x3xf32>
  %le = kiln.compare le, %a, %a : tensor<2x3xf32>
  %gt = kiln.compare gt, %a, %a : tensor<2x3xf32>
  %ge = kiln.compare ge, %a, %a : tensor<2x3xf32>
  %sel = kiln.select %ge, %a, %a : tensor<2x3xi1>, tensor<2x3xf32>
  %cast = kiln.cast %a : tensor<2x3xf32> to tensor<2x3xi32>
  %g = kiln.gather %a, %idx : tensor<2x3xf32>, tensor<2xi32>
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<2x3xf32>
  %mm = kiln.matmul %a, %at : tensor<2x3xf32>, tensor<3x2xf32>
  return %t, %s, %c, %i, %r, %b, %m, %eq, %sel, %cast, %g, %mm : tensor<3x2xf32>, tensor<2x1xf32>, tensor<4x3xf32>, tensor<2x3xi64>, tensor<6xf32>, tensor<4x2x3xf32>, tensor<3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x2xf32>
}

// An element-type attribute: a product of bf16 operands widened to f32.
// CHECK-LABEL: func.func @widened_product
// CHECK: kiln.matmul %arg0, %arg1 : tensor<2x3xbf16>, tensor<3x2xbf16> -> f32
func.func @widened_product(%a: tensor<2x3xbf16>, %b: tensor<3x2xbf16>) -> tensor<2x2xf32> {
  %mm = kiln.matmul %a, %b : tensor<2x3xbf16>, tensor<3x2xbf16> -> f32
  return %mm : tensor<2x2xf32>
}

// The math functions, sign, rem, the bitwise ops, and argmax/argmin/cumsum
// with and without their unit attributes.
// CHECK-LABEL: func.func @math_logic_scans
// CHECK: kiln.erf
// CHECK: kiln.round
// CHECK: kiln.atanh
// CHECK: kiln.sign %{{.*}} : tensor<2x3xi32>
// CHECK: kiln.rem %{{.*}}, %{{.*}} : tensor<2x3xi32>
// CHECK: kiln.xor %{{.*}}, %{{.*}} : tensor<2x3xi1>
// CHECK: kiln.argmax %{{.*}}, dim = 1 : tensor<2x3xf32>
// CHECK: kiln.argmin %{{.*}}, dim = 0 select_last_index : tensor<2x3xi32>
// CHECK: kiln.cumsum %{{.*}}, dim = 1 : tensor<2x3xf32>
// CHECK: kiln.cumsum %{{.*}}, dim = 0 exclusive reverse : tensor<2x3xi32>
func.func @math_logic_scans(%a: tensor<2x3xf32>, %i: tensor<2x3xi32>, %p: tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2xi64>, tensor<3xi64>, tensor<2x3xf32>, tensor<2x3xi32>) {
  %0 = kiln.erf %a : tensor<2x3xf32>
  %1 = kiln.floor %0 : tensor<2x3xf32>
  %2 = kiln.ceil %1 : tensor<2x3xf32>
  %3 = kiln.round %2 : tensor<2x3xf32>
  %4 = kiln.tan %3 : tensor<2x3xf32>
  %5 = kiln.asin %4 : tensor<2x3xf32>
  %6 = kiln.acos %5 : tensor<2x3xf32>
  %7 = kiln.atan %6 : tensor<2x3xf32>
  %8 = kiln.sinh %7 : tensor<2x3xf32>
  %9 = kiln.cosh %8 : tensor<2x3xf32>
  %10 = kiln.asinh %9 : tensor<2x3xf32>
  %11 = kiln.acosh %10 : tensor<2x3xf32>
  %12 = kiln.atanh %11 : tensor<2x3xf32>
  %13 = kiln.rem %12, %a : tensor<2x3xf32>
  %s = kiln.sign %i : tensor<2x3xi32>
  %r = kiln.rem %s, %i : tensor<2x3xi32>
  %n = kiln.not %r : tensor<2x3xi32>
  %and = kiln.and %n, %i : tensor<2x3xi32>
  %or = kiln.or %and, %i : tensor<2x3xi32>
  %q = kiln.not %p : tensor<2x3xi1>
  %x = kiln.xor %q, %p : tensor<2x3xi1>
  %am = kiln.argmax %13, dim = 1 : tensor<2x3xf32>
  %an = kiln.argmin %or, dim = 0 select_last_index : tensor<2x3xi32>
  %c = kiln.cumsum %13, dim = 1 : tensor<2x3xf32>
  %d = kiln.cumsum %or, dim = 0 exclusive reverse : tensor<2x3xi32>
  return %13, %or, %x, %am, %an, %c, %d : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2xi64>, tensor<3xi64>, tensor<2x3xf32>, tensor<2x3xi32>
}

// Convolutions (1-d with dilations and groups, 2-d strided) and reverse:
// their dense-array and i64 attributes in order.
// CHECK-LABEL: func.func @convolutions
// CHECK: kiln.conv %{{.*}}, %{{.*}}, strides = [1], padding_low = [1], padding_high = [0], lhs_dilation = [2], rhs_dilation = [2], groups = 2 : tensor<2x4x7xf32>, tensor<6x2x3xf32>
// CHECK: kiln.conv %{{.*}}, %{{.*}}, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>
// CHECK: kiln.reverse %{{.*}}, dims = [0, 2] : tensor<6x2x3xf32>
func.func @convolutions(%a: tensor<2x4x7xf32>, %b: tensor<6x2x3xf32>, %c: tensor<1x3x8x8xf64>, %d: tensor<4x3x3x3xf64>) -> (tensor<2x6x10xf32>, tensor<1x4x4x4xf64>, tensor<6x2x3xf32>) {
  %y = kiln.conv %a, %b, strides = [1], padding_low = [1], padding_high = [0], lhs_dilation = [2], rhs_dilation = [2], groups = 2 : tensor<2x4x7xf32>, tensor<6x2x3xf32>
  %z = kiln.conv %c, %d, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x3x8x8xf64>, tensor<4x3x3x3xf64>
  %r = kiln.reverse %b, dims = [0, 2] : tensor<6x2x3xf32>
  return %y, %z, %r : tensor<2x6x10xf32>, tensor<1x4x4x4xf64>, tensor<6x2x3xf32>
}

// Calls, a private function, a declaration, and function attributes.
// CHECK-LABEL: func.func @caller
// CHECK-SAME: attributes {kiln.entry, kiln.priority = 2 : i64}
// CHECK: call @helper
// CHECK: call @external
// CHECK: func.func private @helper
// CHECK: func.func private @external(tensor<2xf32>) -> tensor<2xf32>
func.func @caller(%x: tensor<2xf32>) -> tensor<2xf32> attributes {kiln.entry, kiln.priority = 2 : i64} {
  %y = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = func.call @external(%y) {kiln.opaque = 1.5 : f16} : (tensor<2xf32>) -> tensor<2xf32>
  return %z : tensor<2xf32>
}
func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = kiln.sigmoid %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func private @external(tensor<2xf32>) -> tensor<2xf32>

}
