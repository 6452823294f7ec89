//===- FusedLowering.cpp - kiln.fused regions to fused linalg -------------===//
//
// A kiln.fused region (formed by kiln-fuse) becomes fused linalg in two
// steps:
//
//  1. Inside kiln-to-linalg, FusedPattern turns the kiln.fused into a
//     kiln.fused_kernel with the same inputs, results and kind, and moves
//     the region's body into it; the body's ops then lower in place like any
//     other kiln op, so every linalg/tensor op that computes the group is in
//     the kernel's body and nothing else is.
//
//  2. kiln-fuse-linalg-groups runs upstream elementwise fusion
//     (linalg::populateElementwiseOpsFusionPatterns, and reshapes folded by
//     expansion) with a control function that fuses a producer into a
//     consumer only when both are ops of the same kernel's body. Upstream's
//     own pass fuses single-use producers only; here a producer read by
//     several ops of the kernel is fused into each of them (upstream
//     recomputes it in every consumer, which trades cheap arithmetic for a
//     round trip through memory; CSE later merges the copies within one
//     body), and nothing is fused across kernels. An elementwise kernel
//     thus becomes one linalg.generic: one loop nest. Without the option
//     recompute-transcendentals (the CPU), a producer that evaluates erf,
//     exp, tanh and the like and that several reductions read, or that
//     its reader reads through a broadcast (each element once per copy),
//     is not recomputed: it is computed once into a tensor of the kernel;
//     nor is a value the kernel returns, computed with such a function,
//     recomputed in a reduction that reads it.
//
// Why a region op and not a mark on each op: the grouping decides speed,
// not results, so losing it would go unnoticed. A location (debug info) or
// a discardable attribute is dropped by any rewrite that rebuilds an op
// without copying it or with another op's location, and CSE merges equal
// ops of different groups whatever their locations; the group then
// silently compiles as several loop nests. Membership in a body cannot be
// dropped or merged that way. Only the tensor.empty destinations, which
// compute nothing, leave the bodies at the end of step 2, so that CSE shares
// them between kernels as before (bufferization and the buffer passes
// after it depend on which destinations are shared). The kernels stay until
// the backend has made each of them one kernel (on the CPU after
// canonicalize, CSE and kiln-cpu-tile-fused-reductions, on CUDA right after
// step 2), then kiln-inline-fused-kernels (FusedKernels.cpp) inlines them.
// The passes that read kernels check that each still holds what its kind
// promises.
//
// What upstream fusion does not do: a value of a region that is also read
// outside it (an extra result of the kiln.fused) stays a loop nest of its
// own, recomputed inside the fused generic rather than written by it, since
// upstream's fusion does not make multi-result generics; sibling results of
// a multi-output region likewise stay separate generics. Only generics with
// all-parallel loops fuse as producers, so a reduction is never fused into
// its consumers. Softmax becomes three generics (the max; the sum of
// exp(x - max); exp(x - max) / sum, the exponential recomputed rather than
// stored), layer norm three (the two sums and the normalization). On the
// CPU, kiln-cpu-tile-fused-reductions (backends/cpu/TileFusedReductions.cpp)
// then makes them one loop nest over the rows, each row's reductions
// computed in the same iteration as its normalization. linalg.matmul is a
// named op and fuses with
// nothing; its epilogue (bias, activation, residual) becomes one generic
// after it.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_FUSELINALGGROUPS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// A producer with several readers is recomputed in every consumer it is
/// fused into, so fused bodies could grow exponentially on a chain like
/// `a = a * a + a`; such a fusion is refused once the two bodies together
/// exceed this many ops (a tanh-approximated GELU needs about 20).
static constexpr size_t kMaxRecomputingBodyOps = 256;

