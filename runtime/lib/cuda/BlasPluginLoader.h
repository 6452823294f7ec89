//===- BlasPluginLoader.h - Finding the GPU library plug-ins ----*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_CUDA_BLASPLUGINLOADER_H
#define KILN_RUNTIME_LIB_CUDA_BLASPLUGINLOADER_H

#include "BlasPlugin.h"
#include "DnnPlugin.h"

#include "kiln/runtime.h"

#include <functional>

namespace kiln {
namespace runtime {
namespace cuda {

/// The file name of the products plug-in, and the variable that names its
/// path explicitly.
constexpr const char *kBlasPluginFile = "libkiln_cuda_blas.so";
constexpr const char *kBlasPluginVariable = "KILN_CUDA_BLAS_PLUGIN";

/// Loads the products plug-in once per process (KILN_CUDA_BLAS_PLUGIN, then
/// lib/kiln/libkiln_cuda_blas.so as api/Plugins.h looks for plug-ins) and
/// returns its table; failures are KILN_STATUS_DEVICE_ERROR. Never
/// unloaded: handles made by it live as long as the devices that use them.
kiln_status_t loadBlasPlugin(const kiln_blas_plugin_t *&table);

/// Replaces how loadBlasPlugin finds its table (NULL restores the plug-in
/// file), for tests that run products against a fake plug-in.
using BlasPluginLoader = std::function<kiln_status_t(const kiln_blas_plugin_t *&)>;
void setBlasPluginLoaderForTesting(BlasPluginLoader loader);

/// The file name of the convolutions plug-in, and the variable that names
/// its path explicitly.
constexpr const char *kDnnPluginFile = "libkiln_cuda_dnn.so";
constexpr const char *kDnnPluginVariable = "KILN_CUDA_DNN_PLUGIN";

/// loadBlasPlugin's counterpart for the convolutions plug-in.
kiln_status_t loadDnnPlugin(const kiln_dnn_plugin_t *&table);

/// setBlasPluginLoaderForTesting's counterpart.
using DnnPluginLoader = std::function<kiln_status_t(const kiln_dnn_plugin_t *&)>;
void setDnnPluginLoaderForTesting(DnnPluginLoader loader);

} // namespace cuda
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_BLASPLUGINLOADER_H
