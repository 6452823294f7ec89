//===- ReferenceEvaluatorTest.cpp - Tests of the reference evaluator ------===//
//
// Each test parses a small kiln function, evaluates it, and compares the
// results with values worked out independently: by hand, or with native
// float arithmetic where the claim is that the evaluator matches it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/ReferenceEvaluator.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using ::kiln::EvaluatorOptions;
using ::kiln::HostTensor;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// Bitwise equality of doubles, except that all NaNs are equal: the tests
/// care about the sign of zero.
bool sameDouble(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

void expectFloats(const HostTensor &actual, std::vector<int64_t> shape,
                  std::vector<double> expected) {
  EXPECT_EQ(actual.shape, shape) << actual.toString();
  ASSERT_EQ(actual.f.size(), expected.size()) << actual.toString();
  for (size_t n = 0; n < expected.size(); ++n)
    EXPECT_TRUE(sameDouble(actual.f[n], expected[n]))
        << "element " << n << ": expected " << expected[n] << ", got "
        << actual.f[n] << " in " << actual.toString();
}

void expectInts(const HostTensor &actual, std::vector<int64_t> shape,
                std::vector<int64_t> expected) {
  EXPECT_EQ(actual.shape, shape) << actual.toString();
  EXPECT_EQ(actual.i, expected) << actual.toString();
}

/// Native single-precision value, as compiled f32 code would produce it.
double single(float value) { return static_cast<double>(value); }

class ReferenceEvaluatorTest : public ::testing::Test {
protected:
  ReferenceEvaluatorTest() {
    context.loadDialect<mlir::kiln::KilnDialect, func::FuncDialect>();
  }

  /// Parses `source` (a module) under the name test.mlir and returns its
  /// function @main; the module lives as long as the test.
  func::FuncOp parse(StringRef source, bool verify = true) {
    ParserConfig config(&context, verify);
    module = parseSourceString<ModuleOp>(source, config, "test.mlir");
    if (!module)
      return nullptr;
    return module->lookupSymbol<func::FuncOp>("main");
  }

  /// The text of a program that several tests share, from
  /// test/unit/compiler/Inputs.
  static std::string readInput(StringRef name) {
    std::string path = (llvm::Twine(KILN_TEST_INPUTS_DIR) + "/" + name).str();
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      ADD_FAILURE() << "cannot read " << path;
      return "";
    }
    return (*buffer)->getBuffer().str();
  }

  /// Evaluates @main of `source`; an evaluation error fails the test.
  std::vector<HostTensor> run(StringRef source,
                              std::vector<HostTensor> inputs = {}) {
    func::FuncOp func = parse(source);
    if (!func) {
      ADD_FAILURE() << "the source does not parse or has no @main";
      return {};
    }
    auto results = ::kiln::evaluate(func, inputs, options);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  /// Evaluates @main of `source`, which must fail, and returns the message.
  std::string runError(StringRef source, std::vector<HostTensor> inputs = {},
                       bool verify = true) {
    func::FuncOp func = parse(source, verify);
    if (!func) {
      ADD_FAILURE() << "the source does not parse or has no @main";
      return {};
    }
    auto results = ::kiln::evaluate(func, inputs, options);
    if (results) {
      ADD_FAILURE() << "evaluation succeeded but should have failed";
      return {};
    }
    return llvm::toString(results.takeError());
  }

  HostTensor floats(Type type, std::vector<int64_t> shape,
                    std::vector<double> values) {
    return HostTensor::fromFloats(type, shape, values);
  }
  HostTensor ints(Type type, std::vector<int64_t> shape,
                  std::vector<int64_t> values) {
    return HostTensor::fromInts(type, shape, values);
  }

  MLIRContext context;
  Builder b{&context};
  OwningOpRef<ModuleOp> module;
  EvaluatorOptions options;
};

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, F32ArithmeticMatchesNativeFloat) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %add = kiln.add %a, %b : tensor<4xf32>
      %sub = kiln.sub %a, %b : tensor<4xf32>
      %mul = kiln.mul %a, %b : tensor<4xf32>
      %div = kiln.div %a, %b : tensor<4xf32>
      func.return %add, %sub, %mul, %div
          : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }
  )mlir";
  std::vector<float> a = {0.1f, 1.0f, 16777216.0f, -3.0f};
  std::vector<float> bv = {0.2f, 3.0f, 1.0f, 7.0f};
  auto results = run(source, {floats(b.getF32Type(), {4}, {a.begin(), a.end()}),
                              floats(b.getF32Type(), {4}, {bv.begin(), bv.end()})});
  ASSERT_EQ(results.size(), 4u);
  std::vector<double> add, sub, mul, div;
  for (size_t n = 0; n < a.size(); ++n) {
    add.push_back(single(a[n] + bv[n]));
    sub.push_back(single(a[n] - bv[n]));
    mul.push_back(single(a[n] * bv[n]));
    div.push_back(single(a[n] / bv[n]));
  }
  // 2^24 + 1 is not an f32: the sum rounds back to 2^24.
  EXPECT_EQ(add[2], 16777216.0);
  expectFloats(results[0], {4}, add);
  expectFloats(results[1], {4}, sub);
  expectFloats(results[2], {4}, mul);
  expectFloats(results[3], {4}, div);
}

TEST_F(ReferenceEvaluatorTest, F32ArithmeticMatchesNativeFloatOnRandomInputs) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<1000xf32>, %b: tensor<1000xf32>)
        -> (tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>) {
      %add = kiln.add %a, %b : tensor<1000xf32>
      %mul = kiln.mul %a, %b : tensor<1000xf32>
      %div = kiln.div %a, %b : tensor<1000xf32>
      func.return %add, %mul, %div
          : tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>
    }
  )mlir";
  std::mt19937 generator(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::vector<float> a, bv;
  for (int n = 0; n < 1000; ++n) {
    a.push_back(std::ldexp(mantissa(generator), exponent(generator)));
    bv.push_back(std::ldexp(mantissa(generator), exponent(generator)));
  }
  auto results = run(source, {floats(b.getF32Type(), {1000}, {a.begin(), a.end()}),
                              floats(b.getF32Type(), {1000}, {bv.begin(), bv.end()})});
  ASSERT_EQ(results.size(), 3u);
  for (size_t n = 0; n < a.size(); ++n) {
    EXPECT_TRUE(sameDouble(results[0].f[n], single(a[n] + bv[n]))) << n;
    EXPECT_TRUE(sameDouble(results[1].f[n], single(a[n] * bv[n]))) << n;
    EXPECT_TRUE(sameDouble(results[2].f[n], single(a[n] / bv[n]))) << n;
  }
}

TEST_F(ReferenceEvaluatorTest, HalfPrecisionArithmeticRoundsToTheFormat) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<3xf16>, %b: tensor<3xf16>,
                    %c: tensor<2xbf16>, %d: tensor<2xbf16>)
        -> (tensor<3xf16>, tensor<2xbf16>) {
      %h = kiln.add %a, %b : tensor<3xf16>
      %bf = kiln.add %c, %d : tensor<2xbf16>
      func.return %h, %bf : tensor<3xf16>, tensor<2xbf16>
    }
  )mlir";
  auto results =
      run(source, {floats(b.getF16Type(), {3}, {2048, 60000, 1}),
                   floats(b.getF16Type(), {3}, {1, 10000, 0.000244140625}),
                   floats(b.getBF16Type(), {2}, {1, 256}),
                   floats(b.getBF16Type(), {2}, {0.00390625, 1})});
  ASSERT_EQ(results.size(), 2u);
  // f16: 2048 + 1 is a tie between 2048 and 2050 and goes to the even 2048;
  // 70000 overflows; 1 + 2^-12 is below the midpoint and rounds back to 1.
  expectFloats(results[0], {3}, {2048, inf, 1});
  // bf16 keeps 8 significant bits: 1 + 2^-8 and 256 + 1 are ties to even.
  expectFloats(results[1], {2}, {1, 256});
}

TEST_F(ReferenceEvaluatorTest, IntegerArithmeticWraps) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>, %c: tensor<1xi64>)
        -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<1xi64>) {
      %add = kiln.add %a, %b : tensor<3xi32>
      %sub = kiln.sub %a, %b : tensor<3xi32>
      %mul = kiln.mul %a, %b : tensor<3xi32>
      %wide = kiln.add %c, %c : tensor<1xi64>
      func.return %add, %sub, %mul, %wide
          : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<1xi64>
    }
  )mlir";
  auto results =
      run(source, {ints(b.getI32Type(), {3}, {INT32_MAX, INT32_MIN, 65536}),
                   ints(b.getI32Type(), {3}, {1, 1, 65536}),
                   ints(b.getI64Type(), {1}, {INT64_MAX})});
  ASSERT_EQ(results.size(), 4u);
  expectInts(results[0], {3}, {INT32_MIN, INT32_MIN + 1, 131072});
  expectInts(results[1], {3}, {INT32_MAX - 1, INT32_MAX, 0});
  expectInts(results[2], {3}, {INT32_MAX, INT32_MIN, 0});
  expectInts(results[3], {1}, {-2});
}

TEST_F(ReferenceEvaluatorTest, IntegerDivisionTruncatesTowardZero) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<5xi32>, %b: tensor<5xi32>) -> tensor<5xi32> {
      %q = kiln.div %a, %b : tensor<5xi32>
      func.return %q : tensor<5xi32>
    }
  )mlir";
  auto results = run(source, {ints(b.getI32Type(), {5}, {7, -7, 7, -7, INT32_MIN}),
                              ints(b.getI32Type(), {5}, {2, 2, -2, -2, -1})});
  ASSERT_EQ(results.size(), 1u);
  // The overflowing INT32_MIN / -1 wraps.
  expectInts(results[0], {5}, {3, -3, -3, 3, INT32_MIN});
}

