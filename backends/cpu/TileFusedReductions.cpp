//===- TileFusedReductions.cpp - A reduction region as one row loop -------===//
//
// After kiln-fuse-linalg-groups, a kiln.fused_kernel around reductions (the
// lowered kiln.fused region, FusedLowering.cpp) is still several loop nests
// over the whole tensor: softmax is the max, the sum of
// exp(x - max), and the normalization; layer norm the two sums and the
// normalization. Each nest reads the input from memory again, and the
// reduction nests with the exponential inside do not vectorize.
//
// This pass makes each such kernel one loop nest. The kernel's body is the
// group: its ops are the ones fused, and producers outside it (inputs, or
// the empty destinations kiln-fuse-linalg-groups moved out) are never
// fused. A
// kernel that reads its own group's reduction from outside is an error
// (verifyFusedKernelKind, FusedKernels.cpp), not a kernel left untiled.
// Its last all-parallel
// linalg.generic (the epilogue that reads the reduction results) is tiled
// with scf.forall, tile size 1 along the dims that index the reduction
// results (the rows; the other dims stay whole), and the linalg producers
// of the same region are fused into the loop, slice by slice, by upstream's
// scf::tileConsumerAndFuseProducersUsingSCF: a reduction fuses as the tile
// of its parallel dims with its reduced dims whole, its fill fuses through
// its init, elementwise prologues fuse as the slice the tile reads. One
// iteration thus computes a row's max and sum and then the normalized row,
// while the row is in cache, and the iterations are independent: after
// bufferization, scf-forall-to-parallel makes the forall an scf.parallel,
// the outermost parallel loop of the nest, which kiln-cpu-parallel-loops
// gives to OpenMP when it is large enough. The generics inside become
// sequential loops over one row.
//
// The tiles the fused producers write (the max and the sum of a row) go
// into shared outputs of the loop, so that bufferization writes them in
// place into buffers allocated once, not per iteration. A value of the
// region that is also read outside it (an extra result of the kiln.fused,
// e.g. log-sum-exp's max) is still computed by its untiled op for those
// readers, so it is computed twice. Producers outside the region (matmuls,
// other regions, function arguments) are read through slices and never
// fused, and neither is a contraction. Only regions with a reduction are
// tiled: an elementwise region is already one loop nest.
//
// A kernel with a reduction over outer dims only (a column sum) is left
// untiled: its nest already reads rows contiguously, and a row loop would
// read it by columns.
//
// Before tiling, a reduction whose length is a multiple of a vector's lanes
// is split into per-lane partial results (upstream splitReduction), so that
// its innermost loop is parallel and vectorizes; a reduction over several
// trailing dims (a mean over H and W) is first collapsed into one over
// their product (collapseReducedLoops), and an input broadcast along unit
// dims (an attention mask) is read without them (dropBroadcastUnitDims).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnFusionOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"

#include <optional>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUTILEFUSEDREDUCTIONS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// Whether `op` is a reduction this pass computes per row: a generic with a
/// reduction loop. Contractions (the linalg.matmul of a matmul epilogue
/// region, or the generic of a product of widened bytes) are not: they stay
/// whole, for oneDNN.
static bool hasReduction(linalg::LinalgOp op) {
  return isa<linalg::GenericOp>(op.getOperation()) &&
         op.getNumReductionLoops() > 0 &&
         !linalg::isaContractionOpInterface(op);
}

/// Whether one of a kernel's ops has a loop of no iterations (a
/// reduction over a dim of size zero, or an empty output). Such a kernel
/// computes nothing worth a row loop (an empty reduction is its init), and
/// upstream's tile-and-fuse does not handle empty iteration spaces, so it
/// stays as it is.
static bool hasEmptyLoop(ArrayRef<linalg::LinalgOp> ops) {
  return llvm::any_of(ops, [](linalg::LinalgOp op) {
    return llvm::is_contained(op.getStaticLoopRanges(), 0);
  });
}

/// Whether `op` reduces along its innermost loop, the one that walks a
/// row-major input contiguously (the row sums of softmax and layer norm).
/// A reduction over outer dims only (the column sums of a bias gradient)
/// is best left as it is, rows outer and the kept dims inner and
/// vectorized: a tile per output element would walk the input by columns,
/// one element per cache line.
static bool reducesInnermost(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  return !iterators.empty() && linalg::isReductionIterator(iterators.back());
}

