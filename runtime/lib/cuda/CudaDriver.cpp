//===- CudaDriver.cpp - The driver API through dlopen ---------------------===//

#include "CudaDriver.h"

#include <cstdint>
#include <dlfcn.h>
#include <mutex>
#include <type_traits>

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
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
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
  // Optional: graphs with conditional nodes and the JIT linker. NULL where
  // the driver lacks one; the graph path is then not taken.
  CUresult (*cuGraphCreate)(CUgraph *, unsigned);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuGraphConditionalHandleCreate)(CUgraphConditionalHandle *,
                                             CUgraph, CUcontext, unsigned,
                                             unsigned);
  CUresult (*cuGraphAddNode_v2)(CUgraphNode *, CUgraph, const CUgraphNode *,
                                const void *, size_t, void *);
  CUresult (*cuStreamBeginCaptureToGraph)(CUstream, CUgraph,
                                          const CUgraphNode *, const void *,
                                          size_t, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuStreamGetCaptureInfo_v3)(CUstream, int *, unsigned long long *,
                                        CUgraph *, const CUgraphNode **,
                                        const void **, size_t *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphExecUpdate_v2)(CUgraphExec, CUgraph, void *);
  CUresult (*cuLinkCreate_v2)(unsigned, int *, void **, CUlinkState *);
  CUresult (*cuLinkAddData_v2)(CUlinkState, int, void *, size_t, const char *,
                               unsigned, int *, void **);
  CUresult (*cuLinkAddFile_v2)(CUlinkState, int, const char *, unsigned, int *,
                               void **);
  CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
  CUresult (*cuLinkDestroy)(CUlinkState);
  // Optional: events, for tuned call sites.
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
};

/// cuda.h's CUDA_CONDITIONAL_NODE_PARAMS.
struct ConditionalNodeParams {
  CUgraphConditionalHandle handle;
  int type;
  unsigned size;
  CUgraph *bodies;
  CUcontext context;
};

/// cuda.h's CUgraphNodeParams: a type, then a union of 29 long longs.
struct GraphNodeParams {
  int type;
  int reserved0[3];
  union {
    long long reserved1[29];
    ConditionalNodeParams conditional;
  };
  long long reserved2;
};
static_assert(sizeof(GraphNodeParams) == 256,
              "CUgraphNodeParams is 256 bytes in cuda.h");
