//===- ControlFlowLowering.cpp - kiln.cond/while/for to scf ---------------===//
//
// kiln's region ops are isolated from above and receive their inputs as
// block arguments; scf's regions see enclosing values directly. Lowering
// therefore inlines each kiln block into the scf region, substituting the
// block arguments with the op's operands (cond) or the scf region's own
// arguments (while, for), and turns the kiln.yield into the scf terminator.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Moves the single block of `from` to the end of `into`'s block, binding
/// its arguments to `arguments`, and returns the now inlined kiln.yield.
static YieldOp inlineKilnRegion(PatternRewriter &rewriter, Region &from,
                                Block *into, ValueRange arguments) {
  Block *source = &from.front();
  auto yield = cast<YieldOp>(source->getTerminator());
  rewriter.inlineBlockBefore(source, into, into->end(), arguments);
  return yield;
}

/// Inlines a kiln region whose yielded values continue as an scf.yield.
static void inlineWithScfYield(PatternRewriter &rewriter, Region &from,
                               Block *into, ValueRange arguments) {
  YieldOp yield = inlineKilnRegion(rewriter, from, into, arguments);
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, yield.getValues());
}

static Value extractPredicate(PatternRewriter &rewriter, Location loc,
                              Value predicate) {
  return rewriter.create<tensor::ExtractOp>(loc, predicate, ValueRange{});
}

struct CondPattern : OpRewritePattern<CondOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CondOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value pred = extractPredicate(rewriter, loc, op.getPred());
    auto ifOp = rewriter.create<scf::IfOp>(loc, op.getResultTypes(), pred,
                                           /*withElseRegion=*/true);
    for (auto [from, to] : {std::pair<Region *, Region *>{&op.getThenRegion(),
                                                          &ifOp.getThenRegion()},
                            {&op.getElseRegion(), &ifOp.getElseRegion()}}) {
      Block *block = &to->front();
      // scf.if builds an empty terminator when there are no results.
      if (!block->empty())
        rewriter.eraseOp(&block->back());
      inlineWithScfYield(rewriter, *from, block, op.getInputs());
    }
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

struct WhilePattern : OpRewritePattern<WhileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WhileOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TypeRange types = op.getInits().getTypes();
    SmallVector<Location> locs(types.size(), loc);
    auto whileOp = rewriter.create<scf::WhileOp>(loc, types, op.getInits());

    Block *before = rewriter.createBlock(&whileOp.getBefore(), {}, types, locs);
    YieldOp condYield = inlineKilnRegion(rewriter, op.getCondRegion(), before,
                                         before->getArguments());
    rewriter.setInsertionPoint(condYield);
    Value keepGoing = extractPredicate(rewriter, condYield.getLoc(),
                                       condYield.getValues()[0]);
    rewriter.replaceOpWithNewOp<scf::ConditionOp>(condYield, keepGoing,
                                                  before->getArguments());

    Block *after = rewriter.createBlock(&whileOp.getAfter(), {}, types, locs);
    inlineWithScfYield(rewriter, op.getBodyRegion(), after,
                       after->getArguments());

    rewriter.replaceOp(op, whileOp.getResults());
    return success();
  }
};

struct ForPattern : OpRewritePattern<ForOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ForOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lower = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value upper = rewriter.create<arith::ConstantIndexOp>(
        loc, static_cast<int64_t>(op.getTripCount()));
    Value step = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    auto forOp =
        rewriter.create<scf::ForOp>(loc, lower, upper, step, op.getInits());
    Block *body = forOp.getBody();
    // The builder adds a yield only when there are no iter_args.
    if (!body->empty())
      rewriter.eraseOp(&body->back());

    rewriter.setInsertionPointToStart(body);
    Value index = rewriter.create<arith::IndexCastOp>(
        loc, rewriter.getI64Type(), forOp.getInductionVar());
    Value indexTensor = rewriter.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({}, rewriter.getI64Type()), index);
    SmallVector<Value> arguments{indexTensor};
    llvm::append_range(arguments, forOp.getRegionIterArgs());
    inlineWithScfYield(rewriter, op.getBodyRegion(), body, arguments);

    rewriter.replaceOp(op, forOp.getResults());
    return success();
  }
};

} // namespace

void kiln::populateControlFlowLowerings(RewritePatternSet &patterns) {
  patterns.add<CondPattern, WhilePattern, ForPattern>(patterns.getContext());
}