/// Whether the tile loop may compute `op` per tile: generics other than
/// contractions, and fills.
static bool isFusible(Operation *op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return !linalg::isaContractionOpInterface(generic);
  return isa<linalg::FillOp>(op);
}

/// Whether `value` is computed, within `kernel`, from the result of a
/// reduction of that kernel (or is one).
static bool dependsOnReduction(Value value, FusedKernelOp kernel,
                               llvm::DenseMap<Operation *, bool> &memo) {
  auto producer = value.getDefiningOp<linalg::LinalgOp>();
  if (!producer || !isFusible(producer) || producer->getParentOp() != kernel)
    return false;
  auto [it, inserted] = memo.try_emplace(producer, false);
  if (!inserted)
    return it->second;
  bool result = hasReduction(producer);
  for (OpOperand *input : producer.getDpsInputOperands())
    result = result || dependsOnReduction(input->get(), kernel, memo);
  memo[producer] = result;
  return result;
}

/// The dims of `consumer` to tile by one, or an empty vector when the
/// consumer reads no reduction result of its kernel: the dims through which
/// it reads values computed from reductions (the rows of softmax or layer
/// norm), which must be the same for all of them. A value read through a
/// map that is not a projected permutation (e.g. a shifted index) would need
/// more than one row per tile, so such a consumer is not tiled.
static SmallVector<bool> rowDims(linalg::GenericOp consumer,
                                 FusedKernelOp kernel) {
  llvm::DenseMap<Operation *, bool> memo;
  std::optional<SmallVector<bool>> rows;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (!dependsOnReduction(input->get(), kernel, memo))
      continue;
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation() || map.getNumResults() == 0)
      return {};
    SmallVector<bool> dims(consumer.getNumLoops(), false);
    for (AffineExpr result : map.getResults())
      dims[cast<AffineDimExpr>(result).getPosition()] = true;
    // Reduction results read along different dims (r1[i] * r2[j]) would
    // recompute each reduction once per tile of the other's dims.
    if (rows && *rows != dims)
      return {};
    rows = dims;
  }
  return rows ? *rows : SmallVector<bool>();
}

/// The consumer to tile for `kernel`, whose linalg ops are `ops` in block
/// order: its last all-parallel generic on tensors that reads a reduction
/// result, or null.
static linalg::GenericOp findConsumer(ArrayRef<linalg::LinalgOp> ops,
                                      FusedKernelOp kernel,
                                      SmallVector<bool> &rows) {
  if (llvm::none_of(ops, hasReduction))
    return nullptr;
  for (linalg::LinalgOp op : llvm::reverse(ops)) {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic || !generic.hasPureTensorSemantics() ||
        generic.getNumReductionLoops() != 0 || generic->getNumResults() != 1)
      continue;
    rows = rowDims(generic, kernel);
    if (!rows.empty())
      return generic;
  }
  return nullptr;
}

