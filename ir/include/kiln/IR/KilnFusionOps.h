//===- KilnFusionOps.h - The kiln.fused region op ---------------*- C++ -*-===//
//
// kiln.fused (KilnFusionOps.td): a group of kiln ops that backends compile
// as one kernel. KilnOps.h includes this header because kiln.yield may end
// a kiln.fused region.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNFUSIONOPS_H
#define KILN_IR_KILNFUSIONOPS_H

#include "kiln/IR/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/IR/KilnFusionEnums.h.inc"

#define GET_OP_CLASSES
#include "kiln/IR/KilnFusionOps.h.inc"

#endif // KILN_IR_KILNFUSIONOPS_H
