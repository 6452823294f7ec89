//===- MathEdgeValuesTest.cpp - Transcendentals at the edges, against libm ===//
//
// Every elementwise math op of the dialect, compiled for the host CPU, on
// the values where approximations break: ±0, ±inf, NaN, the smallest
// normal and subnormal values, the largest finite values, and the points
// where a result overflows or underflows. The reference is libm in double
// precision, rounded to the op's type. f32 exp, log, tanh and sigmoid run as
// polynomial approximations (kiln-cpu-math-approximation); f64 calls libm.
//
// The values are repeated to fill 16-lane vectors and a remainder, so both
// the vectorized loop and its scalar epilogue see each of them.
//
// The ops past cos: f32 erf and atan also run as upstream's polynomials;
// asin and acos do not (upstream's f32 asin is off by up to 1e-2), and
// the others are libm calls or, for floor, ceil and round, LLVM's rounding
// intrinsics. sign is checked exactly like the rest (its results are
// exact, so any error shows).
//
//===----------------------------------------------------------------------===//

#include "kiln/Jit.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace kiln;

namespace {

struct MathOp {
  const char *name;
  std::function<Tensor(const Tensor &)> traced;
  std::function<double(double)> reference;
};

std::vector<MathOp> mathOps() {
  return {
      {"exp", [](const Tensor &x) { return exp(x); },
       [](double x) { return std::exp(x); }},
      {"log", [](const Tensor &x) { return log(x); },
       [](double x) { return std::log(x); }},
      {"sqrt", [](const Tensor &x) { return sqrt(x); },
       [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](const Tensor &x) { return rsqrt(x); },
       [](double x) { return 1.0 / std::sqrt(x); }},
      {"tanh", [](const Tensor &x) { return tanh(x); },
       [](double x) { return std::tanh(x); }},
      {"sigmoid", [](const Tensor &x) { return sigmoid(x); },
       [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"sin", [](const Tensor &x) { return sin(x); },
       [](double x) { return std::sin(x); }},
      {"cos", [](const Tensor &x) { return cos(x); },
       [](double x) { return std::cos(x); }},
      {"erf", [](const Tensor &x) { return erf(x); },
       [](double x) { return std::erf(x); }},
      {"floor", [](const Tensor &x) { return floor(x); },
       [](double x) { return std::floor(x); }},
      {"ceil", [](const Tensor &x) { return ceil(x); },
       [](double x) { return std::ceil(x); }},
      {"round", [](const Tensor &x) { return round(x); },
       [](double x) { return std::nearbyint(x); }},
      {"tan", [](const Tensor &x) { return tan(x); },
       [](double x) { return std::tan(x); }},
      {"asin", [](const Tensor &x) { return asin(x); },
       [](double x) { return std::asin(x); }},
      {"acos", [](const Tensor &x) { return acos(x); },
       [](double x) { return std::acos(x); }},
      {"atan", [](const Tensor &x) { return atan(x); },
       [](double x) { return std::atan(x); }},
      {"sinh", [](const Tensor &x) { return sinh(x); },
       [](double x) { return std::sinh(x); }},
      {"cosh", [](const Tensor &x) { return cosh(x); },
       [](double x) { return std::cosh(x); }},
      {"asinh", [](const Tensor &x) { return asinh(x); },
       [](double x) { return std::asinh(x); }},
      {"acosh", [](const Tensor &x) { return acosh(x); },
       [](double x) { return std::acosh(x); }},
      {"atanh", [](const Tensor &x) { return atanh(x); },
       [](double x) { return std::atanh(x); }},
      {"sign", [](const Tensor &x) { return sign(x); },
       [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }},
  };
}

template <typename T> std::vector<T> edgeValues() {
  using L = std::numeric_limits<T>;
  std::vector<T> values = {
      T(0), -T(0), L::infinity(), -L::infinity(), L::quiet_NaN(),
      L::min(), -L::min(), L::denorm_min(), -L::denorm_min(),
      L::min() / T(1000), -L::min() / T(1000), L::max(), -L::max(),
      L::max() / T(3), T(1), T(-1), T(0.5), T(2), T(10), T(-10), T(20),
      T(-20), T(1e-30), T(1e10), T(-1e10)};
  // The domain edges of asin, acos, atanh (|x| = 1) and acosh (x = 1),
  // just inside and outside; rounding ties (round to even); the largest
  // values below 2^p that still have a fraction.
  T belowOne = std::nextafter(T(1), T(0)), aboveOne = std::nextafter(T(1), T(2));
  T lastFraction = std::ldexp(T(1), L::digits - 1) - T(0.5);
  for (T v : {belowOne, aboveOne, T(0.999), T(1.001), T(0.5), T(1.5), T(2.5),
              T(0.75), T(1e-4), lastFraction, lastFraction + T(1)}) {
    values.push_back(v);
    values.push_back(-v);
  }
  // Where exp overflows and underflows, for this type.
  T logMax = std::log(L::max()), logMin = std::log(L::min());
  T logTrueMin = std::log(L::denorm_min());
  for (T v : {logMax - T(0.01), logMax + T(0.01), logMin + T(0.01),
              logMin - T(3), logTrueMin + T(0.5), logTrueMin - T(1)}) {
    values.push_back(v);
    values.push_back(-v);
  }
  return values;
}

/// Whether `got` is within `ulps` units in the last place of the
/// correctly rounded `reference`, with NaN, infinities and their signs
/// exact. A result below the smallest normal value may be flushed to zero
/// (f32 exp and sigmoid do, as upstream's approximation of exp does), so
/// there an absolute error up to that value is accepted; subnormal *inputs*
/// get no such allowance.
template <typename T> bool close(T got, double reference, double ulps) {
  using L = std::numeric_limits<T>;
  T rounded = static_cast<T>(reference);
  if (std::isnan(rounded))
    return std::isnan(got);
  if (std::isinf(rounded))
    return got == rounded;
  if (std::isnan(got) || std::isinf(got))
    return false;
  double error = std::fabs(static_cast<double>(got) - reference);
  if (std::fabs(reference) < double(L::min()))
    return error <= double(L::min());
  double ulp = std::ldexp(1.0, std::ilogb(reference) - (L::digits - 1));
  return error <= ulps * ulp;
}

template <typename T> void checkEdges(DType dtype, double ulps) {
  std::vector<T> edges = edgeValues<T>();
  // Two full 16-lane vectors of each value's neighbourhood, plus a
  // remainder that runs in the scalar epilogue.
  std::vector<T> input;
  for (int copy = 0; copy < 3; ++copy)
    input.insert(input.end(), edges.begin(), edges.end());
  input.resize(((input.size() + 15) / 16) * 16 + 5, T(1));
  int64_t n = static_cast<int64_t>(input.size());
  Array x = Array::from(dtype, {n}, input);
  for (const MathOp &op : mathOps()) {
    SCOPED_TRACE(op.name);
    JitFunction fn = jit(std::string(op.name) + "_edges",
                         [&](const Tensor &t) { return op.traced(t); });
    Array y = fn({x})[0];
    ASSERT_EQ(y.size(), n);
    const T *out = y.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      double reference = op.reference(static_cast<double>(input[i]));
      EXPECT_TRUE(close<T>(out[i], reference, ulps))
          << op.name << "(" << input[i] << ") = " << out[i]
          << ", libm gives " << static_cast<T>(reference) << " (element " << i
          << ")";
    }
  }
}

// Upstream's f32 polynomials stay within a few ulp; exp loses up to about
// 4 right below its overflow threshold.
TEST(MathEdgeValues, F32MatchesLibm) { checkEdges<float>(DType::F32, 8); }

TEST(MathEdgeValues, F64MatchesLibm) { checkEdges<double>(DType::F64, 2); }

} // namespace
