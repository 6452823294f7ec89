//===- SplatConstant.h - A float constant in a tensor's shape ---*- C++ -*-===//
//
// The attention rewrites (FuseAttention.cpp, DecomposeAttention.cpp) need
// float constants the size of their scores (a scale, -inf for masked
// entries, 0 and 1 for guards). They build them as a rank-0 constant
// broadcast, so that no constant of the scores' size is ever stored.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_FUSION_SPLATCONSTANT_H
#define KILN_PASSES_FUSION_SPLATCONSTANT_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::kiln {

/// `x` as a tensor of `type` (a float element type): a rank-0 constant
/// broadcast.
inline Value splatConstant(OpBuilder &b, Location loc, RankedTensorType type,
                           double x) {
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  Value scalar = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(scalarType,
                                  FloatAttr::get(type.getElementType(), x)));
  return b.create<BroadcastInDimOp>(loc, type, scalar, ArrayRef<int64_t>{});
}

} // namespace mlir::kiln

#endif // KILN_PASSES_FUSION_SPLATCONSTANT_H
