// kiln.bitcast end to end: floats to integers of their width and back
// (which must give the input's bits again), and integers moved into the
// range of normal floats (plus the bits of 1.0) read as floats, so that no
// input pattern is a NaN whose payload the comparison could not check.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: floats_to_ints(arg0: f32[3,5], arg1: f64[7], arg2: f16[6], arg3: bf16[6]) -> (out0: i32[3,5], out1: ui64[7], out2: i16[6], out3: ui16[6], out4: f32[3,5], out5: f16[6])
func.func @floats_to_ints(%a: tensor<3x5xf32>, %b: tensor<7xf64>, %c: tensor<6xf16>, %d: tensor<6xbf16>) -> (tensor<3x5xi32>, tensor<7xui64>, tensor<6xi16>, tensor<6xui16>, tensor<3x5xf32>, tensor<6xf16>) {
  %ai = kiln.bitcast %a : tensor<3x5xf32> to tensor<3x5xi32>
  %bi = kiln.bitcast %b : tensor<7xf64> to tensor<7xui64>
  %ci = kiln.bitcast %c : tensor<6xf16> to tensor<6xi16>
  %di = kiln.bitcast %d : tensor<6xbf16> to tensor<6xui16>
  %back = kiln.bitcast %ai : tensor<3x5xi32> to tensor<3x5xf32>
  // f16 <-> bf16 keeps the bits, not the value.
  %dh = kiln.bitcast %d : tensor<6xbf16> to tensor<6xf16>
  return %ai, %bi, %ci, %di, %back, %dh : tensor<3x5xi32>, tensor<7xui64>, tensor<6xi16>, tensor<6xui16>, tensor<3x5xf32>, tensor<6xf16>
}

// CHECK: ints_to_floats(arg0: i32[9], arg1: i64[4], arg2: ui16[5], arg3: i8[8]) -> (out0: f32[9], out1: f64[4], out2: bf16[5], out3: ui8[8])
func.func @ints_to_floats(%a: tensor<9xi32>, %b: tensor<4xi64>, %c: tensor<5xui16>, %d: tensor<8xi8>) -> (tensor<9xf32>, tensor<4xf64>, tensor<5xbf16>, tensor<8xui8>) {
  %one32 = kiln.constant dense<1065353216> : tensor<9xi32>
  %one64 = kiln.constant dense<4607182418800017408> : tensor<4xi64>
  %oneb = kiln.constant dense<16256> : tensor<5xui16>
  %a1 = kiln.add %a, %one32 : tensor<9xi32>
  %b1 = kiln.add %b, %one64 : tensor<4xi64>
  %c1 = kiln.add %c, %oneb : tensor<5xui16>
  %af = kiln.bitcast %a1 : tensor<9xi32> to tensor<9xf32>
  %bf = kiln.bitcast %b1 : tensor<4xi64> to tensor<4xf64>
  %cf = kiln.bitcast %c1 : tensor<5xui16> to tensor<5xbf16>
  %du = kiln.bitcast %d : tensor<8xi8> to tensor<8xui8>
  return %af, %bf, %cf, %du : tensor<9xf32>, tensor<4xf64>, tensor<5xbf16>, tensor<8xui8>
}
