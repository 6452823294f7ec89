//===- Crc32c.cpp - CRC32C checksums ---------------------------------------===//
//
// CRC32C (the Castagnoli polynomial, reflected 0x82f63b78), as iSCSI,
// TFRecord framing and .kmod bodies (format version 2) use it. On x86-64
// CPUs with SSE4.2 the crc32 instruction does
// eight bytes at a time; elsewhere a table does one byte at a time. Both
// give the same values (RFC 3720's test vectors are in TfRecordTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "kiln/Crc32c.h"

#include <array>
#include <cstring>

namespace kiln {
namespace {

std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
    table[i] = crc;
  }
  return table;
}

uint32_t crc32cTable(const uint8_t *bytes, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = makeTable();
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t
crc32cHardware(const uint8_t *bytes, size_t size, uint32_t crc) {
  uint64_t wide = crc;
  for (; size >= 8; bytes += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    wide = __builtin_ia32_crc32di(wide, word);
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  for (; size; ++bytes, --size)
    narrow = __builtin_ia32_crc32qi(narrow, *bytes);
  return narrow;
}

bool hasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

} // namespace

uint32_t crc32c(const void *data, size_t size, uint32_t crc) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  crc = ~crc;
#if defined(__x86_64__)
  if (hasSse42())
    return ~crc32cHardware(bytes, size, crc);
#endif
  return ~crc32cTable(bytes, size, crc);
}

uint32_t crc32cPortable(const void *data, size_t size, uint32_t crc) {
  return ~crc32cTable(static_cast<const uint8_t *>(data), size, ~crc);
}

} // namespace kiln