TEST_F(ReferenceEvaluatorTest,
       UnsignedIntegersDivideCompareAndConvertUnsigned) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<4xui8>, %b: tensor<4xui8>)
        -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>,
            tensor<4xf32>, tensor<4xi8>, tensor<4xui8>) {
      %q = kiln.div %a, %b : tensor<4xui8>
      %r = kiln.rem %a, %b : tensor<4xui8>
      %m = kiln.max %a, %b : tensor<4xui8>
      %lt = kiln.compare lt, %a, %b : tensor<4xui8>
      %f = kiln.cast %a : tensor<4xui8> to tensor<4xf32>
      %s = kiln.cast %a : tensor<4xui8> to tensor<4xi8>
      %sh = kiln.shift_right %a, %b : tensor<4xui8>
      func.return %q, %r, %m, %lt, %f, %s, %sh
          : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>,
            tensor<4xf32>, tensor<4xi8>, tensor<4xui8>
    }
  )mlir";
  Type ui8 = b.getIntegerType(8, /*isSigned=*/false);
  auto results = run(source, {ints(ui8, {4}, {200, 255, 7, 128}),
                              ints(ui8, {4}, {3, 16, 1, 9})});
  ASSERT_EQ(results.size(), 7u);
  // 200 and 255 are -56 and -1 as i8; read unsigned they divide, order and
  // convert as the large values they are.
  expectInts(results[0], {4}, {66, 15, 7, 14});
  expectInts(results[1], {4}, {2, 15, 0, 2});
  expectInts(results[2], {4}, {200, 255, 7, 128});
  expectInts(results[3], {4}, {0, 0, 0, 0});
  expectFloats(results[4], {4}, {200, 255, 7, 128});
  expectInts(results[5], {4}, {-56, -1, 7, -128});
  // Logical shifts; 9 is past the width.
  expectInts(results[6], {4}, {25, 0, 3, 0});
}

TEST_F(ReferenceEvaluatorTest, WideUnsignedValuesKeepTheirOrder) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<2xui64>, %b: tensor<2xui64>)
        -> (tensor<2xi1>, tensor<2xui64>, tensor<2xf64>, tensor<2xui64>) {
      %gt = kiln.compare gt, %a, %b : tensor<2xui64>
      %m = kiln.min %a, %b : tensor<2xui64>
      %f = kiln.cast %a : tensor<2xui64> to tensor<2xf64>
      %q = kiln.div %a, %b : tensor<2xui64>
      func.return %gt, %m, %f, %q
          : tensor<2xi1>, tensor<2xui64>, tensor<2xf64>, tensor<2xui64>
    }
  )mlir";
  Type ui64 = b.getIntegerType(64, /*isSigned=*/false);
  // -1 is 2^64 - 1 and INT64_MIN is 2^63 as ui64.
  auto results =
      run(source, {ints(ui64, {2}, {-1, INT64_MIN}), ints(ui64, {2}, {1, 2})});
  ASSERT_EQ(results.size(), 4u);
  expectInts(results[0], {2}, {1, 1});
  expectInts(results[1], {2}, {1, 2});
  expectFloats(results[2], {2},
               {18446744073709551616.0, 9223372036854775808.0});
  expectInts(results[3], {2}, {-1, int64_t(1) << 62});
}

TEST_F(ReferenceEvaluatorTest, FloatToUnsignedSaturates) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<5xf32>) -> (tensor<5xui8>, tensor<5xi8>) {
      %u = kiln.cast %x : tensor<5xf32> to tensor<5xui8>
      %s = kiln.cast %x : tensor<5xf32> to tensor<5xi8>
      func.return %u, %s : tensor<5xui8>, tensor<5xi8>
    }
  )mlir";
  double nan = std::numeric_limits<double>::quiet_NaN();
  auto results =
      run(source, {floats(b.getF32Type(), {5}, {-3.5, 255.9, 300, nan, -0.5})});
  ASSERT_EQ(results.size(), 2u);
  expectInts(results[0], {5}, {0, 255, 255, 0, 0});
  expectInts(results[1], {5}, {-3, 127, 127, 0, 0});
}

TEST_F(ReferenceEvaluatorTest, MaxMinPropagateNaNAndOrderSignedZeros) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<5xf32>, %b: tensor<5xf32>,
                    %c: tensor<2xi64>, %d: tensor<2xi64>)
        -> (tensor<5xf32>, tensor<5xf32>, tensor<2xi64>, tensor<2xi64>) {
      %max = kiln.max %a, %b : tensor<5xf32>
      %min = kiln.min %a, %b : tensor<5xf32>
      %imax = kiln.max %c, %d : tensor<2xi64>
      %imin = kiln.min %c, %d : tensor<2xi64>
      func.return %max, %min, %imax, %imin
          : tensor<5xf32>, tensor<5xf32>, tensor<2xi64>, tensor<2xi64>
    }
  )mlir";
  auto results =
      run(source, {floats(b.getF32Type(), {5}, {nan, 1, -0.0, 1, -inf}),
                   floats(b.getF32Type(), {5}, {1, nan, 0.0, 2, 3}),
                   ints(b.getI64Type(), {2}, {-5, 9}),
                   ints(b.getI64Type(), {2}, {3, -9})});
  ASSERT_EQ(results.size(), 4u);
  expectFloats(results[0], {5}, {nan, nan, 0.0, 2, 3});
  expectFloats(results[1], {5}, {nan, nan, -0.0, 1, -inf});
  expectInts(results[2], {2}, {3, 9});
  expectInts(results[3], {2}, {-5, -9});
}

TEST_F(ReferenceEvaluatorTest, Pow) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {
      %p = kiln.pow %a, %b : tensor<4xf64>
      func.return %p : tensor<4xf64>
    }
  )mlir";
  auto results = run(source, {floats(b.getF64Type(), {4}, {2, 9, 4, -2}),
                              floats(b.getF64Type(), {4}, {10, 0.5, -1, 3})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {4}, {1024, 3, 0.25, -8});
}

TEST_F(ReferenceEvaluatorTest, UnaryFloatOpsAtExactPoints) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<3xf32>, %y: tensor<2xf32>)
        -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>,
            tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
            tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %neg = kiln.neg %x : tensor<3xf32>
      %abs = kiln.abs %x : tensor<3xf32>
      %relu = kiln.relu %x : tensor<3xf32>
      %exp = kiln.exp %y : tensor<2xf32>
      %log = kiln.log %y : tensor<2xf32>
      %sqrt = kiln.sqrt %y : tensor<2xf32>
      %rsqrt = kiln.rsqrt %y : tensor<2xf32>
      %tanh = kiln.tanh %y : tensor<2xf32>
      %sigmoid = kiln.sigmoid %y : tensor<2xf32>
      %sin = kiln.sin %y : tensor<2xf32>
      %cos = kiln.cos %y : tensor<2xf32>
      func.return %neg, %abs, %relu, %exp, %log, %sqrt, %rsqrt, %tanh,
          %sigmoid, %sin, %cos
          : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>,
            tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
            tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {3}, {-1.5, 0.0, 2}),
                              floats(b.getF32Type(), {2}, {1, 4})});
  ASSERT_EQ(results.size(), 11u);
  expectFloats(results[0], {3}, {1.5, -0.0, -2});
  expectFloats(results[1], {3}, {1.5, 0.0, 2});
  expectFloats(results[2], {3}, {0.0, 0.0, 2});
  // Transcendentals are correctly rounded up to libm's accuracy: compare
  // with the closest f32 values of the exact results, allowing 1 ulp.
  auto near = [](const HostTensor &actual, std::vector<double> exact) {
    for (size_t n = 0; n < exact.size(); ++n) {
      double ulp = exact[n] == 0.0 ? 0.0
                                   : std::ldexp(1.0, std::ilogb(exact[n]) - 23);
      EXPECT_NEAR(actual.f[n], exact[n], ulp) << actual.toString();
      EXPECT_EQ(actual.f[n], single(static_cast<float>(actual.f[n])))
          << "not an f32 value";
    }
  };
  near(results[3], {2.718281828459045, 54.598150033144236});
  near(results[4], {0.0, 1.3862943611198906});
  expectFloats(results[5], {2}, {1, 2});
  expectFloats(results[6], {2}, {1, 0.5});
  near(results[7], {0.7615941559557649, 0.999329299739067});
  near(results[8], {0.7310585786300049, 0.9820137900379085});
  near(results[9], {0.8414709848078965, -0.7568024953079282});
  near(results[10], {0.5403023058681398, -0.6536436208636119});
}

TEST_F(ReferenceEvaluatorTest, UnaryIntegerOps) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<4xi32>)
        -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
      %neg = kiln.neg %x : tensor<4xi32>
      %abs = kiln.abs %x : tensor<4xi32>
      %relu = kiln.relu %x : tensor<4xi32>
      func.return %neg, %abs, %relu : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
    }
  )mlir";
  auto results =
      run(source, {ints(b.getI32Type(), {4}, {-5, 0, 7, INT32_MIN})});
  ASSERT_EQ(results.size(), 3u);
  expectInts(results[0], {4}, {5, 0, -7, INT32_MIN});
  expectInts(results[1], {4}, {5, 0, 7, INT32_MIN});
  expectInts(results[2], {4}, {0, 0, 7, 0});
}

//===----------------------------------------------------------------------===//
// Compare, select, cast
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, CompareAllDirectionsWithNaN) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>)
        -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>,
            tensor<3xi1>, tensor<3xi1>) {
      %eq = kiln.compare eq, %a, %b : tensor<3xf32>
      %ne = kiln.compare ne, %a, %b : tensor<3xf32>
      %lt = kiln.compare lt, %a, %b : tensor<3xf32>
      %le = kiln.compare le, %a, %b : tensor<3xf32>
      %gt = kiln.compare gt, %a, %b : tensor<3xf32>
      %ge = kiln.compare ge, %a, %b : tensor<3xf32>
      func.return %eq, %ne, %lt, %le, %gt, %ge
          : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>,
            tensor<3xi1>, tensor<3xi1>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {3}, {1, 2, nan}),
                              floats(b.getF32Type(), {3}, {2, 2, nan})});
  ASSERT_EQ(results.size(), 6u);
  expectInts(results[0], {3}, {0, 1, 0});
  expectInts(results[1], {3}, {1, 0, 1});
  expectInts(results[2], {3}, {1, 0, 0});
  expectInts(results[3], {3}, {1, 1, 0});
  expectInts(results[4], {3}, {0, 0, 0});
  expectInts(results[5], {3}, {0, 1, 0});
  EXPECT_EQ(results[0].elementType, b.getI1Type());
}

TEST_F(ReferenceEvaluatorTest, CompareIntegers) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi1> {
      %lt = kiln.compare lt, %a, %b : tensor<3xi64>
      func.return %lt : tensor<3xi1>
    }
  )mlir";
  auto results = run(source, {ints(b.getI64Type(), {3}, {-1, 5, INT64_MIN}),
                              ints(b.getI64Type(), {3}, {0, 5, INT64_MAX})});
  ASSERT_EQ(results.size(), 1u);
  expectInts(results[0], {3}, {1, 0, 1});
}

