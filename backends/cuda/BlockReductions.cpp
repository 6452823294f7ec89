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

#include "Delinearize.h"
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

#include <algorithm>
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
  if (dims.size() == 1) {
    ivs[dims[0]] = linear;
    return;
  }
  SmallVector<Value> extents;
  for (unsigned d : dims)
    extents.push_back(builder.create<arith::ConstantIndexOp>(loc, ranges[d]));
  for (auto [d, index] :
       llvm::zip(dims, kiln::delinearizeIndex(builder, loc, linear, extents)))
    ivs[d] = index;
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

/// `combine(x, acc)` with the reduction's own combiner.
Value combine(OpBuilder &builder, const Reduction &reduction, Value x,
              Value acc) {
  linalg::LinalgOp op = reduction.op;
  IRMapping mapping;
  mapping.map(op->getRegion(0).front().getArgument(op.getNumDpsInputs()), acc);
  mapping.map(reduction.x, x);
  return builder.clone(*reduction.combiner, mapping)->getResult(0);
}

/// How a reduction is spread over blocks: each output element's reduction
/// space (row-major over the reduction dimensions) is cut into `splits`
/// consecutive chunks of `chunk` elements, one block each.
struct Plan {
  int64_t splits, chunk, threads;
};

struct KilnCudaBlockReductionsPass
    : kiln::impl::KilnCudaBlockReductionsBase<KilnCudaBlockReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0 ||
        maxBlocks <= 0 || splitBlocks <= 0 || minPerThread <= 0) {
      getOperation().emitError(
          "kiln-cuda-block-reductions: block-size must be a multiple of 32 "
          "in 32..1024, max-blocks, split-blocks and min-per-thread "
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

  /// Few output elements over long reductions leave most multiprocessors
  /// idle with a block per output (a bias gradient: 64 blocks, each summing
  /// 400K elements). Such a reduction is split until about `splitBlocks`
  /// blocks run, each thread still folding at least `minPerThread` elements.
  Plan plan(int64_t outputs, int64_t reduced) const {
    Plan p{1, reduced, 0};
    int64_t wanted = outputs > 0 ? (splitBlocks + outputs - 1) / outputs : 1;
    int64_t most = reduced / (blockSize * minPerThread);
    int64_t splits = std::min<int64_t>({wanted, most, 1024});
    if (splits >= 2) {
      p.chunk = (reduced + splits - 1) / splits;
      p.splits = (reduced + p.chunk - 1) / p.chunk;
    }
    p.threads = std::clamp<int64_t>((p.chunk + 31) / 32 * 32, 32, blockSize);
    return p;
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
    Plan p = plan(outputs, reduced);
    auto index = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIndexOp>(loc, value);
    };
    OpOperand *init = op.getDpsInitOperand(0);
    Type type = cast<MemRefType>(init->get().getType()).getElementType();

    // out[ivs] = combine(total, out[ivs]).
    auto foldIntoOutput = [&](OpBuilder &b, Value total, ArrayRef<Value> ivs) {
      SmallVector<Value> out = indicesOf(b, loc, op, *init, ivs);
      Value old = b.create<memref::LoadOp>(loc, init->get(), out);
      b.create<memref::StoreOp>(loc, combine(b, reduction, total, old),
                                init->get(), out);
    };

    // Split: the chunks' results go to a buffer of [outputs][splits], and a
    // second kernel folds each output's row of it into the output.
    Value partials;
    if (p.splits > 1)
      partials = builder.create<memref::AllocOp>(
          loc, MemRefType::get({outputs * p.splits}, type));

    // 1. Each block takes (output, chunk) pairs; its threads stride over
    // the chunk, gpu.all_reduce combines them and thread 0 writes the
    // total: into `partials`, or combined with the output.
    int64_t units = outputs * p.splits;
    forEachUnit(builder, loc, units, p.threads,
                [&](OpBuilder &b, Value unit, Value tid, Value blockDim) {
      Value output = unit, from = tid, end = index(reduced);
      if (p.splits > 1) {
        Value splits = index(p.splits);
        output = b.create<arith::DivUIOp>(loc, unit, splits);
        Value start = b.create<arith::MulIOp>(
            loc, b.create<arith::RemUIOp>(loc, unit, splits), index(p.chunk));
        end = b.create<arith::MinUIOp>(
            loc, b.create<arith::AddIOp>(loc, start, index(p.chunk)), end);
        from = b.create<arith::AddIOp>(loc, start, tid);
      }
      SmallVector<Value> ivs(ranges.size());
      delinearize(b, loc, output, parallelDims, ranges, ivs);
      Value identity = b.create<arith::ConstantOp>(loc, reduction.identity);
      auto perThread = b.create<scf::ForOp>(loc, from, end,
          blockDim, ValueRange{identity});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(perThread.getBody());
        SmallVector<Value> threadIvs = ivs;
        delinearize(b, loc, perThread.getInductionVar(), reductionDims, ranges,
                    threadIvs);
        Value x = bodyValue(b, reduction, threadIvs);
        b.create<scf::YieldOp>(
            loc, combine(b, reduction, x, perThread.getRegionIterArgs()[0]));
      }
      storeTotal(b, reduction, perThread.getResult(0), tid,
                        [&](OpBuilder &ib, Value total) {
        if (partials) {
          ib.create<memref::StoreOp>(loc, total, partials, unit);
          return;
        }
        foldIntoOutput(ib, total, ivs);
      });
    });

    if (partials) {
      // 2. A block per output folds its row of partials into the output.
      int64_t threads = std::min<int64_t>(blockSize, (p.splits + 31) / 32 * 32);
      forEachUnit(builder, loc, outputs, threads,
                  [&](OpBuilder &b, Value output, Value tid, Value blockDim) {
        Value identity = b.create<arith::ConstantOp>(loc, reduction.identity);
        Value row = b.create<arith::MulIOp>(loc, output, index(p.splits));
        auto perThread = b.create<scf::ForOp>(loc, tid, index(p.splits),
                                              blockDim, ValueRange{identity});
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(perThread.getBody());
          Value x = b.create<memref::LoadOp>(
              loc, partials,
              ValueRange{b.create<arith::AddIOp>(
                  loc, row, perThread.getInductionVar())});
          b.create<scf::YieldOp>(
              loc, combine(b, reduction, x, perThread.getRegionIterArgs()[0]));
        }
        SmallVector<Value> ivs(ranges.size());
        delinearize(b, loc, output, parallelDims, ranges, ivs);
        storeTotal(b, reduction, perThread.getResult(0), tid,
                   [&](OpBuilder &ib, Value total) {
          foldIntoOutput(ib, total, ivs);
        });
      });
      builder.create<memref::DeallocOp>(loc, partials);
    }
    op->erase();
  }

  /// One launch of `threads`-thread blocks whose blocks take the units
  /// blockIdx, blockIdx + gridDim, ... < `units`, running `body` for each.
  void forEachUnit(
      OpBuilder &builder, Location loc, int64_t units, int64_t threads,
      function_ref<void(OpBuilder &, Value, Value, Value)> body) const {
    auto index = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIndexOp>(loc, value);
    };
    int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(units, maxBlocks));
    Value one = index(1);
    auto launch = builder.create<gpu::LaunchOp>(loc, index(blocks), one, one,
                                                index(threads), one, one);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&launch.getBody().front());
    auto perUnit = builder.create<scf::ForOp>(
        loc, launch.getBlockIds().x, index(units), launch.getGridSize().x);
    builder.create<gpu::TerminatorOp>(loc);
    builder.setInsertionPointToStart(perUnit.getBody());
    body(builder, perUnit.getInductionVar(), launch.getThreadIds().x,
         launch.getBlockSize().x);
  }

  /// The body's `x` at loop position `ivs`: the inputs loaded, the body's
  /// ops up to the combiner cloned.
  Value bodyValue(OpBuilder &builder, const Reduction &reduction,
                  ArrayRef<Value> ivs) const {
    linalg::LinalgOp op = reduction.op;
    Location loc = op.getLoc();
    Block &body = op->getRegion(0).front();
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value value = input->get();
      if (isa<MemRefType>(value.getType()))
        value = builder.create<memref::LoadOp>(
            loc, value, indicesOf(builder, loc, op, *input, ivs));
      mapping.map(body.getArgument(input->getOperandNumber()), value);
    }
    for (Operation &inner : body.without_terminator()) {
      if (&inner == reduction.combiner)
        continue;
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(indexOp.getResult(), ivs[indexOp.getDim()]);
        continue;
      }
      builder.clone(inner, mapping);
    }
    return mapping.lookupOrDefault(reduction.x);
  }

  /// The block's total of the threads' `partial`s, through shuffles and
  /// shared memory; thread 0 hands it to `store`. The block then
  /// synchronizes, as the next unit reuses the shared memory.
  void storeTotal(OpBuilder &builder, const Reduction &reduction,
                  Value partial, Value tid,
                  function_ref<void(OpBuilder &, Value)> store) const {
    Location loc = reduction.op->getLoc();
    auto total = builder.create<gpu::AllReduceOp>(
        loc, partial,
        gpu::AllReduceOperationAttr::get(builder.getContext(), reduction.kind),
        /*uniform=*/builder.getUnitAttr());
    Value first = builder.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, tid,
        builder.create<arith::ConstantIndexOp>(loc, 0));
    auto ifFirst = builder.create<scf::IfOp>(loc, first, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&ifFirst.getThenRegion().front());
      store(builder, total.getResult());
    }
    builder.create<gpu::BarrierOp>(loc);
  }
};
} // namespace
