//===- MathApproximation.cpp - Vectorizable f32 transcendentals -----------===//
//
// A call to libm's tanhf or expf inside a loop keeps LLVM's loop vectorizer
// from vectorizing that loop, and the scalar call dominates the loop's time
// (a GELU spends almost all of it in tanhf). Upstream's polynomial
// approximations rewrite the f32 math ops (tanh, exp, expm1, log, log1p,
// log2, erf, atan, atan2, asin, acos, cbrt) into plain arith (fma, bit
// casts, selects), which the loop vectorizer turns into AVX-512 code like
// any other arithmetic. f64 ops are left to libm, and so are sin and cos:
// upstream's versions reduce large arguments poorly, and they are rarely
// what an ML loop spends its time in. asin and acos stay libm calls too:
// LLVM 19's f32 asin polynomial is off by up to 1e-2 (acos is built on the
// same reduction), far from the few ulps the others keep
// (MathEdgeValuesTest checks every op against libm).
//
// Upstream's log approximation clamps its input to the smallest normal f32
// (it reads the exponent field, which subnormals do not use), so every
// subnormal x would give log(FLT_MIN) = -87.34. Before approximating, each
// f32 log is therefore rewritten as
//     s = x < FLT_MIN ? x * 2^24 : x;   r = log(s);
//     log(x) = x < FLT_MIN ? r - 24 ln 2 : r
// which scales subnormals into the normal range; zero, negative values and
// -inf take the same branch and keep their results (-inf, NaN, NaN), and NaN
// compares false and passes through.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUMATHAPPROXIMATION
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// A constant of `type` (f32, or a shaped type of f32) holding `value`.
Value f32Constant(OpBuilder &builder, Location loc, Type type, float value) {
  auto attr = builder.getF32FloatAttr(value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    return builder.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(shaped, attr.getValue()));
  return builder.create<arith::ConstantOp>(loc, attr);
}

/// Rewrites an f32 log so that subnormal inputs are scaled into the normal
/// range first (see the file header); returns the new log op, which the
/// polynomial approximation then replaces.
math::LogOp scaleSubnormalLogInput(math::LogOp log) {
  OpBuilder builder(log);
  Location loc = log.getLoc();
  Value x = log.getOperand();
  Type type = x.getType();
  Value minNormal =
      f32Constant(builder, loc, type, std::numeric_limits<float>::min());
  Value subnormal = builder.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::OLT, x, minNormal);
  Value scaled = builder.create<arith::MulFOp>(
      loc, x, f32Constant(builder, loc, type, 0x1p24f));
  Value input = builder.create<arith::SelectOp>(loc, subnormal, scaled, x);
  auto scaledLog = builder.create<math::LogOp>(loc, input, log.getFastmath());
  Value corrected = builder.create<arith::SubFOp>(
      loc, scaledLog,
      f32Constant(builder, loc, type, 24.0f * 0.693147180559945309f));
  Value result =
      builder.create<arith::SelectOp>(loc, subnormal, corrected, scaledLog);
  log.replaceAllUsesWith(result);
  log.erase();
  return scaledLog;
}

/// x^2 as x * x and x^3 as x * x * x, so that a loop holding them (the
/// tanh approximation of GELU cubes its input) vectorizes instead of
/// calling libm's pow per element. Exact for 2; for 3 two roundings
/// instead of one (at most an ulp apart); signs, zeros, infinities and
/// NaN come out as pow's. Other exponents stay pow (upstream's strength
/// reduction also turns x^0.5 into sqrt, which differs at -0 and -inf).
struct SmallIntegerPower : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    FloatAttr exponent;
    DenseFPElementsAttr splat;
    APFloat value(0.0);
    if (matchPattern(op.getRhs(), m_Constant(&exponent)))
      value = exponent.getValue();
    else if (matchPattern(op.getRhs(), m_Constant(&splat)) && splat.isSplat())
      value = splat.getSplatValue<APFloat>();
    else
      return failure();
    bool square = value.isExactlyValue(2.0), cube = value.isExactlyValue(3.0);
    if (!square && !cube)
      return failure();
    Value x = op.getLhs();
    Value result = rewriter.create<arith::MulFOp>(op.getLoc(), x, x);
    if (cube)
      result = rewriter.create<arith::MulFOp>(op.getLoc(), result, x);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct KilnCpuMathApproximationPass
    : kiln::impl::KilnCpuMathApproximationBase<KilnCpuMathApproximationPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          !isa<math::SinOp, math::CosOp, math::AsinOp, math::AcosOp>(op))
        ops.push_back(op);
    });
    for (Operation *&op : ops)
      if (auto log = dyn_cast<math::LogOp>(op))
        if (getElementTypeOrSelf(log.getType()).isF32())
          op = scaleSubnormalLogInput(log);
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    patterns.add<SmallIntegerPower>(&getContext());
    // Only the ops collected above, and what their rewrites create (log1p
    // becomes log, expm1 exp, ...).
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(ops, std::move(patterns), config);
  }
};
} // namespace
