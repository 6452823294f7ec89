//===- ArenaPlanner.h - Offsets for buffers with lifetimes ------*- C++ -*-===//
//
// The pure part of memory planning, shared by the backends: given buffers
// with a size and a live interval, give each an offset in one arena so
// that buffers whose intervals overlap never share bytes. The CPU's
// kiln-cpu-plan-memory and the CUDA backend's kiln-cuda-plan-arena decide
// which buffers and which intervals; this decides where they go.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_ARENAPLANNER_H
#define KILN_BACKENDS_COMMON_ARENAPLANNER_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace kiln {

/// One buffer to place: its size, its live interval [start, end] (inclusive
/// positions in any total order of the program), and the offset planned.
struct ArenaSlot {
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
  int64_t offset = 0;
};

/// Places each of `slots` at an `alignment`-aligned offset where it
/// overlaps no slot whose interval intersects its own, and returns the
/// arena's size in bytes: the smaller of two first-fit placements (each
/// slot at the lowest offset free of the slots placed before it), one in
/// the order given (allocation order), one largest slot first. A tie keeps
/// the order given.
int64_t planArena(llvm::MutableArrayRef<ArenaSlot> slots, int64_t alignment);

/// The size in bytes of a statically shaped, identity-layout memref without
/// memory space and with int or float elements (i1 takes a byte), or
/// nullopt.
std::optional<int64_t> staticBufferBytes(MemRefType type);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_COMMON_ARENAPLANNER_H
