//===- FuzzContext.h - The MLIRContext of a libFuzzer target ----*- C++ -*-===//
//
// Shared by the fuzzers of the readers of bytes (the .kfb reader here, the
// ONNX importer in compiler/onnx/fuzz).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUZZ_FUZZCONTEXT_H
#define KILN_FUZZ_FUZZCONTEXT_H

#include "kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

namespace kiln::fuzz {

/// One context for the whole run: creating one per input would dominate the
/// time. Without threads, every input is handled the same way.
inline mlir::MLIRContext &fuzzContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    auto *context =
        new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    // Diagnostics that escape the reader would be noise in the fuzzer's log.
    context->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return context;
  }();
  return *context;
}

} // namespace kiln::fuzz

#endif // KILN_FUZZ_FUZZCONTEXT_H
