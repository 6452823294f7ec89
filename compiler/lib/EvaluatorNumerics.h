//===- EvaluatorNumerics.h - Element operations of the evaluator -*- C++ -*-===//
//
// The element-level rules the reference evaluator and its simulated ranks
// share: wrapping integer addition, IEEE 754 maximum/minimum, and the order
// of unsigned 64-bit values stored in int64_t.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LIB_EVALUATORNUMERICS_H
#define KILN_COMPILER_LIB_EVALUATORNUMERICS_H

#include "kiln/Compiler/HostTensor.h"

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

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_LIB_EVALUATORNUMERICS_H
