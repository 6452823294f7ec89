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
#include "kiln/IR/Threefry.h"

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

APInt kiln::lowestIntValue(IntegerType type) {
  return type.isUnsigned() ? APInt::getZero(type.getWidth())
                           : APInt::getSignedMinValue(type.getWidth());
}

Value kiln::createIntMax(OpBuilder &builder, Location loc, Value lhs,
                         Value rhs) {
  if (lhs.getType().isUnsignedInteger())
    return builder.create<arith::MaxUIOp>(loc, lhs, rhs);
  return builder.create<arith::MaxSIOp>(loc, lhs, rhs);
}

arith::CmpIPredicate
kiln::orderPredicate(Type type, arith::CmpIPredicate signedPredicate) {
  if (!type.isUnsignedInteger())
    return signedPredicate;
  switch (signedPredicate) {
  case arith::CmpIPredicate::slt: return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::sle: return arith::CmpIPredicate::ule;
  case arith::CmpIPredicate::sgt: return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::sge: return arith::CmpIPredicate::uge;
  default: return signedPredicate;
  }
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
/// f16 and bf16 elements are computed in f32 and the result rounded back
/// once: f32 carries more than twice their precision plus two bits, so for
/// + - * / and sqrt that single rounding gives what native f16/bf16
/// arithmetic gives, and the other functions round once as the reference
/// evaluator does. It also keeps bf16 arithmetic, which x86 lacks, out of
/// the generated code.
template <typename Op, typename Derived>
struct ElementwisePattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type operandElement =
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
    bool isHalf = operandElement.isF16() || operandElement.isBF16();
    Type computeElement = isHalf ? rewriter.getF32Type() : operandElement;
    Type resultElement = resultType.getElementType();
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (!isHalf)
            return Derived::scalar(b, loc, operandElement, args, op);
          SmallVector<Value> wide;
          for (Value arg : args)
            wide.push_back(b.create<arith::ExtFOp>(loc, computeElement, arg));
          Value value = Derived::scalar(b, loc, computeElement, wide, op);
          if (value.getType() == computeElement &&
              resultElement != computeElement)
            value = b.create<arith::TruncFOp>(loc, resultElement, value);
          return value;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// One arith op per element: `FloatOp` on floats, `IntOp` on signed
/// integers and `UnsignedOp` on ui8 ... ui64.
template <typename Op, typename FloatOp, typename IntOp,
          typename UnsignedOp = IntOp>
struct ArithPattern
    : ElementwisePattern<Op, ArithPattern<Op, FloatOp, IntOp, UnsignedOp>> {
  using ElementwisePattern<
      Op, ArithPattern<Op, FloatOp, IntOp, UnsignedOp>>::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      Op) {
    if (isa<FloatType>(type))
      return b.create<FloatOp>(loc, args);
    if (type.isUnsignedInteger())
      return b.create<UnsignedOp>(loc, args);
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
    // A zero divisor (and, signed, -1, whose quotient of INT_MIN
    // overflows) is replaced by 1 before the division, which then cannot
    // trap, and the defined result selected afterwards: all ones (-1
    // signed, the largest value unsigned) for x / 0, 0 - x for x / -1.
    Value lhs = args[0], rhs = args[1];
    Value one = scalarConstant(b, loc, type, 1);
    Value allOnes = scalarConstant(b, loc, type, -1);
    Value isZero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rhs,
                                           scalarConstant(b, loc, type, 0));
    if (type.isUnsignedInteger()) {
      Value divisor = b.create<arith::SelectOp>(loc, isZero, one, rhs);
      Value quotient = b.create<arith::DivUIOp>(loc, lhs, divisor);
      return b.create<arith::SelectOp>(loc, isZero, allOnes, quotient);
    }
    Value isMinusOne = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                               rhs, allOnes);
    Value divisor = b.create<arith::SelectOp>(
        loc, b.create<arith::OrIOp>(loc, isZero, isMinusOne), one, rhs);
    Value quotient = b.create<arith::DivSIOp>(loc, lhs, divisor);
    Value negated =
        b.create<arith::SubIOp>(loc, scalarConstant(b, loc, type, 0), lhs);
    quotient = b.create<arith::SelectOp>(loc, isMinusOne, negated, quotient);
    return b.create<arith::SelectOp>(loc, isZero, allOnes, quotient);
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
    // Unsigned: only the zero divisor needs care (all ones is no -1 here).
    if (type.isUnsignedInteger()) {
      Value divisor = b.create<arith::SelectOp>(
          loc, isZero, scalarConstant(b, loc, type, 1), rhs);
      Value remainder = b.create<arith::RemUIOp>(loc, lhs, divisor);
      return b.create<arith::SelectOp>(loc, isZero, lhs, remainder);
    }
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
    // Unsigned: 1 off zero, and zero is its own sign.
    if (type.isUnsignedInteger()) {
      Value nonzero =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, zero);
      return b.create<arith::SelectOp>(loc, nonzero,
                                       scalarConstant(b, loc, type, 1), x);
    }
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

