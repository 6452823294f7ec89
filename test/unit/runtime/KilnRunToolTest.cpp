//===- KilnRunToolTest.cpp - End-to-end tests of kiln-run ------------------===//

#include "TestSupport.h"

#include "kiln/Npy.h"

#include <gtest/gtest.h>


using namespace kiln;
using namespace kiln::test;

namespace {

/// Runs kiln-run with `arguments`.
CommandResult runTool(const std::string &arguments) {
  return runCommand(std::string("'") + KILN_RUN_PATH + "' " + arguments);
}

template <typename T>
void writeNpy(const std::string &path, npy::ElementType type,
              std::vector<int64_t> shape, std::vector<T> values) {
  npy::Array array;
  array.type = type;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(T));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  std::string error;
  ASSERT_TRUE(npy::writeNpyFile(path, array, error)) << error;
}

class KilnRunToolTest : public ::testing::Test {
protected:
  void SetUp() override {
    writeFile(addModule, format::writeModule(addModuleContents()));
    writeFile(mixedModule, format::writeModule(mixedModuleContents()));
    writeNpy<float>(a, npy::ElementType::F32, {4}, {1, 2, 3, 4});
    writeNpy<float>(b, npy::ElementType::F32, {4}, {0.5f, -2, 1e-3f, 40});
    writeNpy<float>(x, npy::ElementType::F32, {2, 3}, {-1, 0.5f, 2, 3, 0, 1});
  }

  std::string quoted(const std::string &path) const { return "'" + path + "'"; }

  TemporaryDirectory directory;
  std::string addModule = directory.file("add.kmod");
  std::string mixedModule = directory.file("mixed.kmod");
  std::string a = directory.file("a.npy");
  std::string b = directory.file("b.npy");
  std::string x = directory.file("x.npy");
};

TEST_F(KilnRunToolTest, Help) {
  CommandResult result = runTool("--help");
  EXPECT_EQ(result.exitCode, 0);
  for (const char *option :
       {"--function", "--input", "--output-dir", "--repeat", "--stats",
        "--list", "--comm", "--shard-input", "--all-ranks-write",
        "--profile-trace FILE", "--profile-summary",
        "--shard-input NAME_OR_INDEX=DIM[:AXIS]", "--mesh NAME=SIZE",
        "RUNNING ON SEVERAL RANKS", "EXIT STATUS"})
    EXPECT_NE(result.output.find(option), std::string::npos) << option;
}

TEST_F(KilnRunToolTest, CommandLineErrors) {
  CommandResult result = runTool("");
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.output.find("kiln-run: error: no module given"),
            std::string::npos)
      << result.output;
  result = runTool(quoted(addModule) + " --bogus");
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.output.find("unknown option '--bogus'"), std::string::npos);
  result = runTool(quoted(addModule) + " --repeat 0");
  EXPECT_EQ(result.exitCode, 2);
  result = runTool(quoted(addModule) + " --input");
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.output.find("option '--input' needs a value"),
            std::string::npos);
}

TEST_F(KilnRunToolTest, RunsWithNpyInputs) {
  CommandResult result = runTool(quoted(addModule) + " --input " + quoted(a) +
                              " --input=" + quoted(b));
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, "sum: f32[4] = [1.5, 0, 3.00099993, 44]\n");
}

TEST_F(KilnRunToolTest, ListsFunctions) {
  CommandResult result = runTool("--list " + quoted(mixedModule));
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output,
            "target: x86_64-unknown-linux-gnu\n"
            "stats(x: f32[2,3], threshold: f32[]) -> (mask: i1[2,3], count: "
            "i64[], exp: f32[2,3])\n"
            "scale(v: f64[3], k: i32[]) -> (scaled: f64[3], f64[3])\n");
}

