//===- CommRankTest.cpp - The collectives fixture on several ranks --------===//
//
// Runs on every rank of a run, over the communicator plug-in that
// KILN_TEST_COMM names: "mpi" (the default) under mpirun (mpirun_test.sh,
// as runtime.mpi.ranks.n2 and .n4), "gloo" with the ranks meeting through a
// store (gloo_test.sh, as runtime.gloo.*). Every rank runs every test, in
// the same order, calling the fixture's functions with the communicator
// and inputs of its own, and checks its outputs against values computed
// here from what every rank's inputs are. The fault tests check that each
// rank gets the error its part in the disagreement deserves, and that the
// communicator works afterwards.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kiln/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace kiln;
using namespace kiln::test;

namespace {

kiln_comm_t *comm = nullptr;

/// The plug-in under test: "mpi" or "gloo".
std::string engine() {
  const char *name = std::getenv("KILN_TEST_COMM");
  return name && *name ? name : "mpi";
}

kiln_status_t createComm(kiln_comm_t **out) {
  return engine() == "gloo" ? kiln_comm_create_gloo(out)
                            : kiln_comm_create_mpi(out);
}

/// Creates the communicator before the tests and releases it (finalizing
/// MPI) after them.
class CommEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    Outcome outcome = take(createComm(&comm));
    ASSERT_TRUE(outcome.ok()) << outcome.message;
  }
  void TearDown() override {
    kiln_comm_release(comm);
    comm = nullptr;
  }
};

class CommRankTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(comm, nullptr);
    rank = kiln_comm_rank(comm);
    size = kiln_comm_size(comm);
    module = loadModule(collectivesModuleContents(size));
  }

  Outcome call(const std::string &name,
               const std::vector<kiln_tensor_t *> &inputs) {
    return callFunction(module.get(), name, comm, inputs, out);
  }

  /// f32 input element i of rank r in most tests.
  static float input(int64_t r, int64_t i) { return float(100 * r + i); }

  std::vector<float> inputs(int64_t r, int64_t count) const {
    std::vector<float> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(input(r, i));
    return values;
  }

  int64_t rank = 0, size = 0;
  ModulePtr module;
  std::vector<TensorPtr> out;
};

TEST_F(CommRankTest, RankAndSizeAreTheLaunchers) {
  bool gloo = engine() == "gloo";
  if (const char *expected =
          std::getenv(gloo ? "KILN_WORLD_SIZE" : "OMPI_COMM_WORLD_SIZE"))
    EXPECT_EQ(size, std::atoll(expected));
  if (const char *expected =
          std::getenv(gloo ? "KILN_RANK" : "OMPI_COMM_WORLD_RANK"))
    EXPECT_EQ(rank, std::atoll(expected));
  EXPECT_GE(size, 2);
  // The communicator brought in the plug-in and its engine (CommTest.cpp
  // checks that nothing else does).
  EXPECT_TRUE(isLoaded(gloo ? "libkiln_comm_gloo" : "libkiln_comm_mpi"));
  EXPECT_TRUE(isLoaded(gloo ? "libgloo" : "libmpi"));
  EXPECT_FALSE(isLoaded(gloo ? "libmpi" : "libgloo"));
  Outcome outcome = call("rank_size", {});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_EQ(tensorValues<int64_t>(out[0].get()), std::vector<int64_t>{rank});
  EXPECT_EQ(tensorValues<int64_t>(out[1].get()), std::vector<int64_t>{size});
}

/// Element i of rank r for the all-reduce of each dtype: signs alternate,
/// so that the maximum comes from the last rank at even i and from rank 0
/// at odd i; floats are off integers by a half, exact in bf16.
double reduceInput(ElementClass kind, int64_t r, int64_t i) {
  double magnitude = double((r + 1) * (i + 1));
  double sign = i % 2 ? -1 : 1;
  switch (kind) {
  case ElementClass::Float:
    return sign * magnitude + 0.5;
  case ElementClass::Integer:
    return sign * magnitude;
  case ElementClass::Unsigned:
    return magnitude;
  case ElementClass::Bool:
    return (r + i) % 3 == 0 ? 1 : 0;
  }
  return 0;
}

