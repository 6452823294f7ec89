//===- KilnOps.h - kiln dialect operations ----------------------*- C++ -*-===//
#ifndef KILN_IR_KILNOPS_H
#define KILN_IR_KILNOPS_H

#include "kiln/IR/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kiln/IR/KilnEnums.h.inc"
// kiln.yield also ends kiln.fused regions, so its parent check needs FusedOp.
#include "kiln/IR/KilnFusionOps.h"

#define GET_OP_CLASSES
#include "kiln/IR/KilnOps.h.inc"

#endif // KILN_IR_KILNOPS_H
