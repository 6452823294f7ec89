//===- PluginLoader.cpp - Finding and loading communicator plug-ins -------===//

#include "PluginLoader.h"

#include "api/Plugins.h"

#include <dlfcn.h>
#include <mutex>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

/// OpenMPI's own components, which it dlopens in turn, need libmpi's
/// symbols global.
const PluginFile kMpiPlugin = {
    kMpiPluginFile, kMpiPluginVariable, "the MPI plug-in",
    "OpenMPI's libmpi (apt-get install openmpi-bin libopenmpi-dev)",
    "where OpenMPI is installed (apt-get install openmpi-bin "
    "libopenmpi-dev)",
    RTLD_NOW | RTLD_GLOBAL, KILN_STATUS_COMM_ERROR};
const PluginFile kGlooPlugin = {
    kGlooPluginFile, kGlooPluginVariable, "the Gloo plug-in",
    "Gloo's libgloo (apt-get install libgloo-dev)",
    "where Gloo is installed (apt-get install libgloo-dev)",
    RTLD_NOW | RTLD_LOCAL, KILN_STATUS_COMM_ERROR};
const PluginFile kNcclPlugin = {
    kNcclPluginFile, kNcclPluginVariable, "the NCCL plug-in",
    "NCCL's libnccl.so.2 (NVIDIA's libnccl2 package, or the CUDA "
    "toolkit's)",
    "where NCCL's nccl.h and libnccl are found at build time",
    RTLD_NOW | RTLD_LOCAL, KILN_STATUS_COMM_ERROR};

/// Loads \p plugin once per process (\p loaded remembers its table) and
/// takes its table.
template <typename Table>
kiln_status_t loadOnce(const PluginFile &plugin, const char *entrySymbol,
                       const char *interface, uint32_t version,
                       const Table *&loaded, const Table *&table) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded) {
    const void *found = nullptr;
    if (kiln_status_t status =
            loadPluginTable(plugin, entrySymbol, interface, version, found))
      return status;
    loaded = static_cast<const Table *>(found);
  }
  table = loaded;
  return nullptr;
}

} // namespace

std::vector<std::string> mpiPluginCandidates() {
  return pluginCandidates(kMpiPluginFile);
}

kiln_status_t loadMpiPlugin(const kiln_comm_plugin_t *&table) {
  static const kiln_comm_plugin_t *loaded = nullptr;
  return loadOnce(kMpiPlugin, KILN_COMM_PLUGIN_ENTRY,
                  "communicator plug-in", KILN_COMM_PLUGIN_VERSION, loaded,
                  table);
}

kiln_status_t loadGlooPlugin(const kiln_comm_plugin_t *&table) {
  static const kiln_comm_plugin_t *loaded = nullptr;
  return loadOnce(kGlooPlugin, KILN_COMM_PLUGIN_ENTRY,
                  "communicator plug-in", KILN_COMM_PLUGIN_VERSION, loaded,
                  table);
}

kiln_status_t loadElasticPlugin(const kiln_elastic_plugin_t *&table) {
  static const kiln_elastic_plugin_t *loaded = nullptr;
  return loadOnce(kGlooPlugin, KILN_ELASTIC_PLUGIN_ENTRY,
                  "elastic rendezvous plug-in", KILN_ELASTIC_PLUGIN_VERSION,
                  loaded, table);
}

kiln_status_t loadDevicePlugin(const kiln_device_comm_plugin_t *&table) {
  static const kiln_device_comm_plugin_t *loaded = nullptr;
  return loadOnce(kNcclPlugin, KILN_DEVICE_COMM_PLUGIN_ENTRY,
                  "device communicator plug-in",
                  KILN_DEVICE_COMM_PLUGIN_VERSION, loaded, table);
}

} // namespace comm
} // namespace runtime
} // namespace kiln
