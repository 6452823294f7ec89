//===- ReadModelFileFuzzer.cpp - libFuzzer entry point for readModelFile --===//
//
// readModelFile is the first code to see a .kfb file, so it must survive any
// bytes at all: either it reports an error (with a message), or it returns a
// module that verifies. An accepted module must also survive another round
// trip: writing it and reading it back prints the same.
//
// Byte-level mutations seldom get past the FlatBuffers verifier, so half of
// the mutations edit the structure of the model instead (ModelMutator), which
// takes the fuzzer into the semantic checks and the MLIR verifier.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "ModelMutator.h"

#include "kiln/IR/ModelFile.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <random>

using kiln::fuzz::fuzzContext;

namespace {

std::string print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937 choose(seed);
  if (choose() % 2 == 0) {
    static kiln::modelfile::ModelMutator mutator(fuzzContext(), 0);
    mutator.randomEngine().seed(seed);
    std::vector<uint8_t> bytes(data, data + size);
    if (mutator.mutateFile(bytes, 1 + choose() % 3) &&
        bytes.size() <= maxSize) {
      std::memcpy(data, bytes.data(), bytes.size());
      return bytes.size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = fuzzContext();
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::readModelFile(llvm::ArrayRef<uint8_t>(data, size), &context, error);
  if (!module) {
    if (error.empty())
      std::abort();
    return 0;
  }
  if (mlir::failed(mlir::verify(*module)))
    std::abort();

  std::vector<uint8_t> rewritten;
  if (!kiln::writeModelFile(*module, rewritten, error))
    std::abort();
  mlir::OwningOpRef<mlir::ModuleOp> again =
      kiln::readModelFile(rewritten, &context, error);
  if (!again || print(*module) != print(*again))
    std::abort();
  return 0;
}
