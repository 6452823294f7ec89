//===- ControlFlowOps.cpp - ONNX If, Loop and Scan ------------------------===//
//
// ONNX subgraphs read values of the enclosing graphs by name; kiln's
// regions are isolated from above. Each subgraph therefore gets its
// captured names (Importer::collectCapturedNames): constants are cloned into
// the region, other values become region inputs (kiln.cond) or loop-carried
// values passed through unchanged (kiln.for, kiln.while).
//
//  - If: kiln.cond; with a constant condition, the chosen branch is imported
//    in place.
//  - Loop: with a constant trip count and no data-dependent exit (no
//    condition input, or a constant true one, and a body whose condition
//    output is constant true), kiln.for, whose gradient needs no stack;
//    scan outputs are then preallocated [trip count, ...] buffers written
//    with kiln.dynamic_update_slice. Otherwise kiln.while, which carries the
//    iteration number and the condition; scan outputs have no static shape
//    there and are rejected.
//  - Scan: kiln.for over the scan axis; inputs are read with
//    kiln.dynamic_slice (from the end for reverse directions) and outputs
//    written like Loop's. Scan-8's batch dim is unrolled.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

const onnx::GraphProto *graphAttr(NodeContext &ctx, StringRef name) {
  const onnx::AttributeProto *a = ctx.attr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

/// The captured values of `graphs`: constants are left to bindCaptures,
/// the others returned. Fails if a name is undefined.
FailureOr<std::vector<std::pair<std::string, Value>>>
collectCaptures(NodeContext &ctx, ArrayRef<const onnx::GraphProto *> graphs,
                std::vector<std::string> &names) {
  for (const onnx::GraphProto *g : graphs)
    for (const std::string &name : Importer::collectCapturedNames(*g))
      if (!llvm::is_contained(names, name))
        names.push_back(name);
  std::vector<std::pair<std::string, Value>> passed;
  for (const std::string &name : names) {
    Value v = ctx.scope.lookupLocal(name);
    if (!v) {
      (void)ctx.fail("a subgraph uses '" + name + "', which is not defined");
      return failure();
    }
    if (!v.getDefiningOp<ConstantOp>())
      passed.emplace_back(name, v);
  }
  return passed;
}

/// Binds the captures in a region's scope: constants cloned at the
/// builder's insertion point, the others to new block arguments.
void bindCaptures(NodeContext &ctx, Block *block, Scope &inner,
                  ArrayRef<std::string> names,
                  ArrayRef<std::pair<std::string, Value>> passed) {
  for (const std::string &name : names) {
    Value v = ctx.scope.lookupLocal(name);
    if (auto c = v.getDefiningOp<ConstantOp>())
      inner.bind(name, ctx.b.clone(*c)->getResult(0));
  }
  for (const auto &[name, v] : passed)
    inner.bind(name, block->addArgument(v.getType(), ctx.loc));
}

/// Binds a subgraph input to `value`, reshaped to the rank the subgraph
/// declares when that differs by a unit dim ([] vs [1]).
void bindInput(NodeContext &ctx, Scope &inner, const onnx::ValueInfoProto &info,
               Value value) {
  const onnx::TypeProto &type = info.type();
  if (type.has_tensor_type() && type.tensor_type().has_shape()) {
    const onnx::TensorShapeProto &shape = type.tensor_type().shape();
    if (shape.dim_size() != rankOf(value) &&
        numElementsOf(shapeOf(value)) == 1) {
      SmallVector<int64_t> dims(shape.dim_size(), 1);
      value = reshape(ctx.b, ctx.loc, value, dims);
    }
  }
  inner.bind(info.name(), value);
}

/// The outputs of a subgraph imported into `inner`.
FailureOr<SmallVector<Value>> graphOutputs(NodeContext &ctx,
                                           const onnx::GraphProto &g,
                                           Scope &inner) {
  SmallVector<Value> outputs;
  for (const onnx::ValueInfoProto &out : g.output()) {
    Value v = inner.lookupLocal(out.name());
    if (!v) {
      (void)ctx.fail("subgraph output '" + out.name() + "' is not computed");
      return failure();
    }
    outputs.push_back(v);
  }
  return outputs;
}

/// The name of a graph input that `v` is computed from, if any. Where a
/// value kiln needs as a constant comes from the model's inputs, the error
/// names that input, which a caller can then bind to a value
/// (OnnxImportOptions::boundInputs).
std::optional<std::string> graphInputFeeding(Value v) {
  SmallVector<Value> worklist{v};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(current)) {
      if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
        if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                          "kiln.name"))
          return name.str();
      continue;
    }
    llvm::append_range(worklist, current.getDefiningOp()->getOperands());
  }
  return std::nullopt;
}

