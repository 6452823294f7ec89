//===- NativeLibrary.h - Loading code objects from memory -------*- C++ -*-===//
//
// A module carries its code as the bytes of an ELF shared object. The system
// loader only loads files, so the bytes are given a file - anonymous where
// possible - and dlopen'ed from there.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_API_NATIVELIBRARY_H
#define KILN_RUNTIME_LIB_API_NATIVELIBRARY_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

struct link_map;

namespace kiln {
namespace runtime {

/// A shared object loaded from memory. Unloaded on destruction.
class NativeLibrary {
public:
  /// Loads the ELF shared object in [image, image + size). Returns NULL and
  /// sets \p out on success.
  static kiln_status_t load(const uint8_t *image, size_t size,
                            std::unique_ptr<NativeLibrary> &out);

  NativeLibrary(const NativeLibrary &) = delete;
  NativeLibrary &operator=(const NativeLibrary &) = delete;
  ~NativeLibrary();

  /// Returns the address of the function \p symbol defined by this library
  /// itself (not by one of its dependencies), or NULL with the reason in
  /// \p error.
  void *lookupFunction(const std::string &symbol, std::string &error) const;

  /// Returns the address of the data object \p symbol defined by this
  /// library itself, or NULL with the reason in \p error; its size in
  /// bytes goes to \p size where that is not NULL.
  void *lookupObject(const std::string &symbol, std::string &error,
                     size_t *size = nullptr) const;

private:
  /// The address of \p symbol if this library defines it with ELF symbol
  /// type \p type (STT_FUNC also accepts STT_GNU_IFUNC).
  void *lookup(const std::string &symbol, unsigned char type,
               std::string &error, size_t *size = nullptr) const;

  NativeLibrary(void *handle, struct link_map *linkMap, int fd,
                std::string path)
      : handle(handle), linkMap(linkMap), fd(fd), path(std::move(path)) {}

  void *handle;
  struct link_map *linkMap;
  /// The memfd backing the library, kept open while the library is loaded;
  /// -1 when it was loaded from a temporary file.
  int fd;
  std::string path;
};

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_NATIVELIBRARY_H
