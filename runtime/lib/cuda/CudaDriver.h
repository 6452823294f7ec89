//===- CudaDriver.h - The CUDA driver API, behind an interface --*- C++ -*-===//
//
// The runtime reaches CUDA only through the driver API, loaded with
// dlopen("libcuda.so.1") when a CUDA module is loaded, so that it builds and
// runs on machines without CUDA. The entry points it uses are methods of
// CudaDriver; the real implementation forwards to the dlsym'ed functions,
// and tests substitute a fake that records calls and simulates a device.
// The CUDA types are declared here as the ABI defines them (no cuda.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDADRIVER_H
#define KILN_RUNTIME_LIB_CUDA_CUDADRIVER_H

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphNode = struct CUgraphNode_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUlinkState = struct CUlinkState_st *;
using CUgraphConditionalHandle = unsigned long long;
using CUevent = struct CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
/// What cuInit returns on a machine with a driver but no CUDA device.
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
/// CUjit_option values used to collect the PTX JIT's logs.
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
/// CU_MEM_ATTACH_GLOBAL, for cuMemAllocManaged.
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
/// What the graph entry points return where the driver has none.
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
/// CUjitInputType values for the linker.
constexpr int CU_JIT_INPUT_PTX = 1;
constexpr int CU_JIT_INPUT_LIBRARY = 4;
/// CUgraphConditionalNodeType and the handle flag that resets a handle to
/// its default value at each launch of its graph.
constexpr int CU_GRAPH_COND_TYPE_IF = 0;
constexpr int CU_GRAPH_COND_TYPE_WHILE = 1;
constexpr unsigned CU_GRAPH_COND_ASSIGN_DEFAULT = 1;
/// CUstreamCaptureMode: the capturing thread may still allocate memory.
constexpr int CU_STREAM_CAPTURE_MODE_RELAXED = 2;
/// CUdevice_attribute values of the compute capability.
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
/// CUdevice_attribute: the shared memory a block may have where its kernel
/// opts in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
/// CUfunction_attribute: the dynamic shared memory a launch of the kernel
/// may ask for. A launch that asks for more than 48 KiB fails unless the
/// kernel's attribute allows it.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
/// The shared memory a block may have without opting in, on every device.
constexpr unsigned kSharedBytesWithoutOptIn = 48 * 1024;