bool isConstantTrue(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  return dense && dense.getElementType().isInteger(1) &&
         llvm::all_of(dense.getValues<bool>(), [](bool b) { return b; });
}


LogicalResult ifOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  const onnx::GraphProto *thenGraph = graphAttr(ctx, "then_branch");
  const onnx::GraphProto *elseGraph = graphAttr(ctx, "else_branch");
  if (!thenGraph || !elseGraph)
    return ctx.fail("then_branch and else_branch are required");
  Value cond = ctx.input(0);
  if (!isBool(cond) || numElementsOf(shapeOf(cond)) != 1)
    return ctx.fail("the condition must be a single bool");
  OpBuilder &b = ctx.b;

  // A constant condition: the chosen branch, in place.
  if (auto c = cond.getDefiningOp<ConstantOp>()) {
    bool taken = *llvm::cast<DenseElementsAttr>(c.getValue()).getValues<bool>().begin();
    const onnx::GraphProto &g = taken ? *thenGraph : *elseGraph;
    Scope inner(&ctx.scope);
    for (const std::string &name : Importer::collectCapturedNames(g))
      if (Value v = ctx.scope.lookupLocal(name))
        inner.bind(name, v);
    if (failed(ctx.importer.importInitializers(g, inner)) ||
        failed(ctx.importer.importNodes(g, inner)))
      return failure();
    FailureOr<SmallVector<Value>> outs = graphOutputs(ctx, g, inner);
    if (failed(outs))
      return failure();
    return ctx.setResults(*outs);
  }

  std::vector<std::string> names;
  FailureOr<std::vector<std::pair<std::string, Value>>> passed =
      collectCaptures(ctx, {thenGraph, elseGraph}, names);
  if (failed(passed))
    return failure();
  SmallVector<Value> inputs;
  for (const auto &p : *passed)
    inputs.push_back(p.second);

  OpBuilder::InsertPoint saved = b.saveInsertionPoint();
  SmallVector<std::unique_ptr<Block>> blocks;
  SmallVector<SmallVector<Value>> branchOutputs;
  for (const onnx::GraphProto *g : {thenGraph, elseGraph}) {
    auto block = std::make_unique<Block>();
    b.setInsertionPointToStart(block.get());
    Scope inner(&ctx.scope);
    bindCaptures(ctx, block.get(), inner, names, *passed);
    if (failed(ctx.importer.importInitializers(*g, inner)) ||
        failed(ctx.importer.importNodes(*g, inner)))
      return failure();
    FailureOr<SmallVector<Value>> outs = graphOutputs(ctx, *g, inner);
    if (failed(outs))
      return failure();
    branchOutputs.push_back(*outs);
    blocks.push_back(std::move(block));
  }
  if (branchOutputs[0].size() != branchOutputs[1].size())
    return ctx.fail("the branches have different numbers of outputs");
  SmallVector<Type> types;
  for (size_t i = 0; i < branchOutputs[0].size(); ++i) {
    Type t = branchOutputs[0][i].getType(), e = branchOutputs[1][i].getType();
    if (t != e)
      return ctx.fail("output " + Twine(i) + " is " + typeString(t) +
                      " in then_branch but " + typeString(e) +
                      " in else_branch; kiln needs one static type");
    types.push_back(t);
  }
  for (size_t k = 0; k < 2; ++k) {
    b.setInsertionPointToEnd(blocks[k].get());
    b.create<YieldOp>(ctx.loc, branchOutputs[k]);
  }
  b.restoreInsertionPoint(saved);
  Value pred = reshape(b, ctx.loc, cond, {});
  auto op = b.create<CondOp>(ctx.loc, types, pred, inputs);
  op.getThenRegion().push_back(blocks[0].release());
  op.getElseRegion().push_back(blocks[1].release());
  return ctx.setResults(SmallVector<Value>(op.getResults()));
}

