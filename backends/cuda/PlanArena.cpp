//===- PlanArena.cpp - A function's device intermediates in one arena -----===//
//
// After bufferization every intermediate is its own allocation, made and
// freed each time its block runs (once per loop iteration in a loop body).
// The host code of the CUDA backend never touches most of them: only
// kernels and stream-ordered copies do. This pass gives those one device
// arena per function call:
//   1. the ops of the function are numbered in program order, an op's
//      nested regions inside its span [first, last];
//   2. a candidate is a statically shaped `memref.alloc` outside kernels
//      whose uses, followed through views, casts and base-buffer
//      extraction, are all inside a `gpu.launch`, a `gpu.memcpy` or a
//      deallocation, or take its address. It lives from its position to the
//      span end of the last op of its own block that uses it, or holds a
//      call (of a library, kiln-cuda-library-matmul) that takes its address;
//   3. first fit places the candidates in one arena, 64-byte aligned
//      (ArenaPlanner.h): buffers with disjoint lifetimes share bytes, also
//      across loop bodies and branches, and a loop body's buffers keep one
//      place for all iterations (kernels run in stream order, so a later
//      kernel reusing bytes runs after the earlier ones);
//   4. the arena is one `gpu.alloc` of device memory at the function's
//      start, freed before each return; each candidate becomes a
//      `memref.view` of it and its deallocations are erased.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "common/ArenaPlanner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAPLANARENA
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

static constexpr int64_t kAlignment = 64;

namespace {
/// Program-order positions: an op's own and the last of its nested ops.
struct Positions {
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> spans;
  int64_t next = 0;

  void number(Operation *op) {
    int64_t first = next++;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &nested : block)
          number(&nested);
    spans[op] = {first, next - 1};
  }
};

struct Candidate {
  memref::AllocOp alloc;
  llvm::SetVector<Operation *> deallocs;
};
} // namespace

/// The span end of the last op of `block` holding a call that takes a value
/// computed from `address` (an integer, or a pointer made of it), or -1.
static int64_t lastCallTaking(memref::ExtractAlignedPointerAsIndexOp address,
                              Block &block, const Positions &positions) {
  int64_t end = -1;
  SmallVector<Value> worklist{address.getResult()};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      if (isa<func::CallOp>(user)) {
        if (Operation *ancestor = block.findAncestorOpInBlock(*user))
          end = std::max(end, positions.spans.lookup(ancestor).second);
        continue;
      }
      if (user->getNumRegions() == 0)
        worklist.append(user->result_begin(), user->result_end());
    }
  }
  return end;
}

/// The span end of the last op of the allocation's block that uses it as
/// device work; nullopt when a use is anything else. Collects the
/// deallocations of the buffer and its aliases.
static std::optional<int64_t>
deviceLifetimeEnd(memref::AllocOp alloc, const Positions &positions,
                  llvm::SetVector<Operation *> &deallocs) {
  Block &block = *alloc->getBlock();
  int64_t end = positions.spans.lookup(alloc).first;
  SmallVector<Value> worklist{alloc.getMemref()};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        deallocs.insert(dealloc);
        continue;
      }
      if (auto address = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        // An address handed to a library call (kiln-cuda-library-matmul)
        // keeps the buffer alive up to that call; other uses of an address
        // (the deallocation's aliasing checks) touch no memory.
        end = std::max(end, lastCallTaking(address, block, positions));
        continue;
      }
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      if (user->getParentOfType<gpu::LaunchOp>() ||
          isa<gpu::MemcpyOp>(user)) {
        // Device work.
      } else if (auto metadata =
                     dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        worklist.push_back(metadata.getBaseBuffer());
      } else if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != current)
          return std::nullopt;
        worklist.push_back(user->getResult(0));
      } else if (isa<memref::CastOp>(user)) {
        worklist.push_back(user->getResult(0));
      } else {
        return std::nullopt;
      }
      end = std::max(end, positions.spans.lookup(ancestor).second);
    }
  }
  return end;
}

namespace {
struct KilnCudaPlanArenaPass
    : kiln::impl::KilnCudaPlanArenaBase<KilnCudaPlanArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isDeclaration())
      return;
    Positions positions;
    positions.number(function);

    // 2. The candidates, in program order, and what stays on its own.
    SmallVector<Candidate> candidates;
    SmallVector<kiln::ArenaSlot> slots;
    int64_t unplannedBytes = 0;
    function.walk([&](memref::AllocOp alloc) {
      if (alloc->getParentOfType<gpu::LaunchOp>())
        return;
      std::optional<int64_t> bytes =
          kiln::staticBufferBytes(alloc.getType());
      if (!bytes)
        return;
      Candidate candidate{alloc, {}};
      std::optional<int64_t> end;
      if (*bytes > 0 && alloc.getDynamicSizes().empty() &&
          alloc.getSymbolOperands().empty())
        end = deviceLifetimeEnd(alloc, positions, candidate.deallocs);
      if (!end) {
        unplannedBytes += *bytes;
        return;
      }
      kiln::ArenaSlot slot;
      slot.bytes = *bytes;
      slot.start = positions.spans.lookup(alloc).first;
      slot.end = *end;
      slots.push_back(slot);
      candidates.push_back(std::move(candidate));
    });

    // 3. Offsets.
    int64_t planned = 0;
    for (const kiln::ArenaSlot &slot : slots)
      planned += slot.bytes;
    int64_t arenaBytes = kiln::planArena(slots, kAlignment);
    // Entry wrappers only call the function they wrap.
    if (report && !function.getName().starts_with(kiln::kEntryPrefix))
      function.emitRemark()
          << "device memory plan for @" << function.getName() << ": "
          << candidates.size() << " intermediates of " << planned
          << " bytes in total in an arena of " << arenaBytes << " bytes; "
          << unplannedBytes << " bytes in their own allocations";
    if (candidates.empty())
      return;

    // 4. The arena, the views, the frees.
    auto tokenType = gpu::AsyncTokenType::get(&getContext());
    Location loc = function.getLoc();
    OpBuilder builder = OpBuilder::atBlockBegin(&function.getBody().front());
    Value stream =
        builder.create<gpu::WaitOp>(loc, tokenType, ValueRange())
            .getAsyncToken();
    auto arenaType = MemRefType::get({arenaBytes}, builder.getI8Type());
    Value arena = builder
                      .create<gpu::AllocOp>(loc, arenaType, tokenType,
                                            ValueRange{stream}, ValueRange(),
                                            ValueRange(), /*hostShared=*/false)
                      .getMemref();
    for (auto [candidate, slot] : llvm::zip(candidates, slots)) {
      memref::AllocOp alloc = candidate.alloc;
      builder.setInsertionPoint(alloc);
      Value offset =
          builder.create<arith::ConstantIndexOp>(alloc.getLoc(), slot.offset);
      Value view = builder.create<memref::ViewOp>(
          alloc.getLoc(), alloc.getType(), arena, offset, ValueRange());
      for (Operation *dealloc : candidate.deallocs)
        dealloc->erase();
      alloc.replaceAllUsesWith(view);
      alloc.erase();
    }
    function.walk([&](func::ReturnOp ret) {
      OpBuilder atReturn(ret);
      Value last =
          atReturn.create<gpu::WaitOp>(ret.getLoc(), tokenType, ValueRange())
              .getAsyncToken();
      atReturn.create<gpu::DeallocOp>(ret.getLoc(), tokenType,
                                      ValueRange{last}, arena);
    });
  }
};
} // namespace
