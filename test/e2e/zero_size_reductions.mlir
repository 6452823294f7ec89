// Reductions over a dim of size zero, followed by elementwise ops, so that
// fusion puts both into one reduction region. An empty sum is 0 and an
// empty max is -inf; the CPU backend's row tiling of reduction regions must
// leave such regions alone rather than crash.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: sum_rows_of_none(arg0: f32[0,3]) -> (out0: f32[3])
func.func @sum_rows_of_none(%x: tensor<0x3xf32>) -> tensor<3xf32> {
  %s = kiln.reduce_sum %x, dims = [0] : tensor<0x3xf32>
  %e = kiln.exp %s : tensor<3xf32>
  return %e : tensor<3xf32>
}

// CHECK: max_rows_of_none(arg0: f32[0,3]) -> (out0: f32[3])
func.func @max_rows_of_none(%x: tensor<0x3xf32>) -> tensor<3xf32> {
  %m = kiln.reduce_max %x, dims = [0] : tensor<0x3xf32>
  %e = kiln.exp %m : tensor<3xf32>
  return %e : tensor<3xf32>
}

// CHECK: sum_empty_rows_f64(arg0: f64[4,0]) -> (out0: f64[4])
func.func @sum_empty_rows_f64(%x: tensor<4x0xf64>) -> tensor<4xf64> {
  %s = kiln.reduce_sum %x, dims = [1] : tensor<4x0xf64>
  %one = kiln.constant dense<1.0> : tensor<4xf64>
  %a = kiln.add %s, %one : tensor<4xf64>
  return %a : tensor<4xf64>
}

// CHECK: max_empty_rows_f64(arg0: f64[4,0]) -> (out0: f64[4])
func.func @max_empty_rows_f64(%x: tensor<4x0xf64>) -> tensor<4xf64> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<4x0xf64>
  %e = kiln.exp %m : tensor<4xf64>
  return %e : tensor<4xf64>
}
