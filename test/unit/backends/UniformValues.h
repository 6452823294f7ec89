//===- UniformValues.h - Operands for the convolution tests -----*- C++ -*-===//
//
// The convolution tests' operands whose sums must round: DnnlConvTest.cpp's
// Winograd sites and WinogradConvTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_BACKENDS_UNIFORMVALUES_H
#define KILN_TEST_UNIT_BACKENDS_UNIFORMVALUES_H

#include <cstddef>
#include <vector>

namespace kiln::test {

/// `count` values in [-1, 1) from `seed` with no short binary form, so
/// that sums taken in different orders round differently.
inline std::vector<float> uniformValues(size_t count, unsigned seed) {
  std::vector<float> values(count);
  for (float &v : values) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
  }
  return values;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_BACKENDS_UNIFORMVALUES_H