/// kiln.shift_left and kiln.shift_right: arith's shifts are poison for
/// amounts of at least the width, so such amounts (compared unsigned, which
/// also catches negative signed ones) select the value every bit shifted out
/// gives: 0, or for an arithmetic shift the sign fill `x >> (width - 1)`.
template <typename Op>
struct ShiftPattern : ElementwisePattern<Op, ShiftPattern<Op>> {
  using ElementwisePattern<Op, ShiftPattern<Op>>::ElementwisePattern;
  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      Op) {
    constexpr bool isLeft = std::is_same_v<Op, ShiftLeftOp>;
    Value x = args[0], amount = args[1];
    unsigned width = type.getIntOrFloatBitWidth();
    Value widthValue = scalarConstant(b, loc, type, width);
    Value tooFar = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge,
                                           amount, widthValue);
    Value safeAmount = b.create<arith::SelectOp>(
        loc, tooFar, scalarConstant(b, loc, type, 0), amount);
    Value shifted, filled;
    if (isLeft) {
      shifted = b.create<arith::ShLIOp>(loc, x, safeAmount);
      filled = scalarConstant(b, loc, type, 0);
    } else if (type.isUnsignedInteger()) {
      shifted = b.create<arith::ShRUIOp>(loc, x, safeAmount);
      filled = scalarConstant(b, loc, type, 0);
    } else {
      shifted = b.create<arith::ShRSIOp>(loc, x, safeAmount);
      filled = b.create<arith::ShRSIOp>(
          loc, x, scalarConstant(b, loc, type, width - 1));
    }
    return b.create<arith::SelectOp>(loc, tooFar, filled, shifted);
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

/// kiln.rng_bits: Threefry-2x32 (kiln/IR/Threefry.h) unrolled into arith
/// ops on 32-bit integers; LLVM turns each shift pair into a rotate.
struct RngBitsPattern : ElementwisePattern<RngBitsOp, RngBitsPattern> {
  using ElementwisePattern::ElementwisePattern;

  struct Arith {
    OpBuilder &b;
    Location loc;
    Type type;
    Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
    Value bitXor(Value x, Value y) {
      return b.create<arith::XOrIOp>(loc, x, y);
    }
    Value rotateLeft(Value x, unsigned n) {
      Value left = b.create<arith::ShLIOp>(loc, x, constant(n));
      Value right = b.create<arith::ShRUIOp>(loc, x, constant(32 - n));
      return b.create<arith::OrIOp>(loc, left, right);
    }
    Value constant(uint32_t value) {
      return b.create<arith::ConstantOp>(
          loc, b.getIntegerAttr(type, APInt(32, value)));
    }
  };

  static Value scalar(OpBuilder &b, Location loc, Type type, ValueRange args,
                      RngBitsOp op) {
    Arith arith{b, loc, type};
    auto [first, second] =
        threefry2x32(arith, args[0], args[1], args[2], args[3]);
    switch (op.getWord()) {
    case RngWord::First: return first;
    case RngWord::Second: return second;
    case RngWord::Xor: return arith.bitXor(first, second);
    }
    llvm_unreachable("unknown kiln.rng_bits word");
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
    // Unsigned values are their own absolute value.
    if (type.isUnsignedInteger())
      return args[0];
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
    return createIntMax(b, loc, args[0], zero);
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

/// i1 and ui8 ... ui64 compare as unsigned (false < true); the signless
/// integers are signed.
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
        loc,
        integerPredicate(direction,
                         type.isInteger(1) || type.isUnsignedInteger()),
        args[0], args[1]);
  }
};

/// `value` (f64) narrowed to f32 rounding to odd: truncated toward zero,
/// with the last bit set when that was inexact. Rounding that to f16 or
/// bf16 (to nearest even) then gives the correctly rounded f64 value, which
/// rounding to nearest twice would not in halfway cases: f32 keeps more
/// than two bits beyond either format's precision.
static Value roundToOddF32(OpBuilder &b, Location loc, Value value) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value nearest = b.create<arith::TruncFOp>(loc, f32, value);
  Value back = b.create<arith::ExtFOp>(loc, value.getType(), nearest);
  // Unordered: NaN keeps `nearest`, whose bits stay a NaN either way.
  Value inexact =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, back, value);
  // `nearest` went away from zero when its magnitude exceeds the value's;
  // the truncated value is then the next f32 toward zero (one less in the
  // magnitude bits, which also turns an overflowed infinity into FLT_MAX).
  Value awayFromZero = b.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::OGT, b.create<math::AbsFOp>(loc, back),
      b.create<math::AbsFOp>(loc, value));
  Value bits = b.create<arith::BitcastOp>(loc, i32, nearest);
  Value one = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(1));
  Value truncated = b.create<arith::SelectOp>(
      loc, awayFromZero, b.create<arith::SubIOp>(loc, bits, one), bits);
  Value odd = b.create<arith::OrIOp>(loc, truncated, one);
  Value result = b.create<arith::SelectOp>(loc, inexact, odd, bits);
  return b.create<arith::BitcastOp>(loc, f32, result);
}

} // namespace

