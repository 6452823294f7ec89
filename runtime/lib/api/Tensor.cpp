//===- Tensor.cpp - Creating and inspecting tensors ------------------------===//

#include "Tensor.h"
#include "Status.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <memory>
#include <new>

using kiln::runtime::makeStatus;

namespace {

constexpr size_t kTensorAlignment = 64;

} // namespace

/// Checks the arguments shared by kiln_tensor_create and kiln_tensor_wrap
/// and computes the element count and byte size; `api` names the entry
/// point in messages.
static kiln_status_t checkShape(const char *api, kiln_dtype_t dtype,
                                size_t rank, const int64_t *shape,
                                size_t &elementCount, size_t &byteSize) {
  std::string prefix = std::string(api) + ": ";
  size_t elementSize = kiln_dtype_size(dtype);
  if (elementSize == 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      prefix + "unknown dtype " +
                          std::to_string(static_cast<int>(dtype)));
  if (rank != 0 && !shape)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      prefix + "shape is NULL but rank is " +
                          std::to_string(rank));
  // Sizes stay below PTRDIFF_MAX so that pointer arithmetic over the
  // buffer is always defined.
  const size_t limit = PTRDIFF_MAX - kTensorAlignment;
  elementCount = 1;
  for (size_t axis = 0; axis < rank; ++axis) {
    if (shape[axis] < 0)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        prefix + "negative dimension " +
                            std::to_string(shape[axis]) + " (axis " +
                            std::to_string(axis) + ")");
    size_t dim = static_cast<size_t>(shape[axis]);
    if (dim != 0 && elementCount > limit / elementSize / dim)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        prefix + "the tensor size overflows (axis " +
                            std::to_string(axis) + " has dimension " +
                            std::to_string(dim) + ")");
    elementCount *= dim;
  }
  byteSize = elementCount * elementSize;
  return nullptr;
}

/// Creates a tensor for kiln_tensor_create or kiln_tensor_wrap (`api`):
/// checks the arguments, fills in dtype and shape, and lets `attach` give
/// it its buffer (or fail).
template <typename Attach>
static kiln_status_t newTensor(const char *api, kiln_dtype_t dtype,
                               size_t rank, const int64_t *shape,
                               kiln_tensor_t **outTensor,
                               const Attach &attach) {
  if (!outTensor)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      std::string(api) + ": out_tensor is NULL");
  *outTensor = nullptr;
  try {
    size_t elementCount = 0, byteSize = 0;
    if (kiln_status_t status =
            checkShape(api, dtype, rank, shape, elementCount, byteSize))
      return status;
    auto tensor = std::make_unique<kiln_tensor>();
    tensor->dtype = dtype;
    tensor->shape.assign(shape, shape + rank);
    tensor->elementCount = elementCount;
    tensor->byteSize = byteSize;
    if (kiln_status_t status = attach(*tensor))
      return status;
    *outTensor = tensor.release();
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln::runtime::createTensor(kiln_dtype_t dtype, size_t rank,
                                          const int64_t *shape,
                                          const void *data, bool zeroFill,
                                          kiln_tensor_t **outTensor) {
  return newTensor(
      "kiln_tensor_create", dtype, rank, shape, outTensor,
      [&](kiln_tensor &tensor) -> kiln_status_t {
        size_t byteSize = tensor.byteSize;
        size_t capacity = (byteSize + kTensorAlignment - 1) /
                          kTensorAlignment * kTensorAlignment;
        if (capacity == 0)
          capacity = kTensorAlignment;
        tensor.data = kiln::runtime::acquireBuffer(capacity);
        tensor.capacity = capacity;
        if (!tensor.data)
          return makeStatus(KILN_STATUS_OUT_OF_MEMORY,
                            "kiln_tensor_create: cannot allocate " +
                                std::to_string(capacity) + " bytes");
        size_t written = data ? byteSize : zeroFill ? 0 : byteSize;
        if (data)
          std::memcpy(tensor.data, data, byteSize);
        std::memset(static_cast<char *>(tensor.data) + written, 0,
                    capacity - written);
        return nullptr;
      });
}

extern "C" {

kiln_status_t kiln_tensor_create(kiln_dtype_t dtype, size_t rank,
                                 const int64_t *shape, const void *data,
                                 kiln_tensor_t **outTensor) {
  return kiln::runtime::createTensor(dtype, rank, shape, data,
                                     /*zeroFill=*/true, outTensor);
}

kiln_status_t kiln_tensor_wrap(kiln_dtype_t dtype, size_t rank,
                               const int64_t *shape, void *data,
                               kiln_tensor_t **outTensor) {
  return newTensor(
      "kiln_tensor_wrap", dtype, rank, shape, outTensor,
      [&](kiln_tensor &tensor) -> kiln_status_t {
        if (!data)
          return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_tensor_wrap: data is NULL");
        size_t elementSize = kiln_dtype_size(dtype);
        if (reinterpret_cast<uintptr_t>(data) % elementSize != 0)
          return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_tensor_wrap: data is not aligned to the " +
                                std::to_string(elementSize) +
                                "-byte elements of " + kiln_dtype_name(dtype));
        tensor.data = data;
        tensor.borrowed = true;
        return nullptr;
      });
}

void kiln_tensor_release(kiln_tensor_t *tensor) { delete tensor; }

kiln_dtype_t kiln_tensor_dtype(const kiln_tensor_t *tensor) {
  return tensor ? tensor->dtype : KILN_DTYPE_F32;
}

size_t kiln_tensor_rank(const kiln_tensor_t *tensor) {
  return tensor ? tensor->shape.size() : 0;
}

const int64_t *kiln_tensor_shape(const kiln_tensor_t *tensor) {
  return tensor && !tensor->shape.empty() ? tensor->shape.data() : nullptr;
}

size_t kiln_tensor_element_count(const kiln_tensor_t *tensor) {
  return tensor ? tensor->elementCount : 0;
}

size_t kiln_tensor_byte_size(const kiln_tensor_t *tensor) {
  return tensor ? tensor->byteSize : 0;
}

void *kiln_tensor_data(kiln_tensor_t *tensor) {
  return tensor ? tensor->data : nullptr;
}

} // extern "C"
