//===- KilnRunSupportTest.cpp - Tests of kiln-run's conversions ------------===//

#include "TestSupport.h"

#include "Options.h"
#include "TensorText.h"

#include "kiln/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kiln;
using namespace kiln::run;
using namespace kiln::test;

namespace {

TEST(HalfFloatTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value)))) << bits;
      continue;
    }
    EXPECT_EQ(floatToHalf(value), bits) << bits;
  }
}

TEST(HalfFloatTest, HalfValues) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
}

TEST(HalfFloatTest, FloatToHalfRoundsToNearestEven) {
  // Halfway between 1 and the next half rounds to the even 1.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // Halfway between 1+2^-10 and 1+2^-9 rounds up to the even one.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1e10f), 0xfc00);
  // Subnormals: ties go to even, and the largest rounds up to a normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)),
            0x0400);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -140)), 0x0000);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
}

TEST(HalfFloatTest, EveryBfloat16RoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(value))));
      continue;
    }
    EXPECT_EQ(floatToBfloat16(value), bits) << bits;
  }
}

TEST(HalfFloatTest, FloatToBfloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7f80);
  // A NaN whose payload sits in the discarded bits stays a NaN.
  uint32_t nanBits = 0x7f800001;
  float nan;
  std::memcpy(&nan, &nanBits, sizeof(nan));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(nan))));
}

TEST(TensorTextTest, FormatsTypesAndNesting) {
  int64_t shape[] = {2, 3};
  EXPECT_EQ(formatShape(0, nullptr), "[]");
  EXPECT_EQ(formatType(KILN_DTYPE_BF16, 2, shape), "bf16[2,3]");

  TensorPtr matrix =
      makeTensor(KILN_DTYPE_I32, {2, 3}, std::vector<int32_t>{1, 2, 3, 4, 5, -6});
  EXPECT_EQ(formatValues(matrix.get()), "[[1, 2, 3], [4, 5, -6]]");
  TensorPtr cube = makeTensor(KILN_DTYPE_I64, {2, 1, 2},
                              std::vector<int64_t>{1, 2, 3, 4});
  EXPECT_EQ(formatValues(cube.get()), "[[[1, 2]], [[3, 4]]]");
  TensorPtr empty = makeTensor(KILN_DTYPE_F32, {2, 0}, std::vector<float>{});
  EXPECT_EQ(formatValues(empty.get()), "[[], []]");
  TensorPtr scalar = makeTensor(KILN_DTYPE_F64, {}, std::vector<double>{0.1});
  EXPECT_EQ(formatValues(scalar.get()), "0.10000000000000001");
  TensorPtr flags =
      makeTensor(KILN_DTYPE_I1, {3}, std::vector<uint8_t>{1, 0, 1});
  EXPECT_EQ(formatValues(flags.get()), "[true, false, true]");
}

TEST(TensorTextTest, FloatsPrintWithRoundTripPrecision) {
  TensorPtr f32 = makeTensor(KILN_DTYPE_F32, {3},
                             std::vector<float>{0.1f, 1.0f / 3, -INFINITY});
  EXPECT_EQ(formatValues(f32.get()), "[0.100000001, 0.333333343, -inf]");
  TensorPtr f16 = makeTensor(KILN_DTYPE_F16, {2},
                             std::vector<uint16_t>{0x3555, 0x7e00});
  EXPECT_EQ(formatValues(f16.get()), "[0.33325, nan]");
  TensorPtr bf16 = makeTensor(KILN_DTYPE_BF16, {2},
                              std::vector<uint16_t>{0x3eab, 0xc2f7});
  EXPECT_EQ(formatValues(bf16.get()), "[0.334, -123.5]");
}

TEST(OptionsTest, ParsesEveryOption) {
  const char *argv[] = {"kiln-run", "--input", "a.npy", "m.kmod",
                        "--function=f", "--input=-3", "--repeat", "5",
                        "--output-dir", "out", "--list"};
  Options options;
  std::string error;
  ASSERT_TRUE(parseOptions(11, const_cast<char **>(argv), options, error))
      << error;
  EXPECT_EQ(options.modulePath, "m.kmod");
  EXPECT_EQ(options.functionName, "f");
  EXPECT_EQ(options.inputs, (std::vector<std::string>{"a.npy", "-3"}));
  EXPECT_EQ(options.repeat, 5u);
  EXPECT_EQ(options.outputDir, "out");
  EXPECT_TRUE(options.list);
  EXPECT_FALSE(options.stats);
}

TEST(OptionsTest, ParsesStats) {
  const char *argv[] = {"kiln-run", "m.kmod", "--stats"};
  Options options;
  std::string error;
  ASSERT_TRUE(parseOptions(3, const_cast<char **>(argv), options, error))
      << error;
  EXPECT_TRUE(options.stats);
}

