//===- ZeroTest.cpp - kiln-zero against single-device training ------------===//
//
// Every test trains a small ReLU perceptron for several steps twice: the
// traced single-device step (kiln::evaluate) on the whole batch, and its
// kiln-data-parallel + kiln-zero rewrite (kiln::evaluateSpmd) on 2 and 4
// simulated ranks, each on its rows of the batch, with the optimizer state
// (and, for ZeRO-3, the parameters) held as blocks: the test cuts the
// initial state into each rank's block itself, every rank feeds its own
// result blocks into its next step, and the blocks are gathered back only
// to be compared. The shapes are chosen so that 4 ranks need padding.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Zero.h"
#include "ParallelTestSupport.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/Optim.h"
#include "kiln/Passes/DataParallel.h"
#include "kiln/kiln.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <random>
#include <string>

using namespace mlir;
using ::kiln::HostTensor;
using namespace ::kiln::parallel_test;

namespace {

using Inputs = std::vector<HostTensor>;

/// Block `rank` of `t`: its elements flattened, padded with zeros to a
/// multiple of `ranks`, the rank's ceil(numel / ranks) of them.
HostTensor blockOf(const HostTensor &t, int64_t rank, int64_t ranks) {
  int64_t size = (t.numElements() + ranks - 1) / ranks;
  HostTensor block(t.elementType, {size});
  for (int64_t k = 0; k < size; ++k) {
    int64_t j = rank * size + k;
    block.f[k] = j < t.numElements() ? t.f[j] : 0.0;
  }
  return block;
}

/// The whole tensor of `shape` whose blocks the ranks hold in `results`
/// (result #`index` of each).
HostTensor gatherBlocks(const std::vector<Inputs> &results, size_t index,
                        const HostTensor &like) {
  HostTensor whole(like.elementType, like.shape);
  int64_t j = 0;
  for (const Inputs &rank : results)
    for (double v : rank[index].f)
      if (j < whole.numElements())
        whole.f[j++] = v;
  return whole;
}

/// Bytes of the tensor values of `f`'s body live at once, at the worst
/// point, when each value lives from its definition to its last reader (or
/// to the end if returned) and the arguments live throughout: the model of
/// lifetimes by which the backends plan memory (PlanMemory.cpp gives
/// buffers whose lifetimes do not overlap the same bytes). A reshape is a
/// view of its operand: it takes no bytes and keeps the operand alive.
int64_t peakLiveBytes(func::FuncOp f) {
  Block &body = f.front();
  auto bytes = [](Value v) -> int64_t {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return 0;
    return type.getNumElements() *
           ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  };
  auto root = [](Value v) {
    while (auto reshape = v.getDefiningOp<mlir::kiln::ReshapeOp>())
      v = reshape.getOperand();
    return v;
  };
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);
  int64_t end = static_cast<int64_t>(position.size());
  // Definition and last use of every buffer (the roots of the views).
  llvm::MapVector<Value, std::pair<int64_t, int64_t>> lifetime;
  for (BlockArgument arg : body.getArguments())
    lifetime[arg] = {0, end};
  for (Operation &op : body)
    for (Value result : op.getResults()) {
      int64_t at = position[&op];
      auto &span = lifetime.try_emplace(root(result), at, at).first->second;
      for (Operation *user : result.getUsers())
        span.second = std::max(
            span.second, position.lookup(body.findAncestorOpInBlock(*user)));
      if (llvm::is_contained(body.getTerminator()->getOperands(), result))
        span.second = end;
    }
  std::vector<int64_t> delta(end + 2, 0);
  for (auto &[value, span] : lifetime) {
    delta[span.first] += bytes(value);
    delta[span.second + 1] -= bytes(value);
  }
  int64_t current = 0, peak = 0;
  for (int64_t d : delta)
    peak = std::max(peak, current += d);
  return peak;
}

constexpr int64_t kBatch = 8, kIn = 6, kHidden = 5, kClasses = 3;
constexpr int kParams = 4;