TEST_F(ReferenceEvaluatorTest, Select) {
  // The Elementwise trait currently makes the verifier reject a rank-0
  // predicate with ranked values, so the rank-0 case here selects scalars.
  const char *source = R"mlir(
    func.func @main(%p: tensor<3xi1>, %q: tensor<i1>, %a: tensor<3xf32>,
                    %b: tensor<3xf32>, %c: tensor<i32>, %d: tensor<i32>)
        -> (tensor<3xf32>, tensor<i32>) {
      %e = kiln.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>
      %w = kiln.select %q, %c, %d : tensor<i1>, tensor<i32>
      func.return %e, %w : tensor<3xf32>, tensor<i32>
    }
  )mlir";
  auto results = run(source, {ints(b.getI1Type(), {3}, {1, 0, 1}),
                              ints(b.getI1Type(), {}, {0}),
                              floats(b.getF32Type(), {3}, {1, 2, 3}),
                              floats(b.getF32Type(), {3}, {10, 20, 30}),
                              ints(b.getI32Type(), {}, {4}),
                              ints(b.getI32Type(), {}, {5})});
  ASSERT_EQ(results.size(), 2u);
  expectFloats(results[0], {3}, {1, 20, 3});
  expectInts(results[1], {}, {5});
}

TEST_F(ReferenceEvaluatorTest, CastFloatToIntTruncatesAndSaturates) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<7xf32>, %y: tensor<2xf64>)
        -> (tensor<7xi32>, tensor<2xi64>) {
      %i = kiln.cast %x : tensor<7xf32> to tensor<7xi32>
      %j = kiln.cast %y : tensor<2xf64> to tensor<2xi64>
      func.return %i, %j : tensor<7xi32>, tensor<2xi64>
    }
  )mlir";
  auto results =
      run(source, {floats(b.getF32Type(), {7},
                          {2.7, -2.7, nan, 3e9, -3e9, inf, -0.5}),
                   floats(b.getF64Type(), {2}, {1e19, -1e19})});
  ASSERT_EQ(results.size(), 2u);
  expectInts(results[0], {7}, {2, -2, 0, INT32_MAX, INT32_MIN, INT32_MAX, 0});
  expectInts(results[1], {2}, {INT64_MAX, INT64_MIN});
}

TEST_F(ReferenceEvaluatorTest, CastToAndFromI1) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<4xf32>, %y: tensor<3xi32>, %p: tensor<2xi1>)
        -> (tensor<4xi1>, tensor<3xi1>, tensor<2xf32>, tensor<2xi64>) {
      %a = kiln.cast %x : tensor<4xf32> to tensor<4xi1>
      %b = kiln.cast %y : tensor<3xi32> to tensor<3xi1>
      %c = kiln.cast %p : tensor<2xi1> to tensor<2xf32>
      %d = kiln.cast %p : tensor<2xi1> to tensor<2xi64>
      func.return %a, %b, %c, %d
          : tensor<4xi1>, tensor<3xi1>, tensor<2xf32>, tensor<2xi64>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {4}, {0.0, -0.0, 0.5, nan}),
                              ints(b.getI32Type(), {3}, {0, 2, -1}),
                              ints(b.getI1Type(), {2}, {1, 0})});
  ASSERT_EQ(results.size(), 4u);
  expectInts(results[0], {4}, {0, 0, 1, 1});
  expectInts(results[1], {3}, {0, 1, 1});
  expectFloats(results[2], {2}, {1, 0});
  expectInts(results[3], {2}, {1, 0});
}

TEST_F(ReferenceEvaluatorTest, CastBetweenNumberTypes) {
  const char *source = R"mlir(
    func.func @main(%w: tensor<2xi64>, %d: tensor<2xf64>, %f: tensor<3xf32>,
                    %h: tensor<1xf16>, %n: tensor<2xi32>)
        -> (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf16>,
            tensor<3xbf16>, tensor<1xf32>, tensor<2xi64>, tensor<2xf16>) {
      %a = kiln.cast %w : tensor<2xi64> to tensor<2xi32>
      %b = kiln.cast %w : tensor<2xi64> to tensor<2xf32>
      %c = kiln.cast %d : tensor<2xf64> to tensor<2xf32>
      %e = kiln.cast %f : tensor<3xf32> to tensor<3xf16>
      %g = kiln.cast %f : tensor<3xf32> to tensor<3xbf16>
      %k = kiln.cast %h : tensor<1xf16> to tensor<1xf32>
      %m = kiln.cast %n : tensor<2xi32> to tensor<2xi64>
      %o = kiln.cast %n : tensor<2xi32> to tensor<2xf16>
      func.return %a, %b, %c, %e, %g, %k, %m, %o
          : tensor<2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf16>,
            tensor<3xbf16>, tensor<1xf32>, tensor<2xi64>, tensor<2xf16>
    }
  )mlir";
  // 2^60 + 2^36 + 1 lies just above the midpoint of two f32 values; going
  // through double first would lose the +1 and round to even (down).
  int64_t justAboveTie = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  auto results =
      run(source, {ints(b.getI64Type(), {2}, {(int64_t(1) << 32) + 5, justAboveTie}),
                   floats(b.getF64Type(), {2}, {0.1, 1e39}),
                   floats(b.getF32Type(), {3}, {65520, 1.01171875, 0.1}),
                   floats(b.getF16Type(), {1}, {0.0999755859375}),
                   ints(b.getI32Type(), {2}, {-7, 2049})});
  ASSERT_EQ(results.size(), 8u);
  expectInts(results[0], {2}, {5, int32_t(justAboveTie)});
  expectFloats(results[1], {2},
               {4294967296.0, std::ldexp(1.0, 60) + std::ldexp(1.0, 37)});
  expectFloats(results[2], {2}, {single(0.1f), inf});
  // f16 0.1 = 0x2E66 = 0.0999755859375; bf16 1 + 3 * 2^-8 is a tie that
  // rounds to the even 1 + 2^-6; bf16 0.1 = 0x3DCD = 0.10009765625.
  expectFloats(results[3], {3}, {inf, 1.01171875, 0.0999755859375});
  expectFloats(results[4], {3}, {65536, 1.015625, 0.10009765625});
  expectFloats(results[5], {1}, {0.0999755859375});
  expectInts(results[6], {2}, {-7, 2049});
  expectFloats(results[7], {2}, {-7, 2048});
}

//===----------------------------------------------------------------------===//
// Constants and iota
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, DenseAndSplatConstants) {
  const char *source = R"mlir(
    func.func @main() -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<2xi1>,
                          tensor<f16>, tensor<3xi64>) {
      %a = kiln.constant dense<1.5> : tensor<2x2xf32>
      %b = kiln.constant dense<[[1, -2], [3, 2147483647]]> : tensor<2x2xi32>
      %c = kiln.constant dense<[true, false]> : tensor<2xi1>
      %d = kiln.constant dense<0.1> : tensor<f16>
      %e = kiln.constant dense<[-1, 0, 9223372036854775807]> : tensor<3xi64>
      func.return %a, %b, %c, %d, %e
          : tensor<2x2xf32>, tensor<2x2xi32>, tensor<2xi1>, tensor<f16>,
            tensor<3xi64>
    }
  )mlir";
  auto results = run(source);
  ASSERT_EQ(results.size(), 5u);
  expectFloats(results[0], {2, 2}, {1.5, 1.5, 1.5, 1.5});
  expectInts(results[1], {2, 2}, {1, -2, 3, INT32_MAX});
  expectInts(results[2], {2}, {1, 0});
  expectFloats(results[3], {}, {0.0999755859375});
  expectInts(results[4], {3}, {-1, 0, INT64_MAX});
}

TEST_F(ReferenceEvaluatorTest, DenseResourceConstant) {
  // The blob starts with its alignment (4), then 1.0f and 2.0f in
  // little-endian order.
  const char *source = R"mlir(
    func.func @main() -> tensor<2xf32> {
      %a = kiln.constant dense_resource<weights> : tensor<2xf32>
      func.return %a : tensor<2xf32>
    }
    {-#
      dialect_resources: {
        builtin: {
          weights: "0x040000000000803F00000040"
        }
      }
    #-}
  )mlir";
  auto results = run(source);
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {2}, {1.0, 2.0});
}

TEST_F(ReferenceEvaluatorTest, Iota) {
  const char *source = R"mlir(
    func.func @main() -> (tensor<2x3xi32>, tensor<2x3xf32>) {
      %a = kiln.iota dim = 1 : tensor<2x3xi32>
      %b = kiln.iota dim = 0 : tensor<2x3xf32>
      func.return %a, %b : tensor<2x3xi32>, tensor<2x3xf32>
    }
  )mlir";
  auto results = run(source);
  ASSERT_EQ(results.size(), 2u);
  expectInts(results[0], {2, 3}, {0, 1, 2, 0, 1, 2});
  expectFloats(results[1], {2, 3}, {0, 0, 0, 1, 1, 1});
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, BroadcastInDim) {
  const char *source = R"mlir(
    func.func @main(%row: tensor<3xf32>, %one: tensor<1x3xf32>,
                    %col: tensor<2x1xi32>)
        -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2x3xi32>) {
      %a = kiln.broadcast_in_dim %row, dims = [1]
          : (tensor<3xf32>) -> tensor<2x3xf32>
      %b = kiln.broadcast_in_dim %one, dims = [0, 1]
          : (tensor<1x3xf32>) -> tensor<2x3xf32>
      %c = kiln.broadcast_in_dim %col, dims = [0, 2]
          : (tensor<2x1xi32>) -> tensor<2x2x3xi32>
      func.return %a, %b, %c
          : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2x3xi32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {3}, {1, 2, 3}),
                              floats(b.getF32Type(), {1, 3}, {4, 5, 6}),
                              ints(b.getI32Type(), {2, 1}, {7, 8})});
  ASSERT_EQ(results.size(), 3u);
  expectFloats(results[0], {2, 3}, {1, 2, 3, 1, 2, 3});
  expectFloats(results[1], {2, 3}, {4, 5, 6, 4, 5, 6});
  expectInts(results[2], {2, 2, 3}, {7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8});
}

