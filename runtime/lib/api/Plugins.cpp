//===- Plugins.cpp - Finding and loading the runtime's plug-ins -----------===//

#include "Plugins.h"

#include "Status.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

namespace kiln {
namespace runtime {
namespace {

/// The file of the program or shared library this code is linked into:
/// a program or library that linked the static runtime, or the Python
/// packages' shared runtime, kiln_runtime/_libs/libkiln_runtime.so.
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
/// Every table starts with the version of its interface.
kiln_status_t takeTable(const PluginFile &plugin, void *handle,
                        const std::string &path, const char *entrySymbol,
                        const char *interface, uint32_t expectedVersion,
                        const void *&table) {
  using Entry = const void *(*)(void);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, entrySymbol));
  const void *found = entry ? entry() : nullptr;
  if (!found) {
    dlclose(handle);
    return makeStatus(plugin.code, "'" + path + "' is not a kiln " +
                                       interface + ": it does not export " +
                                       entrySymbol);
  }
  uint32_t version;
  std::memcpy(&version, found, sizeof(version));
  if (version != expectedVersion) {
    dlclose(handle);
    return makeStatus(
        plugin.code,
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
  return makeStatus(plugin.code,
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
  return makeStatus(plugin.code,
                    std::string(plugin.title) + " " + plugin.file +
                        " was not found: looked for " + looked +
                        "then on the dynamic loader's search path; it is "
                        "built with kiln " +
                        plugin.builtWhere + ", and " + plugin.variable +
                        "=/path/to/" + plugin.file + " names it explicitly");
}

} // namespace

std::vector<std::string> pluginCandidates(const char *file) {
  std::vector<std::string> candidates;
  std::string object = runtimeObjectPath();
  size_t slash = object.rfind('/');
  if (slash != std::string::npos) {
    std::string dir = object.substr(0, slash);
    // An install: bin/../lib/kiln/ or lib/../lib/kiln/.
    candidates.push_back(dir + "/../lib/kiln/" + file);
    // The Python packages (a wheel): their runtime,
    // kiln_runtime/_libs/libkiln_runtime.so, has its plug-ins beside it.
    candidates.push_back(dir + "/" + file);
  }
#if defined(KILN_PLUGIN_BUILD_DIR) && defined(KILN_BUILD_ROOT)
  // Programs of the build tree outside its bin/ (tests, examples) find the
  // plug-in where this build put it. A program outside the build tree (an
  // installed one) never looks there.
  std::string built = std::string(KILN_PLUGIN_BUILD_DIR) + "/" + file;
  bool inBuildTree = object.rfind(KILN_BUILD_ROOT "/", 0) == 0;
  if (inBuildTree && (candidates.empty() || candidates.front() != built))
    candidates.push_back(built);
#endif
  return candidates;
}

kiln_status_t loadPluginTable(const PluginFile &plugin,
                              const char *entrySymbol, const char *interface,
                              uint32_t version, const void *&table) {
  void *handle = nullptr;
  std::string path;
  if (kiln_status_t status = open(plugin, handle, path))
    return status;
  return takeTable(plugin, handle, path, entrySymbol, interface, version,
                   table);
}

} // namespace runtime
} // namespace kiln