/// Imports a Loop/Scan body into `block` (whose leading arguments the
/// caller has bound in `inner`), captures appended as block arguments.
FailureOr<SmallVector<Value>>
importBody(NodeContext &ctx, const onnx::GraphProto &body, Block *block,
           Scope &inner, ArrayRef<std::string> names,
           ArrayRef<std::pair<std::string, Value>> passed) {
  bindCaptures(ctx, block, inner, names, passed);
  if (failed(ctx.importer.importInitializers(body, inner)) ||
      failed(ctx.importer.importNodes(body, inner)))
    return failure();
  return graphOutputs(ctx, body, inner);
}

/// A [trip, ...] buffer's next value: `value` written at row `index`.
Value writeRow(OpBuilder &b, Location loc, Value buffer, Value value,
               Value index) {
  SmallVector<int64_t> row{1};
  row.append(shapeOf(value).begin(), shapeOf(value).end());
  return b.create<DynamicUpdateSliceOp>(loc, buffer,
                                        reshape(b, loc, value, row), index);
}

/// Scan outputs of a kiln.for body: for each value of `scanned` (computed
/// in `body`), a zero [trip, ...] buffer made at `outside` joins `inits`, a
/// block argument of `body` carries it, and the value written at the row
/// `rowOf(k)` joins `yields`. The builder is left at the end of `body`.
void addScanOutputs(OpBuilder &b, Location loc, OpBuilder::InsertPoint outside,
                    Block *body, int64_t trip, ValueRange scanned,
                    llvm::function_ref<Value(unsigned)> rowOf,
                    SmallVectorImpl<Value> &inits,
                    SmallVectorImpl<Value> &yields) {
  SmallVector<Value> buffers;
  b.restoreInsertionPoint(outside);
  for (Value out : scanned) {
    SmallVector<int64_t> shape{trip};
    shape.append(shapeOf(out).begin(), shapeOf(out).end());
    buffers.push_back(
        splat(b, loc, RankedTensorType::get(shape, elementTypeOf(out)), 0));
  }
  b.setInsertionPointToEnd(body);
  for (auto [k, out] : llvm::enumerate(scanned)) {
    Value buffer = body->addArgument(buffers[k].getType(), loc);
    inits.push_back(buffers[k]);
    yields.push_back(writeRow(b, loc, buffer, out, rowOf(k)));
  }
}

/// Row `index` of a [trip, ...] tensor, without the leading dim.
Value readRow(OpBuilder &b, Location loc, Value tensor, Value index) {
  Value row = b.create<DynamicSliceOp>(loc, tensor, index, uint64_t(1));
  return reshape(b, loc, row, shapeOf(tensor).drop_front());
}

Value i64Scalar(OpBuilder &b, Location loc, int64_t v) {
  return constantInts(b, loc, b.getI64Type(), {}, {v});
}

/// trip - 1 - index, for reverse directions.
Value reversedIndex(OpBuilder &b, Location loc, Value index, int64_t trip) {
  return b.create<SubOp>(loc, i64Scalar(b, loc, trip - 1), index);
}

