//===- TensorDecoding.cpp - ONNX tensors to attributes --------------------===//
//
// TensorProto's encodings (typed fields, raw little-endian bytes, external
// data, packed 4-bit and float8 values) to DenseElementsAttr, and ONNX's
// element types to kiln's.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "Emit.h"
#include "OnnxModel.h"

#include "kiln/IR/ElementTypes.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>

using namespace mlir;
using ::kiln::onnx_import::Importer;
using ::kiln::onnx_import::typeString;

namespace {

/// ONNX's name of a data type in lower case ("float", "float8e4m3fn"), or
/// "undefined" for a number that is none.
std::string dataTypeName(int32_t type) {
  if (!onnx::TensorProto_DataType_IsValid(type) ||
      type == onnx::TensorProto::UNDEFINED)
    return "undefined";
  return llvm::StringRef(onnx::TensorProto_DataType_Name(
                             static_cast<onnx::TensorProto_DataType>(type)))
      .lower();
}

/// The element types kiln takes from ONNX, by ONNX's names in ONNX's
/// order: "float, uint8, ... and bfloat16".
std::string supportedDataTypeNames() {
  std::vector<int32_t> codes;
  for (const ::kiln::ElementTypeInfo &info : ::kiln::kElementTypes)
    if (info.onnx)
      codes.push_back(info.onnx);
  std::sort(codes.begin(), codes.end());
  std::string names;
  for (size_t i = 0; i < codes.size(); ++i)
    names += (i == 0 ? "" : i + 1 == codes.size() ? " and " : ", ") +
             dataTypeName(codes[i]);
  return names;
}

} // namespace

FailureOr<Type> Importer::convertElementType(int32_t dataType,
                                             const llvm::Twine &what) {
  for (const ::kiln::ElementTypeInfo &info : ::kiln::kElementTypes)
    if (info.onnx && info.onnx == dataType)
      return ::kiln::getMlirElementType(info.type, &context);
  return fail(what + " has element type " + dataTypeName(dataType) +
              ", which kiln does not support (it has " +
              supportedDataTypeNames() + ")");
}

/// The floating-point format of an ONNX float8 or float4 type, or null.
const llvm::fltSemantics *narrowFloatSemantics(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT8E4M3FN:
    return &llvm::APFloat::Float8E4M3FN();
  case onnx::TensorProto::FLOAT8E4M3FNUZ:
    return &llvm::APFloat::Float8E4M3FNUZ();
  case onnx::TensorProto::FLOAT8E5M2:
    return &llvm::APFloat::Float8E5M2();
  case onnx::TensorProto::FLOAT8E5M2FNUZ:
    return &llvm::APFloat::Float8E5M2FNUZ();
  case onnx::TensorProto::FLOAT4E2M1:
    return &llvm::APFloat::Float4E2M1FN();
  default:
    return nullptr;
  }
}

FailureOr<DenseElementsAttr>
Importer::convertNarrowTensor(const onnx::TensorProto &tensor,
                              llvm::ArrayRef<int64_t> shape, int64_t count,
                              const llvm::Twine &what) {
  int32_t dataType = tensor.data_type();
  const llvm::fltSemantics *semantics = narrowFloatSemantics(dataType);
  unsigned bits = dataType == onnx::TensorProto::UINT4 ||
                          dataType == onnx::TensorProto::INT4 ||
                          dataType == onnx::TensorProto::FLOAT4E2M1
                      ? 4
                      : 8;
  // Raw data packs 8 / bits elements per byte, the first in the low bits;
  // int32_data holds one such byte per entry.
  int64_t perByte = 8 / bits, bytes = (count + perByte - 1) / perByte;
  SmallVector<uint8_t> packed;
  if (tensor.has_raw_data()) {
    for (char c : tensor.raw_data())
      packed.push_back(static_cast<uint8_t>(c));
  } else {
    for (int32_t v : tensor.int32_data())
      packed.push_back(static_cast<uint8_t>(v));
  }
  if (static_cast<int64_t>(packed.size()) != bytes)
    return fail(what + " holds " + llvm::Twine(packed.size()) +
                " bytes of data, but its " + llvm::Twine(count) + " " +
                dataTypeName(dataType) + " values need " +
                llvm::Twine(bytes));
  auto element = [&](int64_t i) -> uint8_t {
    uint8_t byte = packed[i / perByte];
    return bits == 8 ? byte : (i % 2 ? byte >> 4 : byte & 0xF);
  };
  if (semantics) {
    SmallVector<float> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(
          llvm::APFloat(*semantics, llvm::APInt(bits, element(i)))
              .convertToFloat());
    return DenseElementsAttr::get(
        RankedTensorType::get(shape, builder.getF32Type()),
        llvm::ArrayRef<float>(values));
  }
  bool isSigned = dataType == onnx::TensorProto::INT4;
  SmallVector<llvm::APInt> values;
  for (int64_t i = 0; i < count; ++i) {
    llvm::APInt v(4, element(i));
    values.push_back(isSigned ? v.sext(8) : v.zext(8));
  }
  Type type = IntegerType::get(&context, 8,
                               isSigned ? IntegerType::Signless
                                        : IntegerType::Unsigned);
  return DenseElementsAttr::get(RankedTensorType::get(shape, type), values);
}

