//===- Tensor.h - The kiln_tensor_t object ----------------------*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_API_TENSOR_H
#define KILN_RUNTIME_LIB_API_TENSOR_H

#include "kiln/runtime.h"

#include <cstdlib>
#include <vector>

/// A dense row-major tensor. The buffer is 64-byte aligned (the alignment
/// the compiler may assume for vector loads) and its size is rounded up to a
/// multiple of 64 bytes, with the padding zeroed, so that it is never empty.
struct kiln_tensor {
  kiln_dtype_t dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  size_t elementCount = 0;
  size_t byteSize = 0;
  void *data = nullptr;

  kiln_tensor() = default;
  kiln_tensor(const kiln_tensor &) = delete;
  kiln_tensor &operator=(const kiln_tensor &) = delete;
  ~kiln_tensor() { std::free(data); }
};

#endif // KILN_RUNTIME_LIB_API_TENSOR_H
