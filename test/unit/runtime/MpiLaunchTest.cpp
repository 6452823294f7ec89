//===- MpiLaunchTest.cpp - kiln-run under mpirun --------------------------===//
//
// Starts kiln-run on several ranks with mpirun, on the collectives fixture,
// as a user would: split inputs, who prints, and the faults that must end
// every rank with an error within a bound instead of a hang. kiln-run finds
// the MPI plug-in in the build tree's lib/kiln/ on its own. Skipped, not
// passed, where mpirun is missing.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kiln/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Faults must end the run well within this; a hang is killed at twice it.
constexpr int kBoundSeconds = 30;

bool haveMpirun() {
  return std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

/// Runs `mpirun ... ARGUMENTS` (which names the programs) under a timeout;
/// the output is every rank's, interleaved.
CommandResult mpirun(const std::string &arguments) {
  return runCommand("timeout " + std::to_string(2 * kBoundSeconds) +
                    " mpirun --allow-run-as-root --oversubscribe " +
                    arguments);
}

void writeNpy(const std::string &path, std::vector<int64_t> shape,
              const std::vector<float> &values) {
  npy::Array array;
  array.type = npy::ElementType::F32;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  std::string error;
  ASSERT_TRUE(npy::writeNpyFile(path, array, error)) << error;
}

std::vector<float> readNpy(const std::string &path) {
  npy::Array array;
  std::string error;
  if (!npy::readNpyFile(path, array, error))
    return {};
  std::vector<float> values(array.data.size() / sizeof(float));
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

size_t occurrences(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + 1))
    ++count;
  return count;
}

class MpiLaunchTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveMpirun())
      GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin "
                      "libopenmpi-dev)";
  }

  /// "-n RANKS kiln-run MODULE" for a module made for RANKS ranks.
  std::string kilnRun(int64_t ranks) {
    std::string module = directory.file("m" + std::to_string(ranks) + ".kmod");
    writeFile(module, format::writeModule(collectivesModuleContents(ranks)));
    return "-n " + std::to_string(ranks) + " '" + KILN_RUN_PATH + "' '" +
           module + "'";
  }

  TemporaryDirectory directory;
};

TEST_F(MpiLaunchTest, ShardedInputIsSummedAndOnlyRankZeroPrints) {
  for (int64_t ranks : {2, 4}) {
    SCOPED_TRACE(ranks);
    std::vector<float> whole;
    for (int64_t i = 0; i < 6 * ranks; ++i)
      whole.push_back(float(i * i % 17));
    std::string x = directory.file("x.npy");
    writeNpy(x, {6 * ranks}, whole);
    CommandResult result = mpirun(kilnRun(ranks) + " --function sum6 --input '" +
                              x + "' --shard-input x=0");
    EXPECT_EQ(result.exitCode, 0) << result.output;
    std::string expected = "y: f32[6] = [";
    for (int64_t i = 0; i < 6; ++i) {
      float sum = 0;
      for (int64_t r = 0; r < ranks; ++r)
        sum += whole[6 * r + i];
      expected += (i ? ", " : "") + std::to_string(int(sum));
    }
    EXPECT_EQ(result.output, expected + "]\n");
  }
}

TEST_F(MpiLaunchTest, ShardAlongAnInnerDimension) {
  // x: [2, 6] split along dimension 1 into two [2, 3] blocks, named by
  // index this time.
  std::vector<float> whole = {1, 2, 3, 10, 20, 30, 4, 5, 6, 40, 50, 60};
  std::string x = directory.file("x2.npy");
  writeNpy(x, {2, 6}, whole);
  CommandResult result = mpirun(kilnRun(2) + " --function sum6_2d --input '" + x +
                            "' --shard-input 0=1");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(result.output, "y: f32[2,3] = [[11, 22, 33], [44, 55, 66]]\n");
}

TEST_F(MpiLaunchTest, AllRanksWrite) {
  std::vector<float> whole = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
  std::string x = directory.file("x.npy");
  writeNpy(x, {12}, whole);
  std::string outputs = directory.file("out");
  CommandResult result = mpirun(
      kilnRun(2) + " --function sum6 --input '" + x +
      "' --shard-input x=0 --all-ranks-write --output-dir '" + outputs + "'");
  EXPECT_EQ(result.exitCode, 0) << result.output;
  std::vector<float> expected = {11, 22, 33, 44, 55, 66};
  for (int rank = 0; rank < 2; ++rank) {
    std::string path = outputs + "/y.rank" + std::to_string(rank) + ".npy";
    EXPECT_EQ(readNpy(path), expected) << path;
    EXPECT_TRUE(contains(result.output, "rank " + std::to_string(rank) +
                                            ": y: f32[6] saved to " + path))
        << result.output;
  }
}

