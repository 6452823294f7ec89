//===- Driver.h - From kiln IR to a loadable module -------------*- C++ -*-===//
//
// The compilation steps shared by kiln-compile, the end-to-end tests and
// embedding hosts: read the signatures off the kiln functions, lower to the
// LLVM dialect, produce LLVM IR, object code, and finally a .kmod.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_H
#define KILN_COMPILER_DRIVER_H

#include "kiln/Backends/Cpu.h"
#include "kiln/ModuleFormat.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {

struct CompileOptions {
  mlir::kiln::CpuOptions cpu;
  /// Called on the pass manager before it runs, e.g. to apply the
  /// --mlir-print-ir-* command-line options.
  std::function<void(mlir::PassManager &)> configurePassManager;
};

/// Registers every dialect a kiln module or its lowering can contain.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Reads the native signature of every public function of a kiln module:
/// names (from `kiln.name` argument/result attributes, else argN/outN),
/// dtypes and shapes. Rejects functions the backend cannot call.
bool collectSignatures(mlir::ModuleOp module,
                       std::vector<format::FunctionSignature> &signatures,
                       std::string &error);

/// Lowers a kiln module in place to the LLVM dialect. Errors are reported
/// as diagnostics on the module's context.
mlir::LogicalResult lowerToLLVMDialect(mlir::ModuleOp module,
                                       const CompileOptions &options);

/// The whole path: signatures, lowering, LLVM, object, shared object and
/// the .kmod bytes. `module` is lowered in place.
bool compileToKmod(mlir::ModuleOp module, const CompileOptions &options,
                   std::vector<uint8_t> &kmod, std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_H
