// f32 math at the edges of its domain. The harness draws inputs in [-2, 2],
// so each edge value is made from them at run time (constants alone would
// be folded at compile time and never reach the generated code).
//
// log of subnormal values: upstream's polynomial approximation of log
// clamps its input to the smallest normal f32, which would give
// log(FLT_MIN) = -87.34 for every one of them; kiln-cpu-math-approximation
// scales them into the normal range first.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: log_subnormal(arg0: f32[67]) -> (out0: f32[67], out1: f32[67], out2: f32[67])
func.func @log_subnormal(%x: tensor<67xf32>) -> (tensor<67xf32>, tensor<67xf32>, tensor<67xf32>) {
  %one = kiln.constant dense<1.0> : tensor<67xf32>
  %a = kiln.abs %x : tensor<67xf32>
  // In [1, 3].
  %m = kiln.add %a, %one : tensor<67xf32>
  // In [1e-39, 3e-39]: subnormal, with most of the mantissa bits left.
  %s1 = kiln.constant dense<1.0e-39> : tensor<67xf32>
  %v1 = kiln.mul %m, %s1 : tensor<67xf32>
  %l1 = kiln.log %v1 : tensor<67xf32>
  // In [1.4e-45, 4.2e-45]: the smallest subnormals (1 to 3 times 2^-149).
  %s2 = kiln.constant dense<1.4e-45> : tensor<67xf32>
  %v2 = kiln.mul %m, %s2 : tensor<67xf32>
  %l2 = kiln.log %v2 : tensor<67xf32>
  // Normal values just above FLT_MIN, for the other side of the switch.
  %s3 = kiln.constant dense<1.2e-38> : tensor<67xf32>
  %v3 = kiln.mul %m, %s3 : tensor<67xf32>
  %l3 = kiln.log %v3 : tensor<67xf32>
  return %l1, %l2, %l3 : tensor<67xf32>, tensor<67xf32>, tensor<67xf32>
}
