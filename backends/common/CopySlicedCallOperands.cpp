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
// loop carrying one, a branch passing one through (seed 2632 of the
// random-program campaign: a kiln.cond yielding a dynamic_slice in one
// branch, its result passed to a call, read from offset 0), a select
// choosing one (seed 5291: a kiln.select with a scalar predicate between a
// strided slice and an argument, which bufferizes to an arith.select of
// the two buffers). On CUDA the inits of loops that are slices, or picks
// between two tensors on a scalar predicate, are copied too (the pass's
// loop-inits option): a while loop run as a CUDA graph keeps what it
// carries in dense buffers of its own, and the copy's kernel reads a
// dynamic slice's index or a pick's predicate where the host would have
// to (the kernels of a loop cannot read it through what the loop carries).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCOPYSLICEDCALLOPERANDS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The tensors whose buffers bufferization may give `value` in place: the
/// source of a reshape or cast, the destination an insert writes into, the
/// init a destination-style op (linalg) writes its result into; for a
/// loop's result or iteration argument its init and the value its body
/// yields; for an scf.if's result the value each branch yields (a kiln.cond
/// that passes a slice through one branch); for an arith.select of tensors
/// both values it chooses from. Empty for anything else.
static SmallVector<Value> bufferSources(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto loop = dyn_cast_or_null<scf::ForOp>(owner)) {
      if (arg.getArgNumber() == 0)
        return {};
      unsigned index = arg.getArgNumber() - 1;
      return {loop.getInitArgs()[index],
              loop.getBody()->getTerminator()->getOperand(index)};
    }
    if (auto loop = dyn_cast_or_null<scf::WhileOp>(owner)) {
      unsigned index = arg.getArgNumber();
      if (arg.getOwner() == loop.getBeforeBody())
        return {loop.getInits()[index],
                loop.getAfterBody()->getTerminator()->getOperand(index)};
      return {loop.getConditionOp().getArgs()[index]};
    }
    return {};
  }
  Operation *def = value.getDefiningOp();
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(def))
    return {def->getOperand(0)};
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def))
    return {insert.getDest()};
  if (auto insert = dyn_cast<tensor::InsertOp>(def))
    return {insert.getDest()};
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return {dps.getTiedOpOperand(cast<OpResult>(value))->get()};
  if (auto loop = dyn_cast<scf::ForOp>(def))
    return {loop.getInitArgs()[index],
            loop.getBody()->getTerminator()->getOperand(index)};
  if (auto loop = dyn_cast<scf::WhileOp>(def))
    return {loop.getConditionOp().getArgs()[index]};
  if (auto select = dyn_cast<arith::SelectOp>(def))
    return {select.getTrueValue(), select.getFalseValue()};
  if (auto branch = dyn_cast<scf::IfOp>(def)) {
    SmallVector<Value> yielded;
    for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
      if (!region->empty())
        yielded.push_back(region->front().getTerminator()->getOperand(index));
    return yielded;
  }
  return {};
}

/// Whether `value` is a proper slice of another tensor, possibly reshaped,
/// passed through a branch or a loop, or written into in place since (a
/// dynamic_update_slice of a slice, an elementwise kernel over one): its
/// buffer may then be a view with an offset or strides. Conservative: a
/// copy where bufferization would have copied anyway costs one more copy,
/// a missed view an invalid cast (or, with a dynamic offset, a cast that
/// drops the offset: the callee reads the wrong elements). With `picks`,
/// a choice between two tensors on a scalar predicate counts too (an
/// arith.select of their buffers, which the host picks by reading the
/// predicate).
static bool isSliceView(Value value, bool picks) {
  SmallVector<Value> pending = {value};
  llvm::SmallPtrSet<void *, 16> seen;
  while (!pending.empty() && seen.size() < 256) {
    Value next = pending.pop_back_val();
    if (!next || !seen.insert(next.getAsOpaquePointer()).second)
      continue;
    if (auto slice = next.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (slice.getSourceType() != slice.getResultType())
        return true;
      // A slice as large as its source is that source's buffer: a view
      // still, if the source is one (a dynamic_slice of a strided slice).
      pending.push_back(slice.getSource());
      continue;
    }
    if (auto select = next.getDefiningOp<arith::SelectOp>();
        picks && select && select.getCondition().getType().isInteger(1))
      return true;
    llvm::append_range(pending, bufferSources(next));
  }
  return false;
}

/// Makes each operand of `op` that is a slice of static shape (or a pick,
/// with `picks`, isSliceView) a copy (`linalg.copy` into a `tensor.empty`
/// before `op`), which bufferizes to a buffer of its own.
static void copySlicedOperands(Operation *op, bool picks) {
  OpBuilder builder(op);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || !isSliceView(operand.get(), picks))
      continue;
    Value empty = builder.create<tensor::EmptyOp>(op->getLoc(), type.getShape(),
                                                  type.getElementType());
    auto copy =
        builder.create<linalg::CopyOp>(op->getLoc(), operand.get(), empty);
    operand.set(copy.getResult(0));
  }
}

namespace {
struct KilnCopySlicedCallOperandsPass
    : kiln::impl::KilnCopySlicedCallOperandsBase<
          KilnCopySlicedCallOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (isa<func::CallOp>(op))
        copySlicedOperands(op, /*picks=*/false);
      else if (loopInits && isa<scf::WhileOp, scf::ForOp>(op))
        copySlicedOperands(op, /*picks=*/true);
    });
  }
};
} // namespace