/// The driver entry points the runtime uses, named after them.
class CudaDriver {
public:
  virtual ~CudaDriver() = default;
  virtual CUresult init(unsigned flags) = 0;
  virtual CUresult deviceGetCount(int *count) = 0;
  virtual CUresult deviceGet(CUdevice *device, int ordinal) = 0;
  virtual CUresult deviceGetAttribute(int *value, int attribute,
                                      CUdevice device) = 0;
  virtual CUresult devicePrimaryCtxRetain(CUcontext *context,
                                          CUdevice device) = 0;
  virtual CUresult devicePrimaryCtxRelease(CUdevice device) = 0;
  virtual CUresult ctxPushCurrent(CUcontext context) = 0;
  virtual CUresult ctxPopCurrent(CUcontext *context) = 0;
  virtual CUresult moduleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned numOptions, int *options,
                                    void **optionValues) = 0;
  virtual CUresult moduleUnload(CUmodule module) = 0;
  virtual CUresult moduleGetFunction(CUfunction *function, CUmodule module,
                                     const char *name) = 0;
  virtual CUresult funcSetAttribute(CUfunction function, int attribute,
                                    int value) = 0;
  virtual CUresult launchKernel(CUfunction function, unsigned gridX,
                                unsigned gridY, unsigned gridZ,
                                unsigned blockX, unsigned blockY,
                                unsigned blockZ, unsigned sharedMemBytes,
                                CUstream stream, void **params,
                                void **extra) = 0;
  virtual CUresult memAllocManaged(CUdeviceptr *pointer, size_t bytes,
                                   unsigned flags) = 0;
  /// cuMemAlloc: device memory the host cannot touch.
  virtual CUresult memAlloc(CUdeviceptr *pointer, size_t bytes) = 0;
  virtual CUresult memFree(CUdeviceptr pointer) = 0;
  virtual CUresult memcpyHtoD(CUdeviceptr destination, const void *source,
                              size_t bytes) = 0;
  virtual CUresult memcpyDtoH(void *destination, CUdeviceptr source,
                              size_t bytes) = 0;
  /// cuMemcpy: either side may be host or device (unified addressing).
  virtual CUresult memcpy(CUdeviceptr destination, CUdeviceptr source,
                          size_t bytes) = 0;
  /// cuMemcpyAsync: ordered on `stream` (unified addressing).
  virtual CUresult memcpyAsync(CUdeviceptr destination, CUdeviceptr source,
                               size_t bytes, CUstream stream) = 0;
  virtual CUresult memsetD32(CUdeviceptr destination, unsigned value,
                             size_t count) = 0;
  virtual CUresult streamCreate(CUstream *stream, unsigned flags) = 0;
  virtual CUresult streamSynchronize(CUstream stream) = 0;
  virtual CUresult streamDestroy(CUstream stream) = 0;
  /// The driver's name for `result` (cuGetErrorName/cuGetErrorString).
  virtual std::string describe(CUresult result) = 0;

  // CUDA graphs with conditional nodes (CUDA 12.4 and later) and the JIT
  // linker, for loops run on the device (CudaGraphLoops.cpp), and graphs
  // of whole calls (CudaGraphCalls.cpp). A driver without them answers
  // CUDA_ERROR_NOT_SUPPORTED, as these defaults do.
  virtual CUresult graphCreate(CUgraph *, unsigned) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult graphDestroy(CUgraph) { return CUDA_ERROR_NOT_SUPPORTED; }
  virtual CUresult graphConditionalHandleCreate(CUgraphConditionalHandle *,
                                                CUgraph, CUcontext, unsigned,
                                                unsigned) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  /// cuGraphAddNode with a conditional node of `type` on `handle` after
  /// `dependencies`; sets `body` to the node's (first) body graph.
  virtual CUresult graphAddConditionalNode(CUgraphNode *, CUgraph,
                                           const CUgraphNode *, size_t,
                                           CUgraphConditionalHandle, int,
                                           CUcontext, CUgraph *) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  /// cuStreamBeginCaptureToGraph: the stream's work goes into `graph`, the
  /// first of it after `dependencies` (nodes of `graph`; none: after
  /// nothing, or where the graph is empty).
  virtual CUresult
  streamBeginCaptureToGraph(CUstream, CUgraph,
                            const std::vector<CUgraphNode> & /*dependencies*/,
                            int) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult streamEndCapture(CUstream, CUgraph *) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  /// The nodes the next captured work on `stream` will depend on.
  virtual CUresult streamCaptureDependencies(CUstream,
                                             std::vector<CUgraphNode> &) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult graphInstantiate(CUgraphExec *, CUgraph) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult graphLaunch(CUgraphExec, CUstream) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult graphExecDestroy(CUgraphExec) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  /// cuGraphExecUpdate: gives `exec` the parameters of `graph`, captured
  /// from the same work with other buffers; fails where the two differ
  /// in more than their nodes' parameters.
  virtual CUresult graphExecUpdate(CUgraphExec, CUgraph) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // CUDA events, which time the variants of a tuned call site
  // (CudaTuning.cpp). A driver without them answers
  // CUDA_ERROR_NOT_SUPPORTED, and the sites run their first variant.
  virtual CUresult eventCreate(CUevent *, unsigned) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult eventRecord(CUevent, CUstream) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult eventSynchronize(CUevent) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  /// The milliseconds from `start` to `stop`, both recorded and reached.
  virtual CUresult eventElapsedTime(float *, CUevent /*start*/,
                                    CUevent /*stop*/) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  virtual CUresult eventDestroy(CUevent) { return CUDA_ERROR_NOT_SUPPORTED; }
  /// Links `ptx` with the device library archive at `library` into an
  /// image that moduleLoadDataEx takes; `log` receives the linker's errors.
  virtual CUresult linkWithLibrary(const std::string &, const std::string &,
                                   std::string &, std::string &) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
};

/// Loads the driver library `library` (normally "libcuda.so.1") and
/// resolves every entry point. Returns NULL and an error starting with
/// "no CUDA driver found" when the library is absent, or naming the missing
/// entry point.
std::unique_ptr<CudaDriver> loadCudaDriver(const std::string &library,
                                           std::string &error);

/// How the C API obtains a driver: loadCudaDriver("libcuda.so.1") unless a
/// test installed another loader. Returns NULL with a message on failure.
using CudaDriverLoader =
    std::function<std::unique_ptr<CudaDriver>(std::string &error)>;
std::unique_ptr<CudaDriver> loadDefaultCudaDriver(std::string &error);

/// Replaces the loader used by loadDefaultCudaDriver (NULL restores the
/// system one), for tests that run the CUDA path against a fake driver.
void setCudaDriverLoaderForTesting(CudaDriverLoader loader);

} // namespace cuda
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDADRIVER_H
