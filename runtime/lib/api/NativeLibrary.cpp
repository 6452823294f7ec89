//===- NativeLibrary.cpp - Loading code objects from memory ----------------===//
//
// The preferred route is an anonymous memfd opened through /proc/self/fd;
// when memfds or /proc are unavailable (or mapping a memfd executable is
// forbidden), the bytes go to an unlinked temporary file instead.
//
// glibc recognizes an already loaded library by its path before it looks at
// the file itself. Two memfds can share a /proc/self/fd path only if the
// first descriptor was closed, so each memfd stays open for as long as its
// library is loaded, and forever if dlclose leaves the library resident.
//
//===----------------------------------------------------------------------===//

#include "NativeLibrary.h"
#include "Status.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace kiln {
namespace runtime {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char *kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char *kHostMachineName = "AArch64";
#else
#error "the kiln runtime supports x86-64 and AArch64 hosts"
#endif

/// Rejects code the loader could only fail on obscurely: anything but a
/// 64-bit little-endian shared object for this machine.
bool checkElfHeader(const uint8_t *image, size_t size, std::string &error) {
  Elf64_Ehdr header;
  if (size < sizeof(header)) {
    error = "module code is too small (" + std::to_string(size) +
            " bytes) to be an ELF shared object";
    return false;
  }
  std::memcpy(&header, image, sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    error = "module code is not an ELF object (bad magic)";
    return false;
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB) {
    error = "module code is not a 64-bit little-endian ELF object";
    return false;
  }
  if (header.e_type != ET_DYN) {
    error = "module code is not an ELF shared object (e_type " +
            std::to_string(header.e_type) + ")";
    return false;
  }
  if (header.e_machine != kHostMachine) {
    error = "module code is for ELF machine " +
            std::to_string(header.e_machine) + " but this host is " +
            kHostMachineName + " (" + std::to_string(kHostMachine) + ")";
    return false;
  }
  return true;
}

/// Compiled code may call libm, but nothing guarantees that the host
/// executable links it (linkers drop unused libraries). Loading it into the
/// global scope once makes those references resolvable everywhere. A failure
/// is not reported here: dlopen then names the unresolved symbol.
void makeLibmGlobal() {
  static std::once_flag once;
  std::call_once(once, [] { dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL); });
}

/// The DT_NEEDED entries of a shared object image whose header passed
/// checkElfHeader. Malformed tables give fewer names, never a read outside
/// the image.
std::vector<std::string> neededLibraries(const uint8_t *image, size_t size) {
  std::vector<std::string> names;
  Elf64_Ehdr header;
  std::memcpy(&header, image, sizeof(header));
  auto inImage = [&](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !inImage(header.e_phoff, uint64_t(header.e_phnum) * sizeof(Elf64_Phdr)))
    return names;
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  std::memcpy(segments.data(), image + header.e_phoff,
              segments.size() * sizeof(Elf64_Phdr));
  // The string table is named by its address; find its bytes in the file.
  auto fileOffset = [&](uint64_t address, uint64_t &offset) {
    for (const Elf64_Phdr &segment : segments)
      if (segment.p_type == PT_LOAD && address >= segment.p_vaddr &&
          address - segment.p_vaddr < segment.p_filesz) {
        offset = segment.p_offset + (address - segment.p_vaddr);
        return true;
      }
    return false;
  };
  for (const Elf64_Phdr &segment : segments) {
    if (segment.p_type != PT_DYNAMIC ||
        !inImage(segment.p_offset, segment.p_filesz))
      continue;
    std::vector<Elf64_Dyn> entries(segment.p_filesz / sizeof(Elf64_Dyn));
    std::memcpy(entries.data(), image + segment.p_offset,
                entries.size() * sizeof(Elf64_Dyn));
    uint64_t strtab = 0, strsz = 0;
    for (const Elf64_Dyn &entry : entries) {
      if (entry.d_tag == DT_STRTAB)
        strtab = entry.d_un.d_ptr;
      else if (entry.d_tag == DT_STRSZ)
        strsz = entry.d_un.d_val;
    }
    uint64_t tableOffset = 0;
    if (!fileOffset(strtab, tableOffset) || !inImage(tableOffset, strsz))
      return names;
    const char *table = reinterpret_cast<const char *>(image + tableOffset);
    for (const Elf64_Dyn &entry : entries)
      if (entry.d_tag == DT_NEEDED && entry.d_un.d_val < strsz)
        names.emplace_back(table + entry.d_un.d_val,
                           strnlen(table + entry.d_un.d_val,
                                   strsz - entry.d_un.d_val));
  }
  return names;
}

/// Libraries a module depends on, such as the OpenMP runtime or oneDNN,
/// keep worker threads alive after a call returns. Unloading them together
/// with the module would leave those threads running unmapped code (a crash
/// at the next wake-up or at exit), so they stay resident for the life of
/// the process; the module itself can still be unloaded.
void pinDependencies(const uint8_t *image, size_t size) {
  for (const std::string &name : neededLibraries(image, size))
    if (void *handle = dlopen(name.c_str(),
                              RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE))
      dlclose(handle);
}

