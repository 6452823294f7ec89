// MLIR 19's canonicalizer alone erases this generic, which writes 1 to
// every element of %buf, as an identity; kiln-canonicalize-buffers
// (canonicalize_buffers.mlir) makes it a fill instead. Expected to fail
// while kiln is on an LLVM whose canonicalizer has the bug; an unexpected
// pass says that the upstream fix (LLVM pull request 130000) has arrived
// and kiln-canonicalize-buffers can become the plain canonicalizer.
// RUN: mlir-opt --canonicalize %s | FileCheck %s
// XFAIL: *
// CHECK: linalg.generic
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%buf: memref<2x2xi64>) {
  %c1 = arith.constant 1 : i64
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%buf : memref<2x2xi64>) outs(%buf : memref<2x2xi64>) {
  ^bb0(%in: i64, %out: i64):
    linalg.yield %c1 : i64
  }
  return
}
