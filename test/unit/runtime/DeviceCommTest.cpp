//===- DeviceCommTest.cpp - Device groups made over the control plane -----===//
//
// DeviceComm (runtime/lib/comm/DeviceComm.h) makes a device plug-in's
// groups from ids that the run's communicator carries, and hands each
// collective to the plug-in in group ranks. Here N ranks are N threads, each
// with a Transport that exchanges through shared memory, and the plug-in is
// a table of this file's functions that records what it is asked, so the
// id sharing, the group ranks, the cache and the failures are checked
// without a GPU. The last test takes the real NCCL plug-in through a
// CUDA-module-style call (CollectiveCall with a device stream) on this
// machine, where it must fail with NCCL's message, not crash.
//
//===----------------------------------------------------------------------===//

#include "comm/CollectiveCall.h"
#include "comm/DeviceComm.h"
#include "comm/Transport.h"

#include "kiln/CollectiveAbi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

using namespace kiln::runtime::comm;

namespace {

//===----------------------------------------------------------------------===//
// Ranks as threads
//===----------------------------------------------------------------------===//

/// Where the threads of one simulated run meet: an exchange among a set of
/// members, the n-th one of that set on every member, completes when all
/// of them have posted their values.
class Board {
public:
  explicit Board(int64_t ranks) : ranks(ranks) {}

  void exchange(const std::vector<int64_t> &members, int64_t rank,
                const int64_t *values, int64_t count, int64_t *all) {
    std::unique_lock<std::mutex> lock(mutex);
    int64_t sequence = next[{members, rank}]++;
    Round &round = rounds[{members, sequence}];
    round.posted[rank].assign(values, values + count);
    changed.notify_all();
    changed.wait(lock, [&] { return round.posted.size() == members.size(); });
    for (size_t i = 0; i < members.size(); ++i)
      std::copy(round.posted[members[i]].begin(),
                round.posted[members[i]].end(), all + i * count);
  }

  const int64_t ranks;

private:
  struct Round {
    std::map<int64_t, std::vector<int64_t>> posted;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::pair<std::vector<int64_t>, int64_t>, int64_t> next;
  std::map<std::pair<std::vector<int64_t>, int64_t>, Round> rounds;
};

class ThreadTransport final : public Transport {
public:
  ThreadTransport(Board &board, int64_t rankValue)
      : board(board), rankValue(rankValue) {}
  int64_t rank() const override { return rankValue; }
  int64_t size() const override { return board.ranks; }
  bool minAll(int64_t *, int64_t, std::string &) override { return true; }
  bool gatherAll(const int64_t *values, int64_t count, int64_t *all,
                 std::string &) override {
    std::vector<int64_t> everyone(size_t(board.ranks));
    for (int64_t r = 0; r < board.ranks; ++r)
      everyone[size_t(r)] = r;
    board.exchange(everyone, rankValue, values, count, all);
    return true;
  }
  bool exchangeGroup(const std::vector<int64_t> &members,
                     const int64_t *values, int64_t count, int64_t *all,
                     int64_t, std::string &) override {
    board.exchange(members, rankValue, values, count, all);
    return true;
  }
  bool start(const kiln_comm_plugin_collective_t &, int64_t &,
             std::string &error) override {
    error = "host collectives are not part of this test";
    return false;
  }
  bool wait(int64_t, std::string &) override { return true; }
  std::mutex &callLock() override { return lock; }

private:
  Board &board;
  int64_t rankValue;
  std::mutex lock;
};

/// Runs `body(rank, transport)` on `ranks` threads at once.
void onRanks(int64_t ranks,
             const std::function<void(int64_t, ThreadTransport &)> &body) {
  Board board(ranks);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadTransport transport(board, r);
      body(r, transport);
    });
  for (std::thread &thread : threads)
    thread.join();
}

//===----------------------------------------------------------------------===//
// A recording plug-in
//===----------------------------------------------------------------------===//

struct FakeGroup {
  int64_t id, size, rank;
};

