//===- Jvp.cpp - The kiln-jvp pass ----------------------------------------===//
//
// Command-line access to buildJvp: looks up the function named by the
// `function` option and derives its JVP function next to it. The algorithm
// is described in JvpFunction.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Passes.h"

#include "kiln/IR/KilnDialect.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_JVP
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct JvpPass : kiln::impl::JvpBase<JvpPass> {
  using JvpBase::JvpBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (functionName.empty()) {
      module.emitError("kiln-jvp needs the function to differentiate: "
                       "--kiln-jvp=\"function=<name>\"");
      return signalPassFailure();
    }
    auto f = module.lookupSymbol<func::FuncOp>(functionName);
    if (!f) {
      module.emitError() << "kiln-jvp: there is no function named @"
                         << functionName;
      return signalPassFailure();
    }
    SmallVector<unsigned> indices(wrt.begin(), wrt.end());
    if (failed(buildJvp(f, indices, jvpName)))
      signalPassFailure();
  }
};
} // namespace
