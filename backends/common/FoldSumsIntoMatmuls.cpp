//===- FoldSumsIntoMatmuls.cpp - products that accumulate in place --------===//
//
// A gradient summed over the steps of a loop (dW = dW + X_t^T * dY_t in a
// recurrence's backward pass), a residual added to a projection, a sum of
// two products: each is an elementwise sum of a tensor and a matrix
// product. Lowered as written, the product zero-fills a buffer of its own,
// writes into it, and a separate pass reads both tensors and writes a
// third. linalg.matmul already means C += A * B, and the GEMM libraries the
// backends call accumulate into C in place (sgemm's beta = 1), so the sum
// needs neither the zero fill nor the extra pass.
//
// The pass runs on tensors, right before bufferization. For every
// elementwise linalg.generic that yields the sum (arith.addf) of its two
// inputs, both read with identity maps, where one input is the result of a
// linalg.matmul or batch_matmul (its init a zero linalg.fill, the sum its
// only use, its result of the sum's type), or that result expanded by a
// tensor.expand_shape that only the sum reads, and the other a tensor X,
// the sum becomes that product with X (collapsed back to the product's
// shape) as its init. Bufferization then writes the
// product into X's buffer where X is not read again (a loop-carried
// accumulator is updated in place), or into a copy of X.
//
// Floating-point sums are reassociated: a library that splits K into
// blocks adds each block's partial product into X in turn, where the sum
// as written added X to the whole product once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFOLDSUMSINTOMATMULS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// Whether `op` is an elementwise sum of its two inputs: identity maps, one
/// init it does not read, and a body that yields arith.addf of the two
/// input arguments.
static bool isSumOfInputs(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity())
      return false;
  Block *body = op.getBlock();
  if (body->getOperations().size() != 2)
    return false;
  auto add = dyn_cast<arith::AddFOp>(body->front());
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!add || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != add.getResult())
    return false;
  Value lhs = body->getArgument(0), rhs = body->getArgument(1);
  return (add.getLhs() == lhs && add.getRhs() == rhs) ||
         (add.getLhs() == rhs && add.getRhs() == lhs);
}

/// A product the sum can accumulate into: a linalg.matmul or batch_matmul
/// whose init is a fill with zero and whose result only the sum reads,
/// directly or through a tensor.expand_shape that only the sum reads (a
/// recurrence's step product [B, 4H] added to its slice [1, B, 4H] of
/// the input projections of all steps).
struct FoldableProduct {
  linalg::LinalgOp product;
  tensor::ExpandShapeOp expand; // null where the sum reads the product
};

static std::optional<FoldableProduct> foldableProduct(Value value,
                                                      Type sumType) {
  if (value.getType() != sumType)
    return std::nullopt;
  auto expand = value.getDefiningOp<tensor::ExpandShapeOp>();
  if (expand) {
    if (!expand->hasOneUse())
      return std::nullopt;
    value = expand.getSrc();
  }
  Operation *def = value.getDefiningOp();
  if (!def || !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(def) ||
      !def->hasOneUse())
    return std::nullopt;
  auto product = cast<linalg::LinalgOp>(def);
  auto fill =
      product.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getDpsInputOperand(0)->get(),
                             m_AnyZeroFloat()))
    return std::nullopt;
  return FoldableProduct{product, expand};
}

namespace {
/// X + A * B (or A * B + X) as the product A * B accumulated into X; X +
/// expand(A * B) as expand(A * B accumulated into collapse(X)).
struct SumIntoProduct : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp sum,
                                PatternRewriter &rewriter) const override {
    if (!isSumOfInputs(sum))
      return failure();
    Type type = sum->getResult(0).getType();
    for (unsigned i = 0; i < 2; ++i) {
      std::optional<FoldableProduct> found =
          foldableProduct(sum.getDpsInputOperand(i)->get(), type);
      if (!found)
        continue;
      linalg::LinalgOp product = found->product;
      Location loc = product.getLoc();
      Value addend = sum.getDpsInputOperand(1 - i)->get();
      Type productType = product->getResult(0).getType();
      if (found->expand)
        addend = rewriter.create<tensor::CollapseShapeOp>(
            loc, productType, addend, found->expand.getReassociationIndices());
      SmallVector<Value> inputs{product.getDpsInputOperand(0)->get(),
                                product.getDpsInputOperand(1)->get()};
      Operation *accumulated;
      if (isa<linalg::MatmulOp>(*product))
        accumulated = rewriter.create<linalg::MatmulOp>(
            loc, TypeRange{productType}, inputs, ValueRange{addend});
      else
        accumulated = rewriter.create<linalg::BatchMatmulOp>(
            loc, TypeRange{productType}, inputs, ValueRange{addend});
      Value result = accumulated->getResult(0);
      tensor::ExpandShapeOp expand = found->expand;
      if (expand)
        result = rewriter.create<tensor::ExpandShapeOp>(
            expand.getLoc(), type, result, expand.getReassociation(),
            expand.getOutputShape(), expand.getStaticOutputShapeAttr());
      rewriter.replaceOp(sum, result);
      if (expand)
        rewriter.eraseOp(expand);
      rewriter.eraseOp(product);
      return success();
    }
    return failure();
  }
};

struct KilnFoldSumsIntoMatmulsPass
    : kiln::impl::KilnFoldSumsIntoMatmulsBase<KilnFoldSumsIntoMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SumIntoProduct>(&getContext());
    // The zero fills left without a reader go with the dead code the
    // driver removes.
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