/// The value a chain of destination-style ops starting at `init` leaves in
/// that destination: follow the op's tied result while the next op also
/// writes it in place (a fill, then the reduction accumulating into it).
static Value lastWrite(OpOperand &init) {
  auto op = cast<DestinationStyleOpInterface>(init.getOwner());
  Value value = op.getTiedOpResult(&init);
  while (true) {
    OpOperand *next = nullptr;
    for (OpOperand &use : value.getUses())
      if (auto user = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
        if (user.isDpsInit(&use))
          next = &use;
    if (!next)
      return value;
    value = cast<DestinationStyleOpInterface>(next->getOwner())
                .getTiedOpResult(next);
  }
}

/// Inside `loop`, the fused producers write tiles of tensors defined outside
/// it (slices of a tensor.empty). One-shot bufferization must then assume
/// that the parallel iterations race on those buffers and would allocate a
/// private copy per iteration. Each such destination instead becomes a
/// shared output of the loop, its tile taken from the loop's block argument
/// and inserted back in the in_parallel terminator, which the iterations
/// provably write disjointly: the tiles then bufferize in place, into one
/// buffer allocated before the loop. Every destination operand gets a
/// shared output of its own, so a max and a sum tiled from the same empty
/// tensor do not share a buffer.
static scf::ForallOp giveTilesSharedOutputs(RewriterBase &rewriter,
                                            scf::ForallOp loop) {
  // A fill that initializes several accumulators (CSE merges the equal
  // fills of layer norm's two sums) is cloned for each, so that every
  // accumulator has a destination of its own.
  for (Operation &op : llvm::make_early_inc_range(
           loop.getBody()->without_terminator())) {
    auto fill = dyn_cast<linalg::FillOp>(&op);
    if (!fill)
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : fill->getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      rewriter.setInsertionPoint(use->getOwner());
      Operation *copy = rewriter.clone(*fill);
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(copy->getResult(0)); });
    }
  }

  SmallVector<OpOperand *> inits;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(&op);
    if (!dps)
      continue;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      auto slice = init.get().getDefiningOp<tensor::ExtractSliceOp>();
      if (slice && slice.getSource().getDefiningOp<tensor::EmptyOp>())
        inits.push_back(&init);
    }
  }
  if (inits.empty())
    return loop;

  // A fresh tensor.empty per shared output: two outputs starting from one
  // (CSE merges equal empties) would be bufferized into one buffer.
  SmallVector<Value> outputs(loop.getOutputs());
  rewriter.setInsertionPoint(loop);
  for (OpOperand *init : inits) {
    auto source = cast<RankedTensorType>(
        init->get().getDefiningOp<tensor::ExtractSliceOp>().getSourceType());
    outputs.push_back(rewriter.create<tensor::EmptyOp>(
        loop.getLoc(), source.getShape(), source.getElementType()));
  }
  auto newLoop = rewriter.create<scf::ForallOp>(
      loop.getLoc(), loop.getMixedLowerBound(), loop.getMixedUpperBound(),
      loop.getMixedStep(), outputs, loop.getMapping());
  Block *newBody = newLoop.getBody();
  rewriter.eraseOp(newBody->getTerminator());
  unsigned oldArgs = loop.getBody()->getNumArguments();
  rewriter.mergeBlocks(loop.getBody(), newBody,
                       newBody->getArguments().take_front(oldArgs));

  auto terminator = cast<scf::InParallelOp>(newBody->getTerminator());
  for (auto [index, init] : llvm::enumerate(inits)) {
    auto slice = init->get().getDefiningOp<tensor::ExtractSliceOp>();
    Value output = newBody->getArgument(oldArgs + index);
    rewriter.setInsertionPoint(init->getOwner());
    auto tile = rewriter.create<tensor::ExtractSliceOp>(
        slice.getLoc(), cast<RankedTensorType>(slice.getType()), output,
        slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
    // A copy of the binding: C++17 lambdas cannot capture structured
    // bindings (clang++ before 16 rejects it; the fuzzers use clang++).
    OpOperand *operand = init;
    rewriter.modifyOpInPlace(operand->getOwner(),
                             [&] { operand->set(tile); });
    Value written = lastWrite(*init);
    rewriter.setInsertionPointToEnd(terminator.getBody());
    rewriter.create<tensor::ParallelInsertSliceOp>(
        slice.getLoc(), written, output, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  rewriter.replaceOp(loop,
                     newLoop.getResults().take_front(loop.getNumResults()));
  return newLoop;
}

static LogicalResult tileKernel(RewriterBase &rewriter,
                                linalg::GenericOp consumer,
                                FusedKernelOp kernel, ArrayRef<bool> rows) {
  MLIRContext *context = consumer.getContext();
  SmallVector<OpFoldResult> tileSizes;
  for (bool row : rows)
    tileSizes.push_back(IntegerAttr::get(IndexType::get(context), row ? 1 : 0));

  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(tileSizes);
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn([kernel](tensor::ExtractSliceOp,
                                      OpResult producer,
                                      bool) -> std::tuple<bool, bool> {
    Operation *op = producer.getOwner();
    bool fuse = isFusible(op) && op->getParentOp() == kernel;
    return {fuse, false};
  });

  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(consumer.getOperation()), options);
  if (failed(result))
    return failure();
  for (OpResult value : consumer->getResults())
    if (Value replacement = result->replacements.lookup(value))
      rewriter.replaceAllUsesWith(value, replacement);

  // A producer read through several slices (softmax's max, read by the sum
  // and by the normalization) is fused once per slice; the copies are
  // identical and merge.
  auto loop = cast<scf::ForallOp>(result->loops.front().getOperation());
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, loop);
  giveTilesSharedOutputs(rewriter, loop);
  return success();
}

/// Bytes of the partial results of one split reduction: four 64-byte
/// (AVX-512) vectors where the row's length is a multiple of them. A loop
/// over fewer lanes is fully unrolled by LLVM before its loop vectorizer
/// runs, and the SLP vectorizer then leaves a max (llvm.maximum) scalar;
/// four vectors also give four independent accumulator chains. Rows that
/// are multiples of two vectors or one only are split that finely, which
/// still vectorizes their sums (a sigmoid summed over 1x240x28x28, rows of
/// 784: 0.66 ms unsplit, 0.073 ms in 16 lanes, one thread).
static constexpr int64_t kLaneBytes = 256;

