//===- Vmap.cpp - The kiln-vmap pass --------------------------------------===//
//
// Command-line access to buildVmap: looks up the function named by the
// `function` option and derives its batched form next to it. Axes of -1
// stand for "not mapped". The algorithm is described in VmapFunction.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/Passes/Batching.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_VMAP
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct VmapPass : kiln::impl::VmapBase<VmapPass> {
  using VmapBase::VmapBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (functionName.empty()) {
      module.emitError("kiln-vmap needs the function to batch: "
                       "--kiln-vmap=\"function=<name> size=<n>\"");
      return signalPassFailure();
    }
    auto f = module.lookupSymbol<func::FuncOp>(functionName);
    if (!f) {
      module.emitError() << "kiln-vmap: there is no function named @"
                         << functionName;
      return signalPassFailure();
    }
    auto axes = [](ArrayRef<int64_t> values) {
      SmallVector<std::optional<int64_t>> axes;
      for (int64_t v : values)
        axes.push_back(v < 0 ? std::nullopt : std::optional<int64_t>(v));
      return axes;
    };
    SmallVector<std::optional<int64_t>> in = axes(inAxes);
    if (in.empty())
      in.assign(f.getNumArguments(), 0);
    SmallVector<std::optional<int64_t>> out = axes(outAxes);
    if (out.empty())
      out.assign(f.getNumResults(), 0);
    if (failed(buildVmap(f, in, out, size, vmapName)))
      signalPassFailure();
  }
};
} // namespace