/// The step of a 6-5-3 perceptron with `optimizer`: arguments w1, b1, w2,
/// b2, x, onehot, state...; results loss, new w1, b1, w2, b2, new state...
/// (kiln/Optim.h's layout: the step count, then the slots). With `clip`,
/// the gradients are first scaled to a global norm of at most 1, so that
/// each is also read whole (by the norm), not only by the update.
::kiln::TracedFunction traceStep(const ::kiln::optim::Optimizer &optimizer,
                                 bool clip = false) {
  using namespace ::kiln;
  std::vector<TensorSpec> params = {{DType::F32, {kIn, kHidden}},
                                    {DType::F32, {kHidden}},
                                    {DType::F32, {kHidden, kClasses}},
                                    {DType::F32, {kClasses}}};
  std::vector<TensorSpec> specs = params;
  specs.push_back({DType::F32, {kBatch, kIn}});
  specs.push_back({DType::F32, {kBatch, kClasses}});
  llvm::append_range(specs, optimizer.stateSpecs(params));
  auto loss = [](const Tensors &a) {
    Tensor h = relu(matmul(a[4], a[0]) + a[1]);
    return crossEntropy(matmul(h, a[2]) + a[3], a[5]);
  };
  return trace("train_step", specs, [&](const Tensors &a) {
    Tensors vg = value_and_grad(loss, {0, 1, 2, 3})(a);
    Tensors grads(vg.begin() + 1, vg.end());
    if (clip) {
      Tensor squares = sum(grads[0] * grads[0]);
      for (int k = 1; k < kParams; ++k)
        squares = squares + sum(grads[k] * grads[k]);
      Tensor scale = minimum(1.0, 1.0 / (sqrt(squares) + 1e-6));
      for (Tensor &g : grads)
        g = g * scale;
    }
    optim::Update u = optimizer.step({a.begin(), a.begin() + kParams}, grads,
                                     {a.begin() + 6, a.end()});
    Tensors out = {vg[0]};
    llvm::append_range(out, u.params);
    llvm::append_range(out, u.state);
    return out;
  });
}

class ZeroTest : public ::testing::Test {
protected:
  /// A random tensor of `type`: floats uniform in [-1, 1], integers in
  /// [0, intBound) (token ids; the step count is set to zero after).
  HostTensor random(Type type) {
    auto tensor = cast<RankedTensorType>(type);
    if (!isa<FloatType>(tensor.getElementType())) {
      std::uniform_int_distribution<int64_t> dist(0, intBound - 1);
      std::vector<int64_t> values(tensor.getNumElements());
      for (int64_t &v : values)
        v = dist(rng);
      return HostTensor::fromInts(tensor.getElementType(),
                                  std::vector<int64_t>(tensor.getShape()),
                                  values);
    }
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> values(tensor.getNumElements());
    for (double &v : values)
      v = dist(rng);
    return HostTensor::fromFloats(tensor.getElementType(),
                                  std::vector<int64_t>(tensor.getShape()),
                                  values);
  }

