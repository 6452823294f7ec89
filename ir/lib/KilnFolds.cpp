//===- KilnFolds.cpp - Folders for kiln dialect operations ----------------===//
//
// Constant folding and algebraic simplification, run by the canonicalizer.
//
// Three rules hold for every fold here:
//  * It keeps the result type exactly, so no user ever sees a type change.
//  * It never changes what the program computes: each op's description in
//    KilnOps.td defines what that is, edge cases included (integer division
//    wraps INT_MIN / -1 to INT_MIN; float-to-integer casts saturate and map
//    NaN to 0). Float identities are only the ones that are exact under
//    IEEE 754 (x * 1, x / 1, x + -0.0, x - +0.0; not x + +0.0, which turns
//    -0.0 into +0.0, and not x * 0, which is wrong for NaN and infinity).
//    Elements whose result is undefined (integer division by zero) stop the
//    fold and leave the op to the runtime.
//  * It never bloats the IR. A folded constant is a splat, or has at most
//    kMaxFoldedElements elements, or is the rearrangement (transpose,
//    reshape) of a constant that the op is the only user of, which dies
//    with the fold: a model's weights transposed once at compile time
//    instead of on every call (an LSTM's recurrence weights, 7 ms a call).
//
// Float arithmetic runs in APFloat with the element type's own semantics, so
// a folded f16/bf16/f32/f64 result is bit-identical to what code in that type
// computes. Transcendental functions are evaluated in double and rounded to
// the element type, which can differ from a vendor math library by an ulp.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"
#include "kiln/IR/Threefry.h"
#include "kiln/HalfFloat.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;

/// The largest non-splat constant a fold may create. Folding bigger results
/// would copy weights-sized data into the IR for no runtime gain.
static constexpr int64_t kMaxFoldedElements = 1024;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// `attr` as a splat DenseElementsAttr, or null.
static DenseElementsAttr getSplat(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  return dense && dense.isSplat() ? dense : DenseElementsAttr();
}

/// Whether constant operands `operands` may be folded into a constant of
/// `type`: all must be dense literals, and either all are splats (so the
/// result is a splat, cheap at any size) or the result is small.
static bool canFoldConstants(ArrayRef<Attribute> operands, ShapedType type) {
  bool allSplat = true;
  for (Attribute attr : operands) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
    if (!dense)
      return false;
    allSplat &= dense.isSplat();
  }
  return allSplat || type.getNumElements() <= kMaxFoldedElements;
}

/// Whether `attr` is an integer splat equal to `value`.
static bool isIntSplat(Attribute attr, int64_t value) {
  DenseElementsAttr splat = getSplat(attr);
  if (!splat || !isa<IntegerType>(splat.getElementType()))
    return false;
  APInt got = splat.getSplatValue<APInt>();
  return got == APInt(got.getBitWidth(), value, /*isSigned=*/true);
}

