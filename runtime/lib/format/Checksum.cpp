//===- Checksum.cpp - FNV-1a hashing of module bodies ----------------------===//
//
// FNV-1a is not cryptographic; it is used because it is tiny, has no
// dependencies, and detects every single-bit flip and the truncations that
// the FlatBuffers verifier could let through. Integrity against an attacker
// is out of scope: a module is native code, so it is trusted anyway.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

namespace kiln {
namespace format {

uint64_t fnv1a64(const void *data, size_t size) {
  constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  constexpr uint64_t kPrime = 0x100000001b3ull;
  const auto *bytes = static_cast<const uint8_t *>(data);
  uint64_t hash = kOffsetBasis;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= kPrime;
  }
  return hash;
}

} // namespace format
} // namespace kiln
