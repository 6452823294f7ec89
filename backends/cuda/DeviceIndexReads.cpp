//===- DeviceIndexReads.cpp - Dynamic offsets read where kernels use them -===//
//
// A kiln.dynamic_slice or kiln.dynamic_update_slice reads its row index, a
// rank-0 buffer the device holds, on the host: the load clamps it, scales
// it by the row size and offsets a view (memref.reinterpret_cast) that the
// slice's kernel reads or writes. On a GPU that read is a copy back and a
// wait for the stream; it also keeps the call (kiln-cuda-graph-calls) and
// any loop around it (kiln-cuda-graph-loops) from running as a CUDA graph.
//
// A kiln.select with a rank-0 predicate picks one of two whole buffers the
// same way: the host loads the predicate (a copy back and a wait) and
// selects a buffer (arith.select of memrefs) that kernels then read.
//
// Where everything computed from such a load (scalar arithmetic, views, a
// selected buffer) is used only inside loops that become kernels
// (scf.parallel, gpu.launch),
// the load and its arithmetic are cloned into each of those loops instead:
// every thread reads the index (the same word, from the cache), and the
// host reads nothing. A predicate that also decides a kiln.cond keeps its
// host load for the cond alone, which can then take its graph form
// (kiln-cuda-graph-conds needs a predicate read of its own). A clone reads the
// buffer later than the host load did, so this is done only where the host
// never writes it. Where kernels write it between the load and the last
// kernel using the value (bufferization reuses a predicate's byte for the
// next predicate), a one-thread kernel in the load's place first copies the
// value into a fresh buffer on the device, and the clones read that.
//
// A cond's predicate the host would load at such an index (a kiln.cond on
// a predicate a gradient's backward loop reads back from the forward
// loop's stack) is loaded by a one-thread kernel into a buffer of its own
// first, which the host then reads as any cond's predicate
// (kiln-cuda-predicate-copies): the index is the kernel's to read, and
// the cond can take its graph form.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"
#include "common/BufferAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDADEVICEINDEXREADS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
bool isKernelLoop(Operation *op) {
  return isa<scf::ParallelOp, gpu::LaunchOp>(op);
}

/// The outermost loop that becomes a kernel around `op`, if any.
Operation *outermostKernelLoop(Operation *op) {
  Operation *found = nullptr;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isKernelLoop(parent))
      found = parent;
  return found;
}

/// A host load of an index or a predicate and what is computed from it, up
/// to the kernel loops that use it.
struct IndexRead {
  memref::LoadOp load;
  /// The load and the ops computed from it, in program order.
  SmallVector<Operation *> computed;
  /// The kernel loops that use them.
  llvm::SetVector<Operation *> kernels;
};

