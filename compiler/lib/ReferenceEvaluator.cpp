//===- ReferenceEvaluator.cpp - Interpreter for kiln IR -------------------===//
//
// Walks a kiln function op by op, keeping one HostTensor per SSA value. Each
// op is dispatched to a small helper that computes its result from its
// operands; region ops (cond, while, for, fused) and func.call recurse into
// blocks.
// The numerics are spelled out in ReferenceEvaluator.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/ReferenceEvaluator.h"

#include "EvaluateAttention.h"
#include "EvaluatorMessages.h"
#include "EvaluatorNumerics.h"
#include "SimulatedRanks.h"

#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/IR/Threefry.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

using namespace mlir;
using namespace mlir::kiln;
using ::kiln::ElementKind;
using ::kiln::EvaluatorOptions;
using ::kiln::HostTensor;
using ::kiln::roundToFloat;
using ::kiln::getElementTypeInfo;
using ::kiln::wrapToInt;
using namespace ::kiln::evaluator;

namespace {
using Results = std::vector<HostTensor>;
} // namespace

//===----------------------------------------------------------------------===//
// Error reporting
//===----------------------------------------------------------------------===//

/// The op's name, its symbol if it has one, and where it is.
static std::string describeOp(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (auto symbol =
          op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    text += " @" + symbol.getValue().str();
  return text + " at " + describeLocation(op->getLoc());
}

static llvm::Error makeError(const Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

/// The error for a failure at `op`: "<reason> in <op> at <location>".
static llvm::Error opError(Operation *op, const Twine &reason) {
  return makeError(reason + " in " + describeOp(op));
}

/// Appends a line saying which enclosing region op the failure happened in,
/// so an error deep inside nested loops can be traced to its iteration.
static llvm::Error addContext(llvm::Error error, Operation *op,
                              const Twine &where) {
  std::string message = llvm::toString(std::move(error));
  return makeError(message + "\n  " + where + " " + describeOp(op));
}

static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A description of an input that may be malformed (no or an unsupported
/// element type), for the error that rejects it.
static std::string describeInput(const HostTensor &input) {
  if (!input.elementType) {
    std::string text = "a tensor of shape [";
    for (auto [index, dim] : llvm::enumerate(input.shape))
      text += (index ? "," : "") + std::to_string(dim);
    return text + "] without an element type";
  }
  return typeString(input.getType());
}

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

// Integer arithmetic goes through uint64_t, where overflow is defined to
// wrap; wrapToInt then narrows the result to the element width.
static int64_t wrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
static int64_t wrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// Truncating division; the one overflowing case (most negative / -1) wraps.
/// The caller has ruled out a zero divisor.
static int64_t truncatingDiv(int64_t a, int64_t b) {
  if (b == -1)
    return wrappingSub(0, a);
  return a / b;
}

/// kiln.rem on integers: C's `%`, except that a zero divisor gives the
/// dividend and -1 gives 0 (where `%` would overflow), as KilnOps.td defines.
static int64_t truncatingRem(int64_t a, int64_t b) {
  if (b == 0)
    return a;
  if (b == -1)
    return 0;
  return a % b;
}

/// kiln.sign: +-1 off zero; zeros (of either sign) and NaN are their own sign.
static double floatSign(double x) {
  if (x > 0)
    return 1.0;
  if (x < 0)
    return -1.0;
  return x;
}

/// kiln.round: to nearest, ties to even. nearbyint rounds in the current
/// rounding mode, which is the default one (to nearest even) here.
static double roundHalfToEven(double x) { return std::nearbyint(x); }



/// Unsigned types below 64 bits are stored zero-extended (wrapToInt), so
/// int64_t's order and division are theirs; ui64 stores its bit pattern and
/// is the one type that must be read as uint64_t.
static bool isUnsignedKind(ElementKind kind) {
  return ::kiln::isUnsignedElementType(kind);
}




/// kiln.div on integers of `kind`: unsigned types divide as unsigned, signed
/// ones truncate (truncatingDiv); x / 0 is all ones (-1, which wrapToInt
/// makes the largest unsigned value).
static int64_t intDiv(ElementKind kind, int64_t a, int64_t b) {
  if (b == 0)
    return -1;
  if (isUnsignedKind(kind))
    return static_cast<int64_t>(static_cast<uint64_t>(a) /
                                static_cast<uint64_t>(b));
  return truncatingDiv(a, b);
}

/// kiln.rem on integers of `kind`; a zero divisor gives the dividend for
/// unsigned types too.
static int64_t intRem(ElementKind kind, int64_t a, int64_t b) {
  if (!isUnsignedKind(kind))
    return truncatingRem(a, b);
  if (b == 0)
    return a;
  return static_cast<int64_t>(static_cast<uint64_t>(a) %
                              static_cast<uint64_t>(b));
}

/// The shift amount `amount` of an element of `kind` read as unsigned, as
/// kiln.shift_left and kiln.shift_right do: negative signed amounts are huge.
static uint64_t shiftAmount(ElementKind kind, int64_t amount) {
  unsigned width = getElementTypeInfo(kind).bitWidth;
  uint64_t bits = static_cast<uint64_t>(amount);
  return width == 64 ? bits : bits & ((uint64_t(1) << width) - 1);
}

/// kiln.shift_left: amounts of at least the bit width give 0. The caller
/// wraps the result to the element width.
static int64_t shiftLeft(ElementKind kind, int64_t value, int64_t amount) {
  uint64_t n = shiftAmount(kind, amount);
  if (n >= getElementTypeInfo(kind).bitWidth)
    return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << n);
}

/// kiln.shift_right: logical for unsigned types (stored zero-extended, or as
/// ui64's bit pattern), arithmetic for signed ones (stored sign-extended).
static int64_t shiftRight(ElementKind kind, int64_t value, int64_t amount) {
  uint64_t n = shiftAmount(kind, amount);
  bool isUnsigned = ::kiln::isUnsignedElementType(kind);
  if (n >= getElementTypeInfo(kind).bitWidth)
    return isUnsigned || value >= 0 ? 0 : -1;
  if (isUnsigned)
    return static_cast<int64_t>(static_cast<uint64_t>(value) >> n);
  return value >> n;
}

static int64_t intLowest(ElementKind kind) {
  switch (kind) {
  case ElementKind::I1:
    return 0;
  case ElementKind::I8:
    return std::numeric_limits<int8_t>::min();
  case ElementKind::I16:
    return std::numeric_limits<int16_t>::min();
  case ElementKind::I32:
    return std::numeric_limits<int32_t>::min();
  default:
    if (isUnsignedKind(kind))
      return 0;
    return std::numeric_limits<int64_t>::min();
  }
}

/// The largest value of `kind` as stored (ui64's is all ones, -1).
static int64_t intHighest(ElementKind kind) {
  switch (kind) {
  case ElementKind::I1:
    return 1;
  case ElementKind::I8:
    return std::numeric_limits<int8_t>::max();
  case ElementKind::I16:
    return std::numeric_limits<int16_t>::max();
  case ElementKind::I32:
    return std::numeric_limits<int32_t>::max();
  case ElementKind::UI8:
    return std::numeric_limits<uint8_t>::max();
  case ElementKind::UI16:
    return std::numeric_limits<uint16_t>::max();
  case ElementKind::UI32:
    return std::numeric_limits<uint32_t>::max();
  case ElementKind::UI64:
    return -1;
  default:
    return std::numeric_limits<int64_t>::max();
  }
}

/// Float to integer: truncate toward zero, saturate at the type's limits,
/// NaN to 0 (the semantics of llvm.fptosi.sat, and of llvm.fptoui.sat for
/// the unsigned types, whose lower limit is 0).
static int64_t floatToInt(ElementKind to, double value) {
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  if (isUnsignedKind(to)) {
    // 2^width is a power of two and thus exact in double.
    double past = std::ldexp(1.0, getElementTypeInfo(to).bitWidth);
    if (truncated <= 0.0)
      return 0;
    if (truncated >= past)
      return intHighest(to);
    return static_cast<int64_t>(static_cast<uint64_t>(truncated));
  }
  // Both bounds are powers of two and thus exact in double.
  double lowest = static_cast<double>(intLowest(to));
  double pastHighest = -lowest;
  if (truncated <= lowest)
    return intLowest(to);
  if (truncated >= pastHighest)
    return intHighest(to);
  return static_cast<int64_t>(truncated);
}

/// Integer to float with a single rounding. Going through double first would
/// round twice for i64 values above 2^53, so each format converts directly.
/// ui64 values are read as uint64_t (`fromUnsigned`); the narrower unsigned
/// types are nonnegative int64_t values already.
static double intToFloat(ElementKind to, int64_t value,
                         bool fromUnsigned = false) {
  switch (to) {
  case ElementKind::F64:
    return fromUnsigned ? static_cast<double>(static_cast<uint64_t>(value))
                        : static_cast<double>(value);
  case ElementKind::F32:
    return fromUnsigned
               ? static_cast<double>(
                     static_cast<float>(static_cast<uint64_t>(value)))
               : static_cast<double>(static_cast<float>(value));
  default: {
    llvm::APFloat converted(to == ElementKind::F16 ? llvm::APFloat::IEEEhalf()
                                                   : llvm::APFloat::BFloat());
    converted.convertFromAPInt(llvm::APInt(64, static_cast<uint64_t>(value),
                                           /*isSigned=*/!fromUnsigned),
                               /*IsSigned=*/!fromUnsigned,
                               llvm::APFloat::rmNearestTiesToEven);
    return converted.convertToDouble();
  }
  }
}

template <typename T>
static bool compareValues(CompareDirection direction, T a, T b) {
  switch (direction) {
  case CompareDirection::eq:
    return a == b;
  case CompareDirection::ne:
    return a != b;
  case CompareDirection::lt:
    return a < b;
  case CompareDirection::le:
    return a <= b;
  case CompareDirection::gt:
    return a > b;
  case CompareDirection::ge:
    return a >= b;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

namespace {
/// Visits the elements of a strided view in row-major order of `shape` and
/// tracks each one's offset into the underlying storage. Broadcasting
/// (stride 0), transposition (permuted strides) and slicing (scaled strides
/// plus a start offset) are all such views.
class StridedCursor {
public:
  StridedCursor(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides,
                int64_t offset)
      : shape(shape), strides(strides), index(shape.size(), 0),
        currentOffset(offset) {}

  int64_t offset() const { return currentOffset; }

  /// Moves to the next element, like an odometer with the last dimension
  /// turning fastest.
  void advance() {
    for (size_t d = shape.size(); d-- > 0;) {
      currentOffset += strides[d];
      if (++index[d] < shape[d])
        return;
      currentOffset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }

private:
  SmallVector<int64_t, 4> shape;
  SmallVector<int64_t, 4> strides;
  SmallVector<int64_t, 4> index;
  int64_t currentOffset;
};
} // namespace

/// Calls `fn(from, to)` with the element storage of `source` and the
/// matching storage of `result`, so data movement is written once for
/// float and integer tensors alike.
template <typename Fn>
static void withStorage(const HostTensor &source, HostTensor &result, Fn fn) {
  if (source.isFloat())
    fn(source.f, result.f);
  else
    fn(source.i, result.i);
}

/// A tensor of `shape` whose elements are read from `source` through the
/// strided view (`offset`, `strides`).
static HostTensor copyStrided(const HostTensor &source, ArrayRef<int64_t> shape,
                              int64_t offset, ArrayRef<int64_t> strides) {
  HostTensor result(source.elementType, shape);
  withStorage(source, result, [&](const auto &from, auto &to) {
    StridedCursor cursor(shape, strides, offset);
    for (auto &element : to) {
      element = from[cursor.offset()];
      cursor.advance();
    }
  });
  return result;
}

static ArrayRef<int64_t> resultShape(Operation *op, unsigned index = 0) {
  return cast<RankedTensorType>(op->getResult(index).getType()).getShape();
}

static Type resultElementType(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

static llvm::Expected<HostTensor> evaluateConstant(ConstantOp op) {
  HostTensor result(resultElementType(op), resultShape(op));
  ElementKind kind = result.kind();
  Attribute value = op.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    // Iterating a splat yields its value once per element.
    if (result.isFloat()) {
      for (auto [index, element] : llvm::enumerate(dense.getValues<APFloat>()))
        result.f[index] = roundToFloat(kind, element.convertToDouble());
    } else {
      for (auto [index, element] : llvm::enumerate(dense.getValues<APInt>()))
        result.i[index] = wrapToInt(kind, kind == ElementKind::I1
                                              ? element.getZExtValue()
                                              : element.getSExtValue());
    }
    return result;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return opError(op, "dense resource '" + resource.getRawHandle().getKey() +
                             "' has no data");
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != result.byteSize())
      return opError(op, "dense resource '" +
                             resource.getRawHandle().getKey() + "' holds " +
                             Twine(data.size()) + " bytes but the type needs " +
                             Twine(result.byteSize()));
    return HostTensor::fromBytes(result.elementType, result.shape, data.data());
  }
  return opError(op, "unsupported constant attribute kind");
}

static HostTensor evaluateIota(IotaOp op) {
  HostTensor result(resultElementType(op), resultShape(op));
  ElementKind kind = result.kind();
  bool isFloat = result.isFloat();
  int64_t dim = op.getDimension();
  int64_t stride = ::kiln::computeStrides(result.shape)[dim];
  int64_t size = result.shape[dim];
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    int64_t position = (n / stride) % size;
    if (isFloat)
      result.f[n] = intToFloat(kind, position);
    else
      result.i[n] = wrapToInt(kind, position);
  }
  return result;
}

/// Applies `floatFn` (computed in double, then rounded) or `intFn` (computed
/// wrapping, then narrowed) to each element.
template <typename FloatFn, typename IntFn>
static HostTensor mapUnary(const HostTensor &x, FloatFn floatFn, IntFn intFn) {
  HostTensor result(x.elementType, x.shape);
  ElementKind kind = x.kind();
  if (x.isFloat()) {
    for (size_t n = 0; n < x.f.size(); ++n)
      result.f[n] = roundToFloat(kind, floatFn(x.f[n]));
  } else {
    for (size_t n = 0; n < x.i.size(); ++n)
      result.i[n] = wrapToInt(kind, intFn(x.i[n]));
  }
  return result;
}

/// mapUnary for ops the verifier restricts to float tensors.
template <typename FloatFn>
static HostTensor mapFloat(const HostTensor &x, FloatFn floatFn) {
  return mapUnary(x, floatFn, [](int64_t value) { return value; });
}

/// The binary analogue of mapUnary, for operands of identical type.
template <typename FloatFn, typename IntFn>
static HostTensor mapBinary(const HostTensor &lhs, const HostTensor &rhs,
                            FloatFn floatFn, IntFn intFn) {
  HostTensor result(lhs.elementType, lhs.shape);
  ElementKind kind = lhs.kind();
  if (lhs.isFloat()) {
    for (size_t n = 0; n < lhs.f.size(); ++n)
      result.f[n] = roundToFloat(kind, floatFn(lhs.f[n], rhs.f[n]));
  } else {
    for (size_t n = 0; n < lhs.i.size(); ++n)
      result.i[n] = wrapToInt(kind, intFn(lhs.i[n], rhs.i[n]));
  }
  return result;
}

static llvm::Expected<HostTensor>
evaluateDiv(DivOp op, const HostTensor &lhs, const HostTensor &rhs) {
  ElementKind kind = lhs.kind();
  return mapBinary(
      lhs, rhs, [](double a, double b) { return a / b; },
      [kind](int64_t a, int64_t b) { return intDiv(kind, a, b); });
}

/// kiln.rng_bits: Threefry-2x32 of each element's counter under its key
/// (ui32 values are stored zero-extended).
static HostTensor evaluateRngBits(RngBitsOp op, const HostTensor &key0,
                                  const HostTensor &key1,
                                  const HostTensor &counterHi,
                                  const HostTensor &counterLo) {
  HostTensor result(key0.elementType, key0.shape);
  for (size_t n = 0; n < result.i.size(); ++n) {
    auto [first, second] = threefry2x32(
        static_cast<uint32_t>(key0.i[n]), static_cast<uint32_t>(key1.i[n]),
        static_cast<uint32_t>(counterHi.i[n]),
        static_cast<uint32_t>(counterLo.i[n]));
    switch (op.getWord()) {
    case RngWord::First: result.i[n] = first; break;
    case RngWord::Second: result.i[n] = second; break;
    case RngWord::Xor: result.i[n] = first ^ second; break;
    }
  }
  return result;
}

static HostTensor evaluateCompare(CompareOp op, const HostTensor &lhs,
                                  const HostTensor &rhs) {
  HostTensor result(resultElementType(op), lhs.shape);
  CompareDirection direction = op.getDirection();
  bool isFloat = lhs.isFloat();
  ElementKind kind = lhs.kind();
  for (int64_t n = 0, e = result.numElements(); n < e; ++n)
    result.i[n] = isFloat ? compareValues(direction, lhs.f[n], rhs.f[n])
                          : compareValues(direction, orderKey(kind, lhs.i[n]),
                                          orderKey(kind, rhs.i[n]));
  return result;
}

static HostTensor evaluateSelect(const HostTensor &pred,
                                 const HostTensor &onTrue,
                                 const HostTensor &onFalse) {
  HostTensor result(onTrue.elementType, onTrue.shape);
  bool wholeTensor = pred.shape.empty();
  auto choose = [&](const auto &whenTrue, const auto &whenFalse, auto &to) {
    for (size_t n = 0; n < to.size(); ++n)
      to[n] = pred.i[wholeTensor ? 0 : n] ? whenTrue[n] : whenFalse[n];
  };
  if (onTrue.isFloat())
    choose(onTrue.f, onFalse.f, result.f);
  else
    choose(onTrue.i, onFalse.i, result.i);
  return result;
}

/// Each element's bits (low bits of an integer's storage, the IEEE
/// encoding of a float) read as the result's element type.
static HostTensor evaluateBitcast(BitcastOp op, const HostTensor &operand) {
  HostTensor result(resultElementType(op), operand.shape);
  Type from = operand.elementType, to = result.elementType;
  unsigned width = from.getIntOrFloatBitWidth();
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    APInt bits;
    if (auto floatType = dyn_cast<FloatType>(from)) {
      APFloat value(operand.f[n]);
      bool lost;
      value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
      bits = value.bitcastToAPInt();
    } else {
      bits = APInt(width, static_cast<uint64_t>(operand.i[n]),
                   /*isSigned=*/false);
    }
    if (auto floatType = dyn_cast<FloatType>(to))
      result.f[n] =
          APFloat(floatType.getFloatSemantics(), bits).convertToDouble();
    else
      result.i[n] = wrapToInt(result.kind(), to.isUnsignedInteger()
                                                 ? int64_t(bits.getZExtValue())
                                                 : bits.getSExtValue());
  }
  return result;
}

static HostTensor evaluateCast(CastOp op, const HostTensor &operand) {
  HostTensor result(resultElementType(op), operand.shape);
  ElementKind from = operand.kind(), to = result.kind();
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    if (to == ElementKind::I1)
      result.i[n] = isFloatKind(from) ? operand.f[n] != 0.0 : operand.i[n] != 0;
    else if (isFloatKind(from) && isFloatKind(to))
      result.f[n] = roundToFloat(to, operand.f[n]);
    else if (isFloatKind(from))
      result.i[n] = floatToInt(to, operand.f[n]);
    else if (isFloatKind(to))
      result.f[n] = intToFloat(to, operand.i[n], from == ElementKind::UI64);
    else
      result.i[n] = wrapToInt(to, operand.i[n]);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

static HostTensor evaluateBroadcastInDim(BroadcastInDimOp op,
                                         const HostTensor &operand) {
  ArrayRef<int64_t> shape = resultShape(op);
  std::vector<int64_t> operandStrides = ::kiln::computeStrides(operand.shape);
  // Result dimensions with no operand dimension, and size-1 operand
  // dimensions, repeat the same elements: stride 0.
  SmallVector<int64_t> strides(shape.size(), 0);
  for (auto [operandDim, resultDim] : llvm::enumerate(op.getDims()))
    if (operand.shape[operandDim] != 1)
      strides[resultDim] = operandStrides[operandDim];
  return copyStrided(operand, shape, 0, strides);
}

static HostTensor evaluateReshape(ReshapeOp op, const HostTensor &operand) {
  HostTensor result = operand;
  ArrayRef<int64_t> shape = resultShape(op);
  result.shape.assign(shape.begin(), shape.end());
  return result;
}

static HostTensor evaluateTranspose(TransposeOp op, const HostTensor &operand) {
  std::vector<int64_t> operandStrides = ::kiln::computeStrides(operand.shape);
  SmallVector<int64_t> strides;
  for (int64_t source : op.getPermutation())
    strides.push_back(operandStrides[source]);
  return copyStrided(operand, resultShape(op), 0, strides);
}

static HostTensor evaluateSlice(SliceOp op, const HostTensor &operand) {
  std::vector<int64_t> operandStrides = ::kiln::computeStrides(operand.shape);
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  for (auto [start, step, stride] :
       llvm::zip(op.getStart(), op.getStride(), operandStrides)) {
    offset += start * stride;
    strides.push_back(step * stride);
  }
  return copyStrided(operand, resultShape(op), offset, strides);
}

/// A strided copy walking the reversed dims backwards from their last
/// element.
static HostTensor evaluateReverse(ReverseOp op, const HostTensor &operand) {
  std::vector<int64_t> strides = ::kiln::computeStrides(operand.shape);
  int64_t offset = 0;
  for (int64_t dim : op.getDims()) {
    if (operand.shape[dim] == 0)
      return HostTensor(operand.elementType, operand.shape);
    offset += (operand.shape[dim] - 1) * strides[dim];
    strides[dim] = -strides[dim];
  }
  return copyStrided(operand, operand.shape, offset, strides);
}

static HostTensor evaluateConcat(ConcatOp op,
                                 ArrayRef<const HostTensor *> inputs) {
  HostTensor result(resultElementType(op), resultShape(op));
  int64_t dim = op.getDimension();
  // Viewed as [outer, dim * inner], each input contributes one contiguous
  // run per outer index.
  int64_t outer = ::kiln::computeNumElements(ArrayRef(result.shape).take_front(dim));
  int64_t inner =
      ::kiln::computeNumElements(ArrayRef(result.shape).drop_front(dim + 1));
  int64_t written = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor *input : inputs) {
      int64_t run = input->shape[dim] * inner;
      withStorage(*input, result, [&](const auto &from, auto &to) {
        std::copy_n(from.begin() + o * run, run, to.begin() + written);
      });
      written += run;
    }
  }
  return result;
}

/// Every result element starts as the padding value; the operand's
/// elements are then copied to low + i * (interior + 1).
static HostTensor evaluatePad(PadOp op, const HostTensor &operand,
                              const HostTensor &value) {
  HostTensor result(operand.elementType, resultShape(op));
  std::vector<int64_t> resultStrides = ::kiln::computeStrides(result.shape);
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  for (auto [low, interior, stride] :
       llvm::zip(op.getLow(), op.getInterior(), resultStrides)) {
    offset += low * stride;
    strides.push_back((interior + 1) * stride);
  }
  if (operand.isFloat())
    std::fill(result.f.begin(), result.f.end(), value.f[0]);
  else
    std::fill(result.i.begin(), result.i.end(), value.i[0]);
  withStorage(operand, result, [&](const auto &from, auto &to) {
    StridedCursor cursor(operand.shape, strides, offset);
    for (const auto &element : from) {
      to[cursor.offset()] = element;
      cursor.advance();
    }
  });
  return result;
}

//===----------------------------------------------------------------------===//
// Reductions, matmul, gather, dynamic slices
//===----------------------------------------------------------------------===//

namespace {
/// How a reduction splits the operand's dimensions: the kept ones index the
/// result, the reduced ones are walked (row-major) for each result element.
struct ReductionLayout {
  SmallVector<int64_t> keptShape, keptStrides;
  SmallVector<int64_t> reducedShape, reducedStrides;
  int64_t reducedCount = 1;

  ReductionLayout(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
    std::vector<int64_t> strides = ::kiln::computeStrides(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      bool reduced = llvm::is_contained(dims, static_cast<int64_t>(d));
      (reduced ? reducedShape : keptShape).push_back(shape[d]);
      (reduced ? reducedStrides : keptStrides).push_back(strides[d]);
      if (reduced)
        reducedCount *= shape[d];
    }
  }
};
} // namespace

/// Folds each group of reduced elements into one result element, starting
/// from `init` and combining in row-major order.
template <typename T, typename Combine>
static void reduceStorage(const std::vector<T> &from, std::vector<T> &to,
                          const ReductionLayout &layout, T init,
                          Combine combine) {
  StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
  for (T &out : to) {
    T accumulator = init;
    StridedCursor inner(layout.reducedShape, layout.reducedStrides,
                        outer.offset());
    for (int64_t r = 0; r < layout.reducedCount; ++r) {
      accumulator = combine(accumulator, from[inner.offset()]);
      inner.advance();
    }
    out = accumulator;
    outer.advance();
  }
}

static HostTensor evaluateReduceSum(Operation *op, const HostTensor &operand,
                                    ArrayRef<int64_t> dims) {
  HostTensor result(operand.elementType, resultShape(op));
  ReductionLayout layout(operand.shape, dims);
  ElementKind kind = operand.kind();
  if (operand.isFloat())
    reduceStorage(operand.f, result.f, layout, 0.0, [&](double acc, double x) {
      return roundToFloat(kind, acc + x);
    });
  else
    reduceStorage(operand.i, result.i, layout, int64_t(0),
                  [&](int64_t acc, int64_t x) {
                    return wrapToInt(kind, wrappingAdd(acc, x));
                  });
  return result;
}

static HostTensor evaluateReduceMax(ReduceMaxOp op, const HostTensor &operand) {
  HostTensor result(operand.elementType, resultShape(op));
  ReductionLayout layout(operand.shape, op.getDims());
  if (operand.isFloat())
    reduceStorage(operand.f, result.f, layout,
                  -std::numeric_limits<double>::infinity(), floatMax);
  else
    reduceStorage(operand.i, result.i, layout, intLowest(operand.kind()),
                  [kind = operand.kind()](int64_t acc, int64_t x) {
                    return intMax(kind, acc, x);
                  });
  return result;
}

static HostTensor evaluateReduceMean(ReduceMeanOp op,
                                     const HostTensor &operand) {
  HostTensor result = evaluateReduceSum(op, operand, op.getDims());
  double count = static_cast<double>(
      ReductionLayout(operand.shape, op.getDims()).reducedCount);
  ElementKind kind = result.kind();
  for (double &value : result.f)
    value = roundToFloat(kind, value / count);
  return result;
}

/// Whether `candidate` replaces `best` in an argmax (`isMax`) or argmin
/// scan: a strictly better value does, and so does a tie when the last
/// index is wanted. NaN is the extreme value both ways: the first NaN wins
/// over every number, and later NaNs count as ties.
static bool replacesBest(double candidate, double best, bool isMax,
                         bool selectLast) {
  if (std::isnan(best))
    return selectLast && std::isnan(candidate);
  if (std::isnan(candidate))
    return true;
  if (candidate == best)
    return selectLast;
  return isMax ? candidate > best : candidate < best;
}

static bool replacesBest(int64_t candidate, int64_t best, bool isMax,
                         bool selectLast) {
  if (candidate == best)
    return selectLast;
  return isMax ? candidate > best : candidate < best;
}

/// argmax/argmin along one dimension: each result element scans its slice
/// from index 0 and keeps the index of the best element so far.
template <typename Op>
static HostTensor evaluateArgReduce(Op op, const HostTensor &operand) {
  constexpr bool isMax = std::is_same_v<Op, ArgMaxOp>;
  HostTensor result(resultElementType(op), resultShape(op));
  int64_t dim = static_cast<int64_t>(op.getDim());
  bool selectLast = op.getSelectLastIndex();
  ReductionLayout layout(operand.shape, {dim});
  auto scan = [&](const auto &from) {
    StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
    int64_t stride = layout.reducedStrides[0];
    for (int64_t &out : result.i) {
      int64_t bestIndex = 0;
      auto best = from[outer.offset()];
      for (int64_t k = 1; k < layout.reducedCount; ++k) {
        auto candidate = from[outer.offset() + k * stride];
        if (replacesBest(candidate, best, isMax, selectLast)) {
          best = candidate;
          bestIndex = k;
        }
      }
      out = bestIndex;
      outer.advance();
    }
  };
  if (operand.isFloat()) {
    scan(operand.f);
  } else {
    // Order keys compare like the values (ui64 included).
    std::vector<int64_t> keys(operand.i);
    for (int64_t &key : keys)
      key = orderKey(operand.kind(), key);
    scan(keys);
  }
  return result;
}

/// Each slice along `dim` stably sorted (std::stable_sort), NaN above
/// everything, unsigned integers by their order keys.
static Results evaluateSort(SortOp op, const HostTensor &operand) {
  HostTensor values(operand.elementType, operand.shape);
  HostTensor indices(op.getIndices().getType().getElementType(),
                     operand.shape);
  int64_t dim = static_cast<int64_t>(op.getDim());
  bool descending = op.getDescending();
  ReductionLayout layout(operand.shape, {dim});
  int64_t count = layout.reducedCount, stride = layout.reducedStrides[0];
  std::vector<int64_t> keys;
  if (!operand.isFloat()) {
    keys = operand.i;
    for (int64_t &key : keys)
      key = orderKey(operand.kind(), key);
  }
  auto less = [&](int64_t a, int64_t b) {
    if (operand.isFloat()) {
      double x = operand.f[a], y = operand.f[b];
      return std::isnan(y) ? !std::isnan(x) : x < y;
    }
    return keys[a] < keys[b];
  };
  StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
  int64_t slices = count == 0 ? 0 : operand.numElements() / count;
  std::vector<int64_t> order(count);
  for (int64_t s = 0; s < slices; ++s) {
    int64_t base = outer.offset();
    for (int64_t k = 0; k < count; ++k)
      order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      int64_t x = base + a * stride, y = base + b * stride;
      return descending ? less(y, x) : less(x, y);
    });
    for (int64_t k = 0; k < count; ++k) {
      int64_t from = base + order[k] * stride, to = base + k * stride;
      if (operand.isFloat())
        values.f[to] = operand.f[from];
      else
        values.i[to] = operand.i[from];
      indices.i[to] = order[k];
    }
    outer.advance();
  }
  Results results;
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return results;
}

