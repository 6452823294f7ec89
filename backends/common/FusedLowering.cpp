//===- FusedLowering.cpp - kiln.fused regions to fused linalg -------------===//
//
// A kiln.fused region (formed by kiln-fuse) becomes fused linalg in two
// steps:
//
//  1. Inside kiln-to-linalg, FusedPattern inlines the region's ops into the
//     parent block, its block arguments replaced by the op's inputs, and
//     tags the location of every inlined op with the region: a FusedLoc
//     whose metadata is a distinct attribute made once per region. The ops
//     then lower like any other kiln op, and the linalg/tensor ops they
//     become carry the tagged location.
//
//  2. kiln-fuse-linalg-groups runs upstream elementwise fusion
//     (linalg::populateElementwiseOpsFusionPatterns, and reshapes folded by
//     expansion) with a control function that fuses a producer into a
//     consumer only when both carry the same region tag. Upstream's own pass
//     fuses single-use producers only; here a producer read by several ops
//     of the region is fused into each of them (upstream recomputes it in
//     every consumer, which trades cheap arithmetic for a round trip through
//     memory; CSE later merges the copies within one body), and nothing is
//     fused across regions. An elementwise region thus becomes one
//     linalg.generic: one loop nest.
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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_FUSELINALGGROUPS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// The string a region tag refers to; it tells kiln's tags apart from other
/// distinct metadata a FusedLoc may carry.
static constexpr llvm::StringLiteral kRegionTagName = "kiln.fused";

/// A producer with several readers is recomputed in every consumer it is
/// fused into, so fused bodies could grow exponentially on a chain like
/// `a = a * a + a`; such a fusion is refused once the two bodies together
/// exceed this many ops (a tanh-approximated GELU needs about 20).
static constexpr size_t kMaxRecomputingBodyOps = 256;

static size_t bodySize(Operation *op) {
  size_t size = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      size += block.getOperations().size();
  return size;
}

/// The region tag of `loc` itself, or null.
static DistinctAttr ownTag(FusedLoc fused) {
  auto tag = dyn_cast_or_null<DistinctAttr>(fused.getMetadata());
  if (!tag)
    return {};
  auto name = dyn_cast<StringAttr>(tag.getReferencedAttr());
  return name && name.getValue() == kRegionTagName ? tag : DistinctAttr();
}

DistinctAttr kiln::fusedRegionTag(Operation *op) {
  // The tag is the metadata of a FusedLoc; rewrites that merge ops (linalg
  // fusion, folding) may wrap the tagged locations of the merged ops into
  // a FusedLoc of their own, so all tags nested in the location count, as
  // long as they name one region.
  DistinctAttr found;
  bool ambiguous = false;
  op->getLoc()->walk([&](Location loc) {
    auto fused = dyn_cast<FusedLoc>(loc);
    if (!fused)
      return WalkResult::advance();
    if (DistinctAttr tag = ownTag(fused)) {
      if (found && found != tag)
        ambiguous = true;
      found = tag;
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  return ambiguous ? DistinctAttr() : found;
}

namespace {

/// Step 1: inlines a kiln.fused region, tagging the locations of its ops.
struct FusedPattern : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *context = op.getContext();
    auto tag = DistinctAttr::create(StringAttr::get(context, kRegionTagName));
    Block *body = &op.getBody().front();
    for (Operation &inner : body->without_terminator())
      rewriter.modifyOpInPlace(&inner, [&] {
        inner.setLoc(FusedLoc::get({inner.getLoc()}, tag, context));
      });
    auto yield = cast<YieldOp>(body->getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.inlineBlockBefore(body, op, op.getInputs());
    rewriter.replaceOp(op, results);
    rewriter.eraseOp(yield);
    return success();
  }
};

/// Step 2.
struct FuseLinalgGroupsPass
    : kiln::impl::FuseLinalgGroupsBase<FuseLinalgGroupsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    linalg::ControlFusionFn sameRegion = [](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      Operation *consumer = fusedOperand->getOwner();
      DistinctAttr tag = fusedRegionTag(consumer);
      if (!producer || !tag || fusedRegionTag(producer) != tag)
        return false;
      return fusedOperand->get().hasOneUse() ||
             bodySize(producer) + bodySize(consumer) <= kMaxRecomputingBodyOps;
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, sameRegion);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, sameRegion);
    // The cleanups upstream's linalg-fuse-elementwise-ops applies with them.
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void kiln::populateFusedLowerings(RewritePatternSet &patterns) {
  patterns.add<FusedPattern>(patterns.getContext());
}