/// Whether `attr` is a float splat bitwise equal to `value`; the sign of zero
/// matters, because x + -0.0 is an identity and x + +0.0 is not.
static bool isFloatSplat(Attribute attr, double value) {
  DenseElementsAttr splat = getSplat(attr);
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return false;
  APFloat got = splat.getSplatValue<APFloat>();
  APFloat want(value);
  bool losesInfo;
  want.convert(got.getSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  return got.bitwiseIsEqual(want);
}

/// Whether `attr` is a splat equal to `value` in any numeric element type.
/// Only for values where integers and floats agree on being an identity.
static bool isNumericSplat(Attribute attr, int64_t value) {
  return isIntSplat(attr, value) || isFloatSplat(attr, value);
}

/// Whether `type`'s elements are unsigned integers (ui8 ... ui64), whose
/// division, remainder, order, abs, relu, sign and conversions differ from
/// the signed ones of the same bits.
static bool isUnsignedElement(Type type) {
  return getElementTypeOrSelf(type).isUnsignedInteger();
}

static bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

using IntFn = function_ref<std::optional<APInt>(const APInt &, const APInt &)>;
using FloatFn =
    function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>;
using IntUnaryFn = function_ref<std::optional<APInt>(const APInt &)>;
using FloatUnaryFn = function_ref<std::optional<APFloat>(const APFloat &)>;

/// Elementwise folding of a binary op with same-typed operands and result.
/// A callback returns std::nullopt for an element that must not fold, and a
/// null callback means the op has no folding for that element kind.
static Attribute foldBinary(ArrayRef<Attribute> operands, ShapedType type,
                            IntFn intFn, FloatFn floatFn) {
  if (!canFoldConstants(operands, type))
    return {};
  if (isa<FloatType>(type.getElementType()))
    return floatFn ? constFoldBinaryOpConditional<FloatAttr, APFloat, void>(
                         operands, type, floatFn)
                   : Attribute();
  return intFn ? constFoldBinaryOpConditional<IntegerAttr, APInt, void>(
                     operands, type, intFn)
               : Attribute();
}

/// Elementwise folding of a unary op whose result type is its operand's.
static Attribute foldUnary(ArrayRef<Attribute> operands, ShapedType type,
                           IntUnaryFn intFn, FloatUnaryFn floatFn) {
  if (!canFoldConstants(operands, type))
    return {};
  if (isa<FloatType>(type.getElementType()))
    return floatFn ? constFoldUnaryOpConditional<FloatAttr, APFloat, void>(
                         operands, floatFn)
                   : Attribute();
  return intFn ? constFoldUnaryOpConditional<IntegerAttr, APInt, void>(operands,
                                                                       intFn)
               : Attribute();
}

/// Evaluates `fn` in double precision and rounds the result to the semantics
/// of `x`. Used for functions APFloat does not provide.
static APFloat evalInDouble(const APFloat &x, function_ref<double(double)> fn) {
  bool losesInfo;
  APFloat wide = x;
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  APFloat result(fn(wide.convertToDouble()));
  result.convert(x.getSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

/// Folds a float-only unary op by evaluating `fn` in double.
static Attribute foldFloatUnary(ArrayRef<Attribute> operands, ShapedType type,
                                double (*fn)(double)) {
  return foldUnary(operands, type, nullptr,
                   [&](const APFloat &x) -> std::optional<APFloat> {
                     return evalInDouble(x, fn);
                   });
}

/// Builds a constant of `resultType` whose element at each position is the
/// element of `source` at `sourceIndex(position)`, where positions are
/// multi-indices into the result. Used by the data-movement ops.
static DenseElementsAttr
gatherElements(DenseElementsAttr source, ShapedType resultType,
               function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<int64_t> &)>
                   sourceIndex) {
  ArrayRef<int64_t> sourceShape = source.getType().getShape();
  SmallVector<int64_t> sourceStrides(sourceShape.size(), 1);
  for (int64_t d = static_cast<int64_t>(sourceShape.size()) - 2; d >= 0; --d)
    sourceStrides[d] = sourceStrides[d + 1] * sourceShape[d + 1];

  // Elements of whole bytes are copied as bytes (a weight of millions of
  // elements in milliseconds); others (i1) go through attributes.
  Type element = source.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  bool raw = bits >= 8 && bits % 8 == 0;
  size_t bytes = bits / 8;
  ArrayRef<char> data = raw ? source.getRawData() : ArrayRef<char>();
  std::vector<char> rawResult;
  SmallVector<Attribute> result;
  if (raw)
    rawResult.resize(resultType.getNumElements() * bytes);
  else
    result.reserve(resultType.getNumElements());
  auto values = source.getValues<Attribute>();
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<int64_t> position(shape.size(), 0), from;
  for (int64_t n = 0, e = resultType.getNumElements(); n < e; ++n) {
    from.clear();
    sourceIndex(position, from);
    int64_t linear = 0;
    for (auto [index, stride] : llvm::zip_equal(from, sourceStrides))
      linear += index * stride;
    if (raw)
      std::memcpy(rawResult.data() + n * bytes, data.data() + linear * bytes,
                  bytes);
    else
      result.push_back(*std::next(values.begin(), linear));
    // Row-major increment of `position`.
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++position[d] < shape[d])
        break;
      position[d] = 0;
    }
  }
  if (raw)
    return DenseElementsAttr::getFromRawBuffer(resultType, rawResult);
  return DenseElementsAttr::get(resultType, result);
}

/// Whether `value` is a constant that the op folding it is the only user
/// of: rearranging it into a result no larger makes the IR no bigger.
static bool onlyUseOfConstant(Value value, ShapedType resultType) {
  auto type = dyn_cast<ShapedType>(value.getType());
  return value.getDefiningOp<ConstantOp>() && value.hasOneUse() && type &&
         type.hasStaticShape() &&
         resultType.getNumElements() <= type.getNumElements();
}

