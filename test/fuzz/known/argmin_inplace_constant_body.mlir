// Open bug, found by kiln-program-fuzz (seed 546 of the first generator).
//
// Expected: every element is (|argmin| + 1) - |argmin| = 1. Compiled with
// fusion (any other option), the CPU code returns the argmin itself; with
// --no-fusion it is right, as is the evaluator on the kiln-fuse result.
//
// Cause: after kiln-fuse-linalg-groups and CSE, the elementwise kernel and
// the argmin share one tensor.empty, so one-shot bufferization writes the
// kernel in place: `linalg.generic ins(%buf) outs(%buf)`. The canonicalizer
// after bufferization folds the kernel's body, (abs(x) + 1) - abs(x), to
// `linalg.yield %c1`, and then MLIR 19's EraseIdentityLinalgOp erases the
// whole generic: on buffers it only checks that the body is a lone
// linalg.yield and that the input and output are the same buffer, not that
// the yielded value is the input's block argument. memref_repro.mlir shows
// the upstream pattern alone (`mlir-opt --canonicalize` drops the generic).
// Upstream: llvm/llvm-project issue 129414, fixed by pull request 130000
// ("[mlir][linalg] Fix EraseIdentityLinalgOp on fill-like ops"), after
// LLVM 19. A fix in kiln would keep that canonicalization away from
// in-place generics after bufferization (or carry the upstream check).
//
// Check: build/test/fuzz/kiln-program-fuzz --file test/fuzz/known/argmin_inplace_constant_body.mlir
// As a lit test it is expected to fail until the bug is fixed; lit then
// reports an unexpected pass, and the program moves to test/e2e.
// RUN: kiln-compile %s -o %t.kmod && kiln-run %t.kmod | FileCheck %s
// XFAIL: *
// CHECK: out0: i64[2,2] = {{\[\[}}1, 1], [1, 1]]
func.func @main() -> tensor<2x2xi64> {
  %x = kiln.constant dense<[[[3.0, 1.0], [2.0, 5.0]], [[1.0, 4.0], [0.5, 2.0]], [[2.0, 0.0], [7.0, 1.0]], [[5.0, 3.0], [3.0, 6.0]], [[4.0, 2.0], [1.0, 0.5]], [[6.0, 7.0], [9.0, 8.0]], [[0.0, 5.0], [4.0, 3.0]], [[8.0, 6.0], [6.0, 9.0]]]> : tensor<8x2x2xf64>
  %a = kiln.argmin %x, dim = 0 : tensor<8x2x2xf64>
  %abs = kiln.abs %a : tensor<2x2xi64>
  %one = kiln.constant dense<1> : tensor<2x2xi64>
  %p = kiln.add %abs, %one : tensor<2x2xi64>
  %r = kiln.sub %p, %abs : tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}
