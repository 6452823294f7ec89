//===- ControlFlow.cpp - cond, while_loop, fori_loop, scan ----------------===//
//
// Each primitive traces the user's callables into detached blocks, one per
// region, inside a Scope. Tensors of enclosing scopes that a callable uses
// are captured as extra block arguments as they are encountered
// (TraceState::use), so only after tracing is the full operand list known;
// the region op is then built with the user's operands followed by the
// captured ones, and the blocks are moved into its regions.
//
// Loops have no operands besides their carried values, so a captured value
// becomes an extra carried value that the body yields back unchanged; the
// results for those extra values are dropped.
//
// If a callable throws, RegionScope's destructor closes the scope and
// deletes the detached blocks, so the enclosing IR is left as it was.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include "kiln/Tracer/ControlFlow.h"

#include "mlir/IR/Region.h"

#include <limits>

namespace kiln {
namespace detail {

void throwArityError(const char *what, size_t expected, size_t got,
                     SourceLoc loc) {
  fail(loc, std::string(what) + " takes " + std::to_string(expected) +
                " tensor(s) but is called with " + std::to_string(got));
}

namespace {

/// The detached regions of one control-flow op under construction, and the
/// scope they are traced in. Opening pushes the scope; destruction pops it
/// (if still open) and frees whatever was not moved into an op.
class RegionScope {
public:
  RegionScope(TraceState &state, ScopeKind kind, unsigned numBlocks,
              llvm::ArrayRef<mlir::Type> argTypes, mlir::Location loc)
      : state(state) {
    scope.kind = kind;
    scope.fixedArgs = argTypes.size();
    for (unsigned i = 0; i < numBlocks; ++i) {
      auto region = std::make_unique<mlir::Region>();
      auto *block = new mlir::Block();
      region->push_back(block);
      for (mlir::Type type : argTypes)
        block->addArgument(type, loc);
      scope.blocks.push_back(block);
      regions.push_back(std::move(region));
    }
    state.pushScope(scope);
  }

  ~RegionScope() {
    close();
    // Ops of an abandoned region may use each other's results; drop those
    // uses first so the blocks can be freed in any order.
    for (auto &region : regions)
      region->dropAllReferences();
  }

  RegionScope(const RegionScope &) = delete;
  RegionScope &operator=(const RegionScope &) = delete;

  /// Starts tracing block `index`; returns its non-capture arguments.
  Tensors enter(unsigned index) {
    state.enterBlock(scope, index);
    Tensors args;
    for (unsigned i = 0; i < scope.fixedArgs; ++i)
      args.push_back(state.wrap(scope.block()->getArgument(i)));
    return args;
  }

  /// The block arguments of the current block that stand for captures, in
  /// capture order: what a loop body yields to pass them through.
  llvm::SmallVector<mlir::Value> captureArguments() const {
    llvm::SmallVector<mlir::Value> args;
    for (unsigned k = 0; k < scope.captured.size(); ++k)
      args.push_back(scope.block()->getArgument(scope.fixedArgs + k));
    return args;
  }

  /// Ends tracing; the builder returns to the enclosing block.
  void close() {
    if (open) {
      state.popScope(scope);
      open = false;
    }
  }

  /// Moves block `index` into `target`, a region of the built op.
  void moveInto(unsigned index, mlir::Region &target) {
    target.takeBody(*regions[index]);
  }