/// The bytes of \p value as an element of \p type.
std::vector<uint8_t> encode(ElementType type, double value) {
  std::vector<uint8_t> bytes(getElementTypeInfo(type).byteSize);
  auto put = [&](auto element) {
    std::memcpy(bytes.data(), &element, sizeof(element));
  };
  switch (type) {
  case ElementType::F32:
    put(float(value));
    break;
  case ElementType::F64:
    put(value);
    break;
  case ElementType::F16:
    put(floatToHalf(float(value)));
    break;
  case ElementType::BF16:
    put(floatToBfloat16(float(value)));
    break;
  case ElementType::I1:
  case ElementType::UI8:
    put(uint8_t(value));
    break;
  case ElementType::I8:
    put(int8_t(value));
    break;
  case ElementType::I16:
    put(int16_t(value));
    break;
  case ElementType::I32:
    put(int32_t(value));
    break;
  case ElementType::I64:
    put(int64_t(value));
    break;
  case ElementType::UI16:
    put(uint16_t(value));
    break;
  case ElementType::UI32:
    put(uint32_t(value));
    break;
  case ElementType::UI64:
    put(uint64_t(value));
    break;
  }
  return bytes;
}

TEST_F(CommRankTest, AllReduceOfEveryDtype) {
  for (const ElementTypeInfo &info : kElementTypes) {
    SCOPED_TRACE(info.name);
    std::vector<uint8_t> mine;
    std::vector<uint8_t> sum, max, min;
    for (int64_t i = 0; i < 6; ++i) {
      std::vector<uint8_t> element =
          encode(info.type, reduceInput(info.elementClass, rank, i));
      mine.insert(mine.end(), element.begin(), element.end());
      double s = 0, hi = -1e300, lo = 1e300;
      for (int64_t r = 0; r < size; ++r) {
        double v = reduceInput(info.elementClass, r, i);
        s += v;
        hi = std::max(hi, v);
        lo = std::min(lo, v);
      }
      // An i1 sum saturates: a logical or.
      if (info.elementClass == ElementClass::Bool)
        s = s > 0 ? 1 : 0;
      for (auto [bytes, value] : {std::pair{&sum, s}, {&max, hi}, {&min, lo}}) {
        std::vector<uint8_t> expected = encode(info.type, value);
        bytes->insert(bytes->end(), expected.begin(), expected.end());
      }
    }
    kiln_tensor_t *x = nullptr;
    int64_t shape[] = {6};
    ASSERT_TRUE(take(kiln_tensor_create(kiln_dtype_t(info.type), 1, shape,
                                        mine.data(), &x))
                    .ok());
    TensorPtr input(x);
    Outcome outcome = call(std::string("all_reduce_") + info.name, {x});
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    const std::vector<uint8_t> *expected[] = {&sum, &max, &min};
    const char *names[] = {"sum", "max", "min"};
    for (int k = 0; k < 3; ++k) {
      auto *data = static_cast<const uint8_t *>(kiln_tensor_data(out[k].get()));
      EXPECT_EQ(std::vector<uint8_t>(data, data + expected[k]->size()),
                *expected[k])
          << names[k];
    }
  }
}

/// Element \p i of a float tensor of \p type, as double.
double floatAt(ElementType type, kiln_tensor_t *tensor, size_t i) {
  const auto *data = static_cast<const uint8_t *>(kiln_tensor_data(tensor));
  switch (type) {
  case ElementType::F32: {
    float value;
    std::memcpy(&value, data + 4 * i, 4);
    return value;
  }
  case ElementType::F64: {
    double value;
    std::memcpy(&value, data + 8 * i, 8);
    return value;
  }
  default: {
    uint16_t bits;
    std::memcpy(&bits, data + 2 * i, 2);
    return type == ElementType::F16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
  }
  }
}