Value kiln::castScalar(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  // f16 and bf16 go through f32, which holds every value of both exactly:
  // extending first is exact, and narrowing last rounds once (see
  // narrowToHalf).
  if (from.isF16() || from.isBF16()) {
    Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), value);
    return castScalar(b, loc, wide, to);
  }
  if (to.isF16() || to.isBF16()) {
    if (from.isF32())
      return b.create<arith::TruncFOp>(loc, to, value);
    // Integers of up to 32 bits convert to f64 exactly. A 64-bit one may
    // round there first; for f16 that cannot matter (from 2^24 on, both
    // roundings give infinity), for bf16 a halfway case can round twice.
    Value wide = castScalar(b, loc, value, b.getF64Type());
    return b.create<arith::TruncFOp>(loc, to, roundToOddF32(b, loc, wide));
  }
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
    // Saturate as kiln.cast defines (fptosi/fptoui alone are poison out of
    // range): NaN -> 0, >= the upper bound -> max, < the lower bound -> min.
    // The bounds are 2^(w-1) and -2^(w-1) for signed types, 2^w and 0 for
    // unsigned ones (where (-1, 0) would truncate to 0 anyway): powers of
    // two or zero, so comparing against them is exact.
    unsigned width = to.getIntOrFloatBitWidth();
    bool toUnsigned = to.isUnsignedInteger();
    double upper = std::ldexp(1.0, toUnsigned ? width : width - 1);
    double lower = toUnsigned ? 0.0 : -upper;
    Value converted =
        toUnsigned ? b.create<arith::FPToUIOp>(loc, to, value).getResult()
                   : b.create<arith::FPToSIOp>(loc, to, value).getResult();
    Value tooBig = b.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OGE, value,
        scalarConstant(b, loc, from, upper));
    Value tooSmall = b.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OLT, value,
        scalarConstant(b, loc, from, lower));
    Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO,
                                          value, value);
    auto intConstant = [&](const APInt &v) -> Value {
      return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(to, v));
    };
    APInt highest = toUnsigned ? APInt::getMaxValue(width)
                               : APInt::getSignedMaxValue(width);
    converted = b.create<arith::SelectOp>(loc, tooBig, intConstant(highest),
                                          converted);
    converted = b.create<arith::SelectOp>(
        loc, tooSmall, intConstant(lowestIntValue(cast<IntegerType>(to))),
        converted);
    return b.create<arith::SelectOp>(loc, isNan, intConstant(APInt(width, 0)),
                                     converted);
  }
  bool fromUnsigned = from.isInteger(1) || from.isUnsignedInteger();
  if (toFloat) {
    if (fromUnsigned)
      return b.create<arith::UIToFPOp>(loc, to, value);
    return b.create<arith::SIToFPOp>(loc, to, value);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth == toWidth)
    return b.create<arith::BitcastOp>(loc, to, value);
  if (fromWidth < toWidth) {
    if (fromUnsigned)
      return b.create<arith::ExtUIOp>(loc, to, value);
    return b.create<arith::ExtSIOp>(loc, to, value);
  }
  return b.create<arith::TruncIOp>(loc, to, value);
}

namespace {

static Value bitcastScalar(OpBuilder &b, Location loc, Value value,
                           Type to) {
  return b.create<arith::BitcastOp>(loc, to, value);
}

/// kiln.cast and kiln.bitcast: each element converted to the result's
/// element type by `convert`.
template <typename Op, Value (*convert)(OpBuilder &, Location, Value, Type)>
struct ConversionPattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Type to = op.getType().getElementType();
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), op.getType(),
                             op.getOperand(),
                             [&](OpBuilder &b, Location loc, ValueRange args) {
                               return convert(b, loc, args[0], to);
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
               ArithPattern<MaxOp, arith::MaximumFOp, arith::MaxSIOp,
                            arith::MaxUIOp>,
               ArithPattern<MinOp, arith::MinimumFOp, arith::MinSIOp,
                            arith::MinUIOp>,
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
               BitwisePattern<XorOp, arith::XOrIOp>,
               ShiftPattern<ShiftLeftOp>, ShiftPattern<ShiftRightOp>,
               RngBitsPattern, NegPattern, AbsPattern,
               ReluPattern, RsqrtPattern, SigmoidPattern, ComparePattern,
               ConversionPattern<CastOp, castScalar>,
               ConversionPattern<BitcastOp, bitcastScalar>, SelectPattern>(
      patterns.getContext());
}
