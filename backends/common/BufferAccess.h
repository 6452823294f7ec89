//===- BufferAccess.h - which buffer an op may write ------------*- C++ -*-===//
//
// Small queries on memrefs after bufferization and before memory planning,
// shared by the passes that move or drop copies and fills: the buffer
// a view comes from, whether two buffers may be the same memory, whether an
// op may write a buffer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_BUFFERACCESS_H
#define KILN_BACKENDS_COMMON_BUFFERACCESS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::kiln {

/// The buffer a memref is a view of (through view-like ops).
inline Value rootOf(Value memref) {
  while (auto viewLike = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = viewLike.getViewSource();
  return memref;
}

/// The buffer a memref is a view of, also through the base buffers of
/// expand-strided-metadata (which are not view-like ops).
inline Value rootThroughMetadata(Value memref) {
  memref = rootOf(memref);
  while (auto metadata =
             memref.getDefiningOp<memref::ExtractStridedMetadataOp>())
    memref = rootOf(metadata.getSource());
  return memref;
}

/// Whether `value` exists before `op` runs: it is a block argument of a
/// block that `op` is nested in, or the result of an op before `op` (or
/// before the op that `op` is nested in) in the same block.
inline bool definedBefore(Value value, Operation *op) {
  Block *block = value.getParentBlock();
  Operation *ancestor = block ? block->findAncestorOpInBlock(*op) : nullptr;
  if (!ancestor)
    return false;
  if (isa<BlockArgument>(value))
    return true;
  Operation *definition = value.getDefiningOp();
  return definition != ancestor && definition->isBeforeInBlock(ancestor);
}

/// Whether two roots may be the same memory. A fresh allocation is no
/// value that existed before it; distinct allocations never alias, nor do
/// an allocation and a function argument, nor two function arguments
/// (inputs and out-params are distinct buffers, which one-shot
/// bufferization assumes too). Anything else (a region's block argument or
/// result, a value from an unknown op) may.
inline bool mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  auto allocation = [](Value value) -> Operation * {
    Operation *definition = value.getDefiningOp();
    return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(definition)
               ? definition
               : nullptr;
  };
  if (Operation *fresh = allocation(a); fresh && definedBefore(b, fresh))
    return false;
  if (Operation *fresh = allocation(b); fresh && definedBefore(a, fresh))
    return false;
  auto isKnownBuffer = [&](Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) &&
             arg.getOwner()->isEntryBlock();
    return allocation(value) ||
           isa_and_nonnull<memref::GetGlobalOp>(value.getDefiningOp());
  };
  return !(isKnownBuffer(a) && isKnownBuffer(b));
}

/// Whether `op` (and the ops nested in it) may have one of the memory
/// effects `Effects` on memory that `root` may alias.
template <typename... Effects>
inline bool mayAffect(Operation *op, Value root) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return true;
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (!isa<Effects...>(effect.getEffect()))
      continue;
    Value touched = effect.getValue();
    if (!touched || mayAlias(rootOf(touched), root))
      return true;
  }
  return false;
}

/// Whether `op` may write (or free) memory that `root` may alias.
inline bool mayWrite(Operation *op, Value root) {
  return mayAffect<MemoryEffects::Write, MemoryEffects::Free>(op, root);
}

/// Whether `op` may read, write or free memory that `root` may alias.
inline bool mayAccess(Operation *op, Value root) {
  return mayAffect<MemoryEffects::Read, MemoryEffects::Write,
                   MemoryEffects::Free>(op, root);
}

/// Whether an op strictly between `from` and `to` (in one block) may touch
/// the memory of `root`.
inline bool touchedBetween(Operation *from, Operation *to, Value root) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (mayAccess(op, root))
      return true;
  return false;
}

/// Whether the address of `memref` depends on a value the host code loads
/// from memory: the offset of a view (a dynamic slice's row index) or the
/// pick of a select of buffers (a kiln.select's predicate). Region results
/// and block arguments (a cond's result, a loop's carried buffer) are
/// where the host's control flow put them, and end the search.
inline bool addressReadsMemory(Value memref) {
  SmallVector<Value> worklist{memref};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Operation *definition = worklist.pop_back_val().getDefiningOp();
    if (!definition || !seen.insert(definition).second)
      continue;
    if (isa<memref::LoadOp>(definition))
      return true;
    if (definition->getNumRegions() != 0 || !isMemoryEffectFree(definition))
      continue;
    llvm::append_range(worklist, definition->getOperands());
  }
  return false;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_BUFFERACCESS_H
