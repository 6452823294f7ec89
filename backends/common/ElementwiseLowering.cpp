//===- ElementwiseLowering.cpp - kiln elementwise ops to linalg -----------===//
//
// Every elementwise kiln op becomes one `linalg.generic` with identity maps
// whose body is the scalar arith/math computation. Keeping one generic per
// op (instead of hand-written loops) lets upstream elementwise fusion,
// tiling and vectorization work on the result.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

Value kiln::scalarConstant(OpBuilder &builder, Location loc, Type type,
                           double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return builder.create<arith::ConstantOp>(
        loc, builder.getFloatAttr(floatType, value));
  return builder.create<arith::ConstantOp>(
      loc, builder.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value kiln::buildParallelGeneric(
    OpBuilder &builder, Location loc, RankedTensorType resultType,
    ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = resultType.getRank();
  Value init = builder.create<tensor::EmptyOp>(loc, resultType.getShape(),
                                               resultType.getElementType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = builder.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value result = body(b, l, args.drop_back());
        b.create<linalg::YieldOp>(l, result);
      });
  return generic.getResult(0);
}

Value kiln::buildElementwise(
    OpBuilder &builder, Location loc, RankedTensorType resultType,
    ValueRange inputs,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<AffineMap> maps(inputs.size(), builder.getMultiDimIdentityMap(
                                                 resultType.getRank()));
  return buildParallelGeneric(builder, loc, resultType, inputs, maps, body);
}

namespace {

using ScalarFn = llvm::function_ref<Value(OpBuilder &, Location, Type,
                                          ValueRange)>;

/// Lowers an elementwise op whose scalar form is given by `Derived::scalar`.
template <typename Op, typename Derived>
struct ElementwisePattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type operandElement =
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
    if (operandElement.isF16() || operandElement.isBF16())
      return rewriter.notifyMatchFailure(op, "f16/bf16 have no CPU lowering");
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return Derived::scalar(b, loc, operandElement, args, op);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename Op, typename FloatOp, typename IntOp>
struct ArithPattern
    : ElementwisePattern<Op, ArithPattern<Op, FloatOp, IntOp>> {
  using ElementwisePattern<Op,
                           ArithPattern<Op, FloatOp, IntOp>>::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      Op) {
    if (isa<FloatType>(type))
      return b.create<FloatOp>(loc, args);
    return b.create<IntOp>(loc, args);
  }
};

template <typename Op, typename MathOp>
struct FloatMathPattern : ElementwisePattern<Op, FloatMathPattern<Op, MathOp>> {
  using ElementwisePattern<Op, FloatMathPattern<Op, MathOp>>::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type, ValueRange args, Op) {
    return b.create<MathOp>(loc, args);
  }
};

/// Integer division wraps the one overflowing quotient, INT_MIN / -1, to
/// INT_MIN as kiln.div defines; arith.divsi leaves it undefined, and x86's
/// idiv traps on it. A divisor of -1 is replaced by 1 and the quotient by
/// `0 - lhs`, so divsi never sees -1.
struct DivPattern : ElementwisePattern<DivOp, DivPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      DivOp) {
    if (isa<FloatType>(type))
      return b.create<arith::DivFOp>(loc, args);
    Value lhs = args[0], rhs = args[1];
    Value isMinusOne = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, rhs, scalarConstant(b, loc, type, -1));
    Value divisor = b.create<arith::SelectOp>(
        loc, isMinusOne, scalarConstant(b, loc, type, 1), rhs);
    Value quotient = b.create<arith::DivSIOp>(loc, lhs, divisor);
    Value negated =
        b.create<arith::SubIOp>(loc, scalarConstant(b, loc, type, 0), lhs);
    return b.create<arith::SelectOp>(loc, isMinusOne, negated, quotient);
  }
};

/// Integer remainder is C's `%` except where `%` is undefined or traps:
/// a zero divisor gives the dividend and -1 gives 0 (KilnOps.td). Both
/// divisors are replaced by 1 before arith.remsi, which then gives 0, and
/// the zero case selects the dividend afterwards. Floats are fmod
/// (arith.remf, LLVM's frem).
struct RemPattern : ElementwisePattern<RemOp, RemPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      RemOp) {
    if (isa<FloatType>(type))
      return b.create<arith::RemFOp>(loc, args);
    Value lhs = args[0], rhs = args[1];
    Value isZero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rhs,
                                           scalarConstant(b, loc, type, 0));
    Value isMinusOne = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, rhs, scalarConstant(b, loc, type, -1));
    Value unsafe = b.create<arith::OrIOp>(loc, isZero, isMinusOne);
    Value divisor = b.create<arith::SelectOp>(
        loc, unsafe, scalarConstant(b, loc, type, 1), rhs);
    Value remainder = b.create<arith::RemSIOp>(loc, lhs, divisor);
    return b.create<arith::SelectOp>(loc, isZero, lhs, remainder);
  }
};

