//===- Checkpoint.cpp - kiln::checkpoint ----------------------------------===//
//
// jax.checkpoint on top of the autodiff pass's loop checkpointing: the
// function is recorded inside a one-trip kiln.for marked kiln.recompute,
// itself the body of another one-trip kiln.for. When a gradient is taken
// through it, the outer loop's backward pass stores the inner loop's
// operands (the function's inputs, and zeros standing for its outputs)
// and recomputes the inner loop, the function's forward pass, before
// differentiating it; nothing the function computes in between is kept.
// Without a gradient the two loops run the function once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Grad.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Tracer/Inline.h"
#include "kiln/Tracer/Ops.h"
#include "kiln/Tracer/TraceError.h"

#include "mlir/IR/Builders.h"

namespace kiln {

CheckpointFunction::CheckpointFunction(detail::RegionFn fn, SourceLoc loc)
    : fn(std::move(fn)), loc(loc) {}

Tensors CheckpointFunction::operator()(const Tensors &args) const {
  const char *what = "kiln::checkpoint";
  activeTraceContext(what, loc);
  // The outputs' types, for the placeholders the loops carry.
  std::vector<TensorSpec> specs;
  for (const Tensor &arg : args) {
    if (!arg.defined())
      detail::fail(loc, std::string(what) + " was given an empty Tensor");
    TensorSpec spec;
    spec.dtype = arg.dtype();
    spec.shape = arg.shape();
    specs.push_back(spec);
  }
  Tensors captured;
  TracedFunction probe =
      detail::traceCapturing("checkpointed", specs, fn, loc, captured);
  Tensors carry = args;
  for (const TensorSpec &out : probe.outputSpecs())
    carry.push_back(zeros(out.shape, out.dtype, loc));

  size_t numArgs = args.size();
  auto inner = [&](const Tensor &, const Tensors &state) {
    Tensors inputs(state.begin(), state.begin() + numArgs);
    Tensors next = inputs;
    Tensors outputs = fn(inputs);
    next.insert(next.end(), outputs.begin(), outputs.end());
    return next;
  };
  auto outer = [&](const Tensor &, const Tensors &state) {
    Tensors results = detail::foriImpl(0, 1, inner, state, loc);
    mlir::Operation *loop = results.front().value().getDefiningOp();
    loop->setAttr(mlir::kiln::kRecomputeAttrName,
                  mlir::UnitAttr::get(loop->getContext()));
    return results;
  };
  Tensors results = detail::foriImpl(0, 1, outer, carry, loc);
  return Tensors(results.begin() + numArgs, results.end());
}

} // namespace kiln
