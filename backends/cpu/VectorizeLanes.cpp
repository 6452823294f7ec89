//===- VectorizeLanes.cpp - Short innermost loops as vectors --------------===//
//
// kiln-cpu-vectorize-lanes (CpuPasses.td): a linalg.generic on buffers
// whose innermost loop is parallel and short (4 to 16 iterations, the
// lanes of oneDNN's blocked layouts [N, C/8, H, W, 8] above all), and that
// every operand reads and writes contiguously along its last dim or not at
// all, is tiled by one along every other loop (upstream's tileLinalgOp,
// scf.parallel over its parallel loops) and its tile vectorized
// (linalg::vectorize): one vector of the lanes per position, a broadcast
// for an operand that does not depend on them. The transfers are lowered to
// plain vector loads and stores with upstream's patterns.
//
// Why: such a loop lowers to a short loop that LLVM unrolls completely, and
// neither its loop vectorizer (fewer iterations than its tiny-trip-count
// threshold of 16, and a run-time check that the output does not overlap
// the inputs) nor its SLP vectorizer (the same unknown aliasing between the
// stores and the next loads) vectorizes it: a squeeze-excite block's
// scaling of a [1, 4, 56, 56, 8] activation by a [1, 4, 8] vector ran as
// scalar loads, multiplies and stores, 6x slower than the same scaling of
// the channels-last activation.
//
//===----------------------------------------------------------------------===//

#include "Sigmoid.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUVECTORIZELANES
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The fewest and most iterations of an innermost loop vectorized here:
/// LLVM vectorizes longer ones itself, and a shorter one's vector would be
/// mostly empty.
constexpr int64_t kMinLanes = 4;
constexpr int64_t kMaxLanes = 16;

/// Whether `type`'s last dim has unit stride.
bool lastDimContiguous(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// Whether vectors of `type` load and store as its scalars do: f32, f64
/// and integers of whole bytes. Not i1 (a vector of i1 is bits in memory,
/// a buffer of i1 holds bytes) and not bf16 or f16 (kiln loads those as
/// integers, kiln-cpu-bf16-as-i16, one by one).
bool vectorElement(Type type) {
  if (type.isF32() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() % 8 == 0;
}

/// Whether the math op `op` on vectors lowers to vector code: an LLVM
/// intrinsic (sqrt, fma, ...), or for f32 one of the polynomials of
/// kiln-cpu-math-approximation. The others (f64 erf or tanh, f32 sin or
/// asin, ...) become libm calls, which on vectors upstream unrolls into
/// vector.extract and vector.insert after the vector dialect has been
/// lowered to LLVM (the Gaussian of a kiln.random.normal in f64 failed to
/// translate so).
bool vectorMath(Operation *op) {
  if (isa<math::SqrtOp, math::RsqrtOp, math::AbsFOp, math::FmaOp, math::FloorOp,
          math::CeilOp, math::CopySignOp, math::AbsIOp>(op))
    return true;
  return getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
         isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
             math::Log1pOp, math::Log2Op, math::TanhOp, math::ErfOp,
             math::AtanOp, math::Atan2Op, math::CbrtOp>(op);
}

/// Whether `op` is one this pass vectorizes: on buffers of vectorElement
/// types, static loop ranges, an innermost parallel loop of kMinLanes to
/// kMaxLanes iterations that each operand's indexing map sends to its last
/// dim (of unit stride) or not at all, and a body that linalg::vectorize
/// takes whose math ops are vectorMath and that has no logistic division.
bool hasShortLanes(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t lanes = ranges.back();
  if (lanes < kMinLanes || lanes > kMaxLanes ||
      llvm::any_of(ranges, ShapedType::isDynamic) ||
      op.getIteratorTypesArray().back() != utils::IteratorType::parallel)
    return false;
  unsigned inner = op.getNumLoops() - 1;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !vectorElement(type.getElementType()))
      return false;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    bool uses = map.isFunctionOfDim(inner);
    if (uses && (map.getNumResults() == 0 ||
                 !map.getResults().back().isFunctionOfDim(inner) ||
                 !lastDimContiguous(type)))
      return false;
    // An output holds every lane.
    if (!uses && op.isDpsInit(&operand))
      return false;
  }
  if (op.getBody()
          ->walk([](Operation *inner) {
            // A logistic's division kiln-cpu-math-approximation lets LLVM
            // estimate, which it does on vectors (a few ulps) and not in
            // scalar code: left scalar, a short loop keeps the exact
            // division (ONNX's GRU node tests, hidden size 5, check their
            // gates to 1e-7 absolute where a gate near 1 multiplies values
            // near 1).
            auto division = dyn_cast<arith::DivFOp>(inner);
            bool scalar = (isa<math::MathDialect>(inner->getDialect()) &&
                           !vectorMath(inner)) ||
                          (division && kiln::matchSigmoid(division));
            return scalar ? WalkResult::interrupt() : WalkResult::advance();
          })
          .wasInterrupted())
    return false;
  return succeeded(linalg::vectorizeOpPrecondition(op));
}

struct KilnCpuVectorizeLanesPass
    : kiln::impl::KilnCpuVectorizeLanesBase<KilnCpuVectorizeLanesPass> {
  using KilnCpuVectorizeLanesBase::KilnCpuVectorizeLanesBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (hasShortLanes(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<int64_t> tiles(op.getNumLoops(), 1);
      tiles.back() = 0;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tiles).setLoopType(
          parallel ? linalg::LinalgTilingLoopType::ParallelLoops
                   : linalg::LinalgTilingLoopType::Loops);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled))
        continue;
      rewriter.eraseOp(op);
      // The tile's vectors replace it; where that fails it stays a
      // linalg.generic, lowered as before.
      rewriter.setInsertionPoint(tiled->op);
      (void)linalg::vectorize(rewriter, tiled->op);
    }
    // The transfers of [1, ..., 1, lanes] tiles as loads and stores of one
    // vector (a broadcast where an operand has no lanes), the unit dims and
    // the reductions over them gone.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    vector::MultiDimReductionOp::getCanonicalizationPatterns(patterns,
                                                             &getContext());
    vector::ShapeCastOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::BroadcastOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::TransposeOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::ExtractOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::TransferReadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    memref::SubViewOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