/// x > 0 ? 1 : (x < 0 ? -1 : x): zeros and NaN (both comparisons false)
/// are their own sign.
struct SignPattern : ElementwisePattern<SignOp, SignPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      SignOp) {
    Value x = args[0], zero = scalarConstant(b, loc, type, 0);
    Value positive, negative;
    if (isa<FloatType>(type)) {
      positive =
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, zero);
      negative =
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, zero);
    } else {
      positive =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, x, zero);
      negative =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, zero);
    }
    Value inner = b.create<arith::SelectOp>(
        loc, negative, scalarConstant(b, loc, type, -1), x);
    return b.create<arith::SelectOp>(loc, positive,
                                     scalarConstant(b, loc, type, 1), inner);
  }
};

/// Bitwise complement: x xor all-ones (on i1, logical not).
struct NotPattern : ElementwisePattern<NotOp, NotPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      NotOp) {
    Value ones = b.create<arith::ConstantOp>(
        loc, b.getIntegerAttr(type,
                              APInt::getAllOnes(type.getIntOrFloatBitWidth())));
    return b.create<arith::XOrIOp>(loc, args[0], ones);
  }
};

/// An integer-only binary op (and, or, xor) as one arith op.
template <typename Op, typename IntOp>
struct BitwisePattern : ElementwisePattern<Op, BitwisePattern<Op, IntOp>> {
  using ElementwisePattern<Op, BitwisePattern<Op, IntOp>>::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type, ValueRange args, Op) {
    return b.create<IntOp>(loc, args);
  }
};

struct NegPattern : ElementwisePattern<NegOp, NegPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      NegOp) {
    if (isa<FloatType>(type))
      return b.create<arith::NegFOp>(loc, args[0]);
    return b.create<arith::SubIOp>(loc, scalarConstant(b, loc, type, 0),
                                   args[0]);
  }
};

struct AbsPattern : ElementwisePattern<AbsOp, AbsPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      AbsOp) {
    if (isa<FloatType>(type))
      return b.create<math::AbsFOp>(loc, args[0]);
    return b.create<math::AbsIOp>(loc, args[0]);
  }
};

struct ReluPattern : ElementwisePattern<ReluOp, ReluPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      ReluOp) {
    Value zero = scalarConstant(b, loc, type, 0);
    if (isa<FloatType>(type))
      return b.create<arith::MaximumFOp>(loc, args[0], zero);
    return b.create<arith::MaxSIOp>(loc, args[0], zero);
  }
};

struct RsqrtPattern : ElementwisePattern<RsqrtOp, RsqrtPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      RsqrtOp) {
    Value root = b.create<math::SqrtOp>(loc, args[0]);
    return b.create<arith::DivFOp>(loc, scalarConstant(b, loc, type, 1), root);
  }
};

struct SigmoidPattern : ElementwisePattern<SigmoidOp, SigmoidPattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      SigmoidOp) {
    Value one = scalarConstant(b, loc, type, 1);
    Value negated = b.create<arith::NegFOp>(loc, args[0]);
    Value denominator =
        b.create<arith::AddFOp>(loc, one, b.create<math::ExpOp>(loc, negated));
    return b.create<arith::DivFOp>(loc, one, denominator);
  }
};

/// Ordered predicates except `ne`, which is true when either is NaN,
/// matching IEEE and numpy.
static arith::CmpFPredicate floatPredicate(CompareDirection direction) {
  switch (direction) {
  case CompareDirection::eq: return arith::CmpFPredicate::OEQ;
  case CompareDirection::ne: return arith::CmpFPredicate::UNE;
  case CompareDirection::lt: return arith::CmpFPredicate::OLT;
  case CompareDirection::le: return arith::CmpFPredicate::OLE;
  case CompareDirection::gt: return arith::CmpFPredicate::OGT;
  case CompareDirection::ge: return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown compare direction");
}

/// i1 compares as unsigned (false < true); wider integers are signed.
static arith::CmpIPredicate integerPredicate(CompareDirection direction,
                                            bool isBool) {
  switch (direction) {
  case CompareDirection::eq: return arith::CmpIPredicate::eq;
  case CompareDirection::ne: return arith::CmpIPredicate::ne;
  case CompareDirection::lt:
    return isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
  case CompareDirection::le:
    return isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
  case CompareDirection::gt:
    return isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
  case CompareDirection::ge:
    return isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
  }
  llvm_unreachable("unknown compare direction");
}

struct ComparePattern : ElementwisePattern<CompareOp, ComparePattern> {
  using ElementwisePattern::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      CompareOp op) {
    CompareDirection direction = op.getDirection();
    if (isa<FloatType>(type))
      return b.create<arith::CmpFOp>(loc, floatPredicate(direction), args[0],
                                     args[1]);
    return b.create<arith::CmpIOp>(
        loc, integerPredicate(direction, type.isInteger(1)), args[0], args[1]);
  }
};

