//===- LibraryBuffers.h - The bytes of a library call's buffers -*- C++ -*-===//
//
// A cuDNN call met inside a CUDA graph's capture without a plan is made
// once more outside the capture on scratch buffers
// (CudaDevice::callPlanningOutsideCapture), which must hold what the
// library reads and writes: the sizes below follow the dense row-major
// layouts kiln/CudaLibraryAbi.h gives a call's buffers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_LIBRARYBUFFERS_H
#define KILN_RUNTIME_LIB_CUDA_LIBRARYBUFFERS_H

#include "kiln/CudaLibraryAbi.h"
#include "kiln/runtime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace kiln {
namespace runtime {
namespace cuda {

/// The bytes of `factors` elements of `element` bytes each, or SIZE_MAX
/// where a factor is negative or the product overflows (a descriptor no
/// compiler wrote).
inline size_t bytesOf(size_t element, std::initializer_list<int64_t> factors,
                      const int64_t *dims = nullptr, int64_t rank = 0) {
  size_t bytes = element;
  auto times = [&](int64_t factor) {
    return factor >= 0 &&
           !__builtin_mul_overflow(bytes, size_t(factor), &bytes);
  };
  for (int64_t factor : factors)
    if (!times(factor))
      return SIZE_MAX;
  for (int64_t i = 0; i < rank; ++i)
    if (!times(dims[i]))
      return SIZE_MAX;
  return bytes;
}

/// The bytes of a convolution's x, w and y, as kiln/CudaLibraryAbi.h lays
/// them out for `descriptor` (a forward convolution, or its input or
/// kernel gradient).
inline std::array<size_t, 3> convBufferBytes(const int64_t *descriptor) {
  int64_t k = descriptor[0], groups = descriptor[1], flags = descriptor[3];
  int64_t n = descriptor[4], c = descriptor[5], o = descriptor[6];
  const int64_t *in = descriptor + KILN_CUDA_CONV_HEADER_SIZE;
  const int64_t *kernel = in + k, *out = in + 2 * k;
  size_t element = kiln_dtype_size(kiln_dtype_t(descriptor[2]));
  size_t x = bytesOf(element, {n, c}, in, k);
  if (flags & KILN_CUDA_CONV_WEIGHT_GRADIENT)
    return {x, bytesOf(element, {n, o}, out, k),
            bytesOf(element, {o, c / groups}, kernel, k)};
  size_t y = bytesOf(element, {n, o}, out, k);
  if (flags & KILN_CUDA_CONV_INPUT_GRADIENT)
    return {x, bytesOf(element, {c, o / groups}, kernel, k), y};
  return {x, bytesOf(element, {o, c / groups}, kernel, k), y};
}

/// The bytes of an attention's buffers (its gradient's with `gradient`),
/// in the order of kiln/CudaLibraryAbi.h's functions.
inline std::vector<size_t> attentionBufferBytes(const int64_t *descriptor,
                                                bool gradient) {
  size_t element = kiln_dtype_size(kiln_dtype_t(descriptor[0]));
  int64_t b = descriptor[2], h = descriptor[3], nq = descriptor[4],
          nk = descriptor[5], d = descriptor[6], dv = descriptor[7];
  size_t q = bytesOf(element, {b, h, nq, d}),
         k = bytesOf(element, {b, h, nk, d}),
         v = bytesOf(element, {b, h, nk, dv}),
         o = bytesOf(element, {b, h, nq, dv}), lse = bytesOf(4, {b, h, nq}),
         mask = bytesOf(element, {descriptor[8], descriptor[9], descriptor[10],
                                  descriptor[11]});
  if (!gradient)
    return {q, k, v, mask, o, lse};
  return {q, k, v, o, lse, o, mask, q, k, v, bytesOf(4, {b, h, nq, d + 1})};
}

} // namespace cuda
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_LIBRARYBUFFERS_H