struct Started {
  int64_t rank; // the run's rank of the thread that started it
  FakeGroup group;
  kiln_device_comm_collective_t collective;
};

/// What the fake plug-in saw, across the threads of one test.
struct Record {
  std::mutex mutex;
  int64_t nextId = 1000;
  int64_t idsMade = 0;
  /// Ranks whose make_id fails.
  std::vector<int64_t> failMakeIdOn;
  std::vector<Started> started;
  std::vector<FakeGroup *> groups;
} *record = nullptr;

thread_local int64_t threadRank = -1;

int fakeMakeId(void *id, char *error, size_t errorSize) {
  std::lock_guard<std::mutex> lock(record->mutex);
  for (int64_t failing : record->failMakeIdOn)
    if (failing == threadRank) {
      std::snprintf(error, errorSize, "no bootstrap network");
      return 1;
    }
  ++record->idsMade;
  int64_t value = record->nextId++;
  std::memset(id, 0, 24);
  std::memcpy(id, &value, sizeof(value));
  return 0;
}

int fakeCreate(void **group, const void *id, int64_t size, int64_t rank,
               char *, size_t) {
  int64_t value;
  std::memcpy(&value, id, sizeof(value));
  auto *made = new FakeGroup{value, size, rank};
  std::lock_guard<std::mutex> lock(record->mutex);
  record->groups.push_back(made);
  *group = made;
  return 0;
}

void fakeDestroy(void *group) {
  std::lock_guard<std::mutex> lock(record->mutex);
  auto *fake = static_cast<FakeGroup *>(group);
  record->groups.erase(
      std::find(record->groups.begin(), record->groups.end(), fake));
  delete fake;
}

int fakeStart(void *group, const kiln_device_comm_collective_t *collective,
              char *error, size_t errorSize) {
  if (collective->dtype == KILN_DTYPE_I16) {
    std::snprintf(error, errorSize, "no 16-bit integers");
    return 1;
  }
  std::lock_guard<std::mutex> lock(record->mutex);
  record->started.push_back(
      {threadRank, *static_cast<FakeGroup *>(group), *collective});
  return 0;
}

const kiln_device_comm_plugin_t kFakePlugin = {
    KILN_DEVICE_COMM_PLUGIN_VERSION,
    "fake",
    24,
    fakeMakeId,
    fakeCreate,
    fakeDestroy,
    fakeStart};

class DeviceCommTest : public ::testing::Test {
protected:
  void SetUp() override { record = &seen; }
  void TearDown() override { record = nullptr; }
  Record seen;
};

/// A collective of `kind` over `groups` (rows of `groupSize`).
kiln_comm_plugin_collective_t collective(int32_t kind,
                                         const std::vector<int64_t> &groups,
                                         int64_t groupSize) {
  kiln_comm_plugin_collective_t c = {};
  c.kind = kind;
  c.dtype = KILN_DTYPE_F32;
  c.count = 8;
  c.groups = groups.data();
  c.group_size = groupSize;
  c.group_count = int64_t(groups.size()) / groupSize;
  return c;
}

std::vector<Started> startedOn(Record &seen, int64_t rank) {
  std::vector<Started> mine;
  for (const Started &s : seen.started)
    if (s.rank == rank)
      mine.push_back(s);
  return mine;
}

/// The last collective each rank started.
std::map<int64_t, Started> lastByRank(Record &seen) {
  std::map<int64_t, Started> byRank;
  for (const Started &s : seen.started)
    byRank[s.rank] = s;
  return byRank;
}

} // namespace

