//===- DeviceWork.h - Host code that only queues device work ----*- C++ -*-===//
//
// The runtime can capture host code into a CUDA graph (a loop's test and
// body, kiln-cuda-graph-loops; a whole call, kiln-cuda-graph-calls) only
// where the code queues work on the stream and nothing else: a capture
// records the work instead of running it, so the host must not wait for
// the stream nor touch device results meanwhile, and the captured work
// must not read host memory that changes between launches.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_DEVICEWORK_H
#define KILN_BACKENDS_CUDA_DEVICEWORK_H

#include "RuntimeCalls.h"
#include "TunedSites.h"

#include "common/BufferAccess.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace mlir::kiln {

/// Whether `value` is host memory: a stack slot, a global, host heap
/// memory, or managed memory (which the host code touches).
inline bool isHostMemory(Value value) {
  Value root = rootThroughMetadata(value);
  if (root.getDefiningOp<memref::AllocaOp>() ||
      root.getDefiningOp<memref::GetGlobalOp>() ||
      root.getDefiningOp<memref::AllocOp>())
    return true;
  if (auto alloc = root.getDefiningOp<gpu::AllocOp>())
    return alloc.getHostShared();
  return false;
}

/// Whether `op`, in host code outside kernels and without regions, only
/// queues work on the stream or computes host values without touching
/// memory: a stream-ordered wait, device allocation or free, or copy
/// between device buffers, a call of the runtime's library work or of a
/// graph form (isDeviceWorkCall), or of one of `otherCalls` (runtime calls
/// the caller allows besides), views and metadata, pure arithmetic.
inline bool queuesDeviceWorkOnly(Operation *op,
                                 ArrayRef<StringLiteral> otherCalls) {
  if (auto wait = dyn_cast<gpu::WaitOp>(op))
    return static_cast<bool>(wait.getAsyncToken());
  if (auto alloc = dyn_cast<gpu::AllocOp>(op))
    return !alloc.getHostShared() && alloc.getAsyncToken();
  if (auto dealloc = dyn_cast<gpu::DeallocOp>(op))
    return static_cast<bool>(dealloc.getAsyncToken());
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
    return copy.getAsyncToken() && !isHostMemory(copy.getSrc()) &&
           !isHostMemory(copy.getDst());
  if (auto call = dyn_cast<func::CallOp>(op))
    return isDeviceWorkCall(call.getCallee(), otherCalls);
  if (isa<memref::ExtractStridedMetadataOp,
          memref::ExtractAlignedPointerAsIndexOp, LLVM::IntToPtrOp>(op) ||
      isa<ViewLikeOpInterface>(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// The function bufferization's lowering of deallocations calls for its
/// run-time alias check, where buffers to free may alias.
constexpr StringLiteral kDeallocHelper = "dealloc_helper";

/// Whether `op` is part of bufferization's run-time alias check on host
/// buffers that `region` allocates (`memref.alloc`: the addresses and
/// conditions that its `dealloc_helper` reads and the frees it writes):
/// such a buffer's allocation, free, stores and loads, and the helper's
/// call on such buffers. Its decisions come from buffer addresses, which a
/// captured graph keeps, so a capture decides them as every replay would.
inline bool isAliasCheckWork(Operation *op, Region &region) {
  auto ownHostBuffer = [&](Value value) {
    auto alloc = rootThroughMetadata(value).getDefiningOp<memref::AllocOp>();
    return alloc && region.isAncestor(alloc->getParentRegion());
  };
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return region.isAncestor(alloc->getParentRegion());
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    return ownHostBuffer(dealloc.getMemref());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return ownHostBuffer(store.getMemRef());
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return ownHostBuffer(load.getMemRef());
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == kDeallocHelper &&
         llvm::all_of(call.getOperands(), [&](Value operand) {
           return !isa<BaseMemRefType>(operand.getType()) ||
                  ownHostBuffer(operand);
         });
}

/// A fresh `gpu.wait async`: in kiln's runtime, whose work all runs in
/// order on the module's one stream, a token that stands for the stream
/// (what a dropped or replaced op's token becomes).
inline Value streamToken(OpBuilder &builder, Location loc) {
  return builder
      .create<gpu::WaitOp>(loc, builder.getType<gpu::AsyncTokenType>(),
                           ValueRange())
      .getAsyncToken();
}

/// A `gpu.launch` of one block of one thread, at `builder`'s insertion
/// point, with an empty body but its terminator: scalar work on device
/// buffers (kiln-cuda-scalar-kernels, a copy of an index by
/// kiln-cuda-device-index-reads) goes before that terminator.
inline gpu::LaunchOp createOneThreadLaunch(OpBuilder &builder, Location loc) {
  Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
  auto launch =
      builder.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
  OpBuilder::atBlockBegin(&launch.getBody().front())
      .create<gpu::TerminatorOp>(loc);
  return launch;
}

/// The choice kiln-cuda-graph-loops and kiln-cuda-graph-conds put where a
/// loop or a cond was: `scf.if (query(operands) != 0)` with `results`, the
/// graph form to go into its then block and the host form into its else block,
/// both left empty (without terminators) for the caller to fill.
inline scf::IfOp createGraphFormChoice(OpBuilder &builder, Location loc,
                                       func::FuncOp query, TypeRange results,
                                       ValueRange operands = {}) {
  Value answer =
      builder.create<func::CallOp>(loc, query, operands).getResult(0);
  Value zero = builder.create<arith::ConstantIntOp>(loc, 0, 32);
  Value inGraph = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                                answer, zero);
  auto choice =
      builder.create<scf::IfOp>(loc, results, inGraph, /*withElse=*/true);
  // Without results, the blocks come with terminators.
  for (Region &region : choice->getRegions())
    if (!region.front().empty())
      region.front().back().erase();
  return choice;
}

/// The queries of the choices kiln-cuda-graph-loops and
/// kiln-cuda-graph-conds make between a loop's or a cond's graph form and
/// its host form (createGraphFormChoice).
inline const StringRef kGraphFormQueries[] = {
    KILN_CUDA_GRAPH_LOOPS_FUNCTION, KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION,
    KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION, KILN_CUDA_GRAPH_CONDS_FUNCTION};

/// Whether `branch` is a choice createGraphFormChoice made with a query
/// among `queries` (whose then region is the graph form).
inline bool isGraphFormChoice(scf::IfOp branch, ArrayRef<StringRef> queries) {
  auto compare = branch.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::ne ||
      !matchPattern(compare.getRhs(), m_Zero()))
    return false;
  auto query = compare.getLhs().getDefiningOp<func::CallOp>();
  return query && llvm::is_contained(queries, query.getCallee());
}

/// Whether `op` is the host form of a cond or a loop that has a graph form
/// already (in the else block of the choice between them).
inline bool isHostForm(Operation *op) {
  auto choice = dyn_cast_or_null<scf::IfOp>(op->getParentOp());
  return choice && isGraphFormChoice(choice, kGraphFormQueries) &&
         op->getParentRegion() == &choice.getElseRegion();
}

/// Whether `value` is a result of a choice between a loop's or a cond's
/// graph form and its host form (isGraphFormChoice with `queries`) that
/// the graph form allocates itself: the then block yields there a device
/// allocation of its own. Where the runtime captures, the graph form runs,
/// so that the result is a fresh buffer, which the code that receives it
/// frees as it would the host form's.
inline bool isFreshGraphFormResult(Value value, ArrayRef<StringRef> queries) {
  auto result = dyn_cast<OpResult>(value);
  auto choice = result ? dyn_cast<scf::IfOp>(result.getOwner()) : nullptr;
  if (!choice || !isGraphFormChoice(choice, queries))
    return false;
  Value yielded = rootThroughMetadata(
      choice.thenYield().getOperand(result.getResultNumber()));
  auto alloc = yielded.getDefiningOp<gpu::AllocOp>();
  return alloc && choice.getThenRegion().isAncestor(alloc->getParentRegion());
}

/// Whether `guard` is an scf.if without results or else region that only
/// frees buffers (how ownership-based deallocation guards a free).
inline bool isFreeGuard(scf::IfOp guard) {
  if (guard.getNumResults() || !guard.getElseRegion().empty())
    return false;
  for (Operation &inner : guard.getThenRegion().front())
    if (!isa<gpu::DeallocOp, gpu::WaitOp, scf::YieldOp>(inner))
      return false;
  return true;
}

/// The most trips of a counted loop (a kiln.for) in host code that a
/// capture runs (a loop's iteration, a cond's branch): each trip's work
/// becomes nodes of the graph, captured and instantiated once.
constexpr int64_t kMaxCapturedTrips = 1024;

/// The trips of a counted loop whose bounds and step are constants, if
/// they are (none where the upper bound is below the lower). A tuned call
/// site's loop of rounds (TunedSites.h) runs one round where its work is
/// captured: the runtime runs the chosen variant alone there.
inline std::optional<int64_t> constantTripCount(scf::ForOp counted) {
  if (isTunedSite(counted))
    return 1;
  std::optional<int64_t> trips = mlir::constantTripCount(
      counted.getLowerBound(), counted.getUpperBound(), counted.getStep());
  if (!trips)
    return std::nullopt;
  return std::max<int64_t>(*trips, 0);
}

/// constantTripCount, if at most kMaxCapturedTrips.
inline std::optional<int64_t> tripCount(scf::ForOp counted) {
  std::optional<int64_t> trips = constantTripCount(counted);
  if (!trips || *trips > kMaxCapturedTrips)
    return std::nullopt;
  return trips;
}

/// Whether `value` is the result of a counted loop of at least one trip
/// whose body yields for it a buffer it allocated (through casts), or the
/// fresh graph-form result of a loop or cond in it (what a capture runs): a
/// buffer of the last trip's, which the code around the loop frees.
inline bool isFreshCountedResult(Value value) {
  auto result = dyn_cast<OpResult>(value);
  auto counted = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!counted)
    return false;
  std::optional<int64_t> trips = tripCount(counted);
  if (!trips || *trips < 1)
    return false;
  Value yielded =
      counted.getBody()->getTerminator()->getOperand(result.getResultNumber());
  while (auto cast = yielded.getDefiningOp<memref::CastOp>())
    yielded = cast.getSource();
  Operation *def = yielded.getDefiningOp();
  return def && def->getBlock() == counted.getBody() &&
         (isa<gpu::AllocOp>(def) ||
          isFreshGraphFormResult(yielded, kGraphFormQueries));
}

