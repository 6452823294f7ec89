//===- CopySlicedCallOperands.cpp - Calls get buffers of their own --------===//
//
// One-shot bufferization gives functions identity-layout memrefs at their
// boundary and casts a call's operand buffers to them. A slice of a larger
// tensor bufferizes to a subview (an offset, maybe strides), which cannot be
// cast to an identity layout: bufferization would emit an invalid
// memref.cast. Such an operand is copied first, on tensors, so that it
// bufferizes to an allocation of its own. Calls exist where the CPU backend
// outlines oneDNN convolutions (ConvToDnnl.cpp), whose inputs are often
// channel slices (ShuffleNet's split).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCOPYSLICEDCALLOPERANDS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Whether `value` is a proper slice of another tensor, possibly reshaped
/// since: its buffer would then be a view with an offset or strides.
static bool isSliceView(Value value) {
  Operation *def = value.getDefiningOp();
  while (def && isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
    def = def->getOperand(0).getDefiningOp();
  auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def);
  return slice && slice.getSourceType() != slice.getResultType();
}

namespace {
struct KilnCopySlicedCallOperandsPass
    : kiln::impl::KilnCopySlicedCallOperandsBase<
          KilnCopySlicedCallOperandsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::CallOp call) {
      OpBuilder builder(call);
      for (OpOperand &operand : call->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || !type.hasStaticShape() || !isSliceView(operand.get()))
          continue;
        Value empty = builder.create<tensor::EmptyOp>(
            call.getLoc(), type.getShape(), type.getElementType());
        auto copy = builder.create<linalg::CopyOp>(call.getLoc(),
                                                   operand.get(), empty);
        operand.set(copy.getResult(0));
      }
    });
  }
};
} // namespace
