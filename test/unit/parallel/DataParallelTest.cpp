//===- DataParallelTest.cpp - kiln-data-parallel against the original -----===//
//
// Every test runs a function twice: the original with kiln::evaluate on the
// whole batch, and its kiln-data-parallel rewrite with kiln::evaluateSpmd
// on N simulated ranks, rank r on rows [r * B / N, (r + 1) * B / N) of each
// batch argument and the other arguments whole. Every rank's results must
// equal the original's up to the order of float sums. Inputs are drawn
// from seeded generators; the programs are training steps traced with the
// C++ tracer (MLPs with one and two hidden layers, with SGD and with Adam,
// a small attention model), a convolutional net differentiated by
// kiln-grad, a function with a while loop (the materialization path), a
// tour of the op rules, random programs, and 100 steps of training.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/DataParallel.h"
#include "ParallelTestSupport.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Grad.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/Optim.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/kiln.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>

using namespace mlir;
using ::kiln::HostTensor;
using namespace ::kiln::parallel_test;

namespace {

using Inputs = std::vector<HostTensor>;

/// How far a rank's result may be from the original's: the sums the ranks
/// split add the same terms in another order, so each element may differ
/// by a few roundings of its own size and of the largest terms involved
/// (`absolute` is relative to the largest magnitude in the tensor, at least
/// 1).
struct Tolerance {
  double relative = 1e-5;
  double absolute = 1e-6;
};

/// Where the first element of `actual` outside the tolerance of `expected`
/// is, or an empty string if there is none.
std::string mismatch(const HostTensor &actual, const HostTensor &expected,
                     Tolerance tolerance) {
  if (actual.getType() != expected.getType()) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "type " << actual.getType() << ", expected " << expected.getType();
    return message;
  }
  double scale = 1.0;
  for (int64_t i = 0; i < expected.numElements(); ++i)
    if (std::isfinite(expected.getAsDouble(i)))
      scale = std::max(scale, std::fabs(expected.getAsDouble(i)));
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double a = actual.getAsDouble(i), e = expected.getAsDouble(i);
    if ((std::isnan(a) && std::isnan(e)) || a == e)
      continue;
    if (!(std::fabs(a - e) <=
          tolerance.absolute * scale + tolerance.relative * std::fabs(e)))
      return "element " + std::to_string(i) + " is " + std::to_string(a) +
             ", expected " + std::to_string(e);
  }
  return "";
}

class DataParallelTest : public ::testing::Test, protected RandomData {
protected:
  DataParallelTest() : RandomData(20261122) {
    context.loadDialect<mlir::kiln::KilnDialect, func::FuncDialect>();
  }

  /// @main of `source`, parsed into the test's context.
  func::FuncOp parse(const std::string &source) {
    ParserConfig config(&context);
    parsed = parseSourceString<ModuleOp>(source, config, "test.mlir");
    if (!parsed) {
      ADD_FAILURE() << "the test program does not parse";
      return nullptr;
    }
    return parsed->lookupSymbol<func::FuncOp>("main");
  }

  /// Rewrites a copy of `f`'s module with `config`; returns the copy of
  /// `f` (in `rewritten`), or null after a test failure.
  func::FuncOp partition(func::FuncOp f,
                         const mlir::kiln::DataParallelConfig &config) {
    rewritten = cast<ModuleOp>(f->getParentOp()->clone());
    auto copy = rewritten->lookupSymbol<func::FuncOp>(f.getSymName());
    if (failed(mlir::kiln::partitionDataParallel(copy, config))) {
      ADD_FAILURE() << "kiln-data-parallel failed";
      return nullptr;
    }
    if (failed(verify(*rewritten))) {
      ADD_FAILURE() << "the rewritten module does not verify";
      return nullptr;
    }
    return copy;
  }

