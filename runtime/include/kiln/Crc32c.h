//===- Crc32c.h - CRC32C checksums ------------------------------*- C++ -*-===//
//
// CRC32C (Castagnoli): the checksum of TFRecord framing and of .kmod bodies
// from format version 2 on. Part of the module format library, which the
// data library links.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CRC32C_H
#define KILN_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace kiln {

/// CRC32C (Castagnoli) of `size` bytes, continuing from `crc` (0 for a
/// fresh one): the SSE4.2 instruction where the CPU has it, a table
/// otherwise.
uint32_t crc32c(const void *data, size_t size, uint32_t crc = 0);

/// The same with a table, one byte at a time: what crc32c runs on CPUs
/// without SSE4.2 (exposed so that both are tested on any CPU).
uint32_t crc32cPortable(const void *data, size_t size, uint32_t crc = 0);

} // namespace kiln

#endif // KILN_CRC32C_H