/// Folds a data-movement op on a constant: splats just change shape (any
/// size), other literals are rearranged by `sourceIndex` when small or
/// when `sourceDies` (the op is the constant's only user).
static Attribute foldDataMovement(
    Attribute operand, ShapedType resultType,
    function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<int64_t> &)>
        sourceIndex,
    bool sourceDies = false) {
  if (!isa_and_nonnull<DenseElementsAttr>(operand) ||
      (!sourceDies && !canFoldConstants(operand, resultType)))
    return {};
  auto dense = cast<DenseElementsAttr>(operand);
  if (dense.isSplat())
    return dense.resizeSplat(resultType);
  return gatherElements(dense, resultType, sourceIndex);
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

/// Constants fold to their value; this is what lets other folders see them.
OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Binary elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 and 0 + x; for floats only -0.0 is an identity (-0.0 + +0.0 is
  // +0.0). The canonicalizer moves constants of commutative ops to the right,
  // but folding both sides keeps the fold independent of that.
  if (isIntSplat(adaptor.getRhs(), 0) || isFloatSplat(adaptor.getRhs(), -0.0))
    return getLhs();
  if (isIntSplat(adaptor.getLhs(), 0) || isFloatSplat(adaptor.getLhs(), -0.0))
    return getRhs();
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  // x - 0; for floats x - +0.0 is exact for every x, including -0.0.
  if (isIntSplat(adaptor.getRhs(), 0) || isFloatSplat(adaptor.getRhs(), 0.0))
    return getLhs();
  // x - x is 0 only for integers (inf - inf and NaN - NaN are NaN).
  if (getLhs() == getRhs() && isa<IntegerType>(getType().getElementType()))
    return DenseElementsAttr::get(
        getType(), APInt::getZero(getType().getElementTypeBitWidth()));
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isNumericSplat(adaptor.getRhs(), 1))
    return getLhs();
  if (isNumericSplat(adaptor.getLhs(), 1))
    return getRhs();
  // x * 0 is 0 only for integers; for floats NaN * 0 and inf * 0 are NaN.
  if (isIntSplat(adaptor.getRhs(), 0))
    return adaptor.getRhs();
  if (isIntSplat(adaptor.getLhs(), 0))
    return adaptor.getLhs();
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isNumericSplat(adaptor.getRhs(), 1))
    return getLhs();
  // Any integer divided by zero is all ones (KilnOps.td).
  if (isIntSplat(adaptor.getRhs(), 0))
    return DenseElementsAttr::get(
        getType(), APInt::getAllOnes(getType().getElementTypeBitWidth()));
  bool isUnsigned = isUnsignedElement(getType());
  return foldBinary(
      adaptor.getOperands(), getType(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // x / 0 is all ones (KilnOps.td). INT_MIN / -1 wraps to INT_MIN,
        // which is what APInt's sdiv gives.
        if (b.isZero())
          return APInt::getAllOnes(a.getBitWidth());
        return isUnsigned ? a.udiv(b) : a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a / b;
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(
      adaptor.getOperands(), getType(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return isUnsignedElement(getType()) ? llvm::APIntOps::umax(a, b)
                                            : llvm::APIntOps::smax(a, b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return llvm::maximum(a, b);
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(
      adaptor.getOperands(), getType(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return isUnsignedElement(getType()) ? llvm::APIntOps::umin(a, b)
                                            : llvm::APIntOps::smin(a, b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return llvm::minimum(a, b);
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isFloatSplat(adaptor.getRhs(), 1.0))
    return getLhs();
  return foldBinary(
      adaptor.getOperands(), getType(), nullptr,
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        bool losesInfo;
        APFloat exponent = b;
        exponent.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                         &losesInfo);
        double e = exponent.convertToDouble();
        return evalInDouble(a, [e](double x) { return std::pow(x, e); });
      });
}

//===----------------------------------------------------------------------===//
// Unary elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  // neg(neg x) is x for floats and, with wrap-around, for integers.
  if (auto inner = getOperand().getDefiningOp<NegOp>())
    return inner.getOperand();
  return foldUnary(
      adaptor.getOperands(), getType(),
      [](const APInt &a) -> std::optional<APInt> { return -a; },
      [](const APFloat &a) -> std::optional<APFloat> { return llvm::neg(a); });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  // Unsigned values are their own absolute value.
  if (isUnsignedElement(getType()))
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<AbsOp>())
    return inner.getResult();
  // abs(neg x) is abs x; also exact for INT_MIN, which both leave unchanged.
  if (auto inner = getOperand().getDefiningOp<NegOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  return foldUnary(
      adaptor.getOperands(), getType(),
      [](const APInt &a) -> std::optional<APInt> { return a.abs(); },
      [](const APFloat &a) -> std::optional<APFloat> { return llvm::abs(a); });
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  // No unsigned value is below zero.
  if (isUnsignedElement(getType()))
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<ReluOp>())
    return inner.getResult();
  return foldUnary(
      adaptor.getOperands(), getType(),
      [](const APInt &a) -> std::optional<APInt> {
        return a.isNegative() ? APInt::getZero(a.getBitWidth()) : a;
      },
      // max(x, 0) with the NaN-propagating max of kiln.max.
      [](const APFloat &a) -> std::optional<APFloat> {
        return llvm::maximum(a, APFloat::getZero(a.getSemantics()));
      });
}

OpFoldResult ExpOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::exp(x); });
}

