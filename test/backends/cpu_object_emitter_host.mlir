// On a host with AVX-512F, the code kiln-compile generates for the host CPU
// (the default target) uses 512-bit registers in its vector loops.
// REQUIRES: avx512f
// RUN: kiln-compile %s --emit=obj -o %t.o
// RUN: llvm-objdump -d --no-show-raw-insn %t.o | FileCheck %s

// CHECK: vmulps {{.*}}%zmm
func.func @scale_shift(%x: tensor<4099xf32>, %a: tensor<4099xf32>,
                       %b: tensor<4099xf32>) -> tensor<4099xf32> {
  %xa = kiln.mul %x, %a : tensor<4099xf32>
  %y = kiln.add %xa, %b : tensor<4099xf32>
  return %y : tensor<4099xf32>
}