  HostTensor randomOneHot(Type type) {
    auto matrix = cast<RankedTensorType>(type);
    int64_t rows = matrix.getDimSize(0), classes = matrix.getDimSize(1);
    std::vector<double> values(rows * classes, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      values[r * classes + rng() % classes] = 1.0;
    return HostTensor::fromFloats(matrix.getElementType(), {rows, classes},
                                  values);
  }

  /// `f`'s module copied, rewritten by kiln-data-parallel on `ranks` ranks
  /// and kiln-zero with `config`; the copy of `f`, or null after a failure.
  func::FuncOp rewrite(func::FuncOp f, int64_t ranks,
                       const mlir::kiln::ZeroConfig &config, int n = kParams) {
    rewritten = cast<ModuleOp>(f->getParentOp()->clone());
    auto copy = rewritten->lookupSymbol<func::FuncOp>(f.getSymName());
    mlir::kiln::DataParallelConfig dp;
    dp.ranks = ranks;
    dp.batchArgs = {n, n + 1};
    if (failed(mlir::kiln::partitionDataParallel(copy, dp))) {
      ADD_FAILURE() << "kiln-data-parallel failed";
      return nullptr;
    }
    if (failed(mlir::kiln::shardOptimizerUpdate(copy, config))) {
      ADD_FAILURE() << "kiln-zero failed";
      return nullptr;
    }
    if (failed(verify(*rewritten))) {
      ADD_FAILURE() << "the rewritten module does not verify";
      return nullptr;
    }
    return copy;
  }

  /// The arguments and results `stage` shards for a step of `n`
  /// parameters with `slots` state slots per parameter.
  static mlir::kiln::ZeroConfig zero(int64_t stage, int slots,
                                     int n = kParams) {
    mlir::kiln::ZeroConfig config;
    config.stage = stage;
    for (int k = 0; k < slots * n; ++k) {
      config.shardedArgs.push_back(n + 3 + k);
      config.shardedResults.push_back(n + 2 + k);
    }
    if (stage == 3)
      for (int k = 0; k < n; ++k) {
        config.shardedArgs.push_back(k);
        config.shardedResults.push_back(1 + k);
      }
    return config;
  }

  /// One comparison: the stage, the ranks, the steps, the buckets.
  struct Run {
    int64_t stage;
    int64_t ranks;
    int steps;
    double bucketMb = 25.0;
    bool overlap = true;
    /// Swap rank 0's and rank 1's blocks of the first slot before the
    /// second step: the comparison must then fail.
    bool corrupt = false;
  };

  /// `train` on the 6-5-3 step with `optimizer`, with the checks of its
  /// shape (checkShape).
  double train(const ::kiln::optim::Optimizer &optimizer, Run run) {
    traced.push_back(
        std::make_unique<::kiln::TracedFunction>(traceStep(optimizer)));
    int slots = static_cast<int>(optimizer.slotNames().size());
    return train(traced.back()->function(), kParams, slots, run,
                 /*checkShapes=*/true);
  }

  /// Trains `run.steps` steps of `f` (a step of `n` parameters, laid out as
  /// traceStep's) single-device and with ZeRO on `run.ranks` ranks from the
  /// same initial parameters and a fresh state, on the same batches, and
  /// expects the parameters and the state to agree within 1e-5 relative
  /// after every step. Returns the largest difference seen.
  double train(func::FuncOp f, int n, int slots, Run run,
               bool checkShapes = false) {
    const int64_t ranks = run.ranks, x = n, onehot = n + 1;
    mlir::kiln::ZeroConfig config = zero(run.stage, slots, n);
    config.bucketMb = run.bucketMb;
    config.overlap = run.overlap;
    func::FuncOp spmd = rewrite(f, ranks, config, n);
    if (!spmd)
      return INFINITY;
    if (checkShapes)
      checkShape(spmd, run.stage, ranks);

    Inputs single;
    for (Type type : f.getArgumentTypes())
      single.push_back(random(type));
    for (size_t k = n + 2; k < single.size(); ++k) // a fresh state: zeros
      single[k] = HostTensor(
          cast<RankedTensorType>(f.getArgumentTypes()[k]).getElementType(),
          single[k].shape);
    for (int k = 0; k < n; ++k) // PyTorch's scale: +-1/sqrt(fan_in)
      for (double &w : single[k].f)
        w = static_cast<float>(w / std::sqrt(single[k].shape[0]));
    llvm::SmallDenseSet<int64_t> shardedArgs(config.shardedArgs.begin(),
                                             config.shardedArgs.end());
    llvm::SmallDenseSet<int64_t> shardedResults(config.shardedResults.begin(),
                                                config.shardedResults.end());
    std::vector<Inputs> perRank(ranks, single);
    for (int64_t r = 0; r < ranks; ++r)
      for (int64_t k : shardedArgs)
        perRank[r][k] = blockOf(single[k], r, ranks);

    double worst = 0;
    for (int step = 0; step < run.steps; ++step) {
      single[x] = random(f.getArgumentTypes()[x]);
      single[onehot] = randomOneHot(f.getArgumentTypes()[onehot]);
      for (int64_t r = 0; r < ranks; ++r)
        for (int64_t k : {x, onehot})
          perRank[r][k] = rowsOf(single[k], r, ranks);
      if (run.corrupt && step == 1)
        std::swap(perRank[0][n + 3], perRank[1][n + 3]);
      auto expected = ::kiln::evaluate(f, single);
      if (!expected) {
        ADD_FAILURE() << llvm::toString(expected.takeError());
        return INFINITY;
      }
      auto got = ::kiln::evaluateSpmd(spmd, perRank);
      if (!got) {
        ADD_FAILURE() << llvm::toString(got.takeError());
        return INFINITY;
      }
      // Result k feeds argument k - 1 (parameters) or k + 1 (state).
      for (size_t k = 1; k < expected->size(); ++k) {
        size_t arg = static_cast<int>(k) <= n ? k - 1 : k + 1;
        HostTensor whole = shardedResults.contains(k)
                               ? gatherBlocks(*got, k, (*expected)[k])
                               : (*got)[0][k];
        if (!shardedResults.contains(k)) {
          for (const Inputs &rank : *got)
            EXPECT_EQ(relativeDifference(rank[k], whole), 0.0)
                << "the ranks disagree on result #" << k;
        }
        double difference = relativeDifference(whole, (*expected)[k]);
        worst = std::max(worst, difference);
        if (!run.corrupt) {
          EXPECT_LE(difference, 1e-5)
              << "result #" << k << " after step " << step << " of ZeRO-"
              << run.stage << " on " << ranks << " ranks";
        }
        single[arg] = (*expected)[k];
        for (int64_t r = 0; r < ranks; ++r)
          perRank[r][arg] = (*got)[r][k];
      }
    }
    return worst;
  }

  /// What each stage must have made of the step.
  void checkShape(func::FuncOp spmd, int64_t stage, int64_t ranks) {
    Type f32 = Float32Type::get(spmd.getContext());
    // The first slot of w1 (6x5: 30 elements) is a block.
    EXPECT_EQ(spmd.getArgumentTypes()[7],
              RankedTensorType::get({(30 + ranks - 1) / ranks}, f32));
    EXPECT_EQ(spmd.getResultTypes()[6],
              RankedTensorType::get({(30 + ranks - 1) / ranks}, f32));
    int scatters = countOps(spmd, "kiln.reduce_scatter_start");
    int gathers = countOps(spmd, "kiln.all_gather_start");
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.reduce_scatter"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    if (stage == 1) {
      EXPECT_EQ(scatters, 0);
      EXPECT_EQ(gathers, kParams); // the new parameters
    } else {
      // One bucket of the four gradients; the loss alone is all-reduced.
      EXPECT_EQ(scatters, 1);
      spmd.walk([](mlir::kiln::AllReduceStartOp start) {
        EXPECT_EQ(start.getOperand().getType().getNumElements(), 1);
      });
    }
    if (stage == 2) {
      EXPECT_EQ(gathers, kParams);
    }
    if (stage == 3) {
      // Each parameter is gathered for its read in the forward pass, and w2
      // again for the backward pass (dh = dlogits w2^T); the gradients of
      // w1, b1 and b2 do not read their parameters.
      EXPECT_EQ(gathers, 5);
      EXPECT_EQ(spmd.getArgumentTypes()[0],
                RankedTensorType::get({(30 + ranks - 1) / ranks}, f32));
      EXPECT_EQ(spmd.getResultTypes()[1],
                RankedTensorType::get({(30 + ranks - 1) / ranks}, f32));
      // Only parameters are gathered: no new parameter is returned whole.
      spmd.walk([](mlir::kiln::AllGatherStartOp start) {
        EXPECT_TRUE(isa<BlockArgument>(start.getOperand()));
      });
    }
  }

