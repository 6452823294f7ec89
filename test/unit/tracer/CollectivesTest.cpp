//===- CollectivesTest.cpp - Traced collectives on simulated ranks --------===//
//
// Each test traces an SPMD function with kiln/Tracer/Collectives.h, runs
// it on N simulated ranks (kiln::evaluateSpmd), each rank on its own random
// data, and compares every rank's results with what the test computes from
// all ranks' data with plain loops. Gradients through the collectives are
// checked the same way, and bad groups, axes and dtypes against their
// messages.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Grad.h"
#include "kiln/Tracer/Collectives.h"

#include "mlir/IR/BuiltinTypes.h"

#include <random>

using namespace kiln;
using namespace tracertest;

namespace {

/// rank -> values of the single f64 input of shape `shape`.
using PerRank = std::vector<std::vector<double>>;

PerRank randomPerRank(int64_t ranks, int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  PerRank data(ranks, std::vector<double>(count));
  for (auto &row : data)
    for (double &v : row)
      v = dist(rng);
  return data;
}

/// Runs `f` (one f64 input of `shape`) on the ranks' data; returns, per
/// rank, its outputs.
std::vector<std::vector<HostTensor>> runRanks(const TracedFunction &f,
                                              const Shape &shape,
                                              const PerRank &data) {
  expectVerifies(f);
  mlir::Type f64 = mlir::Float64Type::get(f.module()->getContext());
  std::vector<std::vector<HostTensor>> inputs;
  for (const auto &values : data)
    inputs.push_back({HostTensor::fromFloats(f64, shape, values)});
  auto results = evaluateSpmd(f.function(), inputs);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return *results;
}

std::vector<TensorSpec> f64Input(const Shape &shape) {
  return {TensorSpec{DType::F64, shape, "x"}};
}

TEST(Collectives, AllReduceKindsInGroups) {
  const int64_t ranks = 4, n = 5;
  ReplicaGroups pairs({{0, 2}, {1, 3}});
  auto f = trace("f", f64Input({n}), [&](const Tensors &a) {
    return Tensors{all_reduce(a[0], Reduction::Sum, pairs),
                   all_reduce(a[0], Reduction::Max, pairs),
                   all_reduce(a[0], Reduction::Min, ReplicaGroups::all(ranks)),
                   all_reduce(a[0], Reduction::Mean, pairs)};
  });
  PerRank data = randomPerRank(ranks, n, 1);
  auto results = runRanks(f, {n}, data);
  ASSERT_EQ(results.size(), static_cast<size_t>(ranks));
  for (int64_t r = 0; r < ranks; ++r) {
    int64_t peer = r ^ 2; // the other member of r's pair
    std::vector<double> sum(n), max(n), min(n), mean(n);
    for (int64_t i = 0; i < n; ++i) {
      sum[i] = data[std::min(r, peer)][i] + data[std::max(r, peer)][i];
      max[i] = std::max(data[r][i], data[peer][i]);
      min[i] = data[0][i];
      for (int64_t q = 1; q < ranks; ++q)
        min[i] = std::min(min[i], data[q][i]);
      mean[i] = sum[i] / 2;
    }
    expectTensor(results[r][0], DType::F64, {n}, sum, 1e-15);
    expectTensor(results[r][1], DType::F64, {n}, max, 0);
    expectTensor(results[r][2], DType::F64, {n}, min, 0);
    expectTensor(results[r][3], DType::F64, {n}, mean, 1e-15);
  }
}

TEST(Collectives, GatherScatterBroadcastAllToAll) {
  const int64_t ranks = 3, rows = 3, cols = 2;
  auto groups = ReplicaGroups::all(ranks);
  auto f = trace("f", f64Input({rows, cols}), [&](const Tensors &a) {
    return Tensors{all_gather(a[0], -1, groups),
                   reduce_scatter(a[0], Reduction::Sum, 0, groups),
                   broadcast_from(a[0], 2, groups),
                   all_to_all(a[0], 0, 1, groups)};
  });
  PerRank data = randomPerRank(ranks, rows * cols, 2);
  auto results = runRanks(f, {rows, cols}, data);
  ASSERT_EQ(results.size(), static_cast<size_t>(ranks));
  auto at = [&](int64_t r, int64_t i, int64_t j) {
    return data[r][idx2(i, j, cols)];
  };
  for (int64_t r = 0; r < ranks; ++r) {
    std::vector<double> gathered, scattered, alltoall;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t q = 0; q < ranks; ++q)
        for (int64_t j = 0; j < cols; ++j)
          gathered.push_back(at(q, i, j));
    for (int64_t j = 0; j < cols; ++j) // row r of the sum (1 row per rank)
      scattered.push_back(at(0, r, j) + at(1, r, j) + at(2, r, j));
    for (int64_t q = 0; q < ranks; ++q) // rank q's row r, joined along cols
      for (int64_t j = 0; j < cols; ++j)
        alltoall.push_back(at(q, r, j));
    expectTensor(results[r][0], DType::F64, {rows, cols * ranks}, gathered, 0);
    expectTensor(results[r][1], DType::F64, {1, cols}, scattered, 1e-15);
    expectTensor(results[r][2], DType::F64, {rows, cols}, data[2], 0);
    expectTensor(results[r][3], DType::F64, {1, cols * ranks}, alltoall, 0);
  }
}

