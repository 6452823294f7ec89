//===- Plugins.h - Finding and loading the runtime's plug-ins ---*- C++ -*-===//
//
// The runtime links no communication or GPU library: the code that does is
// in plug-ins (shared objects in lib/kiln/) that it dlopens when a module
// first needs one - the MPI and NCCL communicators (comm/PluginLoader.h)
// the GPU products (cuda/BlasPlugin.h) and convolutions (cuda/DnnPlugin.h). Each exports one function that
// returns its table of functions, whose first member is the version of its
// interface.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_API_PLUGINS_H
#define KILN_RUNTIME_LIB_API_PLUGINS_H

#include "kiln/runtime.h"

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {

/// What tells the plug-ins apart when they are looked for.
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
  /// dlopen's flags.
  int flags;
  /// The status code of a failure to find or load it.
  kiln_status_code_t code;
};

/// The paths tried for plug-in \p file when its variable is not set, before
/// the dynamic loader's own search path: lib/kiln/ beside the directory of
/// the program or shared library that holds the runtime (build/bin/kiln-run
/// finds build/lib/kiln/, <prefix>/bin/kiln-run finds <prefix>/lib/kiln/),
/// then the lib/kiln/ of the build tree the runtime was built in (for the
/// build tree's tests and examples; never from a program outside it).
std::vector<std::string> pluginCandidates(const char *file);

/// Loads \p plugin - from the path its variable names, else the first
/// candidate that exists, else the loader's search path - and takes its
/// table from \p entrySymbol, checking that the table's first member (its
/// version) is \p version. A failure closes what it opened and says which
/// file failed and what the plug-in needs.
kiln_status_t loadPluginTable(const PluginFile &plugin,
                              const char *entrySymbol, const char *interface,
                              uint32_t version, const void *&table);

/// A plug-in's table of type \p Table, loaded by the first load() of the
/// process (loadPluginTable) and never unloaded: handles made by it live as
/// long as the objects that use them. A test may replace how the table is
/// found (setForTesting; NULL restores the plug-in file).
template <typename Table> class PluginTableCache {
public:
  using Loader = std::function<kiln_status_t(const Table *&)>;

  PluginTableCache(const PluginFile &plugin, const char *entrySymbol,
                   const char *interface, uint32_t version)
      : plugin(plugin), entrySymbol(entrySymbol), interface(interface),
        version(version) {}

  kiln_status_t load(const Table *&table) {
    std::lock_guard<std::mutex> lock(mutex);
    if (testLoader)
      return testLoader(table);
    if (!loaded) {
      const void *found = nullptr;
      if (kiln_status_t status = loadPluginTable(plugin, entrySymbol,
                                                 interface, version, found))
        return status;
      loaded = static_cast<const Table *>(found);
    }
    table = loaded;
    return nullptr;
  }

  void setForTesting(Loader loader) {
    std::lock_guard<std::mutex> lock(mutex);
    testLoader = std::move(loader);
  }

private:
  const PluginFile &plugin;
  const char *entrySymbol;
  const char *interface;
  uint32_t version;
  std::mutex mutex;
  Loader testLoader;
  const Table *loaded = nullptr;
};

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_PLUGINS_H
