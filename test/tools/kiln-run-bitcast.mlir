// kiln.bitcast compiled and run on scalars whose bits are worked out by
// hand: 1.0f is 0x3F800000, -2.5f is 0xC0200000, 0.5f is 0x3F000000, the
// f64 -0.0 is the sign bit alone, the f16 1.0 is 0x3C00, and -1 as i8 is
// 255 as ui8.
//
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --input 1 --input -2.5 --input 1056964608 --input -0.0 \
// RUN:   --input 1 --input -1 | FileCheck %s
// CHECK: out0: i32[] = 1065353216
// CHECK-NEXT: out1: i32[] = -1071644672
// CHECK-NEXT: out2: f32[] = 0.5
// CHECK-NEXT: out3: i64[] = -9223372036854775808
// CHECK-NEXT: out4: ui16[] = 15360
// CHECK-NEXT: out5: ui8[] = 255
func.func @bits(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<f64>, %e: tensor<f16>, %f: tensor<i8>) -> (tensor<i32>, tensor<i32>, tensor<f32>, tensor<i64>, tensor<ui16>, tensor<ui8>) {
  %0 = kiln.bitcast %a : tensor<f32> to tensor<i32>
  %1 = kiln.bitcast %b : tensor<f32> to tensor<i32>
  %2 = kiln.bitcast %c : tensor<i32> to tensor<f32>
  %3 = kiln.bitcast %d : tensor<f64> to tensor<i64>
  %4 = kiln.bitcast %e : tensor<f16> to tensor<ui16>
  %5 = kiln.bitcast %f : tensor<i8> to tensor<ui8>
  return %0, %1, %2, %3, %4, %5 : tensor<i32>, tensor<i32>, tensor<f32>, tensor<i64>, tensor<ui16>, tensor<ui8>
}