/// Reads each input that `op` broadcasts along unit dims (BERT's attention
/// mask, 1x1x1xN, read through (d0, 0, 0, d3)) through a collapse_shape
/// without those dims, indexed by the map's dims alone ((d0, d3) on a 1xN
/// tensor): the map becomes a projected permutation, which splitIntoLanes
/// needs. Without it such a softmax's max and sum stayed scalar loops,
/// exp included: BERT's first attention layer, whose region reads the
/// mask itself, took 4.5 ms per call where the other layers' took 0.55.
/// Only constant-0 results on size-1 dims are dropped; a map with any
/// other expression is left as it is.
static void dropBroadcastUnitDims(RewriterBase &rewriter,
                                  linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    AffineMap map = maps[operand->getOperandNumber()];
    auto type = dyn_cast<RankedTensorType>(operand->get().getType());
    if (!type || type.getEncoding() || map.isProjectedPermutation())
      continue;
    // Each kept dim takes the unit dims before it into its group; trailing
    // unit dims join the last group. With no kept dim the input collapses
    // to a rank-0 tensor.
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    bool foldable = true;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      pending.push_back(i);
      if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
        foldable = constant.getValue() == 0 && type.getDimSize(i) == 1;
      } else if (isa<AffineDimExpr>(expr)) {
        kept.push_back(expr);
        shape.push_back(type.getDimSize(i));
        groups.push_back(std::move(pending));
        pending.clear();
      } else {
        foldable = false;
      }
      if (!foldable)
        break;
    }
    AffineMap folded =
        AffineMap::get(map.getNumDims(), 0, kept, op.getContext());
    if (!foldable || !folded.isProjectedPermutation())
      continue;
    if (!groups.empty())
      groups.back().append(pending.begin(), pending.end());
    rewriter.setInsertionPoint(op);
    Value collapsed = rewriter.create<tensor::CollapseShapeOp>(
        op.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        operand->get(), groups);
    rewriter.modifyOpInPlace(op, [&] { operand->set(collapsed); });
    maps[operand->getOperandNumber()] = folded;
    changed = true;
  }
  if (changed)
    rewriter.modifyOpInPlace(op, [&] {
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
}

/// Splits the reduction `op` of one row into `lanes` partial results, a few
/// vectors' worth: x[n] is read as x[n / lanes][n % lanes], the outer
/// index reduced and the inner one parallel, so the innermost loop
/// accumulates consecutive elements into consecutive partials, which LLVM
/// vectorizes without reassociating anything; a second, short reduction
/// combines the lanes. (A reduction loop over the row itself stays scalar:
/// LLVM may not reorder a floating-point sum, and the accumulator lives in
/// memory.) Reductions whose length is no multiple of the lanes are left
/// alone, and so are reductions that still read an operand through a map
/// that is not a projected permutation after dropBroadcastUnitDims:
/// upstream's splitReduction takes every map result for a dim (getDimPosition)
/// and, without assertions, reads a constant's storage as a dim position,
/// which builds maps of garbage dims that later passes write out of bounds
/// with (inversePermutation). Nor are reductions whose body reads its loop
/// indices (linalg.index: the counters of random bits, an iota): upstream
/// keeps each linalg.index on its old dim number, which after the split
/// names the outer lane loop, so the body would see n / lanes where it
/// read n.
static void splitIntoLanes(RewriterBase &rewriter, linalg::GenericOp op) {
  if (op.getNumReductionLoops() != 1 || op->getNumResults() != 1 ||
      !op.hasPureTensorSemantics() || op.hasIndexSemantics())
    return;
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() < 8)
    return;
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges[dims.front()];
  if (ShapedType::isDynamic(length))
    return;
  // Four vectors' worth of lanes where the length allows, else two or one
  // (a 28x28 window, 784 elements, is a multiple of 16 f32 lanes only).
  int64_t lanes = 0;
  for (int64_t bytes = kLaneBytes; bytes >= kLaneBytes / 4 && !lanes;
       bytes /= 2) {
    int64_t candidate = bytes * 8 / type.getElementTypeBitWidth();
    if (length % candidate == 0 && length >= 2 * candidate)
      lanes = candidate;
  }
  if (!lanes)
    return;
  unsigned outputRank = type.getRank();
  rewriter.setInsertionPoint(op);
  (void)linalg::splitReduction(
      rewriter, cast<linalg::LinalgOp>(op.getOperation()),
      [&](linalg::LinalgOp) {
        return linalg::SplitReductionOptions{lanes, outputRank,
                                             /*innerParallel=*/true};
      });
}