/// Running sums along `dim`, in the order the op defines (from the first
/// element, or from the last with `reverse`), rounded or wrapped after
/// every addition as sequential code in the element type does.
static HostTensor evaluateCumsum(CumsumOp op, const HostTensor &operand) {
  HostTensor result(operand.elementType, operand.shape);
  int64_t dim = static_cast<int64_t>(op.getDim());
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  ElementKind kind = operand.kind();
  ReductionLayout layout(operand.shape, {dim});
  int64_t stride = layout.reducedStrides[0];
  int64_t n = layout.reducedCount;
  auto scan = [&](const auto &from, auto &to, auto zero, auto addFn) {
    StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
    int64_t lines = ::kiln::computeNumElements(layout.keptShape);
    for (int64_t line = 0; line < lines; ++line) {
      auto sum = zero;
      for (int64_t step = 0; step < n; ++step) {
        int64_t k = reverse ? n - 1 - step : step;
        int64_t offset = outer.offset() + k * stride;
        if (exclusive) {
          to[offset] = sum;
          sum = addFn(sum, from[offset]);
        } else {
          sum = addFn(sum, from[offset]);
          to[offset] = sum;
        }
      }
      outer.advance();
    }
  };
  if (operand.isFloat())
    scan(operand.f, result.f, 0.0,
         [&](double a, double b) { return roundToFloat(kind, a + b); });
  else
    scan(operand.i, result.i, int64_t(0), [&](int64_t a, int64_t b) {
      return wrapToInt(kind, wrappingAdd(a, b));
    });
  return result;
}

