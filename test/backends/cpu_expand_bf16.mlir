// kiln-cpu-expand-bf16: conversions between bf16 and f32 become integer
// ops, so the CPU code calls no bf16 library routine: extf shifts the bits
// into the high half of an f32; truncf rounds the f32 bits to nearest even
// (adding 0x7fff plus the lowest kept bit) and maps NaN to the quiet NaN
// 0x7fc0. Other float conversions are left alone.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-expand-bf16 | FileCheck %s

// CHECK-LABEL: func.func @extend
// CHECK-SAME: (%[[A:.+]]: bf16)
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : i32
// CHECK: %[[BITS:.+]] = arith.bitcast %[[A]] : bf16 to i16
// CHECK: %[[WIDE:.+]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[HIGH:.+]] = arith.shli %[[WIDE]], %[[C16]] : i32
// CHECK: %[[F:.+]] = arith.bitcast %[[HIGH]] : i32 to f32
// CHECK: return %[[F]]
// CHECK-NOT: arith.extf
func.func @extend(%a: bf16) -> f32 {
  %0 = arith.extf %a : bf16 to f32
  return %0 : f32
}

// -----

// CHECK-LABEL: func.func @truncate
// CHECK-DAG: %[[NAN:.+]] = arith.constant 32704 : i16
// CHECK-DAG: %[[HALF:.+]] = arith.constant 32767 : i32
// CHECK: %[[ISNAN:.+]] = arith.cmpf une
// CHECK: arith.addi %{{.+}}, %[[HALF]] : i32
// CHECK: arith.trunci %{{.+}} : i32 to i16
// CHECK: arith.select %[[ISNAN]], %[[NAN]], %{{.+}} : i16
// CHECK: arith.bitcast %{{.+}} : i16 to bf16
// CHECK-NOT: arith.truncf
func.func @truncate(%a: f32) -> bf16 {
  %0 = arith.truncf %a : f32 to bf16
  return %0 : bf16
}

// -----

// f16 conversions are not bf16's: x86 has instructions for them (F16C),
// and libgcc the routines where it has not.
// CHECK-LABEL: func.func @half_untouched
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @half_untouched(%a: f16) -> f16 {
  %0 = arith.extf %a : f16 to f32
  %1 = arith.truncf %0 : f32 to f16
  return %1 : f16
}
