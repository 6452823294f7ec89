//===- SinCosTest.cpp - f32 sin and cos: accuracy and one value per input -===//
//
// f32 sin and cos run as kiln-cpu-sin-cos's functions: a Cody-Waite
// reduction with polynomials below 2^24, libm above. Two properties:
//   - accuracy: across the whole f32 range (every 4099th bit pattern, both
//     signs, plus the floats nearest to multiples of pi/2), the result is
//     within 0.501 ulp of sin/cos in double precision, i.e. correctly rounded
//     but for results within 1/1000 ulp of a rounding boundary; where libm
//     computes (|x| >= 2^24) glibc's own bound of one ulp;
//   - one value per input: an element computed in a vectorized loop (16 or
//     8 lanes a call), in its scalar remainder, and alone in a function of
//     rank 0 (no loop at all) is the same float to the last bit, which a
//     gradient that recomputes cos(x) for an equality mask relies on
//     (test/e2e/fuzz_regressions.mlir, max_of_cos_gradient).
//
//===----------------------------------------------------------------------===//

#include "kiln/Jit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace kiln;

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint32_t toBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// The inputs: a stride through every bit pattern, both signs (NaN
/// patterns skipped, one NaN added), the floats on either side of k*pi/2
/// for k up to 10^5 and at k = 2^j, and the edges.
std::vector<float> inputs() {
  std::vector<float> values;
  for (uint64_t bits = 0; bits < 0x7f800000u; bits += 4099) {
    values.push_back(fromBits(static_cast<uint32_t>(bits)));
    values.push_back(-fromBits(static_cast<uint32_t>(bits)));
  }
  auto nearMultiple = [&](double k) {
    float x = static_cast<float>(k * 1.5707963267948966);
    values.push_back(x);
    values.push_back(std::nextafter(x, 0.0f));
    values.push_back(std::nextafter(x, std::numeric_limits<float>::infinity()));
  };
  for (int k = 1; k <= 100000; ++k)
    nearMultiple(k);
  for (int j = 17; j < 100; ++j)
    nearMultiple(std::ldexp(1.0, j));
  for (float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), 0x1p24f,
                  std::nextafter(0x1p24f, 0.0f), 0.78539819f, 0.78539813f})
    values.push_back(v);
  return values;
}

/// |got - reference| in units of the last place of float at `reference`.
double ulpError(float got, double reference) {
  int exponent = std::ilogb(reference);
  exponent = std::max(exponent, std::numeric_limits<float>::min_exponent - 1);
  double ulp = std::ldexp(1.0, exponent - (std::numeric_limits<float>::digits - 1));
  return std::fabs(static_cast<double>(got) - reference) / ulp;
}

struct Function {
  const char *name;
  Tensor (*traced)(const Tensor &);
  double (*reference)(double);
};

const Function kFunctions[] = {
    {"sin", [](const Tensor &x) { return sin(x); },
     [](double x) { return std::sin(x); }},
    {"cos", [](const Tensor &x) { return cos(x); },
     [](double x) { return std::cos(x); }},
};

TEST(SinCos, AccurateOverTheWholeRange) {
  std::vector<float> x = inputs();
  int64_t n = static_cast<int64_t>(x.size());
  Array input = Array::from(DType::F32, {n}, x);
  for (const Function &function : kFunctions) {
    SCOPED_TRACE(function.name);
    JitFunction fn = jit(std::string(function.name) + "_sweep", function.traced);
    Array y = fn({input})[0];
    const float *out = y.data<float>();
    double worstReduced = 0, worstLibm = 0;
    int64_t failures = 0;
    for (int64_t i = 0; i < n; ++i) {
      double reference = function.reference(static_cast<double>(x[i]));
      if (std::isnan(reference) || std::isinf(x[i])) {
        if (!std::isnan(out[i]) && ++failures <= 10)
          ADD_FAILURE() << function.name << "(" << x[i] << ") = " << out[i]
                        << ", not NaN";
        continue;
      }
      double error = ulpError(out[i], reference);
      bool reduced = std::fabs(x[i]) < 0x1p24f;
      double &worst = reduced ? worstReduced : worstLibm;
      worst = std::max(worst, error);
      if (error > (reduced ? 0.501 : 1.0) && ++failures <= 10)
        ADD_FAILURE() << function.name << "(" << x[i] << " = 0x" << std::hex
                      << toBits(x[i]) << std::dec << ") = " << out[i] << ", "
                      << error << " ulp from " << reference;
      // sin keeps the sign of zero.
      if (x[i] == 0 && function.traced == kFunctions[0].traced)
        EXPECT_EQ(std::signbit(out[i]), std::signbit(x[i]));
    }
    EXPECT_EQ(failures, 0);
    std::printf("%s: %lld inputs, worst %.4f ulp below 2^24, %.4f ulp above\n",
                function.name, static_cast<long long>(n), worstReduced,
                worstLibm);
  }
}

TEST(SinCos, VectorAndScalarGiveTheSameBits) {
  // Enough values to fill the 16-lane loop, its 8-lane epilogue and the
  // scalar remainder (4096 + 8 + 5), drawn from the sweep's inputs.
  std::vector<float> all = inputs();
  std::vector<float> x;
  for (size_t i = 0; i < all.size() && x.size() < 4109; i += all.size() / 4000)
    x.push_back(all[i]);
  for (float edge : {0x1p24f, std::nextafter(0x1p24f, 0.0f), -0.0f, 1e-45f,
                     std::numeric_limits<float>::infinity()})
    x.push_back(edge);
  x.resize(4109, 0.5f);
  int64_t n = static_cast<int64_t>(x.size());
  for (const Function &function : kFunctions) {
    SCOPED_TRACE(function.name);
    JitFunction vectorFn =
        jit(std::string(function.name) + "_vector", function.traced);
    JitFunction scalarFn =
        jit(std::string(function.name) + "_scalar", function.traced);
    Array y = vectorFn({Array::from(DType::F32, {n}, x)})[0];
    const float *out = y.data<float>();
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      Array alone = scalarFn({Array::from(DType::F32, {}, std::vector<float>{x[i]})})[0];
      float expected = alone.data<float>()[0];
      if (std::memcmp(&expected, &out[i], sizeof expected) != 0 &&
          ++mismatches <= 10)
        ADD_FAILURE() << function.name << "(" << x[i] << ") at element " << i
                      << ": " << out[i] << " in the loop, " << expected
                      << " alone";
    }
    EXPECT_EQ(mismatches, 0);
  }
}

} // namespace
