//===- PartitionTest.cpp - kiln-partition against the original ------------===//
//
// Every test traces a training step with the C++ tracer, annotates a copy
// with a device mesh and shardings, partitions it with kiln-partition, and
// runs both: the original with kiln::evaluate on whole tensors, the
// partitioned one with kiln::evaluateSpmd on every rank of the mesh, each
// on its blocks of the split arguments. Each rank's results must be its
// blocks of the original's (within 1e-5 of the largest magnitude), and the
// communication must be what Megatron-LM writes by hand: one all-reduce in
// the forward and one in the backward pass of a tensor-parallel MLP, none
// for attention with its heads split, no gathered logits for a vocabulary
// split over the ranks.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Partition.h"
#include "ParallelTestSupport.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Grad.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/kiln.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace mlir;
using ::kiln::HostTensor;
using namespace ::kiln::parallel_test;

namespace {

using Inputs = std::vector<HostTensor>;
/// Per tensor, per dimension, the mesh axis it is split over ("" for none);
/// an empty list leaves the tensor whole.
using Shardings = std::vector<std::vector<std::string>>;

/// A mesh and the shardings of a function's arguments and results.
struct Layout {
  mlir::kiln::Mesh mesh;
  Shardings arguments;
  Shardings results;
};

class PartitionTest : public ::testing::Test, protected RandomData {
protected:
  PartitionTest() : RandomData(20261123) {}

  /// A partitioned copy of `f` (in `rewritten`), or null after a failure.
  func::FuncOp partition(func::FuncOp f, const Layout &layout,
                         const mlir::kiln::PartitionConfig &config = {}) {
    rewritten = cast<ModuleOp>(f->getParentOp()->clone());
    auto copy = rewritten->lookupSymbol<func::FuncOp>(f.getSymName());
    mlir::kiln::setMesh(copy, layout.mesh);
    for (auto [i, s] : llvm::enumerate(layout.arguments))
      if (!s.empty())
        mlir::kiln::setArgumentSharding(copy, i, s);
    for (auto [i, s] : llvm::enumerate(layout.results))
      if (!s.empty())
        mlir::kiln::setResultSharding(copy, i, s);
    if (failed(mlir::kiln::partitionFunction(copy, config))) {
      ADD_FAILURE() << "kiln-partition failed";
      return nullptr;
    }
    if (failed(verify(*rewritten))) {
      ADD_FAILURE() << "the partitioned module does not verify";
      return nullptr;
    }
    return copy;
  }

  /// Rank `rank`'s blocks of `whole`, split as `sharding` says.
  static HostTensor localBlock(const HostTensor &whole,
                               const std::vector<std::string> &sharding,
                               const mlir::kiln::Mesh &mesh, int64_t rank) {
    HostTensor block = whole;
    for (auto [dim, axisName] : llvm::enumerate(sharding)) {
      if (axisName.empty())
        continue;
      size_t axis = *mesh.axisIndex(axisName);
      int64_t stride = 1;
      for (size_t a = axis + 1; a < mesh.shape.size(); ++a)
        stride *= mesh.shape[a];
      int64_t parts = mesh.shape[axis];
      block = blockOf(block, dim, (rank / stride) % parts, parts);
    }
    return block;
  }

  static Inputs localInputs(const Inputs &whole, const Layout &layout,
                            int64_t rank) {
    Inputs local;
    for (auto [i, tensor] : llvm::enumerate(whole))
      local.push_back(i < layout.arguments.size()
                          ? localBlock(tensor, layout.arguments[i],
                                       layout.mesh, rank)
                          : tensor);
    return local;
  }

