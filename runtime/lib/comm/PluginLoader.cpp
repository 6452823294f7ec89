//===- PluginLoader.cpp - Finding and loading communicator plug-ins -------===//

#include "PluginLoader.h"

#include "api/Status.h"

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <link.h>
#include <mutex>
#include <unistd.h>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

constexpr const char *kInstallHint =
    "apt-get install openmpi-bin libopenmpi-dev";

/// The file of the program or shared library this code is linked into:
/// the runtime is a static library, so that is whoever linked it.
std::string runtimeObjectPath() {
  Dl_info info;
  struct link_map *map = nullptr;
  if (!dladdr1(reinterpret_cast<void *>(&mpiPluginCandidates), &info,
               reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP))
    return "";
  std::string path;
  if (map && map->l_name && *map->l_name) {
    path = map->l_name;
  } else {
    // The main program's link map has no name (and dladdr would give
    // argv[0], which need not be a path at all).
    char buffer[PATH_MAX];
    ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    if (length <= 0)
      return "";
    path.assign(buffer, size_t(length));
  }
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

std::string dlopenError() {
  const char *error = dlerror();
  return error ? error : "unknown dynamic loader error";
}

/// Takes the table from a loaded plug-in, or closes it and says why not.
kiln_status_t takeTable(void *handle, const std::string &path,
                        const kiln_comm_plugin_t *&table) {
  auto entry = reinterpret_cast<kiln_comm_plugin_entry_fn>(
      dlsym(handle, KILN_COMM_PLUGIN_ENTRY));
  const kiln_comm_plugin_t *found = entry ? entry() : nullptr;
  if (!found) {
    dlclose(handle);
    return makeStatus(KILN_STATUS_COMM_ERROR,
                      "'" + path + "' is not a kiln communicator plug-in: " +
                          "it does not export " + KILN_COMM_PLUGIN_ENTRY);
  }
  if (uint32_t version = found->version; version != KILN_COMM_PLUGIN_VERSION) {
    dlclose(handle);
    return makeStatus(
        KILN_STATUS_COMM_ERROR,
        "'" + path + "' implements version " + std::to_string(version) +
            " of the communicator plug-in interface, but this runtime "
            "needs version " +
            std::to_string(KILN_COMM_PLUGIN_VERSION) +
            "; use the plug-in built with this runtime");
  }
  table = found;
  return nullptr;
}

kiln_status_t cannotLoad(const std::string &path, const std::string &why) {
  return makeStatus(KILN_STATUS_COMM_ERROR,
                    "cannot load the MPI plug-in '" + path + "': " + why +
                        "; it needs OpenMPI's libmpi (" + kInstallHint + ")");
}

kiln_status_t load(const kiln_comm_plugin_t *&table) {
  constexpr int kFlags = RTLD_NOW | RTLD_GLOBAL;
  if (const char *explicitPath = std::getenv(kMpiPluginVariable)) {
    if (*explicitPath) {
      void *handle = dlopen(explicitPath, kFlags);
      if (!handle)
        return cannotLoad(explicitPath, dlopenError() + " (named by " +
                                            kMpiPluginVariable + ")");
      return takeTable(handle, explicitPath, table);
    }
  }
  std::string looked;
  for (const std::string &candidate : mpiPluginCandidates()) {
    looked += "'" + candidate + "', ";
    if (::access(candidate.c_str(), F_OK) != 0)
      continue;
    void *handle = dlopen(candidate.c_str(), kFlags);
    if (!handle)
      return cannotLoad(candidate, dlopenError());
    return takeTable(handle, candidate, table);
  }
  // Last, the loader's search path (LD_LIBRARY_PATH, ld.so.cache).
  if (void *handle = dlopen(kMpiPluginFile, kFlags))
    return takeTable(handle, kMpiPluginFile, table);
  std::string error = dlopenError();
  // "libkiln_comm_mpi.so: cannot open ..." is the plug-in itself missing;
  // any other failure is one of its dependencies (libmpi).
  if (error.rfind(std::string(kMpiPluginFile) + ":", 0) != 0)
    return cannotLoad(kMpiPluginFile, error);
  return makeStatus(
      KILN_STATUS_COMM_ERROR,
      std::string("the MPI plug-in ") + kMpiPluginFile +
          " was not found: looked for " + looked +
          "then on the dynamic loader's search path; it is built with kiln "
          "where OpenMPI is installed (" +
          kInstallHint + "), and " + kMpiPluginVariable + "=/path/to/" +
          kMpiPluginFile + " names it explicitly");
}

} // namespace

std::vector<std::string> mpiPluginCandidates() {
  std::vector<std::string> candidates;
  std::string object = runtimeObjectPath();
  size_t slash = object.rfind('/');
  if (slash != std::string::npos)
    candidates.push_back(object.substr(0, slash) + "/../lib/kiln/" +
                         kMpiPluginFile);
#ifdef KILN_COMM_PLUGIN_BUILD_DIR
  // Programs of the build tree outside its bin/ (tests, examples) find the
  // plug-in where this build put it.
  std::string built = std::string(KILN_COMM_PLUGIN_BUILD_DIR) + "/" +
                      kMpiPluginFile;
  if (candidates.empty() || candidates.front() != built)
    candidates.push_back(built);
#endif
  return candidates;
}

kiln_status_t loadMpiPlugin(const kiln_comm_plugin_t *&table) {
  static std::mutex mutex;
  static const kiln_comm_plugin_t *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded)
    if (kiln_status_t status = load(loaded))
      return status;
  table = loaded;
  return nullptr;
}

} // namespace comm
} // namespace runtime
} // namespace kiln