TEST_F(ReferenceEvaluatorTest, ReshapeKeepsRowMajorOrder) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3xi64>) -> (tensor<3x2xi64>, tensor<6xi64>) {
      %a = kiln.reshape %x : (tensor<2x3xi64>) -> tensor<3x2xi64>
      %b = kiln.reshape %a : (tensor<3x2xi64>) -> tensor<6xi64>
      func.return %a, %b : tensor<3x2xi64>, tensor<6xi64>
    }
  )mlir";
  auto results = run(source, {ints(b.getI64Type(), {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(results.size(), 2u);
  expectInts(results[0], {3, 2}, {1, 2, 3, 4, 5, 6});
  expectInts(results[1], {6}, {1, 2, 3, 4, 5, 6});
}

TEST_F(ReferenceEvaluatorTest, Transpose) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3x4xi32>)
        -> (tensor<3x2xf32>, tensor<4x2x3xi32>) {
      %a = kiln.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
      %b = kiln.transpose %y, permutation = [2, 0, 1] : tensor<2x3x4xi32>
      func.return %a, %b : tensor<3x2xf32>, tensor<4x2x3xi32>
    }
  )mlir";
  std::vector<int64_t> y(24);
  for (int64_t n = 0; n < 24; ++n)
    y[n] = n;
  auto results = run(source, {floats(b.getF32Type(), {2, 3}, {1, 2, 3, 4, 5, 6}),
                              ints(b.getI32Type(), {2, 3, 4}, y)});
  ASSERT_EQ(results.size(), 2u);
  expectFloats(results[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  // result[k, i, j] = y[i, j, k] = 12 i + 4 j + k.
  std::vector<int64_t> expected;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        expected.push_back(12 * i + 4 * j + k);
  expectInts(results[1], {4, 2, 3}, expected);
}

TEST_F(ReferenceEvaluatorTest, StridedSlice) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<4x5xi32>) -> (tensor<2x3xi32>, tensor<1x2xi32>) {
      %a = kiln.slice %x, start = [1, 0], limit = [4, 5], stride = [2, 2]
          : tensor<4x5xi32>
      %b = kiln.slice %x, start = [3, 1], limit = [4, 3], stride = [1, 1]
          : tensor<4x5xi32>
      func.return %a, %b : tensor<2x3xi32>, tensor<1x2xi32>
    }
  )mlir";
  std::vector<int64_t> x(20);
  for (int64_t n = 0; n < 20; ++n)
    x[n] = n; // x[r, c] = 5 r + c
  auto results = run(source, {ints(b.getI32Type(), {4, 5}, x)});
  ASSERT_EQ(results.size(), 2u);
  expectInts(results[0], {2, 3}, {5, 7, 9, 15, 17, 19});
  expectInts(results[1], {1, 2}, {16, 17});
}

TEST_F(ReferenceEvaluatorTest, Concat) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>,
                    %c: tensor<2x1xf32>) -> (tensor<2x4xf32>, tensor<4x1xf32>) {
      %x = kiln.concat %a, %b, %c dim = 1
          : tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x1xf32>
      %y = kiln.concat %a, %c dim = 0 : tensor<2x1xf32>, tensor<2x1xf32>
      func.return %x, %y : tensor<2x4xf32>, tensor<4x1xf32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {2, 1}, {1, 2}),
                              floats(b.getF32Type(), {2, 2}, {3, 4, 5, 6}),
                              floats(b.getF32Type(), {2, 1}, {7, 8})});
  ASSERT_EQ(results.size(), 2u);
  expectFloats(results[0], {2, 4}, {1, 3, 4, 7, 2, 5, 6, 8});
  expectFloats(results[1], {4, 1}, {1, 2, 7, 8});
}

TEST_F(ReferenceEvaluatorTest, PadLowHighAndInterior) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3xf32>, %v: tensor<f32>, %m: tensor<1xi1>,
                    %f: tensor<i1>, %e: tensor<0xi32>, %s: tensor<i32>)
        -> (tensor<3x6xf32>, tensor<4xi1>, tensor<2xi32>) {
      %a = kiln.pad %x, %v, low = [1, 0], high = [0, 1], interior = [0, 1]
          : tensor<2x3xf32>, tensor<f32>
      %b = kiln.pad %m, %f, low = [1], high = [2], interior = [3]
          : tensor<1xi1>, tensor<i1>
      %c = kiln.pad %e, %s, low = [1], high = [1], interior = [2]
          : tensor<0xi32>, tensor<i32>
      func.return %a, %b, %c : tensor<3x6xf32>, tensor<4xi1>, tensor<2xi32>
    }
  )mlir";
  auto results =
      run(source, {floats(b.getF32Type(), {2, 3}, {1, 2, 3, 4, 5, 6}),
                   floats(b.getF32Type(), {}, {-1}),
                   ints(b.getI1Type(), {1}, {1}), ints(b.getI1Type(), {}, {0}),
                   ints(b.getI32Type(), {0}, {}), ints(b.getI32Type(), {}, {7})});
  ASSERT_EQ(results.size(), 3u);
  expectFloats(results[0], {3, 6},
               {-1, -1, -1, -1, -1, -1, 1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6,
                -1});
  expectInts(results[1], {4}, {0, 1, 0, 0});
  expectInts(results[2], {2}, {7, 7});
}

TEST_F(ReferenceEvaluatorTest, ReduceWindowStridesPaddingAndDilation) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<5xf32>, %y: tensor<2x3xi32>, %n: tensor<3xf64>,
                    %w: tensor<2xi64>, %p: tensor<2xi32>)
        -> (tensor<3xf32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2xf64>,
            tensor<1xi64>, tensor<3xi32>, tensor<3xf32>) {
      %a = kiln.reduce_window %x, kind = max, window = [2], strides = [2],
          padding_low = [1], padding_high = [1], dilations = [1] : tensor<5xf32>
      %b = kiln.reduce_window %x, kind = sum, window = [3], strides = [1],
          padding_low = [2], padding_high = [0], dilations = [2] : tensor<5xf32>
      %c = kiln.reduce_window %y, kind = sum, window = [2, 2], strides = [1, 1],
          padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1]
          : tensor<2x3xi32>
      %d = kiln.reduce_window %n, kind = max, window = [2], strides = [1],
          padding_low = [0], padding_high = [0], dilations = [1] : tensor<3xf64>
      %e = kiln.reduce_window %w, kind = sum, window = [2], strides = [1],
          padding_low = [0], padding_high = [0], dilations = [1] : tensor<2xi64>
      %f = kiln.reduce_window %p, kind = max, window = [1], strides = [1],
          padding_low = [1], padding_high = [0], dilations = [1] : tensor<2xi32>
      %g = kiln.reduce_window %x, kind = max, window = [1], strides = [3],
          padding_low = [3], padding_high = [0], dilations = [1] : tensor<5xf32>
      func.return %a, %b, %c, %d, %e, %f, %g
          : tensor<3xf32>, tensor<3xf32>, tensor<1x2xi32>, tensor<2xf64>,
            tensor<1xi64>, tensor<3xi32>, tensor<3xf32>
    }
  )mlir";
  int64_t big = std::numeric_limits<int64_t>::max();
  auto results = run(
      source, {floats(b.getF32Type(), {5}, {1, 5, 2, 8, 3}),
               ints(b.getI32Type(), {2, 3}, {1, 2, 3, 4, 5, 6}),
               floats(b.getF64Type(), {3}, {1, nan, 2}),
               ints(b.getI64Type(), {2}, {big, 1}),
               ints(b.getI32Type(), {2}, {-3, 4})});
  ASSERT_EQ(results.size(), 7u);
  // Windows {-1, 0}, {1, 2}, {3, 4}; position -1 is padding.
  expectFloats(results[0], {3}, {1, 5, 8});
  // Positions o - 2 + {0, 2, 4}: {-2, 0, 2}, {-1, 1, 3}, {0, 2, 4}.
  expectFloats(results[1], {3}, {3, 13, 6});
  expectInts(results[2], {1, 2}, {12, 16});
  expectFloats(results[3], {2}, {nan, nan});
  expectInts(results[4], {1}, {std::numeric_limits<int64_t>::min()});
  // The first window lies entirely in the padding.
  expectInts(results[5], {3}, {std::numeric_limits<int32_t>::min(), -3, 4});
  expectFloats(results[6], {3}, {-inf, 1, 8});
}

TEST_F(ReferenceEvaluatorTest, ReduceWindowMaxGradRoutesToTheFirstMaximum) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<5xi32>, %dx: tensor<3xi32>, %y: tensor<4xf32>,
                    %dy: tensor<3xf32>, %n: tensor<4xf32>, %dn: tensor<1xf32>,
                    %o: tensor<3xf32>, %do: tensor<2xf32>, %q: tensor<1xf32>,
                    %dq: tensor<2xf32>)
        -> (tensor<5xi32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>,
            tensor<1xf32>) {
      %a = kiln.reduce_window_max_grad %x, %dx, window = [3], strides = [1],
          padding_low = [0], padding_high = [0], dilations = [1]
          : tensor<5xi32>, tensor<3xi32>
      %b = kiln.reduce_window_max_grad %y, %dy, window = [2], strides = [2],
          padding_low = [1], padding_high = [1], dilations = [1]
          : tensor<4xf32>, tensor<3xf32>
      %c = kiln.reduce_window_max_grad %n, %dn, window = [4], strides = [1],
          padding_low = [0], padding_high = [0], dilations = [1]
          : tensor<4xf32>, tensor<1xf32>
      %d = kiln.reduce_window_max_grad %o, %do, window = [2], strides = [1],
          padding_low = [0], padding_high = [0], dilations = [1]
          : tensor<3xf32>, tensor<2xf32>
      %e = kiln.reduce_window_max_grad %q, %dq, window = [1], strides = [1],
          padding_low = [1], padding_high = [0], dilations = [1]
          : tensor<1xf32>, tensor<2xf32>
      func.return %a, %b, %c, %d, %e
          : tensor<5xi32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>,
            tensor<1xf32>
    }
  )mlir";
  auto results = run(
      source, {ints(b.getI32Type(), {5}, {3, 1, 3, 2, 5}),
               ints(b.getI32Type(), {3}, {10, 20, 30}),
               floats(b.getF32Type(), {4}, {3, 7, 7, 1}),
               floats(b.getF32Type(), {3}, {1, 2, 4}),
               floats(b.getF32Type(), {4}, {1, nan, 5, nan}),
               floats(b.getF32Type(), {1}, {8}),
               floats(b.getF32Type(), {3}, {1, 9, 2}),
               floats(b.getF32Type(), {2}, {0.5, 0.25}),
               floats(b.getF32Type(), {1}, {4}),
               floats(b.getF32Type(), {2}, {100, 1})});
  ASSERT_EQ(results.size(), 5u);
  // Windows [3, 1, 3], [1, 3, 2], [3, 2, 5]: the first 3 wins the tie.
  expectInts(results[0], {5}, {10, 0, 20, 0, 30});
  // Windows {pad, 3}, {7, 7}, {1, pad}: padding is never selected.
  expectFloats(results[1], {4}, {1, 2, 0, 4});
  // The first NaN is the maximum.
  expectFloats(results[2], {4}, {0, 8, 0, 0});
  // Both windows select the 9.
  expectFloats(results[3], {3}, {0, 0.75, 0});
  // The first window is all padding: its cotangent is dropped.
  expectFloats(results[4], {1}, {1});
}