  /// Every rank's results of `spmd` on its blocks of `inputs`.
  std::vector<Inputs> runSpmd(func::FuncOp spmd, const Inputs &inputs,
                              const Layout &layout) {
    std::vector<Inputs> perRank;
    for (int64_t r = 0; r < layout.mesh.numRanks(); ++r)
      perRank.push_back(localInputs(inputs, layout, r));
    auto results = ::kiln::evaluateSpmd(spmd, perRank);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  /// Expects each rank's results to be its blocks of `expected`.
  void expectBlocks(const std::vector<Inputs> &results, const Inputs &expected,
                    const Layout &layout, double tolerance = 1e-5) {
    for (auto [rank, got] : llvm::enumerate(results)) {
      ASSERT_EQ(got.size(), expected.size());
      for (size_t k = 0; k < expected.size(); ++k) {
        std::vector<std::string> sharding =
            k < layout.results.size() ? layout.results[k]
                                      : std::vector<std::string>();
        HostTensor block =
            localBlock(expected[k], sharding, layout.mesh, rank);
        ASSERT_EQ(got[k].shape, block.shape)
            << "result #" << k << " on rank " << rank;
        EXPECT_LE(relativeDifference(got[k], block), tolerance)
            << "result #" << k << " on rank " << rank;
      }
    }
  }

  /// `f` on `inputs` against its partition by `layout`; returns the
  /// partitioned function (null after a failure).
  func::FuncOp expectSameResults(func::FuncOp f, const Inputs &inputs,
                                 const Layout &layout,
                                 const mlir::kiln::PartitionConfig &config =
                                     {}) {
    auto expected = ::kiln::evaluate(f, inputs);
    if (!expected) {
      ADD_FAILURE() << llvm::toString(expected.takeError());
      return nullptr;
    }
    func::FuncOp spmd = partition(f, layout, config);
    if (!spmd)
      return nullptr;
    std::vector<Inputs> results = runSpmd(spmd, inputs, layout);
    if (results.empty())
      return nullptr;
    expectBlocks(results, *expected, layout);
    return spmd;
  }

  func::FuncOp keep(::kiln::TracedFunction function) {
    traced.push_back(std::move(function));
    return traced.back().function();
  }

  std::vector<::kiln::TracedFunction> traced;
  OwningOpRef<ModuleOp> rewritten;
};

/// The all_reduce ops of `f` whose groups are `groups`.
int countAllReduces(func::FuncOp f, ArrayRef<int64_t> groups) {
  int count = 0;
  f.walk([&](mlir::kiln::AllReduceOp op) {
    count += op.getGroups() == groups;
  });
  return count;
}

/// Whether some value in `f` has the type `type`.
bool holdsType(func::FuncOp f, Type type) {
  bool found = false;
  f.walk([&](Operation *op) {
    for (Value v : op->getResults())
      found |= v.getType() == type;
  });
  return found;
}

/// `op` printed, for failure messages.
std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

mlir::kiln::Mesh mesh(std::vector<std::string> axes,
                      std::vector<int64_t> shape) {
  mlir::kiln::Mesh m;
  m.axes.assign(axes.begin(), axes.end());
  m.shape.assign(shape.begin(), shape.end());
  return m;
}

//===----------------------------------------------------------------------===//
// A Megatron MLP block
//===----------------------------------------------------------------------===//

/// The SGD step of: h0 = relu(x w0 + b0) (a layer kept whole), then the
/// Megatron block h2 = relu(h0 w1 + b1) w2 + b2 + h0 (w1 and b1 split along
/// the hidden features: column parallel; w2 along its rows: row parallel),
/// then logits h2 wout and softmax cross-entropy. Arguments: w0, b0, w1,
/// b1, w2, b2, wout, x, onehot; results: the loss and the seven updated
/// parameters.
::kiln::TracedFunction traceMegatronStep(int64_t batch, int64_t width,
                                         int64_t hidden, int64_t classes) {
  using namespace ::kiln;
  std::vector<TensorSpec> specs = {
      {DType::F32, {width, width}},  {DType::F32, {width}},
      {DType::F32, {width, hidden}}, {DType::F32, {hidden}},
      {DType::F32, {hidden, width}}, {DType::F32, {width}},
      {DType::F32, {width, classes}}, {DType::F32, {batch, width}},
      {DType::F32, {batch, classes}}};
  auto loss = [](const Tensors &a) {
    Tensor h0 = relu(matmul(a[7], a[0]) + a[1]);
    Tensor h1 = relu(matmul(h0, a[2]) + a[3]);
    Tensor h2 = matmul(h1, a[4]) + a[5] + h0;
    return crossEntropy(matmul(h2, a[6]), a[8]);
  };
  return trace("train_step", specs, [=](const Tensors &a) {
    Tensors vg = value_and_grad(loss, {0, 1, 2, 3, 4, 5, 6})(a);
    Tensors out = {vg[0]};
    for (int p = 0; p < 7; ++p)
      out.push_back(a[p] - 0.2 * vg[p + 1]);
    return out;
  });
}

/// The Megatron layout over the axis "tp" (and the batch over "dp", if
/// `dataParallel`).
Layout megatronLayout(mlir::kiln::Mesh m, bool dataParallel) {
  std::vector<std::string> column = {"", "tp"}, row = {"tp", ""},
                           features = {"tp"},
                           batch = {dataParallel ? "dp" : "", ""};
  Layout layout;
  layout.mesh = std::move(m);
  layout.arguments = {{}, {}, column, features, row, {}, {}, batch, batch};
  layout.results = {{}, {}, {}, column, features, row, {}, {}};
  return layout;
}

TEST_F(PartitionTest, MegatronMlpHasOneAllReduceEachWay) {
  func::FuncOp f = keep(traceMegatronStep(8, 12, 16, 5));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[8] = randomOneHot(f.getArgumentTypes()[8]);
    Layout layout = megatronLayout(mesh({"tp"}, {n}), false);
    func::FuncOp spmd = expectSameResults(f, inputs, layout);
    ASSERT_TRUE(spmd);
    // Forward: the row-parallel product's partial sum; backward: the
    // partial gradient of the block's input. Nothing is gathered or cut
    // out of a whole value.
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 2);
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_to_all"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.reduce_scatter"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.dynamic_slice"), 0);
    auto f32 = Float32Type::get(f.getContext());
    EXPECT_EQ(spmd.getArgumentTypes()[2],
              RankedTensorType::get({12, 16 / n}, f32));
    EXPECT_EQ(spmd.getArgumentTypes()[4],
              RankedTensorType::get({16 / n, 12}, f32));
    EXPECT_EQ(spmd.getResultTypes()[3],
              RankedTensorType::get({12, 16 / n}, f32));
    // The annotations are consumed.
    EXPECT_FALSE(spmd->hasAttr(mlir::kiln::kMeshAttrName));
    EXPECT_FALSE(spmd.getArgAttr(2, mlir::kiln::kShardingAttrName));
  }
}

