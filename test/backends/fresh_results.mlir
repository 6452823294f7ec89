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

// -----

// A loop that carries a buffer it updates in place (scatter_add's rows
// added into a copy of its table) returns the allocation it started from,
// so the caller's output is written directly and not copied into; twice
// returned, the second is copied.
// CHECK-LABEL: func.func @carried_by_loop(
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[R:.+]] = scf.for
// CHECK:         %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         linalg.copy ins(%[[R]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK:         return %[[A]], %[[B]]
func.func @carried_by_loop(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %a) -> (memref<4xf32>) {
    %v = memref.load %t[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %t[%i] : memref<4xf32>
    scf.yield %t : memref<4xf32>
  }
  return %r, %r : memref<4xf32>, memref<4xf32>
}

// -----

// A loop that yields another buffer than the one it was given is copied.
// CHECK-LABEL: func.func @swapped_by_loop(
// CHECK:         %[[R:.+]]:2 = scf.for
// CHECK:         %[[C:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         linalg.copy ins(%[[R]]#0 : memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK:         return %[[C]]
func.func @swapped_by_loop(%x: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %a, %t = %b) -> (memref<4xf32>, memref<4xf32>) {
    scf.yield %t, %s : memref<4xf32>, memref<4xf32>
  }
  return %r#0 : memref<4xf32>
}

// -----

// A result tied to a donated argument that the loop updated in place
// (kiln.tied_result): nothing is copied, an allocation nothing writes is
// returned in its place (it becomes an out-param the function leaves
// alone), and the tie moves to the result.
// CHECK-LABEL: func.func @tied_in_place(
// CHECK-SAME:      %[[X:[^:]+]]: memref<4xf32>) -> (memref<4xf32> {kiln.tied_argument = 0 : i64})
// CHECK-NOT:     linalg.copy
// CHECK:         scf.for
// CHECK-NOT:     linalg.copy
// CHECK:         %[[UNUSED:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    return %[[UNUSED]]
func.func @tied_in_place(%x: memref<4xf32> {kiln.tied_result = 0 : i64}) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %x) -> (memref<4xf32>) {
    %v = memref.load %t[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %t[%i] : memref<4xf32>
    scf.yield %t : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// A tied result computed in a buffer of its own is copied into the donated
// argument after every other result is copied out, since the untied result
// (the argument's old value) reads it.
// CHECK-LABEL: func.func @tied_written_last(
// CHECK-SAME:      %[[X:[^:]+]]: memref<4xf32>) -> (memref<4xf32>, memref<4xf32> {kiln.tied_argument = 0 : i64})
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[X]], %[[A]]
// CHECK:         %[[OLD:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[OLD]] : memref<4xf32>)
// CHECK-NEXT:    linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[X]] : memref<4xf32>)
// CHECK-NEXT:    %[[UNUSED:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    return %[[OLD]], %[[UNUSED]]
func.func @tied_written_last(%x: memref<4xf32> {kiln.tied_result = 1 : i64}) -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  return %x, %a : memref<4xf32>, memref<4xf32>
}