OpFoldResult LogOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::log(x); });
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::sqrt(x); });
}

OpFoldResult RsqrtOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return 1.0 / std::sqrt(x); });
}

OpFoldResult TanhOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::tanh(x); });
}

OpFoldResult SigmoidOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

OpFoldResult SinOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::sin(x); });
}

OpFoldResult CosOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::cos(x); });
}

OpFoldResult ErfOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::erf(x); });
}

/// Rounds to an integral value in the element type's own semantics, which
/// is exact (and keeps the sign of zeros, infinities and NaN).
static Attribute foldRoundToIntegral(ArrayRef<Attribute> operands,
                                     ShapedType type,
                                     APFloat::roundingMode mode) {
  return foldUnary(operands, type, nullptr,
                   [&](const APFloat &x) -> std::optional<APFloat> {
                     APFloat result = x;
                     result.roundToIntegral(mode);
                     return result;
                   });
}

OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  // floor(floor x) is floor x; likewise ceil and round.
  if (getOperand().getDefiningOp<FloorOp>())
    return getOperand();
  return foldRoundToIntegral(adaptor.getOperands(), getType(),
                             APFloat::rmTowardNegative);
}

OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getDefiningOp<CeilOp>())
    return getOperand();
  return foldRoundToIntegral(adaptor.getOperands(), getType(),
                             APFloat::rmTowardPositive);
}

OpFoldResult RoundOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getDefiningOp<RoundOp>())
    return getOperand();
  return foldRoundToIntegral(adaptor.getOperands(), getType(),
                             APFloat::rmNearestTiesToEven);
}

OpFoldResult TanOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::tan(x); });
}

OpFoldResult AsinOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::asin(x); });
}

OpFoldResult AcosOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::acos(x); });
}

OpFoldResult AtanOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::atan(x); });
}

OpFoldResult SinhOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::sinh(x); });
}

OpFoldResult CoshOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::cosh(x); });
}

OpFoldResult AsinhOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::asinh(x); });
}

OpFoldResult AcoshOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::acosh(x); });
}

OpFoldResult AtanhOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getOperands(), getType(),
                        [](double x) { return std::atanh(x); });
}

OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getDefiningOp<SignOp>())
    return getOperand();
  bool isUnsigned = isUnsignedElement(getType());
  return foldUnary(
      adaptor.getOperands(), getType(),
      [&](const APInt &a) -> std::optional<APInt> {
        if (a.isZero())
          return a;
        return APInt(a.getBitWidth(), !isUnsigned && a.isNegative() ? -1 : 1,
                     /*isSigned=*/true);
      },
      // Zeros (of either sign) and NaN are their own sign.
      [](const APFloat &a) -> std::optional<APFloat> {
        if (a.isZero() || a.isNaN())
          return a;
        // Not APFloat::getOne(semantics, true): in LLVM 19 it converts -1
        // through an unsigned integer and gives 2^64.
        APFloat one(a.getSemantics(), 1);
        if (a.isNegative())
          one.changeSign();
        return one;
      });
}

//===----------------------------------------------------------------------===//
// RemOp and the bitwise ops
//===----------------------------------------------------------------------===//

OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = isUnsignedElement(getType());
  return foldBinary(
      adaptor.getOperands(), getType(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // rem(x, 0) is x and, for signed types, rem(x, -1) is 0 by
        // definition (KilnOps.td).
        if (b.isZero())
          return a;
        if (isUnsigned)
          return a.urem(b);
        if (b.isAllOnes())
          return APInt::getZero(a.getBitWidth());
        return a.srem(b);
      },
      // APFloat::mod is C's fmod: exact, with the dividend's sign.
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        APFloat result = a;
        result.mod(b);
        return result;
      });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getOperand().getDefiningOp<NotOp>())
    return inner.getOperand();
  return foldUnary(
      adaptor.getOperands(), getType(),
      [](const APInt &a) -> std::optional<APInt> { return ~a; }, nullptr);
}

/// The value of a splat integer constant operand, if it is one.
static std::optional<APInt> splatInteger(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APInt>();
}