TEST_F(PartitionTest, MegatronMlpTrainsTwentyStepsLikeOneDevice) {
  func::FuncOp f = keep(traceMegatronStep(8, 12, 16, 5));
  Layout layout = megatronLayout(mesh({"tp"}, {2}), false);
  func::FuncOp spmd = partition(f, layout);
  ASSERT_TRUE(spmd);
  Inputs whole = randomInputs(f);
  std::vector<Inputs> perRank = {localInputs(whole, layout, 0),
                                 localInputs(whole, layout, 1)};
  for (int step = 0; step < 20; ++step) {
    whole[7] = random(f.getArgumentTypes()[7]);
    whole[8] = randomOneHot(f.getArgumentTypes()[8]);
    for (int64_t r = 0; r < 2; ++r) {
      perRank[r][7] = whole[7];
      perRank[r][8] = whole[8];
    }
    auto expected = ::kiln::evaluate(f, whole);
    ASSERT_TRUE(static_cast<bool>(expected))
        << llvm::toString(expected.takeError());
    auto results = ::kiln::evaluateSpmd(spmd, perRank);
    ASSERT_TRUE(static_cast<bool>(results))
        << llvm::toString(results.takeError());
    expectBlocks(*results, *expected, layout);
    // The updated parameters are the next step's.
    for (int p = 0; p < 7; ++p) {
      whole[p] = (*expected)[p + 1];
      for (int64_t r = 0; r < 2; ++r)
        perRank[r][p] = (*results)[r][p + 1];
    }
    if (HasFailure())
      FAIL() << "step " << step;
  }
}

