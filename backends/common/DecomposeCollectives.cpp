//===- DecomposeCollectives.cpp - Collectives in the runtime's flat forms -===//
//
// The runtime's communicator exchanges flat buffers (kiln/CollectiveAbi.h):
// it gathers, scatters and exchanges blocks along the leading dimension
// only, and reduces by sum, max or min. This pass rewrites every collective
// into those forms with kiln ops around it:
//   - all_reduce, all_gather and reduce_scatter become their start form
//     followed at once by kiln.collective_wait, so one lowering handles the
//     synchronous and the asynchronous forms;
//   - kind = mean becomes kind = sum, its result divided by the group size;
//   - all_gather / reduce_scatter along dim d > 0 transpose d to the front
//     and back;
//   - all_to_all with split_dim s and concat_dim c transposes s to the
//     front, exchanges leading blocks, and moves the received block index
//     next to c (a transpose and two reshapes).
// kiln.collective_broadcast and kiln.collective_permute need nothing.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNDECOMPOSECOLLECTIVES
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// The permutation that moves dimension `dim` to the front, keeping the
/// others in order.
static SmallVector<int64_t> frontFirst(int64_t rank, int64_t dim) {
  SmallVector<int64_t> permutation = {dim};
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      permutation.push_back(d);
  return permutation;
}

static SmallVector<int64_t> inverse(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> result(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    result[p] = i;
  return result;
}

static CollectiveWaitOp waitOf(Operation *start) {
  return cast<CollectiveWaitOp>(*start->getResult(0).user_begin());
}

namespace {
/// all_reduce, all_gather, reduce_scatter -> start + wait.
template <typename SyncOp, typename StartOp>
struct SyncToStart : OpRewritePattern<SyncOp> {
  using OpRewritePattern<SyncOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SyncOp op,
                                PatternRewriter &rewriter) const override {
    auto start = rewriter.create<StartOp>(op.getLoc(), op.getResult().getType(),
                                          op->getOperands(), op->getAttrs());
    rewriter.replaceOpWithNewOp<CollectiveWaitOp>(op, start.getResult(),
                                                  op.getOperand());
    return success();
  }
};

/// kind = mean -> kind = sum, the waited result divided by the group size.
template <typename StartOp>
struct MeanToSum : OpRewritePattern<StartOp> {
  using OpRewritePattern<StartOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(StartOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getKind() != CollectiveReduction::Mean)
      return failure();
    CollectiveWaitOp wait = waitOf(op);
    rewriter.modifyOpInPlace(op, [&] { op.setKind(CollectiveReduction::Sum); });
    rewriter.setInsertionPointAfter(wait);
    auto type = cast<RankedTensorType>(wait.getType());
    auto size = rewriter.create<ConstantOp>(
        op.getLoc(),
        DenseElementsAttr::get(
            type, rewriter.getFloatAttr(type.getElementType(),
                                        static_cast<double>(op.getGroupSize()))
                      .getValue()));
    auto mean = rewriter.create<DivOp>(op.getLoc(), wait.getResult(), size);
    rewriter.replaceAllUsesExcept(wait.getResult(), mean.getResult(), mean);
    return success();
  }
};

/// all_gather_start / reduce_scatter_start along dim > 0 -> along dim 0,
/// between transposes.
template <typename StartOp>
struct LeadingDimension : OpRewritePattern<StartOp> {
  using OpRewritePattern<StartOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(StartOp op,
                                PatternRewriter &rewriter) const override {
    int64_t dim = op.getDimension();
    if (dim == 0)
      return failure();
    CollectiveWaitOp wait = waitOf(op);
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getOperand().getType());
    SmallVector<int64_t> toFront = frontFirst(type.getRank(), dim);
    Value front = rewriter.create<TransposeOp>(loc, op.getOperand(), toFront);
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    for (NamedAttribute &attr : attrs)
      if (attr.getName() == op.getDimensionAttrName())
        attr.setValue(rewriter.getI64IntegerAttr(0));
    auto start = rewriter.create<StartOp>(loc, ValueRange{front}, attrs);
    rewriter.setInsertionPoint(wait);
    auto waited = rewriter.create<CollectiveWaitOp>(loc, start.getResult(),
                                                    front);
    Value back =
        rewriter.create<TransposeOp>(loc, waited.getResult(), inverse(toFront));
    rewriter.replaceOp(wait, back);
    rewriter.eraseOp(op);
    return success();
  }
};

/// all_to_all(split s, concat c) -> transpose s to the front, all_to_all
/// (0, 0), then the received block index (the new leading S) moved next to
/// c and merged with it.
struct FlatAllToAll : OpRewritePattern<AllToAllOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllToAllOp op,
                                PatternRewriter &rewriter) const override {
    int64_t split = op.getSplitDim(), concat = op.getConcatDim();
    if (split == 0 && concat == 0)
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getOperand().getType());
    int64_t rank = type.getRank(), groupSize = op.getGroupSize();
    SmallVector<int64_t> toFront = frontFirst(rank, split);
    Value front = rewriter.create<TransposeOp>(loc, op.getOperand(), toFront);
    auto exchanged = rewriter.create<AllToAllOp>(
        loc, front, rewriter.getI64IntegerAttr(0), rewriter.getI64IntegerAttr(0),
        op.getGroupsAttr(), op.getGroupSizeAttr());
    // Axes of `blocks`: 0 = the block index, 1 = split's rows per block,
    // 2.. = the other dimensions of the operand, in order.
    SmallVector<int64_t> blockShape = {groupSize,
                                       type.getDimSize(split) / groupSize};
    SmallVector<int64_t> axisOf(rank);
    axisOf[split] = 1;
    for (int64_t d = 0, next = 2; d < rank; ++d)
      if (d != split) {
        blockShape.push_back(type.getDimSize(d));
        axisOf[d] = next++;
      }
    Value blocks = rewriter.create<ReshapeOp>(
        loc, RankedTensorType::get(blockShape, type.getElementType()),
        exchanged.getResult());
    SmallVector<int64_t> permutation;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == concat)
        permutation.push_back(0);
      permutation.push_back(axisOf[d]);
    }
    Value placed = rewriter.create<TransposeOp>(loc, blocks, permutation);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getResult().getType(),
                                           placed);
    return success();
  }
};

struct KilnDecomposeCollectivesPass
    : kiln::impl::KilnDecomposeCollectivesBase<KilnDecomposeCollectivesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SyncToStart<AllReduceOp, AllReduceStartOp>,
                 SyncToStart<AllGatherOp, AllGatherStartOp>,
                 SyncToStart<ReduceScatterOp, ReduceScatterStartOp>,
                 MeanToSum<AllReduceStartOp>, MeanToSum<ReduceScatterStartOp>,
                 LeadingDimension<AllGatherStartOp>,
                 LeadingDimension<ReduceScatterStartOp>, FlatAllToAll>(
        &getContext());
    // Only the collectives and what replaces them are rewritten; the rest
    // of the function is left as it is.
    SmallVector<Operation *> collectives;
    getOperation().walk([&](Operation *op) {
      if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp,
              AllReduceStartOp, AllGatherStartOp, ReduceScatterStartOp>(op))
        collectives.push_back(op);
    });
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyOpPatternsAndFold(collectives, std::move(patterns),
                                      config)))
      return signalPassFailure();
  }
};
} // namespace
