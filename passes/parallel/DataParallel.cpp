//===- DataParallel.cpp - The kiln-data-parallel pass ---------------------===//
//
// Data parallelism (PyTorch DDP) as a program transformation: the batch
// arguments are split along their rows over all ranks, every other argument
// is whole on every rank, and every rank returns the original's results.
// The rewrite itself is the one-axis partitioner (AxisPartitioner.cpp) over
// the run's ranks; its partial-sum all-reduces (the gradients) are bucketed.
//
//===----------------------------------------------------------------------===//

#include "AxisPartitioner.h"
#include "AxisPartitionRules.h"
#include "TargetFunctions.h"

#include "kiln/Passes/DataParallel.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/SymbolTable.h"

#include <numeric>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_DATAPARALLEL
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

LogicalResult
mlir::kiln::partitionDataParallel(func::FuncOp func,
                                  const DataParallelConfig &options) {
  if (options.ranks < 1)
    return func.emitError("kiln-data-parallel needs ranks >= 1, not ")
           << options.ranks;
  if (options.batchArgs.empty())
    return func.emitError("kiln-data-parallel needs the batch arguments to "
                          "split: batch-args=<i>,<j>,...");
  if (!(options.bucketMb >= 0))
    return func.emitError("kiln-data-parallel: bucket-mb must be >= 0, not ")
           << options.bucketMb;
  // A caller would still pass the whole batch.
  if (auto module = func->getParentOfType<ModuleOp>();
      module && !SymbolTable::symbolKnownUseEmpty(func, module))
    return func.emitError("kiln-data-parallel: @")
           << func.getSymName()
           << " is called in this module, and its callers would pass the "
              "whole batch; rewrite the caller instead (function=<name>)";

  AxisPartitionConfig axis;
  axis.passName = "kiln-data-parallel";
  axis.size = options.ranks;
  axis.groups.resize(options.ranks);
  std::iota(axis.groups.begin(), axis.groups.end(), 0);
  axis.bucketMb = options.bucketMb;
  axis.overlap = options.overlap;
  unsigned numArguments = func.getNumArguments();
  axis.argumentDims.resize(numArguments);
  for (int64_t index : options.batchArgs) {
    if (index < 0 || index >= numArguments)
      return func.emitError("kiln-data-parallel: batch-args index ")
             << index << " is out of range: @" << func.getSymName() << " has "
             << numArguments << " arguments";
    Type argType = func.getArgumentTypes()[index];
    auto type = dyn_cast<RankedTensorType>(argType);
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      return func.emitError("kiln-data-parallel: batch argument #")
             << index << " of @" << func.getSymName() << " has type "
             << argType << ", which has no leading dimension to split";
    if (type.getDimSize(0) % options.ranks != 0)
      return func.emitError("kiln-data-parallel: batch argument #")
             << index << " of @" << func.getSymName() << " has "
             << type.getDimSize(0) << " rows, which " << options.ranks
             << " ranks cannot split evenly";
    axis.argumentDims[index] = 0;
  }
  return partitionAlongAxis(func, axis);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct DataParallelPass : kiln::impl::DataParallelBase<DataParallelPass> {
  using DataParallelBase::DataParallelBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    DataParallelBase::getDependentDialects(registry);
    registerAxisPartitionRules(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError("kiln-data-parallel needs the number of ranks: "
                       "--kiln-data-parallel=\"ranks=N batch-args=...\" "
                       "with N >= 1");
      return signalPassFailure();
    }
    if (batchArgs.empty()) {
      module.emitError("kiln-data-parallel needs the batch arguments to "
                       "split: --kiln-data-parallel=\"ranks=N "
                       "batch-args=<i>,<j>,...\"");
      return signalPassFailure();
    }
    if (!(bucketMb >= 0)) {
      module.emitError("kiln-data-parallel: bucket-mb must be >= 0, not ")
          << bucketMb;
      return signalPassFailure();
    }
    DataParallelConfig options;
    options.ranks = ranks;
    options.batchArgs.assign(batchArgs.begin(), batchArgs.end());
    options.bucketMb = bucketMb;
    options.overlap = overlap;

    FailureOr<SmallVector<func::FuncOp>> targets =
        targetFunctions(module, functionName, "kiln-data-parallel");
    if (failed(targets))
      return signalPassFailure();
    for (func::FuncOp f : *targets)
      if (failed(partitionDataParallel(f, options)))
        return signalPassFailure();
  }
};
} // namespace