  /// Runs `spmd` on `ranks` ranks, each on its shard of `inputs`' batch
  /// arguments, and returns every rank's results (empty after a failure).
  std::vector<Inputs> runSpmd(func::FuncOp spmd, const Inputs &inputs,
                              const mlir::kiln::DataParallelConfig &config) {
    std::vector<Inputs> perRank(config.ranks, inputs);
    for (int64_t index : config.batchArgs)
      for (int64_t r = 0; r < config.ranks; ++r)
        perRank[r][index] = rowsOf(inputs[index], r, config.ranks);
    auto results = ::kiln::evaluateSpmd(spmd, perRank);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  /// Expects every rank of `results` to hold `expected`.
  void expectEveryRank(const std::vector<Inputs> &results,
                       const Inputs &expected, Tolerance tolerance) {
    for (auto [rank, got] : llvm::enumerate(results)) {
      ASSERT_EQ(got.size(), expected.size());
      for (size_t k = 0; k < expected.size(); ++k) {
        std::string problem = mismatch(got[k], expected[k], tolerance);
        EXPECT_EQ(problem, "") << "result #" << k << " on rank " << rank;
      }
    }
  }

  /// The check every test makes: `f` on `inputs` against its rewrite with
  /// `config` on `config.ranks` ranks. Returns the rewritten function for
  /// further checks of its shape (null after a failure).
  func::FuncOp expectSameResults(func::FuncOp f, const Inputs &inputs,
                                 const mlir::kiln::DataParallelConfig &config,
                                 Tolerance tolerance = {}) {
    auto expected = ::kiln::evaluate(f, inputs);
    if (!expected) {
      ADD_FAILURE() << llvm::toString(expected.takeError());
      return nullptr;
    }
    func::FuncOp spmd = partition(f, config);
    if (!spmd)
      return nullptr;
    std::vector<Inputs> results = runSpmd(spmd, inputs, config);
    if (results.empty())
      return nullptr;
    expectEveryRank(results, *expected, tolerance);
    return spmd;
  }

  static mlir::kiln::DataParallelConfig
  ranks(int64_t n, std::vector<int64_t> batch, double bucketMb = 25.0) {
    mlir::kiln::DataParallelConfig config;
    config.ranks = n;
    config.batchArgs.assign(batch.begin(), batch.end());
    config.bucketMb = bucketMb;
    return config;
  }

  /// Keeps a traced function (and its context) alive until the end of the
  /// test, after the rewritten copy, which lives in that context.
  func::FuncOp keep(::kiln::TracedFunction function) {
    traced.push_back(std::move(function));
    return traced.back().function();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> parsed;
  std::vector<::kiln::TracedFunction> traced;
  OwningOpRef<ModuleOp> rewritten;
};

//===----------------------------------------------------------------------===//
// Traced training steps
//===----------------------------------------------------------------------===//

/// An SGD step (loss, updated parameters...) of a ReLU perceptron whose
/// parameters are a[0 .. 2L-1] (w, b per layer), with the batch x = a[2L]
/// and one-hot labels a[2L+1], as examples/training/train_digits.cpp
/// traces it.
::kiln::TracedFunction traceMlpStep(std::vector<int64_t> widths, int64_t batch,
                                    double lr) {
  using namespace ::kiln;
  int layers = static_cast<int>(widths.size()) - 1;
  std::vector<TensorSpec> specs;
  for (int l = 0; l < layers; ++l) {
    specs.push_back({DType::F32, {widths[l], widths[l + 1]}});
    specs.push_back({DType::F32, {widths[l + 1]}});
  }
  specs.push_back({DType::F32, {batch, widths.front()}});
  specs.push_back({DType::F32, {batch, widths.back()}});
  auto loss = [layers](const Tensors &a) {
    Tensor h = a[2 * layers];
    for (int l = 0; l < layers; ++l) {
      h = matmul(h, a[2 * l]) + a[2 * l + 1];
      if (l + 1 < layers)
        h = relu(h);
    }
    return crossEntropy(h, a[2 * layers + 1]);
  };
  std::vector<int> params;
  for (int k = 0; k < 2 * layers; ++k)
    params.push_back(k);
  return trace("train_step", specs, [=](const Tensors &a) {
    Tensors vg = value_and_grad(loss, params)(a);
    Tensors out = {vg[0]};
    for (int k = 0; k < 2 * layers; ++k)
      out.push_back(a[k] - lr * vg[k + 1]);
    return out;
  });
}

TEST_F(DataParallelTest, MlpStepMatchesOnTwoAndFourRanks) {
  func::FuncOp f = keep(traceMlpStep({16, 12, 4}, 8, 0.3));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[5] = randomOneHot(f.getArgumentTypes()[5]);
    func::FuncOp spmd = expectSameResults(f, inputs, ranks(n, {4, 5}));
    ASSERT_TRUE(spmd);
    // Only the gradients and the loss are exchanged, in one bucket: no
    // value is gathered or cut out of a replicated one.
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.dynamic_slice"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce_start"), 1);
    EXPECT_EQ(countOps(spmd, "kiln.collective_wait"), 1);
    EXPECT_EQ(
        spmd.getArgumentTypes()[4],
        RankedTensorType::get({8 / n, 16}, Float32Type::get(f.getContext())));
  }
}

TEST_F(DataParallelTest, MlpStepInSmallBucketsWithAndWithoutOverlap) {
  func::FuncOp f = keep(traceMlpStep({16, 12, 4}, 8, 0.3));
  Inputs inputs = randomInputs(f);
  inputs[5] = randomOneHot(f.getArgumentTypes()[5]);
  for (bool overlap : {true, false}) {
    // 100 bytes: the 4-float and 12-float biases and the loss share
    // buckets, each weight (192 and 48 floats) is a bucket of its own.
    mlir::kiln::DataParallelConfig config = ranks(2, {4, 5}, 1e-4);
    config.overlap = overlap;
    func::FuncOp spmd = expectSameResults(f, inputs, config);
    ASSERT_TRUE(spmd);
    EXPECT_GE(countOps(spmd, "kiln.all_reduce_start"), 3);
    EXPECT_LT(countOps(spmd, "kiln.all_reduce_start"), 5);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 0);
    // Without overlap every wait directly follows its start.
    if (!overlap)
      spmd.walk([](mlir::kiln::AllReduceStartOp start) {
        EXPECT_TRUE(isa<mlir::kiln::CollectiveWaitOp>(start->getNextNode()));
      });
  }
}

