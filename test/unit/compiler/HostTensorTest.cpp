//===- HostTensorTest.cpp - Tests of HostTensor ---------------------------===//
//
// Rounding to f16/bf16/f32 (checked against llvm::APFloat, which implements
// IEEE conversions independently), integer wrapping, the native byte layout,
// and the stride helpers.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace kiln;

namespace {

/// `value` rounded to `semantics` by APFloat, back in double.
double roundWithAPFloat(const llvm::fltSemantics &semantics, double value) {
  llvm::APFloat converted(value);
  bool losesInfo;
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return converted.convertToDouble();
}

/// Bitwise equality, so that -0 differs from +0 and NaN equals NaN.
void expectSameDouble(double expected, double actual, double input) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "input " << input;
    return;
  }
  uint64_t expectedBits, actualBits;
  std::memcpy(&expectedBits, &expected, sizeof(double));
  std::memcpy(&actualBits, &actual, sizeof(double));
  EXPECT_EQ(expectedBits, actualBits)
      << "input " << input << ": expected " << expected << ", got " << actual;
}

/// Doubles spread over the whole range of the narrow formats: subnormals,
/// overflow, exact halfway points and plain random values.
std::vector<double> interestingDoubles() {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                0.1,
                                1.0 / 3.0,
                                2049.0,
                                2051.0,
                                65504.0,
                                65519.0,
                                65520.0,
                                -65520.0,
                                1e6,
                                std::ldexp(1.0, -24),
                                std::ldexp(1.0, -25),
                                std::ldexp(3.0, -26),
                                std::ldexp(1.0, -14),
                                std::ldexp(1.0, -133),
                                std::ldexp(1.0, -126),
                                std::ldexp(1.0, 127) * 1.99,
                                3.4e38,
                                1e300,
                                5e-324,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 generator(42);
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-140, 140);
  for (int n = 0; n < 20000; ++n)
    values.push_back(std::ldexp(mantissa(generator), exponent(generator)));
  // Exact midpoints between neighbouring f16 and bf16 values.
  for (int n = 0; n < 2000; ++n) {
    double base = std::ldexp(1.0 + (n % 1024) / 1024.0, (n % 30) - 15);
    values.push_back(base + std::ldexp(1.0, (n % 30) - 15 - 11));
    values.push_back(base + std::ldexp(1.0, (n % 30) - 15 - 8));
  }
  return values;
}

TEST(HostTensorRounding, F16MatchesAPFloat) {
  for (double value : interestingDoubles())
    expectSameDouble(roundWithAPFloat(llvm::APFloat::IEEEhalf(), value),
                     roundToFloat(ElementKind::F16, value), value);
}

TEST(HostTensorRounding, BF16MatchesAPFloat) {
  for (double value : interestingDoubles())
    expectSameDouble(roundWithAPFloat(llvm::APFloat::BFloat(), value),
                     roundToFloat(ElementKind::BF16, value), value);
}

TEST(HostTensorRounding, F32MatchesAPFloat) {
  for (double value : interestingDoubles())
    expectSameDouble(roundWithAPFloat(llvm::APFloat::IEEEsingle(), value),
                     roundToFloat(ElementKind::F32, value), value);
}