TEST_F(DeviceCommTest, GroupRanksFollowTheRowAndTheIdComesFromItsFirst) {
  // The row {1, 0}: rank 1 is group rank 0 and makes the id.
  std::vector<int64_t> groups = {1, 0};
  int stream = 0;
  onRanks(2, [&](int64_t rank, ThreadTransport &transport) {
    threadRank = rank;
    DeviceComm device(transport, kFakePlugin);
    std::string error;
    kiln_comm_plugin_collective_t c =
        collective(KILN_COLLECTIVE_ALL_GATHER, groups, 2);
    EXPECT_TRUE(device.start(c, &stream, 0, error)) << error;
    // A second collective of the same group makes nothing new.
    EXPECT_TRUE(device.start(c, &stream, 0, error)) << error;
  });
  EXPECT_EQ(seen.idsMade, 1);
  ASSERT_EQ(seen.started.size(), 4u);
  for (int64_t rank : {0, 1}) {
    std::vector<Started> mine = startedOn(seen, rank);
    ASSERT_EQ(mine.size(), 2u);
    for (const Started &s : mine) {
      EXPECT_EQ(s.group.id, 1000);
      EXPECT_EQ(s.group.size, 2);
      EXPECT_EQ(s.group.rank, 1 - rank);
      EXPECT_EQ(s.collective.kind, KILN_COLLECTIVE_ALL_GATHER);
      EXPECT_EQ(s.collective.count, 8);
      EXPECT_EQ(s.collective.stream, &stream);
    }
  }
  // Every group is released with its DeviceComm.
  EXPECT_TRUE(seen.groups.empty());
}

TEST_F(DeviceCommTest, SmallerGroupsShareIdsAmongTheirMembersOnly) {
  std::vector<int64_t> groups = {2, 0, 1, 3};
  int stream = 0;
  onRanks(4, [&](int64_t rank, ThreadTransport &transport) {
    threadRank = rank;
    DeviceComm device(transport, kFakePlugin);
    std::string error;
    kiln_comm_plugin_collective_t c =
        collective(KILN_COLLECTIVE_ALL_REDUCE, groups, 2);
    c.reduction = KILN_REDUCTION_MAX;
    EXPECT_TRUE(device.start(c, &stream, 1000, error)) << error;
  });
  EXPECT_EQ(seen.idsMade, 2);
  std::map<int64_t, Started> byRank = lastByRank(seen);
  ASSERT_EQ(byRank.size(), 4u);
  EXPECT_EQ(byRank[0].group.id, byRank[2].group.id);
  EXPECT_EQ(byRank[1].group.id, byRank[3].group.id);
  EXPECT_NE(byRank[0].group.id, byRank[1].group.id);
  EXPECT_EQ(byRank[2].group.rank, 0);
  EXPECT_EQ(byRank[0].group.rank, 1);
  EXPECT_EQ(byRank[1].group.rank, 0);
  EXPECT_EQ(byRank[3].group.rank, 1);
  for (auto &[rank, s] : byRank)
    EXPECT_EQ(s.collective.reduction, KILN_REDUCTION_MAX) << rank;
}

TEST_F(DeviceCommTest, PermutationsRunOverAllRanksWithTheirPeers) {
  // 0 -> 1 and 1 -> 2: rank 0 receives nothing, rank 2 sends nothing.
  std::vector<int64_t> pairs = {0, 1, 1, 2};
  int stream = 0;
  onRanks(3, [&](int64_t rank, ThreadTransport &transport) {
    threadRank = rank;
    DeviceComm device(transport, kFakePlugin);
    std::string error;
    kiln_comm_plugin_collective_t c = {};
    c.kind = KILN_COLLECTIVE_PERMUTE;
    c.dtype = KILN_DTYPE_F64;
    c.count = 3;
    c.pairs = pairs.data();
    c.pair_count = 2;
    EXPECT_TRUE(device.start(c, &stream, 0, error)) << error;
  });
  EXPECT_EQ(seen.idsMade, 1);
  std::map<int64_t, Started> byRank = lastByRank(seen);
  ASSERT_EQ(byRank.size(), 3u);
  for (int64_t rank : {0, 1, 2}) {
    EXPECT_EQ(byRank[rank].group.size, 3);
    EXPECT_EQ(byRank[rank].group.rank, rank);
  }
  EXPECT_EQ(byRank[0].collective.send_to, 1);
  EXPECT_EQ(byRank[0].collective.recv_from, -1);
  EXPECT_EQ(byRank[1].collective.send_to, 2);
  EXPECT_EQ(byRank[1].collective.recv_from, 0);
  EXPECT_EQ(byRank[2].collective.send_to, -1);
  EXPECT_EQ(byRank[2].collective.recv_from, 1);
}