/// Each output element accumulates k = 0..K-1 in order, rounding the
/// product and then the sum, as a scalar multiply-add loop in the element
/// type does. bf16 operands accumulate in f32 (their products are exact
/// there) and the sum is rounded once to the result's element type; f16
/// operands arrive widened to f32 (evaluateWidened) and get the same.
static HostTensor evaluateMatmul(MatmulOp op, const HostTensor &lhs,
                                 const HostTensor &rhs) {
  HostTensor result(op.getType().getElementType(), resultShape(op));
  ElementKind kind = lhs.kind();
  bool bf16 = kind == ElementKind::BF16;
  if (bf16)
    kind = ElementKind::F32;
  bool isFloat = lhs.isFloat();
  size_t rank = lhs.shape.size();
  int64_t batch = rank == 3 ? lhs.shape[0] : 1;
  int64_t m = lhs.shape[rank - 2], k = lhs.shape[rank - 1],
          n = rhs.shape[rank - 1];
  for (int64_t b = 0; b < batch; ++b) {
    int64_t lhsBase = b * m * k, rhsBase = b * k * n, outBase = b * m * n;
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        int64_t out = outBase + row * n + col;
        for (int64_t p = 0; p < k; ++p) {
          int64_t a = lhsBase + row * k + p, c = rhsBase + p * n + col;
          if (isFloat) {
            double product = roundToFloat(kind, lhs.f[a] * rhs.f[c]);
            result.f[out] = roundToFloat(kind, result.f[out] + product);
          } else {
            int64_t product = wrapToInt(kind, wrappingMul(lhs.i[a], rhs.i[c]));
            result.i[out] = wrapToInt(kind, wrappingAdd(result.i[out], product));
          }
        }
      }
    }
  }
  if (bf16) {
    ElementKind resultKind = result.kind();
    for (double &value : result.f)
      value = roundToFloat(resultKind, value);
  }
  return result;
}

