//===- DnnlCalls.h - The oneDNN calls of the CPU backend --------*- C++ -*-===//
//
// The functions that kiln-cpu-matmul-to-dnnl and kiln-cpu-conv-to-dnnl call
// and the layout of the convolution descriptor that DnnlConv.c reads, for
// the passes that make those calls and those that read them back
// (kiln-cpu-profile names its regions after them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_DNNLCALLS_H
#define KILN_BACKENDS_CPU_DNNLCALLS_H

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
/// descriptor's kBfloat16 flag selects.
inline constexpr llvm::StringLiteral kConvFunction = "kiln_dnnl_conv_f32";
inline constexpr llvm::StringLiteral kConvBf16Function = "kiln_dnnl_conv_bf16";

/// The convolution descriptor: a header (spatial rank k, groups, N, C, O,
/// flags), then k entries each (one per spatial dim) of the input sizes,
/// the kernel sizes, the output sizes, the strides, the low paddings, the
/// high paddings and the dilations.
inline constexpr int64_t kConvHeaderSize = 6;
inline constexpr int64_t kConvEntriesPerDim = 7;

/// The descriptor's flags (DnnlConv.c reads them).
enum ConvFlags : int64_t {
  kBias = 1,
  kAddend = 2,
  kRelu = 4,
  kConstantWeight = 8,
  kBlocked = 16,
  kBfloat16 = 32
};

} // namespace mlir::kiln::dnnl

#endif // KILN_BACKENDS_CPU_DNNLCALLS_H
