//===- ArenaPlanner.cpp - Offsets for buffers with lifetimes --------------===//

#include "common/ArenaPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using mlir::kiln::ArenaSlot;

/// Places the slots in `order`, each at the lowest aligned offset that
/// overlaps no slot placed before it whose interval meets its own; returns
/// the arena's size.
static int64_t placeInOrder(llvm::MutableArrayRef<ArenaSlot> slots,
                            llvm::ArrayRef<unsigned> order, int64_t alignment) {
  int64_t arenaBytes = 0;
  llvm::SmallVector<ArenaSlot *> placed;
  for (unsigned index : order) {
    ArenaSlot &slot = slots[index];
    // Every slot placed so far whose interval meets this one's, by offset.
    llvm::SmallVector<ArenaSlot *> conflicts;
    for (ArenaSlot *other : placed)
      if (other->start <= slot.end && slot.start <= other->end)
        conflicts.push_back(other);
    llvm::sort(conflicts, [](ArenaSlot *a, ArenaSlot *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (ArenaSlot *other : conflicts) {
      if (offset + slot.bytes <= other->offset)
        break;
      offset = std::max<int64_t>(
          offset, llvm::alignTo(other->offset + other->bytes, alignment));
    }
    slot.offset = offset;
    arenaBytes = std::max(arenaBytes, offset + slot.bytes);
    placed.push_back(&slot);
  }
  return arenaBytes;
}

int64_t kiln::planArena(llvm::MutableArrayRef<ArenaSlot> slots,
                        int64_t alignment) {
  llvm::SmallVector<unsigned> inOrder(slots.size());
  std::iota(inOrder.begin(), inOrder.end(), 0u);
  // Largest first: the big buffers of a network's early layers take the
  // low offsets and the many small ones of its later layers fill the gaps
  // between them. In allocation order a small buffer placed early can
  // split the space a large one needs later.
  llvm::SmallVector<unsigned> bySize = inOrder;
  std::stable_sort(bySize.begin(), bySize.end(), [&](unsigned a, unsigned b) {
    if (slots[a].bytes != slots[b].bytes)
      return slots[a].bytes > slots[b].bytes;
    return slots[a].start < slots[b].start;
  });
  int64_t sizedBytes = placeInOrder(slots, bySize, alignment);
  llvm::SmallVector<int64_t> sizedOffsets;
  for (const ArenaSlot &slot : slots)
    sizedOffsets.push_back(slot.offset);
  int64_t orderedBytes = placeInOrder(slots, inOrder, alignment);
  if (orderedBytes <= sizedBytes)
    return orderedBytes;
  for (auto [slot, offset] : llvm::zip(slots, sizedOffsets))
    slot.offset = offset;
  return sizedBytes;
}

std::optional<int64_t> kiln::staticBufferBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return std::nullopt;
  int64_t bits = element.getIntOrFloatBitWidth();
  int64_t bytes = bits == 1 ? 1 : (bits + 7) / 8;
  return type.getNumElements() * bytes;
}