//===----------------------------------------------------------------------===//
// Reductions, matmul, gather, dynamic slices
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, ReduceSumOverSeveralDims) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>, %y: tensor<2x3xi32>)
        -> (tensor<3xf32>, tensor<f32>, tensor<2xi32>) {
      %a = kiln.reduce_sum %x, dims = [0, 2] : tensor<2x3x4xf32>
      %b = kiln.reduce_sum %x, dims = [0, 1, 2] : tensor<2x3x4xf32>
      %c = kiln.reduce_sum %y, dims = [1] : tensor<2x3xi32>
      func.return %a, %b, %c : tensor<3xf32>, tensor<f32>, tensor<2xi32>
    }
  )mlir";
  std::vector<double> x(24);
  for (int n = 0; n < 24; ++n)
    x[n] = n; // x[i, j, k] = 12 i + 4 j + k
  auto results =
      run(source, {floats(b.getF32Type(), {2, 3, 4}, x),
                   ints(b.getI32Type(), {2, 3}, {1, 2, 3, INT32_MAX, 1, 0})});
  ASSERT_EQ(results.size(), 3u);
  // Sum over i, k of 12 i + 4 j + k = 4 * 12 + 8 * 4 j + 2 * 6.
  expectFloats(results[0], {3}, {60, 92, 124});
  expectFloats(results[1], {}, {276});
  expectInts(results[2], {2}, {6, INT32_MIN});
}

TEST_F(ReferenceEvaluatorTest, ReduceSumRoundsEachPartialSumInOrder) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<4x1xf32>) -> tensor<1xf32> {
      %s = kiln.reduce_sum %x, dims = [0] : tensor<4x1xf32>
      func.return %s : tensor<1xf32>
    }
  )mlir";
  // ((1e8 + 1) - 1e8) + 1 in f32: 1e8 + 1 rounds to 1e8, so the result is 1
  // (the exact sum is 2).
  auto results =
      run(source, {floats(b.getF32Type(), {4, 1}, {1e8, 1, -1e8, 1})});
  ASSERT_EQ(results.size(), 1u);
  float acc = 0.0f;
  for (float v : {1e8f, 1.0f, -1e8f, 1.0f})
    acc += v;
  EXPECT_EQ(acc, 1.0f);
  expectFloats(results[0], {1}, {1.0});
}

TEST_F(ReferenceEvaluatorTest, ReduceMaxAndMean) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x2xf32>, %n: tensor<3xf32>, %i: tensor<2x2xi64>,
                    %m: tensor<3xf32>)
        -> (tensor<2xf32>, tensor<f32>, tensor<2xi64>, tensor<f32>,
            tensor<2xf32>) {
      %a = kiln.reduce_max %x, dims = [1] : tensor<2x2xf32>
      %b = kiln.reduce_max %n, dims = [0] : tensor<3xf32>
      %c = kiln.reduce_max %i, dims = [0] : tensor<2x2xi64>
      %d = kiln.reduce_mean %m, dims = [0] : tensor<3xf32>
      %e = kiln.reduce_mean %x, dims = [0] : tensor<2x2xf32>
      func.return %a, %b, %c, %d, %e
          : tensor<2xf32>, tensor<f32>, tensor<2xi64>, tensor<f32>,
            tensor<2xf32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {2, 2}, {1, 5, 7, 2}),
                              floats(b.getF32Type(), {3}, {1, nan, 3}),
                              ints(b.getI64Type(), {2, 2}, {-4, 3, -2, 1}),
                              floats(b.getF32Type(), {3}, {1, 2, 2})});
  ASSERT_EQ(results.size(), 5u);
  expectFloats(results[0], {2}, {5, 7});
  expectFloats(results[1], {}, {nan});
  expectInts(results[2], {2}, {-2, 3});
  expectFloats(results[3], {}, {single(5.0f / 3.0f)});
  expectFloats(results[4], {2}, {4, 3.5});
}

TEST_F(ReferenceEvaluatorTest, RoundingOpsAndSign) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<8xf32>, %i: tensor<4xi32>)
        -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
            tensor<4xi32>) {
      %f = kiln.floor %x : tensor<8xf32>
      %c = kiln.ceil %x : tensor<8xf32>
      %r = kiln.round %x : tensor<8xf32>
      %s = kiln.sign %x : tensor<8xf32>
      %t = kiln.sign %i : tensor<4xi32>
      func.return %f, %c, %r, %s, %t : tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<4xi32>
    }
  )mlir";
  auto results =
      run(source, {floats(b.getF32Type(), {8},
                          {-2.5, -0.5, 0.5, 1.5, 2.5, -0.0, nan, -inf}),
                   ints(b.getI32Type(), {4}, {-7, 0, 3, -2147483648LL})});
  ASSERT_EQ(results.size(), 5u);
  expectFloats(results[0], {8}, {-3, -1, 0, 1, 2, -0.0, nan, -inf});
  expectFloats(results[1], {8}, {-2, -0.0, 1, 2, 3, -0.0, nan, -inf});
  // Halfway cases go to the even neighbour.
  expectFloats(results[2], {8}, {-2, -0.0, 0, 2, 2, -0.0, nan, -inf});
  expectFloats(results[3], {8}, {-1, -1, 1, 1, 1, -0.0, nan, -1});
  expectInts(results[4], {4}, {-1, 0, 1, -1});
}

TEST_F(ReferenceEvaluatorTest, MathFunctionsAtExactPoints) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<3xf64>)
        -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>,
            tensor<3xf64>, tensor<3xf64>) {
      %e = kiln.erf %x : tensor<3xf64>
      %a = kiln.asin %x : tensor<3xf64>
      %c = kiln.acos %x : tensor<3xf64>
      %t = kiln.atanh %x : tensor<3xf64>
      %h = kiln.cosh %x : tensor<3xf64>
      %k = kiln.acosh %x : tensor<3xf64>
      func.return %e, %a, %c, %t, %h, %k : tensor<3xf64>, tensor<3xf64>,
          tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>
    }
  )mlir";
  auto results = run(source, {floats(b.getF64Type(), {3}, {-0.0, 1, 2})});
  ASSERT_EQ(results.size(), 6u);
  const double halfPi = 1.5707963267948966;
  expectFloats(results[0], {3}, {-0.0, 0.84270079294971489, 0.99532226501895271});
  expectFloats(results[1], {3}, {-0.0, halfPi, nan});
  expectFloats(results[2], {3}, {halfPi, 0, nan});
  expectFloats(results[3], {3}, {-0.0, inf, nan});
  expectFloats(results[4], {3}, {1, 1.5430806348152437, 3.7621956910836314});
  expectFloats(results[5], {3}, {nan, 0, 1.3169578969248166});
}

TEST_F(ReferenceEvaluatorTest, RemKeepsTheDividendsSign) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<7xi32>, %b: tensor<7xi32>, %x: tensor<5xf32>,
                    %y: tensor<5xf32>) -> (tensor<7xi32>, tensor<5xf32>) {
      %r = kiln.rem %a, %b : tensor<7xi32>
      %s = kiln.rem %x, %y : tensor<5xf32>
      func.return %r, %s : tensor<7xi32>, tensor<5xf32>
    }
  )mlir";
  auto results = run(
      source, {ints(b.getI32Type(), {7}, {7, -7, 7, -7, 5, -2147483648LL, -2147483648LL}),
               ints(b.getI32Type(), {7}, {3, 3, -3, -3, 0, -1, 0}),
               floats(b.getF32Type(), {5}, {5.5, -5.5, -4, 1, inf}),
               floats(b.getF32Type(), {5}, {2, 2, 2, 0, 1})});
  ASSERT_EQ(results.size(), 2u);
  // By zero: the dividend; by -1: 0, even for the most negative value.
  expectInts(results[0], {7}, {1, -1, 1, -1, 5, 0, -2147483648LL});
  expectFloats(results[1], {5}, {1.5, -1.5, -0.0, nan, nan});
}

TEST_F(ReferenceEvaluatorTest, BitwiseOps) {
  const char *source = R"mlir(
    func.func @main(%p: tensor<4xi1>, %q: tensor<4xi1>, %i: tensor<3xi64>,
                    %j: tensor<3xi64>)
        -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
            tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) {
      %np = kiln.not %p : tensor<4xi1>
      %a = kiln.and %p, %q : tensor<4xi1>
      %o = kiln.or %p, %q : tensor<4xi1>
      %x = kiln.xor %p, %q : tensor<4xi1>
      %ni = kiln.not %i : tensor<3xi64>
      %ai = kiln.and %i, %j : tensor<3xi64>
      %oi = kiln.or %i, %j : tensor<3xi64>
      %xi = kiln.xor %i, %j : tensor<3xi64>
      func.return %np, %a, %o, %x, %ni, %ai, %oi, %xi
          : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
            tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
    }
  )mlir";
  auto results = run(source, {ints(b.getI1Type(), {4}, {1, 1, 0, 0}),
                              ints(b.getI1Type(), {4}, {1, 0, 1, 0}),
                              ints(b.getI64Type(), {3}, {12, -1, 0}),
                              ints(b.getI64Type(), {3}, {10, 5, -1})});
  ASSERT_EQ(results.size(), 8u);
  expectInts(results[0], {4}, {0, 0, 1, 1});
  expectInts(results[1], {4}, {1, 0, 0, 0});
  expectInts(results[2], {4}, {1, 1, 1, 0});
  expectInts(results[3], {4}, {0, 1, 1, 0});
  expectInts(results[4], {3}, {-13, 0, -1});
  expectInts(results[5], {3}, {8, 5, 0});
  expectInts(results[6], {3}, {14, -1, -1});
  expectInts(results[7], {3}, {6, -6, -1});
}

