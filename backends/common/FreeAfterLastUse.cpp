//===- FreeAfterLastUse.cpp - Deallocations moved up to the last use -----===//
//
// Ownership-based deallocation puts one bufferization.dealloc at the end of
// each block for the buffers the block owns. A buffer that escapes the
// planned arenas (kiln-cpu-plan-memory) - the result of a kiln.cond's
// scf.if, of a loop, a call operand - thus lives until its block ends, which
// for a function's body is the return: a pipelined training step would hold
// every micro-batch's kept activations at once, whatever its schedule.
//
// Each memref m of a block's dealloc D is split off into a dealloc of its
// own, right after the last op of the block that uses m or a value derived
// from it (views, region results and arguments it flows into, by
// BufferViewFlowAnalysis; the op holding the use, for one in a nested
// region). The derivation stops at the values D still frees or retains,
// the carriers, which own what is derived from them, and at values the
// function never owns (its arguments, constant globals: where m is such a
// buffer its condition is false and its dealloc frees nothing). As the
// bufferization.dealloc documentation describes splitting, the new dealloc
// retains the carriers of m's alias class (both directions of the
// analysis) that exist there - a kiln.cond's result that may be m passed
// through - so that it frees m only where m is none of them, and its
// results, whether m was one of them and owned, are or'ed into their
// conditions in D and into D's results: the carrier frees the buffer once,
// after its own last use. Deallocations and the metadata ops that take out
// a region result's base buffer for D are bookkeeping, not uses; m's moves
// with it. A memref whose derived values are used outside the block, or
// whose class another dealloc of the block names, stays.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Bufferization/IR/BufferViewFlowOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFREEAFTERLASTUSE
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using bufferization::DeallocOp;

/// Whether the function never owns `value`'s buffer: an argument (upstream's
/// function boundary ABI) or a constant global.
static bool isNeverOwned(Value value, func::FuncOp function) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return argument.getOwner() == &function.getBody().front();
  return value.getDefiningOp<memref::GetGlobalOp>() != nullptr;
}

/// Whether `op` only takes out a buffer's base for deallocations.
static bool isBookkeeping(Operation *op) {
  return isa<memref::ExtractStridedMetadataOp>(op) &&
         llvm::all_of(op->getUsers(),
                      [](Operation *user) { return isa<DeallocOp>(user); });
}

/// Whether BufferViewFlowAnalysis relates `op`'s buffer results to its
/// operands; it takes any other op's results for new buffers.
static bool isUnderstood(Operation *op) {
  return isa<bufferization::BufferViewFlowOpInterface, ViewLikeOpInterface,
             RegionBranchOpInterface, BranchOpInterface, CallOpInterface,
             RegionBranchTerminatorOpInterface>(op);
}

/// The buffers an op the analysis does not understand may make of `value`
/// (forward: its buffer results where `value` is an operand) or make
/// `value` of (backward: the buffer operands of its definer): all of them,
/// as an alias of what it reads is what an unknown op may return.
static SmallVector<Value> unknownNeighbours(Value value, bool forward) {
  SmallVector<Value> neighbours;
  auto buffers = [&](ValueRange values) {
    for (Value v : values)
      if (isa<BaseMemRefType>(v.getType()))
        neighbours.push_back(v);
  };
  if (forward) {
    for (Operation *user : value.getUsers())
      if (!isUnderstood(user) && !isa<DeallocOp>(user))
        buffers(user->getResults());
  } else if (Operation *definer = value.getDefiningOp()) {
    if (!isUnderstood(definer))
      buffers(definer->getOperands());
  }
  return neighbours;
}

/// The buffers reachable from `value` through BufferViewFlowAnalysis's
/// dependencies (and unknown ops'), with the base buffers taken out of
/// them: forward only (what derives from `value`, up to but excluding the
/// `stops`) or in both directions (what may share its memory); never
/// through values the function never owns.
static llvm::SetVector<Value> closure(Value value,
                                      const BufferViewFlowAnalysis &flow,
                                      func::FuncOp function,
                                      const llvm::DenseSet<Value> &stops,
                                      bool bothDirections) {
  llvm::SetVector<Value> members;
  members.insert(value);
  for (size_t next = 0; next < members.size(); ++next) {
    Value member = members[next];
    SmallVector<Value> neighbours = unknownNeighbours(member, true);
    auto known = flow.find(member);
    if (known != flow.end())
      neighbours.append(known->second.begin(), known->second.end());
    if (bothDirections) {
      llvm::append_range(neighbours, flow.resolveReverse(member));
      llvm::append_range(neighbours, unknownNeighbours(member, false));
    }
    for (Value neighbour : neighbours)
      if (isa<BaseMemRefType>(neighbour.getType()) &&
          !stops.contains(neighbour) && !isNeverOwned(neighbour, function))
        members.insert(neighbour);
    for (Operation *user : member.getUsers())
      if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user))
        members.insert(metadata.getBaseBuffer());
  }
  return members;
}