TEST(OptionsTest, ParsesRunsOfSeveralRanks) {
  const char *argv[] = {"kiln-run", "m.kmod", "--comm=self",
                        "--shard-input", "x=0", "--shard-input=1=2",
                        "--all-ranks-write"};
  Options options;
  std::string error;
  ASSERT_TRUE(parseOptions(7, const_cast<char **>(argv), options, error))
      << error;
  EXPECT_EQ(options.comm, "self");
  ASSERT_EQ(options.shards.size(), 2u);
  EXPECT_EQ(options.shards[0].name, "x");
  EXPECT_FALSE(options.shards[0].byIndex);
  EXPECT_EQ(options.shards[0].dimension, 0u);
  EXPECT_TRUE(options.shards[1].byIndex);
  EXPECT_EQ(options.shards[1].index, 1u);
  EXPECT_EQ(options.shards[1].dimension, 2u);
  EXPECT_TRUE(options.allRanksWrite);
  EXPECT_TRUE(options.warnings.empty());

  // An input split over a mesh axis; the name may hold '=' and ':'.
  const char *mesh[] = {"kiln-run", "m.kmod", "--mesh", "dp=2,tp=3",
                        "--shard-input", "w=1:tp", "--shard-input", "a:b=0:dp"};
  Options meshed;
  ASSERT_TRUE(parseOptions(8, const_cast<char **>(mesh), meshed, error))
      << error;
  ASSERT_EQ(meshed.mesh.size(), 2u);
  EXPECT_EQ(meshed.mesh[1].name, "tp");
  EXPECT_EQ(meshed.mesh[1].size, 3);
  ASSERT_EQ(meshed.shards.size(), 2u);
  EXPECT_EQ(meshed.shards[0].name, "w");
  EXPECT_EQ(meshed.shards[0].dimension, 1u);
  EXPECT_EQ(meshed.shards[0].axis, "tp");
  EXPECT_EQ(meshed.shards[1].name, "a:b");
  EXPECT_EQ(meshed.shards[1].axis, "dp");
  EXPECT_TRUE(meshed.warnings.empty());

  const char *plain[] = {"kiln-run", "m.kmod"};
  Options defaults;
  ASSERT_TRUE(parseOptions(2, const_cast<char **>(plain), defaults, error));
  EXPECT_EQ(defaults.comm, "auto");
  EXPECT_TRUE(defaults.shards.empty());
  EXPECT_FALSE(defaults.allRanksWrite);
}

TEST(OptionsTest, DeprecatedSpellingsStillWorkWithAWarning) {
  // NAME:DIM[:AXIS] (the name may hold ':') and --profile FILE, the
  // spellings before NAME=VALUE and --profile-trace.
  const char *argv[] = {"kiln-run",      "m.kmod",    "--shard-input",
                        "x:0",           "--shard-input", "a:b:1:dp",
                        "--profile",     "t.json"};
  Options options;
  std::string error;
  ASSERT_TRUE(parseOptions(8, const_cast<char **>(argv), options, error))
      << error;
  ASSERT_EQ(options.shards.size(), 2u);
  EXPECT_EQ(options.shards[0].name, "x");
  EXPECT_EQ(options.shards[0].dimension, 0u);
  EXPECT_EQ(options.shards[1].name, "a:b");
  EXPECT_EQ(options.shards[1].dimension, 1u);
  EXPECT_EQ(options.shards[1].axis, "dp");
  EXPECT_EQ(options.profilePath, "t.json");
  EXPECT_EQ(options.warnings,
            (std::vector<std::string>{
                "--shard-input x:0 is deprecated: write "
                "NAME_OR_INDEX=DIM[:AXIS], 'x=0'",
                "--shard-input a:b:1:dp is deprecated: write "
                "NAME_OR_INDEX=DIM[:AXIS], 'a:b=1:dp'",
                "--profile FILE is deprecated: write --profile-trace FILE "
                "(kiln-compile's --profile is the flag that makes a module "
                "profilable)"}));
}

TEST(OptionsTest, RejectsMalformedCommandLines) {
  struct Case {
    std::vector<const char *> arguments;
    const char *error;
  } cases[] = {
      {{}, "no module given"},
      {{"a.kmod", "b.kmod"}, "expected one module, got 2 arguments ('a.kmod', "
                             "'b.kmod', ...)"},
      {{"m.kmod", "--repeat", "x"}, "--repeat needs a positive integer, not 'x'"},
      {{"m.kmod", "--repeat=-1"}, "--repeat needs a positive integer, not '-1'"},
      {{"m.kmod", "--function"}, "option '--function' needs a value"},
      {{"m.kmod", "--function="}, "--function needs a non-empty name"},
      {{"m.kmod", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{"m.kmod", "--comm=tcp"}, "--comm must be 'auto', 'mpi', 'gloo' or "
                                 "'self', not 'tcp'"},
      {{"m.kmod", "--shard-input", "x"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not 'x'"},
      {{"m.kmod", "--shard-input", ":0"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not ':0'"},
      {{"m.kmod", "--shard-input", "x:y"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not 'x:y'"},
      {{"m.kmod", "--shard-input", "=0"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not '=0'"},
      {{"m.kmod", "--shard-input", "x="},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not 'x='"},
      {{"m.kmod", "--shard-input", "x=y"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not 'x=y'"},
      {{"m.kmod", "--shard-input", "x=0:"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not 'x=0:'"},
      {{"m.kmod", "--shard-input", "x=0:1"},
       "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. "
       "x=0, 1=0 or w=1:tp), not 'x=0:1'"},
      {{"m.kmod", "--profile-trace="}, "--profile-trace needs a non-empty path"},
      {{"m.kmod", "--mesh", "dp=2,tp"},
       "--mesh needs NAME=SIZE,... with sizes >= 1 (e.g. dp=2,tp=2), not "
       "'dp=2,tp'"},
      {{"m.kmod", "--mesh", "=2"},
       "--mesh needs NAME=SIZE,... with sizes >= 1 (e.g. dp=2,tp=2), not '=2'"},
      {{"m.kmod", "--mesh=tp=2,tp=1"}, "--mesh names the axis 'tp' twice"},
  };
  for (const Case &c : cases) {
    std::vector<char *> argv = {const_cast<char *>("kiln-run")};
    for (const char *argument : c.arguments)
      argv.push_back(const_cast<char *>(argument));
    Options options;
    std::string error;
    EXPECT_FALSE(parseOptions(static_cast<int>(argv.size()), argv.data(),
                              options, error));
    EXPECT_EQ(error, c.error);
  }
}

} // namespace