TEST(HostTensorRounding, KnownF16Values) {
  EXPECT_EQ(roundToFloat(ElementKind::F16, 2049.0), 2048.0); // tie to even
  EXPECT_EQ(roundToFloat(ElementKind::F16, 2051.0), 2052.0); // tie to even
  EXPECT_EQ(roundToFloat(ElementKind::F16, 65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(roundToFloat(ElementKind::F16, 65520.0)));
  EXPECT_EQ(roundToFloat(ElementKind::F16, std::ldexp(1.0, -25)), 0.0);
  EXPECT_EQ(roundToFloat(ElementKind::F16, std::ldexp(3.0, -26)),
            std::ldexp(1.0, -24));
  EXPECT_EQ(roundToFloat(ElementKind::F16, 0.1), 0.0999755859375);
  EXPECT_EQ(roundToFloat(ElementKind::F64, 0.1), 0.1);
}

TEST(HostTensorWrapping, IntegersWrapToTheirWidth) {
  EXPECT_EQ(wrapToInt(ElementKind::I32, int64_t(1) << 31), INT32_MIN);
  EXPECT_EQ(wrapToInt(ElementKind::I32, (int64_t(1) << 32) + 5), 5);
  EXPECT_EQ(wrapToInt(ElementKind::I32, -1), -1);
  EXPECT_EQ(wrapToInt(ElementKind::I64, INT64_MIN), INT64_MIN);
  EXPECT_EQ(wrapToInt(ElementKind::I1, 0), 0);
  EXPECT_EQ(wrapToInt(ElementKind::I1, 2), 1);
  EXPECT_EQ(wrapToInt(ElementKind::I1, -1), 1);
  EXPECT_EQ(wrapToInt(ElementKind::I8, 128), -128);
  EXPECT_EQ(wrapToInt(ElementKind::I16, 65535), -1);
  // Unsigned types below 64 bits are kept zero-extended; ui64 keeps its
  // bit pattern.
  EXPECT_EQ(wrapToInt(ElementKind::UI8, -1), 255);
  EXPECT_EQ(wrapToInt(ElementKind::UI16, 65536 + 7), 7);
  EXPECT_EQ(wrapToInt(ElementKind::UI32, -1), int64_t(UINT32_MAX));
  EXPECT_EQ(wrapToInt(ElementKind::UI64, -1), -1);
}

class HostTensorBytes : public ::testing::Test {
protected:
  mlir::MLIRContext context;
  mlir::Builder builder{&context};
};

TEST_F(HostTensorBytes, F32AndF64UseTheirNativeRepresentation) {
  float floats[3] = {1.5f, -0.1f, 3e38f};
  HostTensor tensor = HostTensor::fromBytes(builder.getF32Type(), {3}, floats);
  EXPECT_EQ(tensor.shape, std::vector<int64_t>{3});
  EXPECT_EQ(tensor.f, (std::vector<double>{1.5, double(-0.1f), double(3e38f)}));
  float back[3];
  tensor.toBytes(back);
  EXPECT_EQ(std::memcmp(floats, back, sizeof(floats)), 0);

  double doubles[2] = {0.1, -1e300};
  HostTensor wide = HostTensor::fromBytes(builder.getF64Type(), {2}, doubles);
  EXPECT_EQ(wide.f, (std::vector<double>{0.1, -1e300}));
  EXPECT_EQ(wide.byteSize(), 16);
}

TEST_F(HostTensorBytes, HalfFormatsAreBitPatterns) {
  // f16: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF, smallest subnormal 1.
  uint16_t half[4] = {0x3C00, 0xC000, 0x7BFF, 0x0001};
  HostTensor tensor =
      HostTensor::fromBytes(builder.getF16Type(), {2, 2}, half);
  EXPECT_EQ(tensor.f, (std::vector<double>{1.0, -2.0, 65504.0,
                                           std::ldexp(1.0, -24)}));
  uint16_t back[4];
  tensor.toBytes(back);
  EXPECT_EQ(std::memcmp(half, back, sizeof(half)), 0);

  // bf16: 1.0 = 0x3F80, -0.5 = 0xBF00.
  uint16_t brain[2] = {0x3F80, 0xBF00};
  HostTensor bf = HostTensor::fromBytes(builder.getBF16Type(), {2}, brain);
  EXPECT_EQ(bf.f, (std::vector<double>{1.0, -0.5}));
  uint16_t brainBack[2];
  bf.toBytes(brainBack);
  EXPECT_EQ(std::memcmp(brain, brainBack, sizeof(brain)), 0);
}

TEST_F(HostTensorBytes, IntegersAndBooleans) {
  uint8_t bools[3] = {0, 1, 7};
  HostTensor pred = HostTensor::fromBytes(builder.getI1Type(), {3}, bools);
  EXPECT_EQ(pred.i, (std::vector<int64_t>{0, 1, 1}));
  uint8_t boolsBack[3];
  pred.toBytes(boolsBack);
  EXPECT_EQ(boolsBack[2], 1);

  int32_t ints[2] = {INT32_MIN, 42};
  HostTensor narrow = HostTensor::fromBytes(builder.getI32Type(), {2}, ints);
  EXPECT_EQ(narrow.i, (std::vector<int64_t>{INT32_MIN, 42}));
  int32_t intsBack[2];
  narrow.toBytes(intsBack);
  EXPECT_EQ(std::memcmp(ints, intsBack, sizeof(ints)), 0);

  // A rank-0 tensor has one element; the source need not be aligned.
  char unaligned[9] = {};
  int64_t big = INT64_MIN + 3;
  std::memcpy(unaligned + 1, &big, sizeof(big));
  HostTensor scalar =
      HostTensor::fromBytes(builder.getIntegerType(64), {}, unaligned + 1);
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.i, (std::vector<int64_t>{INT64_MIN + 3}));
}

TEST_F(HostTensorBytes, ConstructorsRoundAndWrap) {
  HostTensor half =
      HostTensor::fromFloats(builder.getF16Type(), {2}, {0.1, 70000.0});
  EXPECT_EQ(half.f[0], 0.0999755859375);
  EXPECT_TRUE(std::isinf(half.f[1]));
  HostTensor narrow = HostTensor::fromInts(builder.getI32Type(), {1},
                                           {(int64_t(1) << 32) + 7});
  EXPECT_EQ(narrow.i[0], 7);
  HostTensor zeros(builder.getF32Type(), {2, 0, 3});
  EXPECT_EQ(zeros.numElements(), 0);
  EXPECT_TRUE(zeros.f.empty());
  EXPECT_EQ(HostTensor::fromInts(builder.getI1Type(), {2}, {0, 1}).toString(),
            "tensor<2xi1> [0, 1]");
}

TEST(HostTensorIndexing, RowMajorStrides) {
  EXPECT_EQ(computeStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(computeStrides({}), std::vector<int64_t>{});
  EXPECT_EQ(computeNumElements({2, 3, 4}), 24);
  EXPECT_EQ(computeNumElements({}), 1);
}

} // namespace