  Scope scope;

private:
  TraceState &state;
  llvm::SmallVector<std::unique_ptr<mlir::Region>, 2> regions;
  bool open = true;
};

/// `f32[3,4]` for a tensor type, as in the rest of the API's messages.
std::string describe(mlir::Type type) {
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  return std::string(dtypeName(dtypeOf(tensor.getElementType()))) +
         shapeString(Shape(tensor.getShape().begin(), tensor.getShape().end()));
}

/// The trace all of `tensors` belong to (checked), or the active one.
TraceState &traceOfAll(const Tensors &tensors, SourceLoc loc,
                       const char *what) {
  std::vector<Operand> operands;
  for (const Tensor &t : tensors)
    operands.emplace_back(t, loc);
  std::vector<const Operand *> pointers;
  for (const Operand &operand : operands)
    pointers.push_back(&operand);
  return TraceState::of(pointers, loc, what);
}

llvm::SmallVector<mlir::Value> useAll(TraceState &state,
                                      const Tensors &tensors, SourceLoc loc) {
  llvm::SmallVector<mlir::Value> values;
  for (const Tensor &t : tensors)
    values.push_back(state.use(t, loc));
  return values;
}

llvm::SmallVector<mlir::Type> typesOf(llvm::ArrayRef<mlir::Value> values) {
  llvm::SmallVector<mlir::Type> types;
  for (mlir::Value v : values)
    types.push_back(v.getType());
  return types;
}

/// Checks that a loop body returned values of the carried types.
void checkCarried(llvm::ArrayRef<mlir::Type> expected, const Tensors &got,
                  const char *what, SourceLoc loc) {
  if (got.size() != expected.size())
    fail(loc, std::string(what) + ": the body returns " +
                  std::to_string(got.size()) +
                  " values but the loop carries " +
                  std::to_string(expected.size()));
  for (size_t i = 0; i < got.size(); ++i) {
    Shape shape = got[i].shape();
    std::string gotText =
        std::string(dtypeName(got[i].dtype())) + shapeString(shape);
    if (!got[i].defined() || gotText != describe(expected[i]))
      fail(loc, std::string(what) + ": carried value #" + std::to_string(i) +
                    " enters the loop as " + describe(expected[i]) +
                    " but the body returns " +
                    (got[i].defined() ? gotText : "an empty tensor") +
                    "; a loop must keep the shape and dtype of each carried "
                    "value (use kiln::cast or kiln::broadcast_to)");
  }
}

void yield(TraceState &state, llvm::ArrayRef<mlir::Value> values,
           SourceLoc loc) {
  state.getBuilder().create<mlir::kiln::YieldOp>(state.location(loc),
                                                 mlir::ValueRange(values));
}

} // namespace

Tensors condImpl(const Tensor &pred, const RegionFn &thenFn,
                 const RegionFn &elseFn, const Tensors &operands,
                 SourceLoc loc) {
  Tensors all = operands;
  all.push_back(pred);
  TraceState &state = traceOfAll(all, loc, "kiln::cond");
  if (pred.dtype() != DType::I1 || pred.rank() != 0)
    fail(loc, std::string("kiln::cond needs a rank-0 bool (i1) predicate, "
                          "got ") +
                  dtypeName(pred.dtype()) + shapeString(pred.shape()) +
                  ". Compare to get a bool (e.g. x > 0); reduce a bool "
                  "tensor to one value first (e.g. kiln::max(kiln::cast(p, "
                  "kiln::DType::I32)) > 0 for 'any'); or use kiln::where for "
                  "an elementwise choice");
  mlir::Value p = state.use(pred, loc);
  llvm::SmallVector<mlir::Value> inputs = useAll(state, operands, loc);
  mlir::Location location = state.location(loc);

  RegionScope regions(state, ScopeKind::Cond, 2, typesOf(inputs), location);
  Tensors thenResults = thenFn(regions.enter(0));
  llvm::SmallVector<mlir::Value> thenValues =
      useAll(state, thenResults, loc);
  yield(state, thenValues, loc);
  Tensors elseResults = elseFn(regions.enter(1));
  llvm::SmallVector<mlir::Value> elseValues =
      useAll(state, elseResults, loc);
  yield(state, elseValues, loc);

  if (thenValues.size() != elseValues.size())
    fail(loc, "kiln::cond: the then branch returns " +
                  std::to_string(thenValues.size()) +
                  " values but the else branch returns " +
                  std::to_string(elseValues.size()));
  for (size_t i = 0; i < thenValues.size(); ++i)
    if (thenValues[i].getType() != elseValues[i].getType())
      fail(loc, "kiln::cond: result #" + std::to_string(i) + " is " +
                    describe(thenValues[i].getType()) +
                    " in the then branch but " +
                    describe(elseValues[i].getType()) +
                    " in the else branch; both branches must return the same "
                    "shapes and dtypes (use kiln::cast or kiln::broadcast_to)");
  regions.close();

  llvm::append_range(inputs, regions.scope.captured);
  auto op = state.getBuilder().create<mlir::kiln::CondOp>(
      location, mlir::TypeRange(typesOf(thenValues)), p,
      mlir::ValueRange(inputs));
  regions.moveInto(0, op.getThenRegion());
  regions.moveInto(1, op.getElseRegion());
  state.verifyCreated(op, loc);

  Tensors results;
  for (mlir::Value result : op.getResults())
    results.push_back(state.wrap(result));
  return results;
}

Tensors whileImpl(const PredicateFn &condFn, const RegionFn &bodyFn,
                  const Tensors &init, SourceLoc loc) {
  TraceState &state = traceOfAll(init, loc, "kiln::while_loop");
  if (init.empty())
    fail(loc, "kiln::while_loop needs at least one loop-carried value (kiln "
              "ops have no side effects, so a loop without one computes "
              "nothing)");
  llvm::SmallVector<mlir::Value> inits = useAll(state, init, loc);
  llvm::SmallVector<mlir::Type> types = typesOf(inits);
  mlir::Location location = state.location(loc);

  RegionScope regions(state, ScopeKind::While, 2, types, location);
  Tensor pred = condFn(regions.enter(0));
  mlir::Value p = state.use(pred, loc);
  if (pred.dtype() != DType::I1 || pred.rank() != 0)
    fail(loc, std::string("kiln::while_loop: the condition must return a "
                          "rank-0 bool (i1), got ") +
                  dtypeName(pred.dtype()) + shapeString(pred.shape()) +
                  "; compare (e.g. err > tol) and reduce to one value");
  yield(state, p, loc);

  Tensors next = bodyFn(regions.enter(1));
  checkCarried(types, next, "kiln::while_loop", loc);
  llvm::SmallVector<mlir::Value> nextValues = useAll(state, next, loc);
  llvm::append_range(nextValues, regions.captureArguments());
  yield(state, nextValues, loc);
  regions.close();

  llvm::append_range(inits, regions.scope.captured);
  auto op = state.getBuilder().create<mlir::kiln::WhileOp>(
      location, mlir::TypeRange(typesOf(inits)), mlir::ValueRange(inits));
  regions.moveInto(0, op.getCondRegion());
  regions.moveInto(1, op.getBodyRegion());
  state.verifyCreated(op, loc);

  Tensors results;
  for (size_t i = 0; i < init.size(); ++i)
    results.push_back(state.wrap(op.getResult(i)));
  return results;
}

/// hi - lo iterations, 0 if hi <= lo; throws if the count overflows.
static int64_t tripCount(int64_t lo, int64_t hi, SourceLoc loc) {
  if (hi <= lo)
    return 0;
  uint64_t count = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(loc, "kiln::fori_loop: the trip count from " + std::to_string(lo) +
                  " to " + std::to_string(hi) + " does not fit in i64");
  return static_cast<int64_t>(count);
}

Tensors foriImpl(int64_t lo, int64_t hi, const LoopBodyFn &bodyFn,
                 const Tensors &init, SourceLoc loc) {
  TraceState &state = traceOfAll(init, loc, "kiln::fori_loop");
  if (init.empty())
    fail(loc, "kiln::fori_loop needs at least one loop-carried value (kiln "
              "ops have no side effects, so a loop without one computes "
              "nothing)");
  int64_t trips = tripCount(lo, hi, loc);
  llvm::SmallVector<mlir::Value> inits = useAll(state, init, loc);
  llvm::SmallVector<mlir::Type> types = typesOf(inits);
  llvm::SmallVector<mlir::Type> argTypes{
      tensorType(state.getContext(), {}, DType::I64)};
  llvm::append_range(argTypes, types);
  mlir::Location location = state.location(loc);

  RegionScope regions(state, ScopeKind::For, 1, argTypes, location);
  Tensors args = regions.enter(0);
  // kiln.for counts from 0; the user sees lo, lo + 1, ...
  Tensor i = lo == 0 ? args[0] : add(args[0], lo, loc);
  Tensors next = bodyFn(i, Tensors(args.begin() + 1, args.end()));
  checkCarried(types, next, "kiln::fori_loop", loc);
  llvm::SmallVector<mlir::Value> nextValues = useAll(state, next, loc);
  llvm::append_range(nextValues, regions.captureArguments());
  yield(state, nextValues, loc);
  regions.close();

  llvm::append_range(inits, regions.scope.captured);
  auto op = state.getBuilder().create<mlir::kiln::ForOp>(
      location, mlir::TypeRange(typesOf(inits)), mlir::ValueRange(inits),
      static_cast<uint64_t>(trips));
  regions.moveInto(0, op.getBodyRegion());
  state.verifyCreated(op, loc);

  Tensors results;
  for (size_t k = 0; k < init.size(); ++k)
    results.push_back(state.wrap(op.getResult(k)));
  return results;
}

ScanResult scanImpl(const ScanFn &fn, const Tensors &init, const Tensors &xs,
                    int64_t length, SourceLoc loc) {
  Tensors all = init;
  all.insert(all.end(), xs.begin(), xs.end());
  TraceState &state = traceOfAll(all, loc, "kiln::scan");

  // The number of steps: the common leading dimension of xs, or `length`.
  int64_t steps = length;
  for (size_t k = 0; k < xs.size(); ++k) {
    if (xs[k].rank() < 1)
      fail(loc, "kiln::scan: xs #" + std::to_string(k) +
                    " is rank 0; scanned inputs are sliced along axis 0");
    int64_t n = xs[k].shape()[0];
    if (k == 0 && length < 0)
      steps = n;
    if (n != steps)
      fail(loc, "kiln::scan: xs #" + std::to_string(k) + " has leading "
                    "dimension " + std::to_string(n) + " but the scan has " +
                    std::to_string(steps) + " steps");
  }
  if (steps < 0)
    fail(loc, "kiln::scan needs xs to scan over or a length >= 0");

  llvm::SmallVector<mlir::Value> inits = useAll(state, init, loc);
  llvm::SmallVector<mlir::Type> types = typesOf(inits);
  llvm::SmallVector<mlir::Type> argTypes{
      tensorType(state.getContext(), {}, DType::I64)};
  llvm::append_range(argTypes, types);
  mlir::Location location = state.location(loc);

  RegionScope regions(state, ScopeKind::For, 1, argTypes, location);
  Tensors args = regions.enter(0);
  const Tensor &index = args[0];
  Tensors slices;
  for (const Tensor &x : xs) {
    Shape rowShape(x.shape().begin() + 1, x.shape().end());
    // With zero steps the body never runs; a placeholder avoids gathering
    // from an empty table, which kiln.gather rejects.
    slices.push_back(steps ? gather(x, index, loc)
                           : zeros(rowShape, x.dtype(), loc));
  }
  std::pair<Tensors, Tensors> step =
      fn(Tensors(args.begin() + 1, args.end()), slices);
  checkCarried(types, step.first, "kiln::scan", loc);
  llvm::SmallVector<mlir::Value> nextValues = useAll(state, step.first, loc);
  llvm::SmallVector<mlir::Value> ys = useAll(state, step.second, loc);

  // Stack y_t into a buffer carried through the loop. Without a dynamic
  // update op, row t is written by selecting y_t where iota == t and the old
  // buffer elsewhere: each step touches the whole buffer.
  llvm::SmallVector<mlir::Type> bufferTypes;
  mlir::Value rowMask;
  if (!ys.empty()) {
    mlir::Value i = state.use(index, loc);
    mlir::RankedTensorType rowsType =
        tensorType(state.getContext(), {steps}, DType::I64);
    mlir::Value rows =
        state.create<mlir::kiln::IotaOp>(loc, rowsType, uint64_t(0))
            .getResult();
    rowMask =
        compareValue(state, mlir::kiln::CompareDirection::eq, rows,
                     broadcastValue(state, i, {steps}, loc), loc);
  }
  for (mlir::Value y : ys) {
    mlir::RankedTensorType yType = typeOf(y);
    Shape bufferShape{steps};
    bufferShape.insert(bufferShape.end(), yType.getShape().begin(),
                       yType.getShape().end());
    auto bufferType =
        mlir::RankedTensorType::get(bufferShape, yType.getElementType());
    bufferTypes.push_back(bufferType);
    mlir::Value buffer =
        state.addFixedArgument(regions.scope, bufferType, location);
    mlir::Value mask = rowMask;
    if (yType.getRank() > 0)
      mask = state
                 .create<mlir::kiln::BroadcastInDimOp>(
                     loc,
                     tensorType(state.getContext(), bufferShape, DType::I1),
                     rowMask, llvm::ArrayRef<int64_t>{0})
                 .getResult();
    mlir::Value row = broadcastValue(state, y, bufferShape, loc);
    nextValues.push_back(selectValue(state, mask, row, buffer, loc));
  }
  llvm::append_range(nextValues, regions.captureArguments());
  yield(state, nextValues, loc);
  regions.close();

  // Nothing carried and nothing stacked: the scan has no result.
  if (init.empty() && ys.empty())
    return {};

  for (mlir::Type bufferType : bufferTypes) {
    auto type = llvm::cast<mlir::RankedTensorType>(bufferType);
    inits.push_back(splat(state, 0, dtypeOf(type.getElementType()),
                          type.getShape(), loc));
  }
  llvm::append_range(inits, regions.scope.captured);
  auto op = state.getBuilder().create<mlir::kiln::ForOp>(
      location, mlir::TypeRange(typesOf(inits)), mlir::ValueRange(inits),
      static_cast<uint64_t>(steps));
  regions.moveInto(0, op.getBodyRegion());
  state.verifyCreated(op, loc);

  ScanResult result;
  for (size_t k = 0; k < init.size(); ++k)
    result.carry.push_back(state.wrap(op.getResult(k)));
  for (size_t k = 0; k < ys.size(); ++k)
    result.ys.push_back(state.wrap(op.getResult(init.size() + k)));
  return result;
}

} // namespace detail
} // namespace kiln