/// `buffer`, a dense buffer at offset 0 (an allocation, or a cast of one,
/// or a fresh graph-form result, isFreshGraphFormResult) of a static
/// shape, as a memref of identity layout: the identity-layout buffer it is
/// a cast of, else a view of it at offset 0. Not a memref.cast, which a
/// copy would fold back (and gpu.memcpy lowers identity layouts only).
inline Value denseView(OpBuilder &builder, Location loc, Value buffer) {
  Value source = buffer;
  while (auto cast = source.getDefiningOp<memref::CastOp>())
    source = cast.getSource();
  auto type = cast<MemRefType>(source.getType());
  if (type.getLayout().isIdentity())
    return source;
  auto identity = MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<int64_t> strides = getStridesAndOffset(identity).first;
  return builder.create<memref::ReinterpretCastOp>(
      loc, identity, source, /*offset=*/0, type.getShape(), strides);
}

/// A predicate read on the host (the condition of a kiln.while's test or of
/// a kiln.cond): the copy of a device byte into a host stack slot, the
/// wait for it and the load (kiln-cuda-predicate-copies and
/// kiln-cuda-async-launches).
struct PredicateRead {
  gpu::MemcpyOp copy;
  gpu::WaitOp wait;
  memref::LoadOp load;
  Value devicePredicate;
};

