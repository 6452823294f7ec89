//===- Pipeline.cpp - The kiln-pipeline pass ------------------------------===//
//
// Pipeline parallelism (GPipe, 1F1B) as a program rewrite. The user writes
// the loss of one micro-batch as a chain of stage calls; the pass derives
// the training step that P ranks run, rank s being stage s:
//
//  1. Checks the chain: call s reads parameters (arguments of the loss that
//     no other stage reads), data (arguments named in batch-args) and, for
//     s > 0, the one result of call s - 1, its input activation; the last
//     call's result, a rank-0 float, is returned.
//
//  2. Derives each stage's vector-Jacobian product with buildGradient:
//     (stage inputs..., dy) -> (y, d params..., d activation), which runs
//     the stage's forward pass again before its backward pass. A stage's
//     input is all it keeps of a micro-batch between its forward and its
//     backward pass (activation recomputation at stage boundaries).
//
//  3. Lays the schedule out tick by tick (PipelineSchedule.cpp) and writes
//     it unrolled: at each tick, for each stage with an action, a kiln.cond
//     on `kiln.rank == s` runs it on rank s alone (the other ranks pass
//     their values through), then one kiln.collective_permute sends the
//     output activations of the stages that ran a forward pass to the next
//     stage and one the input gradients of those that ran a backward pass
//     to the previous stage (only those pairs: a step sends each activation
//     and input gradient once). Activations
//     and gradients travel as flat f32 buffers of the largest activation's
//     size; a received buffer stays alive (an SSA value) until the stage's
//     backward pass for that micro-batch has used it, so GPipe holds M
//     inputs per stage and 1F1B at most P - s.
//
//  4. Accumulates each stage's parameter gradients, packed as the stage's
//     parameters are, over the micro-batches (the last stage's cotangent is
//     1 / M, so the sum is the gradient of the mean loss), and all-reduces
//     the loss, which only the last stage's forward passes compute.
//
// With D replicas (data parallelism times pipeline parallelism) the run
// has D P ranks, rank r running stage r % P of replica r / P on that
// replica's data; the permutes stay within a replica, and each stage's
// gradients are averaged over the D ranks that run it.
//
// With tensor parallelism T within each stage the run has D P T ranks,
// rank r holding block r % T of stage (r / T) % P of replica r / (P T):
// the loss's parameters annotated kiln.sharding over "tp" are split over a
// stage's T ranks, and each stage's functions (its VJP, and with
// recomputation a copy of its forward pass) are partitioned by
// kiln-partition over a mesh ["pp", "tp"] of shape [D P, T], so that their
// collectives act within each stage's T ranks. Those collectives run inside
// the stage's kiln.cond, which the other stages' ranks skip: collectives
// are group-local (KilnCollectiveOps.td). The activations and their
// gradients are whole on each of a stage's ranks, and cross between stages
// as Megatron-LM's scatter-gather sends them: block t of stage s sends only
// the t-th of T equal pieces of the flat buffer to block t of the next (or
// previous) stage, whose T ranks all-gather the pieces inside the action
// that reads them. A forward action keeps the gathered activation for its
// backward action, so each boundary gathers each activation and each
// gradient once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Pipeline.h"

#include "TargetFunctions.h"

#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Passes/Partition.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_PIPELINE
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// What one stage (one call of the chain) reads.
struct Stage {
  func::CallOp call;
  func::FuncOp callee;
  /// For each operand of the call: the loss's argument it is, or -1 for the
  /// input activation.
  SmallVector<int64_t> operandArgs;
  /// The loss's parameter arguments the stage reads, in the order of first
  /// reading, and each one's offset in the stage's packed row.
  SmallVector<int64_t> params;
  SmallVector<int64_t> offsets;
  int64_t packedSize = 0;
  /// Each parameter's kiln.sharding annotation (null: whole).
  SmallVector<ArrayAttr> shardings;
  /// The function a forward action calls with recomputation: the callee,
  /// or its copy partitioned over tp.
  func::FuncOp primal;
  /// The types of the callee's arguments as the stage's functions take
  /// them: a rank's blocks of split parameters.
  SmallVector<Type> localArgTypes;
  /// The derived VJP: (callee args..., dy) -> (y, d params..., d input
  /// activation (stages after the first)), which recomputes the forward
  /// pass; without recomputation it is split into `forward` (callee args...)
  /// -> (y, residuals...) and `backward` (callee args..., residuals..., dy)
  /// -> (d params..., d input activation) instead.
  func::FuncOp vjp, forward, backward;
  SmallVector<RankedTensorType> residuals;

  bool differentiated() const { return vjp || backward; }
};

int64_t numElements(Type type) {
  return cast<RankedTensorType>(type).getNumElements();
}


class PipelineBuilder {
public:
  PipelineBuilder(func::FuncOp loss, const PipelineConfig &config,
                  PipelineSchedule *scheduleOut)
      : loss(loss), config(config), scheduleOut(scheduleOut),
        builder(loss.getContext()) {}

  FailureOr<func::FuncOp> run();

private:
  LogicalResult checkChain();
  LogicalResult deriveVjps();
  /// Partitions `f`, whose first arguments are stage s's callee's, over
  /// tp: the stage's split parameters, and with `gradients` the results
  /// 1, 2, ... holding their derivatives, take the rank's blocks.
  LogicalResult partitionStage(Stage &stage, int64_t s, func::FuncOp f,
                               bool gradients);
  /// The packed layout of each stage's (local) parameters.
  void layOutPackedRows();
  void eraseVjps();
  /// The step function, built by the named steps below in this order.
  func::FuncOp buildStep();

