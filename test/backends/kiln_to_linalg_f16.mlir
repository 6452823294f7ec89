// f16 and bf16 on the CPU: elementwise ops compute in f32 (one arith.extf
// per operand, one arith.truncf for a float result), casts convert through
// f32, and the ops that mlir::kiln::widensHalfPrecision run on widened
// operands.
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @add_f16
// CHECK: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// CHECK: %[[WX:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[WY:.+]] = arith.extf %[[Y]] : f16 to f32
// CHECK: %[[S:.+]] = arith.addf %[[WX]], %[[WY]] : f32
// CHECK: %[[R:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
func.func @add_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kiln.add %a, %b : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @exp_bf16
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.exp %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @exp_bf16(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = kiln.exp %a : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// A comparison has an i1 result, which is not truncated.
// CHECK-LABEL: func.func @compare_f16
// CHECK: arith.cmpf olt, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: linalg.yield %{{.+}} : i1
func.func @compare_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xi1> {
  %0 = kiln.compare lt, %a, %b : tensor<4xf16>
  return %0 : tensor<4xi1>
}

// -----

// f32 to f16 is one truncf; f64 to f16 rounds to odd in f32 first, so the
// two roundings give the correctly rounded value; f16 to an integer
// extends to f32 and converts from there.
// CHECK-LABEL: func.func @casts_f16
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.ori
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.fptosi %{{.+}} : f32 to i32
func.func @casts_f16(%a: tensor<4xf32>, %b: tensor<4xf64>, %c: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xi32>) {
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xf16>
  %1 = kiln.cast %b : tensor<4xf64> to tensor<4xf16>
  %2 = kiln.cast %c : tensor<4xf16> to tensor<4xi32>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xf16>, tensor<4xi32>
}

// -----

// Data movement needs no arithmetic.
// CHECK-LABEL: func.func @transpose_bf16
// CHECK: linalg.transpose
func.func @transpose_bf16(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  %0 = kiln.transpose %a, permutation = [1, 0] : tensor<2x3xbf16>
  return %0 : tensor<3x2xbf16>
}

// -----

// Reductions, scans, windows, convolutions, iota and f16 products compute
// in f32: the operands are widened (exactly), the op runs on f32 and the
// result is rounded once.
// CHECK-LABEL: func.func @reduce_sum_bf16
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}}ins(%{{.+}} : tensor<4xf32>) outs(%{{.+}} : tensor<f32>)
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @reduce_sum_bf16(%a: tensor<4xbf16>) -> tensor<bf16> {
  %0 = kiln.reduce_sum %a, dims = [0] : tensor<4xbf16>
  return %0 : tensor<bf16>
}

// -----

// An f16 product is an f32 product of the widened operands (sgemm computes
// the same exact products and f32 sums); a bf16 one stays bf16 for
// oneDNN's bf16 GEMM.
// CHECK-LABEL: func.func @matmul_f16
// CHECK-COUNT-2: arith.extf %{{.+}} : f16 to f32
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3x4xf32>) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-NOT: arith.extf
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x3xbf16>, tensor<3x4xbf16>) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK-NOT: arith.truncf
func.func @matmul_f16(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>) -> tensor<2x4xf16> {
  %0 = kiln.matmul %a, %b : tensor<2x3xf16>, tensor<3x4xf16>
  return %0 : tensor<2x4xf16>
}
func.func @matmul_bf16(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x4xf32> {
  %0 = kiln.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> f32
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @iota_f16
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @iota_f16() -> tensor<4xf16> {
  %0 = kiln.iota dim = 0 : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Inside control flow too.
// CHECK-LABEL: func.func @f16_in_loop
// CHECK: scf.for
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @f16_in_loop(%a: tensor<2x4xf16>) -> tensor<2x4xf16> {
  %r = kiln.for 2 iterations (%a) : (tensor<2x4xf16>) {
  ^bb0(%i: tensor<i64>, %v: tensor<2x4xf16>):
    %n = kiln.cumsum %v, dim = 1 : tensor<2x4xf16>
    kiln.yield %n : tensor<2x4xf16>
  }
  return %r : tensor<2x4xf16>
}
