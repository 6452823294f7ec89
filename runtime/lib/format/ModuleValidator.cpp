//===- ModuleValidator.cpp - Semantic checks on module contents ------------===//
//
// The FlatBuffers verifier only proves that a buffer can be read without
// going out of bounds. These checks prove that what was read makes sense, so
// that the loader and the call path can rely on it without re-checking.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

#include <cstring>
#include <limits>
#include <set>

namespace kiln {
namespace format {

namespace {

/// Names where in the module a tensor signature sits, e.g.
/// "function 'f' input 2 ('x')".
std::string describeTensor(const std::string &functionName, const char *role,
                           size_t index, const TensorSignature &tensor) {
  std::string where = "function '" + functionName + "' " + role + " " +
                      std::to_string(index);
  // The name is only quoted once it is known to be printable as a C string.
  if (!tensor.name.empty() && tensor.name.find('\0') == std::string::npos)
    where += " ('" + tensor.name + "')";
  return where;
}

bool validateTensor(const std::string &functionName, const char *role,
                    size_t index, const TensorSignature &tensor,
                    std::string &error) {
  std::string where = describeTensor(functionName, role, index, tensor);
  if (tensor.name.find('\0') != std::string::npos) {
    error = where + ": name contains a NUL character";
    return false;
  }
  if (!isValidDType(tensor.dtype)) {
    error = where + ": unknown dtype " +
            std::to_string(static_cast<int>(static_cast<int8_t>(tensor.dtype)));
    return false;
  }
  // Byte sizes are kept within int64_t so that every consumer can compute
  // sizes and offsets in either signed or unsigned arithmetic.
  const uint64_t limit = std::numeric_limits<int64_t>::max();
  uint64_t bytes = dtypeSize(tensor.dtype);
  for (size_t axis = 0; axis < tensor.shape.size(); ++axis) {
    int64_t dim = tensor.shape[axis];
    if (dim < 0) {
      error = where + ": negative dimension " + std::to_string(dim) +
              " (axis " + std::to_string(axis) + ")";
      return false;
    }
    if (dim != 0 && bytes > limit / static_cast<uint64_t>(dim)) {
      error = where + ": size of the shape overflows (axis " +
              std::to_string(axis) + " has dimension " + std::to_string(dim) +
              ")";
      return false;
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  return true;
}

/// An output written into a donated input's buffer must have exactly that
/// input's dtype and shape, and no two outputs may share one input.
bool validateTies(const FunctionSignature &function, std::string &error) {
  for (size_t j = 0; j < function.inputs.size(); ++j)
    if (function.inputs[j].tiedInput != -1) {
      error = describeTensor(function.name, "input", j, function.inputs[j]) +
              ": an input cannot be tied to an input (tied_input " +
              std::to_string(function.inputs[j].tiedInput) + ")";
      return false;
    }
  std::set<int64_t> donated;
  for (size_t j = 0; j < function.outputs.size(); ++j) {
    const TensorSignature &output = function.outputs[j];
    if (output.tiedInput == -1)
      continue;
    std::string where = describeTensor(function.name, "output", j, output);
    if (output.tiedInput < 0 ||
        output.tiedInput >= static_cast<int64_t>(function.inputs.size())) {
      error = where + ": tied to input " + std::to_string(output.tiedInput) +
              " but the function has " +
              std::to_string(function.inputs.size()) + " inputs";
      return false;
    }
    const TensorSignature &input = function.inputs[output.tiedInput];
    if (input.dtype != output.dtype || input.shape != output.shape) {
      error = where + ": tied to input " + std::to_string(output.tiedInput) +
              ", whose dtype or shape differs";
      return false;
    }
    if (!donated.insert(output.tiedInput).second) {
      error = where + ": input " + std::to_string(output.tiedInput) +
              " is tied to two outputs";
      return false;
    }
  }
  return true;
}

} // namespace

bool validateModule(const ModuleContents &contents, std::string &error) {
  if (contents.functions.empty()) {
    error = "module defines no functions";
    return false;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < contents.functions.size(); ++i) {
    const FunctionSignature &function = contents.functions[i];
    std::string where = "function #" + std::to_string(i);
    if (function.name.empty()) {
      error = where + ": empty name";
      return false;
    }
    if (function.name.find('\0') != std::string::npos) {
      error = where + ": name contains a NUL character";
      return false;
    }
    where = "function '" + function.name + "'";
    if (!seen.insert(function.name).second) {
      error = where + ": duplicate function name";
      return false;
    }
    if (function.entrySymbol.empty()) {
      error = where + ": empty entry symbol";
      return false;
    }
    if (function.entrySymbol.find('\0') != std::string::npos) {
      error = where + ": entry symbol contains a NUL character";
      return false;
    }
    for (size_t j = 0; j < function.inputs.size(); ++j)
      if (!validateTensor(function.name, "input", j, function.inputs[j],
                          error))
        return false;
    for (size_t j = 0; j < function.outputs.size(); ++j)
      if (!validateTensor(function.name, "output", j, function.outputs[j],
                          error))
        return false;
    if (!validateTies(function, error))
      return false;
  }
  if (contents.code.empty()) {
    error = "module has no code";
    return false;
  }
  static const uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (contents.code.size() < sizeof(kElfMagic) ||
      std::memcmp(contents.code.data(), kElfMagic, sizeof(kElfMagic)) != 0) {
    error = "module code is not an ELF object (bad magic)";
    return false;
  }
  return true;
}

} // namespace format
} // namespace kiln