/// kiln.and and kiln.or with one operand a splat constant: the absorbing
/// element (0 for and, all ones for or) is the result, the identity gives
/// the other operand. Without it a reduction whose only use is anded with
/// false stays alive until the lowering's arith folds erase it, inside a
/// fusion group already built around it.
static OpFoldResult foldWithSplat(Value lhs, Value rhs, Attribute lhsAttr,
                                  Attribute rhsAttr, bool isAnd) {
  for (auto [constant, other, attr] :
       {std::make_tuple(rhsAttr, lhs, rhsAttr),
        std::make_tuple(lhsAttr, rhs, lhsAttr)}) {
    std::optional<APInt> splat = splatInteger(constant);
    if (!splat)
      continue;
    bool absorbing = isAnd ? splat->isZero() : splat->isAllOnes();
    bool identity = isAnd ? splat->isAllOnes() : splat->isZero();
    if (absorbing)
      return attr;
    if (identity)
      return other;
  }
  return {};
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  if (OpFoldResult folded =
          foldWithSplat(getLhs(), getRhs(), adaptor.getLhs(), adaptor.getRhs(),
                        /*isAnd=*/true))
    return folded;
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a & b;
      },
      nullptr);
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  if (OpFoldResult folded =
          foldWithSplat(getLhs(), getRhs(), adaptor.getLhs(), adaptor.getRhs(),
                        /*isAnd=*/false))
    return folded;
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a | b;
      },
      nullptr);
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return DenseElementsAttr::get(
        getType(), APInt::getZero(getType().getElementTypeBitWidth()));
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a ^ b;
      },
      nullptr);
}

/// kiln.rng_bits of constants: keys derived at compile time (a key made
/// from a literal seed, then split or folded) become literals.
OpFoldResult RngBitsOp::fold(FoldAdaptor adaptor) {
  if (!canFoldConstants(adaptor.getOperands(), getType()))
    return {};
  bool allSplat = true;
  SmallVector<SmallVector<uint32_t>, 4> operands;
  for (Attribute attr : adaptor.getOperands()) {
    auto dense = cast<DenseElementsAttr>(attr);
    allSplat &= dense.isSplat();
    SmallVector<uint32_t> &words = operands.emplace_back();
    for (const APInt &value : dense.getValues<APInt>())
      words.push_back(static_cast<uint32_t>(value.getZExtValue()));
  }
  int64_t count = allSplat ? 1 : getType().getNumElements();
  auto at = [&](unsigned operand, int64_t n) {
    return operands[operand][operands[operand].size() == 1 ? 0 : n];
  };
  SmallVector<APInt> values;
  for (int64_t n = 0; n < count; ++n) {
    auto [first, second] =
        threefry2x32(at(0, n), at(1, n), at(2, n), at(3, n));
    uint32_t bits = getWord() == RngWord::First    ? first
                    : getWord() == RngWord::Second ? second
                                                   : first ^ second;
    values.emplace_back(32, bits);
  }
  return DenseElementsAttr::get(getType(), values);
}

/// kiln.shift_left and kiln.shift_right on one element: the amount is read
/// as unsigned, and amounts of at least the width shift every bit out.
static APInt foldShift(const APInt &value, const APInt &amount, bool left,
                       bool isUnsigned) {
  unsigned width = value.getBitWidth();
  if (amount.uge(width)) {
    if (left || isUnsigned || !value.isNegative())
      return APInt::getZero(width);
    return APInt::getAllOnes(width);
  }
  unsigned n = static_cast<unsigned>(amount.getZExtValue());
  if (left)
    return value.shl(n);
  return isUnsigned ? value.lshr(n) : value.ashr(n);
}

OpFoldResult ShiftLeftOp::fold(FoldAdaptor adaptor) {
  if (isIntSplat(adaptor.getRhs(), 0))
    return getLhs();
  return foldBinary(
      adaptor.getOperands(), getType(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return foldShift(a, b, /*left=*/true, /*isUnsigned=*/false);
      },
      nullptr);
}

OpFoldResult ShiftRightOp::fold(FoldAdaptor adaptor) {
  if (isIntSplat(adaptor.getRhs(), 0))
    return getLhs();
  bool isUnsigned = isUnsignedElement(getType());
  return foldBinary(
      adaptor.getOperands(), getType(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return foldShift(a, b, /*left=*/false, isUnsigned);
      },
      nullptr);
}

//===----------------------------------------------------------------------===//
// CompareOp, SelectOp, CastOp
//===----------------------------------------------------------------------===//