  /// The values one tick of the schedule sends: the buffers the forward
  /// and backward actions fill (each rank its own stage's) and the (stage,
  /// micro-batch) pairs they hold.
  struct Tick {
    Value forwardOut, backwardOut;
    SmallVector<std::pair<int64_t, int64_t>> sentForward, sentBackward;
  };
  /// The step's signature (the packed parameters, then each data argument
  /// with its M micro-batches stacked) and entry block.
  func::FuncOp createStep();
  /// The stage this rank runs, the flat parameters and the running sums.
  void emitStepState();
  /// Stage s's forward action for micro-batch m: on the stage's ranks, its
  /// callee (or forward half), the activation sent on or the loss added.
  void emitForward(int64_t s, int64_t m, Tick &tick);
  /// Stage s's backward action for micro-batch m: the VJP (or backward
  /// half), the parameters' derivatives added, the input's sent back.
  void emitBackward(int64_t s, int64_t m, Tick &tick);
  /// The tick's permutes, which deliver what its actions sent.
  void emitPermutes(const Tick &tick);
  /// The loss's mean, the gradients averaged over replicas, the return.
  void emitReturn();

  /// The inputs of stage s's action region for micro-batch m: params,
  /// (the activation, at `activationIndex`), the data it reads.
  SmallVector<Value> actionInputs(int64_t s, int64_t m, bool forward,
                                  int64_t &activationIndex);
  /// The operands of the stage's callee, inside a region whose arguments
  /// `region` hold [params, (activation), data...].
  SmallVector<Value> stageOperands(OpBuilder &b, Stage &stage,
                                   ValueRange region, int64_t activationIndex);
  /// The data arguments the stage reads, each once, in operand order.
  SmallVector<Value> stageData(Stage &stage, int64_t m);
  /// The (source, target) rank pairs of one permute: only the stages that
  /// have something to send, in every replica, so that a step sends each
  /// activation and each input gradient once and nothing else.
  SmallVector<int64_t>
  permutePairs(ArrayRef<std::pair<int64_t, int64_t>> sent, int64_t to) const;

  Value constant(OpBuilder &b, RankedTensorType type, double value) {
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 type, b.getFloatAttr(type.getElementType(), value)));
  }
  Value i64(OpBuilder &b, int64_t value) {
    auto type = RankedTensorType::get({}, b.getI64Type());
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(value)));
  }
  /// `v` flattened and padded with zeros: elements [low, low + n) of a
  /// vector of `total`.
  Value placeFlat(OpBuilder &b, Value v, int64_t low, int64_t total) {
    int64_t n = numElements(v.getType());
    auto f32 = b.getF32Type();
    Value flat =
        b.create<ReshapeOp>(loc, RankedTensorType::get({n}, f32), v);
    if (n == total)
      return flat;
    Value zero = constant(b, RankedTensorType::get({}, f32), 0.0);
    return b.create<PadOp>(loc, flat, zero, ArrayRef<int64_t>{low},
                           ArrayRef<int64_t>{total - low - n},
                           ArrayRef<int64_t>{0});
  }
  /// Elements [offset, offset + numel(type)) of the flat `v`, as `type`.
  Value takeFlat(OpBuilder &b, Value v, int64_t offset, Type type) {
    int64_t n = numElements(type);
    Value piece = v;
    if (n != numElements(v.getType()))
      piece = b.create<SliceOp>(loc, v, ArrayRef<int64_t>{offset},
                                ArrayRef<int64_t>{offset + n},
                                ArrayRef<int64_t>{1});
    return b.create<ReshapeOp>(loc, type, piece);
  }

  /// Emits `kiln.cond %pred, (inputs)` whose then-region `body` builds from
  /// the region's arguments (the inputs) and whose else-region yields the
  /// inputs at `passThrough` positions, then zeros of the `fresh` types
  /// (values only the stage's rank computes); returns the results.
  SmallVector<Value>
  onRank(int64_t stage, ArrayRef<Value> inputs, ArrayRef<unsigned> passThrough,
         llvm::function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> body,
         ArrayRef<RankedTensorType> fresh = {});

  /// The micro-batch `m` rows of the data argument `arg` of the step.
  Value dataSlice(int64_t arg, int64_t m);

  /// What this rank sends of the flat buffer `whole` of bufferSize
  /// elements: with tensor-parallel stages, its block's piece (Megatron's
  /// scatter), else all of it.
  Value pieceToSend(OpBuilder &b, Value whole);
  /// The flat buffer whose pieces the stage's T ranks received (Megatron's
  /// gather, within each stage's T ranks); `piece` itself without tp.
  Value gatherPieces(OpBuilder &b, Value piece);

  func::FuncOp loss;
  const PipelineConfig &config;
  PipelineSchedule *scheduleOut;
  /// The derived step's name; its stages' VJPs are <name>_stage<s>_vjp.
  std::string stepName;
  OpBuilder builder;
  Location loc = UnknownLoc::get(loss.getContext());
  std::vector<Stage> stages;
  llvm::DenseMap<int64_t, unsigned> dataPosition; // loss arg -> step arg
  /// The flat buffers activations and gradients travel in: bufferSize
  /// elements, a multiple of T, sent as T pieces of pieceSize.
  int64_t packedWidth = 1, bufferSize = 1, pieceSize = 1;
  Block *body = nullptr;
  Value rank;
  DenseMap<std::pair<int64_t, int64_t>, Value> slices;

  // The step's state while its ticks are emitted.
  RankedTensorType packedType, flatType, bufferType, lossType;
  /// The flat parameters, a piece of zeros to send where a rank has
  /// nothing, and the running sums of gradients and losses.
  Value params, zeros, gradients, lossSum;
  /// Where each stage's inputs for micro-batch m arrive: the buffer (with
  /// tp, the rank's piece of it) a permute delivered.
  DenseMap<std::pair<int64_t, int64_t>, Value> activationIn, gradientIn;
  /// With tp, the whole input activation of stage s's micro-batch m, which
  /// its forward action gathered and keeps for the backward action.
  DenseMap<std::pair<int64_t, int64_t>, Value> activationWhole;
  /// What stage s's forward pass of micro-batch m kept for its backward
  /// pass (without recomputation).
  DenseMap<std::pair<int64_t, int64_t>, SmallVector<Value>> kept;
};

