//===- CheckLaunches.cpp - Refuse launches no CUDA device runs ------------===//
//
// The passes that form kernels choose their grids and blocks from the
// program's shapes, and a CUDA device refuses a launch beyond its limits
// (cudaErrorInvalidConfiguration) only when the launch is made: at the
// first call of a compiled program, on a GPU. `--target=cuda-on-cpu` runs
// the same launches on the host, where nothing limits them. This pass
// checks every launch of constant sizes against the limits every CUDA
// device since compute capability 3.0 has, on both targets, so that a
// program no device can run is refused when it is compiled, with the
// launch's location and the limit it exceeds.
//
// It also checks the loops of a launch that synchronize its block: on a
// GPU nothing separates what an iteration does after its last barrier
// from what the next one does before its first (nor the loop's entry
// and exit from the code around it), so a workgroup buffer one of them
// writes and the other reads or writes races between warps.
// The kernels are built by kiln's own passes, and `--target=cuda-on-cpu`
// cannot show such a race (it runs a loop's iterations one after the
// other for the whole block), so this is where it is refused.
//
//===----------------------------------------------------------------------===//

#include "LaunchHints.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDACHECKLAUNCHES
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// CUDA's limits (the CUDA C++ Programming Guide's table of technical
/// specifications per compute capability, the same from 3.0 to 12.x).
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxThreads = 1024;
/// Whether `op` is, or holds, a synchronization of the whole block.
bool synchronizesBlock(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<gpu::BarrierOp, gpu::AllReduceOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The workgroup buffers of `launch` that `ops` (and the ops they hold)
/// read and write, by their attribution's number.
struct Accesses {
  llvm::SmallDenseSet<unsigned> reads, writes;
};
Accesses accessesOf(gpu::LaunchOp launch, ArrayRef<Operation *> ops) {
  // The buffer an access is to: through views, and through the
  // arithmetic of an address a kernel computes from a buffer's own
  // (llvm.getelementptr of llvm.inttoptr of its aligned pointer plus an
  // offset, as the tensor-core attention reads its tiles).
  auto attributionOf = [&](Value value) -> std::optional<unsigned> {
    SmallVector<Value> derived = {value};
    while (!derived.empty()) {
      Value v = derived.pop_back_val();
      for (auto [i, buffer] :
           llvm::enumerate(launch.getWorkgroupAttributions()))
        if (buffer == v)
          return i;
      Operation *def = v.getDefiningOp();
      if (auto view = dyn_cast_or_null<ViewLikeOpInterface>(def))
        derived.push_back(view.getViewSource());
      else if (auto pointer =
                   dyn_cast_or_null<memref::ExtractAlignedPointerAsIndexOp>(
                       def))
        derived.push_back(pointer.getSource());
      else if (isa_and_nonnull<LLVM::GEPOp, LLVM::IntToPtrOp,
                               arith::IndexCastOp, arith::IndexCastUIOp>(def))
        derived.push_back(def->getOperand(0));
      else if (isa_and_nonnull<arith::AddIOp>(def))
        llvm::append_range(derived, def->getOperands());
    }
    return std::nullopt;
  };
  Accesses accesses;
  for (Operation *top : ops)
    top->walk([&](MemoryEffectOpInterface op) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      op.getEffects(effects);
      for (const MemoryEffects::EffectInstance &effect : effects) {
        std::optional<unsigned> buffer =
            effect.getValue() ? attributionOf(effect.getValue()) : std::nullopt;
        if (!buffer)
          continue;
        if (isa<MemoryEffects::Read>(effect.getEffect()))
          accesses.reads.insert(*buffer);
        if (isa<MemoryEffects::Write>(effect.getEffect()))
          accesses.writes.insert(*buffer);
      }
    });
  return accesses;
}

/// A workgroup buffer that `before` writes and `after` reads or writes, or
/// that `before` reads and `after` writes, and whether `before` writes it.
std::optional<std::pair<unsigned, bool>> conflict(const Accesses &before,
                                                  const Accesses &after) {
  for (unsigned buffer : before.writes)
    if (after.reads.contains(buffer) || after.writes.contains(buffer))
      return std::make_pair(buffer, true);
  for (unsigned buffer : before.reads)
    if (after.writes.contains(buffer))
      return std::make_pair(buffer, false);
  return std::nullopt;
}

