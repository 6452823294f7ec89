//===- Grad.cpp - The kiln-grad pass --------------------------------------===//
//
// Command-line access to buildGradient / buildValueAndGradient: looks up the
// function named by the `function` option and derives its gradient function
// next to it. The algorithm is described in Gradient.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/IR/KilnDialect.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_GRAD
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct GradPass : kiln::impl::GradBase<GradPass> {
  using GradBase::GradBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (functionName.empty()) {
      module.emitError("kiln-grad needs the function to differentiate: "
                       "--kiln-grad=\"function=<name>\"");
      return signalPassFailure();
    }
    auto f = module.lookupSymbol<func::FuncOp>(functionName);
    if (!f) {
      module.emitError() << "kiln-grad: there is no function named @"
                         << functionName;
      return signalPassFailure();
    }
    SmallVector<unsigned> indices(wrt.begin(), wrt.end());
    FailureOr<func::FuncOp> derived =
        valueAndGrad
            ? buildValueAndGradient(f, indices, gradName, checkpointEvery)
            : buildGradient(f, indices, gradName, checkpointEvery);
    if (failed(derived))
      signalPassFailure();
  }
};
} // namespace