TEST_F(PartitionTest, DataTimesTensorParallelOnFourRanks) {
  func::FuncOp f = keep(traceMegatronStep(8, 12, 16, 5));
  Inputs inputs = randomInputs(f);
  inputs[8] = randomOneHot(f.getArgumentTypes()[8]);
  Layout layout = megatronLayout(mesh({"dp", "tp"}, {2, 2}), true);
  mlir::kiln::PartitionConfig config;
  config.bucketAxis = "dp";
  func::FuncOp spmd = expectSameResults(f, inputs, layout, config);
  ASSERT_TRUE(spmd);
  // Ranks (dp, tp) = r / 2, r % 2: tensor-parallel groups {0, 1}, {2, 3};
  // data-parallel groups {0, 2}, {1, 3}.
  EXPECT_EQ(countAllReduces(spmd, {0, 1, 2, 3}), 2);
  EXPECT_EQ(countAllReduces(spmd, {0, 2, 1, 3}), 0);
  EXPECT_GE(countOps(spmd, "kiln.all_reduce_start"), 1);
  spmd.walk([](mlir::kiln::AllReduceStartOp start) {
    EXPECT_EQ(start.getGroups(), ArrayRef<int64_t>({0, 2, 1, 3}));
  });
  EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
  EXPECT_EQ(countOps(spmd, "kiln.dynamic_slice"), 0);
  auto f32 = Float32Type::get(f.getContext());
  EXPECT_EQ(spmd.getArgumentTypes()[7], RankedTensorType::get({4, 12}, f32));
  EXPECT_EQ(spmd.getArgumentTypes()[2], RankedTensorType::get({12, 8}, f32));
}

//===----------------------------------------------------------------------===//
// Attention with its heads split
//===----------------------------------------------------------------------===//

TEST_F(PartitionTest, AttentionHeadsSplitAcrossRanks) {
  using namespace ::kiln;
  const int64_t batch = 2, tokens = 6, heads = 4, headDim = 3,
                width = heads * headDim;
  auto loss = [=](const Tensors &a) {
    // a: wq, wk, wv, wo, x, target
    Tensor flat = reshape(a[4], {batch * tokens, width});
    auto project = [&](const Tensor &w) {
      Tensor p = reshape(matmul(flat, w), {batch, tokens, heads, headDim});
      return transpose(p, {0, 2, 1, 3}); // [B, H, T, hd]
    };
    Tensor o = scaled_dot_product_attention(project(a[0]), project(a[1]),
                                            project(a[2]), Tensor(),
                                            /*causal=*/true);
    Tensor merged =
        reshape(transpose(o, {0, 2, 1, 3}), {batch * tokens, width});
    Tensor y = matmul(merged, a[3]) + flat;
    Tensor diff = y - reshape(a[5], {batch * tokens, width});
    return mean(diff * diff);
  };
  func::FuncOp f = keep(trace(
      "train_step",
      {{DType::F32, {width, width}},
       {DType::F32, {width, width}},
       {DType::F32, {width, width}},
       {DType::F32, {width, width}},
       {DType::F32, {batch, tokens, width}},
       {DType::F32, {batch, tokens, width}}},
      [&](const Tensors &a) {
        Tensors vg = value_and_grad(loss, {0, 1, 2, 3})(a);
        Tensors out = {vg[0]};
        for (int p = 0; p < 4; ++p)
          out.push_back(a[p] - 0.1 * vg[p + 1]);
        return out;
      }));
  for (int64_t n : {2, 4}) {
    std::vector<std::string> column = {"", "tp"}, row = {"tp", ""};
    Layout layout;
    layout.mesh = mesh({"tp"}, {n});
    layout.arguments = {column, column, column, row, {}, {}};
    layout.results = {{}, column, column, column, row};
    func::FuncOp spmd = expectSameResults(f, randomInputs(f), layout);
    ASSERT_TRUE(spmd);
    // Each rank attends with its heads; the output projection's partial
    // sum is the only exchange.
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.all_reduce"), 1);
    int attentions = 0;
    spmd.walk([&](mlir::kiln::AttentionOp op) {
      ++attentions;
      EXPECT_EQ(op.getQuery().getType().getShape(),
                ArrayRef<int64_t>({batch, heads / n, tokens, headDim}));
    });
    EXPECT_EQ(attentions, 1);
  }
}

