//===- Passes.h - Transformations on the kiln dialect -----------*- C++ -*-===//
//
// Declarations of the kiln-to-kiln passes, generated from Passes.td, and the
// C++ entry points they are built on.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "kiln/IR/KilnDialect.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Passes/DataParallel.h"
#include "kiln/Passes/Partition.h"
#include "kiln/Passes/Pipeline.h"
#include "kiln/Passes/Zero.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Passes/Passes.h.inc"

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PASSES_H
