//===- EvaluatorNumerics.h - Element operations of the evaluator -*- C++ -*-===//
//
// The element-level rules of the reference evaluator: wrapping integer
// addition, IEEE 754 maximum/minimum and the order of unsigned 64-bit values
// stored in int64_t (which its simulated ranks share), then the scalar
// semantics of the ops' kernels (EvaluateOps.h): integer division and
// shifts at their edges, conversions, comparisons.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EVALUATOR_EVALUATORNUMERICS_H
#define KILN_COMPILER_EVALUATOR_EVALUATORNUMERICS_H

#include "kiln/Compiler/HostTensor.h"
#include "kiln/IR/KilnOps.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln {
namespace evaluator {

/// Integer arithmetic goes through uint64_t, where overflow is defined to
/// wrap; wrapToInt then narrows the result to the element width.
inline int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

/// NaN-propagating maximum that orders -0 below +0 (IEEE 754 `maximum`).
inline double floatMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// NaN-propagating minimum that orders -0 below +0 (IEEE 754 `minimum`).
inline double floatMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

/// An int64_t that orders like the element value: ui64 flips its top bit,
/// which maps [0, 2^64) monotonically onto int64_t's range.
inline int64_t orderKey(ElementKind kind, int64_t value) {
  if (kind != ElementKind::UI64)
    return value;
  return static_cast<int64_t>(static_cast<uint64_t>(value) ^ (1ull << 63));
}

inline int64_t intMax(ElementKind kind, int64_t a, int64_t b) {
  return orderKey(kind, a) < orderKey(kind, b) ? b : a;
}

inline int64_t intMin(ElementKind kind, int64_t a, int64_t b) {
  return orderKey(kind, b) < orderKey(kind, a) ? b : a;
}

// --- The scalar semantics of the ops' kernels -----------------------------

using mlir::kiln::CompareDirection;

// Integer arithmetic goes through uint64_t, where overflow is defined to
// wrap; wrapToInt then narrows the result to the element width.
inline int64_t wrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t wrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// Truncating division; the one overflowing case (most negative / -1) wraps.
/// The caller has ruled out a zero divisor.
inline int64_t truncatingDiv(int64_t a, int64_t b) {
  if (b == -1)
    return wrappingSub(0, a);
  return a / b;
}

/// kiln.rem on integers: C's `%`, except that a zero divisor gives the
/// dividend and -1 gives 0 (where `%` would overflow), as KilnOps.td defines.
inline int64_t truncatingRem(int64_t a, int64_t b) {
  if (b == 0)
    return a;
  if (b == -1)
    return 0;
  return a % b;
}

/// kiln.sign: +-1 off zero; zeros (of either sign) and NaN are their own sign.
inline double floatSign(double x) {
  if (x > 0)
    return 1.0;
  if (x < 0)
    return -1.0;
  return x;
}

/// kiln.round: to nearest, ties to even. nearbyint rounds in the current
/// rounding mode, which is the default one (to nearest even) here.
inline double roundHalfToEven(double x) { return std::nearbyint(x); }



/// Unsigned types below 64 bits are stored zero-extended (wrapToInt), so
/// int64_t's order and division are theirs; ui64 stores its bit pattern and
/// is the one type that must be read as uint64_t.
inline bool isUnsignedKind(ElementKind kind) {
  return ::kiln::isUnsignedElementType(kind);
}




/// kiln.div on integers of `kind`: unsigned types divide as unsigned, signed
/// ones truncate (truncatingDiv); x / 0 is all ones (-1, which wrapToInt
/// makes the largest unsigned value).
inline int64_t intDiv(ElementKind kind, int64_t a, int64_t b) {
  if (b == 0)
    return -1;
  if (isUnsignedKind(kind))
    return static_cast<int64_t>(static_cast<uint64_t>(a) /
                                static_cast<uint64_t>(b));
  return truncatingDiv(a, b);
}

/// kiln.rem on integers of `kind`; a zero divisor gives the dividend for
/// unsigned types too.
inline int64_t intRem(ElementKind kind, int64_t a, int64_t b) {
  if (!isUnsignedKind(kind))
    return truncatingRem(a, b);
  if (b == 0)
    return a;
  return static_cast<int64_t>(static_cast<uint64_t>(a) %
                              static_cast<uint64_t>(b));
}

/// The shift amount `amount` of an element of `kind` read as unsigned, as
/// kiln.shift_left and kiln.shift_right do: negative signed amounts are huge.
inline uint64_t shiftAmount(ElementKind kind, int64_t amount) {
  unsigned width = getElementTypeInfo(kind).bitWidth;
  uint64_t bits = static_cast<uint64_t>(amount);
  return width == 64 ? bits : bits & ((uint64_t(1) << width) - 1);
}

/// kiln.shift_left: amounts of at least the bit width give 0. The caller
/// wraps the result to the element width.
inline int64_t shiftLeft(ElementKind kind, int64_t value, int64_t amount) {
  uint64_t n = shiftAmount(kind, amount);
  if (n >= getElementTypeInfo(kind).bitWidth)
    return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << n);
}

/// kiln.shift_right: logical for unsigned types (stored zero-extended, or as
/// ui64's bit pattern), arithmetic for signed ones (stored sign-extended).
inline int64_t shiftRight(ElementKind kind, int64_t value, int64_t amount) {
  uint64_t n = shiftAmount(kind, amount);
  bool isUnsigned = ::kiln::isUnsignedElementType(kind);
  if (n >= getElementTypeInfo(kind).bitWidth)
    return isUnsigned || value >= 0 ? 0 : -1;
  if (isUnsigned)
    return static_cast<int64_t>(static_cast<uint64_t>(value) >> n);
  return value >> n;
}

inline int64_t intLowest(ElementKind kind) {
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
inline int64_t intHighest(ElementKind kind) {
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
inline int64_t floatToInt(ElementKind to, double value) {
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
inline double intToFloat(ElementKind to, int64_t value,
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
inline bool compareValues(CompareDirection direction, T a, T b) {
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

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_EVALUATOR_EVALUATORNUMERICS_H
