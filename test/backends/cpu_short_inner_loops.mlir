// A [4096, 16] activation plus a [16] bias: the loop over 16 columns is
// kept (llvm.loop.unroll.disable, ShortInnerLoops.cpp) so that LLVM
// vectorizes it, one full vector per row, instead of unrolling it and
// vectorizing the loop over rows, each column a strided load out of wide
// ones (shufflevector). At 8 columns LLVM's own choice stays. The CPUs are named, so this runs on any
// x86-64 host.
// RUN: kiln-compile %s --target-cpu=skylake-avx512 --emit=llvm | FileCheck %s --check-prefix=AVX512
// RUN: kiln-compile %s --target-cpu=haswell --emit=llvm | FileCheck %s --check-prefix=AVX2

// AVX512-LABEL: define internal void @kiln_impl_bias16..omp_par(
// AVX512-NOT:   strided.vec
// AVX512:       fadd <16 x float> %wide.load
// AVX512-NOT:   strided.vec
// AVX512-LABEL: define internal void @kiln_impl_bias8..omp_par(
// AVX512:       %strided.vec = shufflevector
// AVX2-LABEL:   define internal void @kiln_impl_bias16..omp_par(
// AVX2-NOT:     strided.vec
// AVX2:         fadd <8 x float> %wide.load
// AVX2-NOT:     strided.vec
// AVX2-LABEL:   define internal void @kiln_impl_bias8..omp_par(
// AVX2:         %strided.vec = shufflevector
func.func @bias16(%x: tensor<4096x16xf32>, %b: tensor<16xf32>) -> tensor<4096x16xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<4096x16xf32>
  %y = kiln.add %x, %bb : tensor<4096x16xf32>
  return %y : tensor<4096x16xf32>
}

func.func @bias8(%x: tensor<8192x8xf32>, %b: tensor<8xf32>) -> tensor<8192x8xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<8192x8xf32>
  %y = kiln.add %x, %bb : tensor<8192x8xf32>
  return %y : tensor<8192x8xf32>
}
