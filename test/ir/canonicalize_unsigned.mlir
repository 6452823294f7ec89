// Folds on ui8 ... ui64 follow the unsigned semantics of KilnOps.td: the
// same bits as a signed type would fold to different values (200 is -56 as
// i8). The shifts fold too, amounts of at least the width included.
// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @fold_unsigned_arith
// CHECK-DAG: %[[DIV:.+]] = kiln.constant dense<[66, 3]> : tensor<2xui8>
// CHECK-DAG: %[[REM:.+]] = kiln.constant dense<[4, 255]> : tensor<2xui8>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[200, 2]> : tensor<2xui8>
// CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<[3, 1]> : tensor<2xui8>
// CHECK-DAG: %[[SIGN:.+]] = kiln.constant dense<1> : tensor<2xui8>
// CHECK: return %[[DIV]], %[[REM]], %[[MAX]], %[[MIN]], %[[SIGN]]
func.func @fold_unsigned_arith() -> (tensor<2xui8>, tensor<2xui8>, tensor<2xui8>, tensor<2xui8>, tensor<2xui8>) {
  %a = kiln.constant dense<[200, 7]> : tensor<2xui8>
  %b = kiln.constant dense<[3, 2]> : tensor<2xui8>
  %c = kiln.constant dense<[200, 255]> : tensor<2xui8>
  %d = kiln.constant dense<[7, 0]> : tensor<2xui8>
  %e = kiln.constant dense<[200, 1]> : tensor<2xui8>
  %div = kiln.div %a, %b : tensor<2xui8>
  %rem = kiln.rem %c, %d : tensor<2xui8>
  %max = kiln.max %e, %b : tensor<2xui8>
  %min = kiln.min %e, %b : tensor<2xui8>
  %sign = kiln.sign %e : tensor<2xui8>
  return %div, %rem, %max, %min, %sign : tensor<2xui8>, tensor<2xui8>, tensor<2xui8>, tensor<2xui8>, tensor<2xui8>
}

// -----

// The same bits as i8: signed division, order and sign.
// CHECK-LABEL: func.func @fold_signed_i8
// CHECK-DAG: %[[DIV:.+]] = kiln.constant dense<[-18, 3]> : tensor<2xi8>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[3, 2]> : tensor<2xi8>
// CHECK-DAG: %[[SIGN:.+]] = kiln.constant dense<[-1, 1]> : tensor<2xi8>
// CHECK: return %[[DIV]], %[[MAX]], %[[SIGN]]
func.func @fold_signed_i8() -> (tensor<2xi8>, tensor<2xi8>, tensor<2xi8>) {
  %a = kiln.constant dense<[-56, 7]> : tensor<2xi8>
  %b = kiln.constant dense<[3, 2]> : tensor<2xi8>
  %e = kiln.constant dense<[-56, 1]> : tensor<2xi8>
  %div = kiln.div %a, %b : tensor<2xi8>
  %max = kiln.max %e, %b : tensor<2xi8>
  %sign = kiln.sign %e : tensor<2xi8>
  return %div, %max, %sign : tensor<2xi8>, tensor<2xi8>, tensor<2xi8>
}

// -----

// ui64 values above 2^63 compare above the small ones.
// CHECK-LABEL: func.func @fold_unsigned_compare
// CHECK: %[[R:.+]] = kiln.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK: return %[[R]]
func.func @fold_unsigned_compare() -> tensor<3xi1> {
  %a = kiln.constant dense<[18446744073709551615, 1, 0]> : tensor<3xui64>
  %b = kiln.constant dense<[3, 2, 9223372036854775808]> : tensor<3xui64>
  %r = kiln.compare lt, %a, %b : tensor<3xui64>
  return %r : tensor<3xi1>
}

// -----