/// The last op of `block` that uses a value of `members` or defines one or
/// `condition`, apart from deallocations and bookkeeping; null with `escapes`
/// set when a use lies outside the block (the buffer then stays where its
/// owner frees it).
static Operation *lastUseInBlock(const llvm::SetVector<Value> &members,
                                 Value condition, Block &block,
                                 DeallocOp dealloc, bool &escapes) {
  Operation *last = nullptr;
  auto later = [&](Operation *op) {
    if (op && (!last || last->isBeforeInBlock(op)))
      last = op;
  };
  auto definedIn = [&](Value value) -> Operation * {
    Operation *definer = value.getDefiningOp();
    return definer ? block.findAncestorOpInBlock(*definer) : nullptr;
  };
  escapes = false;
  later(definedIn(condition));
  for (Value member : members) {
    Operation *definer = member.getDefiningOp();
    if (!definer || !isBookkeeping(definer))
      later(definedIn(member));
    for (Operation *user : member.getUsers()) {
      // Deallocations only compare the buffers they retain, and free those
      // they name where no retained value aliases them.
      if (isa<DeallocOp>(user) || isBookkeeping(user))
        continue;
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor) {
        escapes = true;
        return nullptr;
      }
      later(ancestor);
    }
  }
  return last;
}

namespace {
struct KilnFreeAfterLastUsePass
    : kiln::impl::KilnFreeAfterLastUseBase<KilnFreeAfterLastUsePass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    SmallVector<DeallocOp> deallocs;
    function.walk([&](DeallocOp dealloc) { deallocs.push_back(dealloc); });
    if (deallocs.empty())
      return;
    // What the block's other deallocs name, before any is rewritten: a
    // buffer aliasing one of those stays with its dealloc.
    std::vector<llvm::DenseSet<Value>> namedByOthers(deallocs.size());
    for (auto [index, dealloc] : llvm::enumerate(deallocs))
      for (DeallocOp other : deallocs)
        if (other != dealloc && other->getBlock() == dealloc->getBlock()) {
          namedByOthers[index].insert(other.getMemrefs().begin(),
                                      other.getMemrefs().end());
          namedByOthers[index].insert(other.getRetained().begin(),
                                      other.getRetained().end());
        }
    BufferViewFlowAnalysis flow(function);
    for (auto [index, dealloc] : llvm::enumerate(deallocs))
      freeEarly(dealloc, namedByOthers[index], flow, function);
  }

  /// Splits the memrefs of `dealloc` that can be freed earlier into
  /// deallocs of their own after their last uses.
  void freeEarly(DeallocOp dealloc, const llvm::DenseSet<Value> &namedByOthers,
                 const BufferViewFlowAnalysis &flow, func::FuncOp function) {
    Block &block = *dealloc->getBlock();
    SmallVector<Value> memrefs(dealloc.getMemrefs());
    SmallVector<Value> conditions(dealloc.getConditions());
    SmallVector<Value> retained(dealloc.getRetained());
    SmallVector<bool> kept(memrefs.size(), true);
    SmallVector<SmallVector<Value>> retainedOwnership(retained.size());
    // A value to retain in place of one the dealloc names: the region
    // result whose base buffer bookkeeping takes out right before it.
    auto handle = [&](Value value) -> Value {
      if (auto metadata =
              value.getDefiningOp<memref::ExtractStridedMetadataOp>())
        if (metadata->getBlock() == &block && isBookkeeping(metadata))
          return metadata.getSource();
      return value;
    };
    bool moved = false;
    for (size_t i = 0; i < memrefs.size(); ++i) {
      Value memref = memrefs[i];
      auto metadata = memref.getDefiningOp<memref::ExtractStridedMetadataOp>();
      if (metadata && (metadata->getBlock() != &block ||
                       !llvm::all_of(metadata->getUsers(), [&](Operation *u) {
                         return u == dealloc.getOperation();
                       })))
        metadata = nullptr;
      Value root = metadata ? metadata.getSource() : memref;
      if (isNeverOwned(root, function))
        continue;
      // The values that may share memory with m while m is owned here.
      llvm::SetVector<Value> members =
          closure(root, flow, function, {}, /*bothDirections=*/true);
      members.insert(memref);
      if (llvm::any_of(members,
                       [&](Value v) { return namedByOthers.contains(v); }))
        continue;
      // The values the dealloc still frees or retains (other than this
      // one) carry their own ownership: what is derived from them is theirs
      // to wait for.
      llvm::DenseSet<Value> carriers;
      for (size_t k = 0; k < memrefs.size(); ++k)
        if (k != i && kept[k]) {
          carriers.insert(memrefs[k]);
          carriers.insert(handle(memrefs[k]));
        }
      carriers.insert(retained.begin(), retained.end());
      carriers.erase(root);
      carriers.erase(memref);
      // The values derived from m up to the carriers.
      llvm::SetVector<Value> derived =
          closure(root, flow, function, carriers, /*bothDirections=*/false);
      derived.insert(memref);
      bool escapes = false;
      Operation *last =
          lastUseInBlock(derived, conditions[i], block, dealloc, escapes);
      if (escapes || !last || !last->isBeforeInBlock(dealloc))
        continue;
      // The carriers of the class that exist there are retained: the buffer
      // may be one of them (a kiln.cond passed it through).
      auto inScope = [&](Value value) {
        Operation *definer = value.getDefiningOp();
        Operation *ancestor =
            definer ? block.findAncestorOpInBlock(*definer) : nullptr;
        return !ancestor || ancestor == last || ancestor->isBeforeInBlock(last);
      };
      SmallVector<unsigned> aliasMemrefs, aliasRetained;
      SmallVector<Value> retain;
      for (size_t k = 0; k < memrefs.size(); ++k)
        if (k != i && kept[k] && members.contains(memrefs[k]) &&
            inScope(handle(memrefs[k]))) {
          aliasMemrefs.push_back(k);
          retain.push_back(handle(memrefs[k]));
          // Its condition is or'ed with the new dealloc's result there.
          if (Operation *definer = conditions[k].getDefiningOp())
            if (Operation *ancestor = block.findAncestorOpInBlock(*definer))
              if (last->isBeforeInBlock(ancestor))
                last = ancestor;
        }
      for (size_t j = 0; j < retained.size(); ++j)
        if (members.contains(retained[j]) && inScope(retained[j])) {
          aliasRetained.push_back(j);
          retain.push_back(retained[j]);
        }
      // Nothing to gain unless an op other than bookkeeping lies between
      // the last use and the dealloc.
      Operation *next = last->getNextNode();
      while (next != dealloc.getOperation() && isBookkeeping(next))
        next = next->getNextNode();
      if (next == dealloc.getOperation())
        continue;
      if (metadata) {
        metadata->moveAfter(last);
        last = metadata;
      }
      OpBuilder builder(last->getContext());
      builder.setInsertionPointAfter(last);
      Location loc = dealloc.getLoc();
      auto early = builder.create<DeallocOp>(loc, ValueRange{memref},
                                             ValueRange{conditions[i]}, retain);
      // Where the buffer was one of the retained values, and owned, that
      // value now holds the ownership.
      for (auto [index, k] : llvm::enumerate(aliasMemrefs))
        conditions[k] = builder.create<arith::OrIOp>(
            loc, conditions[k], early.getUpdatedConditions()[index]);
      for (auto [index, j] : llvm::enumerate(aliasRetained))
        retainedOwnership[j].push_back(
            early.getUpdatedConditions()[aliasMemrefs.size() + index]);
      kept[i] = false;
      moved = true;
    }
    if (!moved)
      return;

    SmallVector<Value> keptMemrefs, keptConditions;
    for (size_t i = 0; i < memrefs.size(); ++i)
      if (kept[i]) {
        keptMemrefs.push_back(memrefs[i]);
        keptConditions.push_back(conditions[i]);
      }
    if (keptMemrefs.empty() && retained.empty()) {
      dealloc.erase();
      return;
    }
    OpBuilder builder(dealloc);
    auto rest = builder.create<DeallocOp>(dealloc.getLoc(), keptMemrefs,
                                          keptConditions, retained);
    builder.setInsertionPointAfter(rest);
    for (auto [j, result] : llvm::enumerate(dealloc.getUpdatedConditions())) {
      Value ownership = rest.getUpdatedConditions()[j];
      for (Value early : retainedOwnership[j])
        ownership =
            builder.create<arith::OrIOp>(dealloc.getLoc(), ownership, early);
      result.replaceAllUsesWith(ownership);
    }
    dealloc.erase();
  }
};
} // namespace
