//===- CommTest.cpp - Communicators within one process --------------------===//
//
// What can be checked without starting several processes: a one-rank
// communicator running the collectives fixture (every collective a copy),
// the errors of calling collectives without a communicator or over more
// ranks than there are, finding and refusing plug-ins, and the checks every
// collective passes before it starts. MpiRankTest.cpp runs the same fixture
// on several ranks under mpirun.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "comm/CollectiveSignature.h"
#include "comm/PluginLoader.h"

#include "kiln/CollectiveAbi.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace kiln;
using namespace kiln::test;
using kiln::runtime::comm::checkCollective;

namespace {

CommPtr makeSelf() {
  kiln_comm_t *comm = nullptr;
  Outcome outcome = take(kiln_comm_create_self(&comm));
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  return CommPtr(comm);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

class SelfCommTest : public ::testing::Test {
protected:
  ModulePtr module = loadModule(collectivesModuleContents(1));
  CommPtr comm = makeSelf();
};

TEST_F(SelfCommTest, IsOneRank) {
  EXPECT_EQ(kiln_comm_rank(comm.get()), 0);
  EXPECT_EQ(kiln_comm_size(comm.get()), 1);
  std::vector<TensorPtr> out;
  Outcome outcome =
      callFunction(module.get(), "rank_size", comm.get(), {}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(tensorValues<int64_t>(out[0].get()), std::vector<int64_t>{0});
  EXPECT_EQ(tensorValues<int64_t>(out[1].get()), std::vector<int64_t>{1});
}

TEST_F(SelfCommTest, EveryCollectiveOverOneRankIsACopy) {
  std::vector<float> values = {1.5f, -2, 3, 4.25f, 5, -6};
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {6}, values);
  std::vector<TensorPtr> out;
  Outcome outcome =
      callFunction(module.get(), "all_reduce_f32", comm.get(), {x.get()}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  for (const TensorPtr &result : out)
    EXPECT_EQ(tensorValues<float>(result.get()), values);

  TensorPtr i = makeTensor<int32_t>(KILN_DTYPE_I32, {3}, {7, -8, 9});
  ASSERT_TRUE(
      callFunction(module.get(), "all_gather", comm.get(), {i.get()}, out)
          .ok());
  EXPECT_EQ(tensorValues<int32_t>(out[0].get()),
            (std::vector<int32_t>{7, -8, 9}));

  TensorPtr pair = makeTensor<float>(KILN_DTYPE_F32, {2}, {0.5f, 8});
  ASSERT_TRUE(callFunction(module.get(), "reduce_scatter", comm.get(),
                           {pair.get()}, out)
                  .ok());
  EXPECT_EQ(tensorValues<float>(out[0].get()), (std::vector<float>{0.5f, 8}));

  TensorPtr five = makeTensor<int64_t>(KILN_DTYPE_I64, {5}, {1, 2, 3, 4, 5});
  ASSERT_TRUE(
      callFunction(module.get(), "broadcast", comm.get(), {five.get()}, out)
          .ok());
  EXPECT_EQ(tensorValues<int64_t>(out[0].get()),
            (std::vector<int64_t>{1, 2, 3, 4, 5}));

  TensorPtr two = makeTensor<int32_t>(KILN_DTYPE_I32, {2}, {11, 12});
  ASSERT_TRUE(
      callFunction(module.get(), "all_to_all", comm.get(), {two.get()}, out)
          .ok());
  EXPECT_EQ(tensorValues<int32_t>(out[0].get()),
            (std::vector<int32_t>{11, 12}));
}

TEST_F(SelfCommTest, PermutationWithoutSourceGivesZeros) {
  TensorPtr x = makeTensor<float>(KILN_DTYPE_F32, {3}, {1, 2, 3});
  std::vector<TensorPtr> out;
  Outcome outcome =
      callFunction(module.get(), "permute", comm.get(), {x.get()}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  // No pair targets rank 0 in the shift; the ring pairs it with itself.
  EXPECT_EQ(tensorValues<float>(out[0].get()), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(tensorValues<float>(out[1].get()), (std::vector<float>{1, 2, 3}));
}

TEST_F(SelfCommTest, GroupsOfMoreRanksThanTheRunAreRefused) {
  TensorPtr x = makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  std::vector<TensorPtr> out;
  Outcome outcome =
      callFunction(module.get(), "for_two_ranks", comm.get(), {x.get()}, out);
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(outcome.message,
            "rank 0: function 'for_two_ranks', collective #1 "
            "(kiln.all_reduce): its replica groups span 2 ranks (1 group of "
            "2) but the run has 1; start it with 'mpirun -n 2'");
  for (const TensorPtr &output : out)
    EXPECT_EQ(output, nullptr);
  // The communicator is usable again afterwards.
  ASSERT_TRUE(
      callFunction(module.get(), "rank_size", comm.get(), {}, out).ok());
}

TEST_F(SelfCommTest, WaitingWithOtherBuffersFailsTheCall) {
  TensorPtr x = makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  std::vector<TensorPtr> out;
  Outcome outcome = callFunction(module.get(), "wrong_wait_buffers", comm.get(),
                                 {x.get()}, out);
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(outcome.message,
            "rank 0: function 'wrong_wait_buffers', collective #1 "
            "(kiln.all_reduce): the code waits for it with other buffers "
            "than it started it with");
}

TEST(CommTest, CallWithoutCommunicatorNamesMpirun) {
  ModulePtr module = loadModule(collectivesModuleContents(2));
  EXPECT_EQ(kiln_module_uses_collectives(module.get()), 1);
  TensorPtr x = makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  std::vector<TensorPtr> out;
  Outcome outcome =
      callFunction(module.get(), "for_two_ranks", nullptr, {x.get()}, out);
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(outcome.message,
            "function 'for_two_ranks': this module uses collectives over 2 "
            "ranks; run it with 'mpirun -n 2 kiln-run ...' or call "
            "kiln_function_call_with_comm");
  EXPECT_EQ(out[0], nullptr);
  // A function that starts no collective runs without a communicator.
  outcome = callFunction(module.get(), "rank_size", nullptr, {}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(tensorValues<int64_t>(out[1].get()), std::vector<int64_t>{1});
}

TEST(CommTest, ModuleWithoutCollectivesIgnoresTheCommunicator) {
  ModulePtr module = loadModule(addModuleContents());
  EXPECT_EQ(kiln_module_uses_collectives(module.get()), 0);
  CommPtr comm = makeSelf();
  TensorPtr a = makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  TensorPtr b = makeTensor<float>(KILN_DTYPE_F32, {4}, {10, 20, 30, 40});
  std::vector<TensorPtr> out;
  Outcome outcome =
      callFunction(module.get(), "add", comm.get(), {a.get(), b.get()}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(tensorValues<float>(out[0].get()),
            (std::vector<float>{11, 22, 33, 44}));
}

TEST(CommTest, CollectivesWithoutMpiLoadNoMpi) {
  // Loading a module with collectives and calling it over one rank or
  // without a communicator must not bring in the plug-in or libmpi.
  ModulePtr module = loadModule(collectivesModuleContents(1));
  CommPtr comm = makeSelf();
  TensorPtr x = makeTensor<float>(KILN_DTYPE_F32, {6}, {1, 2, 3, 4, 5, 6});
  std::vector<TensorPtr> out;
  ASSERT_TRUE(callFunction(module.get(), "sum6", comm.get(), {x.get()}, out)
                  .ok());
  callFunction(module.get(), "sum6", nullptr, {x.get()}, out);
  EXPECT_FALSE(isLoaded("libkiln_comm_mpi"));
  EXPECT_FALSE(isLoaded("libmpi"));
}

TEST(CommTest, AgreementOnOneRank) {
  CommPtr comm = makeSelf();
  int all = -1;
  ASSERT_TRUE(take(kiln_comm_all_ok(comm.get(), 0, &all)).ok());
  EXPECT_EQ(all, 0);
  ASSERT_TRUE(take(kiln_comm_all_ok(comm.get(), 7, &all)).ok());
  EXPECT_EQ(all, 1);
  EXPECT_TRUE(take(kiln_comm_barrier(comm.get())).ok());
  const char bytes[] = "block";
  char out[sizeof(bytes)] = {};
  ASSERT_TRUE(
      take(kiln_comm_all_gather(comm.get(), bytes, sizeof(bytes), out)).ok());
  EXPECT_STREQ(out, "block");
  EXPECT_EQ(take(kiln_comm_all_gather(comm.get(), nullptr, 4, out)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  // One rank: the root's bytes are already there; no other root exists.
  EXPECT_TRUE(
      take(kiln_comm_broadcast(comm.get(), out, sizeof(out), 0)).ok());
  EXPECT_STREQ(out, "block");
  EXPECT_EQ(take(kiln_comm_broadcast(comm.get(), out, sizeof(out), 1)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_comm_broadcast(comm.get(), nullptr, 4, 0)).code,
            KILN_STATUS_INVALID_ARGUMENT);
}

TEST(CommTest, NullArguments) {
  EXPECT_EQ(kiln_comm_rank(nullptr), 0);
  EXPECT_EQ(kiln_comm_size(nullptr), 0);
  EXPECT_EQ(kiln_module_uses_collectives(nullptr), 0);
  kiln_comm_release(nullptr);
  EXPECT_EQ(take(kiln_comm_create_self(nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_comm_create_mpi(nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  int all = 0;
  EXPECT_EQ(take(kiln_comm_all_ok(nullptr, 1, &all)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_comm_barrier(nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  ModulePtr module = loadModule(collectivesModuleContents(1));
  const kiln_function_t *function = kiln_module_function_at(module.get(), 0);
  kiln_tensor_t *outputs[2] = {};
  EXPECT_EQ(take(kiln_function_call_with_comm(function, nullptr, nullptr, 0,
                                              outputs, 2))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  // A NULL function with a communicator is refused with the same words.
  kiln_comm_t *comm = nullptr;
  ASSERT_TRUE(take(kiln_comm_create_self(&comm)).ok());
  kiln::test::Outcome noFunction = take(
      kiln_function_call_with_comm(nullptr, comm, nullptr, 0, outputs, 2));
  kiln_comm_release(comm);
  EXPECT_EQ(noFunction.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(noFunction.message, "kiln_function_call_with_comm: function and "
                                "comm must not be NULL");
  EXPECT_EQ(take(kiln_function_call(nullptr, nullptr, 0, outputs, 2)).message,
            "kiln_function_call: function is NULL");
}

TEST(CommPluginTest, ExplicitPathThatDoesNotLoad) {
  ScopedVariable plugin("KILN_COMM_MPI_PLUGIN",
                        "/nonexistent/libkiln_comm_mpi.so");
  kiln_comm_t *comm = nullptr;
  Outcome outcome = take(kiln_comm_create_mpi(&comm));
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(comm, nullptr);
  EXPECT_TRUE(contains(outcome.message, "cannot load the MPI plug-in "
                                        "'/nonexistent/libkiln_comm_mpi.so'"))
      << outcome.message;
  EXPECT_TRUE(contains(outcome.message, "named by KILN_COMM_MPI_PLUGIN"))
      << outcome.message;
  EXPECT_TRUE(
      contains(outcome.message, "apt-get install openmpi-bin libopenmpi-dev"))
      << outcome.message;
}

TEST(CommPluginTest, LooksBesideTheProgramThenInTheBuildTree) {
  // lib/kiln/ beside the directory of the program that holds the runtime
  // first (build/bin/kiln-run finds build/lib/kiln/), then the runtime's
  // own directory (the Python packages' libkiln_runtime.so has its
  // plug-ins beside it), then the build tree's lib/kiln/, where this test
  // program, which lives outside bin/, finds it.
  std::vector<std::string> candidates =
      kiln::runtime::comm::mpiPluginCandidates();
  ASSERT_EQ(candidates.size(), 3u);
  for (const std::string &candidate : candidates)
    EXPECT_EQ(candidate.front(), '/') << candidate;
  EXPECT_TRUE(contains(candidates[0], "/../lib/kiln/libkiln_comm_mpi.so"))
      << candidates[0];
  std::string dir = candidates[0].substr(0, candidates[0].find("/../"));
  EXPECT_EQ(candidates[1], dir + "/libkiln_comm_mpi.so");
  EXPECT_TRUE(contains(candidates[2], "/lib/kiln/libkiln_comm_mpi.so"))
      << candidates[2];
  EXPECT_FALSE(contains(candidates[2], "/../")) << candidates[2];
}

TEST(CommPluginTest, AMissingNamedPluginSaysWhoNamedIt) {
  ScopedVariable plugin("KILN_COMM_MPI_PLUGIN", "/nonexistent/libkiln_comm_mpi.so");
  kiln_comm_t *comm = nullptr;
  Outcome outcome = take(kiln_comm_create_mpi(&comm));
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_TRUE(contains(outcome.message, "/nonexistent/libkiln_comm_mpi.so"))
      << outcome.message;
  EXPECT_TRUE(contains(outcome.message, "named by KILN_COMM_MPI_PLUGIN"))
      << outcome.message;
}

TEST(CommPluginTest, RefusesWhatIsNotAPluginOfThisVersion) {
  {
    ScopedVariable plugin("KILN_COMM_MPI_PLUGIN", KILN_FIXTURE_ADD);
    kiln_comm_t *comm = nullptr;
    Outcome outcome = take(kiln_comm_create_mpi(&comm));
    EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
    EXPECT_TRUE(contains(outcome.message,
                         "is not a kiln communicator plug-in: it does not "
                         "export kiln_comm_plugin"))
        << outcome.message;
  }
  ScopedVariable plugin("KILN_COMM_MPI_PLUGIN", KILN_FIXTURE_OLD_PLUGIN);
  kiln_comm_t *comm = nullptr;
  Outcome outcome = take(kiln_comm_create_mpi(&comm));
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_TRUE(contains(outcome.message,
                       "implements version 0 of the communicator plug-in "
                       "interface, but this runtime needs version 2"))
      << outcome.message;
}

/// A well-formed all-reduce over the groups {0, 1} and {2, 3} of 4 ranks,
/// for the checks below to spoil one field at a time.
struct Collective {
  int64_t groups[4] = {0, 1, 2, 3};
  int64_t pairs[4] = {0, 1, 1, 0};
  float buffer[8] = {};
  kiln_comm_plugin_collective_t c = {KILN_COLLECTIVE_ALL_REDUCE,
                                     KILN_REDUCTION_SUM,
                                     KILN_DTYPE_F32,
                                     buffer,
                                     buffer + 4,
                                     4,
                                     0,
                                     groups,
                                     2,
                                     2,
                                     nullptr,
                                     0};
};

TEST(CollectiveCheckTest, AcceptsWellFormedCollectives) {
  Collective all;
  EXPECT_EQ(checkCollective(all.c, 4), "");
  all.c.kind = KILN_COLLECTIVE_PERMUTE;
  all.c.group_count = all.c.group_size = 0;
  all.c.pairs = all.pairs;
  all.c.pair_count = 2;
  EXPECT_EQ(checkCollective(all.c, 2), "");
}

TEST(CollectiveCheckTest, NamesWhatIsWrong) {
  Collective c;
  c.groups[3] = 1;
  EXPECT_EQ(checkCollective(c.c, 4),
            "rank 1 is in replica group 0 and in group 1");
  c.groups[3] = 4;
  EXPECT_EQ(checkCollective(c.c, 4),
            "replica group 1 names rank 4, which is not a rank of the run (4 "
            "ranks)");
  c.groups[3] = 3;
  EXPECT_EQ(checkCollective(c.c, 8),
            "its replica groups span 4 ranks (2 groups of 2) but the run has "
            "8; start it with 'mpirun -n 4'");

  Collective scatter;
  scatter.c.kind = KILN_COLLECTIVE_REDUCE_SCATTER;
  scatter.c.count = 3;
  EXPECT_EQ(checkCollective(scatter.c, 4),
            "its 3 elements do not split into 2 equal blocks, one per group "
            "member");

  Collective broadcast;
  broadcast.c.kind = KILN_COLLECTIVE_BROADCAST;
  broadcast.c.root = 2;
  EXPECT_EQ(checkCollective(broadcast.c, 4),
            "its root 2 is not a member of a group of 2 ranks");

  Collective permute;
  permute.c.kind = KILN_COLLECTIVE_PERMUTE;
  permute.c.group_count = permute.c.group_size = 0;
  permute.c.pairs = permute.pairs;
  permute.c.pair_count = 2;
  permute.pairs[3] = 1;
  EXPECT_EQ(checkCollective(permute.c, 2),
            "rank 1 is the target of more than one pair");
  permute.pairs[3] = 2;
  EXPECT_EQ(checkCollective(permute.c, 2),
            "the pair (1, 2) names rank 2, but the run has 2 ranks; start it "
            "with 'mpirun -n 3'");

  Collective unknown;
  unknown.c.dtype = 99;
  EXPECT_EQ(checkCollective(unknown.c, 4), "unknown dtype 99");
  unknown.c.dtype = KILN_DTYPE_F32;
  unknown.c.reduction = 7;
  EXPECT_EQ(checkCollective(unknown.c, 4), "unknown reduction 7");
}

} // namespace