/// Each output element accumulates over c < C / groups and the kernel
/// offsets in row-major order, rounding the product and then the sum as
/// matmul does. Elements of the dilated, padded input that are holes or
/// padding are zeros; their terms are skipped (they add nothing to a
/// finite sum).
static HostTensor evaluateConv(ConvOp op, const HostTensor &input,
                               const HostTensor &weight) {
  HostTensor result(input.elementType, resultShape(op));
  ElementKind kind = input.kind();
  size_t spatial = input.shape.size() - 2;
  ArrayRef<int64_t> strides = op.getStrides(), low = op.getPaddingLow(),
                    lhsDilation = op.getLhsDilation(),
                    rhsDilation = op.getRhsDilation();
  int64_t groups = op.getGroups();
  int64_t batch = input.shape[0], channels = input.shape[1];
  int64_t outChannels = weight.shape[0];
  int64_t groupChannels = channels / groups;
  int64_t groupOutChannels = outChannels / groups;
  ArrayRef<int64_t> inSizes = ArrayRef(input.shape).drop_front(2);
  ArrayRef<int64_t> kernelSizes = ArrayRef(weight.shape).drop_front(2);
  ArrayRef<int64_t> outSizes = ArrayRef(result.shape).drop_front(2);
  int64_t inSpatial = ::kiln::computeNumElements(inSizes);
  int64_t kernelSpatial = ::kiln::computeNumElements(kernelSizes);
  int64_t outSpatial = ::kiln::computeNumElements(outSizes);
  std::vector<int64_t> inStrides = ::kiln::computeStrides(inSizes);
  SmallVector<int64_t> outIndex(spatial), kernelIndex(spatial);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < outChannels; ++o) {
      int64_t firstChannel = (o / groupOutChannels) * groupChannels;
      for (int64_t e = 0; e < outSpatial; ++e) {
        // The spatial index of output element e, row-major.
        for (int64_t d = spatial - 1, rest = e; d >= 0; --d) {
          outIndex[d] = rest % outSizes[d];
          rest /= outSizes[d];
        }
        double sum = 0.0;
        for (int64_t c = 0; c < groupChannels; ++c) {
          int64_t inBase = (n * channels + firstChannel + c) * inSpatial;
          int64_t weightBase = (o * groupChannels + c) * kernelSpatial;
          for (int64_t k = 0; k < kernelSpatial; ++k) {
            for (int64_t d = spatial - 1, rest = k; d >= 0; --d) {
              kernelIndex[d] = rest % kernelSizes[d];
              rest /= kernelSizes[d];
            }
            // Position in the dilated, padded input, then in the input.
            int64_t offset = inBase;
            bool inside = true;
            for (size_t d = 0; d < spatial && inside; ++d) {
              int64_t position = outIndex[d] * strides[d] +
                                 kernelIndex[d] * rhsDilation[d] - low[d];
              if (position < 0 || position % lhsDilation[d] != 0 ||
                  position / lhsDilation[d] >= inSizes[d])
                inside = false;
              else
                offset += (position / lhsDilation[d]) * inStrides[d];
            }
            if (!inside)
              continue;
            double product =
                roundToFloat(kind, input.f[offset] * weight.f[weightBase + k]);
            sum = roundToFloat(kind, sum + product);
          }
        }
        result.f[(n * outChannels + o) * outSpatial + e] = sum;
      }
    }
  }
  return result;
}

