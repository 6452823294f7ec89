// The integer element types beyond i32 and i64: i8 and i16 (signless, read
// as signed) and ui8 ... ui64 (unsigned), and the shift ops. They parse,
// verify and print back; the ops that take integers take all of them.
// RUN: kiln-opt %s | FileCheck %s
// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @small_signed
// CHECK: kiln.add %{{.+}}, %{{.+}} : tensor<4xi8>
// CHECK: kiln.div %{{.+}}, %{{.+}} : tensor<4xi16>
// CHECK: kiln.cast %{{.+}} : tensor<4xi8> to tensor<4xi16>
func.func @small_signed(%a: tensor<4xi8>, %b: tensor<4xi16>) -> (tensor<4xi8>, tensor<4xi16>, tensor<4xi16>) {
  %0 = kiln.add %a, %a : tensor<4xi8>
  %1 = kiln.div %b, %b : tensor<4xi16>
  %2 = kiln.cast %a : tensor<4xi8> to tensor<4xi16>
  return %0, %1, %2 : tensor<4xi8>, tensor<4xi16>, tensor<4xi16>
}

// CHECK-LABEL: func.func @unsigned
// CHECK: kiln.constant dense<[0, 255]> : tensor<2xui8>
// CHECK: kiln.max %{{.+}}, %{{.+}} : tensor<2xui8>
// CHECK: kiln.rem %{{.+}}, %{{.+}} : tensor<2xui16>
// CHECK: kiln.compare lt, %{{.+}}, %{{.+}} : tensor<2xui32>
// CHECK: kiln.cast %{{.+}} : tensor<2xui64> to tensor<2xf32>
// CHECK: kiln.xor %{{.+}}, %{{.+}} : tensor<2xui8>
func.func @unsigned(%a: tensor<2xui8>, %b: tensor<2xui16>, %c: tensor<2xui32>, %d: tensor<2xui64>) -> (tensor<2xui8>, tensor<2xui16>, tensor<2xi1>, tensor<2xf32>, tensor<2xui8>) {
  %k = kiln.constant dense<[0, 255]> : tensor<2xui8>
  %0 = kiln.max %a, %k : tensor<2xui8>
  %1 = kiln.rem %b, %b : tensor<2xui16>
  %2 = kiln.compare lt, %c, %c : tensor<2xui32>
  %3 = kiln.cast %d : tensor<2xui64> to tensor<2xf32>
  %4 = kiln.xor %a, %k : tensor<2xui8>
  return %0, %1, %2, %3, %4 : tensor<2xui8>, tensor<2xui16>, tensor<2xi1>, tensor<2xf32>, tensor<2xui8>
}

// CHECK-LABEL: func.func @shifts
// CHECK: kiln.shift_left %{{.+}}, %{{.+}} : tensor<3xui8>
// CHECK: kiln.shift_right %{{.+}}, %{{.+}} : tensor<3xui8>
// CHECK: kiln.shift_right %{{.+}}, %{{.+}} : tensor<3xi64>
func.func @shifts(%a: tensor<3xui8>, %b: tensor<3xi64>) -> (tensor<3xui8>, tensor<3xui8>, tensor<3xi64>) {
  %0 = kiln.shift_left %a, %a : tensor<3xui8>
  %1 = kiln.shift_right %a, %a : tensor<3xui8>
  %2 = kiln.shift_right %b, %b : tensor<3xi64>
  return %0, %1, %2 : tensor<3xui8>, tensor<3xui8>, tensor<3xi64>
}

// Unsigned values travel through the region ops and stacks like any other.
// CHECK-LABEL: func.func @unsigned_loop
// CHECK: kiln.for 3 iterations
func.func @unsigned_loop(%a: tensor<4xui16>) -> tensor<4xui16> {
  %r = kiln.for 3 iterations (%a) : (tensor<4xui16>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xui16>):
    %n = kiln.add %v, %v : tensor<4xui16>
    kiln.yield %n : tensor<4xui16>
  }
  return %r : tensor<4xui16>
}