TEST_F(ReferenceEvaluatorTest, ArgMaxArgMinTiesAndNaN) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<3x4xf32>, %i: tensor<2x3xi32>)
        -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>,
            tensor<3xi64>, tensor<2xi64>) {
      %a = kiln.argmax %x, dim = 1 : tensor<3x4xf32>
      %b = kiln.argmax %x, dim = 1 select_last_index : tensor<3x4xf32>
      %c = kiln.argmin %x, dim = 1 : tensor<3x4xf32>
      %d = kiln.argmin %x, dim = 1 select_last_index : tensor<3x4xf32>
      %e = kiln.argmax %i, dim = 0 select_last_index : tensor<2x3xi32>
      %f = kiln.argmin %i, dim = 1 : tensor<2x3xi32>
      func.return %a, %b, %c, %d, %e, %f : tensor<3xi64>, tensor<3xi64>,
          tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xi64>
    }
  )mlir";
  // Row 0: ties of the maximum 2 at 1 and 3, of the minimum -0.0/+0.0 at
  // 0 and 2. Row 1: NaN at 1 and 2. Row 2: NaN at 0 only.
  auto results =
      run(source, {floats(b.getF32Type(), {3, 4},
                          {-0.0, 2, 0, 2, 1, nan, nan, 5, nan, 3, -4, 3}),
                   ints(b.getI32Type(), {2, 3}, {4, -1, 2, 4, 7, -1})});
  ASSERT_EQ(results.size(), 6u);
  expectInts(results[0], {3}, {1, 1, 0});
  expectInts(results[1], {3}, {3, 2, 0});
  expectInts(results[2], {3}, {0, 1, 0});
  expectInts(results[3], {3}, {2, 2, 0});
  expectInts(results[4], {3}, {1, 1, 0});
  expectInts(results[5], {2}, {1, 2});
}

TEST_F(ReferenceEvaluatorTest, CumsumInEveryDirection) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3xi32>, %y: tensor<3xf32>)
        -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>,
            tensor<2x3xi32>, tensor<2x3xi32>, tensor<3xf32>) {
      %a = kiln.cumsum %x, dim = 1 : tensor<2x3xi32>
      %b = kiln.cumsum %x, dim = 1 exclusive : tensor<2x3xi32>
      %c = kiln.cumsum %x, dim = 1 reverse : tensor<2x3xi32>
      %d = kiln.cumsum %x, dim = 1 exclusive reverse : tensor<2x3xi32>
      %e = kiln.cumsum %x, dim = 0 : tensor<2x3xi32>
      %f = kiln.cumsum %y, dim = 0 : tensor<3xf32>
      func.return %a, %b, %c, %d, %e, %f : tensor<2x3xi32>, tensor<2x3xi32>,
          tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<3xf32>
    }
  )mlir";
  auto results = run(source, {ints(b.getI32Type(), {2, 3}, {1, 2, 3, 4, 5, 6}),
                              floats(b.getF32Type(), {3}, {1e8, 1, -1e8})});
  ASSERT_EQ(results.size(), 6u);
  expectInts(results[0], {2, 3}, {1, 3, 6, 4, 9, 15});
  expectInts(results[1], {2, 3}, {0, 1, 3, 0, 4, 9});
  expectInts(results[2], {2, 3}, {6, 5, 3, 15, 11, 6});
  expectInts(results[3], {2, 3}, {5, 3, 0, 11, 6, 0});
  expectInts(results[4], {2, 3}, {1, 2, 3, 5, 7, 9});
  // Each partial sum is rounded to f32: 1e8 + 1 is 1e8 again.
  expectFloats(results[5], {3}, {1e8, 1e8, 0});
}

/// The builders that C++ clients (an ONNX importer, the tracer, the
/// autodiff rules) call: a dim and flags as plain C++ values, with the
/// result type inferred.
TEST_F(ReferenceEvaluatorTest, ArgReduceAndCumsumBuildersTakePlainValues) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto f32 = RankedTensorType::get({2, 3}, builder.getF32Type());
  module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      loc, "main",
      builder.getFunctionType({f32}, {RankedTensorType::get({2}, builder.getI64Type()),
                                      RankedTensorType::get({3}, builder.getI64Type()),
                                      f32, f32}));
  builder.setInsertionPointToStart(func.addEntryBlock());
  Value x = func.getArgument(0);
  int64_t last = 1, first = 0;
  auto argmax = builder.create<mlir::kiln::ArgMaxOp>(loc, x, last, false);
  auto argmin = builder.create<mlir::kiln::ArgMinOp>(loc, x, first, true);
  auto inclusive = builder.create<mlir::kiln::CumsumOp>(loc, x, last, false,
                                                        false);
  auto both = builder.create<mlir::kiln::CumsumOp>(loc, x, first, true, true);
  // Literals and defaulted flags resolve to the same builders.
  auto literal = builder.create<mlir::kiln::ArgMaxOp>(loc, x, 0);
  auto defaulted = builder.create<mlir::kiln::CumsumOp>(loc, x, 1);
  EXPECT_EQ(literal.getType(), RankedTensorType::get({3}, builder.getI64Type()));
  EXPECT_FALSE(literal.getSelectLastIndex());
  EXPECT_EQ(defaulted.getDim(), 1u);
  EXPECT_FALSE(defaulted.getExclusive() || defaulted.getReverse());
  literal.erase();
  defaulted.erase();
  builder.create<func::ReturnOp>(
      loc, ValueRange{argmax, argmin, inclusive, both});
  ASSERT_TRUE(succeeded(mlir::verify(*module)));
  EXPECT_EQ(argmax.getType(), RankedTensorType::get({2}, builder.getI64Type()));
  EXPECT_FALSE(argmax.getSelectLastIndex());
  EXPECT_TRUE(argmin.getSelectLastIndex());
  EXPECT_TRUE(both.getExclusive() && both.getReverse());
  EXPECT_FALSE(inclusive.getExclusive() || inclusive.getReverse());

  auto results = ::kiln::evaluate(
      func, {floats(b.getF32Type(), {2, 3}, {3, 1, 3, 2, 2, 0})}, options);
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 4u);
  expectInts((*results)[0], {2}, {0, 0});
  expectInts((*results)[1], {3}, {1, 0, 1});
  expectFloats((*results)[2], {2, 3}, {3, 4, 7, 2, 4, 4});
  expectFloats((*results)[3], {2, 3}, {2, 2, 0, 0, 0, 0});
}

TEST_F(ReferenceEvaluatorTest, ReductionsOverNoElements) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x0xf32>, %y: tensor<0xi32>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i32>) {
      %s = kiln.reduce_sum %x, dims = [1] : tensor<2x0xf32>
      %m = kiln.reduce_max %x, dims = [1] : tensor<2x0xf32>
      %a = kiln.reduce_mean %x, dims = [1] : tensor<2x0xf32>
      %i = kiln.reduce_max %y, dims = [0] : tensor<0xi32>
      func.return %s, %m, %a, %i
          : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {2, 0}, {}),
                              ints(b.getI32Type(), {0}, {})});
  ASSERT_EQ(results.size(), 4u);
  expectFloats(results[0], {2}, {0, 0});
  expectFloats(results[1], {2}, {-inf, -inf});
  expectFloats(results[2], {2}, {nan, nan});
  expectInts(results[3], {}, {INT32_MIN});
}

TEST_F(ReferenceEvaluatorTest, ConvWithInputDilationAndGroups) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<1x2x3xf32>, %w: tensor<2x1x2xf32>) -> tensor<1x2x5xf32> {
      %y = kiln.conv %x, %w, strides = [1], padding_low = [1], padding_high = [0], lhs_dilation = [2], rhs_dilation = [1], groups = 2 : tensor<1x2x3xf32>, tensor<2x1x2xf32>
      func.return %y : tensor<1x2x5xf32>
    }
  )mlir";
  // Channel 0 dilated and padded is [0, 1, 0, 2, 0, 3], convolved with
  // [1, 10]; channel 1, [0, 4, 0, 5, 0, 6], with [100, 1000].
  auto results = run(source, {floats(b.getF32Type(), {1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                              floats(b.getF32Type(), {2, 1, 2}, {1, 10, 100, 1000})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {1, 2, 5},
               {10, 1, 20, 2, 30, 4000, 400, 5000, 500, 6000});
}

TEST_F(ReferenceEvaluatorTest, ConvWithStrideKernelDilationAndPadding) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<1x1x3x3xf64>, %w: tensor<1x1x2x2xf64>) -> tensor<1x1x2x2xf64> {
      %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [2, 2], groups = 1 : tensor<1x1x3x3xf64>, tensor<1x1x2x2xf64>
      func.return %y : tensor<1x1x2x2xf64>
    }
  )mlir";
  // out[i, j] = sum of x[2i + 2a - 1, 2j + 2b - 1] * w[a, b]: only x[1, 1]
  // = 5 is ever inside, against w[1, 1], w[1, 0], w[0, 1], w[0, 0].
  auto results = run(source, {floats(b.getF64Type(), {1, 1, 3, 3},
                                     {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                              floats(b.getF64Type(), {1, 1, 2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {1, 1, 2, 2}, {20, 15, 10, 5});
}

TEST_F(ReferenceEvaluatorTest, Reverse) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>) {
      %a = kiln.reverse %x, dims = [1] : tensor<2x3xf32>
      %b = kiln.reverse %x, dims = [1, 0] : tensor<2x3xf32>
      %c = kiln.reverse %i, dims = [0] : tensor<4xi32>
      func.return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {2, 3}, {1, 2, 3, 4, 5, 6}),
                              ints(b.getI32Type(), {4}, {7, 8, 9, 10})});
  ASSERT_EQ(results.size(), 3u);
  expectFloats(results[0], {2, 3}, {3, 2, 1, 6, 5, 4});
  expectFloats(results[1], {2, 3}, {6, 5, 4, 3, 2, 1});
  expectInts(results[2], {4}, {10, 9, 8, 7});
}

TEST_F(ReferenceEvaluatorTest, Matmul) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
      %c = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
      func.return %c : tensor<2x2xf32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {2, 3}, {1, 2, 3, 4, 5, 6}),
                              floats(b.getF32Type(), {3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {2, 2}, {58, 64, 139, 154});
}

TEST_F(ReferenceEvaluatorTest, MatmulAccumulatesInOrderWithRounding) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<1x3xf32>, %b: tensor<3x1xf32>) -> tensor<1x1xf32> {
      %c = kiln.matmul %a, %b : tensor<1x3xf32>, tensor<3x1xf32>
      func.return %c : tensor<1x1xf32>
    }
  )mlir";
  // (1e8 * 1 + 1 * 1) rounds to 1e8 before the -1e8 term: 0, not 1.
  auto results = run(source, {floats(b.getF32Type(), {1, 3}, {1e8, 1, -1e8}),
                              floats(b.getF32Type(), {3, 1}, {1, 1, 1})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {1, 1}, {0.0});
}

