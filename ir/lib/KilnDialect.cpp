//===- KilnDialect.cpp - The kiln graph dialect ---------------------------===//

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/IR/TiedResults.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln;

#include "kiln/IR/KilnDialect.cpp.inc"
#include "kiln/IR/KilnEnums.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/IR/KilnOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "kiln/IR/KilnFusionOps.cpp.inc"
      >();
}

/// Folders return plain attributes; this turns a folded tensor literal back
/// into an op so the canonicalizer can replace values with constants.
Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  if (attribute.getName() == kTiedResultAttrName)
    return verifyTiedResult(op, argIndex, attribute.getValue());
  return success();
}
