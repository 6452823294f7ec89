//===- PluginLoader.h - Finding communicator plug-ins -----------*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_COMM_PLUGINLOADER_H
#define KILN_RUNTIME_LIB_COMM_PLUGINLOADER_H

#include "CommPlugin.h"
#include "DeviceCommPlugin.h"
#include "ElasticPlugin.h"

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace comm {

/// The file name of the MPI plug-in.
constexpr const char *kMpiPluginFile = "libkiln_comm_mpi.so";
/// The environment variable that names the MPI plug-in's path explicitly.
constexpr const char *kMpiPluginVariable = "KILN_COMM_MPI_PLUGIN";

/// The file name of the Gloo plug-in, and the variable that names its path
/// explicitly.
constexpr const char *kGlooPluginFile = "libkiln_comm_gloo.so";
constexpr const char *kGlooPluginVariable = "KILN_COMM_GLOO_PLUGIN";

/// The file name of the device (NCCL) plug-in, and the variable that names
/// its path explicitly.
constexpr const char *kNcclPluginFile = "libkiln_comm_nccl.so";
constexpr const char *kNcclPluginVariable = "KILN_COMM_NCCL_PLUGIN";

/// The paths tried for the MPI plug-in when KILN_COMM_MPI_PLUGIN is not
/// set, before the dynamic loader's own search path (api/Plugins.h).
std::vector<std::string> mpiPluginCandidates();

/// Loads the MPI plug-in once per process, with RTLD_NOW | RTLD_GLOBAL
/// (OpenMPI's own components, which it dlopens in turn, need libmpi's
/// symbols global), and returns its table. It is never unloaded: MPI cannot
/// be initialized again in a process that finalized it. A failure leaves
/// nothing loaded, so that a later attempt (after setting
/// KILN_COMM_MPI_PLUGIN, say) starts afresh.
kiln_status_t loadMpiPlugin(const kiln_comm_plugin_t *&table);

/// Loads the Gloo plug-in once per process, looking for it the way
/// loadMpiPlugin looks for the MPI one, and returns its table. Never
/// unloaded.
kiln_status_t loadGlooPlugin(const kiln_comm_plugin_t *&table);

/// The elastic table (ElasticPlugin.h) of the Gloo plug-in, loaded as
/// loadGlooPlugin loads it.
kiln_status_t loadElasticPlugin(const kiln_elastic_plugin_t *&table);

/// Loads the device plug-in (DeviceCommPlugin.h) once per process, looking
/// for it the way loadMpiPlugin looks for the MPI one (KILN_COMM_NCCL_PLUGIN,
/// then lib/kiln/libkiln_comm_nccl.so), and returns its table. Never
/// unloaded: groups made by it may live as long as the process.
kiln_status_t loadDevicePlugin(const kiln_device_comm_plugin_t *&table);

} // namespace comm
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_PLUGINLOADER_H
