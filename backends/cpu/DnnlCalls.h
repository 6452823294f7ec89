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

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::kiln::dnnl {

/// oneDNN's row-major GEMMs: f32, and bf16 operands accumulating in f32.
/// Both take sgemm's arguments (ta, tb, M, N, K, alpha, A, lda, B, ldb,
/// beta, C, ldc).
inline constexpr llvm::StringLiteral kSgemmFunction = "dnnl_sgemm";
inline constexpr llvm::StringLiteral kBf16GemmFunction =
    "dnnl_gemm_bf16bf16f32";
/// The convolution entries of backends/cpu/support/DnnlConv.c: f32, and
/// bf16 (input, weight and result bf16, accumulated in f32), which the
/// descriptor's KILN_DNNL_CONV_BFLOAT16 flag selects.
inline constexpr llvm::StringLiteral kConvFunction = "kiln_dnnl_conv_f32";
inline constexpr llvm::StringLiteral kConvBf16Function = "kiln_dnnl_conv_bf16";

} // namespace mlir::kiln::dnnl

#endif // KILN_BACKENDS_CPU_DNNLCALLS_H