/// Collapses the trailing reduced loops of `op` into one when there are
/// several (the mean over H and W of a squeeze-and-excitation block), so
/// that splitIntoLanes, which takes one reduced loop, splits the whole row
/// into lanes: a 56x56 window is one reduction of 3136 elements, a multiple
/// of the lanes where 56 is not. Each input must read the reduced loops as
/// its trailing dims in order (a contiguous row; the input is collapsed the
/// same way), and the result none of them. Measured with one thread: exp
/// summed over 1x144x56x56, 1.39 ms as a scalar loop nest. Returns the
/// collapsed op, or `op` when it is left alone.
static linalg::GenericOp collapseReducedLoops(RewriterBase &rewriter,
                                              linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return op;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned loops = iterators.size();
  unsigned reduced = op.getNumReductionLoops();
  if (reduced < 2)
    return op;
  for (unsigned i = 0; i < loops; ++i)
    if (linalg::isReductionIterator(iterators[i]) != (i >= loops - reduced))
      return op;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return op;
    bool init = op.isDpsInit(&operand);
    unsigned results = map.getNumResults();
    for (unsigned r = 0; r < results; ++r) {
      unsigned dim = map.getDimPosition(r);
      bool reducedDim = dim >= loops - reduced;
      if (!reducedDim)
        continue;
      // An input reads the reduced loops as its trailing dims, in order.
      if (init || results < reduced ||
          r != results - reduced + (dim - (loops - reduced)))
        return op;
    }
  }
  SmallVector<ReassociationIndices> folded(1);
  for (unsigned i = loops - reduced; i < loops; ++i)
    folded.front().push_back(i);
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), folded))
    return op;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, folded, rewriter);
  if (failed(collapsed))
    return op;
  rewriter.replaceOp(op, collapsed->results);
  return cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

namespace {
struct KilnCpuTileFusedReductionsPass
    : kiln::impl::KilnCpuTileFusedReductionsBase<
          KilnCpuTileFusedReductionsPass> {
  /// Tiling needs linalg's TilingInterface models, which a tool registering
  /// only the dialects would lack.
  void getDependentDialects(DialectRegistry &registry) const override {
    KilnCpuTileFusedReductionsBase::getDependentDialects(registry);
    linalg::registerTilingInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<FusedKernelOp> kernels;
    getOperation()->walk([&](FusedKernelOp kernel) {
      kernels.push_back(kernel);
    });
    for (FusedKernelOp kernel : kernels)
      if (failed(verifyFusedKernelKind(kernel)))
        return signalPassFailure();

    auto opsOf = [](FusedKernelOp kernel) {
      SmallVector<linalg::LinalgOp> ops;
      for (Operation &op : kernel.getBody().front())
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
          ops.push_back(linalgOp);
      return ops;
    };
    // Kernels with a reduction over outer dims stay as they are.
    llvm::erase_if(kernels, [&](FusedKernelOp kernel) {
      return llvm::any_of(opsOf(kernel), [](linalg::LinalgOp op) {
        return hasReduction(op) && !reducesInnermost(op);
      });
    });
    for (FusedKernelOp kernel : kernels)
      for (linalg::LinalgOp op : opsOf(kernel))
        if (hasReduction(op)) {
          auto generic = cast<linalg::GenericOp>(op.getOperation());
          dropBroadcastUnitDims(rewriter, generic);
          splitIntoLanes(rewriter, collapseReducedLoops(rewriter, generic));
        }

    for (FusedKernelOp kernel : kernels) {
      if (hasEmptyLoop(opsOf(kernel)))
        continue;
      SmallVector<bool> rows;
      linalg::GenericOp consumer = findConsumer(opsOf(kernel), kernel, rows);
      if (!consumer)
        continue;
      if (failed(tileKernel(rewriter, consumer, kernel, rows))) {
        consumer.emitError("could not tile the reduction kernel");
        return signalPassFailure();
      }
    }
    // The untiled ops are dead now; bufferization would still compute them.
    // The pass runs right before bufferization, with no canonicalizer in
    // between, so it removes them itself.
    (void)runRegionDCE(rewriter, getOperation()->getRegions());
  }
};
} // namespace
