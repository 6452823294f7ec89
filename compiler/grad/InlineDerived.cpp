//===- InlineDerived.cpp - Deriving a gradient into the active trace ------===//
//
// The one mechanism behind every gradient transform of kiln/Grad.h:
//
//   1. Check the request against the primal's signature (argnums in range,
//      distinct and on float inputs; a rank-0 float loss for grad and
//      value_and_grad; cotangent types for vjp) so mistakes get a message
//      in the user's terms rather than the pass's.
//   2. Clone the primal's module. The primal was traced in the active
//      trace's context (a trace started inside another shares its context;
//      the transforms of a TracedFunction trace into that function's
//      context), so this is a plain clone that keeps every op, attribute
//      and location (the user's source lines) as they are.
//   3. Derive the gradient function in the copy with
//      mlir::kiln::buildGradient, buildValueAndGradient or buildJvp,
//      collecting its diagnostics.
//   4. Inline the derived function into the block being traced
//      (kiln::inlineIntoTrace), its arguments bound to the caller's tensors.
//
//===----------------------------------------------------------------------===//

#include "Derive.h"

#include "kiln/Grad.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Tracer/Inline.h"
#include "kiln/Tracer/TraceError.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <thread>

namespace kiln {
namespace detail {

const char *gradKindName(GradKind kind) {
  switch (kind) {
  case GradKind::Grad:
    return "kiln::grad";
  case GradKind::ValueAndGrad:
    return "kiln::value_and_grad";
  case GradKind::Vjp:
    return "kiln::vjp";
  case GradKind::Jvp:
    return "kiln::jvp";
  }
  return "kiln::grad";
}

mlir::func::FuncOp
deriveInCopy(const TracedFunction &primal, const std::string &failure,
             llvm::function_ref<mlir::FailureOr<mlir::func::FuncOp>(
                 mlir::func::FuncOp)>
                 build,
             mlir::OwningOpRef<mlir::ModuleOp> &holder, SourceLoc loc) {
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(
      primal.context(),
      [&, thread = std::this_thread::get_id()](mlir::Diagnostic &diag) {
        if (std::this_thread::get_id() != thread)
          return mlir::failure();
        if (!messages.empty())
          messages += "\n";
        llvm::raw_string_ostream os(messages);
        os << diag.getLocation() << ": " << diag.str();
        for (const mlir::Diagnostic &note : diag.getNotes())
          os << "\nnote: " << note.str();
        return mlir::success();
      });
  holder = primal.module().clone();
  auto function = holder->lookupSymbol<mlir::func::FuncOp>(primal.name());
  mlir::FailureOr<mlir::func::FuncOp> derived = build(function);
  if (mlir::failed(derived))
    fail(loc, failure + ": " + messages);
  return *derived;
}

namespace {

std::string specString(DType dtype, const Shape &shape) {
  TensorSpec spec;
  spec.dtype = dtype;
  spec.shape = shape;
  return spec.str();
}

/// Step 1: the checks that need only the primal's signature.
void checkRequest(const TracedFunction &primal, GradKind kind,
                  const std::vector<int> &argnums, const Tensors &args,
                  SourceLoc loc) {
  std::string what = gradKindName(kind);
  const std::vector<TensorSpec> &inputs = primal.inputSpecs();
  const std::vector<TensorSpec> &outputs = primal.outputSpecs();
  if (argnums.empty())
    fail(loc, what + " needs at least one argnum (the inputs to "
                     "differentiate with respect to)");
  std::set<int> seen;
  for (int argnum : argnums) {
    if (argnum < 0 || static_cast<size_t>(argnum) >= inputs.size())
      fail(loc, what + ": argnum " + std::to_string(argnum) +
                    " is out of range; the function has " +
                    std::to_string(inputs.size()) + " inputs");
    if (!seen.insert(argnum).second)
      fail(loc, what + ": argnum " + std::to_string(argnum) +
                    " is given twice");
    if (!isFloat(inputs[argnum].dtype))
      fail(loc, what + ": argnum " + std::to_string(argnum) + " is input " +
                    inputs[argnum].str() +
                    ", which is not a float tensor and has no gradient");
  }

  size_t expectedArgs = inputs.size();
  if (kind == GradKind::Jvp) {
    expectedArgs += argnums.size();
  } else if (kind == GradKind::Vjp) {
    size_t cotangents = 0;
    for (const TensorSpec &out : outputs)
      if (isFloat(out.dtype))
        ++cotangents;
    if (cotangents == 0)
      fail(loc, what + ": the function has no float output, so there is "
                       "nothing to differentiate");
    expectedArgs += cotangents;
  } else {
    if (outputs.size() != 1 || !isFloat(outputs[0].dtype) ||
        !outputs[0].shape.empty()) {
      std::string got;
      for (const TensorSpec &out : outputs)
        got += (got.empty() ? "" : ", ") + out.str();
      fail(loc, what + " needs a function returning one rank-0 float tensor "
                       "(a loss); this one returns " +
                    got + (kind == GradKind::Grad
                               ? " (use kiln::vjp for other outputs)"
                               : ""));
    }
  }
  if (args.size() != expectedArgs)
    fail(loc, what + ": expected " + std::to_string(expectedArgs) +
                  " arguments, got " + std::to_string(args.size()));
  if (kind == GradKind::Vjp) {
    size_t next = inputs.size();
    for (const TensorSpec &out : outputs) {
      if (!isFloat(out.dtype))
        continue;
      const Tensor &dy = args[next];
      if (dy.dtype() != out.dtype || dy.shape() != out.shape)
        fail(loc, what + ": the cotangent of output '" + out.name +
                      "' must be " + specString(out.dtype, out.shape) +
                      ", got " + specString(dy.dtype(), dy.shape()));
      ++next;
    }
  }
  if (kind == GradKind::Jvp) {
    for (auto [position, argnum] : llvm::enumerate(argnums)) {
      const TensorSpec &in = inputs[argnum];
      const Tensor &t = args[inputs.size() + position];
      if (t.dtype() != in.dtype || t.shape() != in.shape)
        fail(loc, what + ": the tangent of input " + std::to_string(argnum) +
                      (in.name.empty() ? "" : " ('" + in.name + "')") +
                      " must be " + specString(in.dtype, in.shape) +
                      ", got " + specString(t.dtype(), t.shape()));
    }
  }
}

/// Steps 2 and 3: the derived function, in a copy of the primal's module
/// held by `holder`.
mlir::func::FuncOp derive(const TracedFunction &primal, GradKind kind,
                          const std::vector<int> &argnums,
                          mlir::OwningOpRef<mlir::ModuleOp> &holder,
                          SourceLoc loc) {
  llvm::SmallVector<unsigned> wrt(argnums.begin(), argnums.end());
  return deriveInCopy(
      primal, std::string(gradKindName(kind)) +
                  " could not differentiate the function",
      [&](mlir::func::FuncOp function) {
        return kind == GradKind::Jvp
                   ? mlir::kiln::buildJvp(function, wrt, "derived")
               : kind == GradKind::Vjp
                   ? mlir::kiln::buildGradient(function, wrt, "derived")
                   : mlir::kiln::buildValueAndGradient(function, wrt,
                                                       "derived");
      },
      holder, loc);
}

} // namespace

Tensors applyGradKind(const TracedFunction &primal, GradKind kind,
                      const std::vector<int> &argnums, const Tensors &args,
                      SourceLoc loc) {
  const char *what = gradKindName(kind);
  mlir::MLIRContext *context = activeTraceContext(what, loc);
  checkRequest(primal, kind, argnums, args, loc);
  if (primal.context() != context)
    fail(loc, std::string(what) + ": the traced function lives in another "
                                  "MLIRContext than the trace being recorded");

  mlir::OwningOpRef<mlir::ModuleOp> holder;
  mlir::func::FuncOp derived = derive(primal, kind, argnums, holder, loc);

  // Step 4.
  Tensors results = inlineIntoTrace(derived, args, loc);
  // Grad drops the loss that buildValueAndGradient returns first.
  if (kind == GradKind::Grad)
    results.erase(results.begin());
  return results;
}

} // namespace detail
} // namespace kiln
