//===- ScalarKernels.cpp - Rank-0 work in one-thread kernels --------------===//
//
// After the other kernel mappings, what would still run in the host code on
// device buffers is scalar work: linalg ops without parallel loops (rank-0
// copies, a counter's increment, a predicate's comparison, a reduction to
// a scalar the block reductions do not take, which one thread then runs
// sequentially) and stores of host values (a kiln.for counter). Each becomes a `gpu.launch` of one block of
// one thread holding the op; `convert-linalg-to-parallel-loops` later
// expands a linalg op in place inside it. Host values the op uses are
// captured as kernel arguments by outlining. The host code then only
// launches, copies and branches (and keeps the deallocation's bookkeeping,
// HostBuffers.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"
#include "HostBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDASCALARKERNELS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Whether `op` is scalar work of the host code that belongs on the device.
static bool isHostScalarWork(Operation *op) {
  if (op->getParentOfType<gpu::LaunchOp>())
    return false;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureBufferSemantics() &&
           linalgOp.getNumParallelLoops() == 0;
  if (auto store = dyn_cast<memref::StoreOp>(op))
    // A host stack slot and the deallocation's bookkeeping stay on the
    // host.
    return !store.getMemRef().getDefiningOp<memref::AllocaOp>() &&
           !kiln::isHostOnlyBuffer(store.getMemRef());
  return false;
}

namespace {
struct KilnCudaScalarKernelsPass
    : kiln::impl::KilnCudaScalarKernelsBase<KilnCudaScalarKernelsPass> {
  /// A module pass, one function after another: whether a buffer is host
  /// memory (HostBuffers.h) is read in the functions it is passed to,
  /// which a pass running on those functions in parallel would rewrite.
  void runOnOperation() override {
    SmallVector<Operation *> work;
    for (func::FuncOp function : getOperation().getOps<func::FuncOp>())
      function.walk([&](Operation *op) {
        if (isHostScalarWork(op))
          work.push_back(op);
      });
    for (Operation *op : work) {
      OpBuilder builder(op);
      gpu::LaunchOp launch = kiln::createOneThreadLaunch(builder, op->getLoc());
      op->moveBefore(launch.getBody().front().getTerminator());
    }
  }
};
} // namespace