TEST_F(DataParallelTest, MlpStepWithTwoHiddenLayers) {
  func::FuncOp f = keep(traceMlpStep({12, 10, 8, 3}, 12, 0.1));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[7] = randomOneHot(f.getArgumentTypes()[7]);
    func::FuncOp spmd = expectSameResults(f, inputs, ranks(n, {6, 7}, 1e-4));
    ASSERT_TRUE(spmd);
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_GE(countOps(spmd, "kiln.all_reduce_start"), 3);
  }
}

/// One self-attention layer over token embeddings, mean-pooled and
/// classified: gather, layer_norm, reshapes that merge and split the batch,
/// batched matmuls and softmax over a non-batch dimension.
TEST_F(DataParallelTest, AttentionStepMatches) {
  using namespace ::kiln;
  const int64_t batch = 8, tokens = 5, vocab = 11, width = 6, classes = 3;
  auto loss = [=](const Tensors &a) {
    // a: table, wq, wk, wv, wo, gamma, beta, ids, onehot
    Tensor e = gather(a[0], a[7]); // [B, T, D]
    Tensor n = layer_norm(e, a[5], a[6]);
    Tensor flat = reshape(n, {batch * tokens, width}); // [B*T, D]
    Tensor q = reshape(matmul(flat, a[1]), {batch, tokens, width});
    Tensor k = reshape(matmul(flat, a[2]), {batch, tokens, width});
    Tensor v = reshape(matmul(flat, a[3]), {batch, tokens, width});
    Tensor scores = matmul(q, transpose(k, {0, 2, 1})) * (1.0 / std::sqrt(6.0));
    Tensor attended = matmul(softmax(scores, -1), v); // [B, T, D]
    Tensor pooled = mean(attended, 1);                // [B, D]
    return crossEntropy(matmul(pooled, a[4]), a[8]);
  };
  func::FuncOp f =
      keep(trace("train_step",
                 {{DType::F32, {vocab, width}},
                  {DType::F32, {width, width}},
                  {DType::F32, {width, width}},
                  {DType::F32, {width, width}},
                  {DType::F32, {width, classes}},
                  {DType::F32, {width}},
                  {DType::F32, {width}},
                  {DType::I32, {batch, tokens}},
                  {DType::F32, {batch, classes}}},
                 [&](const Tensors &a) {
                   Tensors vg = value_and_grad(loss, {0, 1, 2, 3, 4, 5, 6})(a);
                   Tensors out = {vg[0]};
                   for (int p = 0; p < 7; ++p)
                     out.push_back(a[p] - 0.05 * vg[p + 1]);
                   return out;
                 }));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[7] = random(f.getArgumentTypes()[7], vocab);
    inputs[8] = randomOneHot(f.getArgumentTypes()[8]);
    func::FuncOp spmd = expectSameResults(f, inputs, ranks(n, {7, 8}));
    ASSERT_TRUE(spmd);
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 0);
  }
}

/// A loop over a batch-dependent value cannot see the state (no
/// propagation into regions): its operands are gathered, and the function
/// still returns the original's results.
TEST_F(DataParallelTest, WhileLoopTakesItsOperandsWhole) {
  using namespace ::kiln;
  func::FuncOp f = keep(trace(
      "main", {{DType::F32, {8, 3}}, {DType::F32, {3}}}, [](const Tensors &a) {
        Tensor y = a[0] * broadcast_to(a[1], {8, 3});
        Tensors r = while_loop(
            [](const Tensors &v) { return v[1] < 3; },
            [](const Tensors &v) {
              return Tensors{v[0] * 0.5 + sum(v[0], 0, true) * 0.25, v[1] + 1};
            },
            {y, constant(int64_t(0))});
        return Tensors{r[0], sum(r[0] * r[0])};
      }));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    func::FuncOp spmd = expectSameResults(f, inputs, ranks(n, {0}));
    ASSERT_TRUE(spmd);
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 1);
    EXPECT_EQ(countOps(spmd, "kiln.while"), 1);
  }
}

//===----------------------------------------------------------------------===//
// A convolutional net, differentiated by kiln-grad
//===----------------------------------------------------------------------===//

