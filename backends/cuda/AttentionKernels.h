//===- AttentionKernels.h - What kiln's attention kernels take --*- C++ -*-===//
//
// kiln's own attention kernels (FlashAttention.cpp) take calls of
// functions marked `kiln.cuda_attention` and `kiln.cuda_attention_grad`.
// kiln-cuda-outline-library-attention and kiln-cuda-library-attention
// (LibraryAttention.cpp) make such calls too: where both kiln's
// tensor-core kernels and cuDNN take a half-precision attention, it
// becomes a tuned call site (TunedSites.h) whose variants are the two, and
// the runtime keeps the faster on the device. They ask here what kiln's
// kernels take and how their calls are marked.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_ATTENTIONKERNELS_H
#define KILN_BACKENDS_CUDA_ATTENTIONKERNELS_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// The attributes that mark the functions kiln's kernels replace the calls
/// of, each a dictionary {scale = f64, causal = bool}: the forward's
/// (operands q, k, v, the mask if any, then the o and lse buffers) and the
/// gradient's (q, k, v, dO, lse, rowsum(dO * O), the mask if any, then the
/// dq, dk and dv buffers).
constexpr StringLiteral kCudaAttentionAttr = "kiln.cuda_attention";
constexpr StringLiteral kCudaAttentionGradAttr = "kiln.cuda_attention_grad";

/// The dictionary of those attributes.
DictionaryAttr cudaAttentionInfo(Builder &builder, APFloat scale, bool causal);

/// Whether kiln's tensor-core kernels take `op`, a kiln.attention or
/// kiln.attention_grad, as it is: f16 or bf16 of static shapes, head dims
/// that fit.
bool takenByTensorCoreAttention(Operation *op);

/// rowsum(dO * O) of `grad`'s query rows, in f32 (the kernels' operand in
/// O's place), built as kiln ops before `grad`.
Value attentionGradRowsum(OpBuilder &builder, AttentionGradOp grad);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_ATTENTIONKERNELS_H
