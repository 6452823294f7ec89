// Programs that kiln-program-fuzz (test/fuzz) found wrong, reduced, each
// kept once its bug was fixed (the table in test/fuzz/README.md).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-run %t.kmod --function argmin_constant_body_fixed_input | FileCheck %s --check-prefix=FIXED

// Seed 546 of the first generator. Every element is (|argmin| + 1) -
// |argmin| = 1. After fusion and CSE the elementwise kernel and the argmin
// share one tensor.empty, so bufferization writes the kernel in place
// (`ins(%b) outs(%b)`); its body folds to the constant 1, and MLIR 19's
// canonicalizer then erased it as an identity, returning the argmin
// (kiln-canonicalize-buffers, test/backends/canonicalize_buffers.mlir).
// CHECK: argmin_constant_body(arg0: f64[8,2,2]) -> (out0: i64[2,2])
func.func @argmin_constant_body(%x: tensor<8x2x2xf64>) -> tensor<2x2xi64> {
  %a = kiln.argmin %x, dim = 0 : tensor<8x2x2xf64>
  %abs = kiln.abs %a : tensor<2x2xi64>
  %one = kiln.constant dense<1> : tensor<2x2xi64>
  %p = kiln.add %abs, %one : tensor<2x2xi64>
  %r = kiln.sub %p, %abs : tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}

// The same on an input whose argmins are 1, 0, 2 and 4, none all 1.
// FIXED: out0: i64[2,2] = {{\[\[}}1, 1], [1, 1]]
func.func @argmin_constant_body_fixed_input() -> tensor<2x2xi64> {
  %x = kiln.constant dense<[[[3.0, 1.0], [2.0, 5.0]], [[1.0, 4.0], [0.5, 2.0]], [[2.0, 0.0], [7.0, 1.0]], [[5.0, 3.0], [3.0, 6.0]], [[4.0, 2.0], [1.0, 0.5]], [[6.0, 7.0], [9.0, 8.0]], [[0.0, 5.0], [4.0, 3.0]], [[8.0, 6.0], [6.0, 9.0]]]> : tensor<8x2x2xf64>
  %r = func.call @argmin_constant_body(%x) : (tensor<8x2x2xf64>) -> tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}
