//===- PluginSupport.h - Shared by the CUDA library plug-ins ----*- C++ -*-===//
//
// Small helpers of the plug-ins over NVIDIA's libraries (cublaslt/,
// cudnn/): their failure messages, the pointer alignments their plans are
// keyed on, and the library's version for describe(). Header-only: each
// plug-in is a shared object of its own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_PLUGINSUPPORT_H
#define KILN_RUNTIME_LIB_CUDA_PLUGINSUPPORT_H

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace kiln {
namespace cuda_plugin {

/// Writes a printf-style message into error[0 .. errorSize - 1], truncated
/// and NUL-terminated, and returns the failure code.
__attribute__((format(printf, 3, 4))) inline int
fail(char *error, size_t errorSize, const char *format, ...) {
  if (error && errorSize) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(error, errorSize, format, args);
    va_end(args);
  }
  return 1;
}

/// The largest power of two up to 256 that divides `pointer`'s address:
/// what the libraries choose kernels by.
inline uint32_t alignmentOf(const void *pointer) {
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment)
    alignment /= 2;
  return alignment;
}

/// "NAME major.minor.patch" for a version numbered major * 10000 + minor *
/// 100 + patch, as cuBLASLt and cuDNN 9 number theirs.
inline std::string libraryVersion(const char *name, size_t version) {
  return std::string(name) + " " + std::to_string(version / 10000) + "." +
         std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

} // namespace cuda_plugin
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_PLUGINSUPPORT_H
