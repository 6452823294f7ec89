//===- NpyElementType.cpp - Arrays of .npy elements -----------------------===//
//
// The element types themselves come from kiln/ElementType.h; this file holds
// what depends on an array's shape.
//
//===----------------------------------------------------------------------===//

#include "kiln/Npy.h"

namespace kiln {
namespace npy {

size_t Array::elementCount() const {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

} // namespace npy
} // namespace kiln
