// kiln-byte-tables: an elementwise function of one 8-bit tensor (ui8 or
// i8; every other operand a splat constant) that divides, rounds or calls
// a transcendental function becomes a lookup in a 256-entry table that the
// ops' folders compute.
// RUN: kiln-opt %s --split-input-file --kiln-byte-tables \
// RUN:   --mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s

// (2 x + 1) / 1 of a uint8 x: the table holds 1, 3, 5, ..., indexed by x.
// CHECK-LABEL: func.func @affine(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xui8>
// CHECK:         %[[I:.*]] = kiln.cast %[[X]] : tensor<2x3xui8> to tensor<2x3xi32>
// CHECK:         %[[T:.*]] = kiln.constant dense<[1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00,
// CHECK-SAME:    5.110000e+02]> : tensor<256xf32>
// CHECK:         %[[Y:.*]] = kiln.gather %[[T]], %[[I]] : tensor<256xf32>, tensor<2x3xi32>
// CHECK-NEXT:    return %[[Y]]
func.func @affine(%x: tensor<2x3xui8>) -> tensor<2x3xf32> {
  %two = kiln.constant dense<2.0> : tensor<2x3xf32>
  %one = kiln.constant dense<1.0> : tensor<2x3xf32>
  %f = kiln.cast %x : tensor<2x3xui8> to tensor<2x3xf32>
  %m = kiln.mul %f, %two : tensor<2x3xf32>
  %a = kiln.add %m, %one : tensor<2x3xf32>
  %d = kiln.div %a, %one : tensor<2x3xf32>
  return %d : tensor<2x3xf32>
}

// -----

// An int8 source is looked up at x + 128: entry 0 is f(-128). The QDQ
// form of a sigmoid (dequantize, sigmoid, quantize to uint8 with scale
// 1/256) into one table of uint8: f(-128) = round(256 * sigmoid(-12.8)) = 0,
// f(127) = round(256 * sigmoid(12.7)) saturated to 255.
// CHECK-LABEL: func.func @sigmoid(
// CHECK:         %[[I:.*]] = kiln.cast %arg0 : tensor<8xi8> to tensor<8xi32>
// CHECK:         %[[B:.*]] = kiln.constant dense<128> : tensor<8xi32>
// CHECK:         %[[J:.*]] = kiln.add %[[I]], %[[B]] : tensor<8xi32>
// CHECK:         %[[T:.*]] = kiln.constant dense<[0, 0, 0,
// CHECK-SAME:    255, 255]> : tensor<256xui8>
// CHECK:         kiln.gather %[[T]], %[[J]] : tensor<256xui8>, tensor<8xi32>
// CHECK-NOT:     kiln.sigmoid
func.func @sigmoid(%x: tensor<8xi8>) -> tensor<8xui8> {
  %s = kiln.constant dense<0.1> : tensor<8xf32>
  %q = kiln.constant dense<0.00390625> : tensor<8xf32>
  %f = kiln.cast %x : tensor<8xi8> to tensor<8xf32>
  %d = kiln.mul %f, %s : tensor<8xf32>
  %g = kiln.sigmoid %d : tensor<8xf32>
  %v = kiln.div %g, %q : tensor<8xf32>
  %r = kiln.round %v : tensor<8xf32>
  %y = kiln.cast %r : tensor<8xf32> to tensor<8xui8>
  return %y : tensor<8xui8>
}

// -----