TEST_F(CommRankTest, FloatMaximaPropagateNaNAndOrderZeros) {
  // Element 0: NaN on rank 1 only. Element 1: -0 on rank 0, +0 elsewhere.
  // Element 2: +0 on rank 0, -0 elsewhere. The rest: ordinary values.
  for (ElementType type : {ElementType::F32, ElementType::F64, ElementType::F16,
                           ElementType::BF16}) {
    const ElementTypeInfo &info = getElementTypeInfo(type);
    SCOPED_TRACE(info.name);
    double values[6] = {rank == 1 ? std::nan("") : 1.0,
                        rank == 0 ? -0.0 : 0.0,
                        rank == 0 ? 0.0 : -0.0,
                        double(rank),
                        -double(rank),
                        2.5};
    std::vector<uint8_t> bytes;
    for (double value : values) {
      std::vector<uint8_t> element = encode(type, value);
      bytes.insert(bytes.end(), element.begin(), element.end());
    }
    kiln_tensor_t *x = nullptr;
    int64_t shape[] = {6};
    ASSERT_TRUE(
        take(kiln_tensor_create(kiln_dtype_t(type), 1, shape, bytes.data(), &x))
            .ok());
    TensorPtr input(x);
    Outcome outcome = call(std::string("all_reduce_") + info.name, {x});
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    kiln_tensor_t *sum = out[0].get(), *max = out[1].get(), *min = out[2].get();
    for (kiln_tensor_t *result : {sum, max, min})
      EXPECT_TRUE(std::isnan(floatAt(type, result, 0)));
    EXPECT_FALSE(std::signbit(floatAt(type, max, 1)));
    EXPECT_TRUE(std::signbit(floatAt(type, min, 1)));
    EXPECT_FALSE(std::signbit(floatAt(type, max, 2)));
    EXPECT_TRUE(std::signbit(floatAt(type, min, 2)));
    EXPECT_EQ(floatAt(type, max, 3), double(size - 1));
    EXPECT_EQ(floatAt(type, min, 4), -double(size - 1));
    EXPECT_EQ(floatAt(type, sum, 5), 2.5 * double(size));
  }
}

TEST_F(CommRankTest, CollectivesOverInterleavedGroups) {
  if (size % 2)
    GTEST_SKIP() << "needs an even number of ranks";
  // Called twice: the second finds its group communicator cached.
  for (int repeat = 0; repeat < 2; ++repeat) {
    TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, inputs(rank, 4));
    Outcome outcome = call("strided_groups", {x.get()});
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    int64_t first = rank % (size / 2), second = first + size / 2;
    std::vector<float> sum, gathered = inputs(first, 4);
    for (int64_t i = 0; i < 4; ++i)
      sum.push_back(input(first, i) + input(second, i));
    for (float value : inputs(second, 4))
      gathered.push_back(value);
    EXPECT_EQ(tensorValues<float>(out[0].get()), sum);
    EXPECT_EQ(tensorValues<float>(out[1].get()), gathered);
  }
}

TEST_F(CommRankTest, AllGather) {
  std::vector<int32_t> mine = {int32_t(rank), int32_t(-rank), 7};
  TensorPtr x = makeTensor(KILN_DTYPE_I32, {3}, mine);
  Outcome outcome = call("all_gather", {x.get()});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  std::vector<int32_t> expected;
  for (int64_t r = 0; r < size; ++r)
    expected.insert(expected.end(), {int32_t(r), int32_t(-r), 7});
  EXPECT_EQ(tensorValues<int32_t>(out[0].get()), expected);
}

TEST_F(CommRankTest, ReduceScatter) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {2 * size}, inputs(rank, 2 * size));
  Outcome outcome = call("reduce_scatter", {x.get()});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  std::vector<float> expected(2, 0);
  for (int64_t r = 0; r < size; ++r)
    for (int64_t j = 0; j < 2; ++j)
      expected[j] += input(r, 2 * rank + j);
  EXPECT_EQ(tensorValues<float>(out[0].get()), expected);
}