/// Converts one scalar between any two of f32, f64, i1, i32, i64.
static Value castScalar(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, loc, from, 0);
    if (isa<FloatType>(from))
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, value,
                                     zero);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, value, zero);
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (fromFloat && toFloat) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return b.create<arith::ExtFOp>(loc, to, value);
    return b.create<arith::TruncFOp>(loc, to, value);
  }
  if (fromFloat) {
    // Saturate as kiln.cast defines (fptosi alone is poison out of range):
    // NaN -> 0, >= 2^(w-1) -> max, < -2^(w-1) -> min. The bounds are powers
    // of two, so comparing against them is exact.
    unsigned width = to.getIntOrFloatBitWidth();
    double bound = std::ldexp(1.0, width - 1);
    Value converted = b.create<arith::FPToSIOp>(loc, to, value);
    Value tooBig = b.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OGE, value,
        scalarConstant(b, loc, from, bound));
    Value tooSmall = b.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OLT, value,
        scalarConstant(b, loc, from, -bound));
    Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO,
                                          value, value);
    auto intConstant = [&](const APInt &v) -> Value {
      return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(to, v));
    };
    converted = b.create<arith::SelectOp>(
        loc, tooBig, intConstant(APInt::getSignedMaxValue(width)), converted);
    converted = b.create<arith::SelectOp>(
        loc, tooSmall, intConstant(APInt::getSignedMinValue(width)),
        converted);
    return b.create<arith::SelectOp>(loc, isNan, intConstant(APInt(width, 0)),
                                     converted);
  }
  if (toFloat) {
    if (from.isInteger(1))
      return b.create<arith::UIToFPOp>(loc, to, value);
    return b.create<arith::SIToFPOp>(loc, to, value);
  }
  if (from.isInteger(1))
    return b.create<arith::ExtUIOp>(loc, to, value);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return b.create<arith::ExtSIOp>(loc, to, value);
  return b.create<arith::TruncIOp>(loc, to, value);
}

struct CastPattern : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    Type from = op.getOperand().getType().getElementType();
    Type to = op.getType().getElementType();
    for (Type t : {from, to})
      if (t.isF16() || t.isBF16())
        return rewriter.notifyMatchFailure(op, "f16/bf16 have no CPU lowering");
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), op.getType(),
                             op.getOperand(),
                             [&](OpBuilder &b, Location loc, ValueRange args) {
                               return castScalar(b, loc, args[0], to);
                             }));
    return success();
  }
};

struct SelectPattern : OpRewritePattern<SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SelectOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value pred = op.getPred();
    // A rank-0 predicate picks a whole tensor: read it once.
    if (op.getPred().getType().getRank() == 0 && type.getRank() != 0) {
      Value scalar = rewriter.create<tensor::ExtractOp>(loc, pred);
      rewriter.replaceOpWithNewOp<arith::SelectOp>(op, scalar, op.getOnTrue(),
                                                   op.getOnFalse());
      return success();
    }
    rewriter.replaceOp(
        op, buildElementwise(rewriter, loc, type,
                             {pred, op.getOnTrue(), op.getOnFalse()},
                             [](OpBuilder &b, Location l, ValueRange args) {
                               return b.create<arith::SelectOp>(
                                   l, args[0], args[1], args[2]);
                             }));
    return success();
  }
};

} // namespace

void kiln::populateElementwiseLowerings(RewritePatternSet &patterns) {
  patterns.add<ArithPattern<AddOp, arith::AddFOp, arith::AddIOp>,
               ArithPattern<SubOp, arith::SubFOp, arith::SubIOp>,
               ArithPattern<MulOp, arith::MulFOp, arith::MulIOp>,
               DivPattern,
               ArithPattern<MaxOp, arith::MaximumFOp, arith::MaxSIOp>,
               ArithPattern<MinOp, arith::MinimumFOp, arith::MinSIOp>,
               FloatMathPattern<PowOp, math::PowFOp>,
               FloatMathPattern<ExpOp, math::ExpOp>,
               FloatMathPattern<LogOp, math::LogOp>,
               FloatMathPattern<SqrtOp, math::SqrtOp>,
               FloatMathPattern<TanhOp, math::TanhOp>,
               FloatMathPattern<SinOp, math::SinOp>,
               FloatMathPattern<CosOp, math::CosOp>,
               FloatMathPattern<ErfOp, math::ErfOp>,
               FloatMathPattern<FloorOp, math::FloorOp>,
               FloatMathPattern<CeilOp, math::CeilOp>,
               FloatMathPattern<RoundOp, math::RoundEvenOp>,
               FloatMathPattern<TanOp, math::TanOp>,
               FloatMathPattern<AsinOp, math::AsinOp>,
               FloatMathPattern<AcosOp, math::AcosOp>,
               FloatMathPattern<AtanOp, math::AtanOp>,
               FloatMathPattern<SinhOp, math::SinhOp>,
               FloatMathPattern<CoshOp, math::CoshOp>,
               FloatMathPattern<AsinhOp, math::AsinhOp>,
               FloatMathPattern<AcoshOp, math::AcoshOp>,
               FloatMathPattern<AtanhOp, math::AtanhOp>, SignPattern,
               RemPattern, NotPattern, BitwisePattern<AndOp, arith::AndIOp>,
               BitwisePattern<OrOp, arith::OrIOp>,
               BitwisePattern<XorOp, arith::XOrIOp>, NegPattern, AbsPattern,
               ReluPattern, RsqrtPattern, SigmoidPattern, ComparePattern,
               CastPattern, SelectPattern>(patterns.getContext());
}
