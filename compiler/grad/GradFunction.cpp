//===- GradFunction.cpp - kiln::grad, value_and_grad, vjp and jvp ---------===//
//
// The user-facing transforms. A GradFunction traces the wrapped function on
// inputs shaped like the ones it is called with (inside the active trace, so
// in its context), then hands the traced primal to applyGradKind
// (InlineDerived.cpp). The overloads on a TracedFunction trace a new
// function, in that function's context, whose body is that same step.
//
//===----------------------------------------------------------------------===//

#include "kiln/Grad.h"
#include "kiln/Tracer/Inline.h"
#include "kiln/Tracer/TraceError.h"

namespace kiln {

GradFunction::GradFunction(GradKind kind, detail::RegionFn fn,
                           std::vector<int> argnums, SourceLoc loc)
    : gradKind(kind), fn(std::move(fn)), wrt(std::move(argnums)), loc(loc) {}

namespace {
using detail::fail;

std::vector<TensorSpec> specsOf(const Tensors &tensors, const char *what,
                                SourceLoc loc) {
  std::vector<TensorSpec> specs;
  for (const Tensor &tensor : tensors) {
    if (!tensor.defined())
      fail(loc, std::string(what) + " was given an empty Tensor");
    TensorSpec spec;
    spec.dtype = tensor.dtype();
    spec.shape = tensor.shape();
    specs.push_back(std::move(spec));
  }
  return specs;
}
} // namespace

Tensors GradFunction::operator()(const Tensors &args) const {
  const char *what = detail::gradKindName(gradKind);
  activeTraceContext(what, loc);
  if (gradKind == GradKind::Vjp)
    fail(loc, "a kiln::vjp function is called with two lists, "
              "(primals, cotangents)");
  if (gradKind == GradKind::Jvp)
    fail(loc, "a kiln::jvp function is called with two lists, "
              "(primals, tangents)");
  // Tensors of the enclosing trace that fn uses come back as extra inputs
  // of the primal: passed in, never differentiated.
  Tensors captured;
  TracedFunction primal = detail::traceCapturing(
      "primal", specsOf(args, what, loc), fn, loc, captured);
  Tensors inputs = args;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  return detail::applyGradKind(primal, gradKind, wrt, inputs, loc);
}

Tensors GradFunction::operator()(const Tensors &primals,
                                 const Tensors &second) const {
  const char *what = detail::gradKindName(gradKind);
  activeTraceContext(what, loc);
  if (gradKind != GradKind::Vjp && gradKind != GradKind::Jvp)
    fail(loc, std::string(what) +
                  " takes one list of arguments; only kiln::vjp and "
                  "kiln::jvp take a second one");
  Tensors captured;
  TracedFunction primal = detail::traceCapturing(
      "primal", specsOf(primals, what, loc), fn, loc, captured);
  specsOf(second, what, loc);
  // Captured tensors are inputs of the primal after the arguments; the
  // (co)tangents follow them.
  Tensors args = primals;
  args.insert(args.end(), captured.begin(), captured.end());
  args.insert(args.end(), second.begin(), second.end());
  return detail::applyGradKind(primal, gradKind, wrt, args, loc);
}

namespace {

TracedFunction transformTraced(const TracedFunction &f, GradKind kind,
                               const char *suffix, std::vector<int> argnums,
                               SourceLoc loc) {
  if (!f.module())
    fail(loc, "kiln::grad: the traced function is empty (moved from)");
  std::vector<TensorSpec> inputs = f.inputSpecs();
  if (kind == GradKind::Vjp)
    for (const TensorSpec &out : f.outputSpecs())
      if (isFloat(out.dtype))
        inputs.push_back({out.dtype, out.shape, "d" + out.name});
  if (kind == GradKind::Jvp)
    for (int argnum : argnums)
      if (argnum >= 0 && static_cast<size_t>(argnum) < inputs.size())
        inputs.push_back({f.inputSpecs()[argnum].dtype,
                          f.inputSpecs()[argnum].shape,
                          "t" + f.inputSpecs()[argnum].name});
  const std::vector<TensorSpec> &primalSpecs = f.inputSpecs();
  const std::vector<TensorSpec> &outputSpecs = f.outputSpecs();
  return detail::traceImpl(
      f.name() + suffix, inputs,
      [&](const Tensors &args) {
        Tensors results = detail::applyGradKind(f, kind, argnums, args, loc);
        size_t values = kind == GradKind::Grad           ? 0
                        : kind == GradKind::ValueAndGrad ? 1
                                                         : outputSpecs.size();
        // jvp's tangents are those of the float outputs, in order.
        std::vector<std::string> tangentNames;
        for (const TensorSpec &out : outputSpecs)
          if (isFloat(out.dtype))
            tangentNames.push_back("t" + out.name);
        for (size_t i = 0; i < results.size(); ++i) {
          if (i < values)
            results[i] = results[i].named(outputSpecs[i].name);
          else if (kind == GradKind::Jvp)
            results[i] = results[i].named(tangentNames[i - values]);
          else
            results[i] = results[i].named(
                "d" + primalSpecs[argnums[i - values]].name);
        }
        return results;
      },
      loc, f.sharedContext());
}

} // namespace

TracedFunction grad(const TracedFunction &f, std::vector<int> argnums,
                    SourceLoc loc) {
  return transformTraced(f, GradKind::Grad, "_grad", std::move(argnums), loc);
}

TracedFunction value_and_grad(const TracedFunction &f,
                              std::vector<int> argnums, SourceLoc loc) {
  return transformTraced(f, GradKind::ValueAndGrad, "_value_and_grad",
                         std::move(argnums), loc);
}

TracedFunction vjp(const TracedFunction &f, std::vector<int> argnums,
                   SourceLoc loc) {
  return transformTraced(f, GradKind::Vjp, "_vjp", std::move(argnums), loc);
}

TracedFunction jvp(const TracedFunction &f, std::vector<int> argnums,
                   SourceLoc loc) {
  return transformTraced(f, GradKind::Jvp, "_jvp", std::move(argnums), loc);
}

} // namespace kiln