TEST_F(CommRankTest, BroadcastFromTheLastRank) {
  std::vector<int64_t> mine;
  for (int64_t i = 0; i < 5; ++i)
    mine.push_back(rank * 1000 + i);
  TensorPtr x = makeTensor(KILN_DTYPE_I64, {5}, mine);
  Outcome outcome = call("broadcast", {x.get()});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 5; ++i)
    expected.push_back((size - 1) * 1000 + i);
  EXPECT_EQ(tensorValues<int64_t>(out[0].get()), expected);
  // The input is left as it was.
  EXPECT_EQ(tensorValues<int64_t>(x.get()), mine);
}

TEST_F(CommRankTest, AllToAll) {
  std::vector<int32_t> mine;
  for (int64_t i = 0; i < 2 * size; ++i)
    mine.push_back(int32_t(rank * 100 + i));
  TensorPtr x = makeTensor(KILN_DTYPE_I32, {2 * size}, mine);
  Outcome outcome = call("all_to_all", {x.get()});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  // Block i of the output is block `rank` of rank i's input.
  std::vector<int32_t> expected;
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < 2; ++j)
      expected.push_back(int32_t(i * 100 + 2 * rank + j));
  EXPECT_EQ(tensorValues<int32_t>(out[0].get()), expected);
}

TEST_F(CommRankTest, PermuteShiftsAndRotates) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {3}, inputs(rank, 3));
  Outcome outcome = call("permute", {x.get()});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  int64_t previous = (rank + size - 1) % size;
  std::vector<float> shifted =
      rank == 0 ? std::vector<float>(3, 0.0f) : inputs(previous, 3);
  EXPECT_EQ(tensorValues<float>(out[0].get()), shifted);
  EXPECT_EQ(tensorValues<float>(out[1].get()), inputs(previous, 3));
}

TEST_F(CommRankTest, ManyCallsInARow) {
  for (int64_t call = 0; call < 50; ++call) {
    std::vector<float> mine;
    for (int64_t i = 0; i < 6; ++i)
      mine.push_back(float(call * 7 + rank * 3 + i));
    TensorPtr x = makeTensor(KILN_DTYPE_F32, {6}, mine);
    Outcome outcome = this->call("sum6", {x.get()});
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    std::vector<float> expected;
    for (int64_t i = 0; i < 6; ++i) {
      float sum = 0;
      for (int64_t r = 0; r < size; ++r)
        sum += float(call * 7 + r * 3 + i);
      expected.push_back(sum);
    }
    ASSERT_EQ(tensorValues<float>(out[0].get()), expected) << "call " << call;
  }
}

std::string group(int64_t size) {
  return "over 1 group of " + std::to_string(size) + " ranks";
}

TEST_F(CommRankTest, MismatchedCountFailsOnEveryRank) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {8}, inputs(rank, 8));
  Outcome outcome = call("mismatched_count", {x.get()});
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string prefix = "rank " + std::to_string(rank) +
                       ": function 'mismatched_count', collective #1 "
                       "(kiln.all_reduce): this rank starts kiln.all_reduce "
                       "(sum) of ";
  std::string expected =
      rank == 1 ? prefix + "4 x f32 " + group(size) +
                      " but rank 0 starts kiln.all_reduce (sum) of 8 x f32 " +
                      group(size)
                : prefix + "8 x f32 " + group(size) +
                      " but rank 1 starts kiln.all_reduce (sum) of 4 x f32 " +
                      group(size);
  EXPECT_EQ(outcome.message, expected);
  EXPECT_EQ(out[0], nullptr);
}

TEST_F(CommRankTest, MismatchedKindFailsOnEveryRank) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {8}, inputs(rank, 8));
  Outcome outcome = call("mismatched_kind", {x.get()});
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string reduce = "kiln.all_reduce (sum) of 8 x f32 " + group(size);
  std::string broadcast =
      "kiln.collective_broadcast of 8 x f32 from group member 0 " + group(size);
  std::string head = "rank " + std::to_string(rank) +
                     ": function 'mismatched_kind', collective #1 (";
  EXPECT_EQ(outcome.message,
            rank == 1 ? head + "kiln.collective_broadcast): this rank starts " +
                            broadcast + " but rank 0 starts " + reduce
                      : head + "kiln.all_reduce): this rank starts " + reduce +
                            " but rank 1 starts " + broadcast);
}