//===----------------------------------------------------------------------===//
// A vocabulary split over the ranks
//===----------------------------------------------------------------------===//

TEST_F(PartitionTest, VocabularyParallelEmbeddingAndCrossEntropy) {
  using namespace ::kiln;
  const int64_t batch = 4, tokens = 3, vocab = 16, width = 6,
                rows = batch * tokens;
  auto loss = [=](const Tensors &a) {
    // a: table, w, out, ids, labels
    Tensor e = reshape(gather(a[0], a[3]), {rows, width});
    Tensor h = relu(matmul(e, a[1])) + e;
    Tensor onehot =
        cast(equal(iota({rows, vocab}, 1, DType::I32),
                   broadcast_to(reshape(a[4], {rows, 1}), {rows, vocab})),
             DType::F32);
    return crossEntropy(matmul(h, a[2]), onehot);
  };
  func::FuncOp f = keep(trace(
      "train_step",
      {{DType::F32, {vocab, width}},
       {DType::F32, {width, width}},
       {DType::F32, {width, vocab}},
       {DType::I32, {batch, tokens}},
       {DType::I32, {rows}}},
      [&](const Tensors &a) {
        Tensors vg = value_and_grad(loss, {0, 1, 2})(a);
        return Tensors{vg[0], a[0] - 0.5 * vg[1], a[1] - 0.5 * vg[2],
                       a[2] - 0.5 * vg[3]};
      }));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    // Ids in range, and some out of range (the lookup clamps them).
    inputs[3] = random(f.getArgumentTypes()[3], vocab + 3);
    inputs[3].i[0] = -2;
    inputs[4] = random(f.getArgumentTypes()[4], vocab);
    std::vector<std::string> split = {"tp", ""}, columns = {"", "tp"};
    Layout layout;
    layout.mesh = mesh({"tp"}, {n});
    layout.arguments = {split, {}, columns, {}, {}};
    layout.results = {{}, split, {}, columns};
    func::FuncOp spmd = expectSameResults(f, inputs, layout);
    ASSERT_TRUE(spmd);
    // No rank computes the whole logits or their exponentials, nor holds
    // the whole table or its gradient: log-softmax all-reduces its max and
    // sum over the vocabulary, and the table's gradient is computed for the
    // rank's rows only. (The one-hot labels, computed from replicated
    // values alone, are made whole on every rank: propagation runs forward
    // only.)
    EXPECT_EQ(countOps(spmd, "kiln.all_gather"), 0);
    EXPECT_EQ(countOps(spmd, "kiln.reduce_scatter"), 0);
    auto f32 = Float32Type::get(f.getContext());
    auto logits = RankedTensorType::get({rows, vocab}, f32);
    spmd.walk([&](Operation *op) {
      if (isa<mlir::kiln::MatmulOp, mlir::kiln::ExpOp, mlir::kiln::SubOp>(op)) {
        EXPECT_NE(op->getResult(0).getType(), logits) << printed(op);
      }
    });
    EXPECT_FALSE(holdsType(spmd, RankedTensorType::get({vocab, width}, f32)))
        << printed(spmd);
    int maxima = 0;
    spmd.walk([&](mlir::kiln::AllReduceOp op) {
      maxima += op.getKind() == mlir::kiln::CollectiveReduction::Max;
    });
    EXPECT_EQ(maxima, 1);
  }
}

//===----------------------------------------------------------------------===//
// An embedding table split by rows, its ids split over the batch
//===----------------------------------------------------------------------===//