/// conv 3x3 (2 -> 4 channels, padding 1) + relu + 2x2 max pooling +
/// flatten + dense + cross-entropy, on an NCHW batch of 8 4x4 images; its
/// value and gradient from buildValueAndGradient.
constexpr const char *kConvNet = R"mlir(
func.func @main(%w: tensor<4x2x3x3xf32>, %d: tensor<16x3xf32>,
                %x: tensor<8x2x4x4xf32>, %onehot: tensor<8x3xf32>) -> tensor<f32> {
  %c = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1],
      padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1],
      groups = 1 : tensor<8x2x4x4xf32>, tensor<4x2x3x3xf32>
  %r = kiln.relu %c : tensor<8x4x4x4xf32>
  %p = kiln.reduce_window %r, kind = max, window = [1, 1, 2, 2],
      strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0],
      padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<8x4x4x4xf32>
  %f = kiln.reshape %p : (tensor<8x4x2x2xf32>) -> tensor<8x16xf32>
  %z = kiln.matmul %f, %d : tensor<8x16xf32>, tensor<16x3xf32>
  %m = kiln.reduce_max %z, dims = [1] : tensor<8x3xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %s = kiln.sub %z, %mb : tensor<8x3xf32>
  %e = kiln.exp %s : tensor<8x3xf32>
  %se = kiln.reduce_sum %e, dims = [1] : tensor<8x3xf32>
  %l = kiln.log %se : tensor<8xf32>
  %lb = kiln.broadcast_in_dim %l, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %ls = kiln.sub %s, %lb : tensor<8x3xf32>
  %t = kiln.mul %onehot, %ls : tensor<8x3xf32>
  %ts = kiln.reduce_sum %t, dims = [1] : tensor<8x3xf32>
  %mean = kiln.reduce_mean %ts, dims = [0] : tensor<8xf32>
  %loss = kiln.neg %mean : tensor<f32>
  return %loss : tensor<f32>
}
)mlir";

TEST_F(DataParallelTest, ConvNetValueAndGradientMatches) {
  func::FuncOp loss = parse(kConvNet);
  ASSERT_TRUE(loss);
  FailureOr<func::FuncOp> vg =
      mlir::kiln::buildValueAndGradient(loss, {0, 1}, "main_vg");
  ASSERT_TRUE(succeeded(vg));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(*vg);
    inputs[3] = randomOneHot(vg->getArgumentTypes()[3]);
    func::FuncOp spmd = expectSameResults(*vg, inputs, ranks(n, {2, 3}));
    ASSERT_TRUE(spmd);
    // The weight gradient of the convolution contracts the batch as its
    // channels: a partial sum, reduced with the dense layer's.
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce_start"), 1);
  }
}

//===----------------------------------------------------------------------===//
// The op rules one by one
//===----------------------------------------------------------------------===//

