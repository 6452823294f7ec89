//===- ParallelReductions.cpp - Large reductions as per-chunk partials ----===//
//
// linalg lowers a reduction to scf.parallel over its parallel dims with the
// reduction dims as scf.for loops inside, accumulating into the output
// through memory. A reduction with few outputs (a full sum has one) then
// runs on one thread, and its float accumulation is a chain of dependent
// adds that LLVM may not reorder, so it is neither threaded nor vectorized.
//
// This pass splits such a reduction along its largest reduction dim into
// chunks. Each chunk folds its share into private accumulators (one per
// output element, scf.for iter_args starting at the combiner's identity),
// whose combiner is marked reassociable so that LLVM vectorizes it with
// several vector accumulators, and stores them in a partials buffer; the
// chunks are an scf.parallel loop, so they run on the OpenMP threads. A
// short sequential loop then folds the partials, in chunk order, into the
// output's initial value. Floating-point results differ from the
// sequential order by rounding only (the sum is reassociated).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPARALLELREDUCTIONS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The reduction kind of a combiner op, if it is one with an identity.
static std::optional<arith::AtomicRMWKind> combinerKind(Operation *op) {
  using Kind = std::optional<arith::AtomicRMWKind>;
  return llvm::TypeSwitch<Operation *, Kind>(op)
      .Case([](arith::AddFOp) { return arith::AtomicRMWKind::addf; })
      .Case([](arith::MulFOp) { return arith::AtomicRMWKind::mulf; })
      .Case([](arith::MaximumFOp) { return arith::AtomicRMWKind::maximumf; })
      .Case([](arith::MinimumFOp) { return arith::AtomicRMWKind::minimumf; })
      .Case([](arith::MaxNumFOp) { return arith::AtomicRMWKind::maxnumf; })
      .Case([](arith::MinNumFOp) { return arith::AtomicRMWKind::minnumf; })
      .Case([](arith::AddIOp) { return arith::AtomicRMWKind::addi; })
      .Case([](arith::MulIOp) { return arith::AtomicRMWKind::muli; })
      .Case([](arith::MaxSIOp) { return arith::AtomicRMWKind::maxs; })
      .Case([](arith::MinSIOp) { return arith::AtomicRMWKind::mins; })
      .Case([](arith::MaxUIOp) { return arith::AtomicRMWKind::maxu; })
      .Case([](arith::MinUIOp) { return arith::AtomicRMWKind::minu; })
      .Case([](arith::AndIOp) { return arith::AtomicRMWKind::andi; })
      .Case([](arith::OrIOp) { return arith::AtomicRMWKind::ori; })
      .Default([](Operation *) { return Kind(); });
}

namespace {
/// A reduction this pass splits, and how.
struct Split {
  linalg::LinalgOp op;
  Operation *combiner;
  arith::AtomicRMWKind kind;
  /// The reduction dim split into chunks, and the number of chunks.
  unsigned dim;
  int64_t chunks;
};
} // namespace

/// Whether `op` is a reduction worth splitting, and how to split it.
static std::optional<Split> analyze(linalg::LinalgOp op, int64_t minIterations,
                                    int64_t maxChunks) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || op->getNumRegions() != 1 ||
      op.getBlock() == nullptr)
    return std::nullopt;
  auto outType = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!outType)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (auto type = dyn_cast<MemRefType>(operand.get().getType());
        !type && !operand.get().getType().isIntOrIndexOrFloat())
      return std::nullopt;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  // Split the outermost reduction dim with at least `maxChunks` iterations
  // (chunks then read contiguous slabs), else the largest one.
  int64_t outputs = 1, work = 1, largest = 0;
  std::optional<unsigned> outermost;
  unsigned dim = 0;
  for (auto [d, range] : llvm::enumerate(ranges)) {
    work *= range;
    if (iterators[d] == utils::IteratorType::parallel) {
      outputs *= range;
      continue;
    }
    if (range > largest) {
      largest = range;
      dim = d;
    }
    if (!outermost && range >= maxChunks)
      outermost = d;
  }
  if (outermost) {
    dim = *outermost;
    largest = ranges[dim];
  }
  // Enough parallel iterations already keep the threads busy.
  if (work < minIterations || outputs >= maxChunks || largest < 2)
    return std::nullopt;
  // The output may only depend on parallel dims.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (AffineExpr result : outMap.getResults())
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (result.isFunctionOfDim(d) &&
          iterators[d] != utils::IteratorType::parallel)
        return std::nullopt;

  // The body yields combine(x, out), out used nowhere else.
  Block *body = op.getBlock();
  SmallVector<Operation *> combiners;
  if (!matchReduction(body->getArguments().take_back(1), 0, combiners) ||
      combiners.size() != 1)
    return std::nullopt;
  std::optional<arith::AtomicRMWKind> kind = combinerKind(combiners.front());
  if (!kind || !body->getArguments().back().hasOneUse())
    return std::nullopt;
  // The payload must be plain computation (no memory effects of its own).
  for (Operation &inner : body->without_terminator())
    if (!isMemoryEffectFree(&inner))
      return std::nullopt;
  return Split{op, combiners.front(), *kind, dim,
               std::min<int64_t>(maxChunks, largest)};
}

