// MLIR 19 alone: `mlir-opt --canonicalize` erases this generic, which
// writes 1 to every element of %buf (see argmin_inplace_constant_body.mlir).
// Expected to fail until the canonicalizer keeps it (LLVM after 19).
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
