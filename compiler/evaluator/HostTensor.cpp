//===- HostTensor.cpp - Dense tensors in host memory ----------------------===//
//
// Rounding to the narrow float formats, and conversion between HostTensor
// and the native byte layout. The element types themselves and their MLIR
// types come from kiln/IR/ElementTypes.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/HostTensor.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <cstring>

using namespace kiln;

/// 2^exponent, for exponents in the normal double range.
static double powerOfTwo(int exponent) {
  uint64_t bits = static_cast<uint64_t>(exponent + 1023) << 52;
  double result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

/// Rounds `value` to a binary format with `precision` significand bits
/// (counting the implicit one) and exponent range [minExponent,
/// maxExponent]. Scaling by a power of two is exact, so rounding the scaled
/// value to an integer (ties to even, the default rounding mode) rounds to
/// the format's spacing at that magnitude in a single step; subnormals share
/// the spacing of the smallest normal binade. This is the hot path of f16 and
/// bf16 arithmetic, hence the bit-level exponent extraction.
static double roundToBinaryFormat(double value, int precision, int minExponent,
                                  int maxExponent) {
  if (!std::isfinite(value) || value == 0.0)
    return value;
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  // Double subnormals give -1023 here, far below any minExponent we use.
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  int quantumExponent = std::max(exponent, minExponent) - (precision - 1);
  double rounded = std::rint(value * powerOfTwo(-quantumExponent)) *
                   powerOfTwo(quantumExponent);
  if (std::fabs(rounded) >= powerOfTwo(maxExponent + 1))
    return std::copysign(HUGE_VAL, value);
  return rounded;
}

double kiln::roundToFloat(ElementKind kind, double value) {
  switch (kind) {
  case ElementKind::F16:
    return roundToBinaryFormat(value, 11, -14, 15);
  case ElementKind::BF16:
    return roundToBinaryFormat(value, 8, -126, 127);
  case ElementKind::F32:
    return static_cast<double>(static_cast<float>(value));
  default:
    return value;
  }
}

int64_t kiln::wrapToInt(ElementKind kind, int64_t value) {
  switch (kind) {
  case ElementKind::I1:
    return value != 0;
  case ElementKind::I8:
    return static_cast<int8_t>(static_cast<uint64_t>(value));
  case ElementKind::I16:
    return static_cast<int16_t>(static_cast<uint64_t>(value));
  case ElementKind::I32:
    return static_cast<int32_t>(
        static_cast<uint32_t>(static_cast<uint64_t>(value)));
  case ElementKind::UI8:
    return static_cast<uint8_t>(static_cast<uint64_t>(value));
  case ElementKind::UI16:
    return static_cast<uint16_t>(static_cast<uint64_t>(value));
  case ElementKind::UI32:
    return static_cast<uint32_t>(static_cast<uint64_t>(value));
  default:
    return value;
  }
}

std::vector<int64_t> kiln::computeStrides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

int64_t kiln::computeNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor::HostTensor(mlir::Type elementType, llvm::ArrayRef<int64_t> shape)
    : elementType(elementType), shape(shape.begin(), shape.end()) {
  assert(classifyElementType(elementType) && "unsupported element type");
  if (isFloat())
    f.assign(numElements(), 0.0);
  else
    i.assign(numElements(), 0);
}

HostTensor HostTensor::fromFloats(mlir::Type elementType,
                                  llvm::ArrayRef<int64_t> shape,
                                  llvm::ArrayRef<double> values) {
  HostTensor tensor(elementType, shape);
  assert(tensor.isFloat() && "fromFloats needs a float element type");
  assert(static_cast<int64_t>(values.size()) == tensor.numElements() &&
         "one value per element");
  ElementKind kind = tensor.kind();
  for (auto [index, value] : llvm::enumerate(values))
    tensor.f[index] = roundToFloat(kind, value);
  return tensor;
}

HostTensor HostTensor::fromInts(mlir::Type elementType,
                                llvm::ArrayRef<int64_t> shape,
                                llvm::ArrayRef<int64_t> values) {
  HostTensor tensor(elementType, shape);
  assert(!tensor.isFloat() && "fromInts needs an integer element type");
  assert(static_cast<int64_t>(values.size()) == tensor.numElements() &&
         "one value per element");
  ElementKind kind = tensor.kind();
  for (auto [index, value] : llvm::enumerate(values))
    tensor.i[index] = wrapToInt(kind, value);
  return tensor;
}

/// The 16-bit pattern of `value`, which is already representable in the
/// 16-bit format `semantics`.
static uint16_t encode16(const llvm::fltSemantics &semantics, double value) {
  llvm::APFloat apValue(value);
  bool losesInfo;
  apValue.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(apValue.bitcastToAPInt().getZExtValue());
}

static double decode16(const llvm::fltSemantics &semantics, uint16_t bits) {
  return llvm::APFloat(semantics, llvm::APInt(16, bits)).convertToDouble();
}

template <typename T>
static T loadUnaligned(const char *bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

template <typename T>
static void storeUnaligned(char *bytes, T value) {
  std::memcpy(bytes, &value, sizeof(T));
}

HostTensor HostTensor::fromBytes(mlir::Type elementType,
                                 llvm::ArrayRef<int64_t> shape,
                                 const void *data) {
  HostTensor tensor(elementType, shape);
  ElementKind kind = tensor.kind();
  const char *bytes = static_cast<const char *>(data);
  int64_t width = elementByteSize(kind);
  for (int64_t n = 0, e = tensor.numElements(); n < e; ++n) {
    const char *element = bytes + n * width;
    switch (kind) {
    case ElementKind::F16:
      tensor.f[n] = decode16(llvm::APFloat::IEEEhalf(),
                             loadUnaligned<uint16_t>(element));
      break;
    case ElementKind::BF16:
      tensor.f[n] = decode16(llvm::APFloat::BFloat(),
                             loadUnaligned<uint16_t>(element));
      break;
    case ElementKind::F32:
      tensor.f[n] = loadUnaligned<float>(element);
      break;
    case ElementKind::F64:
      tensor.f[n] = loadUnaligned<double>(element);
      break;
    case ElementKind::I1:
      tensor.i[n] = loadUnaligned<uint8_t>(element) != 0;
      break;
    case ElementKind::I32:
      tensor.i[n] = loadUnaligned<int32_t>(element);
      break;
    case ElementKind::I64:
    case ElementKind::UI64:
      tensor.i[n] = loadUnaligned<int64_t>(element);
      break;
    case ElementKind::I8:
      tensor.i[n] = loadUnaligned<int8_t>(element);
      break;
    case ElementKind::I16:
      tensor.i[n] = loadUnaligned<int16_t>(element);
      break;
    case ElementKind::UI8:
      tensor.i[n] = loadUnaligned<uint8_t>(element);
      break;
    case ElementKind::UI16:
      tensor.i[n] = loadUnaligned<uint16_t>(element);
      break;
    case ElementKind::UI32:
      tensor.i[n] = loadUnaligned<uint32_t>(element);
      break;
    }
  }
  return tensor;
}

void HostTensor::toBytes(void *data) const {
  ElementKind elementKind = kind();
  char *bytes = static_cast<char *>(data);
  int64_t width = elementByteSize(elementKind);
  for (int64_t n = 0, e = numElements(); n < e; ++n) {
    char *element = bytes + n * width;
    switch (elementKind) {
    case ElementKind::F16:
      storeUnaligned(element, encode16(llvm::APFloat::IEEEhalf(), f[n]));
      break;
    case ElementKind::BF16:
      storeUnaligned(element, encode16(llvm::APFloat::BFloat(), f[n]));
      break;
    case ElementKind::F32:
      storeUnaligned(element, static_cast<float>(f[n]));
      break;
    case ElementKind::F64:
      storeUnaligned(element, f[n]);
      break;
    case ElementKind::I1:
      storeUnaligned(element, static_cast<uint8_t>(i[n] != 0));
      break;
    case ElementKind::I32:
      storeUnaligned(element, static_cast<int32_t>(i[n]));
      break;
    case ElementKind::I64:
    case ElementKind::UI64:
      storeUnaligned(element, i[n]);
      break;
    case ElementKind::I8:
    case ElementKind::UI8:
      storeUnaligned(element, static_cast<uint8_t>(i[n]));
      break;
    case ElementKind::I16:
    case ElementKind::UI16:
      storeUnaligned(element, static_cast<uint16_t>(i[n]));
      break;
    case ElementKind::UI32:
      storeUnaligned(element, static_cast<uint32_t>(i[n]));
      break;
    }
  }
}

int64_t HostTensor::numElements() const { return computeNumElements(shape); }

int64_t HostTensor::byteSize() const {
  return numElements() * elementByteSize(kind());
}

ElementKind HostTensor::kind() const {
  std::optional<ElementKind> elementKind = classifyElementType(elementType);
  assert(elementKind && "unsupported element type");
  return *elementKind;
}

bool HostTensor::isFloat() const { return isFloatKind(kind()); }

mlir::RankedTensorType HostTensor::getType() const {
  return mlir::RankedTensorType::get(shape, elementType);
}

double HostTensor::getAsDouble(int64_t index) const {
  if (isFloat())
    return f[index];
  if (kind() == ElementKind::UI64)
    return static_cast<double>(static_cast<uint64_t>(i[index]));
  return static_cast<double>(i[index]);
}

std::string HostTensor::toString() const {
  constexpr int64_t maxPrinted = 64;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!classifyElementType(elementType))
    return "<HostTensor without a supported element type>";
  os << getType() << " [";
  int64_t count = isFloat() ? static_cast<int64_t>(f.size())
                            : static_cast<int64_t>(i.size());
  for (int64_t n = 0; n < count && n < maxPrinted; ++n) {
    if (n)
      os << ", ";
    // Enough digits to read the value back exactly.
    if (isFloat())
      os << llvm::format(kind() == ElementKind::F64 ? "%.17g" : "%.9g", f[n]);
    else if (kind() == ElementKind::UI64)
      os << static_cast<uint64_t>(i[n]);
    else
      os << i[n];
  }
  if (count > maxPrinted)
    os << ", ... (" << count << " elements)";
  os << "]";
  return text;
}
