//===- Vmap.cpp - kiln::vmap ----------------------------------------------===//
//
// Traces the wrapped function on one example, in the active trace's
// context: the mapped inputs without their batch dim, the others as they
// are, and the tensors it captures as extra unmapped inputs. Then derives
// the batched function with mlir::kiln::buildVmap in a copy of the traced
// module (Derive.h) and inlines it into the active trace.
//
//===----------------------------------------------------------------------===//

#include "Derive.h"

#include "kiln/Passes/Batching.h"
#include "kiln/Tracer/Inline.h"
#include "kiln/Tracer/TraceError.h"
#include "kiln/Vmap.h"

namespace kiln {

using detail::fail;

VmapFunction::VmapFunction(detail::RegionFn fn, BatchAxes inAxes, BatchAxes outAxes,
                           SourceLoc loc)
    : fn(std::move(fn)), inAxes(std::move(inAxes)),
      outAxes(std::move(outAxes)), loc(loc) {}

Tensors VmapFunction::operator()(const Tensors &args) const {
  const char *what = "kiln::vmap";
  activeTraceContext(what, loc);
  BatchAxes axes = inAxes.empty() ? BatchAxes(args.size(), 0) : inAxes;
  if (axes.size() != args.size())
    fail(loc, std::string(what) + ": " + std::to_string(axes.size()) +
                  " in axes for " + std::to_string(args.size()) +
                  " arguments");
  std::optional<int64_t> size;
  std::vector<TensorSpec> specs;
  for (auto [index, arg] : llvm::enumerate(args)) {
    if (!arg.defined())
      fail(loc, std::string(what) + " was given an empty Tensor");
    TensorSpec spec;
    spec.dtype = arg.dtype();
    spec.shape = arg.shape();
    if (std::optional<int64_t> axis = axes[index]) {
      if (*axis < 0 || *axis >= arg.rank())
        fail(loc, std::string(what) + ": in axis " + std::to_string(*axis) +
                      " of argument " + std::to_string(index) + " (shape " +
                      shapeString(arg.shape()) + ") is out of range");
      int64_t lanes = arg.shape()[*axis];
      if (size && *size != lanes)
        fail(loc, std::string(what) + ": the mapped arguments have batch "
                                      "sizes " +
                      std::to_string(*size) + " and " +
                      std::to_string(lanes) + " (argument " +
                      std::to_string(index) + ")");
      size = lanes;
      spec.shape.erase(spec.shape.begin() + *axis);
    }
    specs.push_back(std::move(spec));
  }
  if (!size)
    fail(loc, std::string(what) + ": no argument is mapped (every in axis "
                                  "is None)");

  Tensors captured;
  TracedFunction primal =
      detail::traceCapturing("primal", specs, fn, loc, captured);
  BatchAxes allIn = axes;
  allIn.resize(axes.size() + captured.size(), std::nullopt);
  size_t numOutputs = primal.outputSpecs().size();
  BatchAxes allOut = outAxes.empty() ? BatchAxes(numOutputs, 0)
                     : outAxes.size() == 1 ? BatchAxes(numOutputs, outAxes[0])
                                           : outAxes;
  if (allOut.size() != numOutputs)
    fail(loc, std::string(what) + ": " + std::to_string(allOut.size()) +
                  " out axes for " + std::to_string(numOutputs) +
                  " outputs");
  mlir::OwningOpRef<mlir::ModuleOp> holder;
  mlir::func::FuncOp derived = detail::deriveInCopy(
      primal, std::string(what) + " could not batch the function",
      [&](mlir::func::FuncOp function) {
        return mlir::kiln::buildVmap(function, allIn, allOut, *size,
                                     "derived");
      },
      holder, loc);
  Tensors inputs = args;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  return inlineIntoTrace(derived, inputs, loc);
}

} // namespace kiln
