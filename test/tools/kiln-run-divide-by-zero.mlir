// Integer division by zero and the overflowing INT_MIN / -1 compiled and
// run: defined results, no trap (SIGFPE would kill kiln-run, and a Python
// interpreter calling the module). x / 0 is -1 signed and the largest
// value unsigned; x % 0 is x; INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0.
//
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --input 7 --input 0 --input 200 --input 0 \
// RUN:   --input -9223372036854775808 --input -1 | FileCheck %s
// CHECK: out0: i32[] = -1
// CHECK-NEXT: out1: i32[] = 7
// CHECK-NEXT: out2: ui8[] = 255
// CHECK-NEXT: out3: ui8[] = 200
// CHECK-NEXT: out4: i64[] = -9223372036854775808
// CHECK-NEXT: out5: i64[] = 0
func.func @divide(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<ui8>, %d: tensor<ui8>, %e: tensor<i64>, %f: tensor<i64>) -> (tensor<i32>, tensor<i32>, tensor<ui8>, tensor<ui8>, tensor<i64>, tensor<i64>) {
  %0 = kiln.div %a, %b : tensor<i32>
  %1 = kiln.rem %a, %b : tensor<i32>
  %2 = kiln.div %c, %d : tensor<ui8>
  %3 = kiln.rem %c, %d : tensor<ui8>
  %4 = kiln.div %e, %f : tensor<i64>
  %5 = kiln.rem %e, %f : tensor<i64>
  return %0, %1, %2, %3, %4, %5 : tensor<i32>, tensor<i32>, tensor<ui8>, tensor<ui8>, tensor<i64>, tensor<i64>
}
