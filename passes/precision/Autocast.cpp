//===- Autocast.cpp - Matrix products in half precision -------------------===//
//
// kiln-autocast: mixed precision as a policy over an f32 program, the way
// PyTorch's autocast keeps lists of ops to run in lower precision and ops
// to keep in f32. The lower-precision list is the matrix products and the
// convolutions:
//  - every kiln.matmul of f32 operands becomes a product of bf16 (or f16)
//    operands accumulated in f32 with an f32 result
//    (result_element_type = f32);
//  - every f32 kiln.conv becomes a convolution of half-precision operands
//    (accumulated in f32 and rounded once to half precision, as PyTorch's
//    autocast returns it) widened back to f32 by a kiln.cast.
// So the values around them - and everything numerically sensitive, such
// as softmax, normalization, reductions, losses and the optimizer update -
// stay f32, and the weights the program updates stay f32 master copies.
//
// Run after kiln-grad, the backward pass's products are cast too; run
// before it, kiln-grad's rule for a widened product makes them half-
// precision products as well.
//
// With `attention` (the CUDA targets from sm_80 on), kiln.attention and
// kiln.attention_grad are on the lower-precision list too, as
// scaled_dot_product_attention is on PyTorch's for CUDA: their products
// then run on tensor cores, their softmax and lse in f32 as before.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_AUTOCAST
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// `value` (an f32 tensor) in `element`: the source of a cast from
/// `element` where `value` is one (widening was exact, so narrowing it again
/// gives the source back), otherwise one kiln.cast per value and function,
/// placed right after the value's definition (at the start of the block of
/// a block argument) so every product can use it.
static Value castOperand(OpBuilder &builder, Value value, Type element,
                         DenseMap<Value, Value> &casts) {
  if (auto cast = value.getDefiningOp<CastOp>())
    if (cast.getOperand().getType().getElementType() == element)
      return cast.getOperand();
  if (Value narrow = casts.lookup(value))
    return narrow;
  OpBuilder::InsertionGuard guard(builder);
  auto type = cast<RankedTensorType>(value.getType());
  Value narrow;
  if (auto transpose = value.getDefiningOp<TransposeOp>()) {
    // Cast the source and transpose the half-precision copy: the source's
    // cast is usually there already (a weight read by the forward product
    // and transposed for the backward one), the transposed copy moves half
    // the bytes, and a transpose of a product's operand folds into the
    // GEMM's transpose flag where a cast after it would not.
    Value source =
        castOperand(builder, transpose.getOperand(), element, casts);
    builder.setInsertionPointAfter(transpose);
    narrow = builder.create<TransposeOp>(transpose.getLoc(), source,
                                         transpose.getPermutation());
  } else {
    if (Operation *definition = value.getDefiningOp())
      builder.setInsertionPointAfter(definition);
    else
      builder.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
    narrow = builder.create<CastOp>(value.getLoc(), type.clone(element), value);
  }
  casts[value] = narrow;
  return narrow;
}

/// `op` (an f32 kiln.attention or kiln.attention_grad) on its tensor
/// operands cast to `element`, all but the lse, which stays f32; its
/// results of the operands' type are widened back to f32.
static void castAttention(OpBuilder &builder, Operation *op, Type element,
                          DenseMap<Value, Value> &casts) {
  // The lse: kiln.attention's second result, kiln.attention_grad's fifth
  // operand.
  Value lse = isa<AttentionGradOp>(op) ? op->getOperand(4) : Value();
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(operand == lse
                           ? operand
                           : castOperand(builder, operand, element, casts));
  builder.setInsertionPoint(op);
  Operation *narrow = builder.clone(*op);
  narrow->setOperands(operands);
  // Every result but kiln.attention's lse (f32 for half operands too) is
  // of the operands' type, widened back for the op's users.
  builder.setInsertionPointAfter(narrow);
  for (auto [result, wide] :
       llvm::zip(narrow->getResults(), op->getResults())) {
    Value replacement = result;
    if (!(isa<AttentionOp>(op) && wide == op->getResult(1))) {
      result.setType(cast<RankedTensorType>(wide.getType()).clone(element));
      replacement =
          builder.create<CastOp>(op->getLoc(), wide.getType(), result);
    }
    wide.replaceAllUsesWith(replacement);
  }
  op->erase();
}

namespace {
struct AutocastPass : mlir::kiln::impl::AutocastBase<AutocastPass> {
  using AutocastBase::AutocastBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    Type element;
    if (dtype == "bf16")
      element = BFloat16Type::get(context);
    else if (dtype == "f16")
      element = Float16Type::get(context);
    else {
      getOperation().emitError()
          << "kiln-autocast: unknown dtype '" << dtype
          << "' (expected bf16 or f16)";
      return signalPassFailure();
    }
    OpBuilder builder(context);
    Type f32 = Float32Type::get(context);
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration() ||
          (!functionName.empty() && function.getSymName() != functionName))
        continue;
      DenseMap<Value, Value> casts;
      SmallVector<MatmulOp> products;
      function.walk([&](MatmulOp op) {
        if (!op.getResultElementType() &&
            op.getLhs().getType().getElementType().isF32())
          products.push_back(op);
      });
      SmallVector<ConvOp> convolutions;
      function.walk([&](ConvOp op) {
        if (op.getInput().getType().getElementType().isF32())
          convolutions.push_back(op);
      });
      for (ConvOp op : convolutions) {
        Value input = castOperand(builder, op.getInput(), element, casts);
        Value weight = castOperand(builder, op.getWeight(), element, casts);
        builder.setInsertionPoint(op);
        Operation *narrow = builder.clone(*op);
        narrow->setOperands({input, weight});
        narrow->getResult(0).setType(op.getType().clone(element));
        auto widened = builder.create<CastOp>(op.getLoc(), op.getType(),
                                              narrow->getResult(0));
        op.replaceAllUsesWith(widened.getResult());
        op.erase();
      }
      if (attention) {
        SmallVector<Operation *> attentions;
        function.walk([&](Operation *op) {
          if (isa<AttentionOp, AttentionGradOp>(op) &&
              cast<RankedTensorType>(op->getOperand(0).getType())
                  .getElementType()
                  .isF32())
            attentions.push_back(op);
        });
        for (Operation *op : attentions)
          castAttention(builder, op, element, casts);
      }
      for (MatmulOp op : products) {
        Value lhs = castOperand(builder, op.getLhs(), element, casts);
        Value rhs = castOperand(builder, op.getRhs(), element, casts);
        builder.setInsertionPoint(op);
        auto product = builder.create<MatmulOp>(op.getLoc(), lhs, rhs,
                                                TypeAttr::get(f32));
        op.replaceAllUsesWith(product.getResult());
        op.erase();
      }
    }
  }
};
} // namespace