/// Whether `op`'s body evaluates a transcendental function (erf, exp, log,
/// tanh, ...: tens of instructions each once approximated), which the
/// pass's recompute-transcendentals option may keep from being recomputed
/// for each of several readers.
static bool hasTranscendental(Operation *op) {
  WalkResult found = op->walk([](Operation *inner) {
    return isa<math::ErfOp, math::ExpOp, math::Exp2Op,
               math::ExpM1Op, math::LogOp, math::Log1pOp, math::Log2Op,
               math::Log10Op, math::TanhOp, math::PowFOp, math::SinOp,
               math::CosOp, math::TanOp, math::AtanOp, math::Atan2Op,
               math::AsinOp, math::AcosOp, math::SinhOp, math::CoshOp,
               math::AsinhOp, math::AcoshOp, math::AtanhOp>(inner)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// The reductions that read `value`, directly or through elementwise ops.
static unsigned reductionsReading(Value value,
                                  llvm::SmallPtrSetImpl<Operation *> &seen) {
  unsigned count = 0;
  for (Operation *user : value.getUsers()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    if (!linalgOp || !seen.insert(user).second)
      continue;
    if (linalgOp.getNumReductionLoops() > 0) {
      ++count;
      continue;
    }
    for (Value result : user->getResults())
      count += reductionsReading(result, seen);
  }
  return count;
}

/// Whether `producer` is computed once rather than recomputed in its
/// readers without recompute-transcendentals: it evaluates a
/// transcendental function and several reductions read it (each
/// recomputing it in a pass over the whole input: a dynamic
/// quantization's min and max). A single reduction and elementwise
/// readers (softmax's sum and normalization) recompute it: in a row
/// kernel the second computation is of a row still in cache, while a
/// written row would be read through the reshape of the sum's split
/// reduction, which the row loop cannot take in.
static bool computedOnce(Operation *producer) {
  if (!hasTranscendental(producer))
    return false;
  llvm::SmallPtrSet<Operation *, 8> seen;
  unsigned reductions = 0;
  for (Value result : producer->getResults())
    reductions += reductionsReading(result, seen);
  return reductions >= 2;
}

/// Whether `op`, an op of a kernel's body, or one of the body's ops whose
/// results it reads (directly or not), evaluates a transcendental function.
static bool computesTranscendental(Operation *op,
                                   llvm::SmallPtrSetImpl<Operation *> &seen) {
  if (!seen.insert(op).second)
    return false;
  if (hasTranscendental(op))
    return true;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    Operation *definition = operand.getDefiningOp();
    return definition && definition->getParentOp() == op->getParentOp() &&
           computesTranscendental(definition, seen);
  });
}

/// Whether a reduction should read `producer`'s values from memory rather
/// than recompute them: its kernel returns them, so they are written
/// anyway, and computing them evaluates a transcendental function (a
/// squeeze-excitation block's SiLU, whose spatial mean makes the gate and
/// whose values the gate then scales; fused, the mean evaluated the SiLU a
/// second time).
static bool readFromMemoryByReductions(Operation *producer) {
  bool returned = llvm::any_of(producer->getUsers(), [](Operation *user) {
    return isa<mlir::kiln::YieldOp>(user) &&
           isa<FusedKernelOp>(user->getParentOp());
  });
  llvm::SmallPtrSet<Operation *, 8> seen;
  return returned && computesTranscendental(producer, seen);
}

/// Whether fusing the producer of `fusedOperand` into its consumer would
/// evaluate each producer element several times: the consumer reads it
/// through a broadcast and runs more iterations than there are elements (a
/// squeeze-excitation gate's sigmoid, 672 values, evaluated for each of the
/// 14x14x672 products it scales).
static bool readsThroughBroadcast(OpOperand *fusedOperand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  auto type = dyn_cast<RankedTensorType>(fusedOperand->get().getType());
  if (!consumer || !type)
    return false;
  SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  if (!type.hasStaticShape() || llvm::any_of(ranges, ShapedType::isDynamic))
    return !consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
  int64_t iterations = 1;
  for (int64_t range : ranges)
    iterations *= range;
  return iterations > type.getNumElements();
}

static size_t bodySize(Operation *op) {
  size_t size = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      size += block.getOperations().size();
  return size;
}

/// The kernel whose body holds `op` directly, or null.
static FusedKernelOp kernelOf(Operation *op) {
  return dyn_cast_or_null<FusedKernelOp>(op->getParentOp());
}

namespace {

/// Step 1: moves a kiln.fused region's body into a kiln.fused_kernel, where
/// kiln-to-linalg then lowers its ops.
struct FusedPattern : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedOp op,
                                PatternRewriter &rewriter) const override {
    auto kernel = rewriter.create<FusedKernelOp>(
        op.getLoc(), op.getResultTypes(), op.getKind(), op.getInputs());
    rewriter.inlineRegionBefore(op.getBody(), kernel.getBody(),
                                kernel.getBody().end());
    rewriter.replaceOp(op, kernel.getResults());
    return success();
  }
};