LogicalResult PipelineBuilder::checkChain() {
  if (config.microbatches < 1)
    return loss.emitError("kiln-pipeline: microbatches must be >= 1, not ")
           << config.microbatches;
  if (config.replicas < 1)
    return loss.emitError("kiln-pipeline: replicas must be >= 1, not ")
           << config.replicas;
  if (config.tensorParallel < 1)
    return loss.emitError("kiln-pipeline: tp must be >= 1, not ")
           << config.tensorParallel;
  if (!loss.getBody().hasOneBlock())
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " must be one block of stage calls";
  Block &block = loss.front();
  unsigned numArgs = block.getNumArguments();
  llvm::SmallDenseSet<int64_t> data;
  for (int64_t index : config.batchArgs) {
    if (index < 0 || index >= numArgs)
      return loss.emitError("kiln-pipeline: batch-args index ")
             << index << " is out of range: @" << loss.getSymName() << " has "
             << numArgs << " arguments";
    auto type = dyn_cast<RankedTensorType>(block.getArgument(index).getType());
    if (!type || type.getRank() == 0 || !type.hasStaticShape())
      return loss.emitError("kiln-pipeline: data argument #")
             << index << " of @" << loss.getSymName()
             << " has no leading dimension to stack micro-batches along";
    data.insert(index);
  }
  llvm::DenseMap<int64_t, int64_t> paramStage;
  Value previous;
  for (Operation &op : block.without_terminator()) {
    auto call = dyn_cast<func::CallOp>(op);
    if (!call)
      return op.emitError("kiln-pipeline: the body of @")
             << loss.getSymName()
             << " must be a chain of stage calls (func.call), not '"
             << op.getName() << "'";
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isDeclaration())
      return call.emitError("kiln-pipeline: stage @")
             << call.getCallee() << " has no body to differentiate";
    Stage stage;
    stage.call = call;
    stage.callee = callee;
    int64_t index = stages.size();
    for (auto [position, operand] : llvm::enumerate(call.getOperands())) {
      if (previous && operand == previous) {
        if (llvm::is_contained(stage.operandArgs, -1))
          return call.emitError("kiln-pipeline: stage ")
                 << index << " reads its input activation twice";
        stage.operandArgs.push_back(-1);
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &block)
        return call.emitError("kiln-pipeline: stage ")
               << index << " reads operand #" << position
               << ", which is neither an argument of @" << loss.getSymName()
               << " nor the previous stage's result";
      int64_t a = arg.getArgNumber();
      stage.operandArgs.push_back(a);
      auto sharding = loss.getArgAttrOfType<ArrayAttr>(a, kShardingAttrName);
      if (sharding && data.contains(a))
        return loss.emitError("kiln-pipeline: data argument #")
               << a << " is split (" << kShardingAttrName
               << "); the data are whole on every rank of a stage";
      if (data.contains(a))
        continue;
      if (sharding)
        for (Attribute axis : sharding) {
          auto name = dyn_cast<StringAttr>(axis);
          if (!name || (!name.getValue().empty() && name.getValue() != "tp"))
            return loss.emitError("kiln-pipeline: argument #")
                   << a << " is split as " << sharding
                   << "; a stage's parameters can be split over \"tp\" only";
        }
      if (!travelsAsF32(arg.getType()))
        return call.emitError("kiln-pipeline: parameter argument #")
               << a << " has type " << arg.getType()
               << "; the stages' parameters travel packed as f32";
      auto [it, inserted] = paramStage.try_emplace(a, index);
      if (!inserted && it->second != index)
        return call.emitError("kiln-pipeline: argument #")
               << a << " is read by stages " << it->second << " and " << index
               << "; each parameter belongs to one stage (name data in "
                  "batch-args)";
      if (!llvm::is_contained(stage.params, a)) {
        stage.params.push_back(a);
        stage.shardings.push_back(sharding);
      }
    }
    if (previous && !llvm::is_contained(stage.operandArgs, -1))
      return call.emitError("kiln-pipeline: stage ")
             << index << " does not read stage " << index - 1 << "'s result";
    if (call.getNumResults() != 1)
      return call.emitError("kiln-pipeline: stage ")
             << index << " returns " << call.getNumResults()
             << " values; a stage returns one (its activation, or the loss)";
    previous = call.getResult(0);
    stage.primal = callee;
    stage.localArgTypes.assign(callee.getArgumentTypes().begin(),
                               callee.getArgumentTypes().end());
    stages.push_back(std::move(stage));
  }
  if (stages.empty())
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " calls no stage";
  Operation *ret = block.getTerminator();
  if (ret->getNumOperands() != 1 || ret->getOperand(0) != previous)
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " must return the last stage's result";
  auto lossType = dyn_cast<RankedTensorType>(previous.getType());
  if (!lossType || lossType.getRank() != 0 || !lossType.getElementType().isF32())
    return loss.emitError("kiln-pipeline: the last stage returns ")
           << previous.getType() << "; a pipeline's loss is an f32 scalar";
  for (auto [s, stage] : llvm::enumerate(stages)) {
    if (s + 1 == stages.size())
      break;
    Type activation = stage.call.getResult(0).getType();
    if (!travelsAsF32(activation))
      return stage.call.emitError("kiln-pipeline: stage ")
             << s << " returns " << activation
             << "; activations travel between stages as f32";
    bufferSize = std::max(bufferSize, numElements(activation));
  }
  for (BlockArgument arg : block.getArguments())
    if (!data.contains(arg.getArgNumber()) &&
        !paramStage.count(arg.getArgNumber()))
      return loss.emitError("kiln-pipeline: argument #")
             << arg.getArgNumber() << " of @" << loss.getSymName()
             << " is read by no stage";
  if (stages.size() == 1 && stages.front().params.empty())
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " has no parameters to train";
  return success();
}

