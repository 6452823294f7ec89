//===- BlockReductions.cpp - Linalg reductions to block-wide kernels ------===//
//
// A reduction lowered the generic way (one thread per output element, a
// sequential loop over the reduced elements) leaves a GPU mostly idle when
// there are few outputs - a full reduction would run on one thread. Here a
// whole block reduces each output element instead (see Passes.td for the
// steps); the block-level combination is upstream's gpu.all_reduce, which
// convert-gpu-to-nvvm expands into warp shuffles and a shared-memory tree.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDABLOCKREDUCTIONS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// A reduction this pass handles: `combiner(x, out)` yielded by the body.
struct Reduction {
  linalg::LinalgOp op;
  Operation *combiner;
  /// The combiner's operand that is not the output's block argument.
  Value x;
  gpu::AllReduceOperation kind;
  TypedAttr identity;
};

std::optional<gpu::AllReduceOperation> reductionKind(Operation *combiner) {
  using K = gpu::AllReduceOperation;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(combiner)
      .Case([](arith::AddFOp) { return K::ADD; })
      .Case([](arith::MulFOp) { return K::MUL; })
      .Case([](arith::MaximumFOp) { return K::MAXIMUMF; })
      .Case([](arith::MaxNumFOp) { return K::MAXNUMF; })
      .Case([](arith::MinimumFOp) { return K::MINIMUMF; })
      .Case([](arith::MinNumFOp) { return K::MINNUMF; })
      .Case([](arith::AddIOp) { return K::ADD; })
      .Case([](arith::MulIOp) { return K::MUL; })
      .Case([](arith::MaxSIOp) { return K::MAXSI; })
      .Case([](arith::MinSIOp) { return K::MINSI; })
      .Case([](arith::MaxUIOp) { return K::MAXUI; })
      .Case([](arith::MinUIOp) { return K::MINUI; })
      .Case([](arith::AndIOp) { return K::AND; })
      .Case([](arith::OrIOp) { return K::OR; })
      .Case([](arith::XOrIOp) { return K::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The value `v` with `combine(identity, v) == v`.
TypedAttr identityOf(gpu::AllReduceOperation kind, Type type) {
  using K = gpu::AllReduceOperation;
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    switch (kind) {
    case K::ADD:
      return FloatAttr::get(type, llvm::APFloat::getZero(semantics));
    case K::MUL:
      return FloatAttr::get(type, 1.0);
    case K::MAXIMUMF:
    case K::MAXNUMF:
      return FloatAttr::get(type, llvm::APFloat::getInf(semantics, true));
    case K::MINIMUMF:
    case K::MINNUMF:
      return FloatAttr::get(type, llvm::APFloat::getInf(semantics, false));
    default:
      return {};
    }
  }
  unsigned width = type.getIntOrFloatBitWidth();
  switch (kind) {
  case K::ADD:
  case K::OR:
  case K::XOR:
  case K::MAXUI:
    return IntegerAttr::get(type, llvm::APInt::getZero(width));
  case K::MUL:
    return IntegerAttr::get(type, llvm::APInt(width, 1));
  case K::AND:
  case K::MINUI:
    return IntegerAttr::get(type, llvm::APInt::getAllOnes(width));
  case K::MAXSI:
    return IntegerAttr::get(type, llvm::APInt::getSignedMinValue(width));
  case K::MINSI:
    return IntegerAttr::get(type, llvm::APInt::getSignedMaxValue(width));
  default:
    return {};
  }
}

std::optional<Reduction> match(linalg::LinalgOp op) {
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) ||
      !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  for (int64_t range : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(range))
      return std::nullopt;
  Block &body = op->getRegion(0).front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  Type type = out.getType();
  // 64-bit values are shuffled as two 32-bit halves; i1 is not shuffled.
  if (!type.isF32() && !type.isF64() && !type.isInteger(32) &&
      !type.isInteger(64))
    return std::nullopt;
  if (!out.hasOneUse())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getBlock() != &body ||
      combiner->getNumOperands() != 2 || *out.getUsers().begin() != combiner)
    return std::nullopt;
  Value x = combiner->getOperand(0) == out ? combiner->getOperand(1)
                                           : combiner->getOperand(0);
  if (x == out)
    return std::nullopt;
  std::optional<gpu::AllReduceOperation> kind = reductionKind(combiner);
  if (!kind)
    return std::nullopt;
  TypedAttr identity = identityOf(*kind, type);
  if (!identity)
    return std::nullopt;
  return Reduction{op, combiner, x, *kind, identity};
}

/// Sets `ivs[d]` for the loop dimensions `dims` (row-major) from `linear`.
void delinearize(OpBuilder &builder, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges,
                 SmallVectorImpl<Value> &ivs) {
  for (int64_t k = dims.size() - 1; k >= 0; --k) {
    Value extent =
        builder.create<arith::ConstantIndexOp>(loc, ranges[dims[k]]);
    if (k > 0) {
      ivs[dims[k]] = builder.create<arith::RemSIOp>(loc, linear, extent);
      linear = builder.create<arith::DivSIOp>(loc, linear, extent);
    } else {
      ivs[dims[k]] = linear;
    }
  }
}

