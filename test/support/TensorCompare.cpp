//===- TensorCompare.cpp - Tests: compiled results against the evaluator -===//

#include "TensorCompare.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace kiln;

double kiln::test::halfStep(double value, bool bf16) {
  int mantissaBits = bf16 ? 7 : 10;
  int minExponent = bf16 ? -126 : -14;
  int exponent = minExponent;
  if (value != 0 && std::isfinite(value))
    exponent = std::max(minExponent, std::ilogb(value));
  return std::ldexp(1.0, exponent - mantissaBits);
}

std::string kiln::test::compareTensors(const HostTensor &expected,
                                       const HostTensor &actual,
                                       const std::string &what,
                                       const Tolerance *tolerance) {
  bool isF32 = expected.kind() == ElementKind::F32;
  bool isHalf = expected.kind() == ElementKind::F16 ||
                expected.kind() == ElementKind::BF16;
  double rtol = 0, atol = 0;
  if (tolerance) {
    rtol = isF32 ? tolerance->f32Rtol : tolerance->f64Tol;
    atol = isF32 ? tolerance->f32Atol : tolerance->f64Tol;
    if (isHalf && tolerance->halfRtol > 0) {
      rtol = tolerance->halfRtol;
      atol = tolerance->f32Atol;
    }
  }
  int64_t n = expected.numElements();
  for (int64_t k = 0; k < n; ++k) {
    double want = expected.getAsDouble(k), got = actual.getAsDouble(k);
    bool same;
    if (expected.isFloat())
      same = (std::isnan(want) && std::isnan(got)) || want == got ||
             std::fabs(want - got) <= atol + rtol * std::fabs(want) ||
             (isHalf && tolerance && tolerance->halfSteps &&
              std::isfinite(want) &&
              std::fabs(want - got) <=
                  tolerance->halfSteps *
                      halfStep(want, expected.kind() == ElementKind::BF16));
    else
      same = expected.i[k] == actual.i[k];
    if (!same) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << k << " of " << n << ": expected " << want << ", "
         << what << " gave " << got;
      return os.str();
    }
  }
  return "";
}
