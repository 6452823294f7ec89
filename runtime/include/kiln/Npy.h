//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// kiln-run exchanges tensors with the outside world as .npy files, the one
// tensor container every numerical tool can produce. Only what numpy itself
// writes for plain little-endian arrays is supported: format versions 1.0
// and 2.0, C order, and the element types kiln knows. Everything else is
// rejected with a message rather than misread.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_NPY_H
#define KILN_NPY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace npy {

/// The supported element types, with their numpy descriptors.
enum class ElementType : uint8_t {
  F16,  ///< '<f2'
  F32,  ///< '<f4'
  F64,  ///< '<f8'
  Bool, ///< '|b1', one byte holding 0 or 1
  I32,  ///< '<i4'
  I64,  ///< '<i8'
};

/// Bytes per element.
size_t elementSize(ElementType type);

/// The numpy type descriptor written for \p type, e.g. "<f4".
const char *descriptor(ElementType type);

/// A dense C-order array. `data` holds exactly elementCount() elements in
/// little-endian byte order.
struct Array {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// The product of the dimensions (1 for rank 0).
  size_t elementCount() const;
};

/// Parses the .npy image in [data, data + size). Booleans are normalized to
/// 0 and 1. On failure \p out is untouched and \p error says what is wrong.
bool parseNpy(const void *data, size_t size, Array &out, std::string &error);

/// Reads and parses the file at \p path. Errors name the file.
bool readNpyFile(const std::string &path, Array &out, std::string &error);

/// Serializes \p array as numpy would: version 1.0 unless the header needs
/// 2.0, with the data starting at a 64-byte boundary. Fails if the data size
/// does not match the shape.
bool writeNpy(const Array &array, std::vector<uint8_t> &out,
              std::string &error);

/// Serializes \p array to the file at \p path, replacing it.
bool writeNpyFile(const std::string &path, const Array &array,
                  std::string &error);

} // namespace npy
} // namespace kiln

#endif // KILN_NPY_H