// Casts: unsigned sources zero-extend and convert as unsigned; float to
// unsigned saturates at 0 and the maximum, NaN gives 0; a signed source
// sign-extends into a wider unsigned type.
// CHECK-LABEL: func.func @fold_unsigned_casts
// CHECK-DAG: %[[WIDE:.+]] = kiln.constant dense<[200, 255]> : tensor<2xi32>
// CHECK-DAG: %[[FLOAT:.+]] = kiln.constant dense<[2.000000e+02, 2.550000e+02]> : tensor<2xf32>
// CHECK-DAG: %[[SAT:.+]] = kiln.constant dense<[0, 255, 2, 0]> : tensor<4xui8>
// CHECK-DAG: %[[SEXT:.+]] = kiln.constant dense<[65535, 5]> : tensor<2xui16>
// CHECK: return %[[WIDE]], %[[FLOAT]], %[[SAT]], %[[SEXT]]
func.func @fold_unsigned_casts() -> (tensor<2xi32>, tensor<2xf32>, tensor<4xui8>, tensor<2xui16>) {
  %u = kiln.constant dense<[200, 255]> : tensor<2xui8>
  %f = kiln.constant dense<[-1.5, 300.0, 2.7, 0x7FC00000]> : tensor<4xf32>
  %s = kiln.constant dense<[-1, 5]> : tensor<2xi8>
  %0 = kiln.cast %u : tensor<2xui8> to tensor<2xi32>
  %1 = kiln.cast %u : tensor<2xui8> to tensor<2xf32>
  %2 = kiln.cast %f : tensor<4xf32> to tensor<4xui8>
  %3 = kiln.cast %s : tensor<2xi8> to tensor<2xui16>
  return %0, %1, %2, %3 : tensor<2xi32>, tensor<2xf32>, tensor<4xui8>, tensor<2xui16>
}

// -----

// Shifts: zeros come in from the right, and from the left on unsigned
// types; copies of the sign bit from the left on signed ones. Amounts of
// at least the width shift everything out.
// CHECK-LABEL: func.func @fold_shifts
// CHECK-DAG: %[[SHL:.+]] = kiln.constant dense<[2, 64, 0]> : tensor<3xui8>
// CHECK-DAG: %[[LSHR:.+]] = kiln.constant dense<[8, 1, 0]> : tensor<3xui8>
// CHECK-DAG: %[[ASHR:.+]] = kiln.constant dense<[-4, -1, 0]> : tensor<3xi8>
// CHECK: return %[[SHL]], %[[LSHR]], %[[ASHR]]
func.func @fold_shifts() -> (tensor<3xui8>, tensor<3xui8>, tensor<3xi8>) {
  %x = kiln.constant dense<[1, 16, 1]> : tensor<3xui8>
  %n = kiln.constant dense<[1, 2, 8]> : tensor<3xui8>
  %y = kiln.constant dense<[16, 255, 255]> : tensor<3xui8>
  %m = kiln.constant dense<[1, 7, 8]> : tensor<3xui8>
  %z = kiln.constant dense<[-16, -1, 16]> : tensor<3xi8>
  %k = kiln.constant dense<[2, 9, -1]> : tensor<3xi8>
  %0 = kiln.shift_left %x, %n : tensor<3xui8>
  %1 = kiln.shift_right %y, %m : tensor<3xui8>
  %2 = kiln.shift_right %z, %k : tensor<3xi8>
  return %0, %1, %2 : tensor<3xui8>, tensor<3xui8>, tensor<3xi8>
}

// -----

// abs and relu are the identity on unsigned values; a shift by 0 is too.
// CHECK-LABEL: func.func @unsigned_identities
// CHECK-SAME: (%[[A:.+]]: tensor<4xui32>)
// CHECK-NOT: kiln.abs
// CHECK-NOT: kiln.relu
// CHECK-NOT: kiln.shift
// CHECK: return %[[A]], %[[A]], %[[A]]
func.func @unsigned_identities(%a: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>, tensor<4xui32>) {
  %zero = kiln.constant dense<0> : tensor<4xui32>
  %0 = kiln.abs %a : tensor<4xui32>
  %1 = kiln.relu %a : tensor<4xui32>
  %2 = kiln.shift_left %a, %zero : tensor<4xui32>
  return %0, %1, %2 : tensor<4xui32>, tensor<4xui32>, tensor<4xui32>
}

// -----

// abs(neg x) is not abs x on unsigned types (neg 3 is 2^32 - 3).
// CHECK-LABEL: func.func @unsigned_abs_neg
// CHECK: %[[N:.+]] = kiln.neg
// CHECK: return %[[N]]
func.func @unsigned_abs_neg(%a: tensor<4xui32>) -> tensor<4xui32> {
  %n = kiln.neg %a : tensor<4xui32>
  %0 = kiln.abs %n : tensor<4xui32>
  return %0 : tensor<4xui32>
}
