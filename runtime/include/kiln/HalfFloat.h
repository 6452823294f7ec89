//===- HalfFloat.h - 16-bit float conversions -------------------*- C++ -*-===//
//
// f16 and bf16 values go through float, which holds every value of both
// exactly: kiln-run reads and prints them that way, and the MPI plug-in
// sums them (MPI has no 16-bit float reductions). Header-only, so that
// anything may use it without linking a part of the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_HALFFLOAT_H
#define KILN_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kiln {

namespace detail {

inline uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

} // namespace detail

/// IEEE binary16 -> float, exactly.
inline float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f)
    return detail::fromBits(sign | 0x7f800000 | (mantissa << 13));
  return detail::fromBits(sign | ((exponent - 15 + 127) << 23) |
                          (mantissa << 13));
}

/// float -> IEEE binary16, rounding to nearest even; NaNs stay NaN.
inline uint16_t floatToHalf(float value) {
  uint32_t bits = detail::bitsOf(value);
  uint32_t sign = (bits >> 16) & 0x8000;
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) {
    // Infinity, or a NaN whose payload keeps its top bits and stays quiet.
    uint32_t nan =
        magnitude > 0x7f800000 ? 0x200 | ((magnitude >> 13) & 0x3ff) : 0;
    return static_cast<uint16_t>(sign | 0x7c00 | nan);
  }
  // 65520 is halfway between the largest half (65504) and the next step.
  if (magnitude >= 0x477ff000)
    return static_cast<uint16_t>(sign | 0x7c00);
  if (magnitude < 0x38800000) {
    // Below the smallest normal half (2^-14): a subnormal, counted in units
    // of 2^-24. Scaling by a power of two is exact and nearbyint rounds to
    // nearest even; a carry to 0x400 correctly yields the smallest normal.
    float units = detail::fromBits(magnitude) * 16777216.0f;
    return static_cast<uint16_t>(sign |
                                 static_cast<uint32_t>(std::nearbyint(units)));
  }
  uint32_t exponent = (magnitude >> 23) - 127 + 15;
  uint32_t mantissa = magnitude & 0x7fffff;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // A carry into the exponent is the correct rounding.
  return static_cast<uint16_t>(sign | half);
}

/// bfloat16 -> float, exactly.
inline float bfloat16ToFloat(uint16_t bits) {
  return detail::fromBits(static_cast<uint32_t>(bits) << 16);
}

/// float -> bfloat16, rounding to nearest even; NaNs stay NaN.
inline uint16_t floatToBfloat16(float value) {
  uint32_t bits = detail::bitsOf(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace kiln

#endif // KILN_HALFFLOAT_H
