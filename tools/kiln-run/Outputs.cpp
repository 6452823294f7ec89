//===- Outputs.cpp - Saving function outputs -------------------------------===//

#include "Outputs.h"

#include "kiln/HalfFloat.h"
#include "kiln/Npy.h"

#include <cerrno>
#include <cstring>
#include <set>
#include <sys/stat.h>

namespace kiln {
namespace run {

namespace {

bool isPlainFileName(const std::string &name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 200)
    return false;
  for (char c : name) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!allowed)
      return false;
  }
  return true;
}

} // namespace

std::string outputDisplayName(const kiln_function_t *function, size_t index) {
  const char *name = kiln_function_output(function, index)->name;
  return *name ? name : "out" + std::to_string(index);
}

std::vector<std::string> outputFileStems(const kiln_function_t *function) {
  size_t count = kiln_function_output_count(function);
  std::vector<std::string> stems;
  std::set<std::string> used;
  // Fallback names are reserved first so that a signature name such as
  // "out1" cannot take the place of the unnamed output 1.
  std::vector<bool> usable(count);
  for (size_t i = 0; i < count; ++i) {
    usable[i] = isPlainFileName(kiln_function_output(function, i)->name);
    if (!usable[i])
      used.insert("out" + std::to_string(i));
  }
  for (size_t i = 0; i < count; ++i) {
    std::string name = kiln_function_output(function, i)->name;
    if (usable[i] && used.insert(name).second) {
      stems.push_back(name);
      continue;
    }
    // A clash among fallbacks is resolved by appending underscores.
    std::string fallback = "out" + std::to_string(i);
    if (usable[i])
      while (!used.insert(fallback).second)
        fallback += "_";
    stems.push_back(fallback);
  }
  return stems;
}

bool saveTensor(const std::string &path, kiln_tensor_t *tensor,
                std::string &error) {
  npy::Array array;
  const auto *data = static_cast<const uint8_t *>(kiln_tensor_data(tensor));
  size_t count = kiln_tensor_element_count(tensor);
  array.shape.assign(kiln_tensor_shape(tensor),
                     kiln_tensor_shape(tensor) + kiln_tensor_rank(tensor));
  kiln_dtype_t dtype = kiln_tensor_dtype(tensor);
  // The .npy type that carries the dtype: itself, or f32 for bf16.
  array.type = getElementTypeInfo(static_cast<ElementType>(dtype)).npyCarrier;
  if (dtype == KILN_DTYPE_BF16) {
    array.data.resize(count * sizeof(float));
    for (size_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, data + i * sizeof(bits), sizeof(bits));
      float value = bfloat16ToFloat(bits);
      std::memcpy(array.data.data() + i * sizeof(value), &value,
                  sizeof(value));
    }
    return npy::writeNpyFile(path, array, error);
  }
  array.data.assign(data, data + kiln_tensor_byte_size(tensor));
  return npy::writeNpyFile(path, array, error);
}

bool ensureDirectory(const std::string &directory, std::string &error) {
  struct stat info;
  if (::stat(directory.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      return true;
    error = "'" + directory + "' exists and is not a directory";
    return false;
  }
  if (::mkdir(directory.c_str(), 0777) != 0) {
    // Another process (a rank of the same run) may have made it meanwhile.
    int reason = errno;
    if (reason == EEXIST && ::stat(directory.c_str(), &info) == 0 &&
        S_ISDIR(info.st_mode))
      return true;
    error =
        "cannot create directory '" + directory + "': " + std::strerror(reason);
    return false;
  }
  return true;
}

} // namespace run
} // namespace kiln