TEST_F(ReferenceEvaluatorTest, BatchedMatmul) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<2x2x2xi32>, %b: tensor<2x2x1xi32>)
        -> tensor<2x2x1xi32> {
      %c = kiln.matmul %a, %b : tensor<2x2x2xi32>, tensor<2x2x1xi32>
      func.return %c : tensor<2x2x1xi32>
    }
  )mlir";
  auto results =
      run(source, {ints(b.getI32Type(), {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                   ints(b.getI32Type(), {2, 2, 1}, {1, 1, 2, -1})});
  ASSERT_EQ(results.size(), 1u);
  // Batch 0: [[1,2],[3,4]] x [1,1] = [3, 7]; batch 1: [[5,6],[7,8]] x [2,-1]
  // = [4, 6].
  expectInts(results[0], {2, 2, 1}, {3, 7, 4, 6});
}

TEST_F(ReferenceEvaluatorTest, GatherClampsIndices) {
  const char *source = R"mlir(
    func.func @main(%t: tensor<3x2xf32>, %i: tensor<2x2xi32>) -> tensor<2x2x2xf32> {
      %g = kiln.gather %t, %i : tensor<3x2xf32>, tensor<2x2xi32>
      func.return %g : tensor<2x2x2xf32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {3, 2}, {1, 2, 3, 4, 5, 6}),
                              ints(b.getI32Type(), {2, 2}, {1, 2, -1, 7})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {2, 2, 2}, {3, 4, 5, 6, 1, 2, 5, 6});
}

TEST_F(ReferenceEvaluatorTest, ScatterAddClampsAndAccumulatesInOrder) {
  const char *source = R"mlir(
    func.func @main(%t: tensor<3x2xf32>, %i: tensor<2x2xi32>, %u: tensor<2x2x2xf32>,
                    %c: tensor<2xi8>, %j: tensor<3xi64>, %v: tensor<3xi8>)
        -> (tensor<3x2xf32>, tensor<2xi8>) {
      %s = kiln.scatter_add %t, %i, %u : tensor<3x2xf32>, tensor<2x2xi32>, tensor<2x2x2xf32>
      %n = kiln.scatter_add %c, %j, %v : tensor<2xi8>, tensor<3xi64>, tensor<3xi8>
      func.return %s, %n : tensor<3x2xf32>, tensor<2xi8>
    }
  )mlir";
  // Ids 1, 2, -1 (row 0) and 7 (row 2); 2^24 + 1 + 1 in f32 is 2^24 added
  // one at a time (each 2^24 + 1 rounds to 2^24), 2^24 + 2 at once.
  auto results = run(
      source,
      {floats(b.getF32Type(), {3, 2}, {1, 2, 3, 4, 16777216, 6}),
       ints(b.getI32Type(), {2, 2}, {1, 2, -1, 7}),
       floats(b.getF32Type(), {2, 2, 2}, {10, 20, 1, 30, 100, 200, 1, 40}),
       ints(b.getI8Type(), {2}, {100, 5}), ints(b.getI64Type(), {3}, {0, 0, 1}),
       ints(b.getI8Type(), {3}, {20, 10, -7})});
  ASSERT_EQ(results.size(), 2u);
  expectFloats(results[0], {3, 2}, {101, 202, 13, 24, 16777216, 76});
  // 100 + 20 + 10 wraps to -126 in i8.
  expectInts(results[1], {2}, {-126, -2});
}

TEST_F(ReferenceEvaluatorTest, DynamicSliceClampsTheRowIndex) {
  const char *source = R"mlir(
    func.func @main(%t: tensor<4x2xf32>, %i: tensor<i64>) -> tensor<2x2xf32> {
      %s = kiln.dynamic_slice %t[%i], size = 2 : tensor<4x2xf32>
      func.return %s : tensor<2x2xf32>
    }
  )mlir";
  HostTensor table = floats(b.getF32Type(), {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Rows 1-2; rows 2-3 for any index past 2; rows 0-1 for a negative one.
  for (auto [index, expected] :
       {std::pair<int64_t, std::vector<double>>{1, {3, 4, 5, 6}},
        {3, {5, 6, 7, 8}},
        {-5, {1, 2, 3, 4}}}) {
    auto results = run(source, {table, ints(b.getI64Type(), {}, {index})});
    ASSERT_EQ(results.size(), 1u);
    expectFloats(results[0], {2, 2}, expected);
  }
}

TEST_F(ReferenceEvaluatorTest, DynamicUpdateSliceClampsTheRowIndex) {
  const char *source = R"mlir(
    func.func @main(%t: tensor<3xi32>, %u: tensor<2xi32>, %i: tensor<i64>) -> tensor<3xi32> {
      %s = kiln.dynamic_update_slice %t[%i], %u : tensor<3xi32>, tensor<2xi32>
      func.return %s : tensor<3xi32>
    }
  )mlir";
  HostTensor target = ints(b.getI32Type(), {3}, {1, 2, 3});
  HostTensor update = ints(b.getI32Type(), {2}, {8, 9});
  for (auto [index, expected] :
       {std::pair<int64_t, std::vector<int64_t>>{0, {8, 9, 3}},
        {1, {1, 8, 9}},
        {9, {1, 8, 9}},
        {-1, {8, 9, 3}}}) {
    auto results =
        run(source, {target, update, ints(b.getI64Type(), {}, {index})});
    ASSERT_EQ(results.size(), 1u);
    expectInts(results[0], {3}, expected);
  }
}

//===----------------------------------------------------------------------===//
// Control flow and calls
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, CondPicksARegion) {
  const char *source = R"mlir(
    func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
      %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<2xf32>) -> (tensor<2xf32>) {
      ^bb0(%a: tensor<2xf32>):
        kiln.yield %a : tensor<2xf32>
      } else {
      ^bb0(%a: tensor<2xf32>):
        %n = kiln.neg %a : tensor<2xf32>
        kiln.yield %n : tensor<2xf32>
      }
      func.return %r : tensor<2xf32>
    }
  )mlir";
  HostTensor x = floats(b.getF32Type(), {2}, {1, -2});
  auto taken = run(source, {ints(b.getI1Type(), {}, {1}), x});
  ASSERT_EQ(taken.size(), 1u);
  expectFloats(taken[0], {2}, {1, -2});
  auto notTaken = run(source, {ints(b.getI1Type(), {}, {0}), x});
  ASSERT_EQ(notTaken.size(), 1u);
  expectFloats(notTaken[0], {2}, {-1, 2});
}

/// Counts Collatz steps to reach 1 with a data-dependent kiln.while whose
/// body decides between n / 2 and 3 n + 1 with a kiln.cond.
const char *collatzSource = R"mlir(
  func.func @main(%n: tensor<i64>) -> tensor<i64> {
    %zero = kiln.constant dense<0> : tensor<i64>
    %r:2 = kiln.while (%n, %zero) : (tensor<i64>, tensor<i64>) cond {
    ^bb0(%x: tensor<i64>, %steps: tensor<i64>):
      %one = kiln.constant dense<1> : tensor<i64>
      %go = kiln.compare ne, %x, %one : tensor<i64>
      kiln.yield %go : tensor<i1>
    } do {
    ^bb0(%x: tensor<i64>, %steps: tensor<i64>):
      %one = kiln.constant dense<1> : tensor<i64>
      %two = kiln.constant dense<2> : tensor<i64>
      %half = kiln.div %x, %two : tensor<i64>
      %twice = kiln.mul %half, %two : tensor<i64>
      %even = kiln.compare eq, %twice, %x : tensor<i64>
      %next = kiln.cond %even, (%x) : tensor<i1>, (tensor<i64>) -> (tensor<i64>) {
      ^bb0(%v: tensor<i64>):
        %d = kiln.constant dense<2> : tensor<i64>
        %h = kiln.div %v, %d : tensor<i64>
        kiln.yield %h : tensor<i64>
      } else {
      ^bb0(%v: tensor<i64>):
        %three = kiln.constant dense<3> : tensor<i64>
        %o = kiln.constant dense<1> : tensor<i64>
        %t = kiln.mul %v, %three : tensor<i64>
        %u = kiln.add %t, %o : tensor<i64>
        kiln.yield %u : tensor<i64>
      }
      %more = kiln.add %steps, %one : tensor<i64>
      kiln.yield %next, %more : tensor<i64>, tensor<i64>
    }
    func.return %r#1 : tensor<i64>
  }
)mlir";

TEST_F(ReferenceEvaluatorTest, DataDependentWhileWithCondInside) {
  // Known Collatz step counts.
  std::vector<std::pair<int64_t, int64_t>> cases = {
      {1, 0}, {6, 8}, {7, 16}, {27, 111}, {97, 118}};
  for (auto [n, steps] : cases) {
    auto results = run(collatzSource, {ints(b.getI64Type(), {}, {n})});
    ASSERT_EQ(results.size(), 1u);
    expectInts(results[0], {}, {steps});
  }
}

TEST_F(ReferenceEvaluatorTest, WhileInsideCond) {
  // If p: sum 1..n with a loop; else: -n.
  const char *source = R"mlir(
    func.func @main(%p: tensor<i1>, %n: tensor<i32>) -> tensor<i32> {
      %r = kiln.cond %p, (%n) : tensor<i1>, (tensor<i32>) -> (tensor<i32>) {
      ^bb0(%m: tensor<i32>):
        %zero = kiln.constant dense<0> : tensor<i32>
        %w:2 = kiln.while (%m, %zero) : (tensor<i32>, tensor<i32>) cond {
        ^bb0(%k: tensor<i32>, %acc: tensor<i32>):
          %z = kiln.constant dense<0> : tensor<i32>
          %go = kiln.compare gt, %k, %z : tensor<i32>
          kiln.yield %go : tensor<i1>
        } do {
        ^bb0(%k: tensor<i32>, %acc: tensor<i32>):
          %one = kiln.constant dense<1> : tensor<i32>
          %sum = kiln.add %acc, %k : tensor<i32>
          %dec = kiln.sub %k, %one : tensor<i32>
          kiln.yield %dec, %sum : tensor<i32>, tensor<i32>
        }
        kiln.yield %w#1 : tensor<i32>
      } else {
      ^bb0(%m: tensor<i32>):
        %neg = kiln.neg %m : tensor<i32>
        kiln.yield %neg : tensor<i32>
      }
      func.return %r : tensor<i32>
    }
  )mlir";
  auto summed = run(source, {ints(b.getI1Type(), {}, {1}),
                             ints(b.getI32Type(), {}, {100})});
  ASSERT_EQ(summed.size(), 1u);
  expectInts(summed[0], {}, {5050});
  auto negated = run(source, {ints(b.getI1Type(), {}, {0}),
                              ints(b.getI32Type(), {}, {100})});
  ASSERT_EQ(negated.size(), 1u);
  expectInts(negated[0], {}, {-100});
}

