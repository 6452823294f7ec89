//===- ProfileNames.cpp - Locations that name their kiln op ---------------===//
//
// A profile that says "fused: add+relu" needs to know, long after lowering,
// which kiln ops a loop nest computes. The lowering gives the ops it makes
// the location of the op they come from, and fusion keeps the locations of
// what it merges (a FusedLoc, or the body ops' own), so the op names ride
// along best in the locations themselves: each kiln op's location L becomes
// the NameLoc "op"(L). kiln-cpu-profile reads them back. Runs only under
// --profile; diagnostics still point at L.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPROFILENAMES
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCpuProfileNamesPass
    : public kiln::impl::KilnCpuProfileNamesBase<KilnCpuProfileNamesPass> {
  void runOnOperation() override {
    // The functions of the program, as opposed to those the lowering adds.
    for (auto func : getOperation().getOps<func::FuncOp>())
      func->setAttr(kiln::kProfiledFunctionAttrName,
                    UnitAttr::get(&getContext()));
    getOperation()->walk([](Operation *op) {
      Dialect *dialect = op->getDialect();
      if (!dialect || dialect->getNamespace() != "kiln" ||
          op->hasTrait<OpTrait::IsTerminator>() ||
          isa<kiln::ConstantOp, kiln::FusedOp>(op))
        return;
      StringAttr name =
          StringAttr::get(op->getContext(), op->getName().stripDialect());
      if (auto named = dyn_cast<NameLoc>(op->getLoc()))
        if (named.getName() == name)
          return;
      op->setLoc(NameLoc::get(name, op->getLoc()));
    });
  }
};
} // namespace
