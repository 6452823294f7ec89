//===- FreshResults.cpp - One allocation per returned buffer --------------===//
//
// buffer-results-to-out-params with hoisted allocations assumes that every
// returned memref is a distinct allocation of the function. A returned
// argument, or a buffer returned twice, is copied into a new allocation
// first (the copy is a linalg.copy, so it becomes a plain loop). A loop
// that carries a buffer it updates in place (a scatter_add's rows added
// into a copy of its table) returns its initial allocation: that
// allocation is returned instead of a copy of it, so that the out-param
// is written directly.
//
// A result tied to a donated argument (kiln.tied_result) is written into
// the argument's buffer last, after the copies above (which may read the
// argument's old value), unless that buffer is the result already. The
// function then returns a new allocation that nothing writes in its place
// (buffer-results-to-out-params hoists it into an out-param that nothing
// touches: the runtime passes the argument's buffer for it), and the tie
// moves to the result (kiln.tied_argument), which the pass carries to the
// out-param, for kiln-tied-results.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"
#include "kiln/IR/TiedResults.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFRESHRESULTS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// `value` with every scf.for result that its loop carries unchanged (the
/// body yields the iteration argument itself, so the result is the buffer
/// the loop started from) replaced by the loop's initial value.
Value throughCarryingLoops(Value value) {
  while (auto result = dyn_cast<OpResult>(value)) {
    auto loop = dyn_cast<scf::ForOp>(result.getOwner());
    if (!loop)
      break;
    unsigned i = result.getResultNumber();
    if (loop.getYieldedValues()[i] != loop.getRegionIterArgs()[i])
      break;
    value = loop.getInitArgs()[i];
  }
  return value;
}

struct KilnFreshResultsPass
    : kiln::impl::KilnFreshResultsBase<KilnFreshResultsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Result index -> the donated argument it is written into.
    llvm::DenseMap<unsigned, BlockArgument> tied;
    if (!func.isDeclaration())
      for (BlockArgument arg : func.getArguments())
        if (std::optional<unsigned> result =
                kiln::tiedResult(func, arg.getArgNumber()))
          tied[*result] = arg;
    func.walk([&](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || tied.contains(operand.getOperandNumber()))
          continue;
        Value start = throughCarryingLoops(value);
        if (start.getDefiningOp<memref::AllocOp>() &&
            seen.insert(start).second) {
          operand.set(start);
          continue;
        }
        Value copy = builder.create<memref::AllocOp>(
            ret.getLoc(), MemRefType::get(type.getShape(),
                                          type.getElementType()));
        builder.create<linalg::CopyOp>(ret.getLoc(), value, copy);
        operand.set(copy);
      }
      // The donated arguments' new values, after every read of their old
      // ones.
      for (OpOperand &operand : ret->getOpOperands()) {
        auto found = tied.find(operand.getOperandNumber());
        if (found == tied.end())
          continue;
        BlockArgument arg = found->second;
        if (throughCarryingLoops(operand.get()) != arg)
          builder.create<linalg::CopyOp>(ret.getLoc(), operand.get(), arg);
        auto type = cast<MemRefType>(arg.getType());
        operand.set(builder.create<memref::AllocOp>(
            ret.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType())));
      }
    });
    Builder builder(&getContext());
    for (auto [result, arg] : tied) {
      func.removeArgAttr(arg.getArgNumber(), kiln::kTiedResultAttrName);
      func.setResultAttr(result, kiln::kTiedArgumentAttrName,
                         builder.getI64IntegerAttr(arg.getArgNumber()));
    }
  }
};
} // namespace