  /// The traced steps (each with its context) outlive the rewritten copy,
  /// which lives in the last one's context.
  std::vector<std::unique_ptr<::kiln::TracedFunction>> traced;
  OwningOpRef<ModuleOp> rewritten;
  std::mt19937 rng{20261122};
  int64_t intBound = 1;
};

TEST_F(ZeroTest, SgdMomentumAllStages) {
  ::kiln::optim::Sgd sgd(0.1, /*momentum=*/0.9);
  for (int64_t stage : {1, 2, 3})
    for (int64_t ranks : {2, 4})
      train(sgd, {stage, ranks, 20});
}

TEST_F(ZeroTest, AdamAllStages) {
  ::kiln::optim::Adam adam(0.01);
  for (int64_t stage : {1, 2, 3})
    for (int64_t ranks : {2, 4})
      train(adam, {stage, ranks, 12});
}

/// AdamW with AMSGrad: three slots, weight decay on the parameters.
TEST_F(ZeroTest, AdamWAmsgradStageThree) {
  ::kiln::optim::Adam adamw = ::kiln::optim::Adam::adamW(
      0.01, 0.9, 0.999, 1e-8, 0.01, /*amsgrad=*/true);
  train(adamw, {3, 4, 6});
}

/// The step of a ReLU perceptron of `widths` with `optimizer`: arguments
/// the parameters (w, b per layer), x, onehot, then the state; results the
/// loss, the new parameters, the new state.
::kiln::TracedFunction
traceDeepStep(std::vector<int64_t> widths, int64_t batch,
              const ::kiln::optim::Optimizer &optimizer) {
  using namespace ::kiln;
  int layers = static_cast<int>(widths.size()) - 1;
  std::vector<TensorSpec> params;
  for (int l = 0; l < layers; ++l) {
    params.push_back({DType::F32, {widths[l], widths[l + 1]}});
    params.push_back({DType::F32, {widths[l + 1]}});
  }
  std::vector<TensorSpec> specs = params;
  specs.push_back({DType::F32, {batch, widths.front()}});
  specs.push_back({DType::F32, {batch, widths.back()}});
  llvm::append_range(specs, optimizer.stateSpecs(params));
  int n = 2 * layers;
  auto loss = [layers, n](const Tensors &a) {
    Tensor h = a[n];
    for (int l = 0; l < layers; ++l) {
      h = matmul(h, a[2 * l]) + a[2 * l + 1];
      if (l + 1 < layers)
        h = relu(h);
    }
    return crossEntropy(h, a[n + 1]);
  };
  std::vector<int> wrt;
  for (int k = 0; k < n; ++k)
    wrt.push_back(k);
  return trace("train_step", specs, [&](const Tensors &a) {
    Tensors vg = value_and_grad(loss, wrt)(a);
    optim::Update u =
        optimizer.step({a.begin(), a.begin() + n}, {vg.begin() + 1, vg.end()},
                       {a.begin() + n + 2, a.end()});
    Tensors out = {vg[0]};
    llvm::append_range(out, u.params);
    llvm::append_range(out, u.state);
    return out;
  });
}