TEST(Collectives, PermuteAndRank) {
  const int64_t ranks = 4, n = 3;
  // A ring among 0, 1, 2; rank 3 neither sends nor receives.
  std::vector<std::pair<int64_t, int64_t>> ring = {{0, 1}, {1, 2}, {2, 0}};
  auto f = trace("f", f64Input({n}), [&](const Tensors &a) {
    return Tensors{collective_permute(a[0], ring, ranks), rank_index()};
  });
  PerRank data = randomPerRank(ranks, n, 3);
  auto results = runRanks(f, {n}, data);
  ASSERT_EQ(results.size(), static_cast<size_t>(ranks));
  int64_t source[] = {2, 0, 1, -1};
  for (int64_t r = 0; r < ranks; ++r) {
    expectTensor(results[r][0], DType::F64, {n},
                 source[r] < 0 ? std::vector<double>(n, 0.0)
                               : data[source[r]],
                 0);
    expectTensor(results[r][1], DType::I64, {}, {static_cast<double>(r)}, 0);
  }
}

/// The gradient of sum(w * all_gather(x)) with respect to x is rank r's
/// block of the sum over the ranks of w: all_gather's adjoint is
/// reduce_scatter.
TEST(Collectives, GradientOfAGatherIsAScatteredSum) {
  const int64_t ranks = 2, n = 3;
  auto groups = ReplicaGroups::all(ranks);
  auto f = trace("f", {TensorSpec{DType::F64, {n}, "x"},
                       TensorSpec{DType::F64, {n * ranks}, "w"}},
                 [&](const Tensors &a) {
                   auto loss = [&](const Tensors &b) {
                     return sum(b[1] * all_gather(b[0], 0, groups));
                   };
                   return value_and_grad(loss, {0})(a);
                 });
  expectVerifies(f);
  PerRank xs = randomPerRank(ranks, n, 4), ws = randomPerRank(ranks, n * ranks, 5);
  mlir::Type f64 = mlir::Float64Type::get(f.module()->getContext());
  std::vector<std::vector<HostTensor>> inputs;
  for (int64_t r = 0; r < ranks; ++r)
    inputs.push_back({HostTensor::fromFloats(f64, {n}, xs[r]),
                      HostTensor::fromFloats(f64, {n * ranks}, ws[r])});
  auto results = evaluateSpmd(f.function(), inputs);
  ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
  for (int64_t r = 0; r < ranks; ++r) {
    std::vector<double> grad(n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t q = 0; q < ranks; ++q)
        grad[i] += ws[q][r * n + i];
    expectTensor((*results)[r][1], DType::F64, {n}, grad, 1e-14);
  }
}

TEST(Collectives, MistakesNameTheFix) {
  auto traceWith = [](std::function<Tensor(const Tensor &)> body,
                      DType dtype = DType::F32) {
    trace("f", {TensorSpec{dtype, {4, 3}, "x"}},
          [&](const Tensors &a) { return Tensors{body(a[0])}; });
  };
  EXPECT_NE(expectTraceError([&] {
              traceWith([](const Tensor &x) {
                return all_reduce(x, Reduction::Sum,
                                  ReplicaGroups({{0, 1}, {1, 2}}));
              });
            }).find("each rank 0 .. 3 of the run exactly once"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              traceWith([](const Tensor &x) {
                return all_reduce(x, Reduction::Sum,
                                  ReplicaGroups({{0, 1}, {2}}));
              });
            }).find("must have one size"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              traceWith([](const Tensor &x) {
                return reduce_scatter(x, Reduction::Sum, 1,
                                      ReplicaGroups::all(2));
              });
            }).find("does not split into 2 equal blocks"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              traceWith([](const Tensor &x) {
                return all_gather(x, 2, ReplicaGroups::all(2));
              });
            }).find("axis 2 is out of range"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              traceWith(
                  [](const Tensor &x) {
                    return all_reduce(x, Reduction::Mean,
                                      ReplicaGroups::all(2));
                  },
                  DType::I32);
            }).find("a mean needs a float tensor"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              traceWith([](const Tensor &x) {
                return broadcast_from(x, 2, ReplicaGroups::all(2));
              });
            }).find("root 2 is not a group index"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              traceWith([](const Tensor &x) {
                return collective_permute(x, {{0, 1}, {0, 2}}, 3);
              });
            }).find("repeats its source"),
            std::string::npos);
  EXPECT_NE(expectTraceError([] { rank_index(); }).find("kiln::rank_index"),
            std::string::npos);
}

} // namespace
