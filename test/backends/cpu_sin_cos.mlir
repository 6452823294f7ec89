// kiln-cpu-sin-cos replaces f32 sin and cos by calls of kiln_sinf and
// kiln_cosf, which it defines with 4-, 8- and 16-lane forms named in LLVM's
// vector-function-abi-variant attribute; f64 stays math (libm).
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-cpu-sin-cos | FileCheck %s

// CHECK-LABEL: func.func @scalar(
// CHECK-SAME:    %[[X:.*]]: f32, %[[Y:.*]]: f64
// CHECK:         call @kiln_sinf(%[[X]]) : (f32) -> f32
// CHECK:         call @kiln_cosf(%[[X]]) : (f32) -> f32
// CHECK:         math.cos %[[Y]] : f64
// CHECK:       func.func private @kiln_sinf(%[[A:.*]]: f32) -> f32
// CHECK-SAME:    kiln.sin_cos_helper
// CHECK-SAME:    memory = #llvm.memory_effects<other = none, argMem = none, inaccessibleMem = none>
// CHECK-SAME:    passthrough = ["noinline", "nounwind", "willreturn", ["vector-function-abi-variant", "_ZGV_LLVM_N4v_kiln_sinf(kiln_sinf_v4),_ZGV_LLVM_N8v_kiln_sinf(kiln_sinf_v8),_ZGV_LLVM_N16v_kiln_sinf(kiln_sinf_v16)"]]
// Beyond 2^24 (and for inf and NaN) libm; below, the reduction in f64.
// CHECK:         %[[LIMIT:.*]] = arith.constant 0x4B800000 : f32
// CHECK:         %[[ABS:.*]] = math.absf %[[A]] : f32
// CHECK:         %[[FAR:.*]] = arith.cmpf uge, %[[ABS]], %[[LIMIT]] : f32
// CHECK:         scf.if %[[FAR]] -> (f32) {
// CHECK:           math.sin %[[A]] : f32
// CHECK:         } else {
// CHECK:           arith.extf {{.*}} : f32 to f64
// CHECK:           math.roundeven {{.*}} : f64
// CHECK:           math.fma
// CHECK:           arith.truncf {{.*}} : f64 to f32
// The vector forms: the reduction on every lane, libm only where needed.
// CHECK:       func.func private @kiln_sinf_v4(%{{.*}}: vector<4xf32>) -> vector<4xf32>
// CHECK:         vector.reduction <or>, %{{.*}} : vector<4xi1> into i1
// CHECK:         scf.for
// CHECK:           math.sin %{{.*}} : f32
// CHECK:       func.func private @kiln_sinf_v8(
// CHECK:       func.func private @kiln_sinf_v16(
// CHECK:       func.func private @kiln_cosf(
// CHECK-SAME:    "_ZGV_LLVM_N4v_kiln_cosf(kiln_cosf_v4),_ZGV_LLVM_N8v_kiln_cosf(kiln_cosf_v8),_ZGV_LLVM_N16v_kiln_cosf(kiln_cosf_v16)"
// CHECK:           math.cos %{{.*}} : f32
// CHECK:       func.func private @kiln_cosf_v4(
// CHECK:       func.func private @kiln_cosf_v8(
// CHECK:       func.func private @kiln_cosf_v16(
func.func @scalar(%x: f32, %y: f64) -> (f32, f32, f64) {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  %d = math.cos %y : f64
  return %s, %c, %d : f32, f32, f64
}

// -----

// A vector of 4, 8 or 16 lanes calls its form; any other vector one scalar
// call per element.
// CHECK-LABEL: func.func @vectors(
// CHECK-SAME:    %[[V:.*]]: vector<8xf32>, %[[W:.*]]: vector<2x3xf32>
// CHECK:         call @kiln_cosf_v8(%[[V]]) : (vector<8xf32>) -> vector<8xf32>
// CHECK:         %[[E:.*]] = vector.extract %[[W]][0, 0] : f32 from vector<2x3xf32>
// CHECK:         %[[C:.*]] = call @kiln_cosf(%[[E]]) : (f32) -> f32
// CHECK:         vector.insert %[[C]], %{{.*}} [0, 0] : f32 into vector<2x3xf32>
// CHECK-COUNT-5: call @kiln_cosf(
// CHECK-NOT:     call
// CHECK:         return
func.func @vectors(%v: vector<8xf32>, %w: vector<2x3xf32>) -> (vector<8xf32>, vector<2x3xf32>) {
  %c = math.cos %v : vector<8xf32>
  %d = math.cos %w : vector<2x3xf32>
  return %c, %d : vector<8xf32>, vector<2x3xf32>
}

// -----

// Nothing to do: no helper is defined.
// CHECK-LABEL: func.func @none(
// CHECK-NOT:   kiln_
func.func @none(%y: f64) -> f64 {
  %d = math.sin %y : f64
  return %d : f64
}

// -----

func.func private @kiln_cosf_v8(vector<8xf32>) -> vector<8xf32>

func.func @taken(%x: f32) -> f32 {
  // expected-error @below {{kiln-cpu-sin-cos: the module already defines 'kiln_cosf_v8'}}
  %c = math.cos %x : f32
  return %c : f32
}