static HostTensor evaluateGather(GatherOp op, const HostTensor &table,
                                 const HostTensor &indices) {
  HostTensor result(table.elementType, resultShape(op));
  int64_t rows = table.shape[0];
  int64_t rowSize = ::kiln::computeNumElements(ArrayRef(table.shape).drop_front());
  for (size_t n = 0; n < indices.i.size(); ++n) {
    int64_t row = std::clamp<int64_t>(indices.i[n], 0, rows - 1);
    withStorage(table, result, [&](const auto &from, auto &to) {
      std::copy_n(from.begin() + row * rowSize, rowSize,
                  to.begin() + n * rowSize);
    });
  }
  return result;
}

/// The table with each update row added into its clamped row, one index
/// after the other in row-major order, as KilnOps.td defines the order.
static HostTensor evaluateScatterAdd(const HostTensor &table,
                                     const HostTensor &indices,
                                     const HostTensor &updates) {
  HostTensor result = table;
  ElementKind kind = table.kind();
  int64_t rows = table.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(table.shape).drop_front());
  for (size_t n = 0; n < indices.i.size(); ++n) {
    int64_t row = std::clamp<int64_t>(indices.i[n], 0, rows - 1);
    for (int64_t k = 0; k < rowSize; ++k) {
      int64_t to = row * rowSize + k, from = n * rowSize + k;
      if (table.isFloat())
        result.f[to] = roundToFloat(kind, result.f[to] + updates.f[from]);
      else
        result.i[to] =
            wrapToInt(kind, wrappingAdd(result.i[to], updates.i[from]));
    }
  }
  return result;
}

/// The first of `count` rows of a `rows`-row tensor that a dynamic slice
/// reads or writes: the index clamped so that all of them are in bounds.
static int64_t clampedRowStart(const HostTensor &index, int64_t rows,
                               int64_t count) {
  return std::clamp<int64_t>(index.i[0], 0, rows - count);
}

static HostTensor evaluateDynamicSlice(DynamicSliceOp op,
                                       const HostTensor &operand,
                                       const HostTensor &index) {
  HostTensor result(operand.elementType, resultShape(op));
  int64_t count = result.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(operand.shape).drop_front());
  int64_t start = clampedRowStart(index, operand.shape[0], count);
  withStorage(operand, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin() + start * rowSize, count * rowSize, to.begin());
  });
  return result;
}

static HostTensor evaluateDynamicUpdateSlice(const HostTensor &operand,
                                             const HostTensor &update,
                                             const HostTensor &index) {
  HostTensor result = operand;
  int64_t count = update.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(operand.shape).drop_front());
  int64_t start = clampedRowStart(index, operand.shape[0], count);
  withStorage(update, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin(), count * rowSize, to.begin() + start * rowSize);
  });
  return result;
}

/// A stack is a tensor whose leading dimension is its capacity, as in
/// compiled code; rows reserved but never pushed read as zeros here.
static HostTensor evaluateStackReserve(const HostTensor &stack,
                                       const HostTensor &rows) {
  int64_t capacity = stack.shape[0];
  if (rows.i[0] <= capacity)
    return stack;
  SmallVector<int64_t> shape(stack.shape.begin(), stack.shape.end());
  shape[0] = rows.i[0];
  HostTensor result(stack.elementType, shape);
  withStorage(stack, result, [&](const auto &from, auto &to) {
    std::copy(from.begin(), from.end(), to.begin());
  });
  return result;
}

static llvm::Expected<HostTensor> evaluateStackPush(StackPushOp op,
                                                    const HostTensor &stack,
                                                    const HostTensor &index,
                                                    const HostTensor &value) {
  int64_t capacity = stack.shape[0];
  int64_t row = index.i[0];
  if (row < 0 || row >= capacity)
    return opError(op, "pushes row " + Twine(row) +
                           " onto a stack with capacity " + Twine(capacity));
  HostTensor result = stack;
  int64_t rowSize = value.numElements();
  withStorage(value, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin(), rowSize, to.begin() + row * rowSize);
  });
  return result;
}

static llvm::Expected<HostTensor> evaluateStackRead(StackReadOp op,
                                                    const HostTensor &stack,
                                                    const HostTensor &index) {
  int64_t rows = stack.shape[0];
  int64_t row = index.i[0];
  if (row < 0 || row >= rows)
    return opError(op, "reads row " + Twine(row) +
                           " of a stack with capacity " + Twine(rows));
  HostTensor result(stack.elementType, ArrayRef(stack.shape).drop_front());
  int64_t rowSize = result.numElements();
  withStorage(stack, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin() + row * rowSize, rowSize, to.begin());
  });
  return result;
}

//===----------------------------------------------------------------------===//
// Windowed reductions
//===----------------------------------------------------------------------===//

namespace {
/// The window attributes shared by kiln.reduce_window and
/// kiln.reduce_window_max_grad, and the walk over one window placement.
struct WindowLayout {
  ArrayRef<int64_t> operandShape, window, strides, paddingLow, dilations;
  std::vector<int64_t> operandStrides;
  int64_t windowVolume;

  template <typename OpTy>
  WindowLayout(OpTy op, ArrayRef<int64_t> operandShape)
      : operandShape(operandShape), window(op.getWindow()),
        strides(op.getStrides()), paddingLow(op.getPaddingLow()),
        dilations(op.getDilations()),
        operandStrides(::kiln::computeStrides(operandShape)),
        windowVolume(::kiln::computeNumElements(window)) {}

  /// Calls `fn(offset)` for each window element of placement `placement`
  /// in row-major window order, with the operand element's storage offset,
  /// or -1 where the element lies in the padding.
  template <typename Fn>
  void forEachElement(ArrayRef<int64_t> placement, Fn fn) const {
    size_t rank = window.size();
    SmallVector<int64_t, 4> w(rank, 0);
    for (int64_t n = 0; n < windowVolume; ++n) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank && offset >= 0; ++d) {
        int64_t position =
            placement[d] * strides[d] - paddingLow[d] + w[d] * dilations[d];
        if (position < 0 || position >= operandShape[d])
          offset = -1;
        else
          offset += position * operandStrides[d];
      }
      fn(offset);
      for (size_t d = rank; d-- > 0;) {
        if (++w[d] < window[d])
          break;
        w[d] = 0;
      }
    }
  }
};

/// Row-major multi-indices over `shape`.
class IndexCounter {
public:
  explicit IndexCounter(ArrayRef<int64_t> shape)
      : shape(shape), index(shape.size(), 0) {}
  ArrayRef<int64_t> get() const { return index; }
  void advance() {
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        return;
      index[d] = 0;
    }
  }

private:
  SmallVector<int64_t, 4> shape;
  SmallVector<int64_t, 4> index;
};
} // namespace

/// Each result element folds its window, starting from the identity; a
/// padded position contributes the identity.
static HostTensor evaluateReduceWindow(ReduceWindowOp op,
                                       const HostTensor &operand) {
  HostTensor result(operand.elementType, resultShape(op));
  WindowLayout layout(op, operand.shape);
  ElementKind kind = operand.kind();
  bool isMax = op.getKind() == ReduceWindowKind::Max;
  IndexCounter placement(result.shape);
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    if (operand.isFloat()) {
      double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
      layout.forEachElement(placement.get(), [&](int64_t offset) {
        if (offset < 0)
          return;
        double x = operand.f[offset];
        acc = isMax ? floatMax(acc, x) : roundToFloat(kind, acc + x);
      });
      result.f[n] = acc;
    } else {
      int64_t acc = isMax ? intLowest(kind) : 0;
      layout.forEachElement(placement.get(), [&](int64_t offset) {
        if (offset < 0)
          return;
        int64_t x = operand.i[offset];
        acc = isMax ? intMax(kind, acc, x)
                    : wrapToInt(kind, wrappingAdd(acc, x));
      });
      result.i[n] = acc;
    }
    placement.advance();
  }
  return result;
}

