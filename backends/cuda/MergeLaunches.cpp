//===- MergeLaunches.cpp - One-block kernels in a row as one kernel -------===//
//
// Small programs and the tests of loops lower to runs of kernels of one
// block each: a block reduction's initialization, the reduction, the
// comparison that reads it, the copies ownership-based deallocation makes
// of what a loop's test forwards, a counter's increment. Each is a launch,
// which on a GPU costs microseconds for work of nanoseconds; in a loop run
// as a CUDA graph (kiln-cuda-graph-loops) each is a node of every
// iteration. Within one block of the host code this pass merges such
// launches into one, their bodies in order with a block-wide barrier
// between them: one block sees its own global writes after a barrier, so
// the order of the launches is kept without a launch boundary.
//
// A merged launch has the largest of the parts' block sizes. A part
// launched with fewer threads runs under `thread_id.x < size`, with its
// block size argument bound to its own size (its grid-stride loops keep
// their strides); a guarded part must not synchronize, so a part with any
// gpu op (barriers, all-reduces, a block size read by an op) needs the
// merged size to be its own.
//
// The merged launch takes the place of the first. A later part moves up
// past the host code between them: the values it uses from there
// (allocations, host arithmetic) move before the first launch, and the
// rest must not write what it uses nor read what it writes
// (kiln-cuda-predicate-copies' copy of a predicate to the host and the load
// from it may stay between the test's kernels and the forwarded copies; a free
// of another buffer may too). Device work, calls, ops with regions and ops of
// unknown effects end a run.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "common/BufferAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAMERGELAUNCHES
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The most threads a block may have on every CUDA device.
static constexpr int64_t kMaxBlockSize = 1024;

/// Whether `root` is an allocation that no other value can name: its uses
/// only load, store, copy or free it (a predicate's host slot), so it
/// never reaches a block argument, a call or a kernel.
static bool isPrivateBuffer(Value root) {
  if (!isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(root.getDefiningOp()))
    return false;
  return llvm::all_of(root.getUsers(), [](Operation *user) {
    return isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
               memref::DeallocOp>(user);
  });
}

/// The buffers (roots) a launch's body reads and those it writes.
struct Accesses {
  SmallVector<Value> read, written;
};

/// What `launch` may read and write: its ops' effects on the buffers it
/// uses, or, where an op's effects are unknown (a barrier), every buffer
/// it uses (`used`: the values its body uses from outside), as written.
static Accesses accessesOf(gpu::LaunchOp launch,
                           const llvm::SetVector<Value> &used) {
  Accesses accesses;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(launch);
  bool known = effects.has_value();
  if (known)
    for (const MemoryEffects::EffectInstance &effect : *effects) {
      if (isa<MemoryEffects::Allocate>(effect.getEffect()))
        continue;
      if (!effect.getValue()) {
        known = false;
        break;
      }
      Value root = kiln::rootThroughMetadata(effect.getValue());
      if (isa<MemoryEffects::Read>(effect.getEffect()))
        accesses.read.push_back(root);
      else
        accesses.written.push_back(root);
    }
  if (known)
    return accesses;
  accesses = Accesses();
  for (Value value : used)
    if (isa<MemRefType>(value.getType()))
      accesses.written.push_back(kiln::rootThroughMetadata(value));
  return accesses;
}

/// Whether two roots may be the same memory.
static bool mayOverlap(Value a, Value b) {
  return a == b ||
         (!isPrivateBuffer(a) && !isPrivateBuffer(b) && kiln::mayAlias(a, b));
}

/// Whether `op` and a launch with `accesses` conflict: `op` writes or
/// frees what the launch reads or writes, or reads what it writes.
static bool conflicts(Operation *op, const Accesses &accesses) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return true;
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      continue;
    if (!effect.getValue())
      return true;
    Value root = kiln::rootThroughMetadata(effect.getValue());
    auto overlaps = [&](ArrayRef<Value> buffers) {
      return llvm::any_of(
          buffers, [&](Value buffer) { return mayOverlap(root, buffer); });
    };
    if (overlaps(accesses.written) ||
        (!isa<MemoryEffects::Read>(effect.getEffect()) &&
         overlaps(accesses.read)))
      return true;
  }
  return false;
}

namespace {

/// A launch that may join a merged one: one block of `size` threads in x.
struct Part {
  gpu::LaunchOp launch;
  int64_t size;
  /// Whether the body holds a gpu op (a barrier, a reduction over the
  /// block, a block size read by an op): it runs with all its threads.
  bool synchronizes;
};

/// The part `launch` would be, if it is one.
std::optional<Part> partOf(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
      launch.getNumWorkgroupAttributions() ||
      launch.getNumPrivateAttributions() || !launch.getBody().hasOneBlock() ||
      !isa<gpu::TerminatorOp>(launch.getBody().front().back()))
    return std::nullopt;
  auto isOne = [](Value value) {
    std::optional<int64_t> constant = getConstantIntValue(value);
    return constant && *constant == 1;
  };
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  std::optional<int64_t> size = getConstantIntValue(block.x);
  if (!isOne(grid.x) || !isOne(grid.y) || !isOne(grid.z) || !isOne(block.y) ||
      !isOne(block.z) || !size || *size < 1 || *size > kMaxBlockSize)
    return std::nullopt;
  bool synchronizes = false;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::GPUDialect>(op->getDialect()) && !isa<gpu::TerminatorOp>(op))
      synchronizes = true;
    // Anything outside the gpu dialect that talks to other threads (NVVM's
    // barriers and shuffles) is as good as a gpu op here.
    if (op->getDialect() && op->getDialect()->getNamespace() == "nvvm")
      synchronizes = true;
  });
  return Part{launch, *size, synchronizes};
}