/// The SGD step (learning rate 0.5) of a recommendation model's lookup:
/// the rows of `fields` ids per example, concatenated, through a ReLU
/// layer to softmax cross-entropy. Arguments: table [vocab, width], w,
/// ids [batch, fields] (i32), onehot; results: the loss, the new table and
/// the new w.
::kiln::TracedFunction traceTableStep(int64_t batch, int64_t fields,
                                      int64_t vocab, int64_t width,
                                      int64_t classes) {
  using namespace ::kiln;
  auto loss = [=](const Tensors &a) {
    Tensor e = reshape(gather(a[0], a[2]), {batch, fields * width});
    return crossEntropy(relu(matmul(e, a[1])), a[3]);
  };
  return trace("train_step",
               {{DType::F32, {vocab, width}},
                {DType::F32, {fields * width, classes}},
                {DType::I32, {batch, fields}},
                {DType::F32, {batch, classes}}},
               [=](const Tensors &a) {
                 Tensors vg = value_and_grad(loss, {0, 1})(a);
                 return Tensors{vg[0], a[0] - 0.5 * vg[1],
                                a[1] - 0.5 * vg[2]};
               });
}

/// The table, the ids and the labels split over "dp" of `n` ranks, the new
/// table returned split.
Layout tableLayout(int64_t n) {
  std::vector<std::string> rows = {"dp", ""};
  Layout layout;
  layout.mesh = mesh({"dp"}, {n});
  layout.arguments = {rows, {}, rows, rows};
  layout.results = {{}, rows, {}};
  return layout;
}

/// A recommendation model's embedding table split by rows over the ranks
/// that also split the batch, with lookup-capacity=0: each rank looks up
/// its rows for every rank's ids (all-gathered, a few integers) and the
/// rows are reduce-scattered back to the ids' ranks; the table never moves
/// and no rank holds it whole in the forward pass.
TEST_F(PartitionTest, ShardedEmbeddingTableWithDataParallelIds) {
  const int64_t batch = 8, fields = 3, vocab = 16, width = 4, classes = 5;
  func::FuncOp f = keep(traceTableStep(batch, fields, vocab, width, classes));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[2] = random(f.getArgumentTypes()[2], vocab);
    inputs[3] = randomOneHot(f.getArgumentTypes()[3]);
    Layout layout = tableLayout(n);
    mlir::kiln::PartitionConfig gatherIds;
    gatherIds.lookupCapacity = 0;
    func::FuncOp spmd = expectSameResults(f, inputs, layout, gatherIds);
    ASSERT_TRUE(spmd);
    auto f32 = Float32Type::get(f.getContext());
    // Only the ids are gathered; the looked-up rows go back by one
    // reduce-scatter to the batch's ranks.
    spmd.walk([&](mlir::kiln::AllGatherOp op) {
      EXPECT_TRUE(op.getType().getElementType().isInteger(32)) << printed(op);
    });
    int rowsBack = 0;
    spmd.walk([&](mlir::kiln::ReduceScatterOp op) {
      rowsBack += op.getType() ==
                  RankedTensorType::get({batch / n, fields, width}, f32);
    });
    EXPECT_EQ(rowsBack, 1) << printed(spmd);
    EXPECT_EQ(spmd.getArgumentTypes()[0],
              RankedTensorType::get({vocab / n, width}, f32));
  }
}

/// That no rank of `spmd` holds a value of the [vocab, width] f32 table's
/// type, and that no exchange moves as many elements as a rank's rows of it.
void expectNoTableSizedValue(func::FuncOp spmd, int64_t vocab, int64_t width,
                             int64_t n) {
  auto f32 = Float32Type::get(spmd.getContext());
  EXPECT_FALSE(holdsType(spmd, RankedTensorType::get({vocab, width}, f32)))
      << printed(spmd);
  spmd.walk([&](Operation *op) {
    if (!isa<mlir::kiln::AllReduceOp, mlir::kiln::AllGatherOp,
             mlir::kiln::ReduceScatterOp, mlir::kiln::AllToAllOp>(op))
      return;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    EXPECT_LT(type.getNumElements(), vocab * width / n) << printed(op);
  });
}

