//===- CopySlicedCallOperands.cpp - Calls get buffers of their own --------===//
//
// One-shot bufferization gives functions identity-layout memrefs at their
// boundary and casts a call's operand buffers to them. A slice of a larger
// tensor bufferizes to a subview (an offset, maybe strides), which cannot be
// cast to an identity layout: bufferization would emit an invalid
// memref.cast. Such an operand is copied first, on tensors, so that it
// bufferizes to an allocation of its own. Calls exist where the CPU backend
// outlines oneDNN convolutions (ConvToDnnl.cpp), whose inputs are often
// channel slices (ShuffleNet's split), and wherever a program calls its own
// functions. The view can also come from writing into a slice in place: a
// dynamic_update_slice of a slice of an intermediate (tensor.insert_slice
// into an extract_slice), an elementwise kernel whose init is a slice, a
// loop carrying one.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCOPYSLICEDCALLOPERANDS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The tensor whose buffer bufferization may give `value` in place: the
/// source of a reshape or cast, the destination an insert writes into, the
/// init a destination-style op (linalg) writes its result into, the init
/// of a loop's result; null for anything else.
static Value bufferSource(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(def))
    return def->getOperand(0);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def))
    return insert.getDest();
  if (auto insert = dyn_cast<tensor::InsertOp>(def))
    return insert.getDest();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return dps.getTiedOpOperand(cast<OpResult>(value))->get();
  if (auto loop = dyn_cast<scf::ForOp>(def))
    return loop.getInitArgs()[cast<OpResult>(value).getResultNumber()];
  return {};
}

/// Whether `value` is a proper slice of another tensor, possibly reshaped
/// or written into in place since (a dynamic_update_slice of a slice, an
/// elementwise kernel over one): its buffer may then be a view with an
/// offset or strides. Conservative: a copy where bufferization would have
/// copied anyway costs one more copy, a missed view an invalid cast.
static bool isSliceView(Value value) {
  for (int depth = 0; value && depth < 64; ++depth) {
    if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>())
      return slice.getSourceType() != slice.getResultType();
    value = bufferSource(value);
  }
  return false;
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
