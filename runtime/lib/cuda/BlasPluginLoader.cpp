//===- BlasPluginLoader.cpp - Finding the GPU products plug-in ------------===//

#include "BlasPluginLoader.h"

#include "api/Plugins.h"

#include <dlfcn.h>
#include <mutex>

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

std::mutex loaderMutex;
BlasPluginLoader testLoader;

} // namespace

kiln_status_t loadBlasPlugin(const kiln_blas_plugin_t *&table) {
  std::lock_guard<std::mutex> lock(loaderMutex);
  if (testLoader)
    return testLoader(table);
  static const kiln_blas_plugin_t *loaded = nullptr;
  if (!loaded) {
    const void *found = nullptr;
    if (kiln_status_t status =
            loadPluginTable(kBlasPlugin, KILN_BLAS_PLUGIN_ENTRY,
                            "CUDA products plug-in", KILN_BLAS_PLUGIN_VERSION,
                            found))
      return status;
    loaded = static_cast<const kiln_blas_plugin_t *>(found);
  }
  table = loaded;
  return nullptr;
}

void setBlasPluginLoaderForTesting(BlasPluginLoader loader) {
  std::lock_guard<std::mutex> lock(loaderMutex);
  testLoader = std::move(loader);
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
