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
// The logistic function, 1 / (1 + exp(-x)) as kiln lowers kiln.sigmoid
// (the SiLU of EfficientNet, the gates of recurrent cells and
// squeeze-excitation blocks), is rewritten as a whole before that: its
// input clamped so that the power of two is always a normal number, the
// reduction and the power of two taken from one fused multiply-add, and
// the division as a reciprocal estimate with a Newton step (expandSigmoid).
// Through upstream's exp, which also guards against overflow, and a true
// divide it cost about twice as many cycles.
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

#include "Sigmoid.h"

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

arith::NegFOp mlir::kiln::matchSigmoid(arith::DivFOp division) {
  if (!getElementTypeOrSelf(division.getType()).isF32() ||
      !matchPattern(division.getLhs(), m_OneFloat()))
    return nullptr;
  auto sum = division.getRhs().getDefiningOp<arith::AddFOp>();
  if (!sum || !sum->hasOneUse())
    return nullptr;
  Value other = sum.getRhs();
  auto exp = sum.getLhs().getDefiningOp<math::ExpOp>();
  if (!exp) {
    exp = sum.getRhs().getDefiningOp<math::ExpOp>();
    other = sum.getLhs();
  }
  if (!exp || !exp->hasOneUse() || !matchPattern(other, m_OneFloat()))
    return nullptr;
  auto negation = exp.getOperand().getDefiningOp<arith::NegFOp>();
  if (!negation || !negation->hasOneUse())
    return nullptr;
  return negation;
}

namespace {
/// A constant of `type` (a scalar type, or a shaped type of it) holding
/// `scalar` in every element.
Value splatConstant(OpBuilder &builder, Location loc, Type type,
                    TypedAttr scalar) {
  Attribute element = scalar;
  if (auto shaped = dyn_cast<ShapedType>(type))
    return builder.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(shaped, element));
  return builder.create<arith::ConstantOp>(loc, scalar);
}

/// A constant of `type` (f32, or a shaped type of f32) holding `value`.
Value f32Constant(OpBuilder &builder, Location loc, Type type, float value) {
  return splatConstant(builder, loc, type, builder.getF32FloatAttr(value));
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

/// Rewrites a matched f32 sigmoid (see matchSigmoid) as one reduction and
/// polynomial built for it, 19 vector instructions on AVX-512 against 23
/// and a divide through upstream's exp (the divide alone takes about ten
/// cycles per 16 lanes). With e = exp(-x):
///  - x is clamped to [-88, 87.33] (NaN passes through), so that
///    k = round(-x log2 e) lies in [-126, 127] and 2^k is a normal number
///    whose exponent field is k + 127. The clamp only changes results that
///    are 1 or below 6e-39 either way.
///  - Adding 1.5 * 2^23 + 127 to -x log2 e rounds it to an integer in the
///    float's low mantissa bits (one fma); subtracting the constant again
///    gives k exactly, and the sum's bits shifted left by 23 are 2^k.
///  - r = x + k ln 2 in two steps (ln 2 split into a short high part and
///    the rest, so k ln2_hi is exact), and e = 2^k exp(-r), with exp(-r)
///    Cephes' expf polynomial (degree 7, within an ulp on
///    |r| <= ln2 / 2) in -r.
///  - 1 / (1 + e) as a division marked as one whose reciprocal may be
///    estimated and whose operands are finite (1 + e <= 1.7e38): LLVM
///    emits a reciprocal estimate and a Newton step on AVX-512.
/// Within 4 ulps of the correctly rounded result (3.5 on a dense sweep of
/// [-100, 100]); MathEdgeValuesTest checks the edges.
void expandSigmoid(arith::DivFOp division, arith::NegFOp negation) {
  OpBuilder builder(division);
  Location loc = division.getLoc();
  Type type = division.getType();
  Value x = negation.getOperand();
  auto constant = [&](float value) {
    return f32Constant(builder, loc, type, value);
  };
  auto clamp = [&](Value value, float bound, arith::CmpFPredicate keep) {
    Value keeps =
        builder.create<arith::CmpFOp>(loc, keep, value, constant(bound));
    return builder.create<arith::SelectOp>(loc, keeps, value, constant(bound))
        .getResult();
  };
  auto fma = [&](Value a, Value b, Value c) {
    return builder.create<math::FmaOp>(loc, a, b, c).getResult();
  };
  // UGE and ULE hold for NaN, which therefore stays.
  Value clamped = clamp(clamp(x, -88.0f, arith::CmpFPredicate::UGE), 87.33f,
                        arith::CmpFPredicate::ULE);
  const float magic = 0x1.8p23f + 127.0f;
  Value shifted = fma(clamped, constant(-0x1.715476p0f), constant(magic));
  Value k = builder.create<arith::SubFOp>(loc, shifted, constant(magic));
  Value r = fma(k, constant(0.693359375f), clamped);
  r = fma(k, constant(-2.12194440e-4f), r);
  // exp(-r) = 1 - r + r^2/2 - ..., Cephes' coefficients with the odd
  // powers' signs flipped, highest first.
  const float coefficients[] = {-1.9875691500e-4f,
                                1.3981999507e-3f,
                                -8.3334519073e-3f,
                                4.1665795894e-2f,
                                -1.6666665459e-1f,
                                5.0000001201e-1f,
                                -1.0f,
                                1.0f};
  Value poly = constant(coefficients[0]);
  for (float c : ArrayRef(coefficients).drop_front())
    poly = fma(poly, r, constant(c));
  Type bitsType = builder.getI32Type();
  if (auto shaped = dyn_cast<ShapedType>(type))
    bitsType = shaped.clone(bitsType);
  Value bits = builder.create<arith::BitcastOp>(loc, bitsType, shifted);
  Value exponent = builder.create<arith::ShLIOp>(
      loc, bits,
      splatConstant(builder, loc, bitsType, builder.getI32IntegerAttr(23)));
  Value scale = builder.create<arith::BitcastOp>(loc, type, exponent);
  Value e = builder.create<arith::MulFOp>(loc, poly, scale);
  Value one = constant(1.0f);
  Value denominator = builder.create<arith::AddFOp>(loc, e, one);
  auto flags = arith::FastMathFlagsAttr::get(
      builder.getContext(), arith::FastMathFlags::arcp |
                                arith::FastMathFlags::ninf |
                                arith::FastMathFlags::contract);
  Value result = builder.create<arith::DivFOp>(loc, one, denominator, flags);
  Operation *sum = division.getRhs().getDefiningOp();
  Operation *exp = negation->use_begin()->getOwner();
  division.replaceAllUsesWith(result);
  division.erase();
  sum->erase();
  exp->erase();
  negation.erase();
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
    // Sigmoids first, as wholes: their exp is rewritten with them.
    SmallVector<std::pair<arith::DivFOp, arith::NegFOp>> sigmoids;
    getOperation()->walk([&](arith::DivFOp division) {
      if (arith::NegFOp negation = kiln::matchSigmoid(division))
        sigmoids.emplace_back(division, negation);
    });
    for (auto [division, negation] : sigmoids)
      expandSigmoid(division, negation);
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
