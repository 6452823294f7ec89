//===- Passes.h - kiln operator fusion --------------------------*- C++ -*-===//
//
// The kiln-fuse pass (Passes.td) and the function it is built on.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUSION_PASSES_H
#define KILN_FUSION_PASSES_H

#include "kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Fusion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Fusion/Passes.h.inc"

/// Counts of what fuseOps did.
struct FusionStats {
  unsigned regions = 0;
  unsigned fusedOps = 0;
};

/// Groups the kiln ops of every block under `root` (the blocks of nested
/// kiln.cond / kiln.while / kiln.for regions included) into kiln.fused
/// regions, as the kiln-fuse pass does.
FusionStats fuseOps(Operation *root);

} // namespace kiln
} // namespace mlir

#endif // KILN_FUSION_PASSES_H
