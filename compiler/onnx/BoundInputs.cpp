//===- BoundInputs.cpp - Graph inputs given values on the command line ----===//
//
// `--bind-input NAME=VALUE` and `--bind-input NAME=file.npy` make a graph
// input a compile-time constant. A literal is typed by the input's declared
// element type and shaped by its declared shape (one number for a rank-0
// input, a list for a rank-1 one); a .npy file carries its own type and
// shape, which must agree with the declaration. Either becomes the
// serialized TensorProto that OnnxImportOptions::boundInputs holds.
//
//===----------------------------------------------------------------------===//

#include "BoundInputs.h"

#include "kiln/ElementType.h"
#include "kiln/Npy.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// The ONNX data type of a kiln element type read from .npy.
int32_t onnxDataType(ElementType type) {
  return getElementTypeInfo(type).onnx;
}

/// The declared shape of `input`: empty optional where it has none or a dim
/// without a value.
std::optional<std::vector<int64_t>>
declaredShape(const onnx::ValueInfoProto &input) {
  if (!input.type().tensor_type().has_shape())
    return std::nullopt;
  std::vector<int64_t> shape;
  for (const auto &dim : input.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "a scalar";
  std::string text;
  for (int64_t d : shape)
    text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

/// Appends `number` to `tensor` as its data type stores it.
bool appendNumber(onnx::TensorProto &tensor, llvm::StringRef number,
                  std::string &error) {
  number = number.trim();
  int32_t type = tensor.data_type();
  bool isFloat = type == onnx::TensorProto::FLOAT ||
                 type == onnx::TensorProto::DOUBLE ||
                 type == onnx::TensorProto::FLOAT16 ||
                 type == onnx::TensorProto::BFLOAT16;
  if (isFloat) {
    double value;
    if (number.getAsDouble(value)) {
      error = "'" + number.str() + "' is not a number";
      return false;
    }
    switch (type) {
    case onnx::TensorProto::FLOAT:
      tensor.add_float_data(static_cast<float>(value));
      return true;
    case onnx::TensorProto::DOUBLE:
      tensor.add_double_data(value);
      return true;
    default: {
      // float16 and bfloat16 values travel as their bits in int32_data.
      llvm::APFloat half(value);
      bool lost;
      half.convert(type == onnx::TensorProto::FLOAT16
                       ? llvm::APFloat::IEEEhalf()
                       : llvm::APFloat::BFloat(),
                   llvm::APFloat::rmNearestTiesToEven, &lost);
      tensor.add_int32_data(
          static_cast<int32_t>(half.bitcastToAPInt().getZExtValue()));
      return true;
    }
    }
  }
  if (type == onnx::TensorProto::BOOL) {
    std::string lower = number.lower();
    if (lower == "true" || lower == "1") {
      tensor.add_int32_data(1);
      return true;
    }
    if (lower == "false" || lower == "0") {
      tensor.add_int32_data(0);
      return true;
    }
    error = "'" + number.str() + "' is not a bool (true, false, 1 or 0)";
    return false;
  }
  bool isUnsigned = type == onnx::TensorProto::UINT8 ||
                    type == onnx::TensorProto::UINT16 ||
                    type == onnx::TensorProto::UINT32 ||
                    type == onnx::TensorProto::UINT64;
  int64_t value = 0;
  uint64_t unsignedValue = 0;
  if (isUnsigned ? number.getAsInteger(10, unsignedValue)
                 : number.getAsInteger(10, value)) {
    error = "'" + number.str() + "' is not an integer" +
            (isUnsigned ? " of at least 0" : "");
    return false;
  }
  int bits = type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8
                 ? 8
             : type == onnx::TensorProto::INT16 ||
                     type == onnx::TensorProto::UINT16
                 ? 16
             : type == onnx::TensorProto::INT32 ||
                     type == onnx::TensorProto::UINT32
                 ? 32
                 : 64;
  bool fits = isUnsigned ? bits == 64 || unsignedValue >> bits == 0
                         : bits == 64 || (value >= -(int64_t(1) << (bits - 1)) &&
                                          value < (int64_t(1) << (bits - 1)));
  if (!fits) {
    error = "'" + number.str() + "' does not fit in " + std::to_string(bits) +
            " bits";
    return false;
  }
  switch (type) {
  case onnx::TensorProto::INT64:
    tensor.add_int64_data(value);
    return true;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    tensor.add_uint64_data(unsignedValue);
    return true;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::UINT16:
    tensor.add_int32_data(static_cast<int32_t>(unsignedValue));
    return true;
  default:
    tensor.add_int32_data(static_cast<int32_t>(value));
    return true;
  }
}

/// A literal list of numbers as a tensor of `input`'s type and shape.
bool literalTensor(const onnx::ValueInfoProto &input, llvm::StringRef text,
                   onnx::TensorProto &tensor, std::string &error) {
  tensor.set_data_type(input.type().tensor_type().elem_type());
  llvm::SmallVector<llvm::StringRef> numbers;
  text.split(numbers, ',');
  for (llvm::StringRef number : numbers)
    if (!appendNumber(tensor, number, error))
      return false;
  int64_t count = static_cast<int64_t>(numbers.size());
  std::optional<std::vector<int64_t>> shape = declaredShape(input);
  if (!shape) {
    // No declared shape: one number is a scalar, a list a vector.
    if (count != 1)
      tensor.add_dims(count);
    return true;
  }
  int64_t elements = 1;
  for (int64_t d : *shape)
    elements *= d;
  if (elements != count) {
    error = "the input is declared " + shapeText(*shape) + " (" +
            std::to_string(elements) + " values) but " +
            std::to_string(count) + " are given";
    return false;
  }
  for (int64_t d : *shape)
    tensor.add_dims(d);
  return true;
}

/// The array of a .npy file as a tensor.
bool npyTensor(const onnx::ValueInfoProto &input, const std::string &path,
               onnx::TensorProto &tensor, std::string &error) {
  npy::Array array;
  if (!npy::readNpyFile(path, array, error))
    return false;
  tensor.set_data_type(onnxDataType(array.type));
  for (int64_t d : array.shape)
    tensor.add_dims(d);
  tensor.set_raw_data(array.data.data(), array.data.size());
  std::optional<std::vector<int64_t>> shape = declaredShape(input);
  if (shape && *shape != array.shape) {
    error = path + " holds a " + shapeText(array.shape) +
            " array; the input is declared " + shapeText(*shape);
    return false;
  }
  return true;
}

} // namespace

bool kiln::parseOnnxBoundInput(llvm::StringRef spec, std::string &name,
                               std::string &value, std::string &error) {
  size_t eq = spec.find('=');
  if (eq == llvm::StringRef::npos || eq == 0 || eq + 1 == spec.size()) {
    error = "--bind-input '" + spec.str() +
            "' is not NAME=VALUE or NAME=FILE.npy (e.g. shape=1,3,224,224)";
    return false;
  }
  name = spec.take_front(eq).str();
  value = spec.drop_front(eq + 1).str();
  return true;
}

bool kiln::parseOnnxImportOptions(
    const std::vector<std::string> &inputShapeSpecs,
    const std::vector<std::string> &bindInputSpecs, OnnxImportOptions &options,
    std::string &error) {
  for (const std::string &spec : inputShapeSpecs) {
    std::string name;
    std::vector<int64_t> shape;
    if (!parseOnnxInputShape(spec, name, shape, error))
      return false;
    options.inputShapes[name] = shape;
  }
  for (const std::string &spec : bindInputSpecs) {
    std::string name, value;
    if (!parseOnnxBoundInput(spec, name, value, error))
      return false;
    options.boundInputValues[name] = value;
  }
  return true;
}

bool onnx_import::resolveBoundValues(
    const onnx::GraphProto &graph,
    const std::map<std::string, std::string> &values,
    std::map<std::string, std::string> &tensors, std::string &error) {
  for (const auto &entry : values) {
    const std::string &name = entry.first, &text = entry.second;
    auto it = std::find_if(
        graph.input().begin(), graph.input().end(),
        [&](const onnx::ValueInfoProto &v) { return v.name() == name; });
    if (it == graph.input().end()) {
      error = "--bind-input names '" + name +
              "', which is not an input of the graph";
      return false;
    }
    if (!it->type().has_tensor_type()) {
      error = "--bind-input names '" + name + "', which is not a tensor";
      return false;
    }
    onnx::TensorProto tensor;
    tensor.set_name(name);
    bool ok = llvm::StringRef(text).ends_with_insensitive(".npy")
                  ? npyTensor(*it, text, tensor, error)
                  : literalTensor(*it, text, tensor, error);
    if (!ok) {
      error = "--bind-input " + name + "=" + text + ": " + error;
      return false;
    }
    tensors[name] = tensor.SerializeAsString();
  }
  return true;
}
