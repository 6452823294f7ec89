//===- NpyWriter.cpp - Writing .npy files ----------------------------------===//

#include "NpyHeader.h"

#include "kiln/Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln {
namespace npy {

namespace {

/// numpy pads the header so that the data starts at this boundary, which
/// lets readers map the data in place.
constexpr size_t kDataAlignment = 64;

void appendLittleEndian(std::vector<uint8_t> &out, uint32_t value,
                        size_t count) {
  for (size_t i = 0; i < count; ++i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

} // namespace

bool writeNpy(const Array &array, std::vector<uint8_t> &out,
              std::string &error) {
  if (*descriptor(array.type) == '\0') {
    error = std::string("cannot write .npy: numpy has no element type ") +
            elementTypeName(array.type);
    return false;
  }
  for (size_t axis = 0; axis < array.shape.size(); ++axis) {
    if (array.shape[axis] < 0) {
      error = "cannot write .npy: negative dimension " +
              std::to_string(array.shape[axis]) + " (axis " +
              std::to_string(axis) + ")";
      return false;
    }
  }
  size_t expected = array.elementCount() * elementSize(array.type);
  if (array.data.size() != expected) {
    error = "cannot write .npy: the data is " +
            std::to_string(array.data.size()) + " bytes but the shape needs " +
            std::to_string(expected);
    return false;
  }

  std::string header = formatHeaderDict(descriptor(array.type), array.shape);
  // The header is followed by at least one space and a newline, and padded
  // so that magic + version + length + header is a multiple of 64 bytes.
  unsigned major = 1;
  size_t prefix = 6 + 2 + 2;
  if (header.size() + 2 + kDataAlignment > 0xffff) {
    major = 2;
    prefix = 6 + 2 + 4;
  }
  size_t unpadded = prefix + header.size() + 1;
  header.append(kDataAlignment - unpadded % kDataAlignment, ' ');
  header.push_back('\n');

  out.clear();
  out.reserve(prefix + header.size() + array.data.size());
  out.insert(out.end(), {0x93, 'N', 'U', 'M', 'P', 'Y'});
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  appendLittleEndian(out, static_cast<uint32_t>(header.size()), prefix - 8);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return true;
}

bool writeNpyFile(const std::string &path, const Array &array,
                  std::string &error) {
  std::vector<uint8_t> bytes;
  if (!writeNpy(array, bytes, error))
    return false;
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) ==
                 bytes.size();
  int savedErrno = errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    savedErrno = errno;
  }
  if (!written) {
    error = "cannot write '" + path + "': " + std::strerror(savedErrno);
    return false;
  }
  return true;
}

} // namespace npy
} // namespace kiln