/// Visits the placements in row-major order; each adds its cotangent to
/// the element it selects (see the op's description).
static HostTensor evaluateReduceWindowMaxGrad(ReduceWindowMaxGradOp op,
                                              const HostTensor &operand,
                                              const HostTensor &cotangent) {
  HostTensor result(operand.elementType, operand.shape);
  WindowLayout layout(op, operand.shape);
  ElementKind kind = operand.kind();
  IndexCounter placement(cotangent.shape);
  for (int64_t n = 0, e = cotangent.numElements(); n < e; ++n) {
    int64_t selected = -1;
    layout.forEachElement(placement.get(), [&](int64_t offset) {
      if (offset < 0)
        return;
      if (selected < 0) {
        selected = offset;
        return;
      }
      if (operand.isFloat()) {
        double x = operand.f[offset], best = operand.f[selected];
        if (x > best || (std::isnan(x) && !std::isnan(best)))
          selected = offset;
      } else if (operand.i[offset] > operand.i[selected]) {
        selected = offset;
      }
    });
    if (selected >= 0) {
      if (operand.isFloat())
        result.f[selected] =
            roundToFloat(kind, result.f[selected] + cotangent.f[n]);
      else
        result.i[selected] =
            wrapToInt(kind, wrappingAdd(result.i[selected], cotangent.i[n]));
    }
    placement.advance();
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

namespace {
/// Holds what outlives a single block: the options, the call depth, and
/// which callees have been verified.
class Evaluator {
public:
  /// An evaluator for rank `rank` of the run whose collectives meet in
  /// `ranks`.
  Evaluator(const EvaluatorOptions &options, ::kiln::SimulatedRanks &ranks,
            unsigned rank)
      : options(options), ranks(ranks), rank(rank) {}

  /// Skips verification of the functions it calls: evaluateSpmd verifies
  /// them once, before the ranks' threads start, because verification
  /// reports through the MLIRContext's diagnostic handlers, which one
  /// thread at a time may install.
  void assumeVerified() { verified = true; }

  /// Checks `inputs` against the signature of `func` and runs its body.
  llvm::Expected<Results> callFunction(func::FuncOp func,
                                       ArrayRef<HostTensor> inputs);

private:
  /// Runs the ops of `block` with its arguments bound to `args` and returns
  /// the operands of its terminator (kiln.yield or func.return). Regions of
  /// kiln ops are isolated from above, so the block's arguments and its own
  /// ops are the only values it can see.
  llvm::Expected<Results> runBlock(Block &block, Results args);

  llvm::Expected<Results> evaluateOp(Operation *op,
                                     ArrayRef<const HostTensor *> operands);
  /// evaluateOp for an op that mlir::kiln::widensHalfPrecision: on the
  /// operands widened to f32, its float results rounded to the op's types.
  llvm::Expected<Results> evaluateWidened(Operation *op,
                                          ArrayRef<const HostTensor *> operands);
  /// The op's semantics in its operands' types.
  llvm::Expected<Results> evaluateInTypes(Operation *op,
                                          ArrayRef<const HostTensor *> operands);

  llvm::Expected<Results> evaluateCondOp(CondOp op,
                                         ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results>
  evaluateWhileOp(WhileOp op, ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results> evaluateForOp(ForOp op,
                                        ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results>
  evaluateFusedOp(FusedOp op, ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results> evaluateCallOp(func::CallOp op,
                                         ArrayRef<const HostTensor *> operands);
  /// A collective or start op: this rank's part of the exchange.
  llvm::Expected<Results> exchange(Operation *op, const HostTensor &operand);

  llvm::Error verifyOnce(func::FuncOp func);
  static llvm::Error checkInputs(func::FuncOp func,
                                 ArrayRef<HostTensor> inputs);

  const EvaluatorOptions &options;
  ::kiln::SimulatedRanks &ranks;
  unsigned rank;
  bool verified = false;
  unsigned callDepth = 0;
  llvm::DenseSet<Operation *> verifiedFunctions;
};
} // namespace

static Results copyAll(ArrayRef<const HostTensor *> tensors) {
  Results copies;
  for (const HostTensor *tensor : tensors)
    copies.push_back(*tensor);
  return copies;
}

/// Runs the verifier on `func`, its diagnostics collected into the error.
static llvm::Error verifyFunction(func::FuncOp func) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(func.getContext(), [&](Diagnostic &diag) {
    diagnostics +=
        "\n  " + describeLocation(diag.getLocation()) + ": " + diag.str();
    return success();
  });
  if (failed(verify(func)))
    return makeError("the IR fails verification in " + describeOp(func) +
                     diagnostics);
  return llvm::Error::success();
}

llvm::Error Evaluator::verifyOnce(func::FuncOp func) {
  if (verified || verifiedFunctions.contains(func))
    return llvm::Error::success();
  if (llvm::Error error = verifyFunction(func))
    return error;
  verifiedFunctions.insert(func);
  return llvm::Error::success();
}

llvm::Error Evaluator::checkInputs(func::FuncOp func,
                                   ArrayRef<HostTensor> inputs) {
  TypeRange argumentTypes = func.getArgumentTypes();
  if (inputs.size() != argumentTypes.size())
    return opError(func, "expected " + Twine(argumentTypes.size()) +
                             " inputs but got " + Twine(inputs.size()));
  for (auto [index, input, type] : llvm::enumerate(inputs, argumentTypes)) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !tensorType.hasStaticShape() ||
        !::kiln::classifyElementType(tensorType.getElementType()))
      return opError(func, "argument #" + Twine(index) + " has type " +
                               typeString(type) +
                               ", which the evaluator cannot represent");
    if (input.elementType != tensorType.getElementType() ||
        ArrayRef(input.shape) != tensorType.getShape())
      return opError(func, "input #" + Twine(index) + " is " +
                               describeInput(input) + " but the argument is " +
                               typeString(type));
    size_t stored = input.isFloat() ? input.f.size() : input.i.size();
    if (static_cast<int64_t>(stored) != tensorType.getNumElements())
      return opError(func, "input #" + Twine(index) + " stores " +
                               Twine(stored) + " elements but its shape has " +
                               Twine(tensorType.getNumElements()));
  }
  return llvm::Error::success();
}

llvm::Expected<Results> Evaluator::callFunction(func::FuncOp func,
                                                ArrayRef<HostTensor> inputs) {
  if (func.isExternal())
    return opError(func, "cannot evaluate a function without a body");
  if (callDepth >= options.maxCallDepth)
    return opError(func, "call depth exceeds the limit of " +
                             Twine(options.maxCallDepth));
  if (llvm::Error error = verifyOnce(func))
    return std::move(error);
  if (llvm::Error error = checkInputs(func, inputs))
    return std::move(error);
  if (!func.getBody().hasOneBlock())
    return opError(func, "only single-block function bodies are supported");
  ++callDepth;
  llvm::Expected<Results> results =
      runBlock(func.getBody().front(), Results(inputs.begin(), inputs.end()));
  --callDepth;
  return results;
}

llvm::Expected<Results> Evaluator::runBlock(Block &block, Results args) {
  if (block.getNumArguments() != args.size())
    return makeError("internal error: a block with " +
                     Twine(block.getNumArguments()) + " arguments received " +
                     Twine(args.size()) + " values");
  llvm::DenseMap<Value, HostTensor> values;
  for (auto [argument, tensor] : llvm::zip(block.getArguments(), args))
    values[argument] = std::move(tensor);

  SmallVector<const HostTensor *> operands;
  for (Operation &op : block) {
    operands.clear();
    for (Value operand : op.getOperands()) {
      auto it = values.find(operand);
      if (it == values.end())
        return opError(&op, "operand defined outside the enclosing block");
      operands.push_back(&it->second);
    }
    if (isa<YieldOp, func::ReturnOp>(op))
      return copyAll(operands);

    llvm::Expected<Results> results = evaluateOp(&op, operands);
    if (!results)
      return results.takeError();
    if (results->size() != op.getNumResults())
      return opError(&op, "internal error: produced " +
                              Twine(results->size()) + " values for " +
                              Twine(op.getNumResults()) + " results");
    for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
      values[result] = std::move(tensor);
  }
  return makeError("block does not end in kiln.yield or func.return");
}

static llvm::Expected<Results> single(HostTensor tensor) {
  Results results;
  results.push_back(std::move(tensor));
  return results;
}

static llvm::Expected<Results> single(llvm::Expected<HostTensor> tensor) {
  if (!tensor)
    return tensor.takeError();
  return single(std::move(*tensor));
}

llvm::Expected<Results>
Evaluator::evaluateOp(Operation *op, ArrayRef<const HostTensor *> operands) {
  if (widensHalfPrecision(op))
    return evaluateWidened(op, operands);
  return evaluateInTypes(op, operands);
}

llvm::Expected<Results>
Evaluator::evaluateWidened(Operation *op,
                           ArrayRef<const HostTensor *> operands) {
  Type f32 = Float32Type::get(op->getContext());
  std::vector<HostTensor> widened;
  widened.reserve(operands.size());
  for (const HostTensor *operand : operands) {
    widened.push_back(*operand);
    // f16 and bf16 values are f32 values as they are.
    if (operand->elementType.isF16() || operand->elementType.isBF16())
      widened.back().elementType = f32;
  }
  SmallVector<const HostTensor *> pointers;
  for (const HostTensor &tensor : widened)
    pointers.push_back(&tensor);
  llvm::Expected<Results> results = evaluateInTypes(op, pointers);
  if (!results)
    return results.takeError();
  for (auto [tensor, type] : llvm::zip(*results, op->getResultTypes())) {
    Type element = getElementTypeOrSelf(type);
    if (!tensor.isFloat() || !isa<FloatType>(element))
      continue;
    HostTensor narrowed(element, tensor.shape);
    ElementKind kind = narrowed.kind();
    for (auto [to, from] : llvm::zip(narrowed.f, tensor.f))
      to = roundToFloat(kind, from);
    tensor = std::move(narrowed);
  }
  return results;
}

llvm::Expected<Results>
Evaluator::evaluateInTypes(Operation *op,
                           ArrayRef<const HostTensor *> operands) {
  auto arg = [&](unsigned index) -> const HostTensor & {
    return *operands[index];
  };
  using Result = llvm::Expected<Results>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      // Constants.
      .Case([&](ConstantOp op) { return single(evaluateConstant(op)); })
      .Case([&](IotaOp op) { return single(evaluateIota(op)); })
      // Elementwise binary.
      .Case([&](AddOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return a + b; },
            wrappingAdd));
      })
      .Case([&](SubOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return a - b; },
            wrappingSub));
      })
      .Case([&](MulOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return a * b; },
            wrappingMul));
      })
      .Case([&](DivOp op) { return single(evaluateDiv(op, arg(0), arg(1))); })
      .Case([&](MaxOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(arg(0), arg(1), floatMax,
                                [kind](int64_t a, int64_t b) {
                                  return intMax(kind, a, b);
                                }));
      })
      .Case([&](MinOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(arg(0), arg(1), floatMin,
                                [kind](int64_t a, int64_t b) {
                                  return intMin(kind, a, b);
                                }));
      })
      .Case([&](PowOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return std::pow(a, b); },
            [](int64_t a, int64_t) { return a; }));
      })
      // Elementwise unary.
      .Case([&](NegOp) {
        return single(mapUnary(
            arg(0), [](double x) { return -x; },
            [](int64_t x) { return wrappingSub(0, x); }));
      })
      .Case([&](AbsOp) {
        bool isUnsigned = isUnsignedKind(arg(0).kind());
        return single(mapUnary(
            arg(0), [](double x) { return std::fabs(x); },
            [isUnsigned](int64_t x) {
              return !isUnsigned && x < 0 ? wrappingSub(0, x) : x;
            }));
      })
      .Case([&](ReluOp) {
        bool isUnsigned = isUnsignedKind(arg(0).kind());
        return single(mapUnary(
            arg(0), [](double x) { return floatMax(x, 0.0); },
            [isUnsigned](int64_t x) {
              return isUnsigned ? x : std::max<int64_t>(x, 0);
            }));
      })
      .Case([&](ExpOp) {
        return single(mapFloat(arg(0), [](double x) { return std::exp(x); }));
      })
      .Case([&](LogOp) {
        return single(mapFloat(arg(0), [](double x) { return std::log(x); }));
      })
      .Case([&](SqrtOp) {
        return single(mapFloat(arg(0), [](double x) { return std::sqrt(x); }));
      })
      .Case([&](RsqrtOp) {
        return single(
            mapFloat(arg(0), [](double x) { return 1.0 / std::sqrt(x); }));
      })
      .Case([&](TanhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::tanh(x); }));
      })
      .Case([&](SigmoidOp) {
        return single(mapFloat(
            arg(0), [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
      })
      .Case([&](SinOp) {
        return single(mapFloat(arg(0), [](double x) { return std::sin(x); }));
      })
      .Case([&](CosOp) {
        return single(mapFloat(arg(0), [](double x) { return std::cos(x); }));
      })
      .Case([&](ErfOp) {
        return single(mapFloat(arg(0), [](double x) { return std::erf(x); }));
      })
      .Case([&](FloorOp) {
        return single(mapFloat(arg(0), [](double x) { return std::floor(x); }));
      })
      .Case([&](CeilOp) {
        return single(mapFloat(arg(0), [](double x) { return std::ceil(x); }));
      })
      .Case([&](RoundOp) {
        return single(mapFloat(arg(0), [](double x) { return roundHalfToEven(x); }));
      })
      .Case([&](TanOp) {
        return single(mapFloat(arg(0), [](double x) { return std::tan(x); }));
      })
      .Case([&](AsinOp) {
        return single(mapFloat(arg(0), [](double x) { return std::asin(x); }));
      })
      .Case([&](AcosOp) {
        return single(mapFloat(arg(0), [](double x) { return std::acos(x); }));
      })
      .Case([&](AtanOp) {
        return single(mapFloat(arg(0), [](double x) { return std::atan(x); }));
      })
      .Case([&](SinhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::sinh(x); }));
      })
      .Case([&](CoshOp) {
        return single(mapFloat(arg(0), [](double x) { return std::cosh(x); }));
      })
      .Case([&](AsinhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::asinh(x); }));
      })
      .Case([&](AcoshOp) {
        return single(mapFloat(arg(0), [](double x) { return std::acosh(x); }));
      })
      .Case([&](AtanhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::atanh(x); }));
      })
      .Case([&](SignOp) {
        bool isUnsigned = isUnsignedKind(arg(0).kind());
        return single(
            mapUnary(arg(0), floatSign, [isUnsigned](int64_t x) -> int64_t {
              if (isUnsigned)
                return x != 0;
              return x > 0 ? 1 : x < 0 ? -1 : 0;
            }));
      })
      .Case([&](RemOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return std::fmod(a, b); },
            [kind](int64_t a, int64_t b) { return intRem(kind, a, b); }));
      })
      // Bitwise (i1 and the integers; wrapToInt keeps i1 to 0 or 1 and
      // unsigned values zero-extended).
      .Case([&](NotOp) {
        return single(mapUnary(
            arg(0), [](double x) { return x; },
            [&](int64_t x) { return arg(0).kind() == ElementKind::I1 ? !x : ~x; }));
      })
      .Case([&](AndOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [](int64_t a, int64_t b) { return a & b; }));
      })
      .Case([&](OrOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [](int64_t a, int64_t b) { return a | b; }));
      })
      .Case([&](XorOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [](int64_t a, int64_t b) { return a ^ b; }));
      })
      .Case([&](ShiftLeftOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [kind](int64_t a, int64_t b) { return shiftLeft(kind, a, b); }));
      })
      .Case([&](ShiftRightOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [kind](int64_t a, int64_t b) { return shiftRight(kind, a, b); }));
      })
      .Case([&](RngBitsOp op) {
        return single(evaluateRngBits(op, arg(0), arg(1), arg(2), arg(3)));
      })
      // Comparison, selection, conversion.
      .Case([&](CompareOp op) {
        return single(evaluateCompare(op, arg(0), arg(1)));
      })
      .Case([&](SelectOp) {
        return single(evaluateSelect(arg(0), arg(1), arg(2)));
      })
      .Case([&](CastOp op) { return single(evaluateCast(op, arg(0))); })
      .Case([&](BitcastOp op) { return single(evaluateBitcast(op, arg(0))); })
      // Shape manipulation.
      .Case([&](BroadcastInDimOp op) {
        return single(evaluateBroadcastInDim(op, arg(0)));
      })
      .Case([&](ReshapeOp op) { return single(evaluateReshape(op, arg(0))); })
      .Case([&](TransposeOp op) {
        return single(evaluateTranspose(op, arg(0)));
      })
      .Case([&](SliceOp op) { return single(evaluateSlice(op, arg(0))); })
      .Case([&](ConcatOp op) { return single(evaluateConcat(op, operands)); })
      .Case([&](ReverseOp op) { return single(evaluateReverse(op, arg(0))); })
      .Case([&](PadOp op) { return single(evaluatePad(op, arg(0), arg(1))); })
      // Reductions, contractions, gathers.
      .Case([&](ReduceSumOp op) {
        return single(evaluateReduceSum(op, arg(0), op.getDims()));
      })
      .Case([&](ReduceMaxOp op) {
        return single(evaluateReduceMax(op, arg(0)));
      })
      .Case([&](ReduceMeanOp op) {
        return single(evaluateReduceMean(op, arg(0)));
      })
      .Case([&](ArgMaxOp op) {
        return single(evaluateArgReduce(op, arg(0)));
      })
      .Case([&](ArgMinOp op) {
        return single(evaluateArgReduce(op, arg(0)));
      })
      .Case([&](CumsumOp op) { return single(evaluateCumsum(op, arg(0))); })
      .Case([&](SortOp op) -> llvm::Expected<Results> {
        return evaluateSort(op, arg(0));
      })
      .Case([&](ReduceWindowOp op) {
        return single(evaluateReduceWindow(op, arg(0)));
      })
      .Case([&](ReduceWindowMaxGradOp op) {
        return single(evaluateReduceWindowMaxGrad(op, arg(0), arg(1)));
      })
      .Case([&](MatmulOp op) {
        return single(evaluateMatmul(op, arg(0), arg(1)));
      })
      .Case([&](ConvOp op) {
        return single(evaluateConv(op, arg(0), arg(1)));
      })
      .Case([&](GatherOp op) {
        return single(evaluateGather(op, arg(0), arg(1)));
      })
      .Case([&](ScatterAddOp) {
        return single(evaluateScatterAdd(arg(0), arg(1), arg(2)));
      })
      .Case([&](AttentionOp op) -> Result {
        return evaluateAttention(op, arg(0), arg(1), arg(2),
                                 op.getMask() ? &arg(3) : nullptr);
      })
      .Case([&](AttentionGradOp op) -> Result {
        return evaluateAttentionGrad(op, arg(0), arg(1), arg(2), arg(3),
                                     arg(4), arg(5),
                                     op.getMask() ? &arg(6) : nullptr);
      })
      .Case([&](DynamicSliceOp op) {
        return single(evaluateDynamicSlice(op, arg(0), arg(1)));
      })
      .Case([&](DynamicUpdateSliceOp) {
        return single(evaluateDynamicUpdateSlice(arg(0), arg(1), arg(2)));
      })
      // Stacks.
      .Case([&](StackEmptyOp op) {
        SmallVector<int64_t> shape(op.getType().getShape());
        shape[0] = 0;
        return single(HostTensor(op.getType().getElementType(), shape));
      })
      .Case([&](StackReserveOp) {
        return single(evaluateStackReserve(arg(0), arg(1)));
      })
      .Case([&](StackPushOp op) {
        return single(evaluateStackPush(op, arg(0), arg(1), arg(2)));
      })
      .Case([&](StackReadOp op) {
        return single(evaluateStackRead(op, arg(0), arg(1)));
      })
      // Control flow and calls.
      .Case([&](CondOp op) { return evaluateCondOp(op, operands); })
      .Case([&](WhileOp op) { return evaluateWhileOp(op, operands); })
      .Case([&](ForOp op) { return evaluateForOp(op, operands); })
      .Case([&](FusedOp op) { return evaluateFusedOp(op, operands); })
      .Case([&](func::CallOp op) { return evaluateCallOp(op, operands); })
      // Collectives.
      .Case<AllReduceOp, AllGatherOp, ReduceScatterOp, CollectiveBroadcastOp,
            AllToAllOp, CollectivePermuteOp, AllReduceStartOp,
            AllGatherStartOp, ReduceScatterStartOp>(
          [&](Operation *op) { return exchange(op, arg(0)); })
      // The start op computed the value; the wait hands it on.
      .Case([&](CollectiveWaitOp) { return single(arg(0)); })
      .Case([&](RankOp op) {
        return single(HostTensor::fromInts(op.getType().getElementType(), {},
                                           {static_cast<int64_t>(rank)}));
      })
      .Default([&](Operation *op) -> Result {
        return opError(op, "unsupported op");
      });
}

