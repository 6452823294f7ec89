//===- CompileMlirFuzzer.cpp - libFuzzer entry point for MLIR compilation -===//
//
// The bytes are what kiln-compile reads as MLIR text. They go the way
// kiln-compile takes them: mlir::parseSourceFile, which parses and verifies,
// in a context with the dialects of kiln::registerCompilerDialects; then,
// for a module that verifies, kiln::compileModule for the CPU target with
// kiln-compile's default options, as far as EmitKind::Mlir (kiln-compile
// --emit=mlir): the signature checks, the kiln passes and the CPU lowering
// pipeline to the LLVM dialect. KILN_FUZZ_EMIT=llvm or obj in the
// environment goes on to optimized LLVM IR or object code (slower).
//
// The invariant, checked here beyond "no crash, no sanitizer report":
//   1. input that does not parse or verify is rejected with an error
//      diagnostic;
//   2. a verified module either compiles to a non-empty output, or
//      compileModule fails with a message, and a failure in the lowering
//      (past the signature checks) comes with an error diagnostic.
// KILN_FUZZ_VERBOSE=1 prints the diagnostics, to see why an input failed.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

namespace {

/// What compileModule is asked for (KILN_FUZZ_EMIT).
kiln::EmitKind emitKind = kiln::EmitKind::Mlir;
/// Whether diagnostics are printed (KILN_FUZZ_VERBOSE).
bool verbose = false;

/// The registry is built once; each input gets a context of its own, so that
/// an input behaves the same whatever ran before it (a crash reproduces from
/// its file alone) and the interned types and attributes of earlier inputs
/// do not accumulate.
const mlir::DialectRegistry &compilerRegistry() {
  static const mlir::DialectRegistry *registry = [] {
    auto *registry = new mlir::DialectRegistry;
    kiln::registerCompilerDialects(*registry);
    return registry;
  }();
  return *registry;
}

/// kiln-compile's defaults (tools/kiln-compile): -O2, the host CPU, fusion,
/// oneDNN and OpenMP where this build has them.
kiln::CompileOptions compileOptions() {
  kiln::CompileOptions options;
  options.target = kiln::Target::Cpu;
  return options;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (const char *emit = std::getenv("KILN_FUZZ_EMIT")) {
    if (!std::strcmp(emit, "llvm")) {
      emitKind = kiln::EmitKind::Llvm;
    } else if (!std::strcmp(emit, "obj")) {
      emitKind = kiln::EmitKind::Obj;
    } else if (std::strcmp(emit, "mlir")) {
      llvm::errs() << "KILN_FUZZ_EMIT must be mlir, llvm or obj, not '"
                   << emit << "'\n";
      std::exit(2);
    }
  }
  verbose = std::getenv("KILN_FUZZ_VERBOSE") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Threads would make the runs slower on a small machine and their
  // interleaving part of the input; the compilation is the same without.
  mlir::MLIRContext context(compilerRegistry(),
                            mlir::MLIRContext::Threading::DISABLED);
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler handler(
      &context, [&](mlir::Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error)
          ++errors;
        if (verbose)
          llvm::errs() << diagnostic.getLocation() << ": " << diagnostic
                       << "\n";
        return mlir::success();
      });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.mlir"),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module) {
    if (errors == 0)
      std::abort(); // a rejected input must be told why
    return 0;
  }

  // The signature checks fail with a message of their own; past them, up to
  // EmitKind::Mlir, a failure is the lowering's, which must have said what
  // went wrong in a diagnostic (compileModule's message is only "lowering to
  // the LLVM dialect failed"). Later steps fail with messages of their own.
  std::vector<kiln::format::FunctionSignature> signatures;
  std::string signatureError;
  bool signaturesPass =
      kiln::collectSignatures(*module, signatures, signatureError);

  std::vector<uint8_t> output;
  std::string error;
  unsigned errorsBefore = errors;
  if (kiln::compileModule(*module, compileOptions(), emitKind, output,
                          error)) {
    if (output.empty())
      std::abort(); // a compiled module is never empty
    return 0;
  }
  if (verbose)
    llvm::errs() << "compileModule: " << error << "\n";
  if (error.empty())
    std::abort(); // a failed compilation must say why
  if (signaturesPass && emitKind == kiln::EmitKind::Mlir &&
      errors == errorsBefore)
    std::abort(); // the lowering failed without a diagnostic
  return 0;
}