TEST_F(KilnRunToolTest, ProfilesOnlyModulesCompiledForIt) {
  std::string trace = directory.file("trace.json");
  CommandResult result =
      runTool(quoted(addModule) + " --input " + quoted(a) + " --input " +
              quoted(b) + " --profile " + quoted(trace));
  EXPECT_EQ(result.exitCode, 1) << result.output;
  EXPECT_NE(result.output.find("was compiled without --profile"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("kiln-compile --profile"), std::string::npos);
  // Refused before anything ran or was written.
  EXPECT_EQ(result.output.find("sum:"), std::string::npos) << result.output;
  EXPECT_TRUE(runCommand("test -e " + quoted(trace)).exitCode != 0);
  result = runTool(quoted(addModule) + " --input " + quoted(a) +
                   " --input " + quoted(b) + " --profile-summary");
  EXPECT_EQ(result.exitCode, 1) << result.output;

  std::string profiled = directory.file("profiled.kmod");
  writeFile(profiled, format::writeModule(profileModuleContents()));
  writeNpy<float>(directory.file("one.npy"), npy::ElementType::F32, {1},
                  {1.0f});
  result = runTool(quoted(profiled) + " --input " +
                   quoted(directory.file("one.npy")) +
                   " --repeat 4 --profile-summary --profile-trace=" + quoted(trace));
  EXPECT_EQ(result.exitCode, 0) << result.output;
  // The four repeated calls, not the first.
  EXPECT_NE(result.output.find("profile: "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(" 3 regions\n"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("       4 "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("       8 "), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("       5 "), std::string::npos)
      << result.output;
  std::vector<uint8_t> bytes = readFile(trace);
  std::string text(bytes.begin(), bytes.end());
  EXPECT_NE(text.find("\"name\":\"call @nested\""), std::string::npos);
}

TEST_F(KilnRunToolTest, ChoosesFunctionsAndParsesLiterals) {
  CommandResult result = runTool(quoted(mixedModule));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("the module has 2 functions; choose one with "
                               "--function (stats, scale)"),
            std::string::npos)
      << result.output;

  result = runTool(quoted(mixedModule) + " --function stats --input " +
                   quoted(x) + " --input 0.75");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find(
                "mask: i1[2,3] = [[false, false, true], [true, false, true]]\n"
                "count: i64[] = 3\n"
                "exp: f32[2,3] = [[0.36787945"),
            std::string::npos)
      << result.output;

  writeNpy<double>(directory.file("v.npy"), npy::ElementType::F64, {3},
                   {0.1, -2, 3});
  result = runTool(quoted(mixedModule) + " --function=scale --input " +
                   quoted(directory.file("v.npy")) + " --input -3");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output,
            "scaled: f64[3] = [-0.30000000000000004, 6, -9]\n"
            "out1: f64[3] = [0.010000000000000002, 4, 9]\n");

  result = runTool(quoted(mixedModule) + " --function nope");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("no function named 'nope'"), std::string::npos);
}

TEST_F(KilnRunToolTest, ReportsBadInputs) {
  CommandResult result = runTool(quoted(addModule) + " --input " + quoted(a));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("function 'add' takes 2 inputs but 1 --input "
                               "was given"),
            std::string::npos)
      << result.output;

  result = runTool(quoted(addModule) + " --input " + quoted(a) + " --input " +
                   quoted(x));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("function 'add': input 1 ('b'): '" + x +
                               "' has shape [2,3] but the input expects [4]"),
            std::string::npos)
      << result.output;

  std::string ints = directory.file("ints.npy");
  writeNpy<int32_t>(ints, npy::ElementType::I32, {4}, {1, 2, 3, 4});
  result = runTool(quoted(addModule) + " --input " + quoted(ints) +
                   " --input " + quoted(a));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("input 0 ('a'): '" + ints +
                               "' holds <i4 data but the input is f32 "
                               "(expected <f4)"),
            std::string::npos)
      << result.output;

  result = runTool(quoted(addModule) + " --input 3 --input " + quoted(a));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("input 0 ('a') is f32[4]; a literal ('3') can "
                               "only be given for a rank-0 input"),
            std::string::npos)
      << result.output;

  std::string v = directory.file("v.npy");
  writeNpy<double>(v, npy::ElementType::F64, {3}, {1, 2, 3});
  result = runTool(quoted(mixedModule) + " --function scale --input " +
                   quoted(v) + " --input 2.5");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("input 1 ('k'): '2.5' is not a valid i32 "
                               "literal"),
            std::string::npos)
      << result.output;

  result = runTool(quoted(addModule) + " --input missing.npy --input " +
                   quoted(a));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("cannot open 'missing.npy'"), std::string::npos)
      << result.output;
}