/// Reads a rank-0 i1 predicate.
static bool isTrue(const HostTensor &predicate) { return predicate.i[0] != 0; }

llvm::Expected<Results>
Evaluator::evaluateCondOp(CondOp op, ArrayRef<const HostTensor *> operands) {
  bool taken = isTrue(*operands[0]);
  Region &region = taken ? op.getThenRegion() : op.getElseRegion();
  llvm::Expected<Results> results =
      runBlock(region.front(), copyAll(operands.drop_front()));
  if (!results)
    return addContext(results.takeError(), op,
                      taken ? "in the then region of" : "in the else region of");
  return results;
}

llvm::Expected<Results>
Evaluator::evaluateWhileOp(WhileOp op, ArrayRef<const HostTensor *> operands) {
  Results carried = copyAll(operands);
  for (uint64_t iteration = 0;; ++iteration) {
    llvm::Expected<Results> condition =
        runBlock(op.getCondRegion().front(), carried);
    if (!condition)
      return addContext(condition.takeError(), op,
                        "in iteration " + Twine(iteration) +
                            " of the cond region of");
    if (!isTrue(condition->front()))
      return carried;
    if (iteration >= options.maxLoopIterations)
      return opError(op, "loop did not finish within the limit of " +
                             Twine(options.maxLoopIterations) + " iterations");
    llvm::Expected<Results> next =
        runBlock(op.getBodyRegion().front(), std::move(carried));
    if (!next)
      return addContext(next.takeError(), op,
                        "in iteration " + Twine(iteration) +
                            " of the body region of");
    carried = std::move(*next);
  }
}

