//===- Array.cpp - Host arrays backed by runtime tensors ------------------===//
//
// Arrays own runtime tensors, so passing them to a compiled function and
// getting its outputs back involves no copies.
//
//===----------------------------------------------------------------------===//

#include "kiln/Jit.h"

#include "kiln/HalfFloat.h"
#include "kiln/runtime.h"

#include <cstring>

using namespace kiln;

namespace {
/// DType values are the element type codes, which kiln_dtype_t shares.
kiln_dtype_t runtimeDType(DType dtype) {
  return static_cast<kiln_dtype_t>(toElementType(dtype));
}

DType fromRuntime(kiln_dtype_t dtype) {
  std::optional<DType> traced;
  if (static_cast<unsigned>(dtype) < kNumElementTypes)
    traced = tracedDType(static_cast<ElementType>(dtype));
  if (!traced)
    throw JitError(std::string("the runtime returned a tensor of ") +
                   kiln_dtype_name(dtype) + ", which arrays cannot hold");
  return *traced;
}

std::shared_ptr<kiln_tensor> own(kiln_tensor *tensor) {
  return std::shared_ptr<kiln_tensor>(tensor, kiln_tensor_release);
}
} // namespace

Array::Array(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  kiln_tensor_t *tensor = nullptr;
  if (kiln_status_t status = kiln_tensor_create(
          runtimeDType(dtype), shape_.size(), shape_.data(), nullptr, &tensor)) {
    std::string message = kiln_status_message(status);
    kiln_status_free(status);
    throw JitError("cannot create an array: " + message);
  }
  tensor_ = own(tensor);
}

Array Array::adopt(kiln_tensor *tensor) {
  Array array;
  array.tensor_ = own(tensor);
  array.dtype_ = fromRuntime(kiln_tensor_dtype(tensor));
  const int64_t *shape = kiln_tensor_shape(tensor);
  array.shape_.assign(shape, shape + kiln_tensor_rank(tensor));
  return array;
}

int64_t Array::size() const {
  return tensor_ ? static_cast<int64_t>(kiln_tensor_element_count(tensor_.get()))
                 : 0;
}

size_t Array::byteSize() const {
  return tensor_ ? kiln_tensor_byte_size(tensor_.get()) : 0;
}

void *Array::data() { return tensor_ ? kiln_tensor_data(tensor_.get()) : nullptr; }

const void *Array::data() const {
  return tensor_ ? kiln_tensor_data(tensor_.get()) : nullptr;
}

double Array::at(int64_t index) const {
  if (index < 0 || index >= size())
    throw JitError("array index " + std::to_string(index) +
                   " out of range for " + std::to_string(size()) +
                   " elements");
  switch (dtype_) {
  case DType::F32: return data<float>()[index];
  case DType::F64: return data<double>()[index];
  case DType::F16: return halfToFloat(data<uint16_t>()[index]);
  case DType::BF16: return bfloat16ToFloat(data<uint16_t>()[index]);
  case DType::I1: return data<uint8_t>()[index] != 0;
  case DType::I32: return data<int32_t>()[index];
  case DType::I64: return static_cast<double>(data<int64_t>()[index]);
  case DType::UI32: return data<uint32_t>()[index];
  }
  return 0;
}

void Array::assign(const void *values, size_t count, size_t elementSize) {
  if (count != static_cast<size_t>(size()))
    throw JitError("array of " + std::to_string(size()) + " elements given " +
                   std::to_string(count) + " values");
  if (elementSize != kiln_dtype_size(runtimeDType(dtype_)))
    throw JitError(std::string("values of ") + std::to_string(elementSize) +
                   " bytes do not fit dtype " +
                   kiln_dtype_name(runtimeDType(dtype_)));
  std::memcpy(data(), values, count * elementSize);
}