FailureOr<DenseElementsAttr>
Importer::convertTensor(const onnx::TensorProto &tensor,
                        const llvm::Twine &what) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return fail(what + " keeps its data in an external file that was not "
                       "read");
  int32_t dataType = tensor.data_type();
  bool narrow = narrowFloatSemantics(dataType) ||
                dataType == onnx::TensorProto::UINT4 ||
                dataType == onnx::TensorProto::INT4;
  FailureOr<Type> element = Type();
  if (!narrow)
    element = convertElementType(dataType, what);
  if (failed(element))
    return failure();
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return fail(what + " has a negative dim");
    if (dim && count > (int64_t(1) << 40) / dim)
      return fail(what + " has too many elements");
    shape.push_back(dim);
    count *= dim;
  }
  if (narrow)
    return convertNarrowTensor(tensor, shape, count, what);
  auto type = RankedTensorType::get(shape, *element);
  int64_t elementBytes =
      element->isInteger(1) ? 1 : element->getIntOrFloatBitWidth() / 8;
  bool raw = tensor.has_raw_data();
  if (raw && static_cast<int64_t>(tensor.raw_data().size()) !=
                 count * elementBytes)
    return fail(what + " holds " + llvm::Twine(tensor.raw_data().size()) +
                " bytes of data, but its shape " + typeString(type) +
                " needs " + llvm::Twine(count * elementBytes));
  auto fieldSize = [&](int size) -> LogicalResult {
    if (size != count)
      return fail(what + " holds " + llvm::Twine(size) +
                  " values, but its shape " + typeString(type) + " needs " +
                  llvm::Twine(count));
    return success();
  };
  const std::string &bytes = tensor.raw_data();
  // Raw little-endian bytes of whole-byte elements are the attribute's own
  // storage: copied once, straight from the message (a transformer's
  // weights are hundreds of megabytes).
  if (raw && !element->isInteger(1))
    return DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(bytes.data(), bytes.size()));
  switch (dataType) {
  case onnx::TensorProto::FLOAT: {
    if (failed(fieldSize(tensor.float_data_size())))
      return failure();
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<float>(tensor.float_data().data(), count));
  }
  case onnx::TensorProto::DOUBLE: {
    if (failed(fieldSize(tensor.double_data_size())))
      return failure();
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<double>(tensor.double_data().data(), count));
  }
  case onnx::TensorProto::INT32: {
    if (failed(fieldSize(tensor.int32_data_size())))
      return failure();
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<int32_t>(tensor.int32_data().data(), count));
  }
  case onnx::TensorProto::INT64: {
    if (failed(fieldSize(tensor.int64_data_size())))
      return failure();
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<int64_t>(tensor.int64_data().data(), count));
  }
  case onnx::TensorProto::BOOL: {
    SmallVector<bool> values;
    if (raw) {
      for (char c : bytes)
        values.push_back(c != 0);
    } else if (succeeded(fieldSize(tensor.int32_data_size()))) {
      for (int32_t v : tensor.int32_data())
        values.push_back(v != 0);
    } else {
      return failure();
    }
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: {
    // One value per field: the 8- and 16-bit types in int32_data, uint32
    // and uint64 in uint64_data (onnx.proto).
    unsigned width = element->getIntOrFloatBitWidth();
    SmallVector<APInt> values;
    if (width <= 16) {
      if (failed(fieldSize(tensor.int32_data_size())))
        return failure();
      for (int32_t v : tensor.int32_data())
        values.push_back(APInt(32, static_cast<uint32_t>(v)).trunc(width));
    } else {
      if (failed(fieldSize(tensor.uint64_data_size())))
        return failure();
      for (uint64_t v : tensor.uint64_data())
        values.push_back(APInt(64, v).trunc(width));
    }
    return DenseElementsAttr::get(type, values);
  }
  default: {
    // float16 and bfloat16: 16-bit patterns, one per int32 field.
    if (failed(fieldSize(tensor.int32_data_size())))
      return failure();
    const llvm::fltSemantics &semantics =
        llvm::cast<FloatType>(*element).getFloatSemantics();
    SmallVector<APFloat> values;
    for (int32_t v : tensor.int32_data())
      values.emplace_back(semantics, APInt(16, static_cast<uint16_t>(v)));
    return DenseElementsAttr::get(type, values);
  }
  }
}

DenseElementsAttr (::kiln::readOnnxTensor)(llvm::StringRef bytes,
                                       MLIRContext &context, std::string &name,
                                       std::string &error) {
  onnx::TensorProto tensor;
  if (bytes.size() >= (size_t(1) << 31) ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX tensor: the protobuf data is truncated or "
            "corrupted";
    return {};
  }
  name = tensor.name();
  onnx::ModelProto none;
  Importer importer(context, none, "");
  FailureOr<DenseElementsAttr> attr =
      importer.convertTensor(tensor, "tensor '" + tensor.name() + "'");
  if (failed(attr)) {
    error = importer.error;
    return {};
  }
  return *attr;
}
