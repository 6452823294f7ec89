//===- Tensor.cpp - Creating and inspecting tensors ------------------------===//

#include "Tensor.h"
#include "Module.h"
#include "Status.h"

#include "cuda/CudaDevice.h"

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

/// Checks the caller's memory that kiln_tensor_wrap and
/// kiln_tensor_wrap_device (`api`) borrow: not NULL, element-aligned.
static kiln_status_t checkBorrowed(const char *api, kiln_dtype_t dtype,
                                   const void *data) {
  if (!data)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      std::string(api) + ": data is NULL");
  size_t elementSize = kiln_dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(data) % elementSize != 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      std::string(api) + ": data is not aligned to the " +
                          std::to_string(elementSize) + "-byte elements of " +
                          kiln_dtype_name(dtype));
  return nullptr;
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

/// Refuses, for `api`, a module compiled for the CPU: device tensors live in
/// a CUDA module's device.
static kiln_status_t requireCuda(const char *api, const kiln_module_t *module) {
  if (module->cuda)
    return nullptr;
  return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                    std::string(api) + ": the module was compiled for " +
                        kiln_device_name(module->device) +
                        ", whose functions take host tensors");
}

kiln_tensor::~kiln_tensor() {
  if (borrowed)
    return;
  if (device)
    device->releaseResident(data);
  else
    kiln::runtime::releaseBuffer(data, capacity);
}

kiln_status_t kiln::runtime::createDeviceTensor(
    const char *api, const std::shared_ptr<cuda::CudaDevice> &device,
    kiln_dtype_t dtype, size_t rank, const int64_t *shape,
    const kiln_tensor_t *source, kiln_tensor_t **outTensor) {
  return newTensor(
      api, dtype, rank, shape, outTensor,
      [&](kiln_tensor &tensor) -> kiln_status_t {
        void *buffer = nullptr;
        if (kiln_status_t status = device->createResident(
                tensor.byteSize, source ? source->data : nullptr,
                source && source->device, buffer)) {
          status->message = std::string(api) + ": " + status->message;
          return status;
        }
        tensor.data = buffer;
        tensor.device = device;
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
        if (kiln_status_t status =
                checkBorrowed("kiln_tensor_wrap", dtype, data))
          return status;
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

kiln_memory_t kiln_tensor_memory(const kiln_tensor_t *tensor) {
  return tensor && tensor->device ? KILN_MEMORY_CUDA : KILN_MEMORY_HOST;
}

kiln_status_t kiln_tensor_to_device(const kiln_module_t *module,
                                    const kiln_tensor_t *tensor,
                                    kiln_tensor_t **outTensor) {
  if (outTensor)
    *outTensor = nullptr;
  if (!module || !tensor || !outTensor)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_tensor_to_device: module, tensor and out_tensor "
                      "must not be NULL");
  if (kiln_status_t status = requireCuda("kiln_tensor_to_device", module))
    return status;
  if (tensor->device && !module->cuda->sharesMemoryWith(*tensor->device))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_tensor_to_device: the tensor is in the memory of "
                      "another CUDA device; copy it with kiln_tensor_to_host "
                      "first");
  return kiln::runtime::createDeviceTensor(
      "kiln_tensor_to_device", module->cuda, tensor->dtype,
      tensor->shape.size(), tensor->shape.data(), tensor, outTensor);
}

kiln_status_t kiln_tensor_wrap_device(const kiln_module_t *module,
                                      int device_index, kiln_dtype_t dtype,
                                      size_t rank, const int64_t *shape,
                                      void *data, kiln_tensor_t **outTensor) {
  if (outTensor)
    *outTensor = nullptr;
  if (!module)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_tensor_wrap_device: module is NULL");
  if (kiln_status_t status = requireCuda("kiln_tensor_wrap_device", module))
    return status;
  if (kiln_status_t status = module->cuda->open()) {
    status->message = "kiln_tensor_wrap_device: " + status->message;
    return status;
  }
  int ordinal = module->cuda->ordinal();
  if (device_index != ordinal)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_tensor_wrap_device: the memory is on CUDA device " +
                          std::to_string(device_index) +
                          " but the module runs on device " +
                          std::to_string(ordinal));
  return newTensor(
      "kiln_tensor_wrap_device", dtype, rank, shape, outTensor,
      [&](kiln_tensor &tensor) -> kiln_status_t {
        if (kiln_status_t status =
                checkBorrowed("kiln_tensor_wrap_device", dtype, data))
          return status;
        tensor.data = data;
        tensor.borrowed = true;
        tensor.device = module->cuda;
        return nullptr;
      });
}

int kiln_tensor_device_index(const kiln_tensor_t *tensor) {
  return tensor && tensor->device ? tensor->device->ordinal() : -1;
}

kiln_status_t kiln_tensor_to_host(const kiln_tensor_t *tensor,
                                  kiln_tensor_t **outTensor) {
  if (outTensor)
    *outTensor = nullptr;
  if (!tensor || !outTensor)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_tensor_to_host: tensor and out_tensor must not "
                      "be NULL");
  kiln_tensor_t *host = nullptr;
  if (kiln_status_t status = kiln::runtime::createTensor(
          tensor->dtype, tensor->shape.size(), tensor->shape.data(),
          tensor->device ? nullptr : tensor->data, /*zeroFill=*/false, &host))
    return status;
  if (tensor->device)
    if (kiln_status_t status = tensor->device->copyToHost(
            host->data, tensor->data, tensor->byteSize)) {
      kiln_tensor_release(host);
      status->message = "kiln_tensor_to_host: " + status->message;
      return status;
    }
  *outTensor = host;
  return nullptr;
}

} // extern "C"