// A value read by an op that is no function of the source (a reduction)
// is a table of its own; the function after it is another. The SiLU of a
// dequantized value (two users of one value) is one function of x.
// CHECK-LABEL: func.func @shared(
// CHECK-COUNT-2: kiln.gather
// CHECK-NOT:     kiln.sigmoid
// CHECK:         kiln.reduce_sum
func.func @shared(%x: tensor<4x8xui8>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %s = kiln.constant dense<0.1> : tensor<4x8xf32>
  %f = kiln.cast %x : tensor<4x8xui8> to tensor<4x8xf32>
  %d = kiln.mul %f, %s : tensor<4x8xf32>
  %g = kiln.sigmoid %d : tensor<4x8xf32>
  %m = kiln.mul %d, %g : tensor<4x8xf32>
  %r = kiln.reduce_sum %g, dims = [1] : tensor<4x8xf32>
  return %m, %r : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// An 8-bit function of an 8-bit value (a QuantizeLinear of a dequantized
// sigmoid) is looked through by the function after it: that one is a
// table of x too, composed of both (entry 0: x = 0, the sigmoid 0.5
// quantized to 128 and read back as 0.5, exp(0.5) = 1.64872122),
// and both lookups read x.
// CHECK-LABEL: func.func @chained(
// CHECK:         %[[I:.*]] = kiln.cast %arg0 : tensor<8xui8> to tensor<8xi32>
// CHECK:         %[[A:.*]] = kiln.gather %{{.*}}, %[[I]] : tensor<256xui8>, tensor<8xi32>
// CHECK:         %[[J:.*]] = kiln.cast %arg0 : tensor<8xui8> to tensor<8xi32>
// CHECK:         %[[T:.*]] = kiln.constant dense<[1.64872122,
// CHECK:         %[[B:.*]] = kiln.gather %[[T]], %[[J]] : tensor<256xf32>, tensor<8xi32>
// CHECK:         return %[[A]], %[[B]]
func.func @chained(%x: tensor<8xui8>) -> (tensor<8xui8>, tensor<8xf32>) {
  %s = kiln.constant dense<0.1> : tensor<8xf32>
  %q = kiln.constant dense<0.00390625> : tensor<8xf32>
  %f = kiln.cast %x : tensor<8xui8> to tensor<8xf32>
  %d = kiln.mul %f, %s : tensor<8xf32>
  %g = kiln.sigmoid %d : tensor<8xf32>
  %v = kiln.div %g, %q : tensor<8xf32>
  %r = kiln.round %v : tensor<8xf32>
  %y = kiln.cast %r : tensor<8xf32> to tensor<8xui8>
  %yf = kiln.cast %y : tensor<8xui8> to tensor<8xf32>
  %ym = kiln.mul %yf, %q : tensor<8xf32>
  %e = kiln.exp %ym : tensor<8xf32>
  return %y, %e : tensor<8xui8>, tensor<8xf32>
}

// -----

// The SiLU of a QDQ model: the dequantized x times its dequantized,
// requantized sigmoid, quantized again, is one table of x (the sigmoid's
// 8-bit value is looked through, not taken as a second source).
// CHECK-LABEL: func.func @quantized_silu(
// CHECK:         %[[I:.*]] = kiln.cast %arg0 : tensor<1x4x4x8xui8> to tensor<1x4x4x8xi32>
// CHECK:         %[[Y:.*]] = kiln.gather %{{.*}}, %[[I]] : tensor<256xui8>, tensor<1x4x4x8xi32>
// CHECK-NOT:     kiln.gather
// CHECK-NOT:     kiln.sigmoid
// CHECK:         return %[[Y]]
func.func @quantized_silu(%x: tensor<1x4x4x8xui8>) -> tensor<1x4x4x8xui8> {
  %xz = kiln.constant dense<130.0> : tensor<1x4x4x8xf32>
  %xs = kiln.constant dense<0.00104296394> : tensor<1x4x4x8xf32>
  %ss = kiln.constant dense<0.00390625> : tensor<1x4x4x8xf32>
  %ys = kiln.constant dense<5.2005396E-4> : tensor<1x4x4x8xf32>
  %yz = kiln.constant dense<122.0> : tensor<1x4x4x8xf32>
  %f = kiln.cast %x : tensor<1x4x4x8xui8> to tensor<1x4x4x8xf32>
  %c = kiln.sub %f, %xz : tensor<1x4x4x8xf32>
  %d = kiln.mul %c, %xs : tensor<1x4x4x8xf32>
  %g = kiln.sigmoid %d : tensor<1x4x4x8xf32>
  %gv = kiln.div %g, %ss : tensor<1x4x4x8xf32>
  %gr = kiln.round %gv : tensor<1x4x4x8xf32>
  %gq = kiln.cast %gr : tensor<1x4x4x8xf32> to tensor<1x4x4x8xui8>
  %gf = kiln.cast %gq : tensor<1x4x4x8xui8> to tensor<1x4x4x8xf32>
  %gd = kiln.mul %gf, %ss : tensor<1x4x4x8xf32>
  %m = kiln.mul %d, %gd : tensor<1x4x4x8xf32>
  %mv = kiln.div %m, %ys : tensor<1x4x4x8xf32>
  %mr = kiln.round %mv : tensor<1x4x4x8xf32>
  %ma = kiln.add %mr, %yz : tensor<1x4x4x8xf32>
  %y = kiln.cast %ma : tensor<1x4x4x8xf32> to tensor<1x4x4x8xui8>
  return %y : tensor<1x4x4x8xui8>
}

// -----

// What stays: a function of two sources (a residual addition of two
// dequantized tensors), one with a constant that differs per element (a
// per-channel scale), one too cheap to be worth a lookup (a
// DequantizeLinear: cast, subtract, multiply), and a function of a value
// that is not 8-bit.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     kiln.gather
// CHECK:         return
func.func @stays(%x: tensor<4xui8>, %y: tensor<4xui8>, %z: tensor<4xi16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = kiln.constant dense<0.5> : tensor<4xf32>
  %c = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %fx = kiln.cast %x : tensor<4xui8> to tensor<4xf32>
  %fy = kiln.cast %y : tensor<4xui8> to tensor<4xf32>
  %sum = kiln.add %fx, %fy : tensor<4xf32>
  %e = kiln.exp %sum : tensor<4xf32>
  %p = kiln.div %fx, %c : tensor<4xf32>
  %q = kiln.exp %p : tensor<4xf32>
  %d = kiln.sub %fx, %s : tensor<4xf32>
  %m = kiln.mul %d, %s : tensor<4xf32>
  %fz = kiln.cast %z : tensor<4xi16> to tensor<4xf32>
  %w = kiln.exp %fz : tensor<4xf32>
  return %e, %q, %m, %w : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
