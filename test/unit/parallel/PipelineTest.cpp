//===- PipelineTest.cpp - kiln-pipeline against gradient accumulation -----===//
//
// Every test derives the pipelined step of a loss written as a chain of
// stage calls and runs it on P simulated ranks (kiln::evaluateSpmd), each
// rank on its packed row of the stages' parameters and the whole data of M
// micro-batches. The reference is the loss's value and gradient
// (buildValueAndGradient) evaluated on each micro-batch in one process and
// averaged: every rank must return that mean loss, and rank s its stage's
// gradients, within 1e-5 of the largest magnitude, for GPipe and 1F1B, with
// and without recomputation, and for data-parallel replicas of the
// pipeline; 20 steps of SGD on the pipeline must track 20 steps on one
// device, for a 4-stage MLP and for two GPT-2 blocks traced from Python
// (Inputs/gpt2_two_blocks.mlir) in every pipeline, data- and
// tensor-parallel layout. The schedules are checked for their bubble and
// for the micro-batches a stage holds.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Pipeline.h"
#include "kiln/Passes/Partition.h"
#include "ParallelTestSupport.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace mlir;
using ::kiln::HostTensor;
using namespace ::kiln::parallel_test;
using mlir::kiln::PipelineScheduleKind;

namespace {

using Inputs = std::vector<HostTensor>;

/// The last stage of both test programs: a linear layer and the squared
/// error against y.
constexpr const char *kHead = R"mlir(
func.func private @head(%w: tensor<8x5xf32>, %x: tensor<2x8xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %z = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x5xf32>
  %d = kiln.sub %z, %y : tensor<2x5xf32>
  %s = kiln.mul %d, %d : tensor<2x5xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x5xf32>
  return %l : tensor<f32>
}
)mlir";

/// A 4-stage MLP: tanh layers of widths 6 -> 8 -> 8 -> 5, then a squared
/// error against y (kHead), on micro-batches of 2 rows. Stages 1 and 2 call
/// one function, each with a weight and a bias of its own.
constexpr const char *kFourStages = R"mlir(
func.func private @dense(%w: tensor<6x8xf32>, %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}
func.func private @biased(%w: tensor<8x8xf32>, %b: tensor<8xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x8xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s = kiln.add %h, %bb : tensor<2x8xf32>
  %a = kiln.tanh %s : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}