TEST_F(CommRankTest, MismatchedDtypeFailsOnEveryRank) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {8}, inputs(rank, 8));
  Outcome outcome = call("mismatched_dtype", {x.get()});
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string f32 = "kiln.all_reduce (sum) of 8 x f32 " + group(size);
  std::string i32 = "kiln.all_reduce (sum) of 8 x i32 " + group(size);
  std::string head = "rank " + std::to_string(rank) +
                     ": function 'mismatched_dtype', collective #1 "
                     "(kiln.all_reduce): this rank starts ";
  EXPECT_EQ(outcome.message, rank == 1
                                 ? head + i32 + " but rank 0 starts " + f32
                                 : head + f32 + " but rank 1 starts " + i32);
}

TEST_F(CommRankTest, MismatchedGroupsFailOnEveryRank) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {8}, inputs(rank, 8));
  Outcome outcome = call("mismatched_groups", {x.get()});
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string reduce = "kiln.all_reduce (sum) of 8 x f32 " + group(size);
  EXPECT_EQ(outcome.message,
            "rank " + std::to_string(rank) +
                ": function 'mismatched_groups', collective #1 "
                "(kiln.all_reduce): this rank starts " +
                reduce + " but rank " + (rank == 1 ? "0" : "1") + " starts " +
                reduce + " with other replica groups");
}

TEST_F(CommRankTest, RankThatReturnsEarlyIsReported) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, inputs(rank, 4));
  Outcome outcome = call("returns_early", {x.get()});
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string reduce = "kiln.all_reduce (sum) of 4 x f32 " + group(size);
  std::string me =
      "rank " + std::to_string(rank) + ": function 'returns_early'";
  EXPECT_EQ(outcome.message,
            rank == 1
                ? me +
                      ": this rank returned from the function after 1 "
                      "collective but rank 0 starts collective #2, " +
                      reduce
                : me + ", collective #2 (kiln.all_reduce): this rank starts " +
                      reduce +
                      " but rank 1 returned from the function after 1 "
                      "collective");
}

TEST_F(CommRankTest, PairsRunTheirOwnNumberOfCollectives) {
  if (size % 2)
    GTEST_SKIP() << "needs an even number of ranks";
  // Twice: the second call finds the pair's communicator made.
  for (int repeat = 0; repeat < 2; ++repeat) {
    TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, inputs(rank, 4));
    Outcome outcome = call("pair_stages", {x.get()});
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    auto stage = [&](int64_t r, int64_t i) {
      int64_t first = r / 2 * 2;
      return float(1 << (r / 2)) * (input(first, i) + input(first + 1, i));
    };
    std::vector<float> y, w(4, 0);
    for (int64_t i = 0; i < 4; ++i) {
      y.push_back(stage(rank, i));
      for (int64_t r = 0; r < size; ++r)
        w[i] += stage(r, i);
    }
    EXPECT_EQ(tensorValues<float>(out[0].get()), y);
    EXPECT_EQ(tensorValues<float>(out[1].get()), w);
  }
}

TEST_F(CommRankTest, PairMemberThatReturnsEarlyIsReported) {
  if (size % 2 || size < 4)
    GTEST_SKIP() << "needs pairs of ranks smaller than the run";
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, inputs(rank, 4));
  Outcome outcome = call("pair_member_returns_early", {x.get()});
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string reduce = "kiln.all_reduce (sum) of 4 x f32 over " +
                       std::to_string(size / 2) + " group" +
                       (size == 2 ? "" : "s") + " of 2 ranks";
  std::string me = "rank " + std::to_string(rank) +
                   ": function 'pair_member_returns_early'";
  if (rank == 0)
    EXPECT_EQ(outcome.message,
              me + ", collective #2 in replica group {0, 1} "
                   "(kiln.all_reduce): this rank starts " +
                  reduce +
                  " but rank 1 returned from the function after 1 "
                  "collective in replica group {0, 1}");
  else if (rank == 1)
    EXPECT_EQ(outcome.message,
              me + ": this rank returned from the function after 1 "
                   "collective in replica group {0, 1} but rank 0 starts "
                   "collective #2, " +
                  reduce);
  else
    // The other pairs' calls went well, but the call fails on every rank.
    EXPECT_EQ(outcome.message,
              me + ", on return: rank 0 failed earlier in this call (its own "
                   "error says how)");
}

