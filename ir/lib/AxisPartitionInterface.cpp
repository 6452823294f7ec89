//===- AxisPartitionInterface.cpp - An op's rule along a mesh axis --------===//

#include "kiln/IR/AxisPartitionInterface.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;

AxisPartitionContext::~AxisPartitionContext() = default;

Type AxisPartitionContext::localType(Type global, AxisSharding state) const {
  if (!state.isSharded())
    return global;
  auto tensor = cast<RankedTensorType>(global);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[state.dim] /= getAxisSize();
  return tensor.clone(shape);
}

bool AxisPartitionContext::divisible(Value v, int64_t dim) const {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && dim < type.getRank() && !type.isDynamicDim(dim) &&
         type.getDimSize(dim) % getAxisSize() == 0;
}

SmallVector<Value> AxisPartitionContext::localsOf(ValueRange originals) const {
  return llvm::map_to_vector(originals, [&](Value v) { return localOf(v); });
}

SmallVector<AxisSharding>
AxisPartitionContext::statesOf(ValueRange originals) const {
  return llvm::map_to_vector(originals, [&](Value v) { return stateOf(v); });
}

std::optional<unsigned>
AxisPartitionContext::firstSharded(Operation *op) const {
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (stateOf(v).isSharded())
      return i;
  return std::nullopt;
}

#include "kiln/IR/AxisPartitionInterface.cpp.inc"