TEST_F(DeviceCommTest, AFirstMemberThatCannotMakeTheIdFailsItsWholeGroup) {
  seen.failMakeIdOn = {1};
  std::vector<int64_t> groups = {1, 0};
  std::map<int64_t, std::string> errors;
  std::mutex errorsLock;
  int stream = 0;
  onRanks(2, [&](int64_t rank, ThreadTransport &transport) {
    threadRank = rank;
    DeviceComm device(transport, kFakePlugin);
    std::string error;
    EXPECT_FALSE(device.start(
        collective(KILN_COLLECTIVE_ALL_REDUCE, groups, 2), &stream, 0, error));
    std::lock_guard<std::mutex> lock(errorsLock);
    errors[rank] = error;
  });
  EXPECT_EQ(errors[1], "making the id of replica group {1, 0} failed: fake: "
                       "no bootstrap network");
  EXPECT_EQ(errors[0], "rank 1, the first member of replica group {1, 0}, "
                       "could not make its fake id (its own error says why)");
  EXPECT_TRUE(seen.started.empty());
}

TEST_F(DeviceCommTest, ThePluginsRefusalIsTheError) {
  std::vector<int64_t> groups = {0};
  onRanks(1, [&](int64_t rank, ThreadTransport &transport) {
    threadRank = rank;
    DeviceComm device(transport, kFakePlugin);
    std::string error;
    kiln_comm_plugin_collective_t c =
        collective(KILN_COLLECTIVE_ALL_REDUCE, groups, 1);
    c.dtype = KILN_DTYPE_I16;
    int stream = 0;
    EXPECT_FALSE(device.start(c, &stream, 0, error));
    EXPECT_EQ(error, "fake: no 16-bit integers");
  });
}

TEST(DeviceCollectiveCallTest, WithoutAGpuTheNcclPluginsErrorFailsTheCall) {
  int64_t devices = 0;
  if (kiln_status_t status = kiln_device_count(KILN_DEVICE_CUDA, &devices))
    kiln_status_free(status);
  if (devices > 0)
    GTEST_SKIP() << "this machine has a CUDA device: the NCCL path runs in "
                    "the cuda.spmd tests instead";
  std::string plugin = KILN_NCCL_PLUGIN_PATH;
  if (plugin.empty())
    GTEST_SKIP() << "the NCCL plug-in is not built here";
  ASSERT_EQ(setenv("KILN_COMM_NCCL_PLUGIN", plugin.c_str(), 1), 0);
  kiln_comm_t *comm = nullptr;
  ASSERT_EQ(kiln_comm_create_self(&comm), nullptr);
  float input[4] = {1, 2, 3, 4}, output[4] = {};
  std::vector<int64_t> groups = {0};
  int stream = 0;
  kiln_status_t status;
  {
    CollectiveCall call(comm, "step", &stream);
    kiln_comm_plugin_collective_t c =
        collective(KILN_COLLECTIVE_ALL_REDUCE, groups, 1);
    c.count = 4;
    c.input = input;
    c.output = output;
    EXPECT_EQ(call.start(c), -1);
    status = call.finish();
  }
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_COMM_ERROR);
  std::string message = kiln_status_message(status);
  EXPECT_NE(message.find("function 'step', collective #1 (kiln.all_reduce): "
                         "joining replica group {0} failed: nccl: "
                         "ncclCommInitRank failed: "),
            std::string::npos)
      << message;
  kiln_status_free(status);
  kiln_comm_release(comm);
  unsetenv("KILN_COMM_NCCL_PLUGIN");
}
