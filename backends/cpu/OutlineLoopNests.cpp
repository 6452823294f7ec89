//===- OutlineLoopNests.cpp - Each loop nest of a long function its own ---===//
//
// kiln-cpu-outline-loop-nests (CpuPasses.td): in a function with many loop
// nests, each outermost loop nest (an scf.parallel, or an scf.for that is
// one kernel rather than a source loop around several) moves into a
// private function of its own, no_inline, called where it was.
//
// Why: kiln lowers a whole program into one function, one loop nest per
// fused kernel, and LLVM's function passes grow faster than the function.
// Loop rotation updates the dominator tree incrementally, and every loop
// nest dominates the ones after it, so rotating n loops touches O(n^2)
// nodes; OpenMP's outlining of each parallel region builds an analysis of
// the whole function. A DLRM training step split over 4 ranks (254 loop
// nests, 84,000 lines of LLVM IR in one function) took 30 s to compile, 6.5
// s of it in LLVM's loop rotation alone; functions of one kernel each are
// linear. Kernels take their buffers as arguments, so LLVM no longer sees
// that two allocations are distinct and versions a vectorized loop behind
// an overlap check where it cannot tell: functions with few nests (most
// inference programs) keep them inline.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUOUTLINELOOPNESTS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// An scf.for that is a source loop (a kiln.for or a loop around several
/// kernels) rather than one kernel: its body holds a parallel loop, more
/// than one loop, or buffers' allocations.
bool isSourceLoop(scf::ForOp loop) {
  int loops = 0;
  for (Operation &op : *loop.getBody()) {
    if (isa<scf::ParallelOp, memref::AllocOp, memref::DeallocOp>(op))
      return true;
    if (isa<scf::ForOp, scf::WhileOp>(op) && ++loops > 1)
      return true;
  }
  return false;
}

/// The outermost loop nests under `region`, in order: scf.parallel ops and
/// kernels' scf.for ops, looking through source loops and other ops with
/// regions (conditionals, while loops, OpenMP sections).
void collectNests(Region &region, SmallVectorImpl<Operation *> &nests) {
  for (Block &block : region)
    for (Operation &op : block) {
      auto loop = dyn_cast<scf::ForOp>(op);
      if (isa<scf::ParallelOp>(op) || (loop && !isSourceLoop(loop))) {
        nests.push_back(&op);
        continue;
      }
      for (Region &inner : op.getRegions())
        collectNests(inner, nests);
    }
}

/// Moves `nest` into a new private function named after `parent`, inserted
/// after `after` (which it then is); the values it reads from outside
/// become arguments (constants are copied in), its results the function's.
void outline(Operation *nest, func::FuncOp parent, SymbolTable &symbols,
             Operation *&after) {
  SetVector<Value> captured(nest->getOperands().begin(),
                            nest->getOperands().end());
  getUsedValuesDefinedAbove(nest->getRegions(), captured);
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : captured) {
    Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>() &&
        def->getNumOperands() == 0 && def->getNumRegions() == 0) {
      constants.push_back(def);
    } else {
      arguments.push_back(value);
    }
  }
  MLIRContext *context = nest->getContext();
  Location loc = nest->getLoc();
  auto type = FunctionType::get(context, ValueRange(arguments).getTypes(),
                                nest->getResultTypes());
  OpBuilder b(context);
  b.setInsertionPointAfter(after);
  auto function =
      b.create<func::FuncOp>(loc, (parent.getName() + "_nest").str(), type);
  function.setPrivate();
  function->setAttr("no_inline", UnitAttr::get(context));
  symbols.insert(function);
  after = function;
  Block *entry = function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  mapping.map(arguments, entry->getArguments());
  for (Operation *constant : constants)
    b.clone(*constant, mapping);
  Operation *copy = b.clone(*nest, mapping);
  b.create<func::ReturnOp>(loc, copy->getResults());

  b.setInsertionPoint(nest);
  auto call = b.create<func::CallOp>(loc, function, arguments);
  nest->replaceAllUsesWith(call.getResults());
  nest->erase();
}

struct KilnCpuOutlineLoopNestsPass
    : kiln::impl::KilnCpuOutlineLoopNestsBase<KilnCpuOutlineLoopNestsPass> {
  using KilnCpuOutlineLoopNestsBase::KilnCpuOutlineLoopNestsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isDeclaration())
        continue;
      SmallVector<Operation *> nests;
      collectNests(function.getBody(), nests);
      if (static_cast<int64_t>(nests.size()) < minNests)
        continue;
      Operation *after = function;
      for (Operation *nest : nests)
        outline(nest, function, symbols, after);
    }
  }
};

} // namespace
