//===- Reductions.h - The reductions of collectives, element by element -*- C++
//-*-===//
//
// What ALL_REDUCE and REDUCE_SCATTER compute (kiln/CollectiveAbi.h), for the
// communicator plug-ins whose engines do not compute it themselves: the
// float maximum and minimum propagate NaN and order -0 below +0 (IEEE 754
// maximum, minimum), f16 and bf16 sum in float and round back to nearest
// even, i1 sums and maxima are a logical or and minima a logical and,
// integer sums wrap, unsigned integers compare unsigned. Header-only: each
// plug-in links nothing of the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_REDUCTIONS_H
#define KILN_RUNTIME_LIB_COMM_REDUCTIONS_H

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"
#include "kiln/HalfFloat.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kiln {
namespace comm_reductions {

/// How a float format is stored and widened; sums of 16-bit floats are
/// computed in float (exact for two operands of either format, so the one
/// rounding back is the only one) and rounded to nearest even.
struct F16 {
  using Storage = uint16_t;
  static float widen(Storage bits) { return halfToFloat(bits); }
  static Storage narrow(float value) { return floatToHalf(value); }
};
struct BF16 {
  using Storage = uint16_t;
  static float widen(Storage bits) { return bfloat16ToFloat(bits); }
  static Storage narrow(float value) { return floatToBfloat16(value); }
};
struct F32 {
  using Storage = float;
  static float widen(Storage value) { return value; }
  static Storage narrow(float value) { return value; }
};
struct F64 {
  using Storage = double;
  static double widen(Storage value) { return value; }
  static Storage narrow(double value) { return value; }
};

/// Whether `a` is the IEEE 754 maximum (Max) or minimum (Min) of a and b:
/// a NaN wins, and -0 orders below +0.
template <int Reduction, typename T> bool picks(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a);
  if (a == b)
    return std::signbit(a) == (Reduction == KILN_REDUCTION_MIN);
  return Reduction == KILN_REDUCTION_MAX ? a > b : a < b;
}

/// out[i] = a[i] (reduction) b[i] for floats of Format; out may be a or b.
template <typename Format, int Reduction>
void combineFloats(void *out, const void *a, const void *b, size_t n) {
  using Storage = typename Format::Storage;
  const auto *x = static_cast<const Storage *>(a);
  const auto *y = static_cast<const Storage *>(b);
  auto *z = static_cast<Storage *>(out);
  for (size_t i = 0; i < n; ++i) {
    auto u = Format::widen(x[i]), v = Format::widen(y[i]);
    if (Reduction == KILN_REDUCTION_SUM)
      z[i] = Format::narrow(u + v);
    else
      z[i] = picks<Reduction>(u, v) ? x[i] : y[i];
  }
}

/// out[i] = a[i] (reduction) b[i] for integers of type T (sums wrap).
template <typename T, int Reduction>
void combineIntegers(void *out, const void *a, const void *b, size_t n) {
  using Unsigned = std::make_unsigned_t<T>;
  const auto *x = static_cast<const T *>(a);
  const auto *y = static_cast<const T *>(b);
  auto *z = static_cast<T *>(out);
  for (size_t i = 0; i < n; ++i) {
    if (Reduction == KILN_REDUCTION_SUM)
      z[i] = T(Unsigned(x[i]) + Unsigned(y[i]));
    else if (Reduction == KILN_REDUCTION_MAX)
      z[i] = x[i] > y[i] ? x[i] : y[i];
    else
      z[i] = x[i] < y[i] ? x[i] : y[i];
  }
}

/// out[i] = a[i] (reduction) b[i] for i1 stored as bytes 0 or 1.
template <int Reduction>
void combineBools(void *out, const void *a, const void *b, size_t n) {
  const auto *x = static_cast<const uint8_t *>(a);
  const auto *y = static_cast<const uint8_t *>(b);
  auto *z = static_cast<uint8_t *>(out);
  for (size_t i = 0; i < n; ++i)
    z[i] = Reduction == KILN_REDUCTION_MIN ? (x[i] && y[i]) : (x[i] || y[i]);
}

using CombineFn = void (*)(void *out, const void *a, const void *b, size_t n);

/// The combination of Format's floats (Integer: of integers of type T) by
/// \p reduction, which is valid.
template <typename Format> CombineFn floatCombine(int32_t reduction) {
  return reduction == KILN_REDUCTION_SUM
             ? combineFloats<Format, KILN_REDUCTION_SUM>
         : reduction == KILN_REDUCTION_MAX
             ? combineFloats<Format, KILN_REDUCTION_MAX>
             : combineFloats<Format, KILN_REDUCTION_MIN>;
}
template <typename T> CombineFn integerCombine(int32_t reduction) {
  return reduction == KILN_REDUCTION_SUM
             ? combineIntegers<T, KILN_REDUCTION_SUM>
         : reduction == KILN_REDUCTION_MAX
             ? combineIntegers<T, KILN_REDUCTION_MAX>
             : combineIntegers<T, KILN_REDUCTION_MIN>;
}

/// The function computing \p reduction on elements of \p dtype, or null for
/// a code that is no dtype or no reduction.
inline CombineFn combineFunction(int32_t dtype, int32_t reduction) {
  if (dtype < 0 || unsigned(dtype) >= kNumElementTypes ||
      reduction < KILN_REDUCTION_SUM || reduction > KILN_REDUCTION_MIN)
    return nullptr;
  switch (ElementType(dtype)) {
  case ElementType::F16:
    return floatCombine<F16>(reduction);
  case ElementType::BF16:
    return floatCombine<BF16>(reduction);
  case ElementType::F32:
    return floatCombine<F32>(reduction);
  case ElementType::F64:
    return floatCombine<F64>(reduction);
  case ElementType::I1:
    return reduction == KILN_REDUCTION_MIN ? combineBools<KILN_REDUCTION_MIN>
                                           : combineBools<KILN_REDUCTION_SUM>;
  case ElementType::I8:
    return integerCombine<int8_t>(reduction);
  case ElementType::I16:
    return integerCombine<int16_t>(reduction);
  case ElementType::I32:
    return integerCombine<int32_t>(reduction);
  case ElementType::I64:
    return integerCombine<int64_t>(reduction);
  case ElementType::UI8:
    return integerCombine<uint8_t>(reduction);
  case ElementType::UI16:
    return integerCombine<uint16_t>(reduction);
  case ElementType::UI32:
    return integerCombine<uint32_t>(reduction);
  case ElementType::UI64:
    return integerCombine<uint64_t>(reduction);
  }
  return nullptr;
}

} // namespace comm_reductions
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_REDUCTIONS_H
