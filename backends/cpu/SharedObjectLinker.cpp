//===- SharedObjectLinker.cpp - object code to a loadable shared object ---===//
//
// The runtime loads native code with dlopen, so each module's object code is
// linked into a shared object. The host C compiler driver does the linking
// (it knows where libm and the C runtime live); KILN_CC overrides it.
// Libraries beyond libm are linked only when the object refers to them:
// libdnnl for `dnnl_*` (matmuls, see MatmulToDnnl.cpp), kiln's
// kiln_dnnl_support archive and libdnnl for `kiln_dnnl_*` (convolutions,
// see ConvToDnnl.cpp, and the products MatmulToDnnl.cpp gives oneDNN's
// matmul primitive), kiln's kiln_attention archive for `kiln_attention_*`
// (attention, see AttentionCalls.cpp), its kiln_packed_matmul archive for
// `kiln_packed_matmul_*` (the products of few rows by a packed constant,
// see MatmulToDnnl.cpp) and LLVM's libomp
// for `__kmpc_*` (parallel loops) and for kiln_dnnl_support (its Winograd
// convolution's parallel loops), the latter with an rpath since it lives
// in LLVM's library directory.
//
// kiln's archives live in lib/kiln/ beside the program or library that
// holds this code (bin/../lib/kiln/ of an install or of the build tree),
// or in _libs/ beside the extension of the Python package installed from a
// wheel, as the runtime's communicator plug-ins do; KILN_SUPPORT_DIR names
// another directory. Only code that lives in the build tree itself (tests, the
// Python package of the build) also looks in the build tree's lib/kiln/:
// an installed kiln never reads its build tree.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#ifndef KILN_HOST_CC
#define KILN_HOST_CC "cc"
#endif

using namespace mlir;

namespace {
/// Removes a temporary file when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

/// The file of the program or shared library this code is linked into
/// (the backends are a static library, so whoever linked them), with links
/// resolved; empty where the loader cannot say.
std::string linkedObjectPath() {
  Dl_info info;
  struct link_map *map = nullptr;
  if (!dladdr1(reinterpret_cast<void *>(&linkedObjectPath), &info,
               reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP))
    return "";
  llvm::SmallString<256> path;
  if (map && map->l_name && *map->l_name) {
    path = map->l_name;
  } else {
    // The main program's link map has no name.
    char buffer[4096];
    ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    if (length <= 0)
      return "";
    path.assign(buffer, buffer + length);
  }
  llvm::SmallString<256> resolved;
  if (llvm::sys::fs::real_path(path, resolved))
    return std::string(path);
  return std::string(resolved);
}

/// Where kiln's archive `file` is: KILN_SUPPORT_DIR, lib/kiln/ beside the
/// linked object's directory, or, for code of the build tree, the build
/// tree's lib/kiln/. Empty (with `searched` listing the places) where it
/// is in none.
std::string findSupportArchive(llvm::StringRef file, std::string &searched) {
  std::vector<std::string> candidates;
  if (const char *dir = std::getenv("KILN_SUPPORT_DIR"); dir && *dir)
    candidates.push_back((llvm::Twine(dir) + "/" + file).str());
  std::string object = linkedObjectPath();
  llvm::StringRef objectDir = llvm::sys::path::parent_path(object);
  if (!objectDir.empty()) {
    candidates.push_back((objectDir + "/../lib/kiln/" + file).str());
    // The Python package of a wheel: kiln/_kiln.so, kiln/_libs/.
    candidates.push_back((objectDir + "/_libs/" + file).str());
  }
#ifdef KILN_BUILD_ROOT
  if (llvm::StringRef(object).starts_with(KILN_BUILD_ROOT "/"))
    candidates.push_back((llvm::Twine(KILN_BUILD_ROOT "/lib/kiln/") + file).str());
#endif
  for (const std::string &candidate : candidates) {
    if (llvm::sys::fs::exists(candidate))
      return candidate;
    searched += (searched.empty() ? "" : ", ") + candidate;
  }
  return "";
}

/// The libraries (as linker arguments) that the undefined symbols of
/// `object` call for; fails (with `error` set) where one of kiln's own
/// archives is not found.
std::optional<std::vector<std::string>>
librariesFor(llvm::ArrayRef<char> object, std::string &error) {
  bool dnnl = false, dnnlSupport = false, attention = false,
       packedMatmul = false, openmp = false;
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(object.data(), object.size()), "kiln"));
  if (!file) {
    llvm::consumeError(file.takeError());
    return std::vector<std::string>{};
  }
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!flags || !name) {
      if (!flags)
        llvm::consumeError(flags.takeError());
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined))
      continue;
    dnnl |= name->starts_with("dnnl_");
    dnnlSupport |= name->starts_with("kiln_dnnl_");
    attention |= name->starts_with("kiln_attention_");
    packedMatmul |= name->starts_with("kiln_packed_matmul_");
    openmp |= name->starts_with("__kmpc_") || name->starts_with("omp_");
  }
  std::vector<std::string> libraries;
  auto archive = [&](llvm::StringRef file) {
    std::string searched;
    std::string path = findSupportArchive(file, searched);
    if (path.empty())
      error = ("kiln's archive " + file +
               " is not installed where this kiln looks for it (" + searched +
               "); reinstall kiln or set KILN_SUPPORT_DIR")
                  .str();
    else
      libraries.push_back(path);
    return !path.empty();
  };
