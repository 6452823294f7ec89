//===- PlanMemory.cpp - Intermediate buffers share one arena --------------===//
//
// After bufferization every intermediate tensor is its own allocation, and
// ownership-based deallocation frees them at the end of their block, so all
// of a function's intermediates are live at once. This pass plans the
// statically shaped allocations of each block into one arena: a buffer's
// lifetime runs from its allocation to the last op of the block that uses
// it (or any view of it, in any nested region); buffers whose lifetimes do
// not overlap get overlapping byte ranges (first fit, 64-byte aligned, by
// planArena in backends/common/ArenaPlanner.h, which the CUDA arena uses
// too), and
// each allocation becomes a memref.view into the arena. The arena is one
// allocation of the block, which the deallocation pipeline frees like any
// other. Buffers that escape the block (yielded, returned, passed to a
// function the module only declares or to one that returns a buffer, or to
// any op this pass does not know to only use them) keep their own
// allocation.
//
// With `report`, each function gets a remark with the bytes of its
// statically shaped intermediates, summed, and the bytes they take after
// planning (arenas plus the allocations left alone). An allocation inside a
// loop body counts once. A block is left alone when alignment padding would
// make its arena no smaller than its buffers.
//
//===----------------------------------------------------------------------===//

#include "PlainAccess.h"
#include "common/ArenaPlanner.h"
#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPLANMEMORY
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

static constexpr int64_t kAlignment = 64;

namespace {
/// One allocation planned into its block's arena.
struct Buffer {
  memref::AllocOp alloc;
  ArenaSlot slot; // positions in the block, inclusive
};
} // namespace

/// Position in `block` of the last op that uses `value` or a view of it;
/// nullopt when a use lets the buffer escape.
static std::optional<unsigned>
lastUse(Value value, Block &block,
        const llvm::DenseMap<Operation *, unsigned> &positions) {
  unsigned last = 0;
  bool planned = walkBufferUses(value, [&](Operation *user, Value) {
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    if (!ancestor)
      return false;
    last = std::max(last, positions.lookup(ancestor));
    return true;
  });
  if (!planned)
    return std::nullopt;
  return last;
}

/// Plans the allocations of `block`; returns the bytes of its statically
/// shaped allocations, summed, and the bytes they take after planning (the
/// arena plus the allocations left alone).
static std::pair<int64_t, int64_t> planBlock(Block &block) {
  int64_t allBytes = 0;
  for (Operation &op : block)
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      if (std::optional<int64_t> bytes = staticBufferBytes(alloc.getType()))
        allBytes += *bytes;
  llvm::DenseMap<Operation *, unsigned> positions;
  unsigned position = 0;
  for (Operation &op : block)
    positions[&op] = position++;

  SmallVector<Buffer> buffers;
  for (Operation &op : block) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc || !alloc.getDynamicSizes().empty() ||
        !alloc.getSymbolOperands().empty())
      continue;
    std::optional<int64_t> bytes = staticBufferBytes(alloc.getType());
    if (!bytes || *bytes == 0)
      continue;
    std::optional<unsigned> end = lastUse(alloc, block, positions);
    if (!end)
      continue;
    int64_t start = positions[alloc];
    buffers.push_back({alloc, {*bytes, start, std::max<int64_t>(start, *end)}});
  }
  if (buffers.size() < 2)
    return {allBytes, allBytes};

  // First fit in allocation order among the buffers still live.
  SmallVector<ArenaSlot> slots;
  int64_t totalBytes = 0;
  for (Buffer &buffer : buffers) {
    slots.push_back(buffer.slot);
    totalBytes += buffer.slot.bytes;
  }
  int64_t arenaBytes = planArena(slots, kAlignment);
  for (auto [buffer, slot] : llvm::zip(buffers, slots))
    buffer.slot.offset = slot.offset;
  // Alignment padding can cost more than sharing saves (tiny buffers).
  if (arenaBytes >= totalBytes)
    return {allBytes, allBytes};

  OpBuilder builder(buffers.front().alloc);
  Location loc = buffers.front().alloc.getLoc();
  auto arena = builder.create<memref::AllocOp>(
      loc, MemRefType::get({arenaBytes}, builder.getI8Type()),
      builder.getI64IntegerAttr(kAlignment));
  for (Buffer &buffer : buffers) {
    builder.setInsertionPoint(buffer.alloc);
    Value shift =
        builder.create<arith::ConstantIndexOp>(buffer.alloc.getLoc(),
                                               buffer.slot.offset);
    Value view = builder.create<memref::ViewOp>(
        buffer.alloc.getLoc(), buffer.alloc.getType(), arena, shift,
        ValueRange());
    buffer.alloc.replaceAllUsesWith(view);
    buffer.alloc.erase();
  }
  return {allBytes, allBytes - totalBytes + arenaBytes};
}

namespace {
struct KilnCpuPlanMemoryPass
    : kiln::impl::KilnCpuPlanMemoryBase<KilnCpuPlanMemoryPass> {
  using KilnCpuPlanMemoryBase::KilnCpuPlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    SmallVector<Block *> blocks;
    function.walk([&](Block *block) { blocks.push_back(block); });
    int64_t total = 0, planned = 0;
    for (Block *block : blocks) {
      auto [blockTotal, blockPlanned] = planBlock(*block);
      total += blockTotal;
      planned += blockPlanned;
    }
    // Emitted on the location rather than the op, so that the report is
    // one line and does not print the whole function after it.
    if (report)
      mlir::emitRemark(function.getLoc()) << "memory plan for @" << function.getName()
                            << ": intermediates " << total
                            << " bytes in total, " << planned
                            << " bytes after planning";
  }
};
} // namespace
