//===- NpyFuzzer.cpp - libFuzzer entry point for the .npy reader -----------===//
//
// Any bytes must either be rejected with a message or parse into an array
// whose data matches its shape and which survives a write/read round trip.
//
//===----------------------------------------------------------------------===//

#include "kiln/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::npy::Array array;
  std::string error;
  if (!kiln::npy::parseNpy(data, size, array, error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  if (array.data.size() !=
      array.elementCount() * kiln::npy::elementSize(array.type))
    std::abort();
  std::vector<uint8_t> bytes;
  kiln::npy::Array again;
  if (!kiln::npy::writeNpy(array, bytes, error) ||
      !kiln::npy::parseNpy(bytes.data(), bytes.size(), again, error) ||
      again.data != array.data || again.shape != array.shape)
    std::abort();
  return 0;
}
