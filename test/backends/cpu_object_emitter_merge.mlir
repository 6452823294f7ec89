// Identical functions are merged before LLVM optimizes them: @f and @g
// run the same parallel loop, which the OpenMP translation makes a function
// of each of them; g's becomes a call of f's, so its loop is optimized and
// compiled once. -O0 merges nothing.
// REQUIRES: openmp
// RUN: kiln-compile %s --emit=llvm | FileCheck %s
// RUN: kiln-compile %s --emit=llvm -O0 | FileCheck %s --check-prefix=O0
// CHECK:      define internal void @kiln_impl_f..omp_par(
// CHECK:      define internal void @kiln_impl_g..omp_par(
// CHECK-NEXT:   tail call void @kiln_impl_f..omp_par(
// CHECK-NEXT:   ret void
// O0:         define internal void @kiln_impl_g..omp_par(
// O0-NOT:       call void @kiln_impl_f..omp_par(

func.func @f(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %e = kiln.exp %x : tensor<1048576xf32>
  %y = kiln.mul %e, %x : tensor<1048576xf32>
  return %y : tensor<1048576xf32>
}

func.func @g(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %e = kiln.exp %x : tensor<1048576xf32>
  %y = kiln.mul %e, %x : tensor<1048576xf32>
  return %y : tensor<1048576xf32>
}
