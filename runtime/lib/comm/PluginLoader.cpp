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

/// What tells the two plug-ins apart when they are looked for.
struct PluginFile {
  /// "libkiln_comm_mpi.so".
  const char *file;
  /// The environment variable that names its path.
  const char *variable;
  /// "the MPI plug-in", for messages.
  const char *title;
  /// What it needs to load, and how to install that.
  const char *needs;
  /// Where kiln builds it.
  const char *builtWhere;
  int flags;
};

/// OpenMPI's own components, which it dlopens in turn, need libmpi's
/// symbols global.
const PluginFile kMpiPlugin = {
    kMpiPluginFile, kMpiPluginVariable, "the MPI plug-in",
    "OpenMPI's libmpi (apt-get install openmpi-bin libopenmpi-dev)",
    "where OpenMPI is installed (apt-get install openmpi-bin "
    "libopenmpi-dev)",
    RTLD_NOW | RTLD_GLOBAL};
const PluginFile kNcclPlugin = {
    kNcclPluginFile, kNcclPluginVariable, "the NCCL plug-in",
    "NCCL's libnccl.so.2 (NVIDIA's libnccl2 package, or the CUDA "
    "toolkit's)",
    "where NCCL's nccl.h and libnccl are found at build time",
    RTLD_NOW | RTLD_LOCAL};

/// The file of the program or shared library this code is linked into:
/// the runtime is a static library, so that is whoever linked it.
std::string runtimeObjectPath() {
  Dl_info info;
  struct link_map *map = nullptr;
  if (!dladdr1(reinterpret_cast<void *>(&runtimeObjectPath), &info,
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
template <typename Table>
kiln_status_t takeTable(void *handle, const std::string &path,
                        const char *entrySymbol, const char *interface,
                        uint32_t expectedVersion, const Table *&table) {
  using Entry = const Table *(*)(void);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, entrySymbol));
  const Table *found = entry ? entry() : nullptr;
  if (!found) {
    dlclose(handle);
    return makeStatus(KILN_STATUS_COMM_ERROR,
                      "'" + path + "' is not a kiln communicator plug-in: " +
                          "it does not export " + entrySymbol);
  }
  if (uint32_t version = found->version; version != expectedVersion) {
    dlclose(handle);
    return makeStatus(
        KILN_STATUS_COMM_ERROR,
        "'" + path + "' implements version " + std::to_string(version) +
            " of the " + interface +
            " interface, but this runtime needs version " +
            std::to_string(expectedVersion) +
            "; use the plug-in built with this runtime");
  }
  table = found;
  return nullptr;
}

kiln_status_t cannotLoad(const PluginFile &plugin, const std::string &path,
                         const std::string &why) {
  return makeStatus(KILN_STATUS_COMM_ERROR,
                    std::string("cannot load ") + plugin.title + " '" + path +
                        "': " + why + "; it needs " + plugin.needs);
}

/// dlopens \p plugin where it is looked for; \p path is where it was found.
kiln_status_t open(const PluginFile &plugin, void *&handle,
                   std::string &path) {
  if (const char *explicitPath = std::getenv(plugin.variable)) {
    if (*explicitPath) {
      path = explicitPath;
      handle = dlopen(explicitPath, plugin.flags);
      if (!handle)
        return cannotLoad(plugin, explicitPath,
                          dlopenError() + " (named by " + plugin.variable +
                              ")");
      return nullptr;
    }
  }
  std::string looked;
  for (const std::string &candidate : pluginCandidates(plugin.file)) {
    looked += "'" + candidate + "', ";
    if (::access(candidate.c_str(), F_OK) != 0)
      continue;
    path = candidate;
    handle = dlopen(candidate.c_str(), plugin.flags);
    if (!handle)
      return cannotLoad(plugin, candidate, dlopenError());
    return nullptr;
  }
  // Last, the loader's search path (LD_LIBRARY_PATH, ld.so.cache).
  path = plugin.file;
  if ((handle = dlopen(plugin.file, plugin.flags)))
    return nullptr;
  std::string error = dlopenError();
  // "libkiln_comm_mpi.so: cannot open ..." is the plug-in itself missing;
  // any other failure is one of its dependencies (libmpi).
  if (error.rfind(std::string(plugin.file) + ":", 0) != 0)
    return cannotLoad(plugin, plugin.file, error);
  return makeStatus(KILN_STATUS_COMM_ERROR,
                    std::string(plugin.title) + " " + plugin.file +
                        " was not found: looked for " + looked +
                        "then on the dynamic loader's search path; it is "
                        "built with kiln " +
                        plugin.builtWhere + ", and " + plugin.variable +
                        "=/path/to/" + plugin.file + " names it explicitly");
}

/// Loads \p plugin once per process and takes its table.
template <typename Table>
kiln_status_t loadOnce(const PluginFile &plugin, const char *entrySymbol,
                       const char *interface, uint32_t version,
                       const Table *&table) {
  static std::mutex mutex;
  static const Table *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded) {
    void *handle = nullptr;
    std::string path;
    if (kiln_status_t status = open(plugin, handle, path))
      return status;
    if (kiln_status_t status =
            takeTable(handle, path, entrySymbol, interface, version, loaded))
      return status;
  }
  table = loaded;
  return nullptr;
}

} // namespace

std::vector<std::string> pluginCandidates(const char *file) {
  std::vector<std::string> candidates;
  std::string object = runtimeObjectPath();
  size_t slash = object.rfind('/');
  if (slash != std::string::npos)
    candidates.push_back(object.substr(0, slash) + "/../lib/kiln/" + file);
#if defined(KILN_COMM_PLUGIN_BUILD_DIR) && defined(KILN_BUILD_ROOT)
  // Programs of the build tree outside its bin/ (tests, examples) find the
  // plug-in where this build put it. A program outside the build tree (an
  // installed one) never looks there.
  std::string built = std::string(KILN_COMM_PLUGIN_BUILD_DIR) + "/" + file;
  bool inBuildTree = object.rfind(KILN_BUILD_ROOT "/", 0) == 0;
  if (inBuildTree && (candidates.empty() || candidates.front() != built))
    candidates.push_back(built);
#endif
  return candidates;
}

std::vector<std::string> mpiPluginCandidates() {
  return pluginCandidates(kMpiPluginFile);
}

kiln_status_t loadMpiPlugin(const kiln_comm_plugin_t *&table) {
  return loadOnce(kMpiPlugin, KILN_COMM_PLUGIN_ENTRY,
                  "communicator plug-in", KILN_COMM_PLUGIN_VERSION, table);
}

kiln_status_t loadDevicePlugin(const kiln_device_comm_plugin_t *&table) {
  return loadOnce(kNcclPlugin, KILN_DEVICE_COMM_PLUGIN_ENTRY,
                  "device communicator plug-in",
                  KILN_DEVICE_COMM_PLUGIN_VERSION, table);
}

} // namespace comm
} // namespace runtime
} // namespace kiln