/// CU_GRAPH_NODE_TYPE_CONDITIONAL.
constexpr int kConditionalNodeType = 13;

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
  CUresult deviceGetAttribute(int *value, int attribute,
                              CUdevice device) override {
    return f.cuDeviceGetAttribute(value, attribute, device);
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
  CUresult funcSetAttribute(CUfunction function, int attribute,
                            int value) override {
    return f.cuFuncSetAttribute(function, attribute, value);
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

  CUresult eventCreate(CUevent *event, unsigned flags) override {
    return f.cuEventCreate && f.cuEventRecord && f.cuEventSynchronize &&
                   f.cuEventElapsedTime && f.cuEventDestroy
               ? f.cuEventCreate(event, flags)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult eventRecord(CUevent event, CUstream stream) override {
    return f.cuEventRecord ? f.cuEventRecord(event, stream)
                           : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult eventSynchronize(CUevent event) override {
    return f.cuEventSynchronize ? f.cuEventSynchronize(event)
                                : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult eventElapsedTime(float *milliseconds, CUevent start,
                            CUevent stop) override {
    return f.cuEventElapsedTime ? f.cuEventElapsedTime(milliseconds, start, stop)
                                : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult eventDestroy(CUevent event) override {
    return f.cuEventDestroy ? f.cuEventDestroy(event)
                            : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult graphCreate(CUgraph *graph, unsigned flags) override {
    return f.cuGraphCreate ? f.cuGraphCreate(graph, flags)
                           : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult graphDestroy(CUgraph graph) override {
    return f.cuGraphDestroy ? f.cuGraphDestroy(graph)
                            : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult graphConditionalHandleCreate(CUgraphConditionalHandle *handle,
                                        CUgraph graph, CUcontext context,
                                        unsigned defaultValue,
                                        unsigned flags) override {
    return f.cuGraphConditionalHandleCreate
               ? f.cuGraphConditionalHandleCreate(handle, graph, context,
                                                  defaultValue, flags)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult graphAddConditionalNode(CUgraphNode *node, CUgraph graph,
                                   const CUgraphNode *dependencies,
                                   size_t count,
                                   CUgraphConditionalHandle handle, int type,
                                   CUcontext context, CUgraph *body) override {
    if (!f.cuGraphAddNode_v2)
      return CUDA_ERROR_NOT_SUPPORTED;
    GraphNodeParams params{};
    params.type = kConditionalNodeType;
    params.conditional.handle = handle;
    params.conditional.type = type;
    params.conditional.size = 1;
    params.conditional.context = context;
    CUresult result =
        f.cuGraphAddNode_v2(node, graph, dependencies, nullptr, count, &params);
    if (result == CUDA_SUCCESS)
      *body = params.conditional.bodies[0];
    return result;
  }
  CUresult
  streamBeginCaptureToGraph(CUstream stream, CUgraph graph,
                            const std::vector<CUgraphNode> &dependencies,
                            int mode) override {
    return f.cuStreamBeginCaptureToGraph
               ? f.cuStreamBeginCaptureToGraph(
                     stream, graph,
                     dependencies.empty() ? nullptr : dependencies.data(),
                     nullptr, dependencies.size(), mode)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult streamEndCapture(CUstream stream, CUgraph *graph) override {
    return f.cuStreamEndCapture ? f.cuStreamEndCapture(stream, graph)
                                : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult streamCaptureDependencies(CUstream stream,
                                     std::vector<CUgraphNode> &nodes) override {
    if (!f.cuStreamGetCaptureInfo_v3)
      return CUDA_ERROR_NOT_SUPPORTED;
    int status = 0;
    const CUgraphNode *dependencies = nullptr;
    const void *edges = nullptr;
    size_t count = 0;
    CUresult result = f.cuStreamGetCaptureInfo_v3(
        stream, &status, nullptr, nullptr, &dependencies, &edges, &count);
    if (result == CUDA_SUCCESS)
      nodes.assign(dependencies, dependencies + count);
    return result;
  }
  CUresult graphInstantiate(CUgraphExec *exec, CUgraph graph) override {
    return f.cuGraphInstantiateWithFlags
               ? f.cuGraphInstantiateWithFlags(exec, graph, 0)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult graphLaunch(CUgraphExec exec, CUstream stream) override {
    return f.cuGraphLaunch ? f.cuGraphLaunch(exec, stream)
                           : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult graphExecUpdate(CUgraphExec exec, CUgraph graph) override {
    if (!f.cuGraphExecUpdate_v2)
      return CUDA_ERROR_NOT_SUPPORTED;
    // cuda.h's CUgraphExecUpdateResultInfo: the result, then the nodes
    // an error concerns.
    struct {
      int result;
      CUgraphNode errorNode, errorFromNode;
    } info{};
    return f.cuGraphExecUpdate_v2(exec, graph, &info);
  }
  CUresult graphExecDestroy(CUgraphExec exec) override {
    return f.cuGraphExecDestroy ? f.cuGraphExecDestroy(exec)
                                : CUDA_ERROR_NOT_SUPPORTED;
  }
  CUresult linkWithLibrary(const std::string &ptx, const std::string &library,
                           std::string &image, std::string &log) override {
    if (!f.cuLinkCreate_v2 || !f.cuLinkAddData_v2 || !f.cuLinkAddFile_v2 ||
        !f.cuLinkComplete || !f.cuLinkDestroy)
      return CUDA_ERROR_NOT_SUPPORTED;
    char errorLog[4096] = {0};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER,
                     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {errorLog,
                      reinterpret_cast<void *>(uintptr_t(sizeof(errorLog)))};
    CUlinkState state = nullptr;
    CUresult result = f.cuLinkCreate_v2(2, options, values, &state);
    if (result != CUDA_SUCCESS)
      return result;
    std::string text = ptx;
    result = f.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, text.data(),
                                text.size() + 1, "kiln_graph_loops", 0, nullptr,
                                nullptr);
    if (result == CUDA_SUCCESS)
      result = f.cuLinkAddFile_v2(state, CU_JIT_INPUT_LIBRARY, library.c_str(),
                                  0, nullptr, nullptr);
    void *cubin = nullptr;
    size_t bytes = 0;
    if (result == CUDA_SUCCESS)
      result = f.cuLinkComplete(state, &cubin, &bytes);
    if (result == CUDA_SUCCESS)
      image.assign(static_cast<const char *>(cubin), bytes);
    errorLog[sizeof(errorLog) - 1] = '\0';
    log = errorLog;
    f.cuLinkDestroy(state);
    return result;
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
  bool ok =
      resolve(handle, "cuInit", f.cuInit, error) &&
      resolve(handle, "cuDeviceGetCount", f.cuDeviceGetCount, error) &&
      resolve(handle, "cuDeviceGet", f.cuDeviceGet, error) &&
      resolve(handle, "cuDeviceGetAttribute", f.cuDeviceGetAttribute, error) &&
      resolve(handle, "cuDevicePrimaryCtxRetain", f.cuDevicePrimaryCtxRetain,
              error) &&
      resolve(handle, "cuDevicePrimaryCtxRelease_v2",
              f.cuDevicePrimaryCtxRelease, error) &&
      resolve(handle, "cuCtxPushCurrent_v2", f.cuCtxPushCurrent, error) &&
      resolve(handle, "cuCtxPopCurrent_v2", f.cuCtxPopCurrent, error) &&
      resolve(handle, "cuModuleLoadDataEx", f.cuModuleLoadDataEx, error) &&
      resolve(handle, "cuModuleUnload", f.cuModuleUnload, error) &&
      resolve(handle, "cuModuleGetFunction", f.cuModuleGetFunction, error) &&
      resolve(handle, "cuFuncSetAttribute", f.cuFuncSetAttribute, error) &&
      resolve(handle, "cuLaunchKernel", f.cuLaunchKernel, error) &&
      resolve(handle, "cuMemAllocManaged", f.cuMemAllocManaged, error) &&
      resolve(handle, "cuMemAlloc_v2", f.cuMemAlloc, error) &&
      resolve(handle, "cuMemFree_v2", f.cuMemFree, error) &&
      resolve(handle, "cuMemcpyHtoD_v2", f.cuMemcpyHtoD, error) &&
      resolve(handle, "cuMemcpyDtoH_v2", f.cuMemcpyDtoH, error) &&
      resolve(handle, "cuMemcpy", f.cuMemcpy, error) &&
      resolve(handle, "cuMemcpyAsync", f.cuMemcpyAsync, error) &&
      resolve(handle, "cuMemsetD32_v2", f.cuMemsetD32, error) &&
      resolve(handle, "cuStreamCreate", f.cuStreamCreate, error) &&
      resolve(handle, "cuStreamSynchronize", f.cuStreamSynchronize, error) &&
      resolve(handle, "cuStreamDestroy_v2", f.cuStreamDestroy, error) &&
      resolve(handle, "cuGetErrorName", f.cuGetErrorName, error) &&
      resolve(handle, "cuGetErrorString", f.cuGetErrorString, error);
  if (!ok) {
    dlclose(handle);
    return nullptr;
  }
  auto optional = [&](const char *name, auto &function) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
        dlsym(handle, name));
  };
  optional("cuGraphCreate", f.cuGraphCreate);
  optional("cuGraphDestroy", f.cuGraphDestroy);
  optional("cuGraphConditionalHandleCreate", f.cuGraphConditionalHandleCreate);
  optional("cuGraphAddNode_v2", f.cuGraphAddNode_v2);
  optional("cuStreamBeginCaptureToGraph", f.cuStreamBeginCaptureToGraph);
  optional("cuStreamEndCapture", f.cuStreamEndCapture);
  optional("cuStreamGetCaptureInfo_v3", f.cuStreamGetCaptureInfo_v3);
  optional("cuGraphInstantiateWithFlags", f.cuGraphInstantiateWithFlags);
  optional("cuGraphLaunch", f.cuGraphLaunch);
  optional("cuGraphExecDestroy", f.cuGraphExecDestroy);
  optional("cuGraphExecUpdate_v2", f.cuGraphExecUpdate_v2);
  optional("cuLinkCreate_v2", f.cuLinkCreate_v2);
  optional("cuLinkAddData_v2", f.cuLinkAddData_v2);
  optional("cuLinkAddFile_v2", f.cuLinkAddFile_v2);
  optional("cuLinkComplete", f.cuLinkComplete);
  optional("cuLinkDestroy", f.cuLinkDestroy);
  optional("cuEventCreate", f.cuEventCreate);
  optional("cuEventRecord", f.cuEventRecord);
  optional("cuEventSynchronize", f.cuEventSynchronize);
  // cuda.h maps cuEventElapsedTime to the _v2 name from CUDA 12.8 on.
  optional("cuEventElapsedTime_v2", f.cuEventElapsedTime);
  if (!f.cuEventElapsedTime)
    optional("cuEventElapsedTime", f.cuEventElapsedTime);
  optional("cuEventDestroy_v2", f.cuEventDestroy);
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