/// The same model with a table much larger than a batch's lookups: the
/// table's gradient, 0.5 * scatter_add(0, ids, dy) with ids and dy split
/// over the batch, is not summed as a [vocab, width] table over the ranks;
/// each rank gathers every rank's ids and dy (a batch's worth) and adds
/// those in its rows, so no rank holds a table-sized value and nothing of
/// the table's size is communicated.
TEST_F(PartitionTest, LargeShardedTableGathersTheLookupsGradientNotTheTables) {
  const int64_t batch = 8, fields = 2, vocab = 256, width = 4, classes = 5;
  func::FuncOp f = keep(traceTableStep(batch, fields, vocab, width, classes));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    // Ids beyond both ends clamp; most rows are never read.
    inputs[2] = random(f.getArgumentTypes()[2], vocab + 8);
    inputs[2].i[0] = -3;
    inputs[3] = randomOneHot(f.getArgumentTypes()[3]);
    Layout layout = tableLayout(n);
    func::FuncOp spmd = expectSameResults(f, inputs, layout);
    ASSERT_TRUE(spmd);
    expectNoTableSizedValue(spmd, vocab, width, n);
    auto f32 = Float32Type::get(f.getContext());
    // The gradient's rows are added into the rank's rows of the table: on
    // 2 ranks after gathering every rank's (owner buckets would hold all 4
    // of a rank's ids), on 4 in either branch of the owner buckets'
    // exchange (ShardedTableExchangesIdsInOwnerBuckets).
    int scatters = 0;
    spmd.walk([&](mlir::kiln::ScatterAddOp op) {
      scatters += op.getType() ==
                  RankedTensorType::get({vocab / n, width}, f32);
    });
    EXPECT_EQ(scatters, n == 2 ? 1 : 2) << printed(spmd);
    EXPECT_EQ(countOps(spmd, "kiln.all_to_all"), n == 2 ? 0 : 4);
  }
}

/// The model's Adagrad step (learning rate 0.5): arguments table, its
/// running sum of squared gradients, w, ids, onehot; results the loss, the
/// new table, the new sum and the new w.
::kiln::TracedFunction traceTableAdagradStep(int64_t batch, int64_t fields,
                                             int64_t vocab, int64_t width,
                                             int64_t classes) {
  using namespace ::kiln;
  auto loss = [=](const Tensors &a) {
    Tensor e = reshape(gather(a[0], a[3]), {batch, fields * width});
    return crossEntropy(relu(matmul(e, a[2])), a[4]);
  };
  return trace("train_step",
               {{DType::F32, {vocab, width}},
                {DType::F32, {vocab, width}},
                {DType::F32, {fields * width, classes}},
                {DType::I32, {batch, fields}},
                {DType::F32, {batch, classes}}},
               [=](const Tensors &a) {
                 Tensors vg = value_and_grad(loss, {0, 2})(a);
                 Tensor sum = a[1] + vg[1] * vg[1];
                 return Tensors{vg[0], a[0] - 0.5 * vg[1] / (sqrt(sum) + 1e-10),
                                sum, a[2] - 0.5 * vg[2]};
               });
}

/// Adagrad on a large table split by rows: the table's gradient is squared
/// into its running sum and divides its update, neither of them linear in
/// it. Each rank still adds only the gathered lookups' gradients into its
/// rows and squares those: no value or exchange of the table's size, where
/// summing the gradient whole (to square it) would all-reduce the table.
TEST_F(PartitionTest, AdagradOnShardedTableSquaresOnlyTheRanksRows) {
  const int64_t batch = 8, fields = 2, vocab = 256, width = 4, classes = 5;
  func::FuncOp f =
      keep(traceTableAdagradStep(batch, fields, vocab, width, classes));
  for (int64_t n : {2, 4}) {
    Inputs inputs = randomInputs(f);
    inputs[1] = HostTensor::fromFloats(
        Float32Type::get(f.getContext()), {vocab, width},
        std::vector<double>(vocab * width, 0.1));
    inputs[3] = random(f.getArgumentTypes()[3], vocab);
    inputs[4] = randomOneHot(f.getArgumentTypes()[4]);
    std::vector<std::string> rows = {"dp", ""};
    Layout layout;
    layout.mesh = mesh({"dp"}, {n});
    layout.arguments = {rows, rows, {}, rows, rows};
    layout.results = {{}, rows, rows, {}};
    func::FuncOp spmd = expectSameResults(f, inputs, layout);
    ASSERT_TRUE(spmd);
    expectNoTableSizedValue(spmd, vocab, width, n);
  }
}

