//===- HalfFloat.h - 16-bit float conversions -------------------*- C++ -*-===//
//
// kiln-run reads and prints f16 and bf16 tensors through float, which holds
// every value of both exactly.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_HALFFLOAT_H
#define KILN_TOOLS_KILN_RUN_HALFFLOAT_H

#include <cstdint>

namespace kiln {
namespace run {

/// IEEE binary16 -> float, exactly.
float halfToFloat(uint16_t bits);
/// float -> IEEE binary16, rounding to nearest even; NaNs stay NaN.
uint16_t floatToHalf(float value);
/// bfloat16 -> float, exactly.
float bfloat16ToFloat(uint16_t bits);
/// float -> bfloat16, rounding to nearest even; NaNs stay NaN.
uint16_t floatToBfloat16(float value);

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_HALFFLOAT_H
