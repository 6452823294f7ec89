//===- AsyncLaunches.cpp - Device work queued on the stream ---------------===//
//
// Upstream lowers a synchronous gpu.launch to a launch followed by a stream
// synchronization. kiln's runtime runs a module's device work in order on
// one stream, for which `gpu.wait async` (no dependencies) stands, so the
// host code can queue kernels and copies and wait only where it reads
// memory itself. Each block of the host code is walked in order with a
// token chain and a flag `pending` (device work may be queued that the
// host has not waited for):
//   1. a synchronous gpu.launch is rebuilt as `gpu.launch async [%chain]`
//      (the chain starts with a `gpu.wait async` in the block); pending;
//   2. a memref.copy between identity-layout buffers becomes
//      `gpu.memcpy async [%chain]`; pending;
//   3. an op with regions: each of its blocks is walked starting with
//      pending = (pending before it, or the op holds device work and may
//      loop back); afterwards pending also when it holds device work;
//   4. a call: afterwards pending (the callee may have queued work);
//   5. any other op reading or writing a memref a kernel may use (a load
//      of a copied-back predicate, a strided copy on the host; not the
//      deallocation's bookkeeping, HostBuffers.h) gets a `gpu.wait
//      [%chain]` before it when pending; then nothing is pending.
// The function's entry starts pending, as its caller's work may be queued.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "HostBuffers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAASYNCLAUNCHES
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Whether `op` or an op nested in it queues device work.
static bool holdsDeviceWork(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return isa<gpu::LaunchOp, gpu::MemcpyOp, memref::CopyOp,
                   func::CallOp>(nested)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether the host executing `op` reads or writes a memref, so that device
/// work queued before must be complete.
static bool accessesMemoryOnHost(Operation *op) {
  if (op->getNumRegions() || isa<gpu::GPUDialect>(op->getDialect()))
    return false;
  // Buffers only the host touches (HostBuffers.h) need no wait.
  if (llvm::none_of(op->getOperands(), [](Value operand) {
        return isa<MemRefType>(operand.getType()) &&
               !kiln::isHostOnlyBuffer(operand);
      }))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  return effects.hasEffect<MemoryEffects::Read>() ||
         effects.hasEffect<MemoryEffects::Write>();
}

/// Whether `copy` can be one contiguous device copy.
static bool isContiguousCopy(memref::CopyOp copy) {
  auto source = dyn_cast<MemRefType>(copy.getSource().getType());
  auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
  return source && target && source.getLayout().isIdentity() &&
         target.getLayout().isIdentity() && source.hasStaticShape() &&
         source.getShape() == target.getShape() &&
         source.getElementType() == target.getElementType();
}

namespace {
class BlockChain {
public:
  explicit BlockChain(MLIRContext *context)
      : tokenType(gpu::AsyncTokenType::get(context)) {}

  void run(Block &block, bool pending) {
    Value token;
    auto chain = [&](OpBuilder &builder, Location loc) {
      if (!token)
        token = builder.create<gpu::WaitOp>(loc, tokenType, ValueRange())
                    .getAsyncToken();
      return token;
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      OpBuilder builder(&op);
      Location loc = op.getLoc();
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        if (!launch.getAsyncToken()) {
          Value dependency = chain(builder, loc);
          token = makeAsync(launch, dependency);
        }
        pending = true;
      } else if (auto copy = dyn_cast<memref::CopyOp>(op);
                 copy && isContiguousCopy(copy)) {
        Value dependency = chain(builder, loc);
        token = builder
                    .create<gpu::MemcpyOp>(loc, tokenType,
                                           ValueRange{dependency},
                                           copy.getTarget(), copy.getSource())
                    .getAsyncToken();
        copy.erase();
        pending = true;
      } else if (op.getNumRegions()) {
        bool device = holdsDeviceWork(&op);
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            run(nested, pending || device);
        pending = pending || device;
      } else if (isa<func::CallOp>(op)) {
        pending = true;
      } else if (pending && accessesMemoryOnHost(&op)) {
        builder.create<gpu::WaitOp>(loc, Type(),
                                    ValueRange{chain(builder, loc)});
        token = Value();
        pending = false;
      }
    }
  }

private:
  /// Rebuilds `launch` as `gpu.launch async [dependency]` with its body.
  Value makeAsync(gpu::LaunchOp launch, Value dependency) {
    OpBuilder builder(launch);
    SmallVector<Type> workgroup, privates;
    for (BlockArgument argument : launch.getWorkgroupAttributions())
      workgroup.push_back(argument.getType());
    for (BlockArgument argument : launch.getPrivateAttributions())
      privates.push_back(argument.getType());
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    auto async = builder.create<gpu::LaunchOp>(
        launch.getLoc(), grid.x, grid.y, grid.z, block.x, block.y, block.z,
        launch.getDynamicSharedMemorySize(), tokenType,
        ValueRange{dependency}, workgroup, privates);
    // Hints for later passes (kiln.min_blocks_per_sm) stay with it.
    async->setDiscardableAttrs(launch->getDiscardableAttrDictionary());
    async.getBody().takeBody(launch.getBody());
    launch.erase();
    return async.getAsyncToken();
  }

  Type tokenType;
};

struct KilnCudaAsyncLaunchesPass
    : kiln::impl::KilnCudaAsyncLaunchesBase<KilnCudaAsyncLaunchesPass> {
  /// A module pass, one function after another: whether a buffer is host
  /// memory (HostBuffers.h) is read in the functions it is passed to,
  /// which a pass running on those functions in parallel would rewrite.
  void runOnOperation() override {
    for (func::FuncOp function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      BlockChain chain(&getContext());
      for (Block &block : function.getBody())
        chain.run(block, /*pending=*/true);
    }
  }
};
} // namespace