#ifdef KILN_ATTENTION_LIBRARY
  if (attention && !archive(KILN_ATTENTION_LIBRARY))
    return std::nullopt;
#endif
#ifdef KILN_PACKED_MATMUL_LIBRARY
  if (packedMatmul && !archive(KILN_PACKED_MATMUL_LIBRARY))
    return std::nullopt;
#endif
#ifdef KILN_DNNL_SUPPORT_LIBRARY
  // The archive goes before -ldnnl, whose symbols it calls.
  if (dnnlSupport && !archive(KILN_DNNL_SUPPORT_LIBRARY))
    return std::nullopt;
#endif
  // libomp before libdnnl: oneDNN's OpenMP calls (libgomp's entry points,
  // which libomp implements) then bind to the modules' runtime rather than
  // to a second pool of libgomp threads (backends/CMakeLists.txt).
#ifdef KILN_OMP_LIBRARY_DIR
  // kiln_dnnl_support's Winograd convolution has parallel loops too.
  openmp |= dnnlSupport;
#endif
  if (openmp) {
#ifdef KILN_OMP_LIBRARY_DIR
    libraries.push_back("-L" KILN_OMP_LIBRARY_DIR);
    libraries.push_back("-Wl,-rpath," KILN_OMP_LIBRARY_DIR);
#endif
    libraries.push_back("-lomp");
  }
  if (dnnl || dnnlSupport)
    libraries.push_back("-ldnnl");
  return libraries;
}

std::string findLinkerDriver(std::string &error) {
  if (const char *fromEnv = std::getenv("KILN_CC"); fromEnv && *fromEnv)
    return fromEnv;
  for (const char *candidate : {KILN_HOST_CC, "cc", "gcc", "clang"}) {
    if (llvm::sys::fs::can_execute(candidate))
      return candidate;
    if (auto found = llvm::sys::findProgramByName(candidate))
      return *found;
  }
  error = "no C compiler driver found to link the shared object (set KILN_CC)";
  return "";
}
} // namespace

bool kiln::linkSharedObject(llvm::ArrayRef<char> object,
                            std::vector<uint8_t> &sharedObject,
                            std::string &error) {
  std::string driver = findLinkerDriver(error);
  if (driver.empty())
    return false;
  TempFile objectFile, sharedFile, logFile;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("kiln", "o", fd, objectFile.path) ||
      llvm::sys::fs::createTemporaryFile("kiln", "so", sharedFile.path) ||
      llvm::sys::fs::createTemporaryFile("kiln", "log", logFile.path)) {
    error = "cannot create temporary files for linking";
    return false;
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(object.data(), object.size());
  }
  llvm::SmallVector<llvm::StringRef> args{
      driver, "-shared", "-nostartfiles", "-o", sharedFile.path,
      objectFile.path};
  std::optional<std::vector<std::string>> libraries =
      librariesFor(object, error);
  if (!libraries)
    return false;
  for (const std::string &library : *libraries)
    args.push_back(library);
  args.push_back("-lm");
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logFile.path,
                                                logFile.path};
  std::string execError;
  int status = llvm::sys::ExecuteAndWait(driver, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/120, 0, &execError);
  if (status != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logFile.path))
      log = (*buffer)->getBuffer().str();
    error = "linking the shared object with '" + driver + "' failed" +
            (execError.empty() ? "" : ": " + execError) +
            (log.empty() ? "" : "\n" + log);
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(sharedFile.path);
  if (!buffer) {
    error = "cannot read the linked shared object";
    return false;
  }
  llvm::StringRef bytes = (*buffer)->getBuffer();
  sharedObject.assign(bytes.begin(), bytes.end());
  return true;
}
