//===- CudaDriver.cpp - The driver API through dlopen ---------------------===//

#include "CudaDriver.h"

#include <dlfcn.h>
#include <mutex>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

/// The driver functions, resolved by name (the _v2 names are the ones
/// cuda.h maps the plain names to).
struct DriverFunctions {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
};

class DlopenCudaDriver final : public CudaDriver {
public:
  DlopenCudaDriver(void *handle, const DriverFunctions &functions)
      : handle(handle), f(functions) {}
  ~DlopenCudaDriver() override { dlclose(handle); }

  CUresult init(unsigned flags) override { return f.cuInit(flags); }
  CUresult deviceGetCount(int *count) override {
    return f.cuDeviceGetCount(count);
  }
  CUresult deviceGet(CUdevice *device, int ordinal) override {
    return f.cuDeviceGet(device, ordinal);
  }
  CUresult devicePrimaryCtxRetain(CUcontext *context,
                                  CUdevice device) override {
    return f.cuDevicePrimaryCtxRetain(context, device);
  }
  CUresult devicePrimaryCtxRelease(CUdevice device) override {
    return f.cuDevicePrimaryCtxRelease(device);
  }
  CUresult ctxPushCurrent(CUcontext context) override {
    return f.cuCtxPushCurrent(context);
  }
  CUresult ctxPopCurrent(CUcontext *context) override {
    return f.cuCtxPopCurrent(context);
  }
  CUresult moduleLoadDataEx(CUmodule *module, const void *image,
                            unsigned numOptions, int *options,
                            void **optionValues) override {
    return f.cuModuleLoadDataEx(module, image, numOptions, options,
                                optionValues);
  }
  CUresult moduleUnload(CUmodule module) override {
    return f.cuModuleUnload(module);
  }
  CUresult moduleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) override {
    return f.cuModuleGetFunction(function, module, name);
  }
  CUresult launchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned sharedMemBytes,
                        CUstream stream, void **params,
                        void **extra) override {
    return f.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                            blockZ, sharedMemBytes, stream, params, extra);
  }
  CUresult memAllocManaged(CUdeviceptr *pointer, size_t bytes,
                           unsigned flags) override {
    return f.cuMemAllocManaged(pointer, bytes, flags);
  }
  CUresult memAlloc(CUdeviceptr *pointer, size_t bytes) override {
    return f.cuMemAlloc(pointer, bytes);
  }
  CUresult memFree(CUdeviceptr pointer) override {
    return f.cuMemFree(pointer);
  }
  CUresult memcpyHtoD(CUdeviceptr destination, const void *source,
                      size_t bytes) override {
    return f.cuMemcpyHtoD(destination, source, bytes);
  }
  CUresult memcpyDtoH(void *destination, CUdeviceptr source,
                      size_t bytes) override {
    return f.cuMemcpyDtoH(destination, source, bytes);
  }
  CUresult memcpy(CUdeviceptr destination, CUdeviceptr source,
                  size_t bytes) override {
    return f.cuMemcpy(destination, source, bytes);
  }
  CUresult memcpyAsync(CUdeviceptr destination, CUdeviceptr source,
                       size_t bytes, CUstream stream) override {
    return f.cuMemcpyAsync(destination, source, bytes, stream);
  }
  CUresult memsetD32(CUdeviceptr destination, unsigned value,
                     size_t count) override {
    return f.cuMemsetD32(destination, value, count);
  }
  CUresult streamCreate(CUstream *stream, unsigned flags) override {
    return f.cuStreamCreate(stream, flags);
  }
  CUresult streamSynchronize(CUstream stream) override {
    return f.cuStreamSynchronize(stream);
  }
  CUresult streamDestroy(CUstream stream) override {
    return f.cuStreamDestroy(stream);
  }
  std::string describe(CUresult result) override {
    const char *name = nullptr;
    const char *text = nullptr;
    std::string description = "CUDA error " + std::to_string(result);
    if (f.cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
      description += std::string(" ") + name;
    if (f.cuGetErrorString(result, &text) == CUDA_SUCCESS && text)
      description += std::string(": ") + text;
    return description;
  }

private:
  void *handle;
  DriverFunctions f;
};

