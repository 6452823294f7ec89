//===- CanonicalizeBuffers.cpp - the canonicalizer, safe on buffers -------===//
//
// MLIR 19's canonicalizer erases a `linalg.generic` on buffers whose body
// is a lone `linalg.yield`, whose maps are identities and whose one input
// is the same buffer as its one output (EraseIdentityLinalgOp), without
// looking at what the body yields. One-shot bufferization writes an
// elementwise kernel in place when its input dies there (`ins(%b)
// outs(%b)`), and folding can leave such a kernel's body yielding a value
// from outside, a constant: `(|x| + 1) - |x|` folds to `1`. The generic
// then fills its buffer, and erasing it leaves the old values (fixed
// upstream after LLVM 19: llvm/llvm-project pull request 130000).
//
// kiln-canonicalize-buffers is the canonicalizer (every loaded dialect's
// and registered op's canonicalization patterns, folding, top-down as
// upstream) plus one pattern of higher benefit: a generic on buffers whose
// body yields only values defined outside it becomes `linalg.fill`s of its
// outputs. The greedy driver tries an op's patterns by benefit, so the
// fill is made before the erasing pattern can match. The backends run it
// wherever they canonicalize after bufferization.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCANONICALIZEBUFFERS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A parallel generic on buffers that writes values computed outside its
/// body to every element of its outputs: one `linalg.fill` per output.
struct FillLikeGenericToFill : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics() ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    // Every output element written exactly once: each output's map is a
    // permutation of the loops.
    for (OpOperand &init : op.getDpsInitsMutable())
      if (!op.getMatchingIndexingMap(&init).isPermutation())
        return failure();
    Block *body = op.getBlock();
    if (!llvm::hasSingleElement(*body))
      return failure();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    // The yield is the body's only op: a value it yields is the body's
    // block argument or comes from outside.
    for (Value value : yield.getValues())
      if (auto argument = dyn_cast<BlockArgument>(value);
          argument && argument.getOwner() == body)
        return failure();
    rewriter.setInsertionPoint(op);
    for (auto [value, init] :
         llvm::zip_equal(yield.getValues(), op.getDpsInits()))
      rewriter.create<linalg::FillOp>(op.getLoc(), value, init);
    rewriter.eraseOp(op);
    return success();
  }
};

struct KilnCanonicalizeBuffersPass
    : kiln::impl::KilnCanonicalizeBuffersBase<KilnCanonicalizeBuffersPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet owning(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(owning);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(owning, context);
    owning.add<FillLikeGenericToFill>(context, /*benefit=*/2);
    patterns = FrozenRewritePatternSet(std::move(owning));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    // Like the canonicalizer, a fixpoint not reached in the iteration
    // limit is no error: the IR is valid after every rewrite.
    (void)applyPatternsAndFoldGreedily(getOperation(), patterns, config);
  }

  FrozenRewritePatternSet patterns;
};
} // namespace
