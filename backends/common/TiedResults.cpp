//===- TiedResults.cpp - Out-params that are donated arguments ------------===//
//
// After buffer-results-to-out-params, a result that kiln-fresh-results
// wrote into a donated argument is an out-param marked
// `kiln.tied_argument = I`, which the function leaves alone: the runtime
// passes argument I's buffer for it, which holds the result already. The
// mark goes; an out-param that is used after all is an error, since the
// function would write a buffer it does not own.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"
#include "kiln/IR/TiedResults.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNTIEDRESULTS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnTiedResultsPass
    : kiln::impl::KilnTiedResultsBase<KilnTiedResultsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (unsigned index = 0; index < func.getNumArguments(); ++index) {
      auto attr = func.getArgAttrOfType<IntegerAttr>(
          index, kiln::kTiedArgumentAttrName);
      if (!attr)
        continue;
      func.removeArgAttr(index, kiln::kTiedArgumentAttrName);
      if (func.isDeclaration())
        continue;
      BlockArgument outParam = func.getArgument(index);
      for (Operation *user : outParam.getUsers()) {
        user->emitOpError()
            << "uses out-param #" << index
            << ", which is the buffer of donated argument #" << attr.getInt()
            << " and holds the result already";
        return signalPassFailure();
      }
    }
  }
};
} // namespace
