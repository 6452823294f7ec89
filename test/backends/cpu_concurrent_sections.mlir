// kiln-cpu-concurrent-sections makes the sections of
// kiln-cpu-concurrent-branches OpenMP sections, side by side where the call
// has the thread count they were planned for.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-concurrent-sections \
// RUN:   -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @sections(
// CHECK-DAG:     %[[T:.*]] = arith.constant 2 : i32
// CHECK-DAG:     %[[MAX:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK:         %[[ON:.*]] = arith.cmpi eq, %[[MAX]], %[[T]] : i32
// CHECK:         omp.parallel if(%[[ON]]) num_threads(%[[T]] : i32) {
// CHECK-NEXT:      omp.sections {
// CHECK-NEXT:        omp.section {
// CHECK-NEXT:          linalg.fill ins(%{{.*}} : f32) outs(%[[A:.*]] : memref<64xf32>)
// CHECK-NEXT:          linalg.copy ins(%[[A]] : memref<64xf32>) outs(%[[C:.*]] : memref<64xf32>)
// CHECK-NEXT:          omp.terminator
// CHECK-NEXT:        }
// CHECK-NEXT:        omp.section {
// CHECK-NEXT:          linalg.fill ins(%{{.*}} : f32) outs(%[[B:.*]] : memref<64xf32>)
// CHECK-NEXT:          omp.terminator
// CHECK-NEXT:        }
// CHECK-NEXT:        omp.terminator
// CHECK-NEXT:      }
// CHECK-NEXT:      omp.terminator
// CHECK-NEXT:    }
// CHECK-NOT:     scf.parallel
// CHECK:         linalg.add ins(%[[C]], %[[B]]
// CHECK:       func.func private @omp_get_max_threads() -> i32
func.func @sections(%out: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  %c = memref.alloc() : memref<64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    scf.index_switch %i
    case 0 {
      linalg.fill ins(%one : f32) outs(%a : memref<64xf32>)
      linalg.copy ins(%a : memref<64xf32>) outs(%c : memref<64xf32>)
      scf.yield
    }
    case 1 {
      linalg.fill ins(%two : f32) outs(%b : memref<64xf32>)
      scf.yield
    }
    default {
    }
    scf.reduce
  } {kiln.concurrent = 2 : i64}
  linalg.add ins(%c, %b : memref<64xf32>, memref<64xf32>) outs(%out : memref<64xf32>)
  return
}

// -----

// An scf.parallel without the attribute is a parallel loop like any other.
// CHECK-LABEL: func.func @plain(
// CHECK:         scf.parallel
// CHECK-NOT:     omp.
func.func @plain(%out: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

func.func @malformed(%out: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error @below {{a kiln.concurrent loop must hold one scf.index_switch on its induction variable}}
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    memref.store %one, %out[%i] : memref<64xf32>
    scf.reduce
  } {kiln.concurrent = 2 : i64}
  return
}