TEST_F(CommRankTest, PairMemberWaitingElsewhereIsReportedNotWaitedFor) {
  if (size % 2 || size < 4)
    GTEST_SKIP() << "needs pairs of ranks smaller than the run";
  // A communicator of its own: the pair {0, 1} cannot be used again on
  // rank 0's after the timeout.
  kiln_comm_t *own = nullptr;
  ASSERT_TRUE(take(createComm(&own)).ok());
  setenv("KILN_COMM_GROUP_TIMEOUT", "2", 1);
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, inputs(rank, 4));
  Outcome outcome =
      callFunction(module.get(), "pair_member_waits_elsewhere", own, {x.get()},
                   out);
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  std::string me = "rank " + std::to_string(rank) +
                   ": function 'pair_member_waits_elsewhere'";
  if (rank == 0) {
    EXPECT_EQ(outcome.message,
              me + ", collective #1 in replica group {0, 1} "
                   "(kiln.all_reduce): comparing with replica group {0, 1} "
                   "failed: " +
                  engine() +
                  ": rank 1 of the group did not reach it within 2 s");
    // The next call refuses the pair at once.
    Outcome again = callFunction(module.get(), "pair_member_waits_elsewhere",
                                 own, {x.get()}, out);
    EXPECT_NE(again.message.find("replica group {0, 1} cannot be used again "
                                 "on this communicator since an earlier "
                                 "call: comparing with replica group {0, 1} "
                                 "failed"),
              std::string::npos)
        << again.message;
  } else {
    EXPECT_EQ(outcome.message,
              me + ", collective #1 (kiln.all_reduce): rank 0 failed earlier "
                   "in this call (its own error says how)");
    // The others meet rank 0 in the comparison of every rank again.
    Outcome again = callFunction(module.get(), "pair_member_waits_elsewhere",
                                 own, {x.get()}, out);
    EXPECT_EQ(again.code, KILN_STATUS_COMM_ERROR);
  }
  unsetenv("KILN_COMM_GROUP_TIMEOUT");
  kiln_comm_release(own);
}

TEST_F(CommRankTest, GroupsForAnotherNumberOfRanks) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, inputs(rank, 4));
  Outcome outcome = call("for_two_ranks", {x.get()});
  if (size == 2) {
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    std::vector<float> expected;
    for (int64_t i = 0; i < 4; ++i)
      expected.push_back(input(0, i) + input(1, i));
    EXPECT_EQ(tensorValues<float>(out[0].get()), expected);
    return;
  }
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_EQ(outcome.message,
            "rank " + std::to_string(rank) +
                ": function 'for_two_ranks', collective #1 "
                "(kiln.all_reduce): its replica groups span 2 ranks (1 group "
                "of 2) but the run has " +
                std::to_string(size) + "; start it with 'mpirun -n 2'");
}

TEST_F(CommRankTest, BadArgumentOnOneRankFailsEveryRank) {
  // Rank 1's input has the wrong shape: its call fails before the code
  // runs, and the others, instead of waiting for it in the all-reduce,
  // learn that it failed.
  TensorPtr x = rank == 1 ? makeTensor(KILN_DTYPE_F32, {5}, inputs(rank, 5))
                          : makeTensor(KILN_DTYPE_F32, {6}, inputs(rank, 6));
  Outcome outcome = call("sum6", {x.get()});
  if (rank == 1) {
    EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(outcome.message, "function 'sum6': input 0 ('x') has shape [5] "
                               "but the signature expects [6]");
  } else {
    EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
    EXPECT_EQ(outcome.message,
              "rank " + std::to_string(rank) +
                  ": function 'sum6', collective #1 (kiln.all_reduce): rank 1 "
                  "failed earlier in this call (its own error says how)");
  }
}

