//===- NpyFuzzer.cpp - libFuzzer entry point for the .npy reader -----------===//
//
// Any bytes must either be rejected with a message or parse into an array
// whose data matches its shape and which survives a write/read round trip.
// Each input is read twice: as a plain file, and as kiln-run reads one for a
// bf16 input (untyped '<V2' bytes read as bf16); the second reading must
// agree with the first wherever the first succeeds.
//
//===----------------------------------------------------------------------===//

#include "kiln/Npy.h"

#include <cstdlib>

namespace {

/// Parses \p data with \p options; returns whether it succeeded, aborting
/// when the reader breaks its contract.
bool parseChecked(const uint8_t *data, size_t size,
                  const kiln::npy::ReadOptions &options,
                  kiln::npy::Array &array) {
  std::string error;
  if (!kiln::npy::parseNpy(data, size, array, error, options)) {
    if (error.empty())
      std::abort();
    return false;
  }
  if (array.data.size() !=
      array.elementCount() * kiln::npy::elementSize(array.type))
    std::abort();
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::npy::Array plain, asBf16;
  kiln::npy::ReadOptions bf16;
  bf16.untypedAs = kiln::ElementType::BF16;
  bool plainRead = parseChecked(data, size, {}, plain);
  bool bf16Read = parseChecked(data, size, bf16, asBf16);
  if (plainRead && (!bf16Read || asBf16.type != plain.type ||
                    asBf16.data != plain.data || asBf16.shape != plain.shape))
    std::abort();
  if (bf16Read && !plainRead && asBf16.type != kiln::ElementType::BF16)
    std::abort();
  if (!plainRead)
    return 0;
  std::string error;
  std::vector<uint8_t> bytes;
  kiln::npy::Array again;
  if (!kiln::npy::writeNpy(plain, bytes, error) ||
      !kiln::npy::parseNpy(bytes.data(), bytes.size(), again, error) ||
      again.data != plain.data || again.shape != plain.shape)
    std::abort();
  return 0;
}