LogicalResult loopAsFor(NodeContext &ctx, const onnx::GraphProto &body,
                        int64_t trip, bool &dynamicExit) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  unsigned numCarried = ctx.numInputs() - 2;
  std::vector<std::string> names;
  FailureOr<std::vector<std::pair<std::string, Value>>> passed =
      collectCaptures(ctx, {&body}, names);
  if (failed(passed))
    return failure();

  OpBuilder::InsertPoint saved = b.saveInsertionPoint();
  auto block = std::make_unique<Block>();
  Value index = block->addArgument(RankedTensorType::get({}, b.getI64Type()),
                                   loc);
  SmallVector<Value> carriedArgs;
  for (unsigned i = 0; i < numCarried; ++i)
    carriedArgs.push_back(
        block->addArgument(ctx.input(2 + i).getType(), loc));
  b.setInsertionPointToStart(block.get());
  Scope inner(&ctx.scope);
  bindInput(ctx, inner, body.input(0), index);
  Value alwaysTrue = splat(b, loc, RankedTensorType::get({}, b.getI1Type()), 1);
  bindInput(ctx, inner, body.input(1), alwaysTrue);
  for (unsigned i = 0; i < numCarried; ++i)
    bindInput(ctx, inner, body.input(2 + i), carriedArgs[i]);
  FailureOr<SmallVector<Value>> outs =
      importBody(ctx, body, block.get(), inner, names, *passed);
  if (failed(outs))
    return failure();
  if (!isConstantTrue((*outs)[0])) {
    b.restoreInsertionPoint(saved);
    dynamicExit = true;
    return success();
  }
  SmallVector<Value> inits, yields;
  for (unsigned i = 0; i < numCarried; ++i) {
    Value next = (*outs)[1 + i];
    if (next.getType() != ctx.input(2 + i).getType())
      return ctx.fail("loop-carried value " + Twine(i) + " changes type from " +
                      typeString(ctx.input(2 + i).getType()) + " to " +
                      typeString(next.getType()));
    inits.push_back(ctx.input(2 + i));
    yields.push_back(next);
  }
  for (unsigned i = 0; i < passed->size(); ++i) {
    inits.push_back((*passed)[i].second);
    yields.push_back(block->getArgument(1 + numCarried + i));
  }
  // Scan outputs: [trip, ...] buffers.
  unsigned numScan = outs->size() - 1 - numCarried;
  addScanOutputs(b, loc, saved, block.get(), trip,
                 ValueRange(*outs).drop_front(1 + numCarried),
                 [&](unsigned) { return index; }, inits, yields);
  b.create<YieldOp>(loc, yields);
  b.restoreInsertionPoint(saved);
  auto op = b.create<ForOp>(loc, inits, static_cast<uint64_t>(trip));
  op.getBodyRegion().push_back(block.release());
  SmallVector<Value> results(op.getResults().take_front(numCarried));
  for (unsigned k = 0; k < numScan; ++k)
    results.push_back(op.getResult(inits.size() - numScan + k));
  return ctx.setResults(results);
}

