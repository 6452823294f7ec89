//===- ConcurrentSections.cpp - Branches as OpenMP sections ---------------===//
//
// kiln-cpu-concurrent-branches leaves each run of independent kernels as an
// scf.parallel {kiln.concurrent = T} over an scf.index_switch, one case per
// section. This pass makes it
//
//   %on = omp_get_max_threads() == T
//   omp.parallel if(%on) num_threads(T) {
//     omp.sections { omp.section {case 0} omp.section {case 1} ... }
//   }
//
// With T threads (OMP_NUM_THREADS) the sections run side by side, one
// thread each; the parallel loops and oneDNN calls inside them then run on
// their section's thread (libomp serializes a parallel region nested in an
// active one, oneDNN runs sequentially inside one). With any other thread
// count the parallel region is inactive: its one thread runs the sections
// one after the other, and each kernel's own parallel loops and calls take
// all the threads, as without this pass.
//
// Runs after kiln-cpu-profile (which times each kernel inside the cases, on
// the thread that runs it) and before kiln-cpu-parallel-loops, so that the
// loops inside a section are outermost loops there and stay parallel.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUCONCURRENTSECTIONS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The name of libomp's thread count query.
static constexpr llvm::StringLiteral kMaxThreads = "omp_get_max_threads";

/// Rewrites one concurrent loop; fails on a loop that is not the form
/// kiln-cpu-concurrent-branches makes.
static LogicalResult makeSections(scf::ParallelOp loop, IntegerAttr threads) {
  auto cases = dyn_cast<scf::IndexSwitchOp>(loop.getBody()->front());
  if (loop.getNumLoops() != 1 || !cases ||
      cases.getArg() != loop.getInductionVars()[0] ||
      cases->getNextNode() != loop.getBody()->getTerminator() ||
      cases.getNumResults() != 0)
    return loop.emitError("a kiln.concurrent loop must hold one "
                          "scf.index_switch on its induction variable");
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  auto threadCount = builder.create<arith::ConstantIntOp>(loc, threads.getInt(),
                                                          builder.getI32Type());
  Value available =
      builder
          .create<func::CallOp>(loc, kMaxThreads, builder.getI32Type(),
                                ValueRange())
          .getResult(0);
  omp::ParallelClauseOps clauses;
  clauses.ifVar = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                available, threadCount);
  clauses.numThreadsVar = threadCount;
  auto parallel = builder.create<omp::ParallelOp>(loc, clauses);
  builder.createBlock(&parallel.getRegion());
  auto sections =
      builder.create<omp::SectionsOp>(loc, omp::SectionsClauseOps());
  builder.create<omp::TerminatorOp>(loc);
  Block *list = builder.createBlock(&sections.getRegion());
  for (Region &region : cases.getCaseRegions()) {
    builder.setInsertionPointToEnd(list);
    auto section = builder.create<omp::SectionOp>(loc);
    Block *body = builder.createBlock(&section.getRegion());
    Block &kernels = region.front();
    body->getOperations().splice(body->end(), kernels.getOperations(),
                                 kernels.begin(),
                                 kernels.getTerminator()->getIterator());
    builder.setInsertionPointToEnd(body);
    builder.create<omp::TerminatorOp>(loc);
  }
  builder.setInsertionPointToEnd(list);
  builder.create<omp::TerminatorOp>(loc);
  loop.erase();
  return success();
}

namespace {
struct KilnCpuConcurrentSectionsPass
    : kiln::impl::KilnCpuConcurrentSectionsBase<KilnCpuConcurrentSectionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<scf::ParallelOp, IntegerAttr>> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (auto threads =
              loop->getAttrOfType<IntegerAttr>(kiln::kConcurrentAttrName))
        loops.push_back({loop, threads});
    });
    if (loops.empty())
      return;
    if (!module.lookupSymbol(kMaxThreads)) {
      OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
      auto declaration = builder.create<func::FuncOp>(
          module.getLoc(), kMaxThreads,
          builder.getFunctionType({}, {builder.getI32Type()}));
      declaration.setPrivate();
    }
    for (auto [loop, threads] : loops)
      if (failed(makeSections(loop, threads)))
        return signalPassFailure();
  }
};
} // namespace
