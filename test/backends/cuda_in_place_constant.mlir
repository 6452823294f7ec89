// An elementwise kernel written in place (`ins(%b) outs(%b)`) whose body
// folds to a constant, `(|argmin| + 1) - |argmin|` = 1, compiled for CUDA.
// The deallocation pipeline canonicalizes on buffers; with MLIR 19's plain
// canonicalizer it erased the kernel as an identity and the function
// returned the argmin (seen on a GPU: 3, 5, 7 where 1 was due). Its
// canonicalizations are kiln-canonicalize-buffers
// (backends/common/BufferizationPipeline.cpp), which makes the kernel a
// fill: a second launch, whose kernel stores the constant (moved into it
// before outlining, so it is an immediate in the PTX). Both launches are of
// one block, so kiln-cuda-merge-launches runs the fill after the argmin in
// one kernel, behind a barrier.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --emit=mlir | FileCheck %s
// RUN: kiln-compile %s --target=cuda --emit=ptx | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: llvm.func internal @kiln_impl_argmin_constant_body(
// CHECK:         gpu.launch_func {{.*}}@kiln_kernels::@kiln_impl_argmin_constant_body_kernel blocks
// CHECK-NOT:     gpu.launch_func
// CHECK:       llvm.func @kiln_entry_argmin_constant_body(
// PTX-LABEL:   .entry kiln_impl_argmin_constant_body_kernel(
// PTX:           selp.b64
// PTX:           bar.sync 0;
// PTX:           mov.u64 %[[ONE:rd[0-9]+]], 1;
// PTX:           st.global.u32 [%rd{{[0-9]+}}], %[[ONE]];
// PTX:           ret;
func.func @argmin_constant_body(%x: tensor<8x2x2xf64>) -> tensor<2x2xi64> {
  %a = kiln.argmin %x, dim = 0 : tensor<8x2x2xf64>
  %abs = kiln.abs %a : tensor<2x2xi64>
  %one = kiln.constant dense<1> : tensor<2x2xi64>
  %p = kiln.add %abs, %one : tensor<2x2xi64>
  %r = kiln.sub %p, %abs : tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}