/// What each stage keeps per rank, measured on the rewritten IR of a
/// four-layer perceptron (64-wide, 13,130 parameters) with Adam on 4
/// ranks: the bytes of parameters and optimizer state at rest (arguments)
/// and the peak of live tensor bytes over the step. Each stage must hold
/// less than the one before, the state at rest a quarter of DDP's (up to
/// padding), and with ZeRO-3 every gathered parameter has exactly one
/// reader, so no whole parameter outlives the op that needs it.
TEST_F(ZeroTest, EachStageHoldsLess) {
  ::kiln::optim::Adam adam(0.01);
  std::vector<int64_t> widths = {64, 64, 64, 64, 10};
  const int64_t ranks = 4, batch = 16;
  int layers = static_cast<int>(widths.size()) - 1, n = 2 * layers;
  traced.push_back(std::make_unique<::kiln::TracedFunction>(
      traceDeepStep(widths, batch, adam)));
  func::FuncOp f = traced.back()->function();
  int64_t stateArgs = 2 * n, firstSlot = n + 3;
  auto bytesOf = [](func::FuncOp g, int64_t from, int64_t count) {
    int64_t total = 0;
    for (int64_t k = from; k < from + count; ++k) {
      auto type = cast<RankedTensorType>(g.getArgumentTypes()[k]);
      total += type.getNumElements() * 4;
    }
    return total;
  };
  std::vector<int64_t> peaks, params, states;
  // Stage 4 stands for ZeRO-3 with buckets of 16 KiB (one 64x64 gradient):
  // each partial gradient is then exchanged, and freed, as soon as it is
  // complete, instead of all of them waiting for the last.
  for (int64_t stage = 0; stage <= 4; ++stage) {
    rewritten = cast<ModuleOp>(f->getParentOp()->clone());
    auto copy = rewritten->lookupSymbol<func::FuncOp>(f.getSymName());
    mlir::kiln::DataParallelConfig dp;
    dp.ranks = ranks;
    dp.batchArgs = {n, n + 1};
    ASSERT_TRUE(succeeded(mlir::kiln::partitionDataParallel(copy, dp)));
    if (stage > 0) {
      mlir::kiln::ZeroConfig config;
      config.stage = std::min<int64_t>(stage, 3);
      if (stage == 4)
        config.bucketMb = 16.0 / 1024;
      for (int64_t k = 0; k < stateArgs; ++k) {
        config.shardedArgs.push_back(firstSlot + k);
        config.shardedResults.push_back(n + 2 + k);
      }
      if (stage >= 3)
        for (int64_t k = 0; k < n; ++k) {
          config.shardedArgs.push_back(k);
          config.shardedResults.push_back(1 + k);
        }
      ASSERT_TRUE(succeeded(mlir::kiln::shardOptimizerUpdate(copy, config)));
      ASSERT_TRUE(succeeded(verify(*rewritten)));
    }
    peaks.push_back(peakLiveBytes(copy));
    params.push_back(bytesOf(copy, 0, n));
    states.push_back(bytesOf(copy, firstSlot, stateArgs));
    std::cout << (stage == 0   ? std::string("DDP")
                  : stage == 4 ? std::string("ZeRO-3, 16 KiB buckets")
                               : "ZeRO-" + std::to_string(stage))
              << ": parameters " << params.back() << " B, state "
              << states.back() << " B at rest; peak of live tensors "
              << peaks.back() << " B\n";
    if (stage >= 3)
      copy.walk([](mlir::kiln::CollectiveWaitOp wait) {
        if (!isa<mlir::kiln::AllGatherStartOp>(
                wait.getPending().getDefiningOp()))
          return;
        Value whole = wait.getResult();
        while (whole.hasOneUse() &&
               isa<mlir::kiln::SliceOp, mlir::kiln::ReshapeOp>(
                   *whole.getUsers().begin()))
          whole = whole.getUsers().begin()->getResult(0);
        EXPECT_TRUE(whole.hasOneUse());
      });
  }
  for (int64_t stage = 1; stage <= 4; ++stage) {
    EXPECT_LT(peaks[stage], peaks[stage - 1]) << "ZeRO-" << stage;
    EXPECT_LE(states[stage], states[0] / ranks + stateArgs * 4);
  }
  EXPECT_EQ(params[1], params[0]);
  EXPECT_LE(params[3], params[0] / ranks + n * 4);
}

