//===- KilnTiedResults.cpp - Donated arguments written by a result --------===//

#include "kiln/IR/TiedResults.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::kiln;

std::optional<unsigned> mlir::kiln::tiedResult(func::FuncOp func,
                                               unsigned index) {
  auto attr = func.getArgAttrOfType<IntegerAttr>(index, kTiedResultAttrName);
  if (!attr)
    return std::nullopt;
  return static_cast<unsigned>(attr.getInt());
}

SmallVector<unsigned>
mlir::kiln::tieDonatedArguments(func::FuncOp func,
                                ArrayRef<unsigned> donated) {
  Builder builder(func.getContext());
  llvm::SmallBitVector taken(func.getNumResults());
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (std::optional<unsigned> result = tiedResult(func, i))
      if (*result < taken.size())
        taken.set(*result);
  SmallVector<unsigned> untied;
  for (unsigned index : donated) {
    if (index >= func.getNumArguments() || tiedResult(func, index)) {
      untied.push_back(index);
      continue;
    }
    Type type = func.getArgumentTypes()[index];
    bool tied = false;
    for (auto [k, resultType] : llvm::enumerate(func.getResultTypes())) {
      if (taken.test(k) || resultType != type)
        continue;
      func.setArgAttr(index, kTiedResultAttrName,
                      builder.getI64IntegerAttr(k));
      taken.set(k);
      tied = true;
      break;
    }
    if (!tied)
      untied.push_back(index);
  }
  return untied;
}

LogicalResult mlir::kiln::verifyTiedResult(Operation *op, unsigned argIndex,
                                           Attribute value) {
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return op->emitOpError() << "'" << kTiedResultAttrName
                             << "' is an attribute of a func.func argument";
  auto attr = dyn_cast<IntegerAttr>(value);
  if (!attr)
    return func.emitOpError()
           << "argument #" << argIndex << ": '" << kTiedResultAttrName
           << "' must be the index of a result (an integer), not " << value;
  if (!func.isPublic())
    return func.emitOpError()
           << "argument #" << argIndex << " is donated ('"
           << kTiedResultAttrName
           << "'), which only a public function's caller can do";
  int64_t result = attr.getInt();
  if (result < 0 || result >= static_cast<int64_t>(func.getNumResults()))
    return func.emitOpError()
           << "argument #" << argIndex << " is tied to result #" << result
           << " but the function has " << func.getNumResults() << " results";
  Type argType = func.getArgumentTypes()[argIndex];
  Type resultType = func.getResultTypes()[result];
  if (argType != resultType)
    return func.emitOpError()
           << "argument #" << argIndex << " of type " << argType
           << " is tied to result #" << result << " of another type, "
           << resultType;
  for (unsigned other = 0; other < argIndex; ++other) {
    auto otherAttr =
        func.getArgAttrOfType<IntegerAttr>(other, kTiedResultAttrName);
    if (otherAttr && otherAttr.getInt() == result)
      return func.emitOpError()
             << "arguments #" << other << " and #" << argIndex
             << " are both tied to result #" << result;
  }
  return success();
}
