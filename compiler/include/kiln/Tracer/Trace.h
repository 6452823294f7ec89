//===- Trace.h - Recording a C++ function as kiln IR ------------*- C++ -*-===//
//
// kiln::trace runs a C++ callable once on symbolic input tensors and records
// every tensor operation it performs into a public func.func of kiln ops.
// The result, a TracedFunction, owns its ModuleOp and shares the MLIRContext
// it lives in, so it can be handed to the compiler (kiln::jit, kiln-compile's
// driver) or printed. Functions traced while another trace is recording,
// and the transforms of a TracedFunction (kiln/Grad.h), live in the same
// context as the function they come from (kiln/Tracer/Inline.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_TRACE_H
#define KILN_TRACER_TRACE_H

#include "kiln/Tracer/ControlFlow.h"
#include "kiln/Tracer/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

/// A traced function: a module holding one public func.func of kiln ops,
/// whose arguments and results carry `kiln.name` attributes. Move-only; owns
/// the module and keeps the MLIRContext it lives in alive (other traced
/// functions may share it).
class TracedFunction {
public:
  TracedFunction(std::shared_ptr<mlir::MLIRContext> context,
                 mlir::OwningOpRef<mlir::ModuleOp> module, std::string name,
                 std::vector<TensorSpec> inputs,
                 std::vector<TensorSpec> outputs);
  TracedFunction(TracedFunction &&) noexcept;
  TracedFunction &operator=(TracedFunction &&) noexcept;
  TracedFunction(const TracedFunction &) = delete;
  TracedFunction &operator=(const TracedFunction &) = delete;
  ~TracedFunction();

  /// The context of the module (null after a move).
  mlir::MLIRContext *context() const { return ownedContext.get(); }
  /// The same, shared: a trace given it records into this context.
  const std::shared_ptr<mlir::MLIRContext> &sharedContext() const {
    return ownedContext;
  }
  mlir::ModuleOp module() const { return ownedModule.get(); }
  /// The traced function, named name() in module().
  mlir::func::FuncOp function() const;
  const std::string &name() const { return functionName; }
  const std::vector<TensorSpec> &inputSpecs() const { return inputs; }
  const std::vector<TensorSpec> &outputSpecs() const { return outputs; }

  /// The module as MLIR text; with `withLocations`, each op's location
  /// (the user's file:line) is printed too.
  std::string str(bool withLocations = false) const;

private:
  // Declared before the module so that the module is destroyed first.
  std::shared_ptr<mlir::MLIRContext> ownedContext;
  mlir::OwningOpRef<mlir::ModuleOp> ownedModule;
  std::string functionName;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

namespace detail {

/// kiln::trace. The function is recorded in `context` if given, else in
/// the context of the trace recording on this thread, else in a new one.
TracedFunction traceImpl(std::string name, std::vector<TensorSpec> inputs,
                         const RegionFn &fn, SourceLoc loc,
                         std::shared_ptr<mlir::MLIRContext> context = nullptr);

/// traceImpl for the function of a transform, inside the active trace:
/// `fn` may also use tensors of the active trace (a closure). Each one used
/// becomes an extra input of the traced function, after `inputs` (named
/// capture0, capture1, ...), and is appended to `captured`, so that the
/// caller passes it back in.
TracedFunction traceCapturing(std::string name,
                              std::vector<TensorSpec> inputs,
                              const RegionFn &fn, SourceLoc loc,
                              Tensors &captured);

template <typename Fn, size_t... I>
auto callUnpacked(Fn &f, const Tensors &args, std::index_sequence<I...>) {
  return f(args[I]...);
}

/// Wraps a function taking `const Tensors &` or 0-4 Tensors into a RegionFn.
template <typename F> RegionFn makeTracedFn(F &&fn, SourceLoc loc) {
  using Fn = std::decay_t<F>;
  Fn f(std::forward<F>(fn));
  if constexpr (std::is_invocable_v<Fn &, const Tensors &>) {
    return [f](const Tensors &args) mutable { return toTensors(f(args)); };
  } else {
    constexpr size_t arity =
        std::is_invocable_v<Fn &>                                     ? 0
        : std::is_invocable_v<Fn &, const Tensor &>                   ? 1
        : std::is_invocable_v<Fn &, const Tensor &, const Tensor &>   ? 2
        : std::is_invocable_v<Fn &, const Tensor &, const Tensor &,
                              const Tensor &>                         ? 3
        : std::is_invocable_v<Fn &, const Tensor &, const Tensor &,
                              const Tensor &, const Tensor &>         ? 4
                                                                      : 5;
    static_assert(arity <= 4,
                  "kiln::trace needs a callable taking (const kiln::Tensors "
                  "&) or up to four kiln::Tensor arguments");
    return [f, loc](const Tensors &args) mutable {
      if (args.size() != arity)
        throwArityError("the traced function", arity, args.size(), loc);
      return toTensors(callUnpacked(f, args, std::make_index_sequence<arity>()));
    };
  }
}

} // namespace detail

/// True while a function is being traced on this thread (inside kiln::trace,
/// kiln::jit or a transform), i.e. while tensor operations can be recorded.
bool isTracing();

/// Traces `fn` on symbolic inputs described by `inputs` into a function
/// called `name`. `fn` takes `const kiln::Tensors &` (one per input) or up
/// to four Tensor arguments, and returns a Tensor, kiln::Tensors or a tuple
/// of Tensors (at least one output). Outputs are named by Tensor::named()
/// or out0, out1, ...; inputs by their spec (or arg0, arg1, ...).
///
/// Throws TraceError if `fn` makes a mistake a trace can detect; any
/// exception thrown by `fn` propagates, and the partial trace is discarded
/// (tensors from it become unusable).
template <typename F>
TracedFunction trace(std::string name, std::vector<TensorSpec> inputs, F &&fn,
                     SourceLoc loc = SourceLoc::current()) {
  return detail::traceImpl(std::move(name), std::move(inputs),
                           detail::makeTracedFn(std::forward<F>(fn), loc),
                           loc);
}

} // namespace kiln

#endif // KILN_TRACER_TRACE_H