/// Stages 2 and 3 with a bucket per gradient (several reduce-scatters,
/// several all-gathers in flight) and without overlap, and a four-layer
/// perceptron at stage 3, whose hidden weights are gathered again for the
/// backward pass.
TEST_F(ZeroTest, SmallBucketsNoOverlapAndDeeperNets) {
  ::kiln::optim::Adam adam(0.01);
  for (int64_t stage : {2, 3}) {
    Run small{stage, 4, 8};
    small.bucketMb = 1e-5;
    traced.push_back(std::make_unique<::kiln::TracedFunction>(traceStep(adam)));
    train(traced.back()->function(), kParams, 2, small);
    // One reduce-scatter per gradient, each its own bucket: Adam reads g
    // scaled and squared, and g alone is exchanged.
    EXPECT_EQ(countOps(*rewritten, "kiln.reduce_scatter_start"), kParams);
    Run serial{stage, 2, 8};
    serial.overlap = false;
    train(traced.back()->function(), kParams, 2, serial);
  }
  ::kiln::optim::Sgd sgd(0.1, 0.9, 0, 1e-3, /*nesterov=*/true);
  traced.push_back(std::make_unique<::kiln::TracedFunction>(
      traceDeepStep({8, 6, 6, 6, 3}, 8, sgd)));
  for (int64_t ranks : {2, 4}) {
    train(traced.back()->function(), 8, 1, {3, ranks, 10});
    // w1 once (forward); w2, w3, w4 twice (forward and backward); the
    // biases once each.
    EXPECT_EQ(countOps(*rewritten, "kiln.all_gather_start"), 1 + 3 * 2 + 4);
  }
}