/// Collects what `load` feeds: true if it is only memory-effect-free ops
/// without regions (scalar arithmetic, views) that end in kernel loops,
/// and conds the loaded predicate itself decides (a kiln.select and a
/// kiln.cond on the same predicate): those keep the host load, and the
/// rest moves into the kernels, so that the load is the cond's alone.
bool collect(IndexRead &read,
             const llvm::DenseMap<Operation *, unsigned> &order) {
  llvm::SetVector<Operation *> computed;
  computed.insert(read.load);
  SmallVector<Value> worklist{read.load.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (Operation *kernel = outermostKernelLoop(user)) {
        read.kernels.insert(kernel);
        continue;
      }
      if (isa<scf::IfOp>(user) && value == read.load.getResult())
        continue;
      // A terminator (a branch or a loop yielding a pick) hands the value
      // on to host code: it cannot move into a kernel.
      if (user->getNumRegions() != 0 || !isMemoryEffectFree(user) ||
          user->hasTrait<OpTrait::IsTerminator>())
        return false;
      if (computed.insert(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  read.computed.assign(computed.begin(), computed.end());
  llvm::sort(read.computed, [&](Operation *a, Operation *b) {
    return order.lookup(a) < order.lookup(b);
  });
  return !read.kernels.empty();
}

/// Whether the index's buffer holds the value the host load read until the
/// kernels using it run. The clones read it when the kernels run, on the
/// stream, so it must not be written between the load and the end of the
/// last of those kernels (whose order the stream keeps), nor by the host
/// anywhere (a host write may come before queued kernels run).
enum class Stability {
  /// Nothing but reads touches the buffer from the load to the kernels.
  Stable,
  /// Kernels write it (or a free frees it) before the last of the kernels
  /// runs, as where bufferization reuses a predicate's byte for the next
  /// predicate: a copy made on the device where the load is holds the
  /// value (readFromCopy).
  Copy,
  /// The host touches it.
  Unstable
};

/// Apart from views, loads and frees, nothing may use the buffer on the
/// host at all (Unstable); kernels and frees may use it outside the span
/// from the load to the last kernel (Stable), or in it, where a copy
/// holds the value (Copy).
Stability stabilityOf(IndexRead &read, func::FuncOp func,
                      const llvm::DenseMap<Operation *, unsigned> &order) {
  Value buffer = kiln::rootThroughMetadata(read.load.getMemRef());
  unsigned from = order.lookup(read.load), to = 0;
  for (Operation *kernel : read.kernels) {
    unsigned last = order.lookup(kernel);
    kernel->walk(
        [&](Operation *op) { last = std::max(last, order.lookup(op)); });
    to = std::max(to, last);
  }
  bool inSpan = false;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<memref::LoadOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    if (!llvm::any_of(op->getOperands(), [&](Value operand) {
          return isa<BaseMemRefType>(operand.getType()) &&
                 kiln::rootThroughMetadata(operand) == buffer;
        }))
      return WalkResult::advance();
    if (!outermostKernelLoop(op) && !isa<memref::DeallocOp>(op))
      return WalkResult::interrupt();
    unsigned at = order.lookup(op);
    inSpan |= at > from && at <= to;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return Stability::Unstable;
  return inSpan ? Stability::Copy : Stability::Stable;
}

/// A fresh rank-0 buffer, and a one-thread kernel at `builder`'s insertion
/// point that stores into it what `load` reads: the copy of the value on
/// the device, in the stream's order.
Value copyInKernel(OpBuilder &builder, memref::LoadOp load) {
  Location loc = load.getLoc();
  Value copy =
      builder.create<memref::AllocOp>(loc, MemRefType::get({}, load.getType()));
  gpu::LaunchOp launch = kiln::createOneThreadLaunch(builder, loc);
  OpBuilder inside(launch.getBody().front().getTerminator());
  Value value =
      inside.create<memref::LoadOp>(loc, load.getMemRef(), load.getIndices());
  inside.create<memref::StoreOp>(loc, value, copy);
  return copy;
}

/// Copies the index's value, where the load reads it, into a fresh buffer
/// on the device: a one-thread kernel queued in the load's place, which
/// the stream runs after the writes the load waited for and before the
/// writes after it. A host load of the copy then feeds what the load fed
/// but the conds it decides (which keep it), and the copy is freed after
/// the last kernel that reads it. Returns that load.
memref::LoadOp readFromCopy(IndexRead &read) {
  memref::LoadOp load = read.load;
  Location loc = load.getLoc();
  OpBuilder builder(load);
  Value copy = copyInKernel(builder, load);
  auto copied = builder.create<memref::LoadOp>(loc, copy);
  load.getResult().replaceUsesWithIf(
      copied, [](OpOperand &use) { return !isa<scf::IfOp>(use.getOwner()); });
  if (load->use_empty())
    load->erase();
  Block *block = copied->getBlock();
  Operation *last = copied;
  for (Operation *kernel : read.kernels)
    if (Operation *ancestor = block->findAncestorOpInBlock(*kernel);
        ancestor && last->isBeforeInBlock(ancestor))
      last = ancestor;
  builder.setInsertionPointAfter(last);
  builder.create<memref::DeallocOp>(loc, copy);
  return copied;
}

/// Clones into each of `read`'s kernel loops what it uses of what `read`
/// computes (each op is placed before the loop, so what it uses is defined
/// there too), and erases the host ops.
void moveIntoKernels(IndexRead &read) {
  llvm::DenseSet<Operation *> computed(read.computed.begin(),
                                       read.computed.end());
  for (Operation *kernel : read.kernels) {
    // What the loop uses, and what that is computed from.
    llvm::DenseSet<Operation *> needed;
    SmallVector<Operation *> worklist;
    kernel->walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && computed.contains(def) && needed.insert(def).second)
          worklist.push_back(def);
    });
    while (!worklist.empty())
      for (Value operand : worklist.pop_back_val()->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && computed.contains(def) && needed.insert(def).second)
          worklist.push_back(def);
    OpBuilder builder =
        OpBuilder::atBlockBegin(&kernel->getRegion(0).front());
    IRMapping mapping;
    for (Operation *op : read.computed) {
      if (!needed.contains(op))
        continue;
      Operation *clone = builder.clone(*op, mapping);
      for (auto [result, cloned] :
           llvm::zip(op->getResults(), clone->getResults()))
        result.replaceUsesWithIf(cloned, [&](OpOperand &use) {
          return kernel->isProperAncestor(use.getOwner());
        });
    }
  }
  // The load stays where conds still decide on it.
  for (Operation *op : llvm::reverse(read.computed))
    if (op != read.load || op->use_empty())
      op->erase();
}

