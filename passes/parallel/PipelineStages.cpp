//===- PipelineStages.cpp - Cutting a loss into balanced pipeline stages --===//
//
// kiln-pipeline's `stages=P`: the loss is one block of ops, not yet a chain
// of stage calls, and the pass chooses where to cut it, as GPipe's
// partitioner balances a sequence of layers by their profiled cost.
//
//  1. A place between two ops is a possible cut when exactly one value
//     computed before it is read after it, an f32 tensor of static shape
//     (the activation a stage sends on), and no parameter is read on both
//     sides (a parameter belongs to one stage). Values computed from
//     constants alone (a causal mask from iotas, a scale) do not count:
//     every stage that reads them computes them again.
//
//  2. Each op has an estimated cost: 2 M N K for a product, four products
//     for attention (two for a causal one), 2 N Cin/groups K for a
//     convolution, the updates of a scatter, the elements written for
//     anything else; loops and
//     conditions cost their bodies (a kiln.for times its trip count), a
//     call its callee. The forward cost stands in for the stage's: the
//     backward pass of each op costs about a fixed multiple of its forward
//     pass.
//
//  3. Among the possible cuts, P - 1 are chosen to minimise the most
//     expensive stage (dynamic programming over the cuts in order).
//
//  4. Each stage becomes a private function <loss>_stage<s>(parameters in
//     argument order..., activation, data...) and @<loss>_stages, with the
//     loss's signature, calls them in a chain.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Pipeline.h"
#include "kiln/Passes/ValuesRead.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {

double elements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 1.0;
  return static_cast<double>(tensor.getNumElements());
}

double estimateCost(Operation *op, int depth = 0);

double regionsCost(Operation *op, int depth) {
  double total = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        total += estimateCost(&inner, depth);
  return total;
}

/// The estimated forward cost of `op`, in floating-point operations.
double estimateCost(Operation *op, int depth) {
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    return 2.0 * elements(matmul.getType()) *
           static_cast<double>(lhs.getShape().back());
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    auto key = cast<RankedTensorType>(attention.getKey().getType());
    double keys = static_cast<double>(key.getDimSize(key.getRank() - 2));
    double products = 4.0 * elements(attention.getQuery().getType()) * keys;
    return attention.getCausal() ? products / 2 : products;
  }
  if (auto conv = dyn_cast<ConvOp>(op)) {
    auto weight = cast<RankedTensorType>(conv.getWeight().getType());
    // Each output element: one product per weight element of its output
    // channel (weights are [Cout, Cin / groups, spatial...]).
    return 2.0 * elements(conv.getType()) * elements(weight) /
           static_cast<double>(weight.getDimSize(0));
  }
  // A scatter adds its updates; the rest of the table is copied at most.
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return std::max(elements(scatter.getUpdates().getType()), 1.0);
  if (auto loop = dyn_cast<ForOp>(op))
    return static_cast<double>(std::max<int64_t>(loop.getTripCount(), 1)) *
           regionsCost(op, depth);
  if (op->getNumRegions() > 0)
    return regionsCost(op, depth);
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (callee && !callee.isDeclaration() && depth < 8)
      return regionsCost(callee, depth + 1);
  }
  double written = 0;
  for (Type type : op->getResultTypes())
    written += elements(type);
  return std::max(written, 1.0);
}

} // namespace

