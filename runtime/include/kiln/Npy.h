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

#include "kiln/ElementType.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace npy {

/// The element types of .npy data: kiln's element types, of which those
/// with a numpy descriptor (ElementTypeInfo::npyDescriptor) can be read and
/// written. I1 is numpy's bool, one byte holding 0 or 1.
using ElementType = kiln::ElementType;

/// Bytes per element.
inline size_t elementSize(ElementType type) { return elementTypeSize(type); }

/// The numpy type descriptor written for \p type, e.g. "<f4"; "" for a type
/// numpy does not have (bf16).
inline const char *descriptor(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  return info ? info->npyDescriptor : "";
}

/// A dense C-order array. `data` holds exactly elementCount() elements in
/// little-endian byte order.
struct Array {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// The product of the dimensions (1 for rank 0).
  size_t elementCount() const;
};

/// What a reader knows about the file beyond its header.
struct ReadOptions {
  /// numpy saves an array of a dtype it does not define itself, such as
  /// ml_dtypes.bfloat16, as untyped bytes: descriptor '<V2' (or '|V2').
  /// Where the caller knows the element type (a bf16 input), it names it
  /// here, and an untyped descriptor of that type's size reads as that type;
  /// any other untyped descriptor is refused.
  std::optional<ElementType> untypedAs;
};

/// Parses the .npy image in [data, data + size). Booleans are normalized to
/// 0 and 1. On failure \p out is untouched and \p error says what is wrong.
bool parseNpy(const void *data, size_t size, Array &out, std::string &error,
              const ReadOptions &options = {});

/// Reads and parses the file at \p path. Errors name the file.
bool readNpyFile(const std::string &path, Array &out, std::string &error,
                 const ReadOptions &options = {});

/// Serializes \p array as numpy would: version 1.0 unless the header needs
/// 2.0, with the data starting at a 64-byte boundary. Fails if the data size
/// does not match the shape or numpy has no such element type.
bool writeNpy(const Array &array, std::vector<uint8_t> &out,
              std::string &error);

/// Serializes \p array to the file at \p path, replacing it.
bool writeNpyFile(const std::string &path, const Array &array,
                  std::string &error);

} // namespace npy
} // namespace kiln

#endif // KILN_NPY_H
