// With kiln-cpu-byte-booleans, the loop that writes a comparison into a
// boolean buffer and the loop that reads it back are vectorized: their
// accesses are vectors of i8 (LLVM's loop vectorizer left loads and
// stores of i1 scalar). --no-fusion keeps the buffer between two loops.
// RUN: kiln-compile %s --no-fusion --emit=llvm -o - | FileCheck %s
// CHECK-DAG: store <{{[0-9]+}} x i8>
// CHECK-DAG: load <{{[0-9]+}} x i8>
// CHECK-NOT: store i1
// CHECK-NOT: load i1,
// The values, fused and not: x = i - 500.5 for i < 1003; x > 0 for the
// last 502, whose sum is 126002.
// RUN: kiln-compile %s --no-fusion -o %t.kmod
// RUN: kiln-run %t.kmod --input 500.5 | FileCheck %s --check-prefix=VALUES
// RUN: kiln-compile %s -o %t.fused.kmod
// RUN: kiln-run %t.fused.kmod --input 500.5 | FileCheck %s --check-prefix=VALUES
// VALUES: out0: i1[1003] = [false, false, false,
// VALUES: out1: f32[] = 502
// VALUES: out2: f32[] = 126002

func.func @masks(%a: tensor<f32>) -> (tensor<1003xi1>, tensor<f32>, tensor<f32>) {
  %i = kiln.iota dim = 0 : tensor<1003xi32>
  %f = kiln.cast %i : tensor<1003xi32> to tensor<1003xf32>
  %b = kiln.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<1003xf32>
  %x = kiln.sub %f, %b : tensor<1003xf32>
  %zero = kiln.constant dense<0.0> : tensor<1003xf32>
  %m = kiln.compare gt, %x, %zero : tensor<1003xf32>
  %ones = kiln.cast %m : tensor<1003xi1> to tensor<1003xf32>
  %count = kiln.reduce_sum %ones, dims = [0] : tensor<1003xf32>
  %s = kiln.select %m, %x, %zero : tensor<1003xi1>, tensor<1003xf32>
  %sum = kiln.reduce_sum %s, dims = [0] : tensor<1003xf32>
  return %m, %count, %sum : tensor<1003xi1>, tensor<f32>, tensor<f32>
}
