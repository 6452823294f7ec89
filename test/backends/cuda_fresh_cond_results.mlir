// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cuda-fresh-cond-results))' | FileCheck %s

// A cond whose second branch yields the function's argument: the argument
// is copied into a buffer that branch allocates, which it yields instead.
// The first branch yields a buffer of its own and is left as it is.
// CHECK-LABEL: func.func @argument
// CHECK-SAME:  (%[[P:.+]]: memref<i1>, %[[X:.+]]: memref<4xf32>)
// CHECK:       %[[C:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK:       scf.if %[[C]] -> (memref<4xf32>) {
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NOT:     linalg.copy
// CHECK:         scf.yield %[[A]] : memref<4xf32>
// CHECK:       } else {
// CHECK:         %[[F:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[F]] : memref<4xf32>)
// CHECK:         scf.yield %[[F]] : memref<4xf32>
// CHECK:       }
func.func @argument(%p: memref<i1>, %x: memref<4xf32>) -> memref<4xf32> {
  %c = memref.load %p[] : memref<i1>
  %r = scf.if %c -> (memref<4xf32>) {
    %a = memref.alloc() : memref<4xf32>
    %one = arith.constant 1.0 : f32
    linalg.fill ins(%one : f32) outs(%a : memref<4xf32>)
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// A buffer filled before the cond (a constant's copy), yielded through a
// cast by the first branch, for a result of a strided layout: the copy is
// of identity layout, cast to the result's type. The second branch yields
// a view of a buffer it allocates: its own, left alone.
// CHECK-LABEL: func.func @before_the_cond
// CHECK:       %[[ZERO:.+]] = memref.alloc() : memref<2x3xf32>
// CHECK:       scf.if %{{.+}} -> (memref<2x3xf32, strided<[?, ?], offset: ?>>) {
// CHECK:         %[[F:.+]] = memref.alloc() : memref<2x3xf32>
// CHECK:         linalg.copy ins(%{{.+}} : memref<2x3xf32, strided<[?, ?], offset: ?>>) outs(%[[F]] : memref<2x3xf32>)
// CHECK:         %[[CAST:.+]] = memref.cast %[[F]] : memref<2x3xf32> to memref<2x3xf32, strided<[?, ?], offset: ?>>
// CHECK:         scf.yield %[[CAST]]
// CHECK:       } else {
// CHECK:         %[[OWN:.+]] = memref.alloc() : memref<3x2xf32>
// CHECK-NOT:     linalg.copy
// CHECK:         memref.transpose %[[OWN]]
// CHECK-NOT:     linalg.copy
// CHECK:         scf.yield
func.func @before_the_cond(%p: memref<i1>) -> memref<2x3xf32, strided<[?, ?], offset: ?>> {
  %zero = memref.alloc() : memref<2x3xf32>
  %f = arith.constant 0.0 : f32
  linalg.fill ins(%f : f32) outs(%zero : memref<2x3xf32>)
  %c = memref.load %p[] : memref<i1>
  %r = scf.if %c -> (memref<2x3xf32, strided<[?, ?], offset: ?>>) {
    %v = memref.cast %zero : memref<2x3xf32> to memref<2x3xf32, strided<[?, ?], offset: ?>>
    scf.yield %v : memref<2x3xf32, strided<[?, ?], offset: ?>>
  } else {
    %own = memref.alloc() : memref<3x2xf32>
    linalg.fill ins(%f : f32) outs(%own : memref<3x2xf32>)
    %t = memref.transpose %own (i, j) -> (j, i) : memref<3x2xf32> to memref<2x3xf32, strided<[1, 2]>>
    %v = memref.cast %t : memref<2x3xf32, strided<[1, 2]>> to memref<2x3xf32, strided<[?, ?], offset: ?>>
    scf.yield %v : memref<2x3xf32, strided<[?, ?], offset: ?>>
  }
  return %r : memref<2x3xf32, strided<[?, ?], offset: ?>>
}

// -----

// A loop's result computed in the branch is the branch's own; so is a
// buffer of a nested region.
// CHECK-LABEL: func.func @loop_in_branch
// CHECK-NOT:   linalg.copy
// CHECK:       return
func.func @loop_in_branch(%p: memref<i1>, %x: memref<f32>) -> memref<f32> {
  %c = memref.load %p[] : memref<i1>
  %r = scf.if %c -> (memref<f32>) {
    %a = memref.alloc() : memref<f32>
    %w = scf.while (%v = %a) : (memref<f32>) -> memref<f32> {
      %go = memref.load %p[] : memref<i1>
      scf.condition(%go) %v : memref<f32>
    } do {
    ^bb0(%v: memref<f32>):
      %n = memref.alloc() : memref<f32>
      scf.yield %n : memref<f32>
    }
    scf.yield %w : memref<f32>
  } else {
    %b = memref.alloc() : memref<f32>
    scf.yield %b : memref<f32>
  }
  return %r : memref<f32>
}

// -----

// Left alone: an scf.if on another condition than a loaded predicate, a
// result of dynamic shape, and a result whose layout a buffer of identity
// layout cannot be cast to.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   linalg.copy
// CHECK-NOT:   memref.alloc
// CHECK:       return
func.func @left_alone(%p: memref<i1>, %i: index, %x: memref<4xf32>,
                      %d: memref<?xf32>, %s: memref<2xf32, strided<[1], offset: 2>>)
    -> (memref<4xf32>, memref<?xf32>, memref<2xf32, strided<[1], offset: 2>>) {
  %zero = arith.constant 0 : index
  %b = arith.cmpi eq, %i, %zero : index
  %r = scf.if %b -> (memref<4xf32>) {
    scf.yield %x : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  %c = memref.load %p[] : memref<i1>
  %e:2 = scf.if %c -> (memref<?xf32>, memref<2xf32, strided<[1], offset: 2>>) {
    scf.yield %d, %s : memref<?xf32>, memref<2xf32, strided<[1], offset: 2>>
  } else {
    scf.yield %d, %s : memref<?xf32>, memref<2xf32, strided<[1], offset: 2>>
  }
  return %r, %e#0, %e#1 : memref<4xf32>, memref<?xf32>, memref<2xf32, strided<[1], offset: 2>>
}
