//===- FreeAfterLastUse.cpp - Deallocations moved up to the last use -----===//
//
// Ownership-based deallocation puts one bufferization.dealloc at the end of
// each block for the buffers the block owns. A buffer that escapes the
// planned arenas (kiln-cpu-plan-memory) - the result of a kiln.cond's
// scf.if, of a loop, a call operand - thus lives until its block ends, which
// for a function's body is the return: a pipelined training step would hold
// every micro-batch's kept activations at once, whatever its schedule.
//
// For each memref m of a dealloc, the pass collects m's alias class: the
// values BufferViewFlowAnalysis says may be views of m, may flow from m into
// a region or out of one, or m may be a view of or flow from, closed under
// both directions but not through the function's arguments, which the
// function never owns (where m is an argument's buffer, its condition is
// false and its dealloc frees nothing). If no other dealloc names a value
// of that class (as a memref or a retained value), m's deallocation can
// leave the others: it is
// split off into a dealloc of its own, with its ownership condition and no
// retained values, right after the last op of the block that uses a value
// of the class (the op holding the use, for a use in a nested region). The
// original dealloc's results, the ownership of its retained values, do not
// change: m aliases none of them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFREEAFTERLASTUSE
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using bufferization::DeallocOp;

/// Whether `value` is an argument of `function`: the caller's buffer,
/// which the function never owns (upstream's function boundary ABI).
static bool isFunctionArgument(Value value, func::FuncOp function) {
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && argument.getOwner() == &function.getBody().front();
}

/// The values that may share memory with `value` while a dealloc's
/// condition says `value` is owned here: the closure of
/// BufferViewFlowAnalysis's dependencies in both directions, except the
/// function's arguments. Where `value` is an argument's buffer (a kiln.cond
/// passing it through), it is not owned and its dealloc frees nothing, so
/// the values the argument flows into elsewhere do not matter.
static llvm::SetVector<Value> aliasClass(Value value,
                                         const BufferViewFlowAnalysis &flow,
                                         func::FuncOp function) {
  llvm::SetVector<Value> members;
  members.insert(value);
  for (size_t next = 0; next < members.size(); ++next) {
    Value member = members[next];
    for (const auto &aliases :
         {flow.resolve(member), flow.resolveReverse(member)})
      for (Value alias : aliases)
        if (!isFunctionArgument(alias, function))
          members.insert(alias);
  }
  return members;
}

/// The last op of `block` that uses a value of `members` or defines one or
/// `condition`, apart from the `ignored` ops; sets `escapes` when a use lies
/// outside the block (the buffer then stays where its owner frees it).
static Operation *lastUseInBlock(const llvm::SetVector<Value> &members,
                                 Value condition, Block &block,
                                 ArrayRef<Operation *> ignored,
                                 bool &escapes) {
  Operation *last = nullptr;
  auto later = [&](Operation *op) {
    if (op && (!last || last->isBeforeInBlock(op)))
      last = op;
  };
  escapes = false;
  auto definedIn = [&](Value value) -> Operation * {
    Operation *definer = value.getDefiningOp();
    return definer ? block.findAncestorOpInBlock(*definer) : nullptr;
  };
  later(definedIn(condition));
  for (Value member : members) {
    if (!llvm::is_contained(ignored, member.getDefiningOp()))
      later(definedIn(member));
    for (Operation *user : member.getUsers()) {
      if (llvm::is_contained(ignored, user))
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
    // How often each value is named by a dealloc, as a memref to free or a
    // value to retain.
    llvm::DenseMap<Value, unsigned> named;
    for (DeallocOp dealloc : deallocs) {
      for (Value memref : dealloc.getMemrefs())
        ++named[memref];
      for (Value retained : dealloc.getRetained())
        ++named[retained];
    }
    BufferViewFlowAnalysis flow(function);
    for (DeallocOp dealloc : deallocs)
      freeEarly(dealloc, flow, named);
  }

  /// Splits the memrefs of `dealloc` that can be freed earlier into
  /// deallocs of their own after their last uses.
  void freeEarly(DeallocOp dealloc, const BufferViewFlowAnalysis &flow,
                 const llvm::DenseMap<Value, unsigned> &named) {
    Block &block = *dealloc->getBlock();
    SmallVector<Value> keptMemrefs, keptConditions;
    bool moved = false;
    for (auto pair : llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
      Value memref = std::get<0>(pair), condition = std::get<1>(pair);
      Operation *last = nullptr;
      // Ownership-based deallocation frees a value that is not an
      // allocation (a region's result) through the base buffer that a
      // memref.extract_strided_metadata right before the dealloc takes
      // out; that op moves along.
      auto metadata = memref.getDefiningOp<memref::ExtractStridedMetadataOp>();
      if (metadata && (metadata->getBlock() != &block ||
                       !llvm::all_of(metadata->getUsers(), [&](Operation *user) {
                         return user == dealloc.getOperation();
                       })))
        metadata = nullptr;
      if (named.lookup(memref) == 1) {
        llvm::SetVector<Value> members =
            aliasClass(metadata ? metadata.getSource() : memref, flow,
                       dealloc->getParentOfType<func::FuncOp>());
        members.insert(memref);
        bool shared = llvm::any_of(members, [&](Value member) {
          return member != memref && named.count(member);
        });
        SmallVector<Operation *> ignored{dealloc.getOperation()};
        if (metadata)
          ignored.push_back(metadata);
        bool escapes = false;
        if (!shared)
          last = lastUseInBlock(members, condition, block, ignored, escapes);
        if (escapes)
          last = nullptr;
      }
      // Nothing to gain unless an op lies between the last use and here.
      Operation *next = last ? last->getNextNode() : nullptr;
      if (next && next == metadata.getOperation())
        next = next->getNextNode();
      if (!last || next == dealloc.getOperation() ||
          !last->isBeforeInBlock(dealloc)) {
        keptMemrefs.push_back(memref);
        keptConditions.push_back(condition);
        continue;
      }
      if (metadata) {
        metadata->moveAfter(last);
        last = metadata;
      }
      OpBuilder builder(block.getParentOp()->getContext());
      builder.setInsertionPointAfter(last);
      builder.create<DeallocOp>(dealloc.getLoc(), ValueRange{memref},
                                ValueRange{condition}, ValueRange{});
      moved = true;
    }
    if (!moved)
      return;
    if (keptMemrefs.empty() && dealloc.getRetained().empty()) {
      dealloc.erase();
      return;
    }
    OpBuilder builder(dealloc);
    auto rest = builder.create<DeallocOp>(dealloc.getLoc(), keptMemrefs,
                                          keptConditions,
                                          dealloc.getRetained());
    dealloc.replaceAllUsesWith(rest.getResults());
    dealloc.erase();
  }
};
} // namespace
