//===- LoopBuilder.h - Building a kiln.for from the importer ----*- C++ -*-===//
//
// The translations that loop (recurrent cells, Det, MaxUnpool, ReduceProd,
// scatters with reductions kiln.scatter_add lacks) build their kiln.for with
// this:
// carried values with their initial values, a body built in the block, and
// what the body yields for each.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_LOOPBUILDER_H
#define KILN_COMPILER_ONNX_LOOPBUILDER_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>

namespace kiln {
namespace onnx_import {

/// The pieces a loop body is built from: block arguments with their initial
/// values, and what the body yields for each.
class LoopBuilder {
public:
  LoopBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {
    block = std::make_unique<mlir::Block>();
    index = block->addArgument(
        mlir::RankedTensorType::get({}, b.getI64Type()), loc);
  }
  /// A carried value starting at `init`; its next value is set with
  /// `setNext` (by default it passes through unchanged).
  unsigned add(mlir::Value init) {
    inits.push_back(init);
    args.push_back(block->addArgument(init.getType(), loc));
    nexts.push_back(args.back());
    return args.size() - 1;
  }
  mlir::Value arg(unsigned i) const { return args[i]; }
  void setNext(unsigned i, mlir::Value v) { nexts[i] = v; }
  /// Builds the kiln.for of `trip` iterations at the builder's insertion
  /// point (which the body's construction has left in the block).
  mlir::kiln::ForOp finish(mlir::OpBuilder::InsertPoint outside,
                           int64_t trip) {
    b.setInsertionPointToEnd(block.get());
    b.create<mlir::kiln::YieldOp>(loc, nexts);
    b.restoreInsertionPoint(outside);
    auto op =
        b.create<mlir::kiln::ForOp>(loc, inits, static_cast<uint64_t>(trip));
    op.getBodyRegion().push_back(block.release());
    return op;
  }

  std::unique_ptr<mlir::Block> block;
  mlir::Value index;

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
  llvm::SmallVector<mlir::Value> inits, args, nexts;
};

/// `table` with, for i = 0, 1, ... in order, its row `linear[i]` replaced
/// by combine(that row, row i of `updates`), or by the update row itself
/// without `combine`: a kiln.for of one step per index, so that a later
/// index of a row sees the earlier ones' writes (the scatters with
/// reductions kiln.scatter_add lacks; MaxUnpool, where the last write of a
/// repeated index wins). `linear` is a 1-d i64 list of in-range rows;
/// `updates` has its length of rows of the table's row shape.
inline mlir::Value writeRowsInOrder(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value table,
    mlir::Value linear, mlir::Value updates,
    llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combine = {}) {
  int64_t count = mlir::cast<mlir::RankedTensorType>(linear.getType())
                      .getDimSize(0);
  mlir::OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  LoopBuilder loop(b, loc);
  unsigned tableArg = loop.add(table), linearArg = loop.add(linear),
           updatesArg = loop.add(updates);
  b.setInsertionPointToStart(loop.block.get());
  mlir::Value row = b.create<mlir::kiln::ReshapeOp>(
      loc, mlir::RankedTensorType::get({}, b.getI64Type()),
      b.create<mlir::kiln::DynamicSliceOp>(loc, loop.arg(linearArg),
                                           loop.index, uint64_t(1)));
  mlir::Value update = b.create<mlir::kiln::DynamicSliceOp>(
      loc, loop.arg(updatesArg), loop.index, uint64_t(1));
  if (combine)
    update = combine(b.create<mlir::kiln::DynamicSliceOp>(
                         loc, loop.arg(tableArg), row, uint64_t(1)),
                     update);
  loop.setNext(tableArg, b.create<mlir::kiln::DynamicUpdateSliceOp>(
                             loc, loop.arg(tableArg), update, row));
  return loop.finish(outside, count).getResult(tableArg);
}

} // namespace onnx_import
} // namespace kiln

#endif // KILN_COMPILER_ONNX_LOOPBUILDER_H
