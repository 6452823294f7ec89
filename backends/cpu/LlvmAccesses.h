//===- LlvmAccesses.h - Rewriting the LLVM dialect's loads and stores -*- C++ -*-===//
//
// kiln-cpu-byte-booleans and kiln-cpu-bf16-as-i16 both move a type's
// values through memory as another of the same size: each rewrites the
// `llvm.load` and `llvm.store` ops of its type, and nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_LLVMACCESSES_H
#define KILN_BACKENDS_CPU_LLVMACCESSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {

/// Applies `patterns` to the `llvm.load` ops under `root` whose result type
/// and the `llvm.store` ops whose stored value's type `accessed` accepts,
/// and to no other op: the rest of the module is not folded or simplified.
inline LogicalResult rewriteAccesses(Operation *root,
                                     llvm::function_ref<bool(Type)> accessed,
                                     RewritePatternSet &&patterns) {
  SmallVector<Operation *> accesses;
  root->walk([&](Operation *op) {
    if (auto load = dyn_cast<LLVM::LoadOp>(op);
        load && accessed(load.getType()))
      accesses.push_back(op);
    if (auto store = dyn_cast<LLVM::StoreOp>(op);
        store && accessed(store.getValue().getType()))
      accesses.push_back(op);
  });
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingOps;
  return applyOpPatternsAndFold(accesses, std::move(patterns), config);
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_LLVMACCESSES_H