/// Fails, naming the buffer, where a loop of `launch` that synchronizes
/// its block uses a workgroup buffer in two stretches that nothing
/// separates on a GPU, one of them writing it: after the body's last
/// synchronization and before its first (one trip's warps and the
/// next's), before the loop (from the last synchronization of its block)
/// and before the body's first (the warps still before the loop and
/// those already in it), or after the body's last and after the loop (up
/// to the next synchronization of its block).
LogicalResult checkLoopBarriers(gpu::LaunchOp launch) {
  auto opsOf = [](Block::iterator begin, Block::iterator end) {
    SmallVector<Operation *> ops;
    for (Operation &op : llvm::make_range(begin, end))
      ops.push_back(&op);
    return ops;
  };
  WalkResult result = launch.getBody().walk([&](scf::ForOp loop) {
    SmallVector<Operation *> ops = opsOf(
        loop.getBody()->begin(), loop.getBody()->without_terminator().end());
    auto first = llvm::find_if(ops, synchronizesBlock);
    if (first == ops.end())
      return WalkResult::advance();
    auto last = std::find_if(ops.rbegin(), ops.rend(), synchronizesBlock);
    Accesses head = accessesOf(launch, ArrayRef(ops.begin(), first));
    Accesses tail = accessesOf(launch, ArrayRef(last.base(), ops.end()));
    // The loop's block before it, from its last synchronization, and
    // after it, up to the next.
    Block *block = loop->getBlock();
    Block::iterator from = block->begin(), to = block->end();
    for (Operation &op :
         llvm::make_range(block->begin(), Block::iterator(loop)))
      if (synchronizesBlock(&op))
        from = std::next(Block::iterator(&op));
    for (Operation &op :
         llvm::make_range(std::next(Block::iterator(loop)), block->end()))
      if (synchronizesBlock(&op)) {
        to = Block::iterator(&op);
        break;
      }
    Accesses before = accessesOf(launch, opsOf(from, Block::iterator(loop)));
    Accesses after =
        accessesOf(launch, opsOf(std::next(Block::iterator(loop)), to));
    struct Stretches {
      const Accesses &first, &second;
      StringLiteral firstPlace, secondPlace, who;
    };
    const Stretches pairs[] = {
        {tail, head, "after this loop's last barrier", "before its first",
         "one iteration's warps race the next's"},
        {before, head, "before this loop (since the last barrier)",
         "before its first barrier",
         "the warps still before the loop race those in it"},
        {tail, after, "after this loop's last barrier",
         "after the loop (before the next barrier)",
         "the warps still in the loop race those past it"}};
    for (const Stretches &pair : pairs)
      if (auto found = conflict(pair.first, pair.second)) {
        loop.emitError() << "workgroup buffer " << found->first << " is "
                         << (found->second ? "written " : "read ")
                         << pair.firstPlace << " and "
                         << (found->second ? "used " : "written ")
                         << pair.secondPlace << ": on a GPU " << pair.who;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct KilnCudaCheckLaunchesPass
    : kiln::impl::KilnCudaCheckLaunchesBase<KilnCudaCheckLaunchesPass> {
  using KilnCudaCheckLaunchesBase::KilnCudaCheckLaunchesBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](gpu::LaunchOp launch) {
      failed |= mlir::failed(check(launch, arch));
    });
    if (failed)
      signalPassFailure();
  }

  static LogicalResult check(gpu::LaunchOp launch, StringRef arch) {
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    struct Dim {
      StringRef what;
      Value size;
      int64_t limit;
      bool ofBlock;
    };
    const Dim dims[] = {{"grid x", grid.x, kMaxGridX, false},
                        {"grid y", grid.y, kMaxGridYZ, false},
                        {"grid z", grid.z, kMaxGridYZ, false},
                        {"block x", block.x, kMaxBlockXY, true},
                        {"block y", block.y, kMaxBlockXY, true},
                        {"block z", block.z, kMaxBlockZ, true}};
    /// The threads of a block, while its sizes are constants.
    std::optional<int64_t> threads = 1;
    for (const Dim &dim : dims) {
      std::optional<int64_t> size = getConstantIntValue(dim.size);
      if (size && (*size < 1 || *size > dim.limit))
        return launch.emitError()
               << "a " << dim.what << " of " << *size
               << " exceeds what a CUDA device launches (1 to " << dim.limit
               << ")";
      if (dim.ofBlock)
        threads =
            size && threads ? std::optional(*threads * *size) : std::nullopt;
    }
    if (threads && *threads > kMaxThreads)
      return launch.emitError()
             << "blocks of " << *threads << " threads exceed the "
             << kMaxThreads << " a CUDA device runs";
    SmallVector<Type> buffers;
    for (BlockArgument buffer : launch.getWorkgroupAttributions())
      if (kiln::workgroupBytes(buffer.getType()))
        buffers.push_back(buffer.getType());
    int64_t shared = *kiln::sharedBytesOf(buffers);
    int64_t limit = kiln::maxSharedBytesPerBlock(arch);
    if (shared > limit)
      return launch.emitError()
             << "workgroup buffers of " << shared << " bytes exceed the "
             << limit << " bytes of shared memory a CUDA block may have on "
             << arch;
    return checkLoopBarriers(launch);
  }
};

} // namespace
