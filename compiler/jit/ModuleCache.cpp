//===- ModuleCache.cpp - Compiled modules kept on disk --------------------===//

#include "ModuleCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SHA256.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {
namespace jit_cache {
namespace {

/// The binary this code is in (its path, size and modification time): a
/// rebuilt compiler makes other code for the same program, so its modules
/// must not be taken for this one's.
std::string compilerIdentity() {
  Dl_info info = {};
  if (!::dladdr(reinterpret_cast<void *>(&compilerIdentity), &info) ||
      !info.dli_fname)
    return "unknown";
  struct stat status = {};
  if (::stat(info.dli_fname, &status) != 0)
    return info.dli_fname;
  return std::string(info.dli_fname) + " " + std::to_string(status.st_size) +
         " " + std::to_string(status.st_mtim.tv_sec) + "." +
         std::to_string(status.st_mtim.tv_nsec);
}

/// The host CPU the code is compiled for: its name and features.
std::string hostIdentity() {
  std::string text = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> on;
  for (const auto &feature : features)
    if (feature.getValue())
      on.push_back(feature.getKey().str());
  std::sort(on.begin(), on.end());
  for (const std::string &feature : on)
    text += "," + feature;
  return text;
}

std::string path(const std::string &directory, const std::string &key) {
  return directory + "/" + key + ".kmod";
}

} // namespace

std::string moduleCacheDirectory(const std::string &configured) {
  if (!configured.empty())
    return configured;
  const char *variable = std::getenv("KILN_CACHE_DIR");
  return variable ? variable : "";
}

std::string moduleCacheKey(const std::string &program,
                           const std::string &options) {
  static const std::string identity = compilerIdentity() + "\n" +
                                      hostIdentity();
  llvm::SHA256 hash;
  // Each part with its length, so that no two different lists of parts
  // hash alike.
  for (const std::string *part : {&identity, &options, &program}) {
    hash.update(std::to_string(part->size()) + ":");
    hash.update(*part);
  }
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

bool loadCachedModule(const std::string &directory, const std::string &key,
                      std::vector<uint8_t> &bytes) {
  std::ifstream file(path(directory, key), std::ios::binary);
  if (!file)
    return false;
  bytes.assign(std::istreambuf_iterator<char>(file),
               std::istreambuf_iterator<char>());
  return !file.bad() && !bytes.empty();
}

void storeCachedModule(const std::string &directory, const std::string &key,
                       const std::vector<uint8_t> &bytes) {
  // Parents too; a failure shows as the open failing.
  std::error_code ignored;
  std::filesystem::create_directories(directory, ignored);
  std::string target = path(directory, key);
  std::string temporary = target + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char *>(bytes.data()),
               std::streamsize(bytes.size()));
    if (!file) {
      ::unlink(temporary.c_str());
      return;
    }
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0)
    ::unlink(temporary.c_str());
}

} // namespace jit_cache
} // namespace kiln
