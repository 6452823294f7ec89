//===- Trace.cpp - Recording a C++ function as kiln IR --------------------===//
//
// kiln::trace creates the function, runs the user's callable on its
// arguments with the trace active on this thread, and returns what it built.
// A trace that throws is discarded completely: the module is destroyed (and
// the context, unless shared) and every Tensor of it reports the trace as
// finished.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"

#include "kiln/Tracer/Trace.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

TracedFunction::TracedFunction(std::shared_ptr<mlir::MLIRContext> context,
                               mlir::OwningOpRef<mlir::ModuleOp> module,
                               std::string name, std::vector<TensorSpec> inputs,
                               std::vector<TensorSpec> outputs)
    : ownedContext(std::move(context)), ownedModule(std::move(module)),
      functionName(std::move(name)), inputs(std::move(inputs)),
      outputs(std::move(outputs)) {}

TracedFunction::TracedFunction(TracedFunction &&) noexcept = default;

TracedFunction &TracedFunction::operator=(TracedFunction &&other) noexcept {
  if (this != &other) {
    // The module must go before the context that owns its storage.
    ownedModule = std::move(other.ownedModule);
    ownedContext = std::move(other.ownedContext);
    functionName = std::move(other.functionName);
    inputs = std::move(other.inputs);
    outputs = std::move(other.outputs);
  }
  return *this;
}

TracedFunction::~TracedFunction() {
  ownedModule = nullptr;
  ownedContext.reset();
}

mlir::func::FuncOp TracedFunction::function() const {
  if (!ownedModule)
    return nullptr;
  return module().lookupSymbol<mlir::func::FuncOp>(functionName);
}

std::string TracedFunction::str(bool withLocations) const {
  if (!ownedModule)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module().print(os, flags);
  return text;
}

bool isTracing() { return detail::TraceState::active() != nullptr; }

namespace detail {

namespace {
/// Keeps the trace active while the user's function runs and discards it
/// unless the trace completed.
struct ActiveTrace {
  explicit ActiveTrace(TraceState &state) : state(state) {
    state.pushActive();
  }
  ~ActiveTrace() {
    state.popActive();
    if (!completed)
      state.discard();
  }
  TraceState &state;
  bool completed = false;
};
} // namespace

/// Default names for specs without one; rejects duplicates, which would make
/// the compiled signature ambiguous.
static void nameSpecs(std::vector<TensorSpec> &specs, const char *prefix,
                      const char *what, SourceLoc loc) {
  llvm::StringSet<> seen;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name.empty())
      specs[i].name = prefix + std::to_string(i);
    if (!seen.insert(specs[i].name).second)
      fail(loc, std::string("kiln::trace: two ") + what + " are named '" +
                    specs[i].name + "'");
  }
}

/// traceImpl and traceCapturing: with `captured`, the function may use
/// the tensors of the active trace and they are listed there.
static TracedFunction traceWith(std::string name,
                                std::vector<TensorSpec> inputs,
                                const RegionFn &fn, SourceLoc loc,
                                std::shared_ptr<mlir::MLIRContext> context,
                                Tensors *captured) {
  if (name.empty())
    fail(loc, "kiln::trace needs a non-empty function name");
  for (const TensorSpec &spec : inputs)
    for (int64_t dim : spec.shape)
      if (dim < 0)
        fail(loc, "kiln::trace: input " + spec.str() +
                      " has a negative dimension; shapes are static");
  nameSpecs(inputs, "arg", "inputs", loc);

  TraceState *enclosing = TraceState::active();
  auto state =
      std::make_shared<TraceState>(name, inputs, loc, std::move(context));
  if (captured && enclosing)
    state->captureFrom(enclosing);
  ActiveTrace active(*state);
  mlir::func::FuncOp function = state->getFunction();

  Tensors args;
  for (mlir::BlockArgument arg : function.getArguments())
    args.push_back(state->wrap(arg));
  Tensors results = fn(args);
  if (results.empty())
    fail(loc, "kiln::trace: the traced function returns no outputs");

  llvm::SmallVector<mlir::Value> values;
  std::vector<TensorSpec> outputs;
  for (const Tensor &result : results) {
    values.push_back(state->use(result, loc));
    TensorSpec spec;
    spec.dtype = result.dtype();
    spec.shape = result.shape();
    spec.name = result.name();
    outputs.push_back(std::move(spec));
  }
  nameSpecs(outputs, "out", "outputs", loc);

  if (captured) {
    for (const Tensor &tensor : state->captures()) {
      inputs.push_back(TensorSpec{tensor.dtype(), tensor.shape(),
                                  "capture" + std::to_string(captured->size())});
      captured->push_back(tensor);
    }
  }

  mlir::OpBuilder &builder = state->getBuilder();
  builder.create<mlir::func::ReturnOp>(state->location(loc),
                                       mlir::ValueRange(values));
  llvm::SmallVector<mlir::Type> resultTypes;
  for (mlir::Value v : values)
    resultTypes.push_back(v.getType());
  function.setType(builder.getFunctionType(function.getArgumentTypes(),
                                           resultTypes));
  for (size_t i = 0; i < inputs.size(); ++i)
    function.setArgAttr(i, "kiln.name", builder.getStringAttr(inputs[i].name));
  for (size_t i = 0; i < outputs.size(); ++i)
    function.setResultAttr(i, "kiln.name",
                           builder.getStringAttr(outputs[i].name));

  if (mlir::failed(mlir::verify(state->getFunction())))
    fail(loc, "kiln::trace: the traced function does not verify (a bug in "
              "the tracer): " +
                  state->takeDiagnostics());

  auto [sharedContext, module] = state->release();
  active.completed = true;
  return TracedFunction(std::move(sharedContext), std::move(module),
                        std::move(name), std::move(inputs), std::move(outputs));
}

TracedFunction traceImpl(std::string name, std::vector<TensorSpec> inputs,
                         const RegionFn &fn, SourceLoc loc,
                         std::shared_ptr<mlir::MLIRContext> context) {
  return traceWith(std::move(name), std::move(inputs), fn, loc,
                   std::move(context), nullptr);
}

TracedFunction traceCapturing(std::string name,
                              std::vector<TensorSpec> inputs,
                              const RegionFn &fn, SourceLoc loc,
                              Tensors &captured) {
  return traceWith(std::move(name), std::move(inputs), fn, loc, nullptr,
                   &captured);
}

} // namespace detail
} // namespace kiln
