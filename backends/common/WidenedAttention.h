//===- WidenedAttention.h - Half attention on f32 kernels -------*- C++ -*-===//
//
// kiln.attention and kiln.attention_grad in f16 or bf16 are defined as
// computed in f32 and rounded once (KilnAttentionOps.td). Most of the
// backends' fused kernels take f32: such an op is rewritten as the f32 op on
// operands widened by kiln.cast (exact) and its half-precision results
// rounded back by kiln.cast, which is that definition, so the kernels take
// it instead of the composition that materializes the Nq x Nk scores. The
// lse is f32 for half precision already. A backend with a kernel for half
// precision itself (CUDA's forward on tensor cores) keeps those ops as
// they are.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_WIDENEDATTENTION_H
#define KILN_BACKENDS_COMMON_WIDENEDATTENTION_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::kiln {

/// `op` (a kiln.attention or kiln.attention_grad) as the f32 op between
/// casts where its operands are f16 or bf16, which replaces it; `op`
/// itself otherwise.
inline Operation *widenedToF32(Operation *op) {
  Type element =
      cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  if (!element.isF16() && !element.isBF16())
    return op;
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Type f32 = builder.getF32Type();
  IRMapping widened;
  for (Value operand : op->getOperands()) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (!type.getElementType().isF32() && !widened.contains(operand))
      widened.map(operand,
                  builder.create<CastOp>(loc, type.clone(f32), operand));
  }
  Operation *wide = builder.clone(*op, widened);
  // Half-precision results are rounded back; the lse is f32 already.
  for (auto [narrow, result] :
       llvm::zip_equal(op->getResults(), wide->getResults())) {
    auto type = cast<RankedTensorType>(narrow.getType());
    Value replacement = result;
    if (!type.getElementType().isF32()) {
      result.setType(type.clone(f32));
      replacement = builder.create<CastOp>(loc, type, result);
    }
    narrow.replaceAllUsesWith(replacement);
  }
  op->erase();
  return wide;
}

/// The kiln.attention and kiln.attention_grad ops of `module` that a
/// backend's kernels take (`taken`), half-precision ones widened to f32
/// first unless a kernel takes them as they are (`takenAsTheyAre`); the
/// others stay for the composition.
inline SmallVector<Operation *>
attentionsForKernels(ModuleOp module, function_ref<bool(Operation *)> taken,
                     function_ref<bool(Operation *)> takenAsTheyAre = {}) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<AttentionOp, AttentionGradOp>(op))
      ops.push_back(op);
  });
  for (Operation *&op : ops)
    if (!takenAsTheyAre || !takenAsTheyAre(op))
      op = widenedToF32(op);
  llvm::erase_if(ops, [&](Operation *op) { return !taken(op); });
  return ops;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_WIDENEDATTENTION_H