/// Gradients clipped to a global norm: the norm reads the summed gradients
/// whole, so they stay all-reduced (with the loss: 1 + 53 floats), and the
/// clipped gradients, g times the replicated scale, are computed from those
/// sums: nothing else is exchanged, at any stage.
TEST_F(ZeroTest, ClippedGradientsStayWholeForTheNorm) {
  ::kiln::optim::Sgd sgd(0.1, 0.9);
  traced.push_back(
      std::make_unique<::kiln::TracedFunction>(traceStep(sgd, /*clip=*/true)));
  for (int64_t stage : {1, 2, 3}) {
    train(traced.back()->function(), kParams, 1, {stage, 4, 10});
    EXPECT_EQ(countOps(*rewritten, "kiln.reduce_scatter_start"), 0);
    EXPECT_EQ(countOps(*rewritten, "kiln.all_reduce_start"), 1);
    int whole = 0;
    rewritten->walk([&](mlir::kiln::AllReduceStartOp start) {
      whole += start.getOperand().getType().getNumElements() == 1 + 53;
    });
    EXPECT_EQ(whole, 1) << "ZeRO-" << stage;
  }
}

/// One self-attention layer over token embeddings with Adam at stage 3:
/// the embedding table is gathered for kiln.gather, the layer norm's
/// scale and shift for their broadcasts, the four projections for their
/// matmuls and again for the backward pass.
TEST_F(ZeroTest, AttentionStepStageThree) {
  using namespace ::kiln;
  const int64_t batch = 8, tokens = 5, vocab = 11, width = 6, classes = 3;
  auto loss = [=](const Tensors &a) {
    // a: table, wq, wk, wv, wo, gamma, beta, ids, onehot
    Tensor e = gather(a[0], a[7]); // [B, T, D]
    Tensor n = layer_norm(e, a[5], a[6]);
    Tensor flat = reshape(n, {batch * tokens, width});
    Tensor q = reshape(matmul(flat, a[1]), {batch, tokens, width});
    Tensor k = reshape(matmul(flat, a[2]), {batch, tokens, width});
    Tensor v = reshape(matmul(flat, a[3]), {batch, tokens, width});
    Tensor scores = matmul(q, transpose(k, {0, 2, 1})) * (1.0 / std::sqrt(6.0));
    Tensor pooled = mean(matmul(softmax(scores, -1), v), 1);
    return crossEntropy(matmul(pooled, a[4]), a[8]);
  };
  std::vector<TensorSpec> params = {
      {DType::F32, {vocab, width}},   {DType::F32, {width, width}},
      {DType::F32, {width, width}},   {DType::F32, {width, width}},
      {DType::F32, {width, classes}}, {DType::F32, {width}},
      {DType::F32, {width}}};
  optim::Adam adam(0.01);
  std::vector<TensorSpec> specs = params;
  specs.push_back({DType::I32, {batch, tokens}});
  specs.push_back({DType::F32, {batch, classes}});
  llvm::append_range(specs, adam.stateSpecs(params));
  traced.push_back(std::make_unique<TracedFunction>(
      trace("train_step", specs, [&](const Tensors &a) {
        Tensors vg = value_and_grad(loss, {0, 1, 2, 3, 4, 5, 6})(a);
        optim::Update u =
            adam.step({a.begin(), a.begin() + 7}, {vg.begin() + 1, vg.end()},
                      {a.begin() + 9, a.end()});
        Tensors out = {vg[0]};
        llvm::append_range(out, u.params);
        llvm::append_range(out, u.state);
        return out;
      })));
  intBound = vocab;
  for (int64_t ranks : {2, 4}) {
    train(traced.back()->function(), 7, 2, {3, ranks, 6});
    // Forward: the seven parameters; backward: the four projections
    // (dx = dy w^T). The layer norm's scale is read by one broadcast,
    // whose result the backward pass reads, so it is gathered once.
    EXPECT_EQ(countOps(*rewritten, "kiln.all_gather_start"), 7 + 4);
    EXPECT_EQ(countOps(*rewritten, "kiln.reduce_scatter_start"), 1);
  }
}

/// The comparison notices ranks holding each other's blocks of the state.
TEST_F(ZeroTest, ComparisonRejectsMisplacedBlocks) {
  ::kiln::optim::Adam adam(0.01);
  Run run{2, 2, 3};
  run.corrupt = true;
  EXPECT_GT(train(adam, run), 1e-3);
}

} // namespace