LogicalResult PipelineBuilder::deriveVjps() {
  for (auto [s, stage] : llvm::enumerate(stages)) {
    // The callee positions of the parameters, then of the activation.
    SmallVector<unsigned> wrt;
    for (int64_t param : stage.params)
      wrt.push_back(llvm::find(stage.operandArgs, param) -
                    stage.operandArgs.begin());
    if (auto input = llvm::find(stage.operandArgs, -1);
        input != stage.operandArgs.end())
      wrt.push_back(input - stage.operandArgs.begin());
    if (wrt.empty())
      continue; // Nothing to differentiate: the stage has no parameters.
    std::string name = (stepName + "_stage" + Twine(s) + "_vjp").str();
    FailureOr<func::FuncOp> vjp = buildGradient(stage.callee, wrt, name);
    if (failed(vjp))
      return failure();
    vjp->setPrivate();
    stage.vjp = *vjp;
    bool sharded =
        config.tensorParallel > 1 &&
        llvm::any_of(stage.shardings, [](ArrayAttr a) { return bool(a); });
    if (sharded) {
      if (failed(partitionStage(stage, s, stage.vjp, /*gradients=*/true)))
        return failure();
      if (config.recompute) {
        // The forward actions call a copy of the callee partitioned alike.
        OpBuilder b(stage.vjp);
        auto primal = cast<func::FuncOp>(b.clone(*stage.callee));
        primal.setSymName((stepName + "_stage" + Twine(s) + "_primal").str());
        primal.setPrivate();
        stage.primal = primal;
        if (failed(partitionStage(stage, s, primal, /*gradients=*/false)))
          return failure();
      }
      ArrayRef<Type> local = stage.vjp.getArgumentTypes();
      stage.localArgTypes.assign(local.begin(),
                                 local.begin() + stage.localArgTypes.size());
    }
    if (config.recompute)
      continue;
    // Without recomputation: the forward pass keeps what the backward pass
    // reads (one result and one cotangent: the stage's activation or loss).
    std::string prefix = (stepName + "_stage" + Twine(s)).str();
    FailureOr<SplitVjp> split =
        splitVjp(stage.vjp, 1, 1, prefix + "_forward", prefix + "_backward");
    if (failed(split))
      return stage.call.emitError("kiln-pipeline: stage ")
             << s << " cannot keep its intermediates between its forward and "
                "backward passes; run it with recomputation";
    stage.vjp.erase();
    stage.vjp = nullptr;
    stage.forward = split->forward;
    stage.backward = split->backward;
    for (Type type : stage.forward.getResultTypes().drop_front())
      stage.residuals.push_back(cast<RankedTensorType>(type));
  }
  return success();
}

void PipelineBuilder::eraseVjps() {
  for (Stage &stage : stages) {
    for (func::FuncOp derived : {stage.vjp, stage.forward, stage.backward})
      if (derived)
        derived.erase();
    if (stage.primal && stage.primal != stage.callee)
      stage.primal.erase();
  }
}

LogicalResult PipelineBuilder::partitionStage(Stage &stage, int64_t s,
                                              func::FuncOp f, bool gradients) {
  Mesh mesh;
  mesh.axes = {"pp", "tp"};
  mesh.shape = {config.replicas * static_cast<int64_t>(stages.size()),
                config.tensorParallel};
  setMesh(f, mesh);
  for (auto [k, param] : llvm::enumerate(stage.params)) {
    ArrayAttr sharding = stage.shardings[k];
    if (!sharding)
      continue;
    SmallVector<std::string> axes;
    for (Attribute axis : sharding)
      axes.push_back(cast<StringAttr>(axis).getValue().str());
    unsigned position =
        llvm::find(stage.operandArgs, param) - stage.operandArgs.begin();
    setArgumentSharding(f, position, axes);
    if (gradients)
      setResultSharding(f, 1 + k, axes);
  }
  if (succeeded(partitionFunction(f, PartitionConfig())))
    return success();
  return stage.call.emitError("kiln-pipeline: stage ")
         << s << " cannot be split over tp = " << config.tensorParallel
         << " as its parameters are annotated (the error above says why)";
}

void PipelineBuilder::layOutPackedRows() {
  for (Stage &stage : stages) {
    stage.offsets.clear();
    stage.packedSize = 0;
    for (int64_t param : stage.params) {
      unsigned position =
          llvm::find(stage.operandArgs, param) - stage.operandArgs.begin();
      stage.offsets.push_back(stage.packedSize);
      stage.packedSize += numElements(stage.localArgTypes[position]);
    }
    packedWidth = std::max(packedWidth, stage.packedSize);
  }
}

