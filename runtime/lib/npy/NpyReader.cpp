//===- NpyReader.cpp - Parsing .npy files ----------------------------------===//
//
// Layout: the magic "\x93NUMPY", a major and a minor version byte, the
// header length (uint16 in version 1.0, uint32 in 2.0, little-endian), the
// header dict, then the raw element data.
//
//===----------------------------------------------------------------------===//

#include "NpyHeader.h"

#include "kiln/Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy data is copied verbatim, which needs a little-endian host");

namespace kiln {
namespace npy {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// Maps a descriptor onto an element type. Byte order marks are checked
/// rather than ignored: '<' and '=' (native, little-endian here) are
/// accepted for multi-byte types, any mark for one-byte types.
bool decodeDescriptor(const std::string &descr, const ReadOptions &options,
                      ElementType &type, std::string &error) {
  if (descr.size() >= 3 && descr[1] == 'V' &&
      (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') &&
      descr.find_first_not_of("0123456789", 2) == std::string::npos) {
    // Untyped bytes: how numpy saves a dtype it does not define itself.
    std::string bytes = descr.substr(2);
    if (!options.untypedAs) {
      error = "untyped dtype '" + descr +
              "' (how numpy saves a dtype it does not define, such as "
              "ml_dtypes.bfloat16) is not supported here";
      return false;
    }
    size_t wanted = elementSize(*options.untypedAs);
    if (bytes != std::to_string(wanted)) {
      error = "untyped dtype '" + descr + "' has " + bytes +
              "-byte elements, but " + elementTypeName(*options.untypedAs) +
              " has " + std::to_string(wanted);
      return false;
    }
    type = *options.untypedAs;
    return true;
  }
  std::string supported;
  for (const ElementTypeInfo &info : kElementTypes) {
    std::string rowDescr = info.npyDescriptor;
    if (rowDescr.empty())
      continue;
    supported += (supported.empty() ? "" : ", ") + rowDescr;
    if (descr.size() != rowDescr.size() ||
        descr.compare(1, std::string::npos, rowDescr, 1) != 0)
      continue;
    char order = descr[0];
    if (order == '<' || order == '=' ||
        (info.byteSize == 1 && (order == '|' || order == '>'))) {
      type = info.type;
      return true;
    }
    if (order == '>') {
      error = "big-endian data ('" + descr + "') is not supported";
      return false;
    }
  }
  error = "unsupported dtype '" + descr + "' (supported: " + supported + ")";
  return false;
}

uint32_t readLittleEndian(const uint8_t *bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = count; i-- > 0;)
    value = (value << 8) | bytes[i];
  return value;
}

} // namespace

bool parseNpy(const void *data, size_t size, Array &out, std::string &error,
              const ReadOptions &options) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  unsigned major = bytes[kMagicSize], minor = bytes[kMagicSize + 1];
  size_t lengthSize;
  if (major == 1 && minor == 0) {
    lengthSize = 2;
  } else if (major == 2 && minor == 0) {
    lengthSize = 4;
  } else {
    error = "unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + " (supported: 1.0, 2.0)";
    return false;
  }
  size_t headerStart = kMagicSize + 2 + lengthSize;
  if (size < headerStart) {
    error = "truncated .npy file: it ends inside the header length";
    return false;
  }
  size_t headerLength = readLittleEndian(bytes + kMagicSize + 2, lengthSize);
  if (headerLength > size - headerStart) {
    error = "truncated .npy file: the header is " +
            std::to_string(headerLength) + " bytes but only " +
            std::to_string(size - headerStart) + " follow";
    return false;
  }
  std::string text(reinterpret_cast<const char *>(bytes + headerStart),
                   headerLength);
  if (text.find('\0') != std::string::npos) {
    error = "bad header: it contains a NUL character";
    return false;
  }

  HeaderDict header;
  if (!parseHeaderDict(text, header, error))
    return false;
  if (header.fortranOrder) {
    error = "Fortran-order arrays (fortran_order: True) are not supported";
    return false;
  }
  Array array;
  if (!decodeDescriptor(header.descr, options, array.type, error))
    return false;

  size_t available = size - headerStart - headerLength;
  size_t expected = elementSize(array.type);
  for (int64_t dim : header.shape) {
    uint64_t extent = static_cast<uint64_t>(dim);
    if (extent != 0 && expected > std::numeric_limits<size_t>::max() / extent) {
      error = "bad header: the size of shape overflows";
      return false;
    }
    expected *= extent;
  }
  if (available < expected) {
    error = "truncated .npy file: the data is " + std::to_string(available) +
            " bytes but the shape needs " + std::to_string(expected);
    return false;
  }
  if (available > expected) {
    error = ".npy file has " + std::to_string(available - expected) +
            " unexpected bytes after the array data";
    return false;
  }
  array.shape = std::move(header.shape);
  const uint8_t *payload = bytes + headerStart + headerLength;
  array.data.assign(payload, payload + expected);
  if (array.type == ElementType::I1)
    for (uint8_t &value : array.data)
      value = value != 0;
  out = std::move(array);
  return true;
}

bool readNpyFile(const std::string &path, Array &out, std::string &error,
                 const ReadOptions &options) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"),
                                              std::fclose);
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t count;
  while ((count = std::fread(chunk, 1, sizeof(chunk), file.get())) != 0)
    bytes.insert(bytes.end(), chunk, chunk + count);
  if (std::ferror(file.get())) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (!parseNpy(bytes.data(), bytes.size(), out, error, options)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

} // namespace npy
} // namespace kiln
