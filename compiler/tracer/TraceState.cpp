//===- TraceState.cpp - The state of one trace being recorded -------------===//
//
// Scope bookkeeping, closure conversion of captured tensors, and the checks
// that a Tensor is used in the trace, thread and region it belongs to.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>

namespace kiln {
namespace detail {

namespace {
/// The traces being recorded on this thread, innermost last. A trace can be
/// started from inside another one's traced function; the inner one is
/// active until it returns.
thread_local std::vector<TraceState *> activeTraces;
} // namespace

TraceState::TraceState(const std::string &name,
                       llvm::ArrayRef<TensorSpec> inputs, SourceLoc loc,
                       std::shared_ptr<mlir::MLIRContext> shared)
    : sharedContext(std::move(shared)) {
  if (!sharedContext) {
    TraceState *outer = active();
    sharedContext = outer && !outer->finished
                        ? outer->sharedContext
                        : std::make_shared<mlir::MLIRContext>();
  }
  context = sharedContext.get();
  context->loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  // Collect diagnostics instead of printing them: they become part of the
  // TraceError message of whatever op produced them. On a shared context
  // the handler of the trace started last (the innermost) sees them first;
  // it is removed when its trace ends. A context shared with a trace on
  // another thread (through a TracedFunction) may see that thread's
  // diagnostics too; those are left to its handlers.
  diagnosticHandler.emplace(
      context,
      [this, thread = std::this_thread::get_id()](mlir::Diagnostic &diag) {
        if (std::this_thread::get_id() != thread)
          return mlir::failure();
        if (!diagnostics.empty())
          diagnostics += "\n";
        diagnostics += diag.str();
        for (const mlir::Diagnostic &note : diag.getNotes())
          diagnostics += "\nnote: " + note.str();
        return mlir::success();
      });
  builder.emplace(context);

  llvm::SmallVector<mlir::Type> argTypes;
  for (const TensorSpec &spec : inputs)
    argTypes.push_back(tensorType(context, spec.shape, spec.dtype));
  mlir::Location l = location(loc);
  module = mlir::ModuleOp::create(l);
  function = mlir::func::FuncOp::create(
      l, name, builder->getFunctionType(argTypes, {}));
  module->push_back(function);
  mlir::Block *entry = function.addEntryBlock();

  root.kind = ScopeKind::Function;
  root.blocks.push_back(entry);
  root.fixedArgs = argTypes.size();
  scopes.push_back(&root);
  enterBlock(root, 0);
}

TraceState::~TraceState() {
  if (!finished)
    discard();
}

TraceState *TraceState::active() {
  return activeTraces.empty() ? nullptr : activeTraces.back();
}

TraceState &TraceState::requireActive(SourceLoc loc, const char *what) {
  TraceState *state = active();
  if (!state || state->finished)
    fail(loc, std::string(what) +
                  " was called outside kiln::trace; tensors can only be "
                  "created while a function is being traced");
  return *state;
}

TraceState &TraceState::of(const Tensor &tensor, SourceLoc loc) {
  TraceState *state = tensor.state.get();
  if (!state)
    fail(loc, "use of an empty kiln::Tensor (default-constructed and never "
              "assigned)");
  if (state->finished)
    fail(loc, "this tensor belongs to a trace that has already finished (or "
              "failed); a Tensor is only valid during the kiln::trace call "
              "that created it. Pass the value into the new trace as an "
              "input, or recreate it with kiln::constant");
  if (state != active()) {
    TraceState *current = active();
    if (current && current->capturesFrom(state))
      return *current;
    fail(loc, "this tensor belongs to a different trace than the one being "
              "recorded on this thread; tensors cannot be shared between "
              "traces (pass the value in as an input instead)");
  }
  return *state;
}

bool TraceState::capturesFrom(const TraceState *state) const {
  for (const TraceState *outer = captureParent; outer;
       outer = outer->captureParent)
    if (outer == state)
      return true;
  return false;
}

mlir::Value TraceState::captureEnclosing(const Tensor &tensor,
                                         SourceLoc loc) {
  // A tensor from further out is first captured by the parent, whose
  // argument this function then captures.
  Tensor outer = tensor;
  if (tensor.state.get() != captureParent) {
    mlir::Value argument = captureParent->captureEnclosing(tensor, loc);
    outer = captureParent->wrap(argument);
    outer.frame = captureParent->root.frame;
  }
  auto [it, inserted] = functionCaptureIndex.try_emplace(
      outer.handle, static_cast<unsigned>(functionCaptures.size()));
  unsigned index = root.fixedArgs + it->second;
  if (inserted) {
    functionCaptures.push_back(outer);
    function.insertArgument(index, outer.handle.getType(), {}, location(loc));
  }
  return function.getArgument(index);
}

TraceState &TraceState::of(llvm::ArrayRef<const Operand *> operands,
                           SourceLoc loc, const char *what) {
  TraceState *state = nullptr;
  // Check every tensor, so that a stale or foreign one is reported as such
  // rather than as a shape mismatch further on.
  for (const Operand *operand : operands)
    if (operand->isTensor())
      state = &of(operand->tensor(), loc);
  return state ? *state : requireActive(loc, what);
}

void TraceState::pushActive() { activeTraces.push_back(this); }

void TraceState::popActive() {
  // Traces nest strictly (trace() pushes and pops around the user's
  // function), so this is the innermost one.
  if (!activeTraces.empty() && activeTraces.back() == this)
    activeTraces.pop_back();
}

/// The block argument standing for `value` (a value of the parent scope) in
/// the current block of `scope`, adding it to every block of the scope on
/// first use.
static mlir::Value capture(Scope &scope, mlir::Value value) {
  auto [it, inserted] =
      scope.captureIndex.try_emplace(value, scope.captured.size());
  if (inserted) {
    scope.captured.push_back(value);
    for (mlir::Block *block : scope.blocks)
      block->addArgument(value.getType(), value.getLoc());
  }
  return scope.block()->getArgument(scope.fixedArgs + it->second);
}

mlir::Value TraceState::use(const Tensor &tensor, SourceLoc loc) {
  TraceState &state = of(tensor, loc);
  if (&state != this)
    fail(loc, "internal error: tensor resolved against the wrong trace");
  if (tensor.state.get() != this) {
    // A closure over an enclosing trace: an extra input of this function,
    // threaded into the regions open now.
    mlir::Value value = captureEnclosing(tensor, loc);
    for (size_t l = 1; l < scopes.size(); ++l)
      value = capture(*scopes[l], value);
    return value;
  }
  size_t level = scopes.size();
  for (size_t i = scopes.size(); i-- > 0;) {
    if (scopes[i]->frame == tensor.frame) {
      level = i;
      break;
    }
  }
  if (level == scopes.size())
    fail(loc, "this tensor was created inside a kiln::cond, while_loop, "
              "fori_loop or scan region that is closed (or in the other "
              "branch of a cond); values leave a region only by being "
              "returned from its function");
  mlir::Value value = tensor.handle;
  for (size_t l = level + 1; l < scopes.size(); ++l)
    value = capture(*scopes[l], value);
  return value;
}

Tensor TraceState::wrap(mlir::Value value) {
  Tensor tensor;
  tensor.state = shared_from_this();
  tensor.handle = value;
  tensor.frame = innermost().frame;
  mlir::RankedTensorType type = typeOf(value);
  tensor.dims.assign(type.getShape().begin(), type.getShape().end());
  tensor.elementType = dtypeOf(type.getElementType());
  return tensor;
}

void TraceState::pushScope(Scope &scope) { scopes.push_back(&scope); }

void TraceState::popScope(Scope &scope) {
  if (scopes.size() < 2 || scopes.back() != &scope)
    return;
  scopes.pop_back();
  if (builder)
    builder->setInsertionPointToEnd(scopes.back()->block());
}

void TraceState::enterBlock(Scope &scope, unsigned index) {
  scope.current = index;
  scope.frame = nextFrame++;
  builder->setInsertionPointToEnd(scope.block());
}

mlir::BlockArgument TraceState::addFixedArgument(Scope &scope, mlir::Type type,
                                                 mlir::Location loc) {
  for (mlir::Block *block : scope.blocks)
    block->insertArgument(scope.fixedArgs, type, loc);
  ++scope.fixedArgs;
  return scope.block()->getArgument(scope.fixedArgs - 1);
}

mlir::Location TraceState::location(SourceLoc loc) {
  if (!loc.known())
    return mlir::UnknownLoc::get(context);
  return mlir::FileLineColLoc::get(context, loc.file, loc.line, loc.column);
}

void TraceState::verifyCreated(mlir::Operation *op, SourceLoc loc) {
  bool valid = mlir::succeeded(mlir::verify(op, /*verifyRecursively=*/false));
  // Region terminators are built before their op exists (a kiln.yield must
  // be inside a cond/while/for to verify), so they are checked here.
  for (mlir::Region &region : op->getRegions())
    for (mlir::Block &block : region)
      if (valid && !block.empty())
        valid = mlir::succeeded(
            mlir::verify(&block.back(), /*verifyRecursively=*/false));
  if (valid)
    return;
  std::string message = takeDiagnostics();
  op->dropAllUses();
  op->erase();
  fail(loc, "the recorded op is invalid (this is a bug in the tracer, which "
            "should have rejected the operands first): " +
                message);
}

std::string TraceState::takeDiagnostics() {
  std::string taken;
  taken.swap(diagnostics);
  return taken;
}

std::pair<std::shared_ptr<mlir::MLIRContext>, mlir::OwningOpRef<mlir::ModuleOp>>
TraceState::release() {
  finished = true;
  scopes.clear();
  builder.reset();
  diagnosticHandler.reset();
  context = nullptr;
  return {std::move(sharedContext), std::move(module)};
}

void TraceState::discard() {
  finished = true;
  scopes.clear();
  builder.reset();
  diagnosticHandler.reset();
  // The module before the context it lives in.
  module = nullptr;
  sharedContext.reset();
  context = nullptr;
}

} // namespace detail
} // namespace kiln