template <typename T>
bool resolve(void *handle, const char *name, T &function, std::string &error) {
  function = reinterpret_cast<T>(dlsym(handle, name));
  if (!function)
    error = std::string("the CUDA driver lacks '") + name + "'";
  return function != nullptr;
}

std::mutex loaderMutex;
CudaDriverLoader testLoader;

} // namespace

std::unique_ptr<CudaDriver> loadCudaDriver(const std::string &library,
                                           std::string &error) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    error = "no CUDA driver found (" + library + " cannot be loaded: " +
            (reason ? reason : "unknown reason") +
            "); CUDA modules need an NVIDIA driver";
    return nullptr;
  }
  DriverFunctions f{};
  bool ok = resolve(handle, "cuInit", f.cuInit, error) &&
            resolve(handle, "cuDeviceGetCount", f.cuDeviceGetCount, error) &&
            resolve(handle, "cuDeviceGet", f.cuDeviceGet, error) &&
            resolve(handle, "cuDevicePrimaryCtxRetain",
                    f.cuDevicePrimaryCtxRetain, error) &&
            resolve(handle, "cuDevicePrimaryCtxRelease_v2",
                    f.cuDevicePrimaryCtxRelease, error) &&
            resolve(handle, "cuCtxPushCurrent_v2", f.cuCtxPushCurrent,
                    error) &&
            resolve(handle, "cuCtxPopCurrent_v2", f.cuCtxPopCurrent, error) &&
            resolve(handle, "cuModuleLoadDataEx", f.cuModuleLoadDataEx,
                    error) &&
            resolve(handle, "cuModuleUnload", f.cuModuleUnload, error) &&
            resolve(handle, "cuModuleGetFunction", f.cuModuleGetFunction,
                    error) &&
            resolve(handle, "cuLaunchKernel", f.cuLaunchKernel, error) &&
            resolve(handle, "cuMemAllocManaged", f.cuMemAllocManaged,
                    error) &&
            resolve(handle, "cuMemAlloc_v2", f.cuMemAlloc, error) &&
            resolve(handle, "cuMemFree_v2", f.cuMemFree, error) &&
            resolve(handle, "cuMemcpyHtoD_v2", f.cuMemcpyHtoD, error) &&
            resolve(handle, "cuMemcpyDtoH_v2", f.cuMemcpyDtoH, error) &&
            resolve(handle, "cuMemcpy", f.cuMemcpy, error) &&
            resolve(handle, "cuMemcpyAsync", f.cuMemcpyAsync, error) &&
            resolve(handle, "cuMemsetD32_v2", f.cuMemsetD32, error) &&
            resolve(handle, "cuStreamCreate", f.cuStreamCreate, error) &&
            resolve(handle, "cuStreamSynchronize", f.cuStreamSynchronize,
                    error) &&
            resolve(handle, "cuStreamDestroy_v2", f.cuStreamDestroy,
                    error) &&
            resolve(handle, "cuGetErrorName", f.cuGetErrorName, error) &&
            resolve(handle, "cuGetErrorString", f.cuGetErrorString, error);
  if (!ok) {
    dlclose(handle);
    return nullptr;
  }
  return std::make_unique<DlopenCudaDriver>(handle, f);
}

std::unique_ptr<CudaDriver> loadDefaultCudaDriver(std::string &error) {
  CudaDriverLoader loader;
  {
    std::lock_guard<std::mutex> lock(loaderMutex);
    loader = testLoader;
  }
  if (loader)
    return loader(error);
  return loadCudaDriver("libcuda.so.1", error);
}

void setCudaDriverLoaderForTesting(CudaDriverLoader loader) {
  std::lock_guard<std::mutex> lock(loaderMutex);
  testLoader = std::move(loader);
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