bool writeAll(int fd, const uint8_t *data, size_t size) {
  while (size != 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

std::string lastDlError() {
  const char *message = dlerror();
  return message ? message : "unknown dynamic loader error";
}

/// Stages the image in a memfd and loads it. Returns the handle or NULL with
/// the reason in \p error; on success \p fd and \p path describe the file.
void *loadFromMemfd(const uint8_t *image, size_t size, int &fd,
                    std::string &path, std::string &error) {
  fd = memfd_create("kiln-module", MFD_CLOEXEC);
  if (fd < 0) {
    error = std::string("memfd_create failed: ") + std::strerror(errno);
    return nullptr;
  }
  path = "/proc/self/fd/" + std::to_string(fd);
  void *handle = nullptr;
  if (!writeAll(fd, image, size))
    error = std::string("cannot write to a memfd: ") + std::strerror(errno);
  else if (!(handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)))
    error = lastDlError();
  if (!handle) {
    ::close(fd);
    fd = -1;
  }
  return handle;
}

/// Stages the image in a temporary file, loads it and unlinks the file.
void *loadFromTemporaryFile(const uint8_t *image, size_t size,
                            kiln_status_code_t &code, std::string &error) {
  const char *directory = std::getenv("TMPDIR");
  if (!directory || !*directory)
    directory = "/tmp";
  std::string path = std::string(directory) + "/kiln-module-XXXXXX";
  int fd = mkostemp(&path[0], O_CLOEXEC);
  if (fd < 0) {
    code = KILN_STATUS_IO_ERROR;
    error = "cannot create a temporary file in '" + std::string(directory) +
            "' to load the module's code: " + std::strerror(errno);
    return nullptr;
  }
  void *handle = nullptr;
  if (!writeAll(fd, image, size)) {
    code = KILN_STATUS_IO_ERROR;
    error = "cannot write the module's code to '" + path +
            "': " + std::strerror(errno);
  } else if (!(handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) {
    code = KILN_STATUS_LOAD_FAILED;
    error = lastDlError();
  }
  ::unlink(path.c_str());
  ::close(fd);
  return handle;
}

} // namespace

kiln_status_t NativeLibrary::load(const uint8_t *image, size_t size,
                                  std::unique_ptr<NativeLibrary> &out) {
  std::string error;
  if (!checkElfHeader(image, size, error))
    return makeStatus(KILN_STATUS_INVALID_MODULE, error);
  makeLibmGlobal();

  int fd = -1;
  std::string path;
  void *handle = loadFromMemfd(image, size, fd, path, error);
  if (!handle) {
    kiln_status_code_t code = KILN_STATUS_LOAD_FAILED;
    handle = loadFromTemporaryFile(image, size, code, error);
    if (!handle)
      return makeStatus(code, "cannot load the module's code: " + error);
    path.clear();
  }

  pinDependencies(image, size);

  std::unique_ptr<NativeLibrary> library(
      new NativeLibrary(handle, nullptr, fd, path));
  if (dlinfo(handle, RTLD_DI_LINKMAP, &library->linkMap) != 0 ||
      !library->linkMap)
    return makeStatus(KILN_STATUS_LOAD_FAILED,
                      "cannot inspect the module's loaded code: " +
                          lastDlError());
  out = std::move(library);
  return nullptr;
}

NativeLibrary::~NativeLibrary() {
  dlclose(handle);
  if (fd < 0)
    return;
  if (void *resident = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
    // Still loaded: keep the descriptor, and thereby its path, reserved.
    dlclose(resident);
    return;
  }
  ::close(fd);
}

void *NativeLibrary::lookupFunction(const std::string &symbol,
                                    std::string &error) const {
  return lookup(symbol, STT_FUNC, error);
}

void *NativeLibrary::lookupObject(const std::string &symbol,
                                  std::string &error, size_t *size) const {
  return lookup(symbol, STT_OBJECT, error, size);
}

void *NativeLibrary::lookup(const std::string &symbol, unsigned char type,
                            std::string &error, size_t *size) const {
  dlerror();
  void *address = dlsym(handle, symbol.c_str());
  if (!address) {
    error = lastDlError();
    return nullptr;
  }
  Dl_info info;
  struct link_map *owner = nullptr;
  ElfW(Sym) *entry = nullptr;
  if (!dladdr1(address, &info, reinterpret_cast<void **>(&owner),
               RTLD_DL_LINKMAP) ||
      owner != linkMap) {
    error = "the symbol is not defined by the module's code";
    if (owner && owner->l_name && *owner->l_name)
      error += std::string(" (it resolves into ") + owner->l_name + ")";
    return nullptr;
  }
  if (!dladdr1(address, &info, reinterpret_cast<void **>(&entry),
               RTLD_DL_SYMENT) ||
      !entry ||
      (ELF64_ST_TYPE(entry->st_info) != type &&
       !(type == STT_FUNC &&
         ELF64_ST_TYPE(entry->st_info) == STT_GNU_IFUNC))) {
    error = type == STT_FUNC ? "the symbol is not a function"
                             : "the symbol is not a data object";
    return nullptr;
  }
  if (size)
    *size = entry->st_size;
  return address;
}

} // namespace runtime
} // namespace kiln