SmallVector<Value> PipelineBuilder::onRank(
    int64_t stage, ArrayRef<Value> inputs, ArrayRef<unsigned> passThrough,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> bodyFn,
    ArrayRef<RankedTensorType> fresh) {
  Value pred = builder.create<CompareOp>(loc, CompareDirection::eq, rank,
                                         i64(builder, stage));
  SmallVector<Type> types;
  for (unsigned i : passThrough)
    types.push_back(inputs[i].getType());
  types.append(fresh.begin(), fresh.end());
  auto cond = builder.create<CondOp>(loc, types, pred, inputs);
  for (int branch = 0; branch < 2; ++branch) {
    Region &region = branch == 0 ? cond.getThenRegion() : cond.getElseRegion();
    Block *block = new Block();
    region.push_back(block);
    for (Value input : inputs)
      block->addArgument(input.getType(), loc);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    SmallVector<Value> results;
    if (branch == 0)
      results = bodyFn(inner, block->getArguments());
    else {
      for (unsigned i : passThrough)
        results.push_back(block->getArgument(i));
      for (RankedTensorType type : fresh)
        results.push_back(inner.create<ConstantOp>(
            loc, DenseElementsAttr::get(
                     type, inner.getZeroAttr(type.getElementType()))));
    }
    inner.create<YieldOp>(loc, results);
  }
  return SmallVector<Value>(cond.getResults());
}

Value PipelineBuilder::dataSlice(int64_t arg, int64_t m) {
  if (Value done = slices.lookup({arg, m}))
    return done;
  Value whole = body->getArgument(dataPosition.lookup(arg));
  auto type = cast<RankedTensorType>(whole.getType());
  int64_t rows = type.getDimSize(0) / config.microbatches;
  SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
      stride(type.getRank(), 1);
  start[0] = m * rows;
  limit[0] = (m + 1) * rows;
  Value slice = builder.create<SliceOp>(loc, whole, start, limit, stride);
  slices[{arg, m}] = slice;
  return slice;
}

Value PipelineBuilder::pieceToSend(OpBuilder &b, Value whole) {
  int64_t T = config.tensorParallel;
  if (T == 1)
    return whole;
  // Inside a kiln.cond (regions are isolated): the block index from the
  // rank again, rank % T.
  auto scalar = RankedTensorType::get({}, b.getI64Type());
  Value block = b.create<RemOp>(loc, b.create<RankOp>(loc, scalar), i64(b, T));
  Value start = b.create<MulOp>(loc, block, i64(b, pieceSize));
  return b.create<DynamicSliceOp>(loc, whole, start, pieceSize);
}

Value PipelineBuilder::gatherPieces(OpBuilder &b, Value piece) {
  int64_t T = config.tensorParallel;
  if (T == 1)
    return piece;
  // Each stage's T ranks, in block order: groups {0..T-1}, {T..2T-1}, ...
  SmallVector<int64_t> groups(config.replicas * stages.size() * T);
  std::iota(groups.begin(), groups.end(), 0);
  return b.create<AllGatherOp>(loc, piece, 0, groups, T);
}

func::FuncOp PipelineBuilder::createStep() {
  MLIRContext *context = loss.getContext();
  auto f32 = Float32Type::get(context);
  int64_t M = config.microbatches;
  Block &original = loss.front();
  // The signature: the packed parameters, then the data, M micro-batches
  // each.
  packedType = RankedTensorType::get({1, packedWidth}, f32);
  SmallVector<Type> argTypes = {packedType};
  for (BlockArgument arg : original.getArguments()) {
    if (!llvm::is_contained(config.batchArgs, arg.getArgNumber()))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] *= M;
    dataPosition[arg.getArgNumber()] = argTypes.size();
    argTypes.push_back(type.clone(shape));
  }
  lossType = cast<RankedTensorType>(
      original.getTerminator()->getOperand(0).getType());
  builder.setInsertionPointAfter(loss);
  auto step = builder.create<func::FuncOp>(
      loss.getLoc(), stepName,
      FunctionType::get(context, argTypes, {lossType, packedType}));
  body = step.addEntryBlock();
  builder.setInsertionPointToStart(body);
  return step;
}

void PipelineBuilder::emitStepState() {
  auto f32 = builder.getF32Type();
  int64_t P = stages.size();
  auto scalar = RankedTensorType::get({}, builder.getI64Type());
  // The stage this rank runs: (rank / T) % P (replicas of the pipeline are
  // rank / (P T), a stage's tensor-parallel blocks rank % T).
  int64_t D = config.replicas, T = config.tensorParallel;
  rank = builder.create<RankOp>(loc, scalar);
  if (T > 1)
    rank = builder.create<DivOp>(loc, rank, i64(builder, T));
  if (D > 1)
    rank = builder.create<RemOp>(loc, rank, i64(builder, P));
  flatType = RankedTensorType::get({packedWidth}, f32);
  params = builder.create<ReshapeOp>(loc, flatType, body->getArgument(0));
  // With tp, each of a stage's T ranks sends a T-th of the buffer.
  pieceSize = (bufferSize + T - 1) / T;
  bufferSize = pieceSize * T;
  bufferType = RankedTensorType::get({bufferSize}, f32);
  zeros = constant(builder, RankedTensorType::get({pieceSize}, f32), 0.0);
  gradients = constant(builder, flatType, 0.0);
  lossSum = constant(builder, lossType, 0.0);
}