/// Compares two integers. Signless ones are signed, ui8 ... ui64 unsigned
/// (`isUnsigned`). For i1 only equality is folded, because whether true
/// orders above or below false is up to the lowering.
static std::optional<bool> compareInts(CompareDirection direction,
                                       const APInt &a, const APInt &b,
                                       bool isUnsigned) {
  switch (direction) {
  case CompareDirection::eq:
    return a == b;
  case CompareDirection::ne:
    return a != b;
  default:
    break;
  }
  if (a.getBitWidth() == 1)
    return std::nullopt;
  switch (direction) {
  case CompareDirection::lt:
    return isUnsigned ? a.ult(b) : a.slt(b);
  case CompareDirection::le:
    return isUnsigned ? a.ule(b) : a.sle(b);
  case CompareDirection::gt:
    return isUnsigned ? a.ugt(b) : a.sgt(b);
  case CompareDirection::ge:
    return isUnsigned ? a.uge(b) : a.sge(b);
  default:
    return std::nullopt;
  }
}

/// Compares two floats as C does: every comparison with NaN is false except
/// `ne`, which is true; -0.0 equals +0.0.
static bool compareFloats(CompareDirection direction, const APFloat &a,
                          const APFloat &b) {
  APFloat::cmpResult result = a.compare(b);
  switch (direction) {
  case CompareDirection::eq:
    return result == APFloat::cmpEqual;
  case CompareDirection::ne:
    return result != APFloat::cmpEqual;
  case CompareDirection::lt:
    return result == APFloat::cmpLessThan;
  case CompareDirection::le:
    return result == APFloat::cmpLessThan || result == APFloat::cmpEqual;
  case CompareDirection::gt:
    return result == APFloat::cmpGreaterThan;
  case CompareDirection::ge:
    return result == APFloat::cmpGreaterThan || result == APFloat::cmpEqual;
  }
  llvm_unreachable("unknown compare direction");
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getType();
  bool isFloat = isa<FloatType>(getLhs().getType().getElementType());
  bool isUnsigned = isUnsignedElement(getLhs().getType());

  // x cmp x is known for integers; for floats NaN makes it data-dependent.
  if (getLhs() == getRhs() && !isFloat) {
    APInt zero = APInt::getZero(getLhs().getType().getElementTypeBitWidth());
    if (std::optional<bool> known =
            compareInts(getDirection(), zero, zero, isUnsigned))
      return DenseElementsAttr::get(type, *known);
  }

  if (!canFoldConstants(adaptor.getOperands(), type))
    return {};
  auto lhs = cast<DenseElementsAttr>(adaptor.getLhs());
  auto rhs = cast<DenseElementsAttr>(adaptor.getRhs());
  auto compareAt = [&](int64_t i) -> std::optional<bool> {
    if (isFloat)
      return compareFloats(getDirection(),
                           *std::next(lhs.value_begin<APFloat>(), i),
                           *std::next(rhs.value_begin<APFloat>(), i));
    return compareInts(getDirection(), *std::next(lhs.value_begin<APInt>(), i),
                       *std::next(rhs.value_begin<APInt>(), i), isUnsigned);
  };
  // Splat element access ignores the index, so one comparison suffices.
  if (lhs.isSplat() && rhs.isSplat()) {
    std::optional<bool> value = compareAt(0);
    return value ? DenseElementsAttr::get(type, *value) : Attribute();
  }
  SmallVector<bool> values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    std::optional<bool> value = compareAt(i);
    if (!value)
      return {};
    values.push_back(*value);
  }
  return DenseElementsAttr::get(type, values);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  // A splat predicate, rank-0 or not, picks a whole operand.
  if (DenseElementsAttr pred = getSplat(adaptor.getPred()))
    return pred.getSplatValue<bool>() ? getOnTrue() : getOnFalse();

  if (!canFoldConstants(adaptor.getOperands(), getType()))
    return {};
  auto pred = cast<DenseElementsAttr>(adaptor.getPred());
  auto onTrue = cast<DenseElementsAttr>(adaptor.getOnTrue());
  auto onFalse = cast<DenseElementsAttr>(adaptor.getOnFalse());
  SmallVector<Attribute> values;
  for (auto [p, t, f] :
       llvm::zip_equal(pred.getValues<bool>(), onTrue.getValues<Attribute>(),
                       onFalse.getValues<Attribute>()))
    values.push_back(p ? t : f);
  return DenseElementsAttr::get(getType(), values);
}

/// Converts one integer element; i1 and ui8 ... ui64 (`fromUnsigned`) are
/// zero-extended, the signless integers sign-extended, and conversion to i1
/// means `x != 0`.
static APInt castInt(const APInt &value, unsigned toWidth, bool fromUnsigned) {
  if (toWidth == 1)
    return APInt(1, !value.isZero());
  if (value.getBitWidth() == 1 || fromUnsigned)
    return value.zextOrTrunc(toWidth);
  return value.sextOrTrunc(toWidth);
}