LogicalResult loopAsWhile(NodeContext &ctx, const onnx::GraphProto &body) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  unsigned numCarried = ctx.numInputs() - 2;
  if (body.output_size() != static_cast<int>(1 + numCarried)) {
    // Scan outputs need a constant trip count: name a graph input that M
    // or the condition is computed from.
    for (unsigned i = 0; i < 2; ++i)
      if (ctx.hasInput(i) && !ctx.input(i).getDefiningOp<ConstantOp>())
        if (std::optional<std::string> name = graphInputFeeding(ctx.input(i)))
          return ctx.fail("the loop has scan outputs, which need a constant "
                          "trip count and condition, but " +
                          Twine(i == 0 ? "M" : "cond") +
                          " is computed from a graph input, and input '" +
                          *name + "' ('" + *name +
                          "') is computed at run time; kiln needs it as a "
                          "constant");
    return ctx.fail("scan outputs of a loop with a data-dependent trip count "
                    "have no static shape; kiln supports them only when the "
                    "trip count is a constant and the loop has no condition");
  }
  std::vector<std::string> names;
  FailureOr<std::vector<std::pair<std::string, Value>>> passed =
      collectCaptures(ctx, {&body}, names);
  if (failed(passed))
    return failure();
  auto scalarI1 = RankedTensorType::get({}, b.getI1Type());

  // Carried: [iteration, keep going, max trip count?, values..., captures...]
  SmallVector<Value> inits{i64Scalar(b, loc, 0)};
  inits.push_back(ctx.hasInput(1) ? reshape(b, loc, ctx.input(1), {})
                                  : splat(b, loc, scalarI1, 1));
  Value maxTrip;
  if (ctx.hasInput(0))
    maxTrip = reshape(b, loc, cast(b, loc, ctx.input(0), b.getI64Type()), {});
  if (maxTrip)
    inits.push_back(maxTrip);
  unsigned firstValue = inits.size();
  for (unsigned i = 0; i < numCarried; ++i)
    inits.push_back(ctx.input(2 + i));
  for (const auto &p : *passed)
    inits.push_back(p.second);
  SmallVector<Type> types;
  for (Value v : inits)
    types.push_back(v.getType());
  SmallVector<Location> locs(types.size(), loc);

  OpBuilder::InsertPoint saved = b.saveInsertionPoint();
  auto condBlock = std::make_unique<Block>();
  condBlock->addArguments(types, locs);
  b.setInsertionPointToStart(condBlock.get());
  Value keepGoing = condBlock->getArgument(1);
  if (maxTrip) {
    Value below = b.create<CompareOp>(loc, CompareDirection::lt,
                                      condBlock->getArgument(0),
                                      condBlock->getArgument(2));
    keepGoing = b.create<SelectOp>(loc, keepGoing, below,
                                   splat(b, loc, scalarI1, 0));
  }
  b.create<YieldOp>(loc, keepGoing);

  auto bodyBlock = std::make_unique<Block>();
  SmallVector<Type> leading(types.begin(), types.begin() + firstValue + numCarried);
  SmallVector<Location> leadingLocs(leading.size(), loc);
  bodyBlock->addArguments(leading, leadingLocs);
  b.setInsertionPointToStart(bodyBlock.get());
  Scope inner(&ctx.scope);
  bindInput(ctx, inner, body.input(0), bodyBlock->getArgument(0));
  bindInput(ctx, inner, body.input(1), bodyBlock->getArgument(1));
  for (unsigned i = 0; i < numCarried; ++i)
    bindInput(ctx, inner, body.input(2 + i),
              bodyBlock->getArgument(firstValue + i));
  FailureOr<SmallVector<Value>> outs =
      importBody(ctx, body, bodyBlock.get(), inner, names, *passed);
  if (failed(outs))
    return failure();
  Value condOut = (*outs)[0];
  if (!isBool(condOut) || numElementsOf(shapeOf(condOut)) != 1)
    return ctx.fail("the body's condition output must be a single bool");
  SmallVector<Value> yields{
      b.create<AddOp>(loc, bodyBlock->getArgument(0), i64Scalar(b, loc, 1)),
      reshape(b, loc, condOut, {})};
  if (maxTrip)
    yields.push_back(bodyBlock->getArgument(2));
  for (unsigned i = 0; i < numCarried; ++i) {
    Value next = (*outs)[1 + i];
    if (next.getType() != ctx.input(2 + i).getType())
      return ctx.fail("loop-carried value " + Twine(i) + " changes type from " +
                      typeString(ctx.input(2 + i).getType()) + " to " +
                      typeString(next.getType()));
    yields.push_back(next);
  }
  for (unsigned i = 0; i < passed->size(); ++i)
    yields.push_back(bodyBlock->getArgument(firstValue + numCarried + i));
  b.create<YieldOp>(loc, yields);
  b.restoreInsertionPoint(saved);
  auto op = b.create<WhileOp>(loc, inits);
  op.getCondRegion().push_back(condBlock.release());
  op.getBodyRegion().push_back(bodyBlock.release());
  return ctx.setResults(
      SmallVector<Value>(op.getResults().slice(firstValue, numCarried)));
}