/// A run of launches in one block to be merged into the first's place.
class Run {
public:
  explicit Run(Part first) : parts{first}, size(first.size) {
    if (first.synchronizes)
      syncSize = first.size;
  }

  /// Adds `next` if it can join; false if not (the run is left as it was).
  bool tryAdd(Part next) {
    int64_t merged = std::max(size, next.size);
    // Every part that synchronizes runs with the merged block's threads.
    if ((next.synchronizes && next.size != merged) ||
        (syncSize && *syncSize != merged))
      return false;
    llvm::SetVector<Operation *> moved;
    if (!canMoveUp(next.launch, moved))
      return false;
    parts.push_back(next);
    size = merged;
    if (next.synchronizes)
      syncSize = next.size;
    hoisted.insert(moved.begin(), moved.end());
    return true;
  }

  /// Replaces the run (of at least two launches) by one launch.
  void merge() {
    gpu::LaunchOp first = parts.front().launch;
    // The host code the later parts use, in its order, before the first.
    SmallVector<Operation *> toHoist(hoisted.begin(), hoisted.end());
    llvm::sort(toHoist, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : toHoist)
      op->moveBefore(first);

    Location loc = first.getLoc();
    OpBuilder builder(first);
    Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
    Value threads = builder.create<arith::ConstantIndexOp>(loc, size);
    auto merged =
        builder.create<gpu::LaunchOp>(loc, one, one, one, threads, one, one);
    Block &body = merged.getBody().front();
    builder.setInsertionPointToStart(&body);
    auto terminator = builder.create<gpu::TerminatorOp>(loc);
    for (auto [index, part] : llvm::enumerate(parts)) {
      builder.setInsertionPoint(terminator);
      if (index)
        builder.create<gpu::BarrierOp>(loc);
      Value partSize = builder.create<arith::ConstantIndexOp>(loc, part.size);
      IRMapping mapping;
      auto map = [&](gpu::KernelDim3 from, gpu::KernelDim3 to) {
        mapping.map(from.x, to.x);
        mapping.map(from.y, to.y);
        mapping.map(from.z, to.z);
      };
      map(part.launch.getBlockIds(), merged.getBlockIds());
      map(part.launch.getThreadIds(), merged.getThreadIds());
      map(part.launch.getGridSize(), merged.getGridSize());
      map(part.launch.getBlockSize(), merged.getBlockSize());
      mapping.map(part.launch.getBlockSize().x, partSize);
      if (part.size < size) {
        Value inPart = builder.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::ult, merged.getThreadIds().x, partSize);
        auto guard = builder.create<scf::IfOp>(loc, inPart,
                                               /*withElseRegion=*/false);
        builder.setInsertionPoint(guard.thenBlock()->getTerminator());
      }
      for (Operation &op : part.launch.getBody().front().without_terminator())
        builder.clone(op, mapping);
    }
    for (Part &part : parts)
      part.launch->erase();
  }

  size_t length() const { return parts.size(); }

private:
  /// Whether `next` can run where the run's first launch is: what it uses
  /// from between them can move before the first launch (collected in
  /// `moved`), and nothing else between them touches its buffers.
  bool canMoveUp(gpu::LaunchOp next, llvm::SetVector<Operation *> &moved) {
    gpu::LaunchOp first = parts.front().launch;
    auto between = [&](Operation *op) {
      return op && op->getBlock() == first->getBlock() &&
             first->isBeforeInBlock(op) && op->isBeforeInBlock(next);
    };
    // The values the body uses from outside, and what they are computed
    // from between the launches.
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(next.getBody(), next.getBody(), used);
    SmallVector<Value> pending(used.begin(), used.end());
    while (!pending.empty()) {
      Operation *definition = pending.pop_back_val().getDefiningOp();
      if (!between(definition) || hoisted.contains(definition) ||
          moved.contains(definition))
        continue;
      bool allocation = isa<memref::AllocOp, memref::AllocaOp>(definition);
      if (definition->getNumRegions() ||
          !(allocation || isMemoryEffectFree(definition)))
        return false;
      moved.insert(definition);
      llvm::append_range(pending, definition->getOperands());
    }
    Accesses accesses = accessesOf(next, used);
    for (Operation *op = first->getNextNode(); op != next;
         op = op->getNextNode()) {
      if (moved.contains(op) || hoisted.contains(op) ||
          llvm::any_of(parts, [&](Part &part) {
            return part.launch.getOperation() == op;
          }))
        continue;
      if (op->getNumRegions() || isa<gpu::LaunchOp, func::CallOp>(op) ||
          isa<gpu::GPUDialect>(op->getDialect()) || conflicts(op, accesses))
        return false;
    }
    return true;
  }

  SmallVector<Part> parts;
  int64_t size;
  /// The block size of the parts that synchronize (all the same).
  std::optional<int64_t> syncSize;
  /// Host code the later parts use, to move before the first.
  llvm::SetVector<Operation *> hoisted;
};

struct KilnCudaMergeLaunchesPass
    : kiln::impl::KilnCudaMergeLaunchesBase<KilnCudaMergeLaunchesPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
          !isa<gpu::LaunchOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      mergeIn(*block);
  }

  /// Merges the runs of launches in `block`.
  static void mergeIn(Block &block) {
    SmallVector<Run> runs;
    std::optional<Run> run;
    auto close = [&]() {
      if (run && run->length() > 1)
        runs.push_back(std::move(*run));
      run.reset();
    };
    for (Operation &op : block) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch)
        continue;
      std::optional<Part> part = partOf(launch);
      if (!part) {
        close();
        continue;
      }
      if (run && run->tryAdd(*part))
        continue;
      close();
      run.emplace(*part);
    }
    close();
    for (Run &each : runs)
      each.merge();
  }
};
} // namespace
