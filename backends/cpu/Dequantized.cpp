//===- Dequantized.cpp - ONNX's QDQ operands recognized in kiln IR -------===//
//
// See Dequantized.h.
//
//===----------------------------------------------------------------------===//

#include "Dequantized.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>
#include <utility>

using namespace mlir;
using namespace mlir::kiln;

std::optional<float> mlir::kiln::splatF32(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<float>();
}

bool mlir::kiln::isValueOf(float value, IntegerType type) {
  float low = type.isUnsigned() ? 0 : -128;
  return value == std::rint(value) && value >= low && value <= low + 255;
}

std::optional<Dequantized> mlir::kiln::dequantized(Value value) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [x, s] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    std::optional<float> scale = splatF32(s);
    if (!scale || !(*scale > 0) || !std::isnormal(*scale))
      continue;
    float zeroPoint = 0;
    if (auto sub = x.getDefiningOp<SubOp>()) {
      std::optional<float> z = splatF32(sub.getRhs());
      if (!z)
        continue;
      zeroPoint = *z;
      x = sub.getLhs();
    }
    auto cast = x.getDefiningOp<CastOp>();
    if (!cast)
      continue;
    auto integer =
        dyn_cast<IntegerType>(cast.getOperand().getType().getElementType());
    if (!integer || integer.getWidth() != 8 || !isValueOf(zeroPoint, integer))
      continue;
    return Dequantized{cast.getOperand(), static_cast<int32_t>(zeroPoint),
                       *scale};
  }
  return std::nullopt;
}

/// The value of largest magnitude m is k * s for some k in 1..127, so s is
/// among the f32 values next to m / k.
std::optional<float> mlir::kiln::exactInt8Scale(ArrayRef<float> values,
                                                int8_t *q) {
  float largest = 0;
  for (float v : values) {
    if (!std::isfinite(v))
      return std::nullopt;
    largest = std::max(largest, std::fabs(v));
  }
  if (largest == 0) {
    std::fill(q, q + values.size(), 0);
    return 1.0f;
  }
  for (int k = 127; k >= 1; --k) {
    float guess = static_cast<float>(double(largest) / k);
    for (float s : {guess, std::nextafter(guess, 0.0f),
                    std::nextafter(guess, INFINITY)}) {
      if (!std::isnormal(s) || static_cast<float>(double(k) * s) != largest)
        continue;
      bool exact = true;
      for (size_t i = 0; i < values.size() && exact; ++i) {
        double n = std::rint(double(values[i]) / s);
        // The product of two f32 values is exact in f64: rounding it to
        // f32 is the f32 product.
        exact = std::fabs(n) <= 127 &&
                static_cast<float>(n * double(s)) == values[i];
        q[i] = static_cast<int8_t>(n);
      }
      if (exact)
        return s;
    }
  }
  return std::nullopt;
}
