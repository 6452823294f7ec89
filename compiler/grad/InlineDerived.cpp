//===- InlineDerived.cpp - Deriving a gradient into the active trace ------===//
//
// The one mechanism behind every gradient transform of kiln/Grad.h:
//
//   1. Check the request against the primal's signature (argnums in range,
//      distinct and on float inputs; a rank-0 float loss for grad and
//      value_and_grad; cotangent types for vjp) so mistakes get a message
//      in the user's terms rather than the pass's.
//   2. Copy the primal's module into the active trace's context. A
//      TracedFunction owns its own MLIRContext, and IR cannot be cloned
//      across contexts, so the copy goes through MLIR's generic text form
//      (with locations, which point at the user's source lines).
//   3. Derive the gradient function there with mlir::kiln::buildGradient or
//      buildValueAndGradient, collecting its diagnostics.
//   4. Clone the derived function's body into the block being traced, with
//      its arguments mapped to the caller's tensors (captured into enclosing
//      regions as needed), and wrap the returned values as Tensors.
//
// The derived function's body is a single block of kiln ops whose regions
// are isolated from above, so step 4 is a plain clone.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"

#include "kiln/Grad.h"
#include "kiln/Passes/Autodiff.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace kiln {
namespace detail {

namespace {

const char *transformName(GradKind kind) {
  switch (kind) {
  case GradKind::Grad:
    return "kiln::grad";
  case GradKind::ValueAndGrad:
    return "kiln::value_and_grad";
  case GradKind::Vjp:
    return "kiln::vjp";
  }
  return "kiln::grad";
}

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
  std::string what = transformName(kind);
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
  if (kind == GradKind::Vjp) {
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
}

/// Steps 2 and 3: the derived function, in a module of `context`.
mlir::func::FuncOp derive(const TracedFunction &primal, GradKind kind,
                          const std::vector<int> &argnums,
                          mlir::MLIRContext *context,
                          mlir::OwningOpRef<mlir::ModuleOp> &holder,
                          SourceLoc loc) {
  std::string what = transformName(kind);
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    mlir::OpPrintingFlags flags;
    flags.printGenericOpForm();
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    primal.module().print(os, flags);
  }

  std::string messages;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &diag) {
    if (!messages.empty())
      messages += "\n";
    llvm::raw_string_ostream os(messages);
    os << diag.getLocation() << ": " << diag.str();
    for (const mlir::Diagnostic &note : diag.getNotes())
      os << "\nnote: " << note.str();
    return mlir::success();
  });

  holder = mlir::parseSourceString<mlir::ModuleOp>(
      text, mlir::ParserConfig(context));
  if (!holder)
    fail(loc, what + ": could not copy the traced function (a bug in the "
                     "tracer): " +
                  messages);
  auto function = holder->lookupSymbol<mlir::func::FuncOp>(primal.name());
  llvm::SmallVector<unsigned> wrt(argnums.begin(), argnums.end());
  mlir::FailureOr<mlir::func::FuncOp> derived =
      kind == GradKind::Vjp
          ? mlir::kiln::buildGradient(function, wrt, "derived")
          : mlir::kiln::buildValueAndGradient(function, wrt, "derived");
  if (mlir::failed(derived))
    fail(loc, what + " could not differentiate the function: " + messages);
  return *derived;
}

} // namespace

Tensors applyGradKind(const TracedFunction &primal, GradKind kind,
                      const std::vector<int> &argnums, const Tensors &args,
                      SourceLoc loc) {
  TraceState &state = TraceState::requireActive(loc, transformName(kind));
  checkRequest(primal, kind, argnums, args, loc);

  // Map the arguments first: this also checks that each belongs to the
  // active trace and captures it into the region being traced.
  llvm::SmallVector<mlir::Value> operands;
  for (const Tensor &arg : args)
    operands.push_back(state.use(arg, loc));

  mlir::OwningOpRef<mlir::ModuleOp> holder;
  mlir::func::FuncOp derived =
      derive(primal, kind, argnums, state.getContext(), holder, loc);

  // Step 4.
  mlir::Block &body = derived.getBody().front();
  mlir::IRMapping mapping;
  for (auto [arg, operand] : llvm::zip_equal(body.getArguments(), operands))
    mapping.map(arg, operand);
  mlir::OpBuilder &builder = state.getBuilder();
  for (mlir::Operation &op : body.without_terminator())
    builder.clone(op, mapping);

  Tensors results;
  mlir::Operation *terminator = body.getTerminator();
  // Grad drops the loss that buildValueAndGradient returns first.
  unsigned first = kind == GradKind::Grad ? 1 : 0;
  for (mlir::Value value : terminator->getOperands().drop_front(first))
    results.push_back(state.wrap(mapping.lookupOrDefault(value)));
  return results;
}

} // namespace detail
} // namespace kiln
