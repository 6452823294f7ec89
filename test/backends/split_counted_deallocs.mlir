// kiln-split-counted-deallocs: the last buffer of a kiln.for (a scf.for of
// constant trips, at least one, whose body yields an allocation of its own)
// is freed in a dealloc of its own, apart from buffers that existed before
// the loop and from its other results of other allocations, so that none
// needs the generic helper's run-time aliasing check.
// RUN: kiln-opt %s --split-input-file --kiln-split-counted-deallocs | FileCheck %s

// What the loop started from and what it ended with, through its base
// buffer: two deallocs.
// CHECK-LABEL: func.func @start_and_end(
// CHECK:         %[[INIT:.+]] = memref.alloc() : memref<i32>
// CHECK:         %[[LOOP:.+]]:2 = scf.for
// CHECK:         %[[BASE:.+]], %{{.+}} = memref.extract_strided_metadata %[[LOOP]]#0
// CHECK:         bufferization.dealloc (%[[INIT]] : memref<i32>) if (%{{.+}})
// CHECK-NEXT:    bufferization.dealloc (%[[BASE]] : memref<i32>) if (%[[LOOP]]#1)
// CHECK-NEXT:    return
func.func @start_and_end(%x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  memref.copy %x, %init : memref<i32> to memref<i32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init, %owned = %false) -> (memref<i32>, i1) {
    %b = memref.alloc() : memref<i32>
    memref.copy %a, %b : memref<i32> to memref<i32>
    %base, %offset = memref.extract_strided_metadata %a : memref<i32> -> memref<i32>, index
    bufferization.dealloc (%base : memref<i32>) if (%owned)
    scf.yield %b, %true : memref<i32>, i1
  }
  %base, %offset = memref.extract_strided_metadata %r#0 : memref<i32> -> memref<i32>, index
  bufferization.dealloc (%init, %base : memref<i32>, memref<i32>) if (%true, %r#1)
  return
}

// -----

// With retained values: both parts retain them, and whether one was owned
// is the or of the parts' answers.
// CHECK-LABEL: func.func @retained(
// CHECK:         %[[LOOP:.+]]:2 = scf.for
// CHECK:         %[[REST:.+]] = bufferization.dealloc (%{{.+}} : memref<i32>) if (%{{.+}}) retain (%[[KEPT:.+]] : memref<i32>)
// CHECK-NEXT:    %[[ALONE:.+]] = bufferization.dealloc (%[[LOOP]]#0 : memref<i32>) if (%[[LOOP]]#1) retain (%[[KEPT]] : memref<i32>)
// CHECK-NEXT:    %[[OWNED:.+]] = arith.ori %[[REST]], %[[ALONE]] : i1
// CHECK-NEXT:    return %[[KEPT]], %[[OWNED]]
func.func @retained(%x: memref<i32>, %kept: memref<i32>) -> (memref<i32>, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %init, %owned = %false) -> (memref<i32>, i1) {
    %b = memref.alloc() : memref<i32>
    scf.yield %b, %true : memref<i32>, i1
  }
  %o = bufferization.dealloc (%init, %r#0 : memref<i32>, memref<i32>) if (%true, %r#1) retain (%kept : memref<i32>)
  return %kept, %o : memref<i32>, i1
}

// -----

// Left alone: a loop that may run no trip (its result may be its init),
// one whose trips the host knows only at run time, one whose body yields
// a buffer it did not allocate, and a buffer from after the loop (which
// may be a view of its result).
// CHECK-LABEL: func.func @no_trip(
// CHECK:         bufferization.dealloc (%{{.+}}, %{{.+}} : memref<i32>, memref<i32>)
// CHECK-LABEL: func.func @unknown_trips(
// CHECK:         bufferization.dealloc (%{{.+}}, %{{.+}} : memref<i32>, memref<i32>)
// CHECK-LABEL: func.func @passed_through(
// CHECK:         bufferization.dealloc (%{{.+}}, %{{.+}} : memref<i32>, memref<i32>)
// CHECK-LABEL: func.func @after_the_loop(
// CHECK:         bufferization.dealloc (%{{.+}}, %{{.+}} : memref<i32>, memref<4xi32>)
func.func @no_trip(%x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %r:2 = scf.for %i = %c0 to %c0 step %c1 iter_args(%a = %init, %owned = %false) -> (memref<i32>, i1) {
    %b = memref.alloc() : memref<i32>
    scf.yield %b, %true : memref<i32>, i1
  }
  bufferization.dealloc (%init, %r#0 : memref<i32>, memref<i32>) if (%true, %r#1)
  return
}
func.func @unknown_trips(%x: memref<i32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init, %owned = %false) -> (memref<i32>, i1) {
    %b = memref.alloc() : memref<i32>
    scf.yield %b, %true : memref<i32>, i1
  }
  bufferization.dealloc (%init, %r#0 : memref<i32>, memref<i32>) if (%true, %r#1)
  return
}
func.func @passed_through(%x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %init, %owned = %false) -> (memref<i32>, i1) {
    scf.yield %a, %owned : memref<i32>, i1
  }
  bufferization.dealloc (%init, %r#0 : memref<i32>, memref<i32>) if (%true, %r#1)
  return
}
func.func @after_the_loop(%x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %init, %owned = %false) -> (memref<i32>, i1) {
    %b = memref.alloc() : memref<i32>
    scf.yield %b, %true : memref<i32>, i1
  }
  %later = memref.alloc() : memref<4xi32>
  bufferization.dealloc (%r#0, %later : memref<i32>, memref<4xi32>) if (%r#1, %true)
  return
}

// -----

// Two results from two of the body's allocations: each is freed alone,
// and what the loop started from together. The same allocation yielded
// for both results keeps them in one dealloc.
// CHECK-LABEL: func.func @two_results(
// CHECK:         %[[LOOP:.+]]:4 = scf.for
// CHECK:         bufferization.dealloc (%{{.+}}, %{{.+}} : memref<i32>, memref<4xf32>) if
// CHECK-NEXT:    bufferization.dealloc (%[[LOOP]]#1 : memref<4xf32>) if (%[[LOOP]]#3)
// CHECK-NEXT:    bufferization.dealloc (%[[LOOP]]#0 : memref<i32>) if (%[[LOOP]]#2)
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @one_allocation_twice(
// CHECK:         bufferization.dealloc (%{{.+}}, %{{.+}}, %{{.+}} : memref<i32>, memref<i32>, memref<i32>)
func.func @two_results(%x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %other = memref.alloc() : memref<4xf32>
  %r:4 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a = %init, %b = %other, %oa = %false, %ob = %false) -> (memref<i32>, memref<4xf32>, i1, i1) {
    %na = memref.alloc() : memref<i32>
    %nb = memref.alloc() : memref<4xf32>
    scf.yield %na, %nb, %true, %true : memref<i32>, memref<4xf32>, i1, i1
  }
  bufferization.dealloc (%init, %other, %r#0, %r#1 : memref<i32>, memref<4xf32>, memref<i32>, memref<4xf32>) if (%true, %true, %r#2, %r#3)
  return
}
func.func @one_allocation_twice(%x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %true = arith.constant true
  %false = arith.constant false
  %init = memref.alloc() : memref<i32>
  %r:3 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a = %init, %b = %init, %o = %false) -> (memref<i32>, memref<i32>, i1) {
    %n = memref.alloc() : memref<i32>
    scf.yield %n, %n, %true : memref<i32>, memref<i32>, i1
  }
  bufferization.dealloc (%init, %r#0, %r#1 : memref<i32>, memref<i32>, memref<i32>) if (%true, %r#2, %r#2)
  return
}