/// Indices into an operand with indexing map `map` at loop point `dims`.
static SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                         AffineMap map, ValueRange dims) {
  SmallVector<Value> indices;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    AffineExpr result = map.getResult(i);
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      indices.push_back(dims[dim.getPosition()]);
    else
      indices.push_back(
          b.create<affine::AffineApplyOp>(loc, map.getSubMap({i}), dims));
  }
  return indices;
}

static void rewrite(const Split &split) {
  linalg::LinalgOp op = split.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> parallelDims, reductionDims;
  for (unsigned d = 0; d < ranges.size(); ++d)
    (iterators[d] == utils::IteratorType::parallel ? parallelDims
                                                   : reductionDims)
        .push_back(d);
  OpOperand *init = op.getDpsInitOperand(0);
  Value out = init->get();
  Type elementType = cast<MemRefType>(out.getType()).getElementType();
  AffineMap outMap = op.getMatchingIndexingMap(init);

  int64_t extent = ranges[split.dim];
  // Chunks start at multiples of 16 elements (64-byte vectors of f32).
  int64_t chunkSize = llvm::divideCeil(extent, split.chunks);
  if (chunkSize > 16)
    chunkSize = llvm::alignTo(chunkSize, 16);
  int64_t chunks = llvm::divideCeil(extent, chunkSize);
  auto index = [&](int64_t value) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, value);
  };
  Value zero = index(0), one = index(1);

  // partials[chunk, parallel dims...]
  SmallVector<int64_t> partialShape{chunks};
  for (unsigned d : parallelDims)
    partialShape.push_back(ranges[d]);
  Value partials = b.create<memref::AllocOp>(
      loc, MemRefType::get(partialShape, elementType), /*alignment=*/
      b.getI64IntegerAttr(64));

  Block *body = op.getBlock();
  auto parallel = b.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{index(chunks)}, ValueRange{one},
      [&](OpBuilder &pb, Location loc, ValueRange chunkIvs) {
        Value chunk = chunkIvs.front();
        Value lower = pb.create<arith::MulIOp>(
            loc, chunk, pb.create<arith::ConstantIndexOp>(loc, chunkSize));
        Value upper = pb.create<arith::MinSIOp>(
            loc,
            pb.create<arith::AddIOp>(
                loc, lower, pb.create<arith::ConstantIndexOp>(loc, chunkSize)),
            pb.create<arith::ConstantIndexOp>(loc, extent));
        Value pzero = pb.create<arith::ConstantIndexOp>(loc, 0);
        Value pone = pb.create<arith::ConstantIndexOp>(loc, 1);
        SmallVector<Value> parallelUppers;
        for (unsigned d : parallelDims)
          parallelUppers.push_back(
              pb.create<arith::ConstantIndexOp>(loc, ranges[d]));
        scf::buildLoopNest(
            pb, loc, SmallVector<Value>(parallelDims.size(), pzero),
            parallelUppers, SmallVector<Value>(parallelDims.size(), pone),
            [&](OpBuilder &nb, Location loc, ValueRange parallelIvs) {
              SmallVector<Value> lowers, uppers;
              for (unsigned d : reductionDims) {
                lowers.push_back(d == split.dim ? lower : pzero);
                uppers.push_back(
                    d == split.dim
                        ? upper
                        : nb.create<arith::ConstantIndexOp>(loc, ranges[d])
                              .getResult());
              }
              Value identity =
                  arith::getIdentityValue(split.kind, elementType, nb, loc);
              scf::LoopNest nest = scf::buildLoopNest(
                  nb, loc, lowers, uppers,
                  SmallVector<Value>(reductionDims.size(), pone),
                  ValueRange{identity},
                  [&](OpBuilder &rb, Location loc, ValueRange reductionIvs,
                      ValueRange accumulators) -> scf::ValueVector {
                    SmallVector<Value> dims(ranges.size());
                    for (auto [d, iv] : llvm::zip(parallelDims, parallelIvs))
                      dims[d] = iv;
                    for (auto [d, iv] : llvm::zip(reductionDims, reductionIvs))
                      dims[d] = iv;
                    IRMapping mapping;
                    for (OpOperand *input : op.getDpsInputOperands()) {
                      Value value = input->get();
                      if (isa<MemRefType>(value.getType()))
                        value = rb.create<memref::LoadOp>(
                            loc, value,
                            operandIndices(rb, loc,
                                           op.getMatchingIndexingMap(input),
                                           dims));
                      mapping.map(op.getMatchingBlockArgument(input), value);
                    }
                    mapping.map(body->getArguments().back(),
                                accumulators.front());
                    for (Operation &inner : body->without_terminator()) {
                      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
                        mapping.map(indexOp.getResult(),
                                    dims[indexOp.getDim()]);
                        continue;
                      }
                      Operation *clone = rb.clone(inner, mapping);
                      // The chunk's fold may be reordered: LLVM then keeps
                      // several vector accumulators.
                      if (&inner == split.combiner)
                        if (auto fastMath =
                                dyn_cast<arith::ArithFastMathInterface>(clone))
                          clone->setAttr(
                              fastMath.getFastMathAttrName(),
                              arith::FastMathFlagsAttr::get(
                                  rb.getContext(),
                                  fastMath.getFastMathFlagsAttr().getValue() |
                                      arith::FastMathFlags::reassoc));
                    }
                    return {mapping.lookup(
                        body->getTerminator()->getOperand(0))};
                  });
              SmallVector<Value> partialIndices{chunk};
              llvm::append_range(partialIndices, parallelIvs);
              nb.create<memref::StoreOp>(loc, nest.results.front(), partials,
                                         partialIndices);
            });
        pb.create<scf::ReduceOp>(loc);
      });
  (void)parallel;

  // out[p] = combine(partials[chunks - 1, p], ... combine(partials[0, p],
  // out[p])), sequentially.
  SmallVector<Value> parallelUppers;
  for (unsigned d : parallelDims)
    parallelUppers.push_back(index(ranges[d]));
  scf::buildLoopNest(
      b, loc, SmallVector<Value>(parallelDims.size(), zero), parallelUppers,
      SmallVector<Value>(parallelDims.size(), one),
      [&](OpBuilder &nb, Location loc, ValueRange parallelIvs) {
        SmallVector<Value> dims(ranges.size(), zero);
        for (auto [d, iv] : llvm::zip(parallelDims, parallelIvs))
          dims[d] = iv;
        SmallVector<Value> outIndices = operandIndices(nb, loc, outMap, dims);
        Value initial = nb.create<memref::LoadOp>(loc, out, outIndices);
        auto fold = nb.create<scf::ForOp>(
            loc, zero, index(chunks), one, ValueRange{initial},
            [&](OpBuilder &fb, Location loc, Value chunk, ValueRange acc) {
              SmallVector<Value> partialIndices{chunk};
              llvm::append_range(partialIndices, parallelIvs);
              Value partial =
                  fb.create<memref::LoadOp>(loc, partials, partialIndices);
              fb.create<scf::YieldOp>(
                  loc, arith::getReductionOp(split.kind, fb, loc, acc.front(),
                                             partial));
            });
        nb.create<memref::StoreOp>(loc, fold.getResult(0), out, outIndices);
      });
  b.create<memref::DeallocOp>(loc, partials);
  op->erase();
}

namespace {
struct KilnCpuParallelReductionsPass
    : kiln::impl::KilnCpuParallelReductionsBase<KilnCpuParallelReductionsPass> {
  using KilnCpuParallelReductionsBase::KilnCpuParallelReductionsBase;

  void runOnOperation() override {
    if (maxChunks < 1) {
      getOperation().emitError("kiln-cpu-parallel-reductions: chunks must be "
                               "positive");
      return signalPassFailure();
    }
    SmallVector<Split> splits;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<Split> split = analyze(op, minIterations, maxChunks))
        splits.push_back(*split);
    });
    for (const Split &split : splits)
      rewrite(split);
  }
};
} // namespace