SmallVector<int64_t> PipelineBuilder::permutePairs(
    ArrayRef<std::pair<int64_t, int64_t>> sent, int64_t to) const {
  int64_t P = stages.size(), D = config.replicas, T = config.tensorParallel;
  SmallVector<int64_t> pairs;
  for (int64_t d = 0; d < D; ++d)
    for (auto [s, m] : sent)
      for (int64_t t = 0; t < T; ++t)
        pairs.append({(d * P + s) * T + t, (d * P + s + to) * T + t});
  return pairs;
}

SmallVector<Value> PipelineBuilder::stageOperands(OpBuilder &b, Stage &stage,
                                                  ValueRange region,
                                                  int64_t activationIndex) {
  SmallVector<Value> operands;
  unsigned nextData = activationIndex + 1;
  llvm::DenseMap<int64_t, Value> dataValues;
  for (auto [position, arg] : llvm::enumerate(stage.operandArgs)) {
    Type type = stage.localArgTypes[position];
    if (arg < 0) {
      operands.push_back(takeFlat(b, region[activationIndex], 0, type));
      continue;
    }
    auto paramAt = llvm::find(stage.params, arg);
    if (paramAt != stage.params.end()) {
      operands.push_back(takeFlat(
          b, region[0], stage.offsets[paramAt - stage.params.begin()], type));
      continue;
    }
    auto [it, inserted] = dataValues.try_emplace(arg, Value());
    if (inserted)
      it->second = region[nextData++];
    operands.push_back(it->second);
  }
  return operands;
}

SmallVector<Value> PipelineBuilder::stageData(Stage &stage, int64_t m) {
  SmallVector<Value> values;
  SmallVector<int64_t> seen;
  for (int64_t arg : stage.operandArgs)
    if (arg >= 0 && !llvm::is_contained(stage.params, arg) &&
        !llvm::is_contained(seen, arg)) {
      seen.push_back(arg);
      values.push_back(dataSlice(arg, m));
    }
  return values;
}

SmallVector<Value> PipelineBuilder::actionInputs(int64_t s, int64_t m,
                                                 bool forward,
                                                 int64_t &activationIndex) {
  int64_t T = config.tensorParallel;
  // Region inputs: params, (activation), data..., then the values the
  // other ranks pass through.
  SmallVector<Value> inputs = {params};
  activationIndex = 0;
  if (s != 0) {
    activationIndex = inputs.size();
    // The backward action reads what the forward one gathered (tp).
    inputs.push_back(T > 1 && !forward ? activationWhole.lookup({s, m})
                                       : activationIn.lookup({s, m}));
  }
  SmallVector<Value> data = stageData(stages[s], m);
  inputs.append(data.begin(), data.end());
  return inputs;
}

void PipelineBuilder::emitForward(int64_t s, int64_t m, Tick &tick) {
  Stage &stage = stages[s];
  int64_t P = stages.size(), T = config.tensorParallel;
  bool first = s == 0, last = s == P - 1;
  int64_t activationIndex;
  SmallVector<Value> inputs = actionInputs(s, m, /*forward=*/true,
                                           activationIndex);
  // The activation arrives in pieces (tp) and the forward action gathers
  // it.
  bool gatherActivation = !first && T > 1;
  // The activation sent on, or on the last stage the loss.
  unsigned out = inputs.size();
  inputs.push_back(last ? lossSum : tick.forwardOut);
  SmallVector<RankedTensorType> fresh(stage.residuals);
  if (gatherActivation)
    fresh.push_back(bufferType);
  SmallVector<Value> results = onRank(
      s, inputs, {out},
      [&](OpBuilder &b, ValueRange region) {
        SmallVector<Value> local(region.begin(), region.end());
        if (gatherActivation)
          local[activationIndex] = gatherPieces(b, region[activationIndex]);
        SmallVector<Value> operands =
            stageOperands(b, stage, local, activationIndex);
        func::FuncOp callee = stage.forward ? stage.forward : stage.primal;
        auto call = b.create<func::CallOp>(loc, callee, operands);
        Value y = call.getResult(0);
        SmallVector<Value> yielded = {
            last ? b.create<AddOp>(loc, region[out], y).getResult()
                 : pieceToSend(b, placeFlat(b, y, 0, bufferSize))};
        llvm::append_range(yielded, call.getResults().drop_front());
        if (gatherActivation)
          yielded.push_back(local[activationIndex]);
        return yielded;
      },
      fresh);
  if (stage.forward)
    kept[{s, m}].assign(results.begin() + 1,
                        results.begin() + 1 + stage.residuals.size());
  if (gatherActivation)
    activationWhole[{s, m}] = results.back();
  if (last) {
    lossSum = results[0];
    return;
  }
  tick.forwardOut = results[0];
  tick.sentForward.push_back({s, m});
}