TEST_F(KilnRunToolTest, SavesOutputs) {
  std::string outputDir = directory.file("out");
  CommandResult result = runTool(quoted(mixedModule) +
                              " --function stats --input " + quoted(x) +
                              " --input 1 --output-dir " + quoted(outputDir));
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("count: i64[] saved to " + outputDir +
                               "/count.npy"),
            std::string::npos)
      << result.output;

  npy::Array mask, count;
  std::string error;
  ASSERT_TRUE(npy::readNpyFile(outputDir + "/mask.npy", mask, error)) << error;
  EXPECT_EQ(mask.type, npy::ElementType::I1);
  EXPECT_EQ(mask.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(mask.data, (std::vector<uint8_t>{0, 0, 1, 1, 0, 0}));
  ASSERT_TRUE(npy::readNpyFile(outputDir + "/count.npy", count, error))
      << error;
  EXPECT_TRUE(count.shape.empty());
  int64_t total;
  std::memcpy(&total, count.data.data(), sizeof(total));
  EXPECT_EQ(total, 2);
}

TEST_F(KilnRunToolTest, TimesRepeatedCalls) {
  CommandResult result = runTool(quoted(addModule) + " --input " + quoted(a) +
                              " --input " + quoted(b) + " --repeat 7");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("sum: f32[4] = "), std::string::npos);
  EXPECT_NE(result.output.find("time per call: median "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(" us, 7 runs)\n"), std::string::npos)
      << result.output;
}

TEST_F(KilnRunToolTest, ModuleWithCollectivesOutsideMpirunNamesMpirun) {
  std::string module = directory.file("collectives.kmod");
  writeFile(module, format::writeModule(collectivesModuleContents(2)));
  std::string x4 = directory.file("x4.npy");
  writeNpy<float>(x4, npy::ElementType::F32, {4}, {1, 2, 3, 4});
  CommandResult result = runTool(
      quoted(module) + " --function for_two_ranks --input " + quoted(x4));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.output,
            "kiln-run: error: function 'for_two_ranks': this module uses "
            "collectives over 2 ranks; run it with 'mpirun -n 2 kiln-run "
            "...' or call kiln_function_call_with_comm\n");
}

TEST_F(KilnRunToolTest, RunsCollectivesOnOneRankWithCommSelf) {
  std::string module = directory.file("collectives1.kmod");
  writeFile(module, format::writeModule(collectivesModuleContents(1)));
  std::string x6 = directory.file("x6.npy");
  writeNpy<float>(x6, npy::ElementType::F32, {6}, {1, 2, 3, 4, 5, 6.5f});
  CommandResult result =
      runTool(quoted(module) + " --comm=self --function sum6 --input " +
              quoted(x6) + " --shard-input x=0");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, "y: f32[6] = [1, 2, 3, 4, 5, 6.5]\n");

  result = runTool(quoted(module) + " --comm=self --function sum6 --input " +
                   quoted(x6) + " --shard-input q=0");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.output,
            "kiln-run: error: --shard-input q=0: function 'sum6' has no "
            "input named 'q' (its inputs: x)\n");

  result = runTool(quoted(module) + " --comm=self --function sum6 --input " +
                   quoted(x6) + " --shard-input 0=1");
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.output,
            "kiln-run: error: function 'sum6': input 0 ('x'): --shard-input "
            "dimension 1 is out of range for '" +
                x6 + "', of shape [6]\n");
}

TEST_F(KilnRunToolTest, ReportsModuleErrors) {
  CommandResult result = runTool(quoted(directory.file("none.kmod")));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("No such file or directory"), std::string::npos);

  result = runTool(quoted(a));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.output.find("not a .kmod module"), std::string::npos)
      << result.output;
}

} // namespace
