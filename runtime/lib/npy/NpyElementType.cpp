//===- NpyElementType.cpp - Element types of .npy files --------------------===//

#include "kiln/Npy.h"

namespace kiln {
namespace npy {

size_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::Bool:
    return 1;
  case ElementType::F16:
    return 2;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  }
  return 0;
}

const char *descriptor(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return "<f2";
  case ElementType::F32:
    return "<f4";
  case ElementType::F64:
    return "<f8";
  case ElementType::Bool:
    return "|b1";
  case ElementType::I32:
    return "<i4";
  case ElementType::I64:
    return "<i8";
  }
  return "";
}

size_t Array::elementCount() const {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

} // namespace npy
} // namespace kiln