void PipelineBuilder::emitBackward(int64_t s, int64_t m, Tick &tick) {
  Stage &stage = stages[s];
  int64_t P = stages.size(), M = config.microbatches;
  bool first = s == 0, last = s == P - 1;
  int64_t activationIndex;
  SmallVector<Value> inputs = actionInputs(s, m, /*forward=*/false,
                                           activationIndex);
  // The cotangent of the stage's result, the gradient and loss sums, and
  // the gradient it sends back.
  int64_t cotangentIndex = -1;
  if (!last) {
    cotangentIndex = inputs.size();
    inputs.push_back(gradientIn.lookup({s, m}));
  }
  unsigned residualIndex = inputs.size();
  SmallVector<Value> residuals = kept.lookup({s, m});
  inputs.append(residuals.begin(), residuals.end());
  unsigned sums = inputs.size();
  inputs.append({gradients, tick.backwardOut});
  SmallVector<Value> results = onRank(
      s, inputs, {sums, sums + 1}, [&](OpBuilder &b, ValueRange region) {
        Value grads = region[sums], sendIn = region[sums + 1];
        if (!stage.differentiated())
          return SmallVector<Value>{grads, sendIn};
        SmallVector<Value> operands =
            stageOperands(b, stage, region, activationIndex);
        if (stage.backward)
          llvm::append_range(operands,
                             region.slice(residualIndex, residuals.size()));
        Type resultType = stage.call.getResult(0).getType();
        operands.push_back(
            last ? constant(b, cast<RankedTensorType>(resultType),
                            1.0 / static_cast<double>(M))
                 : takeFlat(b, gatherPieces(b, region[cotangentIndex]), 0,
                            resultType));
        // The VJP returns (y, d params..., d activation), the backward
        // half (d params..., d activation).
        auto call = b.create<func::CallOp>(
            loc, stage.backward ? stage.backward : stage.vjp, operands);
        ValueRange derivatives =
            call.getResults().drop_front(stage.backward ? 0 : 1);
        // The parameters' derivatives packed as the parameters are (their
        // offsets follow each other) and added at once: one pass over the
        // row per micro-batch, not one per parameter.
        SmallVector<Value> pieces;
        for (Value d : derivatives.take_front(stage.offsets.size()))
          pieces.push_back(placeFlat(b, d, 0, numElements(d.getType())));
        if (stage.packedSize < packedWidth)
          pieces.push_back(constant(
              b,
              RankedTensorType::get({packedWidth - stage.packedSize},
                                    b.getF32Type()),
              0.0));
        if (!pieces.empty()) {
          Value packed = pieces.front();
          if (pieces.size() > 1)
            packed = b.create<ConcatOp>(loc, flatType, pieces, 0);
          grads = b.create<AddOp>(loc, grads, packed);
        }
        Value send = sendIn;
        if (!first)
          send =
              pieceToSend(b, placeFlat(b, derivatives.back(), 0, bufferSize));
        return SmallVector<Value>{grads, send};
      });
  gradients = results[0];
  tick.backwardOut = results[1];
  if (!first)
    tick.sentBackward.push_back({s, m});
}

void PipelineBuilder::emitPermutes(const Tick &tick) {
  if (!tick.sentForward.empty()) {
    Value sent = builder.create<CollectivePermuteOp>(
        loc, tick.forwardOut, permutePairs(tick.sentForward, 1));
    for (auto [s, m] : tick.sentForward)
      activationIn[{s + 1, m}] = sent;
  }
  if (!tick.sentBackward.empty()) {
    Value sent = builder.create<CollectivePermuteOp>(
        loc, tick.backwardOut, permutePairs(tick.sentBackward, -1));
    for (auto [s, m] : tick.sentBackward)
      gradientIn[{s - 1, m}] = sent;
  }
}

void PipelineBuilder::emitReturn() {
  int64_t P = stages.size(), M = config.microbatches;
  int64_t D = config.replicas, T = config.tensorParallel;
  SmallVector<int64_t> everyRank(P * D * T);
  std::iota(everyRank.begin(), everyRank.end(), 0);
  // Only the last stages summed the micro-batches' losses, each of its T
  // ranks the same: the mean over the M micro-batches of every replica.
  // (One stage and no replica is gradient accumulation on one rank: no
  // collective at all.)
  Value total = lossSum;
  if (P * D * T > 1)
    total = builder.create<AllReduceOp>(loc, lossSum, CollectiveReduction::Sum,
                                        everyRank, P * D * T);
  total = builder.create<MulOp>(
      loc, total,
      constant(builder, lossType, 1.0 / static_cast<double>(M * D * T)));
  if (D > 1) {
    // Data parallelism over the replicas: each stage's gradients (each
    // block's) averaged within the ranks that run it.
    SmallVector<int64_t> sameStage;
    for (int64_t s = 0; s < P; ++s)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d)
          sameStage.push_back((d * P + s) * T + t);
    gradients = builder.create<AllReduceOp>(
        loc, gradients, CollectiveReduction::Sum, sameStage, D);
    gradients = builder.create<MulOp>(
        loc, gradients,
        constant(builder, flatType, 1.0 / static_cast<double>(D)));
  }
  Value packed = builder.create<ReshapeOp>(loc, packedType, gradients);
  builder.create<func::ReturnOp>(loc, ValueRange{total, packed});
}

func::FuncOp PipelineBuilder::buildStep() {
  func::FuncOp step = createStep();
  emitStepState();
  PipelineSchedule schedule =
      buildPipelineSchedule(config.schedule, stages.size(), config.microbatches);
  if (scheduleOut)
    *scheduleOut = schedule;
  // Each tick: every stage's action, then the permutes that deliver what
  // the tick's actions sent.
  for (const auto &actions : schedule.ticks) {
    Tick tick{zeros, zeros, {}, {}};
    for (auto [s, action] : llvm::enumerate(actions)) {
      if (action.kind == PipelineAction::Forward)
        emitForward(s, action.microbatch, tick);
      else if (action.kind == PipelineAction::Backward)
        emitBackward(s, action.microbatch, tick);
    }
    emitPermutes(tick);
  }
  emitReturn();
  return step;
}

