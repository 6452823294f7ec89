//===- ModelMutator.h - Random edits of a .kfb model ------------*- C++ -*-===//
//
// Byte-level mutations of a .kfb file rarely get past the FlatBuffers
// verifier, so they seldom reach the semantic checks or the MLIR verifier.
// ModelMutator edits an unpacked model instead - op names, operand numbers,
// result types, dtypes, shapes, attributes, regions, block arguments,
// constant buffers - and packs it again, so every variant is structurally
// valid and the damage is all in its meaning. Used by the libFuzzer target
// (as its custom mutator) and by the deterministic mutation test.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_FUZZ_MODELMUTATOR_H
#define KILN_IR_FUZZ_MODELMUTATOR_H

#include "kfb_generated.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kiln {
namespace modelfile {

class ModelMutator {
public:
  /// Draws op names from the kiln ops registered in \p context, func.return,
  /// func.call, and a few names a file may not use.
  ModelMutator(mlir::MLIRContext &context, uint32_t seed);

  /// Applies one random edit to \p model.
  void mutate(kfb::ModelT &model);

  /// Unpacks the .kfb file in \p bytes (which must pass the FlatBuffers
  /// verifier), applies \p edits random edits and packs it again. Returns
  /// false, leaving \p bytes alone, if they are not such a file.
  bool mutateFile(std::vector<uint8_t> &bytes, unsigned edits);

  std::mt19937 &randomEngine() { return random; }

private:
  size_t pick(size_t n) { return n ? random() % n : 0; }
  kfb::AttributeValueUnion
  randomValue(const kfb::ModelT &model,
              const std::vector<kfb::TensorTypeT *> &types);

  std::mt19937 random;
  std::vector<std::string> opNames;
};

/// Serializes an unpacked model.
std::vector<uint8_t> packModel(const kfb::ModelT &model);

} // namespace modelfile
} // namespace kiln

#endif // KILN_IR_FUZZ_MODELMUTATOR_H
