//===- TensorCoreMma.h - Warp-wide tensor-core products ---------*- C++ -*-===//
//
// A kernel that multiplies on tensor cores calls NVVM's m16n8k16 product
// of halves, or its m16n8k8 product of TF32 words, with f32 accumulators
// through llvm.call_intrinsic: MLIR 19's nvvm.mma.sync verifier asks bf16
// operands as vector<2xf16>, while the intrinsic takes them as i32 words.
// kiln-cuda-flash-attention emits the calls and kiln-cuda-launches-on-cpu
// runs them on the host, both by the names and operand layout here.
//
// Each of a warp's 32 lanes (group g = lane / 4, thread t = lane % 4)
// holds a share of the 16 x 16 left operand A (four 32-bit words of two
// halves, the first in the low bits), of the 16 x 8 right operand B (two
// words) and of the 16 x 8 accumulator C (four f32), and gets its share
// of D = C + A B back, as PTX's mma.m16n8k16 fragments lay them out:
//   A: word 0 = row g, columns 2t and 2t + 1; word 1 = row g + 8, the
//      same columns; words 2 and 3 = the same rows, columns 2t + 8 and
//      2t + 9.
//   B: word 0 = rows 2t and 2t + 1 of column g; word 1 = rows 2t + 8 and
//      2t + 9 of column g.
//   C, D: 0 and 1 = row g, columns 2t and 2t + 1; 2 and 3 = row g + 8,
//      the same columns.
// The TF32 product's words hold one value each, an f32 whose low 13 bits
// of significand the tensor cores ignore, and k runs to 8: word by word
// its fragments are the ones above (A: word 0 = row g, column t; word 1 =
// row g + 8, column t; words 2 and 3 = the same rows, column t + 4. B:
// word 0 = row t of column g, word 1 = row t + 4). The products of such
// values are exact in f32.
// The intrinsics are not convergent for LLVM: a kernel calls them outside
// any branch, with every lane of the warp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_TENSORCOREMMA_H
#define KILN_BACKENDS_CUDA_TENSORCOREMMA_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// bf16 operands as i32 words, f32 accumulators.
inline constexpr llvm::StringLiteral kMmaBF16 =
    "llvm.nvvm.mma.m16n8k16.row.col.bf16";
/// f16 operands as vector<2xf16>, f32 accumulators.
inline constexpr llvm::StringLiteral kMmaF16 =
    "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";

/// TF32 operands as i32 words (f32 bits), f32 accumulators: m16n8k8.
inline constexpr llvm::StringLiteral kMmaTF32 =
    "llvm.nvvm.mma.m16n8k8.row.col.tf32";

/// The element type of the operands of a tensor-core product `op` calls
/// (bf16 or f16 for m16n8k16, tf32 for m16n8k8), or null where `op` is not
/// such a call.
inline Type mmaOperandType(Operation *op) {
  auto call = dyn_cast<LLVM::CallIntrinsicOp>(op);
  if (!call)
    return {};
  Builder builder(op->getContext());
  if (call.getIntrin() == kMmaBF16)
    return builder.getBF16Type();
  if (call.getIntrin() == kMmaF16)
    return builder.getF16Type();
  if (call.getIntrin() == kMmaTF32)
    return builder.getTF32Type();
  return {};
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_TENSORCOREMMA_H