llvm::Expected<Results>
Evaluator::evaluateForOp(ForOp op, ArrayRef<const HostTensor *> operands) {
  uint64_t tripCount = op.getTripCount();
  if (tripCount > options.maxLoopIterations)
    return opError(op, "trip count " + Twine(tripCount) +
                           " exceeds the limit of " +
                           Twine(options.maxLoopIterations) + " iterations");
  Type indexType = IntegerType::get(op.getContext(), 64);
  Results carried = copyAll(operands);
  for (uint64_t iteration = 0; iteration < tripCount; ++iteration) {
    Results args;
    args.push_back(HostTensor::fromInts(indexType, {},
                                        {static_cast<int64_t>(iteration)}));
    std::move(carried.begin(), carried.end(), std::back_inserter(args));
    llvm::Expected<Results> next =
        runBlock(op.getBodyRegion().front(), std::move(args));
    if (!next)
      return addContext(next.takeError(), op,
                        "in iteration " + Twine(iteration) + " of the body of");
    carried = std::move(*next);
  }
  return carried;
}

/// A fused region computes what its ops compute one by one; running it as
/// a block lets the end-to-end tests check that fusion changed nothing.
llvm::Expected<Results>
Evaluator::evaluateFusedOp(FusedOp op, ArrayRef<const HostTensor *> operands) {
  llvm::Expected<Results> results =
      runBlock(op.getBody().front(), copyAll(operands));
  if (!results)
    return addContext(results.takeError(), op, "in the body of");
  return results;
}

llvm::Expected<Results>
Evaluator::evaluateCallOp(func::CallOp op,
                          ArrayRef<const HostTensor *> operands) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!callee)
    return opError(op, "callee @" + op.getCallee() + " is not a func.func");
  llvm::Expected<Results> results = callFunction(callee, copyAll(operands));
  if (!results)
    return addContext(results.takeError(), op, "called from");
  return results;
}

llvm::Expected<Results> Evaluator::exchange(Operation *op,
                                            const HostTensor &operand) {
  llvm::Expected<HostTensor> result = ranks.exchange(rank, op, operand);
  if (!result)
    return opError(op, "on rank " + Twine(rank) + ": " +
                           llvm::toString(result.takeError()));
  return single(std::move(*result));
}

/// Verifies `func` and every function it calls, directly or not.
static llvm::Error verifyCallGraph(func::FuncOp func) {
  SmallVector<func::FuncOp> pending = {func};
  llvm::DenseSet<Operation *> seen = {func};
  while (!pending.empty()) {
    func::FuncOp next = pending.pop_back_val();
    if (llvm::Error error = verifyFunction(next))
      return error;
    next.walk([&](func::CallOp call) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && seen.insert(callee).second)
        pending.push_back(callee);
    });
  }
  return llvm::Error::success();
}

namespace kiln {
llvm::Expected<std::vector<HostTensor>>
evaluate(func::FuncOp func, ArrayRef<HostTensor> inputs,
         const EvaluatorOptions &options) {
  if (!func)
    return makeError("evaluate() needs a function");
  SimulatedRanks alone(1);
  return Evaluator(options, alone, 0).callFunction(func, inputs);
}

llvm::Expected<std::vector<std::vector<HostTensor>>>
evaluateSpmd(func::FuncOp func, ArrayRef<std::vector<HostTensor>> perRankInputs,
             const EvaluatorOptions &options) {
  if (!func)
    return makeError("evaluateSpmd() needs a function");
  if (perRankInputs.empty())
    return makeError("evaluateSpmd() needs the inputs of at least one rank");
  if (llvm::Error error = verifyCallGraph(func))
    return std::move(error);

  unsigned numRanks = perRankInputs.size();
  SimulatedRanks ranks(numRanks);
  std::vector<std::vector<HostTensor>> results(numRanks);
  std::vector<std::string> errors(numRanks);
  std::vector<std::thread> threads;
  for (unsigned rank = 0; rank < numRanks; ++rank)
    threads.emplace_back([&, rank] {
      Evaluator evaluator(options, ranks, rank);
      evaluator.assumeVerified();
      llvm::Expected<Results> own =
          evaluator.callFunction(func, perRankInputs[rank]);
      if (own)
        results[rank] = std::move(*own);
      else
        errors[rank] = llvm::toString(own.takeError());
      ranks.stop(rank, errors[rank]);
    });
  for (std::thread &thread : threads)
    thread.join();

  // A rank that failed on its own is the cause and comes first; the others'
  // errors only say that they waited for it.
  std::string causes, waits;
  for (unsigned rank = 0; rank < numRanks; ++rank) {
    if (errors[rank].empty())
      continue;
    bool waited = errors[rank].find("without reaching its collective") !=
                  std::string::npos;
    std::string &list = waited ? waits : causes;
    list += (list.empty() ? "" : "\n") + ("rank " + Twine(rank) + ": ").str() +
            errors[rank];
  }
  std::string report =
      causes + (causes.empty() || waits.empty() ? "" : "\n") + waits;
  if (!report.empty())
    return makeError(report);
  return results;
}
} // namespace kiln
