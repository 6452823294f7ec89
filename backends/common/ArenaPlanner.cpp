//===- ArenaPlanner.cpp - Offsets for buffers with lifetimes --------------===//

#include "common/ArenaPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

int64_t kiln::planArena(llvm::MutableArrayRef<ArenaSlot> slots,
                        int64_t alignment) {
  int64_t arenaBytes = 0;
  llvm::SmallVector<ArenaSlot *> placed;
  for (ArenaSlot &slot : slots) {
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
