//===- Delinearize.h - Linear thread indices to loop indices ----*- C++ -*-===//
//
// Generated kernels give each thread linear indices (grid-stride loops,
// block reductions) and split them into one index per loop dimension.
// That division runs once per element, so its cost matters: a GPU divides
// a 32-bit value by a constant with a multiply-high and a shift, a 64-bit
// one with a sequence several times longer, and by a value only known at
// run time with a loop of dozens of instructions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_DELINEARIZE_H
#define KILN_BACKENDS_CUDA_DELINEARIZE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir {
namespace kiln {

/// The indices (row-major: the last varies fastest) of `linear` in a space
/// of `extents`, for a `linear` in [0, product of the extents). Unsigned
/// divisions, as nothing is negative; 32-bit ones when every extent is a
/// constant and the product is below 2^31.
inline SmallVector<Value> delinearizeIndex(OpBuilder &builder, Location loc,
                                           Value linear,
                                           ArrayRef<Value> extents) {
  std::optional<int64_t> product = 1;
  for (Value extent : extents) {
    std::optional<int64_t> known = getConstantIntValue(extent);
    if (!known || *known <= 0 || *product > (int64_t(1) << 31) / *known)
      product = std::nullopt;
    if (!product)
      break;
    *product *= *known;
  }
  bool narrow =
      extents.size() > 1 && product && *product < (int64_t(1) << 31);
  Type i32 = builder.getI32Type();
  auto narrowed = [&](Value value) -> Value {
    if (!narrow)
      return value;
    if (std::optional<int64_t> known = getConstantIntValue(value))
      return builder.create<arith::ConstantIntOp>(loc, *known, 32);
    return builder.create<arith::IndexCastUIOp>(loc, i32, value);
  };
  auto widened = [&](Value value) -> Value {
    if (!narrow)
      return value;
    return builder.create<arith::IndexCastUIOp>(loc, builder.getIndexType(),
                                                value);
  };
  SmallVector<Value> indices(extents.size());
  Value rest = narrowed(linear);
  for (int64_t k = extents.size() - 1; k >= 0; --k) {
    if (k == 0) {
      indices[k] = widened(rest);
      break;
    }
    Value extent = narrowed(extents[k]);
    indices[k] = widened(builder.create<arith::RemUIOp>(loc, rest, extent));
    rest = builder.create<arith::DivUIOp>(loc, rest, extent);
  }
  return indices;
}

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CUDA_DELINEARIZE_H