/// The indices of operand `operand` of `op` at loop position `ivs`.
SmallVector<Value> indicesOf(OpBuilder &builder, Location loc,
                             linalg::LinalgOp op, OpOperand &operand,
                             ArrayRef<Value> ivs) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    indices.push_back(builder.create<affine::AffineApplyOp>(
        loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  }
  return indices;
}

struct KilnCudaBlockReductionsPass
    : kiln::impl::KilnCudaBlockReductionsBase<KilnCudaBlockReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0 ||
        maxBlocks <= 0) {
      getOperation().emitError("kiln-cuda-block-reductions: block-size must "
                               "be a multiple of 32 in 32..1024, max-blocks "
                               "positive");
      return signalPassFailure();
    }
    SmallVector<Reduction> reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<Reduction> reduction = match(op))
        reductions.push_back(*reduction);
    });
    for (Reduction &reduction : reductions)
      rewrite(reduction);
  }

  void rewrite(Reduction &reduction) {
    linalg::LinalgOp op = reduction.op;
    Location loc = op.getLoc();
    OpBuilder builder(op);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<unsigned> parallelDims, reductionDims;
    op.getParallelDims(parallelDims);
    op.getReductionDims(reductionDims);
    int64_t outputs = 1, reduced = 1;
    for (unsigned d : parallelDims)
      outputs *= ranges[d];
    for (unsigned d : reductionDims)
      reduced *= ranges[d];

    auto index = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIndexOp>(loc, value);
    };
    int64_t threads = std::min<int64_t>(blockSize, (reduced + 31) / 32 * 32);
    int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(outputs, maxBlocks));
    Value one = index(1);
    auto launch = builder.create<gpu::LaunchOp>(loc, index(blocks), one, one,
                                                index(threads), one, one);
    builder.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    auto perOutput = builder.create<scf::ForOp>(
        loc, launch.getBlockIds().x, index(outputs), launch.getGridSize().x);
    builder.create<gpu::TerminatorOp>(loc);

    // 1. This block's output element.
    builder.setInsertionPointToStart(perOutput.getBody());
    SmallVector<Value> ivs(ranges.size());
    delinearize(builder, loc, perOutput.getInductionVar(), parallelDims,
                ranges, ivs);

    // 2. This thread's partial result.
    Value identity = builder.create<arith::ConstantOp>(loc, reduction.identity);
    auto perThread = builder.create<scf::ForOp>(
        loc, tid, index(reduced), launch.getBlockSize().x,
        ValueRange{identity});
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(perThread.getBody());
      SmallVector<Value> threadIvs = ivs;
      delinearize(builder, loc, perThread.getInductionVar(), reductionDims,
                  ranges, threadIvs);
      Block &body = op->getRegion(0).front();
      IRMapping mapping;
      for (OpOperand *input : op.getDpsInputOperands()) {
        Value value = input->get();
        BlockArgument arg = body.getArgument(input->getOperandNumber());
        if (isa<MemRefType>(value.getType()))
          value = builder.create<memref::LoadOp>(
              loc, value, indicesOf(builder, loc, op, *input, threadIvs));
        mapping.map(arg, value);
      }
      for (Operation &inner : body.without_terminator()) {
        if (&inner == reduction.combiner)
          continue;
        if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(indexOp.getResult(), threadIvs[indexOp.getDim()]);
          continue;
        }
        builder.clone(inner, mapping);
      }
      IRMapping combine;
      combine.map(body.getArgument(op.getNumDpsInputs()),
                  perThread.getRegionIterArgs()[0]);
      combine.map(reduction.x, mapping.lookupOrDefault(reduction.x));
      Operation *partial = builder.clone(*reduction.combiner, combine);
      builder.create<scf::YieldOp>(loc, partial->getResult(0));
    }

    // 3. The block's total, through shuffles and shared memory.
    auto total = builder.create<gpu::AllReduceOp>(
        loc, perThread.getResult(0),
        gpu::AllReduceOperationAttr::get(builder.getContext(), reduction.kind),
        /*uniform=*/builder.getUnitAttr());

    // 4. Thread 0 folds it into the output.
    Value first = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                tid, index(0));
    auto ifFirst = builder.create<scf::IfOp>(loc, first, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&ifFirst.getThenRegion().front());
      OpOperand *init = op.getDpsInitOperand(0);
      SmallVector<Value> outIndices = indicesOf(builder, loc, op, *init, ivs);
      Value old = builder.create<memref::LoadOp>(loc, init->get(), outIndices);
      IRMapping combine;
      combine.map(op->getRegion(0).front().getArgument(op.getNumDpsInputs()),
                  old);
      combine.map(reduction.x, total.getResult());
      Operation *result = builder.clone(*reduction.combiner, combine);
      builder.create<memref::StoreOp>(loc, result->getResult(0), init->get(),
                                      outIndices);
    }
    // The next output element reuses the shared memory.
    builder.create<gpu::BarrierOp>(loc);
    op->erase();
  }
};
} // namespace
