//===- Vmap.h - Batching traced C++ functions -------------------*- C++ -*-===//
//
// JAX's vmap on top of the batching pass:
//
//   auto perExample = kiln::vmap(kiln::grad(loss, {0}), {std::nullopt, 0, 0});
//   // (w, xs[B, ...], ys[B, ...]) -> dw[B, ...]: one gradient per example
//
// Like the gradient transforms, a VmapFunction called while a function is
// being traced traces the wrapped function on one example (the mapped
// inputs without their batch dim), derives its batched form ahead of time
// (mlir::kiln::buildVmap) and inlines it into the enclosing trace, so the
// batch runs as batched kiln ops (products over B times the rows, batched
// products), not as a loop. Tensors of the enclosing trace that the
// function captures are shared by every lane.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_VMAP_H
#define KILN_VMAP_H

#include "kiln/Tracer/ControlFlow.h"
#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Trace.h"

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// One batch axis per input or output; std::nullopt: not mapped.
using BatchAxes = std::vector<std::optional<int64_t>>;

/// A function together with its in and out axes. Callable with
/// `const kiln::Tensors &` while a trace is active.
class VmapFunction {
public:
  VmapFunction(detail::RegionFn fn, BatchAxes inAxes, BatchAxes outAxes, SourceLoc loc);

  /// Inlines the batched computation for `args` into the active trace.
  /// Throws TraceError outside a trace, for axes of the wrong count or out
  /// of range, mapped inputs whose batch sizes differ, an output that
  /// depends on the batch with no out axis, or an op without a batching
  /// rule (the message names it).
  Tensors operator()(const Tensors &args) const;

private:
  detail::RegionFn fn;
  BatchAxes inAxes;
  BatchAxes outAxes;
  SourceLoc loc;
};

/// The batched form of `fn`: input i carries the batch at dim `inAxes[i]`
/// (every input at dim 0 when `inAxes` is empty), output j at
/// `outAxes[j]` (every output at dim 0 when empty, every output at the one
/// axis when it has one entry); lane b computes fn on
/// lane b of the mapped inputs and the unmapped ones as they are.
template <typename F,
          std::enable_if_t<!std::is_same_v<std::decay_t<F>, TracedFunction>,
                           int> = 0>
VmapFunction vmap(F &&fn, BatchAxes inAxes = {}, BatchAxes outAxes = {},
                  SourceLoc loc = SourceLoc::current()) {
  return VmapFunction(detail::makeTracedFn(std::forward<F>(fn), loc),
                      std::move(inAxes), std::move(outAxes), loc);
}

} // namespace kiln

#endif // KILN_VMAP_H