FailureOr<func::FuncOp> PipelineBuilder::run() {
  stepName = config.name.empty() ? (loss.getSymName() + "_pipeline").str()
                                 : config.name;
  if (auto module = loss->getParentOfType<ModuleOp>();
      module && module.lookupSymbol(stepName))
    return loss.emitError("kiln-pipeline: cannot add @")
           << stepName << ": the name is taken";
  if (failed(checkChain()))
    return failure();
  if (failed(deriveVjps())) {
    eraseVjps();
    return failure();
  }
  layOutPackedRows();
  return buildStep();
}

} // namespace

bool mlir::kiln::travelsAsF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

FailureOr<func::FuncOp> mlir::kiln::buildPipeline(func::FuncOp loss,
                                                  const PipelineConfig &config,
                                                  PipelineSchedule *schedule) {
  return PipelineBuilder(loss, config, schedule).run();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
/// Reports each stage's share of the estimated cost and the parameters
/// (the loss's arguments) it holds, in ranges: `#0-15, #32`.
void remarkCut(func::FuncOp loss, PipelineCut cut,
               ArrayRef<int64_t> batchArgs) {
  double total = 0;
  for (double cost : cut.costs)
    total += cost;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "kiln-pipeline: @" << loss.getSymName() << " cut into "
     << cut.stages.size() << " stages (@" << cut.chain.getSymName()
     << "); estimated forward cost and parameters:";
  for (auto [s, call] : llvm::enumerate(
           cut.chain.front().without_terminator())) {
    SmallVector<int64_t> params;
    for (Value operand : call.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && !llvm::is_contained(batchArgs, arg.getArgNumber()))
        params.push_back(arg.getArgNumber());
    os << (s ? "; " : " ") << "stage " << s << " "
       << llvm::formatv("{0:F1}%", 100.0 * cut.costs[s] / std::max(total, 1.0))
              .str();
    for (size_t i = 0; i < params.size();) {
      size_t j = i;
      while (j + 1 < params.size() && params[j + 1] == params[j] + 1)
        ++j;
      os << (i ? ", #" : " #") << params[i];
      if (j > i)
        os << "-" << params[j];
      i = j + 1;
    }
  }
  loss.emitRemark(text);
}

struct PipelinePass : kiln::impl::PipelineBase<PipelinePass> {
  using PipelineBase::PipelineBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (functionName.empty()) {
      module.emitError("kiln-pipeline needs the loss to pipeline: "
                       "--kiln-pipeline=\"function=<name> microbatches=M "
                       "batch-args=<i>,...\"");
      return signalPassFailure();
    }
    PipelineConfig config;
    config.microbatches = microbatches;
    config.batchArgs.assign(batchArgs.begin(), batchArgs.end());
    // data-args was this pass's name for batch-args until kiln-data-parallel's
    // name became the one for both.
    if (!deprecatedDataArgs.empty()) {
      if (!batchArgs.empty()) {
        module.emitError("kiln-pipeline: give batch-args only (data-args is "
                         "its deprecated spelling)");
        return signalPassFailure();
      }
      module.emitWarning("kiln-pipeline: data-args is deprecated; it is "
                         "called batch-args, as in kiln-data-parallel");
      config.batchArgs.assign(deprecatedDataArgs.begin(),
                              deprecatedDataArgs.end());
    }
    if (schedule == "gpipe") {
      config.schedule = PipelineScheduleKind::GPipe;
    } else if (schedule == "1f1b") {
      config.schedule = PipelineScheduleKind::OneFOneB;
    } else {
      module.emitError("kiln-pipeline: schedule must be gpipe or 1f1b, not '")
          << schedule << "'";
      return signalPassFailure();
    }
    config.name = name;
    config.replicas = replicas;
    config.recompute = recompute;
    config.tensorParallel = tensorParallel;
    FailureOr<SmallVector<func::FuncOp>> targets =
        targetFunctions(module, functionName, "kiln-pipeline");
    if (failed(targets))
      return signalPassFailure();
    // The one function named; the schedule it was laid out with, for a
    // timeline viewer.
    func::FuncOp loss = targets->front();
    func::FuncOp chain = loss;
    FailureOr<PipelineCut> cut;
    if (stages > 0) {
      // Not yet a chain of stage calls: cut where the stages balance.
      cut = cutIntoStages(loss, stages, config.batchArgs);
      if (failed(cut))
        return signalPassFailure();
      chain = cut->chain;
      if (config.name.empty())
        config.name = (loss.getSymName() + "_pipeline").str();
      remarkCut(loss, *cut, config.batchArgs);
    }
    PipelineSchedule planned;
    if (failed(buildPipeline(chain, config, &planned))) {
      if (succeeded(cut)) {
        for (func::FuncOp stage : cut->stages)
          stage.erase();
        cut->chain.erase();
      }
      return signalPassFailure();
    }
    if (scheduleTrace.empty())
      return;
    std::error_code error;
    llvm::raw_fd_ostream out(scheduleTrace, error);
    if (error) {
      module.emitError("kiln-pipeline: cannot write the schedule to '")
          << scheduleTrace << "': " << error.message();
      return signalPassFailure();
    }
    out << planned.chromeTrace();
    loss.emitRemark("kiln-pipeline: ")
        << schedule << " schedule of " << planned.stages << " stages and "
        << config.microbatches << " micro-batches: " << planned.ticks.size()
        << " ticks, bubble "
        << llvm::formatv("{0:F3}", planned.bubbleFraction()).str()
        << " (written to " << scheduleTrace << ")";
  }
};
} // namespace