/// The predicate read `condition` is the result of, if it is one: its only
/// use (one of its uses, with `severalUses`), a load of a stack slot that
/// only the copy writes and only the load reads, right after the wait for
/// the copy (whose token nothing else uses), in the copy's block; the
/// copied byte is device memory.
inline std::optional<PredicateRead> predicateReadOf(Value condition,
                                                    bool severalUses = false) {
  PredicateRead read;
  read.load = condition.getDefiningOp<memref::LoadOp>();
  if (!read.load || !(severalUses || read.load.getResult().hasOneUse()))
    return std::nullopt;
  Value slot = read.load.getMemRef();
  if (!slot.getDefiningOp<memref::AllocaOp>())
    return std::nullopt;
  read.wait = dyn_cast_or_null<gpu::WaitOp>(read.load->getPrevNode());
  if (!read.wait || read.wait.getAsyncToken() ||
      read.wait.getAsyncDependencies().size() != 1)
    return std::nullopt;
  read.copy =
      read.wait.getAsyncDependencies()[0].getDefiningOp<gpu::MemcpyOp>();
  if (!read.copy || read.copy.getDst() != slot ||
      read.copy->getBlock() != read.load->getBlock() ||
      !read.copy.getAsyncToken().hasOneUse())
    return std::nullopt;
  for (Operation *user : slot.getUsers())
    if (user != read.copy && user != read.load)
      return std::nullopt;
  read.devicePredicate = read.copy.getSrc();
  if (isHostMemory(read.devicePredicate))
    return std::nullopt;
  return read;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_DEVICEWORK_H