/// The same model on 4 ranks with owner buckets (the default capacity
/// factor 2: 8 ids per rank in buckets of 4): the ids go to their rows'
/// owners by all_to_all and the rows come back, and in the backward pass
/// the rows' gradients go to the owners with their ids. Ids spread over the
/// owners take that path; ids that all fall in one rank's rows overflow
/// its bucket, and the whole group gathers the ids instead. Both give the
/// single device's results.
TEST_F(PartitionTest, ShardedTableExchangesIdsInOwnerBuckets) {
  const int64_t batch = 16, fields = 2, vocab = 64, width = 4, classes = 3;
  const int64_t n = 4;
  func::FuncOp f = keep(traceTableStep(batch, fields, vocab, width, classes));
  Layout layout = tableLayout(n);
  // Spread: each rank's 8 ids name every owner twice (two out of range,
  // clamped to rows of owners 0 and 3, leave rank 1 three ids of owner 3).
  // Skewed: every id in rank 2's rows, some repeated.
  Inputs spread = randomInputs(f), skewed = spread;
  for (int64_t k = 0; k < batch * fields; ++k) {
    spread[2].i[k] = (k % 8) / 2 * 16 + (k * 3) % 16;
    skewed[2].i[k] = 32 + (k * 5) % 16;
  }
  spread[2].i[0] = -3;
  spread[2].i[9] = vocab + 5;
  spread[3] = skewed[3] = randomOneHot(f.getArgumentTypes()[3]);
  for (const Inputs &inputs : {spread, skewed}) {
    func::FuncOp spmd = expectSameResults(f, inputs, layout);
    ASSERT_TRUE(spmd);
    auto f32 = Float32Type::get(f.getContext());
    // Forward: ids out, rows back; backward: ids and rows to the owners.
    int idsOut = 0, rowsMoved = 0;
    spmd.walk([&](mlir::kiln::AllToAllOp op) {
      auto type = cast<RankedTensorType>(op.getType());
      idsOut += type == RankedTensorType::get({n, 4}, type.getElementType()) &&
                type.getElementType().isInteger(32);
      rowsMoved += type == RankedTensorType::get({n, 4, width}, f32);
    });
    EXPECT_EQ(idsOut, 2) << printed(spmd);
    EXPECT_EQ(rowsMoved, 2) << printed(spmd);
    EXPECT_FALSE(holdsType(spmd, RankedTensorType::get({vocab, width}, f32)))
        << printed(spmd);
  }
}

//===----------------------------------------------------------------------===//
// Annotations the pass refuses
//===----------------------------------------------------------------------===//

TEST_F(PartitionTest, IndivisibleSplitIsAnErrorThatLeavesTheFunction) {
  func::FuncOp f = keep(traceMegatronStep(8, 12, 16, 5));
  Layout layout = megatronLayout(mesh({"tp"}, {3}), false);
  rewritten = cast<ModuleOp>(f->getParentOp()->clone());
  auto copy = rewritten->lookupSymbol<func::FuncOp>(f.getSymName());
  mlir::kiln::setMesh(copy, layout.mesh);
  mlir::kiln::setArgumentSharding(copy, 2, {"", "tp"});
  std::string message;
  ScopedDiagnosticHandler handler(f.getContext(), [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::kiln::partitionFunction(copy, {})));
  EXPECT_EQ(message, "kiln-partition: argument #2 of @train_step splits "
                     "dimension 1 of size 16 over the axis \"tp\" of 3 ranks, "
                     "which do not divide it");
  EXPECT_EQ(copy.getArgumentTypes(), f.getArgumentTypes());
}

} // namespace
