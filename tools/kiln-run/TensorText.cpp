//===- TensorText.cpp - Printing tensors and their types -------------------===//

#include "TensorText.h"

#include "kiln/HalfFloat.h"

#include <cstdio>
#include <cstring>

namespace kiln {
namespace run {

namespace {

/// Prints a float with \p digits significant digits, the fewest that read
/// back as the same value of its type.
void appendFloat(std::string &out, double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  out += text;
}

/// Appends the integer of C type \p T stored at \p element.
template <typename T>
void appendInteger(std::string &out, const uint8_t *element) {
  T value;
  std::memcpy(&value, element, sizeof(value));
  out += std::to_string(value);
}

void appendElement(std::string &out, kiln_dtype_t dtype, const uint8_t *data,
                   size_t index) {
  const uint8_t *element = data + index * kiln_dtype_size(dtype);
  switch (dtype) {
  case KILN_DTYPE_F32: {
    float value;
    std::memcpy(&value, element, sizeof(value));
    appendFloat(out, value, 9);
    return;
  }
  case KILN_DTYPE_F64: {
    double value;
    std::memcpy(&value, element, sizeof(value));
    appendFloat(out, value, 17);
    return;
  }
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16: {
    uint16_t bits;
    std::memcpy(&bits, element, sizeof(bits));
    if (dtype == KILN_DTYPE_F16)
      appendFloat(out, halfToFloat(bits), 5);
    else
      appendFloat(out, bfloat16ToFloat(bits), 4);
    return;
  }
  case KILN_DTYPE_I1:
    out += *element ? "true" : "false";
    return;
  case KILN_DTYPE_I8:
    return appendInteger<int8_t>(out, element);
  case KILN_DTYPE_I16:
    return appendInteger<int16_t>(out, element);
  case KILN_DTYPE_I32:
    return appendInteger<int32_t>(out, element);
  case KILN_DTYPE_I64:
    return appendInteger<int64_t>(out, element);
  case KILN_DTYPE_UI8:
    return appendInteger<uint8_t>(out, element);
  case KILN_DTYPE_UI16:
    return appendInteger<uint16_t>(out, element);
  case KILN_DTYPE_UI32:
    return appendInteger<uint32_t>(out, element);
  case KILN_DTYPE_UI64:
    return appendInteger<uint64_t>(out, element);
  }
  out += "?";
}

/// Appends the sub-array at \p axis starting at element \p offset.
void appendNested(std::string &out, kiln_dtype_t dtype, const uint8_t *data,
                  size_t rank, const int64_t *shape, size_t axis,
                  size_t offset) {
  if (axis == rank) {
    appendElement(out, dtype, data, offset);
    return;
  }
  size_t stride = 1;
  for (size_t i = axis + 1; i < rank; ++i)
    stride *= static_cast<size_t>(shape[i]);
  out += "[";
  for (int64_t i = 0; i < shape[axis]; ++i) {
    if (i)
      out += ", ";
    appendNested(out, dtype, data, rank, shape, axis + 1,
                 offset + static_cast<size_t>(i) * stride);
  }
  out += "]";
}

} // namespace

std::string formatShape(size_t rank, const int64_t *shape) {
  std::string text = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string formatType(kiln_dtype_t dtype, size_t rank, const int64_t *shape) {
  return kiln_dtype_name(dtype) + formatShape(rank, shape);
}

std::string formatSignature(const kiln_tensor_signature_t &signature) {
  std::string type =
      formatType(signature.dtype, signature.rank, signature.shape);
  return *signature.name ? signature.name + (": " + type) : type;
}

std::string formatValues(kiln_tensor_t *tensor) {
  std::string out;
  appendNested(out, kiln_tensor_dtype(tensor),
               static_cast<const uint8_t *>(kiln_tensor_data(tensor)),
               kiln_tensor_rank(tensor), kiln_tensor_shape(tensor), 0, 0);
  return out;
}

} // namespace run
} // namespace kiln
