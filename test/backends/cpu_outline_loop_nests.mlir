// kiln-cpu-outline-loop-nests: in a function with at least min-nests
// outermost loop nests, each moves into a private no_inline function
// called in its place; values from outside are its arguments, constants
// are copied in, its results are the function's. Loops around several
// nests and conditionals stay, their nests are outlined.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-outline-loop-nests="min-nests=2" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-outline-loop-nests="min-nests=4" | FileCheck %s --check-prefix=FEW

// Two kernels: a parallel loop reading %a and writing %b, then a loop nest
// of an scf.for around one scf.for, with a result. The constants of the
// bounds and the scale are copied into each function; %b and the step's
// index %n are arguments.
// CHECK-LABEL: func.func @two(
// CHECK-SAME:      %[[A:.+]]: memref<8xf32>, %[[B:.+]]: memref<8xf32>, %[[N:.+]]: index)
// CHECK-NOT:     scf.parallel
// CHECK:         call @two_nest(%[[A]], %[[B]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK:         %[[S:.+]] = call @two_nest_0(%[[N]], %[[B]]) : (index, memref<8xf32>) -> f32
// CHECK:         return %[[S]]
// CHECK:       func.func private @two_nest(%[[X:.+]]: memref<8xf32>, %[[Y:.+]]: memref<8xf32>) attributes {no_inline}
// CHECK-DAG:     arith.constant 0 : index
// CHECK-DAG:     arith.constant 8 : index
// CHECK-DAG:     arith.constant 2.0{{.*}} : f32
// CHECK:         scf.parallel
// CHECK:           memref.load %[[X]]
// CHECK:           memref.store %{{.+}}, %[[Y]]
// CHECK:         return
// CHECK:       func.func private @two_nest_0(%[[M:.+]]: index, %[[Z:.+]]: memref<8xf32>) -> f32 attributes {no_inline}
// CHECK:         %[[R:.+]] = scf.for %{{.+}} = %{{.+}} to %[[M]]
// CHECK:           scf.for
// CHECK:             memref.load %[[Z]]
// CHECK:         return %[[R]] : f32

// Under the threshold nothing moves (@source below has four nests, enough
// for both runs).
// FEW-LABEL: func.func @two(
// FEW:         scf.parallel
// FEW:         scf.for
// FEW-NOT:     call
// FEW-NOT:     func.func private
// FEW-LABEL: func.func @source(
// FEW-COUNT-4: call @source_nest
func.func @two(%a: memref<8xf32>, %b: memref<8xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<8xf32>
    scf.reduce
  }
  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %t = scf.for %k = %c0 to %c8 step %c1 iter_args(%in = %acc) -> f32 {
      %v = memref.load %b[%k] : memref<8xf32>
      %w = arith.addf %in, %v : f32
      scf.yield %w : f32
    }
    scf.yield %t : f32
  }
  return %s : f32
}

// -----

// A source loop (a kiln.for: an allocation and two kernels in its body)
// stays, and each kernel in it is outlined with the loop's index and the
// buffer allocated in it as arguments; so are the kernels in both
// branches of a conditional.
// CHECK-LABEL: func.func @source(
// CHECK:         scf.for %[[I:.+]] =
// CHECK:           %[[T:.+]] = memref.alloc() : memref<4xf32>
// CHECK:           call @source_nest(%[[I]], %[[T]]) : (index, memref<4xf32>) -> ()
// CHECK:           call @source_nest_0(%[[T]], %{{.+}}) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK:           memref.dealloc %[[T]]
// CHECK:         scf.if
// CHECK:           call @source_nest_1(
// CHECK:         } else {
// CHECK:           call @source_nest_2(
// CHECK-COUNT-4: func.func private @source_nest
// CHECK-NOT:     func.func
func.func @source(%a: memref<4xf32>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<4xf32>
    scf.for %k = %c0 to %c4 step %c1 {
      %f = arith.index_cast %i : index to i32
      %g = arith.sitofp %f : i32 to f32
      memref.store %g, %t[%k] : memref<4xf32>
    }
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %t[%k] : memref<4xf32>
      memref.store %v, %a[%k] : memref<4xf32>
    }
    memref.dealloc %t : memref<4xf32>
  }
  scf.if %p {
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %a[%k] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%k] : memref<4xf32>
    }
  } else {
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %a[%k] : memref<4xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %a[%k] : memref<4xf32>
    }
  }
  return
}