/// Converts one float element to an integer as kiln.cast defines it: to i1
/// `x != 0` (NaN is nonzero); to the other integers rounding toward zero and
/// saturating at the type's limits, NaN to 0 (llvm.fptosi.sat, or
/// llvm.fptoui.sat for the unsigned types, `toUnsigned`).
static APInt castFloatToInt(const APFloat &value, unsigned toWidth,
                            bool toUnsigned) {
  if (toWidth == 1)
    return APInt(1, !value.isZero());
  if (value.isNaN())
    return APInt::getZero(toWidth);
  APSInt result(toWidth, toUnsigned);
  bool isExact;
  if (value.convertToInteger(result, APFloat::rmTowardZero, &isExact) &
      APFloat::opInvalidOp) {
    if (toUnsigned)
      return value.isNegative() ? APInt::getZero(toWidth)
                                : APInt::getMaxValue(toWidth);
    return value.isNegative() ? APInt::getSignedMinValue(toWidth)
                              : APInt::getSignedMaxValue(toWidth);
  }
  return result;
}

/// f32 `values` rounded to bf16 (to nearest even; a NaN stays a quiet
/// NaN), as APFloat's conversion gives them, on the raw data.
static DenseElementsAttr narrowToBFloat16(DenseElementsAttr values,
                                          ShapedType type) {
  ArrayRef<char> raw = values.getRawData();
  std::vector<uint16_t> narrow(values.getNumElements());
  for (size_t i = 0; i < narrow.size(); ++i) {
    float value;
    std::memcpy(&value, raw.data() + 4 * i, 4);
    narrow[i] = ::kiln::floatToBfloat16(value);
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(narrow.data()),
                           narrow.size() * 2));
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getType();
  if (getOperand().getType() == type)
    return getOperand();
  Type from = getOperand().getType().getElementType();
  Type to = type.getElementType();
  // A constant the cast is the only user of may be any size where the cast
  // does not widen it (a weight narrowed for a bf16 convolution once at
  // compile time, not on every call): the source dies with the fold.
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand());
  bool narrowing = from.isIntOrFloat() && to.isIntOrFloat() &&
                   to.getIntOrFloatBitWidth() <= from.getIntOrFloatBitWidth();
  if (!canFoldConstants(adaptor.getOperands(), type) &&
      !(dense && narrowing && onlyUseOfConstant(getOperand(), type)))
    return {};
  if (dense && !dense.isSplat() && from.isF32() && to.isBF16())
    return narrowToBFloat16(dense, type);

  ArrayRef<Attribute> operands = adaptor.getOperands();
  auto toFloat = dyn_cast<FloatType>(to);
  unsigned toWidth = to.getIntOrFloatBitWidth();
  bool fromUnsigned = from.isUnsignedInteger(),
       toUnsigned = to.isUnsignedInteger();

  if (isa<FloatType>(from) && toFloat)
    return constFoldCastOp<FloatAttr, FloatAttr, APFloat, APFloat, void>(
        operands, type, [&](const APFloat &value, bool &) {
          APFloat result = value;
          bool losesInfo;
          result.convert(toFloat.getFloatSemantics(),
                         APFloat::rmNearestTiesToEven, &losesInfo);
          return result;
        });
  if (isa<FloatType>(from))
    return constFoldCastOp<FloatAttr, IntegerAttr, APFloat, APInt, void>(
        operands, type, [&](const APFloat &value, bool &) {
          return castFloatToInt(value, toWidth, toUnsigned);
        });
  if (toFloat)
    return constFoldCastOp<IntegerAttr, FloatAttr, APInt, APFloat, void>(
        operands, type, [&](const APInt &value, bool &) {
          APFloat result(toFloat.getFloatSemantics());
          result.convertFromAPInt(
              value, /*IsSigned=*/value.getBitWidth() != 1 && !fromUnsigned,
              APFloat::rmNearestTiesToEven);
          return result;
        });
  return constFoldCastOp<IntegerAttr, IntegerAttr, APInt, APInt, void>(
      operands, type, [&](const APInt &value, bool &) {
        return castInt(value, toWidth, fromUnsigned);
      });
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType type = getType();
  // Same type means dims is [0, rank) (the verifier demands strictly
  // increasing dims), so nothing moves.
  if (operandType == type)
    return getOperand();

  // broadcast(broadcast(x)) is one broadcast with the dims composed: x's
  // dimension i lands in result dimension outer[inner[i]].
  if (auto inner = getOperand().getDefiningOp<BroadcastInDimOp>()) {
    SmallVector<int64_t> dims;
    for (int64_t d : inner.getDims())
      dims.push_back(getDims()[d]);
    getOperandMutable().assign(inner.getOperand());
    setDims(dims);
    return getResult();
  }

  // broadcast(reshape(x)) for a reshape that only inserts or removes
  // size-1 dimensions (numpy's keepdims) broadcasts x itself: each of x's
  // dimensions goes where its image in the reshape goes. A size-1
  // dimension of x that the reshape drops has no image; then nothing
  // changes.
  if (auto reshape = getOperand().getDefiningOp<ReshapeOp>()) {
    RankedTensorType sourceType = reshape.getOperand().getType();
    ArrayRef<int64_t> source = sourceType.getShape();
    ArrayRef<int64_t> reshaped = operandType.getShape();
    if (isUnitReshape(sourceType, operandType)) {
      SmallVector<int64_t> dims;
      size_t j = 0;
      for (int64_t size : source) {
        while (j < reshaped.size() && reshaped[j] != size && reshaped[j] == 1)
          ++j;
        if (j == reshaped.size() || reshaped[j] != size)
          break;
        dims.push_back(getDims()[j++]);
      }
      if (dims.size() == source.size()) {
        getOperandMutable().assign(reshape.getOperand());
        setDims(dims);
        return getResult();
      }
    }
  }

  ArrayRef<int64_t> dims = getDims();
  return foldDataMovement(
      adaptor.getOperand(), type,
      [&](ArrayRef<int64_t> position, SmallVectorImpl<int64_t> &from) {
        for (auto [i, dim] : llvm::enumerate(dims))
          from.push_back(operandType.getDimSize(i) == 1 ? 0 : position[dim]);
      });
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  // reshape(reshape(x)) only depends on x: row-major order is unchanged.
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    if (inner.getOperand().getType() == getType())
      return inner.getOperand();
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  if (!isa_and_nonnull<DenseElementsAttr>(adaptor.getOperand()) ||
      (!onlyUseOfConstant(getOperand(), getType()) &&
       !canFoldConstants(adaptor.getOperands(), getType())))
    return {};
  return cast<DenseElementsAttr>(adaptor.getOperand()).reshape(getType());
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (isIdentityPermutation(perm))
    return getOperand();

  // Result dimension i of the outer transpose is dimension perm[i] of the
  // inner result, which is x's dimension innerPerm[perm[i]].
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPermutation()[p]);
    if (isIdentityPermutation(composed))
      return inner.getOperand();
    getOperandMutable().assign(inner.getOperand());
    setPermutation(composed);
    return getResult();
  }

  return foldDataMovement(
      adaptor.getOperand(), getType(),
      [&](ArrayRef<int64_t> position, SmallVectorImpl<int64_t> &from) {
        from.resize(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          from[p] = position[i];
      },
      onlyUseOfConstant(getOperand(), getType()));
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  // With the same shape and all starts 0, each dimension either has
  // limit == size and stride 1, or size <= 1: the slice is the whole tensor.
  if (getOperand().getType() == getType() &&
      llvm::all_of(getStart(), [](int64_t s) { return s == 0; }))
    return getOperand();

  ArrayRef<int64_t> start = getStart(), stride = getStride();
  return foldDataMovement(
      adaptor.getOperand(), getType(),
      [&](ArrayRef<int64_t> position, SmallVectorImpl<int64_t> &from) {
        for (auto [p, s, st] : llvm::zip_equal(position, start, stride))
          from.push_back(s + p * st);
      });
}

OpFoldResult ReverseOp::fold(FoldAdaptor adaptor) {
  // Reversing only dimensions of size <= 1 moves nothing.
  RankedTensorType type = getType();
  ArrayRef<int64_t> dims = getDims();
  if (llvm::all_of(dims, [&](int64_t d) { return type.getDimSize(d) <= 1; }))
    return getOperand();
  return foldDataMovement(
      adaptor.getOperand(), type,
      [&](ArrayRef<int64_t> position, SmallVectorImpl<int64_t> &from) {
        from.assign(position.begin(), position.end());
        for (int64_t d : dims)
          from[d] = type.getDimSize(d) - 1 - position[d];
      });
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Reducing over no dimensions leaves every element as it was.
#define KILN_REDUCE_FOLD(OP)                                                   \
  OpFoldResult OP::fold(FoldAdaptor) {                                         \
    if (getDims().empty())                                                     \
      return getOperand();                                                     \
    return {};                                                                 \
  }
KILN_REDUCE_FOLD(ReduceSumOp)
KILN_REDUCE_FOLD(ReduceMaxOp)
KILN_REDUCE_FOLD(ReduceMeanOp)
#undef KILN_REDUCE_FOLD