TEST_F(CommRankTest, WorksAgainAfterFailures) {
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {8}, inputs(rank, 8));
  ASSERT_FALSE(call("mismatched_count", {x.get()}).ok());
  TensorPtr y = makeTensor(KILN_DTYPE_F32, {6}, inputs(rank, 6));
  Outcome outcome = call("sum6", {y.get()});
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  std::vector<float> expected(6, 0);
  for (int64_t r = 0; r < size; ++r)
    for (int64_t i = 0; i < 6; ++i)
      expected[i] += input(r, i);
  EXPECT_EQ(tensorValues<float>(out[0].get()), expected);
}

TEST_F(CommRankTest, AllOkIsALogicalAnd) {
  int all = -1;
  ASSERT_TRUE(take(kiln_comm_all_ok(comm, rank != 1, &all)).ok());
  EXPECT_EQ(all, 0);
  ASSERT_TRUE(take(kiln_comm_all_ok(comm, 1, &all)).ok());
  EXPECT_EQ(all, 1);
  EXPECT_TRUE(take(kiln_comm_barrier(comm)).ok());
}

TEST_F(CommRankTest, AllGatherPutsEveryRanksBytesInRankOrder) {
  // 11 bytes: not a multiple of the 8-byte words they travel in.
  std::vector<uint8_t> mine(11), all(11 * size, 0);
  for (size_t i = 0; i < mine.size(); ++i)
    mine[i] = static_cast<uint8_t>(rank * 16 + i);
  ASSERT_TRUE(
      take(kiln_comm_all_gather(comm, mine.data(), mine.size(), all.data()))
          .ok());
  for (int64_t r = 0; r < size; ++r)
    for (size_t i = 0; i < mine.size(); ++i)
      EXPECT_EQ(all[r * mine.size() + i], static_cast<uint8_t>(r * 16 + i))
          << "rank " << r << ", byte " << i;
  // Rank 1 passing another size fails on every rank, naming it.
  std::vector<uint8_t> more(rank == 1 ? 12 : 11), room(12 * size);
  Outcome outcome =
      take(kiln_comm_all_gather(comm, more.data(), more.size(), room.data()));
  EXPECT_EQ(outcome.code, KILN_STATUS_COMM_ERROR);
  EXPECT_NE(outcome.message.find(rank == 1 ? "rank 0 passes 11"
                                           : "rank 1 passes 12"),
            std::string::npos)
      << outcome.message;
}

TEST_F(CommRankTest, BroadcastGivesEveryRankTheRootsBytes) {
  for (int64_t root = 0; root < size; ++root) {
    // 13 bytes: not a multiple of any element size.
    std::vector<uint8_t> data(13);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<uint8_t>(rank * 32 + i);
    ASSERT_TRUE(
        take(kiln_comm_broadcast(comm, data.data(), data.size(), root)).ok());
    for (size_t i = 0; i < data.size(); ++i)
      EXPECT_EQ(data[i], static_cast<uint8_t>(root * 32 + i))
          << "root " << root << ", byte " << i;
  }
  // Ranks disagreeing on the size or the root all fail, naming the other.
  std::vector<uint8_t> more(rank == 1 ? 14 : 13);
  Outcome sizes =
      take(kiln_comm_broadcast(comm, more.data(), more.size(), 0));
  EXPECT_EQ(sizes.code, KILN_STATUS_COMM_ERROR);
  EXPECT_NE(sizes.message.find(rank == 1 ? "rank 0 passes 13"
                                         : "rank 1 passes 14"),
            std::string::npos)
      << sizes.message;
  std::vector<uint8_t> data(4);
  Outcome roots = take(
      kiln_comm_broadcast(comm, data.data(), data.size(), rank == 1 ? 1 : 0));
  EXPECT_EQ(roots.code, KILN_STATUS_COMM_ERROR);
  EXPECT_NE(roots.message.find("as the root"), std::string::npos)
      << roots.message;
  EXPECT_EQ(take(kiln_comm_broadcast(comm, data.data(), data.size(), size))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new CommEnvironment);
  return RUN_ALL_TESTS();
}