TEST_F(ReferenceEvaluatorTest, ForUsesTheIterationIndex) {
  // Sum of i^2 for i in 0..4, as f32 via a cast of the index.
  const char *source = R"mlir(
    func.func @main(%init: tensor<f32>) -> tensor<f32> {
      %r = kiln.for 5 iterations (%init) : (tensor<f32>) {
      ^bb0(%i: tensor<i64>, %acc: tensor<f32>):
        %f = kiln.cast %i : tensor<i64> to tensor<f32>
        %sq = kiln.mul %f, %f : tensor<f32>
        %next = kiln.add %acc, %sq : tensor<f32>
        kiln.yield %next : tensor<f32>
      }
      func.return %r : tensor<f32>
    }
  )mlir";
  auto results = run(source, {floats(b.getF32Type(), {}, {0.5})});
  ASSERT_EQ(results.size(), 1u);
  expectFloats(results[0], {}, {30.5});
}

TEST_F(ReferenceEvaluatorTest, NestedForAndZeroTrips) {
  // sum over i < 3, j < 4 of i * j = (0 + 1 + 2) * (0 + 1 + 2 + 3) = 18; a
  // loop with zero trips returns its inits.
  const char *source = R"mlir(
    func.func @main(%init: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
      %r = kiln.for 3 iterations (%init) : (tensor<i64>) {
      ^bb0(%i: tensor<i64>, %acc: tensor<i64>):
        %inner:2 = kiln.for 4 iterations (%i, %acc) : (tensor<i64>, tensor<i64>) {
        ^bb0(%j: tensor<i64>, %ii: tensor<i64>, %a: tensor<i64>):
          %p = kiln.mul %ii, %j : tensor<i64>
          %s = kiln.add %a, %p : tensor<i64>
          kiln.yield %ii, %s : tensor<i64>, tensor<i64>
        }
        kiln.yield %inner#1 : tensor<i64>
      }
      %z = kiln.for 0 iterations (%init) : (tensor<i64>) {
      ^bb0(%i: tensor<i64>, %acc: tensor<i64>):
        %n = kiln.neg %acc : tensor<i64>
        kiln.yield %n : tensor<i64>
      }
      func.return %r, %z : tensor<i64>, tensor<i64>
    }
  )mlir";
  auto results = run(source, {ints(b.getI64Type(), {}, {0})});
  ASSERT_EQ(results.size(), 2u);
  expectInts(results[0], {}, {18});
  expectInts(results[1], {}, {0});
}

TEST_F(ReferenceEvaluatorTest, RecursiveCall) {
  const char *source = R"mlir(
    func.func @main(%n: tensor<i64>) -> tensor<i64> {
      %r = func.call @fact(%n) : (tensor<i64>) -> tensor<i64>
      func.return %r : tensor<i64>
    }
    func.func @fact(%n: tensor<i64>) -> tensor<i64> {
      %one = kiln.constant dense<1> : tensor<i64>
      %base = kiln.compare le, %n, %one : tensor<i64>
      %r = kiln.cond %base, (%n) : tensor<i1>, (tensor<i64>) -> (tensor<i64>) {
      ^bb0(%m: tensor<i64>):
        %c = kiln.constant dense<1> : tensor<i64>
        kiln.yield %c : tensor<i64>
      } else {
      ^bb0(%m: tensor<i64>):
        %c = kiln.constant dense<1> : tensor<i64>
        %prev = kiln.sub %m, %c : tensor<i64>
        %f = func.call @fact(%prev) : (tensor<i64>) -> tensor<i64>
        %p = kiln.mul %m, %f : tensor<i64>
        kiln.yield %p : tensor<i64>
      }
      func.return %r : tensor<i64>
    }
  )mlir";
  auto results = run(source, {ints(b.getI64Type(), {}, {10})});
  ASSERT_EQ(results.size(), 1u);
  expectInts(results[0], {}, {3628800});

  options.maxCallDepth = 5;
  std::string error = runError(source, {ints(b.getI64Type(), {}, {10})});
  EXPECT_NE(error.find("call depth exceeds the limit of 5"), std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(ReferenceEvaluatorTest, WrongInputCountIsAnError) {
  std::string error =
      runError(readInput("add.mlir"), {floats(b.getF32Type(), {2}, {1, 2})});
  EXPECT_EQ(error, "expected 2 inputs but got 1 in func.func @main at "
                   "test.mlir:2:1");
}

TEST_F(ReferenceEvaluatorTest, WrongInputShapeOrDtypeIsAnError) {
  HostTensor good = floats(b.getF32Type(), {2}, {1, 2});
  std::string shape = runError(readInput("add.mlir"),
                               {good, floats(b.getF32Type(), {3}, {1, 2, 3})});
  EXPECT_NE(shape.find("input #1 is tensor<3xf32> but the argument is "
                       "tensor<2xf32>"),
            std::string::npos)
      << shape;
  std::string dtype = runError(readInput("add.mlir"),
                               {floats(b.getF64Type(), {2}, {1, 2}), good});
  EXPECT_NE(dtype.find("input #0 is tensor<2xf64>"), std::string::npos)
      << dtype;
  HostTensor untyped;
  untyped.shape = {2};
  std::string missing = runError(readInput("add.mlir"), {good, untyped});
  EXPECT_NE(missing.find("without an element type"), std::string::npos)
      << missing;
  HostTensor truncated = good;
  truncated.f.pop_back();
  std::string storage = runError(readInput("add.mlir"), {good, truncated});
  EXPECT_NE(storage.find("stores 1 elements but its shape has 2"),
            std::string::npos)
      << storage;
}

TEST_F(ReferenceEvaluatorTest, IntegerDivisionByZeroIsAllOnes) {
  const char *source = R"mlir(
    func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>, %c: tensor<2xui8>,
                    %d: tensor<2xui8>) -> (tensor<3xi32>, tensor<2xui8>) {
      %q = kiln.div %a, %b : tensor<3xi32>
      %r = kiln.div %c, %d : tensor<2xui8>
      func.return %q, %r : tensor<3xi32>, tensor<2xui8>
    }
  )mlir";
  Type u8 = IntegerType::get(&context, 8, IntegerType::Unsigned);
  std::vector<HostTensor> results =
      run(source, {ints(b.getI32Type(), {3}, {7, -7, 0}),
                   ints(b.getI32Type(), {3}, {0, 0, 0}),
                   ints(u8, {2}, {200, 9}), ints(u8, {2}, {0, 2})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].i, (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(results[1].i, (std::vector<int64_t>{255, 4}));
}

TEST_F(ReferenceEvaluatorTest, ErrorsInsideLoopsNameTheIteration) {
  // Reading row i of a stack with room for 2 fails in iteration 2.
  const char *source = R"mlir(
    func.func @main(%x: tensor<i32>) -> tensor<i32> {
      %r = kiln.for 5 iterations (%x) : (tensor<i32>) {
      ^bb0(%i: tensor<i64>, %acc: tensor<i32>):
        %two = kiln.constant dense<2> : tensor<i64>
        %s = kiln.stack_empty : tensor<?xi32>
        %t = kiln.stack_reserve %s, %two : tensor<?xi32>
        %v = kiln.stack_read %t[%i] : tensor<?xi32> -> tensor<i32>
        %q = kiln.add %acc, %v : tensor<i32>
        kiln.yield %q : tensor<i32>
      }
      func.return %r : tensor<i32>
    }
  )mlir";
  std::string error = runError(source, {ints(b.getI32Type(), {}, {100})});
  EXPECT_EQ(error, "reads row 2 of a stack with capacity 2 in kiln.stack_read "
                   "at test.mlir:8:14\n"
                   "  in iteration 2 of the body of kiln.for at "
                   "test.mlir:3:12");
}

TEST_F(ReferenceEvaluatorTest, IterationLimitStopsNonTerminatingLoops) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<i64>) -> tensor<i64> {
      %r = kiln.while (%x) : (tensor<i64>) cond {
      ^bb0(%v: tensor<i64>):
        %t = kiln.constant dense<true> : tensor<i1>
        kiln.yield %t : tensor<i1>
      } do {
      ^bb0(%v: tensor<i64>):
        %one = kiln.constant dense<1> : tensor<i64>
        %n = kiln.add %v, %one : tensor<i64>
        kiln.yield %n : tensor<i64>
      }
      func.return %r : tensor<i64>
    }
  )mlir";
  options.maxLoopIterations = 1000;
  std::string error = runError(source, {ints(b.getI64Type(), {}, {0})});
  EXPECT_EQ(error, "loop did not finish within the limit of 1000 iterations "
                   "in kiln.while at test.mlir:3:12");

  const char *forSource = R"mlir(
    func.func @main(%x: tensor<i64>) -> tensor<i64> {
      %r = kiln.for 1001 iterations (%x) : (tensor<i64>) {
      ^bb0(%i: tensor<i64>, %v: tensor<i64>):
        kiln.yield %v : tensor<i64>
      }
      func.return %r : tensor<i64>
    }
  )mlir";
  std::string forError = runError(forSource, {ints(b.getI64Type(), {}, {0})});
  EXPECT_NE(forError.find("trip count 1001 exceeds the limit of 1000"),
            std::string::npos)
      << forError;
}

TEST_F(ReferenceEvaluatorTest, UnsupportedOpIsAnError) {
  context.allowUnregisteredDialects();
  const char *source = R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = "mystery.op"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      func.return %y : tensor<2xf32>
    }
  )mlir";
  std::string error = runError(source, {floats(b.getF32Type(), {2}, {1, 2})});
  EXPECT_EQ(error, "unsupported op in mystery.op at test.mlir:3:12");
}

TEST_F(ReferenceEvaluatorTest, InvalidIRIsAnError) {
  // A reshape that changes the element count; parsed without verification.
  const char *source = R"mlir(
    func.func @main(%x: tensor<4xf32>) -> tensor<3xf32> {
      %y = kiln.reshape %x : (tensor<4xf32>) -> tensor<3xf32>
      func.return %y : tensor<3xf32>
    }
  )mlir";
  std::string error = runError(
      source, {floats(b.getF32Type(), {4}, {1, 2, 3, 4})}, /*verify=*/false);
  EXPECT_NE(error.find("fails verification in func.func @main"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("test.mlir:3:12: 'kiln.reshape' op cannot reshape"),
            std::string::npos)
      << error;
}

TEST_F(ReferenceEvaluatorTest, FunctionWithoutBodyIsAnError) {
  const char *source = R"mlir(
    func.func private @main(tensor<2xf32>) -> tensor<2xf32>
  )mlir";
  std::string error = runError(source, {floats(b.getF32Type(), {2}, {1, 2})});
  EXPECT_EQ(error, "cannot evaluate a function without a body in func.func "
                   "@main at test.mlir:2:5");
}

} // namespace
