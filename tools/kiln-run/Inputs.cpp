//===- Inputs.cpp - Turning command-line arguments into tensors ------------===//

#include "Inputs.h"
#include "TensorText.h"

#include "kiln/HalfFloat.h"
#include "kiln/Npy.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace kiln {
namespace run {

namespace {

bool isBoolWord(const std::string &text) {
  return text == "true" || text == "false";
}

/// True if the whole of \p text reads as a number.
bool parsesAsDouble(const std::string &text, double &value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

bool looksLikeLiteral(const std::string &text) {
  double ignored;
  return isBoolWord(text) || parsesAsDouble(text, ignored);
}

bool parseInteger(const std::string &text, int64_t min, int64_t max,
                  int64_t &out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || value < min || value > max)
    return false;
  out = value;
  return true;
}

/// Parses an unsigned decimal integer of at most \p max.
bool parseUnsigned(const std::string &text, uint64_t max, uint64_t &out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || value > max)
    return false;
  out = value;
  return true;
}

/// Parses a signed integer literal that fits \p T into \p element.
template <typename T>
bool parseSignedLiteral(const std::string &text, uint8_t *element) {
  int64_t value;
  if (!parseInteger(text, std::numeric_limits<T>::min(),
                    std::numeric_limits<T>::max(), value))
    return false;
  T narrow = static_cast<T>(value);
  std::memcpy(element, &narrow, sizeof(narrow));
  return true;
}

/// Parses an unsigned integer literal that fits \p T into \p element.
template <typename T>
bool parseUnsignedLiteral(const std::string &text, uint8_t *element) {
  uint64_t value;
  if (!parseUnsigned(text, std::numeric_limits<T>::max(), value))
    return false;
  T narrow = static_cast<T>(value);
  std::memcpy(element, &narrow, sizeof(narrow));
  return true;
}

/// Parses a literal for a rank-0 input of type \p dtype into \p element
/// (at least 8 bytes).
bool parseLiteral(const std::string &text, kiln_dtype_t dtype,
                  uint8_t *element, std::string &error) {
  std::string problem = "'" + text + "' is not a valid " +
                        kiln_dtype_name(dtype) + " literal";
  switch (dtype) {
  case KILN_DTYPE_I1: {
    uint8_t value;
    if (text == "true" || text == "1")
      value = 1;
    else if (text == "false" || text == "0")
      value = 0;
    else
      break;
    *element = value;
    return true;
  }
  case KILN_DTYPE_I8:
    if (!parseSignedLiteral<int8_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_I16:
    if (!parseSignedLiteral<int16_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_I32:
    if (!parseSignedLiteral<int32_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_I64:
    if (!parseSignedLiteral<int64_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_UI8:
    if (!parseUnsignedLiteral<uint8_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_UI16:
    if (!parseUnsignedLiteral<uint16_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_UI32:
    if (!parseUnsignedLiteral<uint32_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_UI64:
    if (!parseUnsignedLiteral<uint64_t>(text, element))
      break;
    return true;
  case KILN_DTYPE_F64: {
    double value;
    if (!parsesAsDouble(text, value))
      break;
    if (errno == ERANGE && std::isinf(value)) {
      error = "'" + text + "' is out of range for f64";
      return false;
    }
    std::memcpy(element, &value, sizeof(value));
    return true;
  }
  case KILN_DTYPE_F32:
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16: {
    double ignored;
    if (!parsesAsDouble(text, ignored))
      break;
    // strtof rounds the decimal directly to float; going through double
    // first could round twice.
    errno = 0;
    float value = std::strtof(text.c_str(), nullptr);
    bool overflow = errno == ERANGE && std::isinf(value);
    if (dtype == KILN_DTYPE_F32) {
      std::memcpy(element, &value, sizeof(value));
    } else {
      uint16_t bits = dtype == KILN_DTYPE_F16 ? floatToHalf(value)
                                              : floatToBfloat16(value);
      float back = dtype == KILN_DTYPE_F16 ? halfToFloat(bits)
                                           : bfloat16ToFloat(bits);
      overflow |= std::isinf(back) && !std::isinf(value);
      std::memcpy(element, &bits, sizeof(bits));
    }
    if (overflow) {
      error = "'" + text + "' is out of range for " + kiln_dtype_name(dtype);
      return false;
    }
    return true;
  }
  }
  error = problem;
  return false;
}

/// The .npy element type that carries a kiln dtype; bf16 travels as f32.
npy::ElementType npyTypeFor(kiln_dtype_t dtype) {
  return getElementTypeInfo(static_cast<ElementType>(dtype)).npyCarrier;
}

/// Replaces \p array by block shard.rank of shard.size along
/// shard.dimension.
bool keepShard(npy::Array &array, const InputShard &shard,
               const std::string &where, const std::string &path,
               std::string &error) {
  size_t rank = array.shape.size();
  if (shard.dimension >= rank) {
    error = where + ": --shard-input dimension " +
            std::to_string(shard.dimension) + " is out of range for '" + path +
            "', of shape " + formatShape(rank, array.shape.data());
    return false;
  }
  int64_t extent = array.shape[shard.dimension];
  if (extent % shard.size != 0) {
    error = where + ": dimension " + std::to_string(shard.dimension) + " of '" +
            path + "' has extent " + std::to_string(extent) +
            ", which does not split into " + std::to_string(shard.size) +
            " equal blocks, one per rank";
    return false;
  }
  int64_t block = extent / shard.size;
  size_t outer = 1, inner = npy::elementSize(array.type);
  for (size_t axis = 0; axis < shard.dimension; ++axis)
    outer *= size_t(array.shape[axis]);
  for (size_t axis = shard.dimension + 1; axis < rank; ++axis)
    inner *= size_t(array.shape[axis]);
  std::vector<uint8_t> kept(outer * size_t(block) * inner);
  for (size_t o = 0; o < outer; ++o)
    std::memcpy(kept.data() + o * size_t(block) * inner,
                array.data.data() +
                    (o * size_t(extent) + size_t(shard.rank * block)) * inner,
                size_t(block) * inner);
  array.data = std::move(kept);
  array.shape[shard.dimension] = block;
  return true;
}

bool tensorFromNpy(const kiln_tensor_signature_t &signature,
                   const std::string &where, const std::string &path,
                   const InputShard *shard, kiln_tensor_t **out,
                   std::string &error) {
  npy::Array array;
  // A bf16 input also reads the untyped '<V2' that numpy writes for
  // ml_dtypes.bfloat16 arrays, bit for bit.
  npy::ReadOptions options;
  bool bf16 = signature.dtype == KILN_DTYPE_BF16;
  if (bf16)
    options.untypedAs = ElementType::BF16;
  if (!npy::readNpyFile(path, array, error, options)) {
    error = where + ": " + error;
    return false;
  }
  npy::ElementType wanted = npyTypeFor(signature.dtype);
  if (array.type != wanted && !(bf16 && array.type == ElementType::BF16)) {
    error = where + ": '" + path + "' holds " + npy::descriptor(array.type) +
            " data but the input is " + kiln_dtype_name(signature.dtype) +
            " (expected " + npy::descriptor(wanted) +
            (bf16 ? ", or <V2 as numpy saves ml_dtypes.bfloat16" : "") + ")";
    return false;
  }
  std::string whole = formatShape(array.shape.size(), array.shape.data());
  if (shard && !keepShard(array, *shard, where, path, error))
    return false;
  bool sameShape = array.shape.size() == signature.rank;
  for (size_t i = 0; sameShape && i < signature.rank; ++i)
    sameShape = array.shape[i] == signature.shape[i];
  if (!sameShape) {
    error = where + ": '" + path + "' has shape " + whole;
    if (shard)
      error += ", whose blocks along dimension " +
               std::to_string(shard->dimension) + " over " +
               std::to_string(shard->size) + " ranks are " +
               formatShape(array.shape.size(), array.shape.data()) + ",";
    error += " but the input expects " +
             formatShape(signature.rank, signature.shape);
    return false;
  }
  if (bf16 && array.type != ElementType::BF16) {
    std::vector<uint8_t> narrowed(array.elementCount() * sizeof(uint16_t));
    for (size_t i = 0; i < array.elementCount(); ++i) {
      float value;
      std::memcpy(&value, array.data.data() + i * sizeof(float),
                  sizeof(value));
      uint16_t bits = floatToBfloat16(value);
      std::memcpy(narrowed.data() + i * sizeof(bits), &bits, sizeof(bits));
    }
    array.data = std::move(narrowed);
  }
  if (kiln_status_t status =
          kiln_tensor_create(signature.dtype, signature.rank, signature.shape,
                             array.data.data(), out)) {
    error = where + ": " + kiln_status_message(status);
    kiln_status_free(status);
    return false;
  }
  return true;
}

} // namespace

bool makeInput(const kiln_function_t *function, size_t index,
               const std::string &argument, kiln_tensor_t **out,
               std::string &error, const InputShard *shard) {
  const kiln_tensor_signature_t &signature =
      *kiln_function_input(function, index);
  std::string where = "input " + std::to_string(index);
  if (*signature.name)
    where += std::string(" ('") + signature.name + "')";

  if (shard && looksLikeLiteral(argument)) {
    FILE *probe = std::fopen(argument.c_str(), "rb");
    if (!probe) {
      error = where +
              " is split between ranks (--shard-input), so it needs "
              "a .npy file, not the literal '" +
              argument + "'";
      return false;
    }
    std::fclose(probe);
    return tensorFromNpy(signature, where, argument, shard, out, error);
  }
  if (signature.rank == 0 && looksLikeLiteral(argument)) {
    uint8_t element[8] = {};
    if (!parseLiteral(argument, signature.dtype, element, error)) {
      error = where + ": " + error;
      return false;
    }
    if (kiln_status_t status = kiln_tensor_create(signature.dtype, 0, nullptr,
                                                  element, out)) {
      error = where + ": " + kiln_status_message(status);
      kiln_status_free(status);
      return false;
    }
    return true;
  }
  if (signature.rank != 0 && looksLikeLiteral(argument)) {
    FILE *probe = std::fopen(argument.c_str(), "rb");
    if (!probe) {
      error = where + " is " +
              formatType(signature.dtype, signature.rank, signature.shape) +
              "; a literal ('" + argument +
              "') can only be given for a rank-0 input";
      return false;
    }
    std::fclose(probe);
  }
  return tensorFromNpy(signature, where, argument, shard, out, error);
}

} // namespace run
} // namespace kiln
