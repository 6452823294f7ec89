//===- OnnxImportFuzzer.cpp - libFuzzer entry point for the ONNX importer -===//
//
// importOnnxBytes is the first code to see an .onnx file, so it must survive
// any bytes at all: either it reports an error (a non-empty message), or it
// returns a module that verifies. No external data is read (no model
// folder), so every run is self-contained.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"

#include "kiln/Onnx/Import.h"

#include "mlir/IR/Verifier.h"

#include <cstdlib>

using kiln::fuzz::fuzzContext;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  kiln::OnnxImportOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module = kiln::importOnnxBytes(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "",
      "fuzz.onnx", fuzzContext(), options, error);
  if (!module) {
    if (error.empty())
      std::abort(); // a rejection must say why
    return 0;
  }
  if (mlir::failed(mlir::verify(*module)))
    std::abort(); // an accepted model must give valid IR
  return 0;
}
