//===- GraphForms.cpp - Conds and loops as graphs, nested to any depth ----===//
//
// kiln-cuda-graph-conds and kiln-cuda-graph-loops each give a cond or a
// loop a graph form when what it holds can be captured, graph forms of the
// other pass included. A loop inside a cond inside a loop needs the loop
// pass (for the inner loop, which gets a form of its own), then the cond
// pass, then the loop pass again (for the outer loop): the two run in
// turn until a round adds no graph form. A loop that a loop around it kept
// on the host then gets a form of its own (kiln-cuda-graph-loops with
// inside-host-loops), once: no cond or loop around it can take a form
// with it, since the host loop between stays.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAGRAPHFORMS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// How many graph forms `module` holds: each asks the runtime once whether
/// it captures (one of kGraphFormQueries).
unsigned countGraphForms(ModuleOp module) {
  unsigned forms = 0;
  module.walk([&](func::CallOp call) {
    forms += llvm::is_contained(kiln::kGraphFormQueries, call.getCallee());
  });
  return forms;
}

struct KilnCudaGraphFormsPass
    : kiln::impl::KilnCudaGraphFormsBase<KilnCudaGraphFormsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpPassManager round(ModuleOp::getOperationName());
    round.addPass(kiln::createKilnCudaGraphConds());
    round.addPass(kiln::createKilnCudaGraphLoops());
    // A round that adds forms adds at least one, and no cond or loop gets
    // two (the passes leave host forms alone), so there are at most as
    // many rounds as conds and loops, and one more that adds nothing.
    unsigned candidates = 0;
    module.walk([&](Operation *op) {
      candidates += isa<scf::IfOp, scf::WhileOp>(op);
    });
    unsigned forms = countGraphForms(module);
    for (unsigned rounds = 0; rounds <= candidates; ++rounds) {
      if (failed(runPipeline(round, module)))
        return signalPassFailure();
      unsigned now = countGraphForms(module);
      if (now == forms) {
        OpPassManager inner(ModuleOp::getOperationName());
        inner.addPass(kiln::createKilnCudaGraphLoops(
            kiln::KilnCudaGraphLoopsOptions{/*insideHostLoops=*/true}));
        if (failed(runPipeline(inner, module)))
          signalPassFailure();
        return;
      }
      forms = now;
    }
    module.emitError("kiln-cuda-graph-forms: the graph forms of conds and "
                     "loops did not converge after ")
        << candidates + 1 << " rounds";
    signalPassFailure();
  }
};
} // namespace
