//===- GlooCommTest.cpp - The Gloo communicator within one process --------===//
//
// What can be checked of kiln_comm_create_gloo without starting several
// processes: a process with no rendezvous variables is a run of one rank,
// and every mistake in the variables, an unreachable store and a rank that
// never comes are clear errors, the last within the time limit.
// CommRankTest.cpp runs the collectives fixture on several ranks over Gloo
// (gloo_test.sh).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

#ifndef KILN_HAVE_GLOO_PLUGIN
#define REQUIRE_GLOO()                                                         \
  GTEST_SKIP() << "the Gloo plug-in is not built (apt-get install "            \
                  "libgloo-dev libhiredis-dev, then reconfigure)"
#else
#define REQUIRE_GLOO()                                                         \
  do {                                                                         \
  } while (false)
#endif

/// The rendezvous variables, set (or unset, for null) for one test.
struct Rendezvous {
  Rendezvous(const char *rank, const char *size, const char *store,
             const char *timeout = nullptr)
      : rank("KILN_RANK", rank), size("KILN_WORLD_SIZE", size),
        store("KILN_STORE", store), timeout("KILN_GLOO_TIMEOUT", timeout),
        host("KILN_GLOO_HOSTNAME", "127.0.0.1"),
        runId("KILN_RUN_ID", "gloo-comm-test") {}
  ScopedVariable rank, size, store, timeout, host, runId;
};

Outcome createGloo(CommPtr &comm) {
  kiln_comm_t *made = nullptr;
  Outcome outcome = take(kiln_comm_create_gloo(&made));
  comm.reset(made);
  return outcome;
}

TEST(GlooCommTest, WithoutRendezvousIsARunOfOneRank) {
  REQUIRE_GLOO();
  Rendezvous none(nullptr, nullptr, nullptr);
  CommPtr comm;
  Outcome outcome = createGloo(comm);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(kiln_comm_rank(comm.get()), 0);
  EXPECT_EQ(kiln_comm_size(comm.get()), 1);
  ModulePtr module = loadModule(collectivesModuleContents(1));
  std::vector<float> values = {1.5f, -2, 3, 4.25f, 5, -6};
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {6}, values);
  std::vector<TensorPtr> out;
  outcome =
      callFunction(module.get(), "all_reduce_f32", comm.get(), {x.get()}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  for (const TensorPtr &result : out)
    EXPECT_EQ(tensorValues<float>(result.get()), values);
  // A permutation over the one rank: the shift has no pair (zeros), the
  // ring pairs the rank with itself (a copy).
  TensorPtr three = makeTensor<float>(KILN_DTYPE_F32, {3}, {1, 2, 3});
  outcome =
      callFunction(module.get(), "permute", comm.get(), {three.get()}, out);
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(tensorValues<float>(out[0].get()), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(tensorValues<float>(out[1].get()), (std::vector<float>{1, 2, 3}));
}

TEST(GlooCommTest, MistakesInTheVariablesAreNamed) {
  REQUIRE_GLOO();
  struct Case {
    const char *rank, *size, *store, *timeout, *message;
  } cases[] = {
      {"0", "2", nullptr, nullptr,
       "gloo: a Gloo run needs KILN_RANK, KILN_WORLD_SIZE and KILN_STORE "
       "together (kiln-launch sets them); KILN_STORE is not set"},
      {nullptr, "2", "file:/tmp", nullptr,
       "gloo: a Gloo run needs KILN_RANK, KILN_WORLD_SIZE and KILN_STORE "
       "together (kiln-launch sets them); KILN_RANK is not set"},
      {"2", "2", "file:/tmp", nullptr,
       "gloo: KILN_RANK is 2, not below KILN_WORLD_SIZE 2"},
      {"0", "two", "file:/tmp", nullptr,
       "gloo: KILN_WORLD_SIZE is 'two', not an integer from 1 to "
       "1073741824"},
      {"0", "2", "file:/tmp", "soon",
       "gloo: KILN_GLOO_TIMEOUT is 'soon', not an integer from 1 to "
       "31536000"},
      {"0", "2", "nfs://host/dir", nullptr,
       "gloo: rank 0 of 2: KILN_STORE is 'nfs://host/dir'; expected "
       "file:DIRECTORY (shared by the ranks) or redis://HOST[:PORT]"},
      {"0", "2", "redis://localhost:http", nullptr,
       "gloo: rank 0 of 2: KILN_STORE is 'redis://localhost:http': the port "
       "is not a number from 1 to 65535"},
      {"0", "2", "file:", nullptr,
       "gloo: rank 0 of 2: KILN_STORE is 'file:' without a directory"},
  };
  for (const Case &c : cases) {
    Rendezvous rendezvous(c.rank, c.size, c.store, c.timeout);
    CommPtr comm;
    Outcome outcome = createGloo(comm);
    EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR) << c.message;
    EXPECT_EQ(outcome.message, c.message);
    EXPECT_EQ(comm, nullptr);
  }
}

TEST(GlooCommTest, UnreachableRedisIsAnError) {
  REQUIRE_GLOO();
  // Port 1 (tcpmux) has no listener here.
  Rendezvous rendezvous("0", "2", "redis://127.0.0.1:1");
  CommPtr comm;
  Outcome outcome = createGloo(comm);
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(outcome.message.rfind("gloo: rank 0 of 2: cannot open the store "
                                  "'redis://127.0.0.1:1': ",
                                  0),
            0u)
      << outcome.message;
}

TEST(GlooCommTest, ARankThatNeverComesTimesOut) {
  REQUIRE_GLOO();
  std::string directory = ::testing::TempDir() + "gloo-comm-test-store";
  std::string store = "file:" + directory;
  Rendezvous rendezvous("0", "2", store.c_str(), "2");
  CommPtr comm;
  auto begin = std::chrono::steady_clock::now();
  Outcome outcome = createGloo(comm);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(outcome.message.rfind("gloo: rank 0 of 2: ranks {0, 1} could not "
                                  "connect through the store within 2000 ms",
                                  0),
            0u)
      << outcome.message;
  EXPECT_LT(seconds, 10.0);
  std::system(("rm -rf '" + directory + "'").c_str());
}

} // namespace
