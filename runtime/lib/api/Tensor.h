//===- Tensor.h - The kiln_tensor_t object ----------------------*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_API_TENSOR_H
#define KILN_RUNTIME_LIB_API_TENSOR_H

#include "BufferCache.h"
#include "kiln/runtime.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace kiln {
namespace runtime {
namespace cuda {
class CudaDevice;
} // namespace cuda
} // namespace runtime
} // namespace kiln

/// A dense row-major tensor. An owned buffer is 64-byte aligned and its
/// size is rounded up to a multiple of 64 bytes, with the padding zeroed, so
/// that it is never empty. A borrowed buffer (kiln_tensor_wrap) is only
/// element-aligned: compiled code assumes no more of its inputs.
struct kiln_tensor {
  kiln_dtype_t dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  size_t elementCount = 0;
  size_t byteSize = 0;
  void *data = nullptr;
  /// Bytes allocated for data: byteSize rounded up to the alignment.
  size_t capacity = 0;
  /// True for kiln_tensor_wrap: data belongs to the caller.
  bool borrowed = false;
  /// For a tensor in CUDA device memory, the device whose memory `data`
  /// is (kept open while the tensor lives); NULL for a host tensor.
  std::shared_ptr<kiln::runtime::cuda::CudaDevice> device;

  kiln_tensor() = default;
  kiln_tensor(const kiln_tensor &) = delete;
  kiln_tensor &operator=(const kiln_tensor &) = delete;
  ~kiln_tensor();
};

namespace kiln {
namespace runtime {

/// kiln_tensor_create, except that without `zeroFill` the elements are left
/// unspecified (the padding is still zeroed): for outputs, which the
/// compiled code writes in full.
kiln_status_t createTensor(kiln_dtype_t dtype, size_t rank,
                           const int64_t *shape, const void *data,
                           bool zeroFill, kiln_tensor_t **outTensor);

/// A tensor in the memory of `device` (opened if needed), holding a copy
/// of `source` (a host tensor's elements, or a device tensor's of the same
/// device), or unspecified elements when `source` is NULL. `api` names the
/// entry point in messages.
kiln_status_t createDeviceTensor(
    const char *api, const std::shared_ptr<cuda::CudaDevice> &device,
    kiln_dtype_t dtype, size_t rank, const int64_t *shape,
    const kiln_tensor_t *source, kiln_tensor_t **outTensor);

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_TENSOR_H
