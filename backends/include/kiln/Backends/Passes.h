//===- Passes.h - kiln backend passes ---------------------------*- C++ -*-===//
#ifndef KILN_BACKENDS_PASSES_H
#define KILN_BACKENDS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Backends/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Backends/Passes.h.inc"

/// Patterns lowering kiln ops to linalg/tensor/arith/math/scf on tensors.
void populateKilnToLinalgPatterns(RewritePatternSet &patterns);

/// Kiln to linalg on tensors, the steps the CPU and CUDA pipelines share
/// first (BufferizationPipeline.cpp): with `fuse`, kiln-fuse and the linalg
/// fusion of each kiln.fused region.
void buildLinalgPipeline(OpPassManager &pm, bool fuse);

/// Linalg on tensors to linalg on buffers with results as out-params, the
/// steps the CPU and CUDA pipelines share next (BufferizationPipeline.cpp).
void buildBufferizationPipeline(OpPassManager &pm);

/// The region tag that kiln-to-linalg gives the location of every op
/// inlined from a kiln.fused region (and that the linalg ops lowered from
/// it inherit), or null when `op` comes from no region.
DistinctAttr fusedRegionTag(Operation *op);

/// The prefix of the exported wrapper of each compiled function.
inline constexpr const char *kEntryPrefix = "kiln_entry_";

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_PASSES_H