LogicalResult loopOp(NodeContext &ctx) {
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return ctx.fail("attribute 'body' is required");
  if (ctx.numInputs() < 2)
    return ctx.fail("Loop takes M and cond (possibly empty) first");
  unsigned numCarried = ctx.numInputs() - 2;
  for (unsigned i = 0; i < numCarried; ++i)
    if (!ctx.hasInput(2 + i))
      return ctx.fail("loop-carried input " + Twine(i) + " is missing");
  if (body->input_size() != static_cast<int>(2 + numCarried) ||
      body->output_size() < static_cast<int>(1 + numCarried))
    return ctx.fail("the body's inputs and outputs do not match the "
                    "loop-carried values");
  bool staticTrip = ctx.hasInput(0) && ctx.input(0).getDefiningOp<ConstantOp>() &&
                    (!ctx.hasInput(1) || isConstantTrue(ctx.input(1)));
  if (staticTrip) {
    FailureOr<SmallVector<int64_t>> trip = ctx.constantInts(0, "M");
    if (failed(trip))
      return failure();
    if (trip->size() != 1)
      return ctx.fail("M must be a scalar");
    int64_t count = std::max<int64_t>((*trip)[0], 0);
    bool dynamicExit = false;
    if (failed(loopAsFor(ctx, *body, count, dynamicExit)))
      return failure();
    if (!dynamicExit)
      return success();
  }
  return loopAsWhile(ctx, *body);
}

/// Scan over time-major inputs ([T, ...]): returns the final states and
/// the [T, ...] scan outputs.
LogicalResult emitScan(NodeContext &ctx, const onnx::GraphProto &body,
                       ArrayRef<Value> states, ArrayRef<Value> inputs,
                       ArrayRef<int64_t> inputReversed,
                       ArrayRef<int64_t> outputReversed, int64_t trip,
                       SmallVectorImpl<Value> &finalStates,
                       SmallVectorImpl<Value> &scanOutputs) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  std::vector<std::string> names;
  FailureOr<std::vector<std::pair<std::string, Value>>> passed =
      collectCaptures(ctx, {&body}, names);
  if (failed(passed))
    return failure();
  unsigned numStates = states.size(), numInputs = inputs.size();
  if (body.input_size() != static_cast<int>(numStates + numInputs) ||
      body.output_size() < static_cast<int>(numStates))
    return ctx.fail("the body's inputs and outputs do not match the states "
                    "and scan inputs");

  OpBuilder::InsertPoint saved = b.saveInsertionPoint();
  auto block = std::make_unique<Block>();
  Value index = block->addArgument(RankedTensorType::get({}, b.getI64Type()),
                                   loc);
  SmallVector<Value> stateArgs, inputArgs;
  for (Value s : states)
    stateArgs.push_back(block->addArgument(s.getType(), loc));
  for (Value in : inputs)
    inputArgs.push_back(block->addArgument(in.getType(), loc));
  b.setInsertionPointToStart(block.get());
  Scope inner(&ctx.scope);
  for (unsigned i = 0; i < numStates; ++i)
    bindInput(ctx, inner, body.input(i), stateArgs[i]);
  // trip - 1 - index, built once and only when a direction is reversed.
  Value reversed;
  if (llvm::is_contained(inputReversed, 1) ||
      llvm::is_contained(outputReversed, 1))
    reversed = reversedIndex(b, loc, index, trip);
  for (unsigned j = 0; j < numInputs; ++j)
    bindInput(ctx, inner, body.input(numStates + j),
              readRow(b, loc, inputArgs[j], inputReversed[j] ? reversed : index));
  FailureOr<SmallVector<Value>> outs =
      importBody(ctx, body, block.get(), inner, names, *passed);
  if (failed(outs))
    return failure();
  SmallVector<Value> inits(states.begin(), states.end()), yields;
  for (unsigned i = 0; i < numStates; ++i) {
    if ((*outs)[i].getType() != states[i].getType())
      return ctx.fail("state " + Twine(i) + " changes type from " +
                      typeString(states[i].getType()) + " to " +
                      typeString((*outs)[i].getType()));
    yields.push_back((*outs)[i]);
  }
  for (unsigned j = 0; j < numInputs; ++j) {
    inits.push_back(inputs[j]);
    yields.push_back(inputArgs[j]);
  }
  for (unsigned i = 0; i < passed->size(); ++i) {
    inits.push_back((*passed)[i].second);
    yields.push_back(block->getArgument(1 + numStates + numInputs + i));
  }
  unsigned numScan = outs->size() - numStates;
  if (outputReversed.size() < numScan)
    return ctx.fail("scan_output_directions has too few entries");
  addScanOutputs(b, loc, saved, block.get(), trip,
                 ValueRange(*outs).drop_front(numStates),
                 [&](unsigned k) { return outputReversed[k] ? reversed : index; },
                 inits, yields);
  b.create<YieldOp>(loc, yields);
  b.restoreInsertionPoint(saved);
  auto op = b.create<ForOp>(loc, inits, static_cast<uint64_t>(trip));
  op.getBodyRegion().push_back(block.release());
  for (unsigned i = 0; i < numStates; ++i)
    finalStates.push_back(op.getResult(i));
  for (unsigned k = 0; k < numScan; ++k)
    scanOutputs.push_back(op.getResult(inits.size() - numScan + k));
  return success();
}

