//===- Checksum.cpp - Checksums of module bodies ---------------------------===//
//
// Neither checksum is cryptographic; each detects every single-bit flip,
// every burst of errors shorter than its width and the truncations that the
// FlatBuffers verifier could let through. Integrity against an attacker is
// out of scope: a module is native code, so it is trusted anyway. Version 1
// used FNV-1a (tiny, no dependencies, one multiply per byte); version 2
// uses CRC32C, which the SSE4.2 instruction computes eight bytes at a time.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

#include "kiln/Crc32c.h"

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

uint64_t bodyChecksum(uint32_t version, const void *data, size_t size) {
  return version == 1 ? fnv1a64(data, size) : crc32c(data, size);
}

} // namespace format
} // namespace kiln