/// Whether `load` is a host load of a cond's predicate at an index the host
/// reads from memory (a kiln.cond on a predicate a gradient's backward loop
/// reads back from the stack of the forward loop's predicates).
bool isPredicateAtIndex(memref::LoadOp load) {
  return load.getType().isInteger(1) && !outermostKernelLoop(load) &&
         !load->use_empty() &&
         llvm::all_of(load->getUsers(),
                      [](Operation *user) { return isa<scf::IfOp>(user); }) &&
         kiln::addressReadsMemory(load.getMemRef());
}

/// Loads `load`'s predicate in a one-thread kernel into a buffer of its
/// own, which the host reads instead (kiln-cuda-predicate-copies makes
/// that a copy back, a predicate read kiln-cuda-graph-conds takes) and
/// frees right after: the kernel, not the host, then reads the index.
void loadInKernel(memref::LoadOp load) {
  Location loc = load.getLoc();
  OpBuilder builder(load);
  Value own = copyInKernel(builder, load);
  Value read = builder.create<memref::LoadOp>(loc, own);
  builder.create<memref::DeallocOp>(loc, own);
  load.getResult().replaceAllUsesWith(read);
  load.erase();
}

struct KilnCudaDeviceIndexReadsPass
    : kiln::impl::KilnCudaDeviceIndexReadsBase<KilnCudaDeviceIndexReadsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<memref::LoadOp> predicates;
    func.walk([&](memref::LoadOp load) {
      if (isPredicateAtIndex(load))
        predicates.push_back(load);
    });
    for (memref::LoadOp load : predicates)
      loadInKernel(load);
    SmallVector<memref::LoadOp> loads;
    func.walk([&](memref::LoadOp load) {
      if (load.getMemRefType().getRank() == 0 &&
          load.getType().isIntOrIndex() && !outermostKernelLoop(load))
        loads.push_back(load);
    });
    for (memref::LoadOp load : loads) {
      // Program order (pre-order), renumbered as ops move.
      llvm::DenseMap<Operation *, unsigned> order;
      func.walk<WalkOrder::PreOrder>(
          [&](Operation *op) { order[op] = order.size(); });
      IndexRead read{load, {}, {}};
      if (!collect(read, order))
        continue;
      Stability stability = stabilityOf(read, func, order);
      if (stability == Stability::Unstable)
        continue;
      if (stability == Stability::Copy) {
        memref::LoadOp copied = readFromCopy(read);
        order.clear();
        func.walk<WalkOrder::PreOrder>(
            [&](Operation *op) { order[op] = order.size(); });
        read = IndexRead{copied, {}, {}};
        // The copy feeds the same ops and kernels.
        if (!collect(read, order))
          continue;
      }
      moveIntoKernels(read);
    }
  }
};
} // namespace