/// One result per rule: each is checked against the original. The ops
/// without a rule for their case (a slice or reverse of the batch, a running
/// sum along it) gather their operand; an iota along the batch is made at
/// the local shape from the rank's first row, and a replicated operand that
/// is not a splat (a constant column) is cut out of the whole value with
/// kiln.dynamic_slice.
constexpr const char *kOpTour = R"mlir(
func.func @main(%x: tensor<8x6xf32>, %ids: tensor<8xi32>, %w: tensor<6x4xf32>,
                %table: tensor<5x3xf32>, %k: tensor<i64>)
    -> (tensor<8x10xf32>, tensor<8x2xf32>, tensor<3x6xf32>, tensor<8x6xf32>,
        tensor<8x6xf32>, tensor<8x6xf32>, tensor<8xi64>, tensor<6xf32>,
        tensor<6xf32>, tensor<8x3xf32>, tensor<6x4xf32>, tensor<i32>,
        tensor<8x6xf32>, tensor<2x4x6xf32>, tensor<48xf32>, tensor<6x8xf32>,
        tensor<8x6xf32>, tensor<8x2xf32>, tensor<8x6xf32>, tensor<f32>,
        tensor<8x6xf32>, tensor<8x6xi64>) {
  // concat along a non-batch dimension, with a splat constant
  %c1 = kiln.constant dense<2.0> : tensor<8x4xf32>
  %cat = kiln.concat %x, %c1 dim = 1 : tensor<8x6xf32>, tensor<8x4xf32>
  // a slice of columns (kept sharded) and of rows (gathered)
  %cols = kiln.slice %x, start = [0, 1], limit = [8, 5], stride = [1, 2] : tensor<8x6xf32>
  %rows = kiln.slice %x, start = [1, 0], limit = [7, 6], stride = [2, 1] : tensor<8x6xf32>
  // reverse along columns (sharded) and rows (gathered)
  %rc = kiln.reverse %x, dims = [1] : tensor<8x6xf32>
  %rr = kiln.reverse %x, dims = [0] : tensor<8x6xf32>
  // a running sum along the batch (gathered); argmax along columns
  %cs = kiln.cumsum %x, dim = 0 : tensor<8x6xf32>
  %am = kiln.argmax %x, dim = 1 : tensor<8x6xf32>
  // reductions over the batch: max (all_reduce max), mean (partial sum)
  %mx = kiln.reduce_max %x, dims = [0] : tensor<8x6xf32>
  %mn = kiln.reduce_mean %x, dims = [0] : tensor<8x6xf32>
  // an embedding lookup with sharded indices
  %emb = kiln.gather %table, %ids : tensor<5x3xf32>, tensor<8xi32>
  // X^T X W: a partial sum through a matmul by a replicated weight
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<8x6xf32>
  %gram = kiln.matmul %xt, %x : tensor<6x8xf32>, tensor<8x6xf32>
  %gw = kiln.matmul %gram, %w : tensor<6x6xf32>, tensor<6x4xf32>
  // an integer sum over the batch (wraps, so any order is exact)
  %isum = kiln.reduce_sum %ids, dims = [0] : tensor<8xi32>
  // an iota along the batch added to x
  %io = kiln.iota dim = 0 : tensor<8x6xf32>
  %xi = kiln.add %x, %io : tensor<8x6xf32>
  // reshapes that split and merge the batch
  %split = kiln.reshape %x : (tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %merged = kiln.reshape %x : (tensor<8x6xf32>) -> tensor<48xf32>
  // a transpose that moves the batch to dimension 1
  %moved = kiln.transpose %x, permutation = [1, 0] : tensor<8x6xf32>
  // padded columns; rows of the transpose at a run-time index
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %padded = kiln.pad %x, %zero, low = [0, 1], high = [0, 0], interior = [0, 1] : tensor<8x6xf32>, tensor<f32>
  %ps = kiln.slice %padded, start = [0, 0], limit = [8, 12], stride = [1, 2] : tensor<8x12xf32>
  %ds = kiln.dynamic_slice %moved[%k], size = 2 : tensor<6x8xf32>
  %dst = kiln.transpose %ds, permutation = [1, 0] : tensor<2x8xf32>
  // a constant column broadcast over x
  %col = kiln.constant dense<[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]]> : tensor<8x1xf32>
  %colb = kiln.broadcast_in_dim %col, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x6xf32>
  %xc = kiln.mul %x, %colb : tensor<8x6xf32>
  // a select between a partial sum and zero
  %total = kiln.reduce_sum %x, dims = [0, 1] : tensor<8x6xf32>
  %zi = kiln.constant dense<0> : tensor<i64>
  %pos = kiln.compare gt, %k, %zi : tensor<i64>
  %sel = kiln.select %pos, %total, %zero : tensor<i1>, tensor<f32>
  // a sort of each row (kept sharded)
  %sv, %si = kiln.sort %x, dim = 1 descending : tensor<8x6xf32>
  return %cat, %cols, %rows, %rc, %rr, %cs, %am, %mx, %mn, %emb, %gw, %isum,
         %xi, %split, %merged, %moved, %ps, %dst, %xc, %sel, %sv, %si
      : tensor<8x10xf32>, tensor<8x2xf32>, tensor<3x6xf32>, tensor<8x6xf32>,
        tensor<8x6xf32>, tensor<8x6xf32>, tensor<8xi64>, tensor<6xf32>,
        tensor<6xf32>, tensor<8x3xf32>, tensor<6x4xf32>, tensor<i32>,
        tensor<8x6xf32>, tensor<2x4x6xf32>, tensor<48xf32>, tensor<6x8xf32>,
        tensor<8x6xf32>, tensor<8x2xf32>, tensor<8x6xf32>, tensor<f32>,
        tensor<8x6xf32>, tensor<8x6xi64>
}
)mlir";

TEST_F(DataParallelTest, OpTourMatches) {
  func::FuncOp f = parse(kOpTour);
  ASSERT_TRUE(f);
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[1] = random(f.getArgumentTypes()[1], 5);
    inputs[4] =
        HostTensor::fromInts(IntegerType::get(&context, 64), {}, {int64_t(3)});
    func::FuncOp spmd = expectSameResults(f, inputs, ranks(n, {0, 1}));
    ASSERT_TRUE(spmd);
    // The op's own dynamic_slice and the constant column cut locally.
    EXPECT_EQ(countOps(spmd, "kiln.dynamic_slice"), 2);
    // reduce_max over the batch.
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 1);
    // The rows are sorted where they are: the sort reads x's local rows.
    spmd.walk([&](mlir::kiln::SortOp sort) {
      EXPECT_EQ(sort.getOperand().getType().getDimSize(0), 8 / n);
    });
    EXPECT_EQ(countOps(spmd, "kiln.sort"), 1);
  }
}

