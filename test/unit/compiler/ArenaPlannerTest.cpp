//===- ArenaPlannerTest.cpp - Offsets for buffers with lifetimes ----------===//

#include "common/ArenaPlanner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using mlir::kiln::ArenaSlot;
using mlir::kiln::planArena;

namespace {

/// The most bytes live at once: no placement can be smaller.
int64_t livePeak(const std::vector<ArenaSlot> &slots) {
  int64_t last = 0;
  for (const ArenaSlot &slot : slots)
    last = std::max(last, slot.end);
  int64_t peak = 0;
  for (int64_t position = 0; position <= last; ++position) {
    int64_t live = 0;
    for (const ArenaSlot &slot : slots)
      if (slot.start <= position && position <= slot.end)
        live += slot.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Checks that the placement is aligned, within the arena, and that no two
/// slots live at the same time share a byte.
void expectValid(const std::vector<ArenaSlot> &slots, int64_t arenaBytes,
                 int64_t alignment) {
  for (size_t i = 0; i < slots.size(); ++i) {
    const ArenaSlot &a = slots[i];
    EXPECT_EQ(a.offset % alignment, 0) << "slot " << i;
    EXPECT_LE(a.offset + a.bytes, arenaBytes) << "slot " << i;
    for (size_t j = i + 1; j < slots.size(); ++j) {
      const ArenaSlot &b = slots[j];
      bool together = a.start <= b.end && b.start <= a.end;
      bool disjoint =
          a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
      EXPECT_TRUE(!together || disjoint) << "slots " << i << " and " << j;
    }
  }
}

} // namespace

// Allocation order leaves a hole: a small buffer (live 0-3) placed first
// sits at offset 0, the large one that follows its neighbour's death can
// not use the low bytes. Largest first reaches the live peak.
TEST(ArenaPlannerTest, LargestFirstFillsTheHoles) {
  std::vector<ArenaSlot> slots = {
      {/*bytes=*/64, /*start=*/0, /*end=*/1},
      {/*bytes=*/64, /*start=*/0, /*end=*/3},
      {/*bytes=*/128, /*start=*/2, /*end=*/4},
  };
  int64_t arenaBytes = planArena(slots, 64);
  expectValid(slots, arenaBytes, 64);
  EXPECT_EQ(arenaBytes, 192);
  EXPECT_EQ(livePeak(slots), 192);
}

// A chain of buffers each live with the next: two slots suffice whatever
// the order.
TEST(ArenaPlannerTest, ChainTakesTwoSlots) {
  std::vector<ArenaSlot> slots;
  for (int64_t i = 0; i < 10; ++i)
    slots.push_back({/*bytes=*/256, /*start=*/i, /*end=*/i + 1});
  int64_t arenaBytes = planArena(slots, 64);
  expectValid(slots, arenaBytes, 64);
  EXPECT_EQ(arenaBytes, 512);
}

// Random lifetimes and sizes: always a valid placement, never smaller than
// the live peak.
TEST(ArenaPlannerTest, RandomPlacementsAreValid) {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    int count = 1 + int(random() % 40);
    std::vector<ArenaSlot> slots;
    for (int i = 0; i < count; ++i) {
      int64_t start = random() % 50;
      int64_t length = random() % 12;
      int64_t bytes = 1 + random() % 5000;
      slots.push_back({bytes, start, start + length});
    }
    std::sort(slots.begin(), slots.end(),
              [](const ArenaSlot &a, const ArenaSlot &b) {
                return a.start < b.start;
              });
    int64_t alignment = round % 2 ? 64 : 1;
    int64_t arenaBytes = planArena(slots, alignment);
    expectValid(slots, arenaBytes, alignment);
    if (alignment == 1)
      EXPECT_GE(arenaBytes, livePeak(slots));
  }
}
