//===- FreshResults.cpp - One allocation per returned buffer --------------===//
//
// buffer-results-to-out-params with hoisted allocations assumes that every
// returned memref is a distinct allocation of the function. A returned
// argument, or a buffer returned twice, is copied into a new allocation
// first (the copy is a linalg.copy, so it becomes a plain loop).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
struct KilnFreshResultsPass
    : kiln::impl::KilnFreshResultsBase<KilnFreshResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::DenseSet<Value> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<MemRefType>(value.getType());
        bool fresh = value.getDefiningOp<memref::AllocOp>() &&
                     seen.insert(value).second;
        if (!type || fresh)
          continue;
        Value copy = builder.create<memref::AllocOp>(
            ret.getLoc(), MemRefType::get(type.getShape(),
                                          type.getElementType()));
        builder.create<linalg::CopyOp>(ret.getLoc(), value, copy);
        operand.set(copy);
      }
    });
  }
};
} // namespace