func.func @loss(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                %w2: tensor<8x8xf32>, %b2: tensor<8xf32>, %w3: tensor<8x5xf32>,
                %x: tensor<2x6xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %h0 = func.call @dense(%w0, %x) : (tensor<6x8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %h1 = func.call @biased(%w1, %b1, %h0) : (tensor<8x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h2 = func.call @biased(%w2, %b2, %h1) : (tensor<8x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %l = func.call @head(%w3, %h2, %y) : (tensor<8x5xf32>, tensor<2x8xf32>, tensor<2x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

/// The same network in two stages (the first three layers in one); both
/// programs end with kHead.
constexpr const char *kTwoStages = R"mlir(
func.func private @body(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                        %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w0 : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  %h1 = kiln.matmul %a, %w1 : tensor<2x8xf32>, tensor<8x8xf32>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s = kiln.add %h1, %bb : tensor<2x8xf32>
  %a1 = kiln.tanh %s : tensor<2x8xf32>
  return %a1 : tensor<2x8xf32>
}
func.func @loss(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                %w3: tensor<8x5xf32>, %x: tensor<2x6xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %h = func.call @body(%w0, %w1, %b1, %x) : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %l = func.call @head(%w3, %h, %y) : (tensor<8x5xf32>, tensor<2x8xf32>, tensor<2x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

/// The four-layer network of kFourStages written out as one block, for
/// kiln-pipeline to cut (stages=P); a constant (the mean's scale in the
/// loss, shared by the tanh layers' clamps) is read on both sides of cuts.
constexpr const char *kFlat = R"mlir(
func.func @flat(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                %w2: tensor<8x8xf32>, %b2: tensor<8xf32>, %w3: tensor<8x5xf32>,
                %x: tensor<2x6xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %half = kiln.constant dense<0.5> : tensor<2x8xf32>
  %h = kiln.matmul %x, %w0 : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  %h1 = kiln.matmul %a, %w1 : tensor<2x8xf32>, tensor<8x8xf32>
  %bb1 = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s1 = kiln.add %h1, %bb1 : tensor<2x8xf32>
  %a1 = kiln.tanh %s1 : tensor<2x8xf32>
  %c1 = kiln.mul %a1, %half : tensor<2x8xf32>
  %h2 = kiln.matmul %c1, %w2 : tensor<2x8xf32>, tensor<8x8xf32>
  %bb2 = kiln.broadcast_in_dim %b2, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s2 = kiln.add %h2, %bb2 : tensor<2x8xf32>
  %a2 = kiln.tanh %s2 : tensor<2x8xf32>
  %c2 = kiln.mul %a2, %half : tensor<2x8xf32>
  %z = kiln.matmul %c2, %w3 : tensor<2x8xf32>, tensor<8x5xf32>
  %d = kiln.sub %z, %y : tensor<2x5xf32>
  %q = kiln.mul %d, %d : tensor<2x5xf32>
  %l = kiln.reduce_mean %q, dims = [0, 1] : tensor<2x5xf32>
  return %l : tensor<f32>
}
)mlir";

class PipelineTest : public ::testing::Test {
protected:
  PipelineTest() {
    context.loadDialect<mlir::kiln::KilnDialect, func::FuncDialect>();
  }

  /// @loss of `source`, with the shared @head appended.
  func::FuncOp parse(const char *source) {
    std::string text = std::string(source) + kHead;
    module = parseSourceString<ModuleOp>(text, ParserConfig(&context));
    if (!module) {
      ADD_FAILURE() << "the test program does not parse";
      return nullptr;
    }
    return module->lookupSymbol<func::FuncOp>("loss");
  }

  /// The stages' parameters: the loss's arguments before the data, and
  /// which stage reads each (from the chain of calls).
  struct Layout {
    int64_t stages = 0;
    std::vector<int64_t> stageOf; // per parameter argument
    int64_t width = 0;            // the packed row's K
    int64_t tp = 1;
    /// Per parameter: the dimension split over tp, or -1.
    std::vector<int64_t> splitDim;
  };

  Layout layoutOf(func::FuncOp loss, int64_t numParams, int64_t tp = 1) {
    Layout layout;
    layout.tp = tp;
    layout.stageOf.assign(numParams, -1);
    layout.splitDim.assign(numParams, -1);
    for (int64_t k = 0; k < numParams; ++k)
      if (auto sharding = loss.getArgAttrOfType<ArrayAttr>(k, "kiln.sharding"))
        for (auto [dim, axis] : llvm::enumerate(sharding))
          if (cast<StringAttr>(axis).getValue() == "tp")
            layout.splitDim[k] = dim;
    std::vector<int64_t> sizes;
    for (Operation &op : loss.front().without_terminator()) {
      auto call = cast<func::CallOp>(op);
      int64_t size = 0;
      for (Value operand : call.getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand);
            arg && arg.getArgNumber() < numParams &&
            layout.stageOf[arg.getArgNumber()] < 0) {
          layout.stageOf[arg.getArgNumber()] = layout.stages;
          size += cast<RankedTensorType>(arg.getType()).getNumElements() /
                  (layout.splitDim[arg.getArgNumber()] >= 0 ? tp : 1);
        }
      sizes.push_back(size);
      ++layout.stages;
    }
    for (int64_t size : sizes)
      layout.width = std::max(layout.width, size);
    return layout;
  }

  /// Row s of the packed parameters: stage s's parameters, flattened, in
  /// argument order (the order the test programs' calls read them); of
  /// those split over tp, block t.
  HostTensor packRow(const Inputs &params, const Layout &layout, int64_t s,
                     int64_t t = 0) {
    std::vector<double> row(layout.width, 0.0);
    size_t at = 0;
    for (size_t k = 0; k < params.size(); ++k)
      if (layout.stageOf[k] == s) {
        HostTensor local =
            layout.splitDim[k] < 0
                ? params[k]
                : blockOf(params[k], layout.splitDim[k], t, layout.tp);
        for (double v : local.f)
          row[at++] = v;
      }
    return HostTensor::fromFloats(Float32Type::get(&context),
                                  {1, layout.width}, row);
  }

  /// The mean loss over the micro-batches and the mean gradient of each
  /// parameter, evaluated in one process.
  std::pair<double, Inputs> reference(func::FuncOp valueAndGrad,
                                      const Inputs &params, const Inputs &data,
                                      int64_t M) {
    double loss = 0;
    Inputs grads;
    for (int64_t m = 0; m < M; ++m) {
      Inputs args = params;
      for (const HostTensor &d : data)
        args.push_back(blockOf(d, 0, m, M));
      auto out = ::kiln::evaluate(valueAndGrad, args);
      if (!out) {
        ADD_FAILURE() << llvm::toString(out.takeError());
        return {};
      }
      loss += (*out)[0].f[0] / M;
      for (size_t k = 0; k < params.size(); ++k) {
        if (m == 0)
          grads.push_back(HostTensor(params[k].elementType, params[k].shape));
        for (size_t i = 0; i < grads[k].f.size(); ++i)
          grads[k].f[i] += (*out)[1 + k].f[i] / M;
      }
    }
    return {loss, grads};
  }

  /// kiln-pipeline's options for `loss`, its arguments from `numParams` on
  /// the data.
  static mlir::kiln::PipelineConfig
  configFor(func::FuncOp loss, int64_t numParams, int64_t M,
            PipelineScheduleKind kind, const std::string &name,
            int64_t replicas, bool recompute, int64_t tp) {
    mlir::kiln::PipelineConfig config;
    config.microbatches = M;
    config.replicas = replicas;
    config.recompute = recompute;
    config.tensorParallel = tp;
    for (unsigned a = numParams; a < loss.getNumArguments(); ++a)
      config.batchArgs.push_back(a);
    config.schedule = kind;
    config.name = name;
    return config;
  }

  /// Megatron's scatter-gather at the stage boundaries of `step`: every
  /// permute sends a piece of `piece` floats, and `gathers` all-gathers
  /// join T pieces within a stage's T ranks.
  static void expectBoundaryPieces(func::FuncOp step, const std::string &name,
                                   int64_t piece, int64_t T, int gathers) {
    step.walk([&](mlir::kiln::CollectivePermuteOp op) {
      EXPECT_EQ(cast<RankedTensorType>(op.getType()).getNumElements(), piece)
          << name;
    });
    EXPECT_EQ(countOps(step, "kiln.all_gather"), gathers) << name;
    step.walk([&](mlir::kiln::AllGatherOp op) {
      EXPECT_EQ(op.getGroupSize(), uint64_t(T)) << name;
      EXPECT_EQ(cast<RankedTensorType>(op.getType()).getNumElements(),
                piece * T)
          << name;
    });
  }

  /// Derives the pipeline of `loss` and checks one step on random inputs
  /// against the reference; returns the derived step (null on failure).
  func::FuncOp expectPipelineMatches(func::FuncOp loss, int64_t numParams,
                                     int64_t M, PipelineScheduleKind kind,
                                     const std::string &name,
                                     int64_t replicas = 1,
                                     bool recompute = true, int64_t tp = 1) {
    FailureOr<func::FuncOp> step = mlir::kiln::buildPipeline(
        loss, configFor(loss, numParams, M, kind, name, replicas, recompute,
                        tp));
    if (failed(step) || failed(verify(*module))) {
      ADD_FAILURE() << "kiln-pipeline failed or its result does not verify";
      return nullptr;
    }
    auto valueAndGrad = mlir::kiln::buildValueAndGradient(
        loss, {}, (name + "_reference").c_str());
    if (failed(valueAndGrad)) {
      ADD_FAILURE() << "the reference gradient could not be derived";
      return nullptr;
    }
    Layout layout = layoutOf(loss, numParams, tp);
    Inputs params, data;
    for (unsigned a = 0; a < loss.getNumArguments(); ++a) {
      auto type = cast<RankedTensorType>(loss.getArgumentTypes()[a]);
      if (a < numParams) {
        params.push_back(randomTensor(type, rng));
        continue;
      }
      // Every replica's M micro-batches, one after the other.
      SmallVector<int64_t> shape(type.getShape());
      shape[0] *= M * replicas;
      data.push_back(randomTensor(type.clone(shape), rng));
    }
    auto [wantLoss, wantGrads] =
        reference(*valueAndGrad, params, data, M * replicas);
    // Rank r: block r % tp of stage (r / tp) % P of replica r / (P tp).
    int64_t P = layout.stages, ranks = P * replicas * tp;
    auto stageOf = [&](int64_t r) { return r / tp % P; };
    std::vector<Inputs> perRank;
    for (int64_t r = 0; r < ranks; ++r) {
      Inputs args = {packRow(params, layout, stageOf(r), r % tp)};
      for (const HostTensor &d : data)
        args.push_back(blockOf(d, 0, r / (P * tp), replicas));
      perRank.push_back(args);
    }
    auto results = ::kiln::evaluateSpmd(*step, perRank);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return nullptr;
    }
    for (int64_t r = 0; r < ranks; ++r) {
      const Inputs &got = (*results)[r];
      EXPECT_NEAR(got[0].f[0], wantLoss, 1e-5 * std::max(1.0, wantLoss))
          << "loss on rank " << r;
      HostTensor want = packRow(wantGrads, layout, stageOf(r), r % tp);
      EXPECT_LE(relativeDifference(got[1], want), 1e-5)
          << "gradients on rank " << r;
    }
    return *step;
  }

  /// Trains the pipeline of `loss` (its chain of stage calls, the first
  /// `numParams` arguments the parameters) for 20 SGD steps on simulated
  /// ranks beside the same steps in one process on the micro-batches' mean
  /// gradient, on new random data every step: the loss of every step on
  /// every rank, and every rank's block of its stage's parameters after the
  /// last step, must agree within 1e-5. The parameters start uniform in
  /// [-1, 1], or at `initial(argument, that draw)`.
  void expectTrainingTracksOneDevice(func::FuncOp loss, int64_t numParams,
                                     const std::string &name, int64_t M,
                                     PipelineScheduleKind kind, bool recompute,
                                     int64_t replicas, int64_t tp, double lr,
                                     llvm::function_ref<double(int64_t, double)>
                                         initial = nullptr) {
    FailureOr<func::FuncOp> step = mlir::kiln::buildPipeline(
        loss, configFor(loss, numParams, M, kind, name, replicas, recompute,
                        tp));
    ASSERT_TRUE(succeeded(step) && succeeded(verify(*module)))
        << "kiln-pipeline failed or its result does not verify";
    auto valueAndGrad = mlir::kiln::buildValueAndGradient(
        loss, {}, (name + "_reference").c_str());
    ASSERT_TRUE(succeeded(valueAndGrad));
    Layout layout = layoutOf(loss, numParams, tp);
    // Rank r: block r % tp of stage (r / tp) % P of replica r / (P tp).
    int64_t P = layout.stages, ranks = P * replicas * tp;
    auto stageOf = [&](int64_t r) { return r / tp % P; };
    Inputs params;
    for (int64_t a = 0; a < numParams; ++a) {
      params.push_back(randomTensor(loss.getArgumentTypes()[a], rng));
      if (initial)
        for (double &v : params.back().f)
          v = initial(a, v);
    }
    std::vector<HostTensor> rows;
    for (int64_t r = 0; r < ranks; ++r)
      rows.push_back(packRow(params, layout, stageOf(r), r % tp));
    const std::vector<HostTensor> initialRows = rows;
    for (int k = 0; k < 20; ++k) {
      Inputs data;
      for (unsigned a = numParams; a < loss.getNumArguments(); ++a) {
        auto type = cast<RankedTensorType>(loss.getArgumentTypes()[a]);
        SmallVector<int64_t> shape(type.getShape());
        shape[0] *= M * replicas;
        data.push_back(randomTensor(type.clone(shape), rng));
      }
      auto [wantLoss, wantGrads] =
          reference(*valueAndGrad, params, data, M * replicas);
      std::vector<Inputs> perRank;
      for (int64_t r = 0; r < ranks; ++r) {
        Inputs args = {rows[r]};
        for (const HostTensor &d : data)
          args.push_back(blockOf(d, 0, r / (P * tp), replicas));
        perRank.push_back(args);
      }
      auto results = ::kiln::evaluateSpmd(*step, perRank);
      ASSERT_TRUE(static_cast<bool>(results))
          << llvm::toString(results.takeError());
      for (int64_t r = 0; r < ranks; ++r)
        EXPECT_NEAR((*results)[r][0].f[0], wantLoss,
                    1e-5 * std::max(1.0, wantLoss))
            << name << ", step " << k << ", rank " << r;
      // SGD: one process on its whole parameters, each rank on its row.
      for (size_t p = 0; p < params.size(); ++p)
        for (size_t i = 0; i < params[p].f.size(); ++i)
          params[p].f[i] -= lr * wantGrads[p].f[i];
      for (int64_t r = 0; r < ranks; ++r)
        for (size_t i = 0; i < rows[r].f.size(); ++i)
          rows[r].f[i] -= lr * (*results)[r][1].f[i];
    }
    for (int64_t r = 0; r < ranks; ++r) {
      EXPECT_LE(relativeDifference(
                    rows[r], packRow(params, layout, stageOf(r), r % tp)),
                1e-5)
          << name << ", rank " << r << "'s parameters after 20 steps";
      // Training moved them, far beyond the tolerance.
      EXPECT_GE(relativeDifference(rows[r], initialRows[r]), 1e-2)
          << name << ", rank " << r;
    }
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::mt19937 rng{20261123};
};

TEST_F(PipelineTest, FourStagesMatchGradientAccumulation) {
  func::FuncOp loss = parse(kFourStages);
  ASSERT_TRUE(loss);
  int n = 0;
  for (bool recompute : {true, false})
    for (int64_t M : {1, 3, 4})
      for (auto kind : {PipelineScheduleKind::GPipe,
                        PipelineScheduleKind::OneFOneB}) {
        func::FuncOp step = expectPipelineMatches(
            loss, 6, M, kind, "step" + std::to_string(n++), 1, recompute);
        ASSERT_TRUE(step);
        // Activations go one stage on and gradients one stage back, once a
        // tick each at most; the loss is summed over all ranks.
        EXPECT_GT(countOps(step, "kiln.collective_permute"), 0);
        EXPECT_EQ(countOps(step, "kiln.all_reduce"), 1);
        // A backward action adds its stage's gradients to the packed row
        // once (a concat of the parameters' pieces), never by padding each
        // parameter's to the whole row (activations are all 2 x 8 here, so
        // nothing is padded at all).
        EXPECT_EQ(countOps(step, "kiln.pad"), 0);
      }
}

TEST_F(PipelineTest, WithoutRecomputationNoForwardWorkIsRepeated) {
  func::FuncOp loss = parse(kFourStages);
  ASSERT_TRUE(loss);
  const int64_t M = 3;
  for (bool recompute : {true, false}) {
    std::string name = recompute ? "recomputing" : "keeping";
    func::FuncOp step = expectPipelineMatches(
        loss, 6, M, PipelineScheduleKind::OneFOneB, name, 1, recompute);
    ASSERT_TRUE(step);
    // Every stage runs tanh once per micro-batch in its forward pass; with
    // recomputation its backward pass (the VJP) runs it once more.
    int tanh = 0;
    for (auto f : module->getOps<func::FuncOp>())
      if (f.getSymName().starts_with(name + "_stage"))
        tanh += countOps(f, "kiln.tanh");
    int calls = 0;
    step.walk([&](func::CallOp call) {
      auto callee = module->lookupSymbol<func::FuncOp>(call.getCallee());
      calls += countOps(callee, "kiln.tanh");
    });
    // Calls of the stages' own functions (forward passes with
    // recomputation) count their tanh too: 3 tanh layers, M micro-batches.
    if (recompute) {
      EXPECT_EQ(calls, 2 * 3 * M) << "forward and recomputed forward";
      EXPECT_EQ(tanh, 3) << "one VJP per tanh stage";
    } else {
      EXPECT_EQ(calls, 3 * M) << "each tanh layer once per micro-batch";
      EXPECT_EQ(tanh, 3) << "only in the forward halves";
    }
  }
}

TEST_F(PipelineTest, TwoStagesMatchGradientAccumulation) {
  func::FuncOp loss = parse(kTwoStages);
  ASSERT_TRUE(loss);
  int n = 0;
  for (bool recompute : {true, false})
    for (int64_t M : {2, 5})
      for (auto kind : {PipelineScheduleKind::GPipe,
                        PipelineScheduleKind::OneFOneB})
        ASSERT_TRUE(expectPipelineMatches(
            loss, 4, M, kind, "step" + std::to_string(n++), 1, recompute));
}

TEST_F(PipelineTest, DataParallelReplicasOfThePipeline) {
  func::FuncOp loss = parse(kTwoStages);
  ASSERT_TRUE(loss);
  // dp x pp = 2 x 2 and 3 x 2: rank r runs stage r % 2 of replica r / 2.
  int n = 0;
  for (int64_t D : {2, 3})
    for (auto kind : {PipelineScheduleKind::GPipe,
                      PipelineScheduleKind::OneFOneB}) {
      func::FuncOp step = expectPipelineMatches(
          loss, 4, 3, kind, "replicated" + std::to_string(n++), D,
          /*recompute=*/D == 2);
      ASSERT_TRUE(step);
      // The loss over every rank, the gradients over each stage's ranks.
      EXPECT_EQ(countOps(step, "kiln.all_reduce"), 2);
    }
}

TEST_F(PipelineTest, TensorParallelStages) {
  // kTwoStages split Megatron's way: the first layer column-parallel (w0
  // along its columns), the second row-parallel (w1 along its rows), the
  // head's weight along its rows.
  func::FuncOp loss = parse(kTwoStages);
  ASSERT_TRUE(loss);
  mlir::kiln::setArgumentSharding(loss, 0, {"", "tp"});
  mlir::kiln::setArgumentSharding(loss, 1, {"tp", ""});
  mlir::kiln::setArgumentSharding(loss, 3, {"tp", ""});
  // pp x tp = 2 x 2 (4 ranks) and dp x pp x tp = 2 x 2 x 2 (8 ranks), both
  // schedules, with and without recomputation.
  int n = 0;
  for (int64_t D : {1, 2})
    for (bool recompute : {true, false})
      for (auto kind : {PipelineScheduleKind::GPipe,
                        PipelineScheduleKind::OneFOneB}) {
        if (D == 2 && kind == PipelineScheduleKind::GPipe && !recompute)
          continue;
        std::string name = "tp" + std::to_string(n++);
        func::FuncOp step =
            expectPipelineMatches(loss, 4, 3, kind, name, D, recompute, 2);
        ASSERT_TRUE(step);
        // Megatron's scatter-gather at the boundary: each rank sends half
        // of the 2 x 8 activation (and of its gradient), and the receiving
        // stage's pair gathers the halves once per micro-batch and way
        // (M = 3 forward into stage 1, 3 backward into stage 0).
        expectBoundaryPieces(step, name, /*piece=*/8, /*T=*/2, /*gathers=*/6);
        // Megatron's communication inside each stage. Forward: stage 0's
        // column- then row-parallel layers all-reduce once (the
        // row-parallel product's partial sums), the head's row-parallel
        // product once. Backward: nothing in stage 0 (the first stage's
        // input needs no gradient); the head's input gradient, split like
        // its rows, is gathered once to be sent back whole.
        for (int s = 0; s < 2; ++s) {
          std::string prefix = name + "_stage" + std::to_string(s);
          auto forward = module->lookupSymbol<func::FuncOp>(
              prefix + (recompute ? "_primal" : "_forward"));
          auto backward = module->lookupSymbol<func::FuncOp>(
              prefix + (recompute ? "_vjp" : "_backward"));
          ASSERT_TRUE(forward && backward) << prefix;
          EXPECT_EQ(countOps(forward, "kiln.all_reduce"), 1) << prefix;
          EXPECT_EQ(countOps(forward, "kiln.all_gather"), 0) << prefix;
          // The VJP recomputes the forward pass, its all-reduce included.
          EXPECT_EQ(countOps(backward, "kiln.all_reduce"), recompute ? 1 : 0)
              << prefix;
          EXPECT_EQ(countOps(backward, "kiln.all_gather"), s) << prefix;
          // Each within the stage's pairs of ranks.
          backward.walk([&](mlir::kiln::AllReduceOp op) {
            EXPECT_EQ(op.getGroupSize(), 2u) << prefix;
          });
        }
      }
}

TEST_F(PipelineTest, PiecesOfABufferThatTDoesNotDivide) {
  // Three ranks per stage and no annotation: each stage runs whole on its
  // three ranks, and the 16-float activation travels padded to 18, in
  // pieces of 6 gathered by the receiving three.
  func::FuncOp loss = parse(kTwoStages);
  ASSERT_TRUE(loss);
  for (bool recompute : {true, false}) {
    std::string name = recompute ? "tp3" : "tp3_kept";
    func::FuncOp step = expectPipelineMatches(
        loss, 4, 3, PipelineScheduleKind::OneFOneB, name, 1, recompute, 3);
    ASSERT_TRUE(step);
    expectBoundaryPieces(step, name, /*piece=*/6, /*T=*/3, /*gathers=*/6);
  }
}

TEST_F(PipelineTest, TwentySgdStepsTrackOneDevice) {
  func::FuncOp loss = parse(kFourStages);
  ASSERT_TRUE(loss);
  for (auto [kind, recompute] :
       {std::pair{PipelineScheduleKind::GPipe, true},
        std::pair{PipelineScheduleKind::OneFOneB, true},
        std::pair{PipelineScheduleKind::OneFOneB, false}}) {
    std::string name = kind == PipelineScheduleKind::GPipe ? "gpipe" : "onef";
    if (!recompute)
      name += "_keeping";
    expectTrainingTracksOneDevice(loss, 6, name, 4, kind, recompute,
                                  /*replicas=*/1, /*tp=*/1, /*lr=*/0.2);
  }
}

/// The Megatron split of each of a GPT-2 block's 16 parameters, in
/// bench/gpt2.py's BLOCK order (layer norm 1, q, k, v, output projection,
/// layer norm 2, MLP): the dimension split over tp, or -1. The q/k/v
/// projections and the MLP's first product are column-parallel (their
/// heads or hidden units split), the output projection and the MLP's
/// second product row-parallel; layer norms and the biases added after a
/// row-parallel product stay whole.
constexpr int64_t kGpt2BlockSplit[16] = {-1, -1, 1, 0, 1, 0, 1, 0,
                                         0,  -1, -1, -1, 1, 0, 0, -1};

/// GPT-2's initialisation, with u uniform in [-1, 1]: layer-norm gains near
/// 1, small weights and biases. (From weights uniform in [-1, 1], 20 steps
/// at this rate are chaotic: the pipeline and one process, which add the
/// micro-batches' gradients in different orders, part by more than 1e-5
/// after 6 steps.)
static double gpt2Initial(int64_t argument, double u) {
  int64_t k = argument % 16;
  if (k == 0 || k == 10)
    return 1.0 + 0.1 * u;
  return (kGpt2BlockSplit[k] == 1 || k == 8 || k == 14 ? 0.3 : 0.1) * u;
}

TEST_F(PipelineTest, TransformerStackTracksOneDevice) {
  // Two GPT-2 blocks traced from Python, cut by cost into P stages and
  // trained for 20 SGD steps on every layout the pipeline offers: pp = 2
  // with both schedules, with and without recomputation; dp x pp = 2 x 2;
  // pp x tp = 2 x 2; and tensor parallelism alone (one stage), tp = 2 and
  // dp x tp = 2 x 2.
  const int64_t numParams = 32;
  struct Setting {
    int64_t stages;
    PipelineScheduleKind kind;
    bool recompute;
    int64_t replicas, tp;
  };
  const PipelineScheduleKind gpipe = PipelineScheduleKind::GPipe,
                             onef = PipelineScheduleKind::OneFOneB;
  const Setting settings[] = {
      {2, gpipe, true, 1, 1}, {2, gpipe, false, 1, 1},
      {2, onef, true, 1, 1},  {2, onef, false, 1, 1},
      {2, onef, false, 2, 1}, {2, onef, false, 1, 2},
      {1, gpipe, false, 1, 2}, {1, gpipe, false, 2, 2}};
  int n = 0;
  for (const Setting &layout : settings) {
    std::string name = "gpt" + std::to_string(n++);
    SCOPED_TRACE(name + ": pp " + std::to_string(layout.stages) + ", " +
                 (layout.kind == gpipe ? "GPipe" : "1F1B") +
                 (layout.recompute ? ", recomputing" : "") + ", dp " +
                 std::to_string(layout.replicas) + ", tp " +
                 std::to_string(layout.tp));
    module = parseSourceFile<ModuleOp>(
        KILN_TEST_INPUTS_DIR "/gpt2_two_blocks.mlir",
        ParserConfig(&context));
    ASSERT_TRUE(module);
    auto flat = module->lookupSymbol<func::FuncOp>("loss");
    ASSERT_TRUE(flat);
    if (layout.tp > 1)
      for (int64_t k = 0; k < numParams; ++k)
        if (int64_t dim = kGpt2BlockSplit[k % 16]; dim >= 0) {
          std::vector<std::string> axes(
              cast<RankedTensorType>(flat.getArgumentTypes()[k]).getRank());
          axes[dim] = "tp";
          mlir::kiln::setArgumentSharding(flat, k, axes);
        }
    FailureOr<mlir::kiln::PipelineCut> cut =
        mlir::kiln::cutIntoStages(flat, layout.stages, {32, 33});
    ASSERT_TRUE(succeeded(cut));
    expectTrainingTracksOneDevice(cut->chain, numParams, name, 2, layout.kind,
                                  layout.recompute, layout.replicas, layout.tp,
                                  /*lr=*/0.05, gpt2Initial);
    // Megatron's forward communication: one all-reduce after each block's
    // attention (its row-parallel output projection) and one after its MLP.
    if (layout.tp > 1)
      for (int64_t s = 0; s < layout.stages; ++s) {
        auto forward = module->lookupSymbol<func::FuncOp>(
            name + "_stage" + std::to_string(s) + "_forward");
        ASSERT_TRUE(forward) << name << " stage " << s;
        EXPECT_EQ(countOps(forward, "kiln.all_reduce"), 4 / layout.stages)
            << name << " stage " << s;
        EXPECT_EQ(countOps(forward, "kiln.all_gather"), 0);
      }
  }
}

TEST_F(PipelineTest, SchedulesHaveTheTextbookBubbleAndMemory) {
  for (int64_t P : {2, 4})
    for (int64_t M : {1, 4, 8}) {
      auto gpipe =
          mlir::kiln::buildPipelineSchedule(PipelineScheduleKind::GPipe, P, M);
      auto oneF =
          mlir::kiln::buildPipelineSchedule(PipelineScheduleKind::OneFOneB, P, M);
      // Every action placed once.
      for (const auto *schedule : {&gpipe, &oneF}) {
        int64_t actions = 0;
        for (const auto &tick : schedule->ticks)
          for (const auto &action : tick)
            actions += action.kind != mlir::kiln::PipelineAction::Idle;
        EXPECT_EQ(actions, 2 * P * M);
      }
      // GPipe holds all M inputs on the first stage, 1F1B at most P - s.
      EXPECT_EQ(gpipe.peakInFlight(0), M);
      for (int64_t s = 0; s < P; ++s)
        EXPECT_LE(oneF.peakInFlight(s), std::min(P - s, M)) << P << " " << M;
      // The same length, so the same bubble.
      EXPECT_EQ(gpipe.ticks.size(), oneF.ticks.size());
      double textbook = double(P - 1) / double(M + P - 1);
      EXPECT_NEAR(gpipe.bubbleFraction(), textbook, 0.1 * textbook + 1e-9)
          << "P = " << P << ", M = " << M << ": " << gpipe.bubbleFraction();
    }
  std::string trace =
      mlir::kiln::buildPipelineSchedule(PipelineScheduleKind::OneFOneB, 2, 2)
          .chromeTrace();
  EXPECT_NE(trace.find("\"name\":\"F 0\""), std::string::npos) << trace;
  EXPECT_NE(trace.find("stage 1 (rank 1)"), std::string::npos) << trace;
}

TEST_F(PipelineTest, CutsAFlatLossWhereTheStagesBalance) {
  // Where each cut lands, as the first parameter of each stage. The
  // products (2 M N K = 192, 256, 256 and 160 of an estimated 1,029)
  // dominate: two stages split after the second layer; three cut between a
  // product and its bias where that balances better (stage costs 464, 320,
  // 245 rather than 208, 320, 501 at the layers' ends); four cut after the
  // first product, after the second layer and after the third product.
  const std::vector<std::vector<int64_t>> firstParams = {
      {0}, {0, 3}, {0, 2, 4}, {0, 1, 3, 4}};
  for (int64_t P = 1; P <= 4; ++P) {
    SCOPED_TRACE("stages = " + std::to_string(P));
    parse(kFlat); // a fresh module for each cut
    ASSERT_TRUE(module);
    auto flat = module->lookupSymbol<func::FuncOp>("flat");
    ASSERT_TRUE(flat);
    FailureOr<mlir::kiln::PipelineCut> cut =
        mlir::kiln::cutIntoStages(flat, P, {6, 7});
    ASSERT_TRUE(succeeded(cut));
    ASSERT_TRUE(succeeded(verify(*module)));
    ASSERT_EQ(static_cast<int64_t>(cut->stages.size()), P);
    std::vector<int64_t> firsts;
    for (Operation &op : cut->chain.front().without_terminator())
      firsts.push_back(
          cast<BlockArgument>(op.getOperand(0)).getArgNumber());
    EXPECT_EQ(firsts, firstParams[P - 1]);
    double total = 0, largest = 0;
    for (double cost : cut->costs) {
      total += cost;
      largest = std::max(largest, cost);
    }
    // Balanced: no stage above the ideal share by more than one layer.
    EXPECT_LE(largest, total / P + 300) << "largest stage cost";
    // The chain computes the flat loss.
    Inputs inputs;
    for (Type type : flat.getArgumentTypes())
      inputs.push_back(randomTensor(type, rng));
    auto want = ::kiln::evaluate(flat, inputs);
    auto got = ::kiln::evaluate(cut->chain, inputs);
    ASSERT_TRUE(want && got);
    EXPECT_EQ((*got)[0].f, (*want)[0].f);
    // And the pipeline of the chain the gradient accumulation.
    for (bool recompute : {true, false})
      ASSERT_TRUE(expectPipelineMatches(
          cut->chain, 6, 3, PipelineScheduleKind::OneFOneB,
          "cut" + std::to_string(P) + (recompute ? "r" : "k"), 1, recompute));
  }
}

TEST_F(PipelineTest, CutsNeedOneActivationAndNoSharedParameter) {
  // The first weight is read again by the last product (tied), so the only
  // place with one value crossing and no parameter on both sides is before
  // the final sum: two stages, not three.
  const char *tied = R"mlir(
func.func @tied(%w: tensor<4x4xf32>, %v: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %h = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %a = kiln.tanh %h : tensor<2x4xf32>
  %g = kiln.matmul %a, %v : tensor<2x4xf32>, tensor<4x4xf32>
  %b = kiln.tanh %g : tensor<2x4xf32>
  %o = kiln.matmul %b, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %o, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
)mlir";
  parse(tied);
  ASSERT_TRUE(module);
  auto loss = module->lookupSymbol<func::FuncOp>("tied");
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::kiln::cutIntoStages(loss, 3, {2})));
  EXPECT_EQ(message, "kiln-pipeline: @tied cannot be cut into 3 stages: one "
                     "f32 value and no parameter crosses at 1 place, after "
                     "op #4 ('kiln.matmul')");
  EXPECT_FALSE(module->lookupSymbol("tied_stages"));
  FailureOr<mlir::kiln::PipelineCut> two =
      mlir::kiln::cutIntoStages(loss, 2, {2});
  ASSERT_TRUE(succeeded(two));
  EXPECT_EQ(countOps(two->stages[1], "kiln.reduce_sum"), 1);
  EXPECT_EQ(countOps(two->stages[1], "kiln.matmul"), 0);
}

TEST_F(PipelineTest, ChainsThePassRefuses) {
  const char *notAChain = R"mlir(
func.func @loss(%w: tensor<4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %b = kiln.broadcast_in_dim %w, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %m = kiln.mul %x, %b : tensor<2x4xf32>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
)mlir";
  func::FuncOp loss = parse(notAChain);
  ASSERT_TRUE(loss);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  mlir::kiln::PipelineConfig config;
  config.microbatches = 2;
  config.batchArgs = {1};
  EXPECT_TRUE(failed(mlir::kiln::buildPipeline(loss, config)));
  EXPECT_EQ(message, "kiln-pipeline: the body of @loss must be a chain of "
                     "stage calls (func.call), not 'kiln.broadcast_in_dim'");
  // Nothing was added to the module (@loss and the appended @head).
  EXPECT_EQ(std::distance(module->getOps<func::FuncOp>().begin(),
                          module->getOps<func::FuncOp>().end()),
            2);
}

} // namespace
