//===- PredicateCopies.cpp - Rank-0 device values read through copies -----===//
//
// After kiln-cuda-scalar-kernels, the host code still loads rank-0 values
// that kernels wrote: the predicate of every scf.while/scf.if (a kiln.while
// or kiln.cond), indices of dynamic slices. Each such `memref.load` becomes
//   %slot = memref.alloca() : memref<T>      (on the host stack)
//   memref.copy %buffer, %slot               (device -> host, one value)
//   %v = memref.load %slot[]
// kiln-cuda-async-launches makes the copy a stream-ordered gpu.memcpy and
// waits for the stream right before the load: one small explicit copy and
// one synchronization per read, instead of managed-memory page migration.
//
// A buffer that only host code uses is loaded as it is, unless it came in
// as a block argument (a function's, a loop's): the host code of this
// function touching it only on the host says nothing of the caller's or
// the previous iteration's stream-ordered writes to it (a constant copied
// in by gpu.memcpy, a kernel's result), which a direct load could overtake.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "HostBuffers.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAPREDICATECOPIES
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The buffer `value` views, through casts and the base buffers and
/// reinterpretations that expand-strided-metadata makes of reshapes and
/// subviews (a rank-0 predicate read through a reshape of an argument).
static Value sourceOf(Value value) {
  while (true) {
    if (auto cast = value.getDefiningOp<memref::CastOp>()) {
      value = cast.getSource();
    } else if (auto reinterpret =
                   value.getDefiningOp<memref::ReinterpretCastOp>()) {
      value = reinterpret.getSource();
    } else if (auto metadata =
                   value.getDefiningOp<memref::ExtractStridedMetadataOp>()) {
      value = metadata.getSource();
    } else {
      return value;
    }
  }
}

namespace {
struct KilnCudaPredicateCopiesPass
    : kiln::impl::KilnCudaPredicateCopiesBase<KilnCudaPredicateCopiesPass> {
  /// A module pass, one function after another: whether a buffer is host
  /// memory (HostBuffers.h) is read in the functions it is passed to,
  /// which a pass running on those functions in parallel would rewrite.
  void runOnOperation() override {
    for (func::FuncOp function : getOperation().getOps<func::FuncOp>())
      if (!function.isDeclaration())
        runOnFunction(function);
  }

  void runOnFunction(func::FuncOp function) {
    SmallVector<memref::LoadOp> loads;
    function.walk([&](memref::LoadOp load) {
      MemRefType type = load.getMemRefType();
      Value buffer = sourceOf(load.getMemRef());
      if (type.getRank() == 0 && type.getLayout().isIdentity() &&
          !type.getMemorySpace() && !buffer.getDefiningOp<memref::AllocaOp>() &&
          !(kiln::isHostOnlyBuffer(buffer) && !isa<BlockArgument>(buffer)) &&
          !load->getParentOfType<gpu::LaunchOp>())
        loads.push_back(load);
    });
    Block &entry = function.getBody().front();
    for (memref::LoadOp load : loads) {
      Location loc = load.getLoc();
      MemRefType type = load.getMemRefType();
      // The slot is made once, in the entry block: an alloca in a loop
      // body would grow the stack every iteration.
      OpBuilder atEntry = OpBuilder::atBlockBegin(&entry);
      Value slot = atEntry.create<memref::AllocaOp>(loc, type);
      OpBuilder builder(load);
      builder.create<memref::CopyOp>(loc, load.getMemRef(), slot);
      Value value = builder.create<memref::LoadOp>(loc, slot, ValueRange());
      load.replaceAllUsesWith(value);
      load.erase();
    }
  }
};
} // namespace