FailureOr<PipelineCut> mlir::kiln::cutIntoStages(func::FuncOp loss,
                                                 int64_t numStages,
                                                 ArrayRef<int64_t> batchArgs) {
  if (numStages < 1)
    return loss.emitError("kiln-pipeline: stages must be >= 1, not ")
           << numStages;
  if (!loss.getBody().hasOneBlock())
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " must be one block to cut into stages";
  Block &block = loss.front();
  Operation *ret = block.getTerminator();
  if (ret->getNumOperands() != 1)
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " must return one value, its loss";
  ModuleOp module = loss->getParentOfType<ModuleOp>();
  std::string chainName = (loss.getSymName() + "_stages").str();
  auto stageName = [&](int64_t s) {
    return (loss.getSymName() + "_stage" + Twine(s)).str();
  };
  if (module) {
    for (int64_t s = -1; s < numStages; ++s) {
      std::string name = s < 0 ? chainName : stageName(s);
      if (module.lookupSymbol(name))
        return loss.emitError("kiln-pipeline: cannot add @")
               << name << ": the name is taken";
    }
  }

  // Ops computed from constants alone: cloned into each stage that reads
  // them instead of crossing a cut.
  llvm::SmallPtrSet<Operation *, 16> free;
  SmallVector<Operation *> ops; // the others, in order
  for (Operation &op : block.without_terminator()) {
    bool isFree = op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
                  !isa<func::CallOp>(op) &&
                  llvm::all_of(op.getOperands(), [&](Value v) {
                    Operation *def = v.getDefiningOp();
                    return def && free.contains(def);
                  });
    if (isFree)
      free.insert(&op);
    else
      ops.push_back(&op);
  }
  int64_t n = ops.size();
  if (n < numStages)
    return loss.emitError("kiln-pipeline: @")
           << loss.getSymName() << " has only " << n
           << (n == 1 ? " op" : " ops") << " to cut into " << numStages
           << " stages";

  // Where each value and argument is read last (and arguments first), in
  // positions of `ops`; the returned loss is read at n.
  llvm::DenseMap<Value, int64_t> lastRead;
  SmallVector<int64_t> argFirst(block.getNumArguments(), n + 1),
      argLast(block.getNumArguments(), -1);
  auto noteRead = [&](Value v, int64_t at) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &block)
        return;
      argFirst[arg.getArgNumber()] =
          std::min(argFirst[arg.getArgNumber()], at);
      argLast[arg.getArgNumber()] = std::max(argLast[arg.getArgNumber()], at);
      return;
    }
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == &block && !free.contains(def))
      lastRead[v] = std::max(lastRead.lookup(v), at);
  };
  for (auto [i, op] : llvm::enumerate(ops))
    for (Value v : valuesRead(op))
      noteRead(v, i);
  noteRead(ret->getOperand(0), n);

  // The possible cuts: after ops[k], one f32 value crosses and no
  // parameter is read on both sides.
  llvm::SmallDenseSet<int64_t> data(batchArgs.begin(), batchArgs.end());
  SmallVector<int64_t> cuts;
  DenseMap<int64_t, Value> crossing;
  llvm::SetVector<Value> live;
  for (int64_t k = 0; k + 1 < n; ++k) {
    for (Value v : ops[k]->getResults())
      if (lastRead.lookup(v) > k)
        live.insert(v);
    live.remove_if([&](Value v) { return lastRead.lookup(v) <= k; });
    if (live.size() != 1 || !travelsAsF32(live.front().getType()))
      continue;
    bool splitsParameter = false;
    for (unsigned a = 0; a < block.getNumArguments(); ++a)
      if (!data.contains(a) && argFirst[a] <= k && argLast[a] > k)
        splitsParameter = true;
    if (splitsParameter)
      continue;
    cuts.push_back(k);
    crossing[k] = live.front();
  }
  if (static_cast<int64_t>(cuts.size()) < numStages - 1) {
    InFlightDiagnostic error =
        loss.emitError("kiln-pipeline: @")
        << loss.getSymName() << " cannot be cut into " << numStages
        << " stages: one f32 value and no parameter crosses at "
        << cuts.size() << (cuts.size() == 1 ? " place" : " places");
    // Name the places (ops counted from 0 in the body, constants aside).
    for (auto [i, k] : llvm::enumerate(cuts))
      error << (i ? ", " : ", after ") << "op #" << k << " ('"
            << ops[k]->getName() << "')";
    return error;
  }

  // Balance: P - 1 of the cuts minimising the largest stage cost.
  SmallVector<double> prefix(n + 1, 0.0);
  for (int64_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + estimateCost(ops[i]);
  // Boundaries b_0 = -1 < cuts... < b_P = n - 1; stage s holds ops
  // (b_s, b_{s+1}].
  SmallVector<int64_t> bounds = {-1};
  bounds.append(cuts.begin(), cuts.end());
  int64_t q = bounds.size();
  auto span = [&](int64_t from, int64_t to) { // ops (from, to]
    return prefix[to + 1] - prefix[from + 1];
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[j][i]: the smallest largest cost of j stages ending after
  // bounds[i]; from[j][i] the start of the last one.
  std::vector<std::vector<double>> best(numStages + 1,
                                        std::vector<double>(q, inf));
  std::vector<std::vector<int64_t>> from(numStages + 1,
                                         std::vector<int64_t>(q, -1));
  best[0][0] = 0;
  for (int64_t j = 1; j < numStages; ++j)
    for (int64_t i = 1; i < q; ++i)
      for (int64_t p = 0; p < i; ++p)
        if (best[j - 1][p] < inf) {
          double cost =
              std::max(best[j - 1][p], span(bounds[p], bounds[i]));
          if (cost < best[j][i]) {
            best[j][i] = cost;
            from[j][i] = p;
          }
        }
  // The last stage runs to the end.
  double bestCost = inf;
  int64_t last = -1;
  if (numStages == 1) {
    last = 0;
    bestCost = span(-1, n - 1);
  } else {
    for (int64_t p = 1; p < q; ++p)
      if (best[numStages - 1][p] < inf) {
        double cost =
            std::max(best[numStages - 1][p], span(bounds[p], n - 1));
        if (cost < bestCost) {
          bestCost = cost;
          last = p;
        }
      }
  }
  SmallVector<int64_t> chosen; // indices into bounds, stage starts
  for (int64_t j = numStages - 1, i = last; j >= 0; --j) {
    chosen.push_back(i);
    i = j > 0 ? from[j][i] : -1;
  }
  std::reverse(chosen.begin(), chosen.end());

  // The stage functions and the chain.
  PipelineCut cut;
  MLIRContext *context = loss.getContext();
  Location loc = loss.getLoc();
  OpBuilder builder(context);
  builder.setInsertionPointAfter(loss);
  auto chain = builder.create<func::FuncOp>(loc, chainName,
                                            loss.getFunctionType());
  chain.setPrivate();
  // The arguments' annotations (a parameter's kiln.sharding) carry over.
  if (ArrayAttr argAttrs = loss.getAllArgAttrs())
    chain.setAllArgAttrs(argAttrs);
  cut.chain = chain;
  Block *chainBody = chain.addEntryBlock();
  OpBuilder chainBuilder = OpBuilder::atBlockEnd(chainBody);
  builder.setInsertionPointAfter(chain);
  Value activation;   // in the loss
  Value chainValue;   // in the chain
  for (int64_t s = 0; s < numStages; ++s) {
    int64_t begin = bounds[chosen[s]] + 1;
    int64_t end = s + 1 < numStages ? bounds[chosen[s + 1]] : n - 1;
    Value result = s + 1 < numStages ? crossing.lookup(end) : ret->getOperand(0);
    // What the stage's ops read: arguments, free ops, the activation.
    SmallVector<unsigned> params, dataRead;
    llvm::SetVector<Operation *> freeRead;
    llvm::SmallDenseSet<unsigned> argsRead;
    std::function<void(Value)> need = [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() == &block)
          argsRead.insert(arg.getArgNumber());
        return;
      }
      Operation *def = v.getDefiningOp();
      if (def && free.contains(def) && !freeRead.contains(def)) {
        for (Value operand : def->getOperands())
          need(operand);
        freeRead.insert(def);
      }
    };
    for (int64_t i = begin; i <= end; ++i)
      for (Value v : valuesRead(ops[i]))
        need(v);
    need(result);
    for (unsigned a = 0; a < block.getNumArguments(); ++a)
      if (argsRead.contains(a))
        (data.contains(a) ? dataRead : params).push_back(a);
    SmallVector<Type> argTypes;
    SmallVector<Value> callOperands;
    for (unsigned a : params) {
      argTypes.push_back(block.getArgument(a).getType());
      callOperands.push_back(chainBody->getArgument(a));
    }
    if (activation) {
      argTypes.push_back(activation.getType());
      callOperands.push_back(chainValue);
    }
    for (unsigned a : dataRead) {
      argTypes.push_back(block.getArgument(a).getType());
      callOperands.push_back(chainBody->getArgument(a));
    }
    auto stage = builder.create<func::FuncOp>(
        loc, stageName(s),
        FunctionType::get(context, argTypes, {result.getType()}));
    stage.setPrivate();
    builder.setInsertionPointAfter(stage);
    Block *entry = stage.addEntryBlock();
    IRMapping map;
    unsigned next = 0;
    for (unsigned a : params)
      map.map(block.getArgument(a), entry->getArgument(next++));
    if (activation)
      map.map(activation, entry->getArgument(next++));
    for (unsigned a : dataRead)
      map.map(block.getArgument(a), entry->getArgument(next++));
    OpBuilder body = OpBuilder::atBlockEnd(entry);
    // `need` adds a free op after the free ops it reads: each comes after
    // what it reads.
    for (Operation *op : freeRead)
      body.clone(*op, map);
    for (int64_t i = begin; i <= end; ++i)
      body.clone(*ops[i], map);
    body.create<func::ReturnOp>(loc, map.lookupOrDefault(result));
    cut.stages.push_back(stage);
    cut.costs.push_back(span(begin - 1, end));
    chainValue =
        chainBuilder.create<func::CallOp>(loc, stage, callOperands).getResult(0);
    activation = result;
  }
  chainBuilder.create<func::ReturnOp>(loc, chainValue);
  return cut;
}