/// The step with Adam (kiln/Optim.h) instead of plain SGD: the optimizer's
/// state (step count, moment estimates) is replicated like the parameters,
/// and its elementwise update runs on the reduced gradients. Five steps,
/// the state fed back, on 2 and 4 ranks.
TEST_F(DataParallelTest, AdamStepsMatch) {
  using namespace ::kiln;
  const int64_t batch = 8;
  std::vector<TensorSpec> params = {{DType::F32, {16, 12}},
                                    {DType::F32, {12}},
                                    {DType::F32, {12, 4}},
                                    {DType::F32, {4}}};
  optim::Adam adam(0.01);
  std::vector<TensorSpec> specs = params;
  specs.push_back({DType::F32, {batch, 16}});
  specs.push_back({DType::F32, {batch, 4}});
  std::vector<TensorSpec> stateSpecs = adam.stateSpecs(params);
  llvm::append_range(specs, stateSpecs);
  auto loss = [](const Tensors &a) {
    Tensor h = relu(matmul(a[4], a[0]) + a[1]);
    return crossEntropy(matmul(h, a[2]) + a[3], a[5]);
  };
  func::FuncOp f = keep(trace("train_step", specs, [&](const Tensors &a) {
    Tensors vg = value_and_grad(loss, {0, 1, 2, 3})(a);
    optim::Update u =
        adam.step({a.begin(), a.begin() + 4}, {vg.begin() + 1, vg.end()},
                  {a.begin() + 6, a.end()});
    Tensors out = {vg[0]};
    llvm::append_range(out, u.params);
    llvm::append_range(out, u.state);
    return out;
  }));
  Inputs initial = randomInputs(f);
  for (size_t k = 6; k < initial.size(); ++k) // a fresh state: zeros
    initial[k] = HostTensor(
        cast<RankedTensorType>(f.getArgumentTypes()[k]).getElementType(),
        initial[k].shape);
  for (int64_t n : {2, 4}) {
    mlir::kiln::DataParallelConfig config = ranks(n, {4, 5});
    func::FuncOp spmd = partition(f, config);
    ASSERT_TRUE(spmd);
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce_start"), 1);
    Inputs single = initial, parallel = initial;
    for (int step = 0; step < 5; ++step) {
      single[4] = parallel[4] = random(f.getArgumentTypes()[4]);
      single[5] = parallel[5] = randomOneHot(f.getArgumentTypes()[5]);
      auto expected = ::kiln::evaluate(f, single);
      ASSERT_TRUE(static_cast<bool>(expected))
          << llvm::toString(expected.takeError());
      std::vector<Inputs> got = runSpmd(spmd, parallel, config);
      ASSERT_EQ(got.size(), static_cast<size_t>(n));
      expectEveryRank(got, *expected, {1e-4, 1e-5});
      // Parameters and state go into the next step.
      for (size_t k = 1; k < expected->size(); ++k) {
        single[k < 5 ? k - 1 : k + 1] = (*expected)[k];
        parallel[k < 5 ? k - 1 : k + 1] = got[0][k];
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Random programs
//===----------------------------------------------------------------------===//

/// A program of `steps` ops drawn by `rng` from the kinds the pass has rules
/// for (and some it has not), over a batch x, y [8, 6] and replicated
/// w [6, 6], v [6]: the values it computes are batch matrices [8, 6],
/// vectors [6] and matrices [6, 6]; it returns the last of each and the
/// sum of the three. tanh after the products keeps the values small. With
/// `differentiate`, the traced function is instead the value and gradient
/// of that sum with respect to w and v, as a training step computes it.
::kiln::TracedFunction traceRandomProgram(std::mt19937 &rng, int steps,
                                          bool differentiate) {
  using namespace ::kiln;
  std::vector<uint32_t> draws(steps * 4);
  for (uint32_t &d : draws)
    d = rng();
  std::vector<TensorSpec> specs = {{DType::F32, {8, 6}},
                                   {DType::F32, {8, 6}},
                                   {DType::F32, {6, 6}},
                                   {DType::F32, {6}}};
  auto program = [draws, steps](const Tensors &a) {
    std::vector<Tensor> batch = {a[0], a[1]}, vectors = {a[3]},
                        matrices = {a[2]};
    size_t next = 0;
    auto draw = [&](size_t n) { return draws[next++ % draws.size()] % n; };
    auto pick = [&](std::vector<Tensor> &pool) -> Tensor & {
      return pool[draw(pool.size())];
    };
    for (int step = 0; step < steps; ++step) {
      Tensor b = pick(batch), c = pick(batch);
      switch (draw(18)) {
      case 0:
        batch.push_back(tanh(b) * c - b);
        break;
      case 1:
        batch.push_back(b + broadcast_to(pick(vectors), {8, 6}));
        break;
      case 2:
        batch.push_back(tanh(matmul(b, pick(matrices))));
        break;
      case 3:
        vectors.push_back(sum(b, 0));
        break;
      case 4:
        vectors.push_back(mean(b, 0) - max(c, 0));
        break;
      case 5:
        batch.push_back(b * sum(c, 1, true));
        break;
      case 6:
        matrices.push_back(tanh(matmul(transpose(b), c)));
        break;
      case 7:
        batch.push_back(softmax(b, -1) + log_softmax(c, -1));
        break;
      case 8:
        batch.push_back(cumsum(b, 1) + cumsum(c, 0));
        break;
      case 9:
        batch.push_back(slice(concat({b, c}, 1), {0, 3}, {8, 9}));
        break;
      case 10:
        batch.push_back(reshape(relu(reshape(b, {2, 24})), {8, 6}));
        break;
      case 11:
        vectors.push_back(sum(slice(b, {2, 0}, {6, 6}), 0));
        break;
      case 12:
        batch.push_back(where(b > c, b, c * 0.5));
        break;
      case 13: {
        Tensor best = cast(argmax(b, 1), DType::F32);
        batch.push_back(c * reshape(best, {8, 1}));
        break;
      }
      case 14: {
        Tensors r = while_loop(
            [](const Tensors &v) { return v[1] < 2; },
            [](const Tensors &v) {
              return Tensors{tanh(v[0] + sum(v[0], 0, true)), v[1] + 1};
            },
            {b, constant(int64_t(0))});
        batch.push_back(r[0]);
        break;
      }
      case 15: {
        // [8, 8] plus its transpose: a piece along the other dimension.
        Tensor square = tanh(matmul(b, transpose(c)));
        batch.push_back(tanh(matmul(square + transpose(square), b)));
        break;
      }
      case 16: {
        // Rows of a matrix picked by sharded indices, and columns of
        // a sharded matrix picked by constant ones.
        Tensor rows = gather(pick(matrices), cast(argmax(b, 1), DType::I32));
        Tensor cols =
            gather(transpose(c), constant(std::vector<int32_t>{5, 0, 3}, {3}));
        batch.push_back(rows + transpose(concat({cols, cols}, 0)));
        break;
      }
      default:
        vectors.push_back(
            tanh(pick(vectors) * matmul(pick(vectors), pick(matrices))));
        break;
      }
    }
    Tensor total =
        sum(batch.back()) + sum(vectors.back()) + sum(matrices.back());
    return Tensors{batch.back(), vectors.back(), matrices.back(), total};
  };
  if (!differentiate)
    return trace("main", specs, program);
  return trace("main", specs, [program](const Tensors &a) {
    auto total = [program](const Tensors &b) { return program(b)[3]; };
    return value_and_grad(total, {2, 3})(a);
  });
}

TEST_F(DataParallelTest, RandomProgramsMatch) {
  std::map<std::string, int> seen;
  for (int program = 0; program < 60; ++program) {
    func::FuncOp f = keep(traceRandomProgram(rng, 12, false));
    for (int64_t n : {2, 4}) {
      Inputs inputs = randomInputs(f);
      SCOPED_TRACE("program " + std::to_string(program) + " on " +
                   std::to_string(n) + " ranks");
      func::FuncOp spmd =
          expectSameResults(f, inputs, ranks(n, {0, 1}, 1e-5), {1e-5, 1e-5});
      ASSERT_TRUE(spmd);
      spmd.walk(
          [&](Operation *op) { ++seen[op->getName().getStringRef().str()]; });
    }
  }
  // The programs exercise every conversion between states.
  for (const char *name :
       {"kiln.all_gather", "kiln.all_reduce", "kiln.all_reduce_start",
        "kiln.all_to_all", "kiln.reduce_scatter", "kiln.dynamic_slice",
        "kiln.gather", "kiln.while"})
    EXPECT_GT(seen[name], 0) << name;
}

/// The gradients of random programs: their backward passes (the VJPs of
/// every op above, the while loop's stacks included) on the ranks.
TEST_F(DataParallelTest, RandomGradientsMatch) {
  std::map<std::string, int> seen;
  for (int program = 0; program < 30; ++program) {
    func::FuncOp f = keep(traceRandomProgram(rng, 8, true));
    for (int64_t n : {2, 4}) {
      Inputs inputs = randomInputs(f);
      SCOPED_TRACE("program " + std::to_string(program) + " on " +
                   std::to_string(n) + " ranks");
      func::FuncOp spmd =
          expectSameResults(f, inputs, ranks(n, {0, 1}), {1e-5, 1e-5});
      ASSERT_TRUE(spmd);
      spmd.walk(
          [&](Operation *op) { ++seen[op->getName().getStringRef().str()]; });
    }
  }
  for (const char *name : {"kiln.all_reduce_start", "kiln.stack_push"})
    EXPECT_GT(seen[name], 0) << name;
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

/// 100 SGD steps of an MLP on clusters of 8x8 "images" (10 noisy class
/// prototypes, pixels in [0, 1]), batch 16: single-process against 2 and 4
/// ranks, each step's parameters fed back. The parameters must agree to
/// 1e-5 relative after the last step, and the loss must have come down.
TEST_F(DataParallelTest, HundredSgdStepsMatchSingleProcess) {
  const int64_t batch = 16, pixels = 64, hidden = 16, classes = 10;
  func::FuncOp f = keep(traceMlpStep({pixels, hidden, classes}, batch, 0.3));
  Type f32 = Float32Type::get(f.getContext());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, 0.15);
  std::vector<double> prototypes(classes * pixels);
  for (double &p : prototypes)
    p = unit(rng) < 0.4 ? 1.0 : 0.0;
  auto sampleBatch = [&](Inputs &inputs) {
    std::vector<double> x(batch * pixels), y(batch * classes, 0.0);
    for (int64_t r = 0; r < batch; ++r) {
      int64_t label = rng() % classes;
      y[r * classes + label] = 1.0;
      for (int64_t c = 0; c < pixels; ++c)
        x[r * pixels + c] =
            std::clamp(prototypes[label * pixels + c] + noise(rng), 0.0, 1.0);
    }
    inputs[4] = HostTensor::fromFloats(f32, {batch, pixels}, x);
    inputs[5] = HostTensor::fromFloats(f32, {batch, classes}, y);
  };
  Inputs initial = randomInputs(f);
  for (int k = 0; k < 4; ++k) // PyTorch's scale: +-1/sqrt(fan_in)
    for (double &w : initial[k].f)
      w = static_cast<float>(w / std::sqrt(k < 2 ? pixels : hidden));

  for (int64_t n : {2, 4}) {
    mlir::kiln::DataParallelConfig config = ranks(n, {4, 5});
    func::FuncOp spmd = partition(f, config);
    ASSERT_TRUE(spmd);
    Inputs single = initial, parallel = initial;
    double firstLoss = 0, lastLoss = 0;
    for (int step = 0; step < 100; ++step) {
      sampleBatch(single);
      parallel[4] = single[4];
      parallel[5] = single[5];
      auto expected = ::kiln::evaluate(f, single);
      ASSERT_TRUE(static_cast<bool>(expected))
          << llvm::toString(expected.takeError());
      std::vector<Inputs> got = runSpmd(spmd, parallel, config);
      ASSERT_EQ(got.size(), static_cast<size_t>(n));
      for (const Inputs &rank : got)
        for (size_t k = 1; k < rank.size(); ++k)
          ASSERT_EQ(mismatch(rank[k], got[0][k], {0, 0}), "")
              << "the ranks disagree on parameter " << k - 1;
      if (step == 0)
        firstLoss = (*expected)[0].getAsDouble(0);
      lastLoss = (*expected)[0].getAsDouble(0);
      for (int k = 0; k < 4; ++k) {
        single[k] = (*expected)[k + 1];
        parallel[k] = got[0][k + 1];
      }
    }
    for (int k = 0; k < 4; ++k)
      EXPECT_LE(relativeDifference(parallel[k], single[k]), 1e-5)
          << "parameter " << k << " after 100 steps on " << n << " ranks";
    EXPECT_LT(lastLoss, 0.5 * firstLoss);
  }
}

//===----------------------------------------------------------------------===//
// The comparison itself
//===----------------------------------------------------------------------===//

/// The check must notice a rewrite that forgets to sum the gradients: with
/// every all_reduce_start/collective_wait pair removed, each rank's update
/// uses its own partial gradient, and the comparison reports it.
TEST_F(DataParallelTest, ComparisonRejectsUnreducedGradients) {
  func::FuncOp f = keep(traceMlpStep({16, 12, 4}, 8, 0.3));
  Inputs inputs = randomInputs(f);
  inputs[5] = randomOneHot(f.getArgumentTypes()[5]);
  mlir::kiln::DataParallelConfig config = ranks(2, {4, 5});
  auto expected = ::kiln::evaluate(f, inputs);
  ASSERT_TRUE(static_cast<bool>(expected));
  func::FuncOp spmd = partition(f, config);
  ASSERT_TRUE(spmd);
  SmallVector<mlir::kiln::CollectiveWaitOp> waits;
  spmd.walk([&](mlir::kiln::CollectiveWaitOp w) { waits.push_back(w); });
  ASSERT_FALSE(waits.empty());
  for (mlir::kiln::CollectiveWaitOp wait : waits) {
    Operation *start = wait.getPending().getDefiningOp();
    wait.getResult().replaceAllUsesWith(wait.getSource());
    wait.erase();
    start->erase();
  }
  std::vector<Inputs> results = runSpmd(spmd, inputs, config);
  ASSERT_EQ(results.size(), 2u);
  int wrong = 0;
  for (const Inputs &got : results)
    for (size_t k = 0; k < expected->size(); ++k)
      wrong += !mismatch(got[k], (*expected)[k], Tolerance{}).empty();
  EXPECT_EQ(wrong, 2 * static_cast<int>(expected->size()));
}

} // namespace