/// Moves dim `from` of `v` to position `to`.
Value moveAxis(OpBuilder &b, Location loc, Value v, int64_t from, int64_t to) {
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rankOf(v); ++i)
    if (i != from)
      perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return transpose(b, loc, v, perm);
}

LogicalResult scanOp(NodeContext &ctx) {
  const onnx::GraphProto *body = graphAttr(ctx, "body");
  if (!body)
    return ctx.fail("attribute 'body' is required");
  int64_t numScanInputs = ctx.getInt("num_scan_inputs", -1);
  bool batched = ctx.version < 9;
  unsigned first = batched ? 1 : 0;
  if (batched && ctx.hasInput(0))
    return ctx.fail("sequence_lens is not supported");
  int64_t numStates = static_cast<int64_t>(ctx.numInputs()) - first -
                      numScanInputs;
  if (numScanInputs < 1 || numStates < 0)
    return ctx.fail("num_scan_inputs does not match the inputs");
  for (unsigned i = first; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is missing");
  SmallVector<int64_t> inAxes =
      ctx.getInts("scan_input_axes").value_or(SmallVector<int64_t>(numScanInputs, 0));
  SmallVector<int64_t> inDirs = ctx.getInts(batched ? "directions"
                                                    : "scan_input_directions")
                                    .value_or(SmallVector<int64_t>(numScanInputs, 0));
  int64_t numScanOutputs = body->output_size() - numStates;
  if (numScanOutputs < 0)
    return ctx.fail("the body has fewer outputs than states");
  SmallVector<int64_t> outAxes =
      ctx.getInts("scan_output_axes").value_or(SmallVector<int64_t>(numScanOutputs, 0));
  SmallVector<int64_t> outDirs =
      ctx.getInts("scan_output_directions")
          .value_or(SmallVector<int64_t>(numScanOutputs, 0));
  if (static_cast<int64_t>(inAxes.size()) != numScanInputs ||
      static_cast<int64_t>(inDirs.size()) != numScanInputs ||
      static_cast<int64_t>(outAxes.size()) != numScanOutputs ||
      static_cast<int64_t>(outDirs.size()) != numScanOutputs)
    return ctx.fail("the scan axis and direction lists have the wrong length");
  if (batched && (llvm::any_of(inAxes, [](int64_t a) { return a != 0; }) ||
                  llvm::any_of(outAxes, [](int64_t a) { return a != 0; })))
    return ctx.fail("Scan-8 takes no scan axes");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;

  SmallVector<Value> states, inputs;
  for (int64_t i = 0; i < numStates; ++i)
    states.push_back(ctx.input(first + i));
  for (int64_t j = 0; j < numScanInputs; ++j)
    inputs.push_back(ctx.input(first + numStates + j));

  // The time axis of each scan input, counted without Scan-8's batch dim.
  auto scanOnce = [&](ArrayRef<Value> st, ArrayRef<Value> in,
                      SmallVectorImpl<Value> &finalStates,
                      SmallVectorImpl<Value> &outs) -> LogicalResult {
    SmallVector<Value> timeMajor;
    int64_t trip = -1;
    for (int64_t j = 0; j < numScanInputs; ++j) {
      std::optional<int64_t> axis = normalizeAxis(inAxes[j], rankOf(in[j]));
      if (!axis)
        return ctx.fail("scan input axis is out of range");
      Value moved = moveAxis(b, loc, in[j], *axis, 0);
      if (trip >= 0 && shapeOf(moved)[0] != trip)
        return ctx.fail("the scan inputs have different lengths");
      trip = shapeOf(moved)[0];
      timeMajor.push_back(moved);
    }
    SmallVector<Value> buffers;
    if (failed(emitScan(ctx, *body, st, timeMajor, inDirs, outDirs, trip,
                        finalStates, buffers)))
      return failure();
    for (int64_t k = 0; k < numScanOutputs; ++k) {
      std::optional<int64_t> axis =
          normalizeAxis(outAxes[k], rankOf(buffers[k]));
      if (!axis)
        return ctx.fail("scan output axis is out of range");
      outs.push_back(moveAxis(b, loc, buffers[k], 0, *axis));
    }
    return success();
  };

  if (!batched) {
    SmallVector<Value> finalStates, outs;
    if (failed(scanOnce(states, inputs, finalStates, outs)))
      return failure();
    finalStates.append(outs);
    return ctx.setResults(finalStates);
  }
  // Scan-8: every input has a leading batch dim; one scan per batch entry.
  int64_t batch = -1;
  for (Value v : llvm::concat<Value>(states, inputs)) {
    if (rankOf(v) < 1 || (batch >= 0 && shapeOf(v)[0] != batch))
      return ctx.fail("the inputs disagree on the batch dim");
    batch = shapeOf(v)[0];
  }
  SmallVector<SmallVector<Value>> perResult(numStates + numScanOutputs);
  for (int64_t n = 0; n < batch; ++n) {
    auto entry = [&](Value v) {
      return reshape(b, loc, sliceAxis(b, loc, v, 0, n, n + 1),
                     shapeOf(v).drop_front());
    };
    SmallVector<Value> st, in, finalStates, outs;
    for (Value v : states)
      st.push_back(entry(v));
    for (Value v : inputs)
      in.push_back(entry(v));
    if (failed(scanOnce(st, in, finalStates, outs)))
      return failure();
    finalStates.append(outs);
    for (size_t r = 0; r < finalStates.size(); ++r) {
      SmallVector<int64_t> shape{1};
      shape.append(shapeOf(finalStates[r]).begin(),
                   shapeOf(finalStates[r]).end());
      perResult[r].push_back(reshape(b, loc, finalStates[r], shape));
    }
  }
  SmallVector<Value> results;
  for (auto &parts : perResult)
    results.push_back(concat(b, loc, parts, 0));
  return ctx.setResults(results);
}

} // namespace

void registerControlFlowOps(OpTable &table) {
  table.add("If", ifOp);
  table.add("Loop", loopOp);
  table.add("Scan", scanOp);
}

} // namespace onnx_import
} // namespace kiln
