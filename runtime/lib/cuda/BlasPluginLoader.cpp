//===- BlasPluginLoader.cpp - Finding the GPU products plug-in ------------===//

#include "BlasPluginLoader.h"

#include "api/Plugins.h"

#include <dlfcn.h>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

const PluginFile kBlasPlugin = {
    kBlasPluginFile,
    kBlasPluginVariable,
    "the CUDA products plug-in",
    "NVIDIA's cuBLASLt, libcublasLt.so.13 (the CUDA toolkit's, or the "
    "nvidia-cublas wheel's lib/ on LD_LIBRARY_PATH)",
    "where cuBLASLt's cublasLt.h and libcublasLt are found at build time",
    RTLD_NOW | RTLD_LOCAL,
    KILN_STATUS_DEVICE_ERROR};

PluginTableCache<kiln_blas_plugin_t> &blasTable() {
  static PluginTableCache<kiln_blas_plugin_t> cache(
      kBlasPlugin, KILN_BLAS_PLUGIN_ENTRY, "CUDA products plug-in",
      KILN_BLAS_PLUGIN_VERSION);
  return cache;
}

const PluginFile kDnnPlugin = {
    kDnnPluginFile,
    kDnnPluginVariable,
    "the CUDA convolutions plug-in",
    "NVIDIA's cuDNN 9, libcudnn.so.9 (the CUDA toolkit's, or the "
    "nvidia-cudnn wheel's lib/ on LD_LIBRARY_PATH)",
    "where cuDNN's cudnn.h and libcudnn are found at build time",
    RTLD_NOW | RTLD_LOCAL,
    KILN_STATUS_DEVICE_ERROR};

PluginTableCache<kiln_dnn_plugin_t> &dnnTable() {
  static PluginTableCache<kiln_dnn_plugin_t> cache(
      kDnnPlugin, KILN_DNN_PLUGIN_ENTRY, "CUDA convolutions plug-in",
      KILN_DNN_PLUGIN_VERSION);
  return cache;
}

} // namespace

kiln_status_t loadBlasPlugin(const kiln_blas_plugin_t *&table) {
  return blasTable().load(table);
}

void setBlasPluginLoaderForTesting(BlasPluginLoader loader) {
  blasTable().setForTesting(std::move(loader));
}

kiln_status_t loadDnnPlugin(const kiln_dnn_plugin_t *&table) {
  return dnnTable().load(table);
}

void setDnnPluginLoaderForTesting(DnnPluginLoader loader) {
  dnnTable().setForTesting(std::move(loader));
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