TEST_F(MpiLaunchTest, IndivisibleShardFailsOnEveryRank) {
  std::string x = directory.file("x7.npy");
  writeNpy(x, {7}, {1, 2, 3, 4, 5, 6, 7});
  CommandResult result = mpirun(kilnRun(2) + " --function sum6 --input '" + x +
                            "' --shard-input x=0");
  EXPECT_NE(result.exitCode, 0);
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_TRUE(contains(result.output,
                         "kiln-run: error: rank " + std::to_string(rank) +
                             ": function 'sum6': input 0 ('x'): dimension 0 "
                             "of '" +
                             x +
                             "' has extent 7, which does not split into 2 "
                             "equal blocks, one per rank"))
        << result.output;
}

TEST_F(MpiLaunchTest, OneRanksBadInputStopsEveryRank) {
  std::string good = directory.file("good.npy");
  writeNpy(good, {6}, {1, 2, 3, 4, 5, 6});
  std::string missing = directory.file("missing.npy");
  std::string module = directory.file("m2.kmod");
  writeFile(module, format::writeModule(collectivesModuleContents(2)));
  std::string program = std::string("'") + KILN_RUN_PATH + "' '" + module +
                        "' --function sum6 --input ";
  // Two programs in one run (MPMD): rank 1 names a file that is not there.
  CommandResult result = mpirun("-n 1 " + program + "'" + good + "' : -n 1 " +
                            program + "'" + missing + "'");
  EXPECT_NE(result.exitCode, 0);
  EXPECT_LT(result.seconds, kBoundSeconds);
  EXPECT_TRUE(contains(result.output,
                       "kiln-run: error: rank 1: function 'sum6': input 0 "
                       "('x'): cannot open '" +
                           missing))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "kiln-run: error: rank 0: another rank could not "
                       "prepare its call (its error says why)"))
      << result.output;
}

TEST_F(MpiLaunchTest, MismatchFailsOnEveryRankWithoutHanging) {
  for (int64_t ranks : {2, 4}) {
    SCOPED_TRACE(ranks);
    std::string x = directory.file("x8.npy");
    writeNpy(x, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
    CommandResult result = mpirun(
        kilnRun(ranks) + " --function mismatched_count --input '" + x + "'");
    EXPECT_NE(result.exitCode, 0);
    EXPECT_LT(result.seconds, kBoundSeconds);
    std::printf("[ MEASURED ] %lld ranks: a mismatch ended the run in %.2f s\n",
                (long long)ranks, result.seconds);
    for (int64_t rank = 0; rank < ranks; ++rank)
      EXPECT_EQ(occurrences(result.output,
                            "kiln-run: error: rank " + std::to_string(rank) +
                                ": function 'mismatched_count', collective "
                                "#1 (kiln.all_reduce): this rank starts "),
                1u)
          << result.output;
    EXPECT_TRUE(contains(result.output,
                         "rank 1: function 'mismatched_count', collective #1 "
                         "(kiln.all_reduce): this rank starts "
                         "kiln.all_reduce (sum) of 4 x f32 over 1 group of " +
                             std::to_string(ranks) +
                             " ranks but rank 0 starts kiln.all_reduce (sum) "
                             "of 8 x f32"))
        << result.output;
  }
}

TEST_F(MpiLaunchTest, DeadRankEndsTheRunWithinTheBound) {
  std::string x = directory.file("x4.npy");
  writeNpy(x, {4}, {1, 2, 3, 4});
  CommandResult result =
      mpirun(kilnRun(2) + " --function dies_on_rank_1 --input '" + x + "'");
  EXPECT_NE(result.exitCode, 0) << result.output;
  // 124 would be the timeout's, not mpirun's.
  EXPECT_NE(result.exitCode, 124) << result.output;
  EXPECT_LT(result.seconds, kBoundSeconds) << result.output;
  std::printf("[ MEASURED ] a dead rank ended the run in %.2f s (exit %d)\n",
              result.seconds, result.exitCode);
  EXPECT_FALSE(contains(result.output, "y: f32[4]")) << result.output;
}

TEST_F(MpiLaunchTest, GroupsOfAnotherWorldSizeFailOnEveryRank) {
  std::string x = directory.file("x4.npy");
  writeNpy(x, {4}, {1, 2, 3, 4});
  CommandResult result =
      mpirun(kilnRun(4) + " --function for_two_ranks --input '" + x + "'");
  EXPECT_NE(result.exitCode, 0);
  EXPECT_LT(result.seconds, kBoundSeconds);
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_TRUE(contains(
        result.output,
        "kiln-run: error: rank " + std::to_string(rank) +
            ": function 'for_two_ranks', collective #1 (kiln.all_reduce): its "
            "replica groups span 2 ranks (1 group of 2) but the run has 4; "
            "start it with 'mpirun -n 2'"))
        << result.output;
}

} // namespace
