//===- DnnlCalls.h - The oneDNN calls of the CPU backend --------*- C++ -*-===//
//
// The functions that kiln-cpu-matmul-to-dnnl and kiln-cpu-conv-to-dnnl call,
// for the passes that make those calls and those that read them back
// (kiln-cpu-profile names its regions after them), and the convolution
// descriptor that DnnlConv.c reads (support/DnnlConvAbi.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_DNNLCALLS_H
#define KILN_BACKENDS_CPU_DNNLCALLS_H

#include "support/DnnlConvAbi.h"
#include "support/DnnlMatmulAbi.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::kiln::dnnl {

/// oneDNN's row-major f32 GEMM (ta, tb, M, N, K, alpha, A, lda, B, ldb,
/// beta, C, ldc).
inline constexpr llvm::StringLiteral kSgemmFunction = "dnnl_sgemm";
/// A product through oneDNN's matmul primitive, cached per call site
/// (backends/cpu/support/DnnlMatmul.c; its operands: DnnlMatmulAbi.h).
inline constexpr llvm::StringLiteral kMatmulFunction = "kiln_dnnl_matmul";
/// Not oneDNN's, but in the place of its products: kiln's product of few
/// rows by a constant B that kiln-cpu-matmul-to-dnnl packed into the module
/// (backends/cpu/support/PackedMatmul.c; its operands: PackedMatmulAbi.h).
inline constexpr llvm::StringLiteral kPackedMatmulFunction =
    "kiln_packed_matmul_f32";
/// The convolution entries of backends/cpu/support/DnnlConv.c: f32, and
/// bf16 (input, weight and result bf16, accumulated in f32), which the
/// descriptor's KILN_DNNL_CONV_BFLOAT16 flag selects.
inline constexpr llvm::StringLiteral kConvFunction = "kiln_dnnl_conv_f32";
inline constexpr llvm::StringLiteral kConvBf16Function = "kiln_dnnl_conv_bf16";
inline constexpr llvm::StringLiteral kConvInt8Function = "kiln_dnnl_conv_int8";

/// The attribute of the functions kiln-cpu-outline-dnnl-convs makes (a
/// convolution and its epilogue), holding the descriptor DnnlConvAbi.h
/// defines; kiln-cpu-conv-to-dnnl turns their calls into library calls.
inline constexpr llvm::StringLiteral kConvDescriptorAttr = "kiln.dnnl_conv";

} // namespace mlir::kiln::dnnl

#endif // KILN_BACKENDS_CPU_DNNLCALLS_H