/// Step 2.
struct FuseLinalgGroupsPass
    : kiln::impl::FuseLinalgGroupsBase<FuseLinalgGroupsPass> {
  using FuseLinalgGroupsBase::FuseLinalgGroupsBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    WalkResult kinds = getOperation().walk([](FusedKernelOp kernel) {
      return failed(verifyFusedKernelKind(kernel)) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
    });
    if (kinds.wasInterrupted())
      return signalPassFailure();
    bool recompute = recomputeTranscendentals;
    linalg::ControlFusionFn sameKernel = [recompute](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      Operation *consumer = fusedOperand->getOwner();
      FusedKernelOp kernel = kernelOf(consumer);
      if (!producer || !kernel || kernelOf(producer) != kernel)
        return false;
      if (!recompute && hasTranscendental(producer) &&
          readsThroughBroadcast(fusedOperand))
        return false;
      auto linalgConsumer = dyn_cast<linalg::LinalgOp>(consumer);
      if (!recompute && linalgConsumer &&
          linalgConsumer.getNumReductionLoops() > 0 &&
          readFromMemoryByReductions(producer))
        return false;
      return fusedOperand->get().hasOneUse() ||
             ((recompute || !computedOnce(producer)) &&
              bodySize(producer) + bodySize(consumer) <=
                  kMaxRecomputingBodyOps);
    };
    // A reshape is not propagated through a contraction: that would turn
    // a linalg.matmul into a generic with unit dims (an epilogue that
    // reads a reshaped value, as a recurrent cell's does, expands it to
    // [1, m, n]), which kiln-cpu-matmul-to-dnnl and the GPU's tiled
    // matmul no longer recognize.
    // Nor through a reduction: expanding a reduction over a size-1
    // dimension to fold the reshape of its result gives a generic whose
    // result is reshaped again, and the pattern expands it once more,
    // without end (softmax over an axis of size 1). A reduction never fuses
    // with its consumers anyway.
    linalg::ControlFusionFn reshapeOutsideContractions =
        [sameKernel](OpOperand *fusedOperand) {
          auto keepsItsShape = [](Operation *op) {
            auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
            return linalgOp && (linalg::isaContractionOpInterface(linalgOp) ||
                                linalgOp.getNumReductionLoops() > 0);
          };
          return !keepsItsShape(fusedOperand->get().getDefiningOp()) &&
                 !keepsItsShape(fusedOperand->getOwner()) &&
                 sameKernel(fusedOperand);
        };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, sameKernel);
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, reshapeOutsideContractions);
    // The cleanups upstream's linalg-fuse-elementwise-ops applies with them.
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Destinations compute nothing: before the kernel, CSE shares them
    // across kernels and with the rest of the function.
    getOperation().walk([](FusedKernelOp kernel) {
      for (Operation &op :
           llvm::make_early_inc_range(kernel.getBody().front()))
        if (isa<tensor::EmptyOp>(op) && op.getNumOperands() == 0)
          op.moveBefore(kernel);
    });
  }
};

} // namespace

void kiln::populateFusedLowerings(RewritePatternSet &patterns) {
  patterns.add<FusedPattern>(patterns.getContext());
}
