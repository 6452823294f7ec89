// kiln-fresh-results: a returned argument, or a buffer returned twice, is
// copied (linalg.copy) into an allocation of its own, so that every result
// is a distinct allocation that buffer-results-to-out-params can hoist into
// the caller's output; a result that already is one stays as it is.
// RUN: kiln-opt %s --split-input-file --kiln-fresh-results | FileCheck %s

// CHECK-LABEL: func.func @returns_argument(
// CHECK-SAME:      %[[X:.+]]: memref<4xf32>)
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:         return %[[A]]
func.func @returns_argument(%x: memref<4xf32>) -> memref<4xf32> {
  return %x : memref<4xf32>
}

// -----

// CHECK-LABEL: func.func @returns_twice(
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy
// CHECK:         %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK:         return %[[A]], %[[B]]
func.func @returns_twice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}

// -----

// CHECK-LABEL: func.func @fresh(
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    memref.copy
// CHECK-NEXT:    return %[[A]]
func.func @fresh(%x: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  return %a : memref<4xf32>
}
