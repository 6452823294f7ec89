// Compiled kiln.rng_bits gives Random123's known answers of
// Threefry-2x32-20 (see test/ir/rng_bits.mlir), with the key and counter
// arriving at run time so that nothing folds.
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --input 0 --input 0 --input 0 --input 0 \
// RUN:   | FileCheck %s --check-prefix=ZERO
// ZERO: out0: ui32[] = 1797259609
// ZERO-NEXT: out1: ui32[] = 2579123966
// ZERO-NEXT: out2: ui32[] = 4070199207
// RUN: kiln-run %t.kmod --input 4294967295 --input 4294967295 --input 4294967295 \
// RUN:   --input 4294967295 | FileCheck %s --check-prefix=ONES
// ONES: out0: ui32[] = 481924860
// ONES-NEXT: out1: ui32[] = 3137350631
// ONES-NEXT: out2: ui32[] = 2813967643
// RUN: kiln-run %t.kmod --input 320440878 --input 57701188 --input 608135816 \
// RUN:   --input 2242054355 | FileCheck %s --check-prefix=PI
// PI: out0: ui32[] = 3297917596
// PI-NEXT: out1: ui32[] = 1212020640
// PI-NEXT: out2: ui32[] = 2360331580
func.func @threefry(%k0: tensor<ui32>, %k1: tensor<ui32>, %x0: tensor<ui32>, %x1: tensor<ui32>) -> (tensor<ui32>, tensor<ui32>, tensor<ui32>) {
  %first = kiln.rng_bits first, %k0, %k1, %x0, %x1 : tensor<ui32>
  %second = kiln.rng_bits second, %k0, %k1, %x0, %x1 : tensor<ui32>
  %xor = kiln.rng_bits xor, %k0, %k1, %x0, %x1 : tensor<ui32>
  return %first, %second, %xor : tensor<ui32>, tensor<ui32>, tensor<ui32>
}
