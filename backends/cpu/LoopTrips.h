//===- LoopTrips.h - Static trip counts of scf loop dims --------*- C++ -*-===//
//
// The iterations of a loop dim where its bounds say them, shared by the
// passes that weigh loop nests: kiln-cpu-parallel-loops (whether a nest is
// worth threads) and kiln-cpu-concurrent-branches (a kernel's time).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_LOOPTRIPS_H
#define KILN_BACKENDS_CPU_LOOPTRIPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <algorithm>
#include <optional>

namespace mlir::kiln {

/// `c` where `upper` is min(lower + c, x) for a constant c (a chunk of a
/// split loop, as kiln-cpu-parallel-reductions makes them).
inline std::optional<int64_t> chunkLength(Value lower, Value upper) {
  auto min = upper.getDefiningOp<arith::MinSIOp>();
  if (!min)
    return std::nullopt;
  for (Value operand : min->getOperands())
    if (auto add = operand.getDefiningOp<arith::AddIOp>())
      for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())})
        if (a == lower)
          if (std::optional<int64_t> c = getConstantIntValue(b))
            return *c;
  return std::nullopt;
}

/// The trip count of a loop dim whose bounds and step are constants.
inline std::optional<int64_t> constantTripCount(Value lower, Value upper,
                                                Value step) {
  std::optional<int64_t> st = getConstantIntValue(step);
  std::optional<int64_t> lo = getConstantIntValue(lower);
  std::optional<int64_t> hi = getConstantIntValue(upper);
  if (!st || *st <= 0 || !lo || !hi)
    return std::nullopt;
  return std::max<int64_t>(0, (*hi - *lo + *st - 1) / *st);
}

/// The static trip count of a loop dim (at most that of a chunk of a split
/// loop), or 1 when it is not static.
inline int64_t staticTripCount(Value lower, Value upper, Value step) {
  if (std::optional<int64_t> trips = constantTripCount(lower, upper, step))
    return *trips;
  std::optional<int64_t> st = getConstantIntValue(step);
  if (!st || *st <= 0)
    return 1;
  if (std::optional<int64_t> length = chunkLength(lower, upper))
    return std::max<int64_t>(0, (*length + *st - 1) / *st);
  return 1;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_LOOPTRIPS_H
