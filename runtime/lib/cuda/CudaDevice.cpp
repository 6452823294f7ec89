//===- CudaDevice.cpp - One module's CUDA device, stream and kernels ------===//

#include "CudaDevice.h"

#include "BlasPluginLoader.h"
#include "LibraryBuffers.h"

#include "api/Status.h"

#include "kiln/CudaLibraryAbi.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {
thread_local CudaDevice *currentDevice = nullptr;

/// The workspace cuBLASLt may use per product: what NVIDIA recommends for
/// Hopper, which covers every earlier architecture's needs too.
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

/// The workspace a convolution may use: cuDNN's fastest engines for
/// ResNet-sized convolutions ask for a few to a few tens of MiB; one that
/// asks for more is passed over for the next the heuristic ranks.
constexpr size_t kDnnWorkspaceBytes = size_t(128) << 20;

/// Makes a device current for the extent of a call.
struct CurrentDevice {
  explicit CurrentDevice(CudaDevice *device) { currentDevice = device; }
  ~CurrentDevice() { currentDevice = nullptr; }
};

CUdeviceptr toDevice(const void *pointer) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}
void *toHost(CUdeviceptr pointer) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
}

/// An integer environment variable, or -1 when it is unset or not one.
long integerVariable(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 ? value : -1;
}
} // namespace

kiln_status_t chooseDeviceOrdinal(int count, int &ordinal) {
  if (const char *text = std::getenv("KILN_CUDA_DEVICE"); text && *text) {
    long value = integerVariable("KILN_CUDA_DEVICE");
    if (value < 0 || value >= count)
      return makeStatus(KILN_STATUS_DEVICE_UNAVAILABLE,
                        std::string("CUDA: KILN_CUDA_DEVICE is '") + text +
                            "', but the devices are 0 to " +
                            std::to_string(count - 1));
    ordinal = int(value);
    return nullptr;
  }
  // Ranks of one machine take one device each, as the launcher numbers
  // them on that machine (OpenMPI, MPICH/Intel MPI, Slurm).
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID"})
    if (long local = integerVariable(name); local >= 0) {
      ordinal = int(local % count);
      return nullptr;
    }
  ordinal = 0;
  return nullptr;
}

CudaDevice *CudaDevice::current() { return currentDevice; }

/// Loads the driver, initializes it and counts its devices: 0, with
/// \p noDevice saying so, when cuInit finds none. Only a missing driver is
/// KILN_STATUS_DEVICE_UNAVAILABLE here; any other failure is a device error,
/// so that callers (and tests) do not mistake a broken setup for an absent
/// one.
static kiln_status_t startDriver(std::unique_ptr<CudaDriver> &driver,
                                 int &count, std::string &noDevice) {
  count = 0;
  std::string error;
  driver = loadDefaultCudaDriver(error);
  if (!driver)
    return makeStatus(error.rfind("no CUDA driver found", 0) == 0
                          ? KILN_STATUS_DEVICE_UNAVAILABLE
                          : KILN_STATUS_DEVICE_ERROR,
                      error);
  if (CUresult result = driver->init(0)) {
    if (result == CUDA_ERROR_NO_DEVICE) {
      noDevice = "CUDA: no CUDA device (cuInit: " + driver->describe(result) +
                 ")";
      return nullptr;
    }
    return makeStatus(KILN_STATUS_DEVICE_ERROR,
                      "CUDA: cuInit failed: " + driver->describe(result));
  }
  if (CUresult result = driver->deviceGetCount(&count))
    return makeStatus(KILN_STATUS_DEVICE_ERROR,
                      "CUDA: cuDeviceGetCount failed: " +
                          driver->describe(result));
  if (count <= 0)
    noDevice = "CUDA: the driver reports no CUDA device";
  return nullptr;
}

kiln_status_t countDevices(int &count) {
  std::unique_ptr<CudaDriver> driver;
  std::string noDevice;
  return startDriver(driver, count, noDevice);
}

kiln_status_t computeCapability(int &major, int &minor) {
  std::unique_ptr<CudaDriver> driver;
  std::string noDevice;
  int count = 0, ordinal = 0;
  if (kiln_status_t status = startDriver(driver, count, noDevice))
    return status;
  if (count <= 0)
    return makeStatus(KILN_STATUS_DEVICE_UNAVAILABLE, noDevice);
  if (kiln_status_t status = chooseDeviceOrdinal(count, ordinal))
    return status;
  CUdevice device = 0;
  if (CUresult result = driver->deviceGet(&device, ordinal))
    return makeStatus(KILN_STATUS_DEVICE_ERROR,
                      "CUDA: cuDeviceGet(" + std::to_string(ordinal) +
                          ") failed: " + driver->describe(result));
  for (auto [attribute, value] :
       {std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
        std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor}})
    if (CUresult result = driver->deviceGetAttribute(value, attribute, device))
      return makeStatus(KILN_STATUS_DEVICE_ERROR,
                        "CUDA: cuDeviceGetAttribute failed: " +
                            driver->describe(result));
  return nullptr;
}

kiln_status_t CudaDevice::open() {
  std::lock_guard<std::mutex> lock(callMutex);
  return openLocked();
}

kiln_status_t CudaDevice::openLocked() {
  if (streamHandle)
    return nullptr;
  // Only a missing driver or a machine without a device is "unavailable".
  // A failed attempt leaves nothing behind, so a later one starts afresh.
  std::unique_ptr<CudaDevice> cuda(new CudaDevice());
  int count = 0;
  std::string noDevice;
  if (kiln_status_t status = startDriver(cuda->driver, count, noDevice))
    return status;
  if (count <= 0)
    return makeStatus(KILN_STATUS_DEVICE_UNAVAILABLE, noDevice);
  CudaDriver &d = *cuda->driver;
  auto failed = [&](const std::string &what, CUresult result) {
    return makeStatus(KILN_STATUS_DEVICE_ERROR,
                      "CUDA: " + what + " failed: " + d.describe(result));
  };
  int ordinal = 0;
  if (kiln_status_t status = chooseDeviceOrdinal(count, ordinal))
    return status;
  if (CUresult result = d.deviceGet(&cuda->device, ordinal))
    return failed("cuDeviceGet", result);
  if (CUresult result = d.devicePrimaryCtxRetain(&cuda->context, cuda->device))
    return failed("cuDevicePrimaryCtxRetain", result);
  cuda->contextRetained = true;
  if (CUresult result = d.ctxPushCurrent(cuda->context))
    return failed("cuCtxPushCurrent", result);
  CUresult created = d.streamCreate(&cuda->streamHandle, 0);
  CUcontext popped = nullptr;
  d.ctxPopCurrent(&popped);
  if (created)
    return failed("cuStreamCreate", created);
  driver = std::move(cuda->driver);
  device = cuda->device;
  context = cuda->context;
  contextRetained = true;
  streamHandle = cuda->streamHandle;
  cuda->contextRetained = false;
  deviceOrdinal = ordinal;
  return nullptr;
}

int CudaDevice::ordinal() {
  std::lock_guard<std::mutex> lock(callMutex);
  return streamHandle ? deviceOrdinal : -1;
}

CudaDevice::~CudaDevice() {
  if (!contextRetained)
    return;
  if (driver->ctxPushCurrent(context) == CUDA_SUCCESS) {
    if (streamHandle)
      driver->streamSynchronize(streamHandle);
    close(blas);
    close(dnn);
    for (auto &[entry, call] : graphCalls)
      for (GraphCall::Graph &graph : call->graphs)
        driver->graphExecDestroy(graph.exec);
    for (auto &[number, site] : tunedSites)
      dropEvents(site);
    for (auto &[pointer, allocation] : allocations)
      driver->memFree(pointer);
    for (auto &[constant, copy] : constants)
      driver->memFree(copy);
    for (auto &[image, module] : modules)
      driver->moduleUnload(module);
    if (streamHandle)
      driver->streamDestroy(streamHandle);
    CUcontext popped = nullptr;
    driver->ctxPopCurrent(&popped);
  }
  driver->devicePrimaryCtxRelease(device);
}

bool CudaDevice::check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  fail(std::string(what) + " failed: " + driver->describe(result));
  return false;
}

void CudaDevice::fail(const std::string &message) {
  if (failure.empty())
    failure = message;
}

void CudaDevice::refuse(const std::string &message) {
  if (!failure.empty())
    return;
  failure = message;
  refused = true;
}

template <typename Work> kiln_status_t CudaDevice::withDevice(Work &&work) {
  std::lock_guard<std::mutex> lock(callMutex);
  if (kiln_status_t status = openLocked())
    return status;
  if (CUresult result = driver->ctxPushCurrent(context))
    return makeStatus(KILN_STATUS_DEVICE_ERROR,
                      "CUDA: cuCtxPushCurrent failed: " +
                          driver->describe(result));
  failure.clear();
  refused = false;
  work();
  CUcontext popped = nullptr;
  driver->ctxPopCurrent(&popped);
  if (!failure.empty())
    return makeStatus(KILN_STATUS_DEVICE_ERROR, "CUDA: " + failure);
  return nullptr;
}

kiln_status_t CudaDevice::call(void (*entry)(void **),
                               const std::vector<CallBuffer> &inputs,
                               const std::vector<CallBuffer> &outputs) {
  return withDevice([&] { runCall(entry, inputs, outputs); });
}

void CudaDevice::runCall(void (*entry)(void **),
                         const std::vector<CallBuffer> &inputs,
                         const std::vector<CallBuffer> &outputs) {
  ++counters.calls;
  CurrentDevice scope(this);

  // Host inputs in, device buffers for host outputs; each at least one
  // byte so that every argument is a distinct valid pointer. Arguments are
  // device memory: the compiled host code never touches their elements.
  std::vector<void *> args;
  for (const CallBuffer &input : inputs) {
    if (input.onDevice) {
      args.push_back(input.data);
      continue;
    }
    void *buffer = allocate(input.bytes ? input.bytes : 1, false);
    if (buffer && input.bytes)
      check(driver->memcpyHtoD(toDevice(buffer), input.data, input.bytes),
            "cuMemcpyHtoD of an input");
    args.push_back(buffer);
  }
  for (const CallBuffer &output : outputs)
    args.push_back(output.onDevice
                       ? output.data
                       : allocate(output.bytes ? output.bytes : 1, false));

  callEntry = entry;
  callArgs = &args;
  if (failure.empty())
    runEntry(entry, args);
  callEntry = nullptr;
  callArgs = nullptr;
  synchronize();
  for (size_t i = 0; i < outputs.size() && failure.empty(); ++i)
    if (outputs[i].bytes && !outputs[i].onDevice)
      check(driver->memcpyDtoH(outputs[i].data,
                               toDevice(args[inputs.size() + i]),
                               outputs[i].bytes),
            "cuMemcpyDtoH of an output");

  // The arguments and whatever the host code left allocated go back to the
  // pool (after a failure the stream may still hold work using them), but
  // for the buffers that graphs of calls hold.
  if (!failure.empty())
    driver->streamSynchronize(streamHandle);
  std::vector<std::pair<uint64_t, CUdeviceptr>> left;
  for (auto [buffer, order] : liveBuffers)
    if (!heldByGraphs.count(buffer))
      left.push_back({order, buffer});
  std::sort(left.begin(), left.end());
  for (auto [order, buffer] : left)
    returnToPool(buffer);
  liveBuffers.clear();
}

kiln_status_t CudaDevice::createResident(size_t bytes, const void *source,
                                         bool sourceOnDevice, void *&buffer) {
  buffer = nullptr;
  return withDevice([&] {
    void *made = allocate(bytes ? bytes : 1, false);
    if (!made)
      return;
    if (source && bytes)
      check(sourceOnDevice
                ? driver->memcpyAsync(toDevice(made), toDevice(source), bytes,
                                      streamHandle)
                : driver->memcpyHtoD(toDevice(made), source, bytes),
            "copying a tensor to the device");
    synchronize();
    if (!failure.empty()) {
      release(made);
      return;
    }
    // Not a buffer of a call: it stays out of the pool until released.
    liveBuffers.erase(toDevice(made));
    buffer = made;
  });
}

kiln_status_t CudaDevice::copyToHost(void *destination, const void *source,
                                     size_t bytes) {
  return withDevice([&] {
    if (bytes)
      check(driver->memcpyDtoH(destination, toDevice(source), bytes),
            "copying a tensor from the device");
  });
}

void CudaDevice::releaseResident(void *buffer) {
  if (!buffer)
    return;
  std::lock_guard<std::mutex> lock(callMutex);
  if (allocations.count(toDevice(buffer)))
    returnToPool(toDevice(buffer));
}

bool CudaDevice::sharesMemoryWith(CudaDevice &other) {
  if (&other == this)
    return true;
  CUcontext mine = nullptr;
  {
    std::lock_guard<std::mutex> lock(callMutex);
    if (kiln_status_t status = openLocked()) {
      kiln_status_free(status);
      return false;
    }
    mine = context;
  }
  std::lock_guard<std::mutex> lock(other.callMutex);
  return other.contextRetained && other.context == mine;
}

CUmodule CudaDevice::loadModule(const void *image, int optLevel) {
  if (!failure.empty())
    return nullptr;
  auto cached = modules.find(image);
  if (cached != modules.end())
    return cached->second;
  // The JIT's logs: the error log explains a rejected image.
  char errorLog[8192] = {0};
  char infoLog[8192] = {0};
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {errorLog,
                    reinterpret_cast<void *>(uintptr_t(sizeof(errorLog))),
                    infoLog,
                    reinterpret_cast<void *>(uintptr_t(sizeof(infoLog))),
                    reinterpret_cast<void *>(uintptr_t(
                        optLevel < 0 ? 0 : optLevel > 4 ? 4 : optLevel))};
  CUmodule module = nullptr;
  CUresult result = driver->moduleLoadDataEx(&module, image, 5, options,
                                             values);
  if (result != CUDA_SUCCESS) {
    errorLog[sizeof(errorLog) - 1] = '\0';
    std::string message =
        "loading the kernels' PTX (cuModuleLoadDataEx) failed: " +
        driver->describe(result);
    if (errorLog[0])
      message += "\nJIT error log:\n" + std::string(errorLog);
    fail(message);
    return nullptr;
  }
  modules.emplace(image, module);
  return module;
}

CUfunction CudaDevice::getFunction(CUmodule module, const char *name) {
  if (!failure.empty() || !module || !name)
    return nullptr;
  auto key = std::make_pair(module, std::string(name));
  auto cached = functions.find(key);
  if (cached != functions.end())
    return cached->second;
  CUfunction function = nullptr;
  if (!check(driver->moduleGetFunction(&function, module, name),
             (std::string("cuModuleGetFunction('") + name + "')").c_str()))
    return nullptr;
  functions.emplace(std::move(key), function);
  return function;
}

void CudaDevice::launch(CUfunction function, int64_t gridX, int64_t gridY,
                        int64_t gridZ, int64_t blockX, int64_t blockY,
                        int64_t blockZ, int32_t sharedMemBytes,
                        void **params, void **extra) {
  if (!failure.empty())
    return;
  if (!function) {
    fail("a kernel launch has no kernel");
    return;
  }
  for (int64_t extent : {gridX, gridY, gridZ, blockX, blockY, blockZ})
    if (extent <= 0 || extent > int64_t(UINT32_MAX)) {
      fail("a kernel launch has a grid or block extent of " +
           std::to_string(extent));
      return;
    }
  if (sharedMemBytes > int32_t(kSharedBytesWithoutOptIn) &&
      !allowShared(function, sharedMemBytes))
    return;
  ++counters.kernelLaunches;
  check(driver->launchKernel(function, unsigned(gridX), unsigned(gridY),
                             unsigned(gridZ), unsigned(blockX),
                             unsigned(blockY), unsigned(blockZ),
                             unsigned(sharedMemBytes < 0 ? 0 : sharedMemBytes),
                             streamHandle, params, extra),
        "cuLaunchKernel");
}

bool CudaDevice::allowShared(CUfunction function, int32_t bytes) {
  int32_t &allowed = sharedOptIns[function];
  if (allowed >= bytes)
    return true;
  int most = 0;
  if (driver->deviceGetAttribute(
          &most, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
          device) == CUDA_SUCCESS &&
      bytes > most) {
    // Refused before the launch: a tuned call site drops the variant.
    refuse("a kernel needs " + std::to_string(bytes) +
           " bytes of shared memory a block, and this device gives a block at "
           "most " +
           std::to_string(most) +
           " (compile for the device's architecture with --cuda-arch)");
    return false;
  }
  if (!check(
          driver->funcSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"))
    return false;
  allowed = bytes;
  return true;
}

void CudaDevice::synchronize() {
  if (!failure.empty())
    return;
  ++counters.streamSyncs;
  check(driver->streamSynchronize(streamHandle), "cuStreamSynchronize");
}

void *CudaDevice::allocate(uint64_t bytes, bool hostShared) {
  // Sizes are kept in 256-byte steps; a pooled buffer serves a request of
  // at least half its size.
  size_t size = (std::max<uint64_t>(bytes, 1) + 255) / 256 * 256;
  // A capture takes the buffers graphs hold first (its function's, then
  // other functions'), and holds whatever else it allocates.
  if (capturingCall) {
    if (void *held = allocateForCapture(size, hostShared))
      return held;
  }
  std::multimap<size_t, CUdeviceptr> &free = pool[hostShared];
  auto pooled = free.lower_bound(size);
  if (pooled != free.end() && pooled->first / 2 <= size) {
    CUdeviceptr pointer = pooled->second;
    free.erase(pooled);
    liveBuffers[pointer] = ++handedOut;
    if (capturingCall)
      holdForCapture(pointer);
    return toHost(pointer);
  }
  CUdeviceptr pointer = 0;
  CUresult result = allocateFromDriver(pointer, size, hostShared);
  if (!check(result, ((hostShared ? "cuMemAllocManaged of " : "cuMemAlloc of ") +
                      std::to_string(bytes) + " bytes")
                         .c_str()))
    return nullptr;
  ++counters.driverAllocations;
  counters.heldBytes += size;
  if (!hostShared)
    counters.largestDeviceAllocation =
        std::max<uint64_t>(counters.largestDeviceAllocation, size);
  allocations[pointer] = {size, hostShared};
  liveBuffers[pointer] = ++handedOut;
  if (capturingCall)
    holdForCapture(pointer);
  return toHost(pointer);
}

CUresult CudaDevice::allocateFromDriver(CUdeviceptr &pointer, size_t bytes,
                                        bool hostShared) {
  auto fromDriver = [&] {
    return hostShared
               ? driver->memAllocManaged(&pointer, bytes, CU_MEM_ATTACH_GLOBAL)
               : driver->memAlloc(&pointer, bytes);
  };
  CUresult result = fromDriver();
  // Before a call fails for want of memory, what the pool and the graphs
  // of calls keep goes back to the driver (not in a capture, which the
  // wait for the device would break: the call then runs again without
  // one, CudaGraphCalls.cpp).
  if (result != CUDA_SUCCESS && !capturingCall && releaseCachedMemory())
    result = fromDriver();
  return result;
}

bool CudaDevice::releaseCachedMemory() {
  for (auto &[entry, call] : graphCalls)
    if (!call->buffers.empty())
      retireGraphCall(*call);
  if (pool[0].empty() && pool[1].empty())
    return false;
  // Pooled buffers may still be in use by queued work.
  driver->streamSynchronize(streamHandle);
  for (std::multimap<size_t, CUdeviceptr> &free : pool) {
    for (auto [size, pointer] : free) {
      driver->memFree(pointer);
      counters.heldBytes -= allocations[pointer].bytes;
      allocations.erase(pointer);
    }
    free.clear();
  }
  return true;
}

void CudaDevice::release(void *pointer) {
  if (!pointer)
    return;
  auto live = liveBuffers.find(toDevice(pointer));
  if (live == liveBuffers.end()) {
    fail("the host code freed a buffer it did not allocate");
    return;
  }
  liveBuffers.erase(live);
  // A buffer graphs of calls hold is not the pool's; in their capture it
  // may be handed out again.
  if (heldByGraphs.count(toDevice(pointer))) {
    if (capturingCall)
      capturingCall->spare.push_back(toDevice(pointer));
    return;
  }
  returnToPool(toDevice(pointer));
}

void CudaDevice::returnToPool(CUdeviceptr pointer) {
  const Allocation &allocation = allocations[pointer];
  pool[allocation.hostShared].emplace(allocation.bytes, pointer);
}

bool CudaDevice::isDevicePointer(const void *pointer) const {
  CUdeviceptr address = toDevice(pointer);
  auto next = allocations.upper_bound(address);
  if (next == allocations.begin())
    return false;
  --next;
  return address < next->first + next->second.bytes;
}

void CudaDevice::copy(void *destination, const void *source, size_t bytes) {
  if (!failure.empty() || !bytes)
    return;
  if (isDevicePointer(source) && !isDevicePointer(destination)) {
    ++counters.deviceToHostCopies;
    counters.deviceToHostBytes += bytes;
  }
  check(driver->memcpyAsync(toDevice(destination), toDevice(source), bytes,
                            streamHandle),
        "cuMemcpyAsync");
}

CUdeviceptr CudaDevice::uploadConstant(const void *constant, int64_t bytes) {
  auto [known, first] = constants.try_emplace({constant, bytes}, 0);
  if (!first)
    return known->second;
  CUdeviceptr copy = 0;
  if (!check(allocateFromDriver(copy, size_t(bytes), /*hostShared=*/false),
             ("cuMemAlloc of a constant of " + std::to_string(bytes) + " bytes")
                 .c_str())) {
    constants.erase(known);
    return 0;
  }
  if (!check(driver->memcpyHtoD(copy, constant, size_t(bytes)),
             "cuMemcpyHtoD of a constant")) {
    driver->memFree(copy);
    constants.erase(known);
    return 0;
  }
  known->second = copy;
  ++counters.driverAllocations;
  ++counters.constantUploads;
  counters.constantBytes += uint64_t(bytes);
  counters.heldBytes += uint64_t(bytes);
  return copy;
}

void CudaDevice::copyConstant(void *destination, const void *constant,
                              int64_t bytes) {
  if (!failure.empty() || bytes <= 0)
    return;
  CUdeviceptr copy = uploadConstant(constant, bytes);
  if (copy)
    check(driver->memcpyAsync(toDevice(destination), copy, size_t(bytes),
                              streamHandle),
          "cuMemcpyAsync of a constant");
}

void *CudaDevice::residentConstant(const void *constant, int64_t bytes) {
  if (!failure.empty())
    return nullptr;
  if (bytes <= 0) {
    fail("a resident constant of " + std::to_string(bytes) + " bytes");
    return nullptr;
  }
  return reinterpret_cast<void *>(uploadConstant(constant, bytes));
}

CudaStats CudaDevice::stats() {
  std::lock_guard<std::mutex> lock(callMutex);
  CudaStats current = counters;
  current.graphBytes = 0;
  for (const auto &[pointer, holders] : heldByGraphs)
    current.graphBytes += allocations[pointer].bytes;
  return current;
}

void CudaDevice::fill32(void *destination, unsigned value, size_t count) {
  if (failure.empty() && count)
    check(driver->memsetD32(toDevice(destination), value, count),
          "cuMemsetD32");
}

template <typename Table>
bool CudaDevice::prepare(Library<Table> &library,
                         kiln_status_t (*load)(const Table *&),
                         size_t workspaceBytes, const char *what) {
  if (!library.table) {
    if (kiln_status_t status = load(library.table)) {
      library.table = nullptr;
      refuse(kiln_status_message(status));
      kiln_status_free(status);
      return false;
    }
  }
  char error[1024] = "";
  if (!library.handle &&
      library.table->create(&library.handle, error, sizeof(error))) {
    library.handle = nullptr;
    refuse(std::string("CUDA ") + what + ": " + error);
    return false;
  }
  if (!library.workspace &&
      !check(driver->memAlloc(&library.workspace, workspaceBytes),
             (std::string("cuMemAlloc of the ") + what + "' workspace")
                 .c_str())) {
    library.workspace = 0;
    return false;
  }
  return true;
}

template <typename Table> void CudaDevice::close(Library<Table> &library) {
  if (library.handle)
    library.table->destroy(library.handle);
  if (library.workspace)
    driver->memFree(library.workspace);
}

/// Why the plug-in could misread `p` (kiln/CudaLibraryAbi.h), or null.
static const char *malformedProduct(const kiln_matmul_problem_t &p) {
  if (p.flags & ~int64_t(KILN_CUDA_MATMUL_FLAGS))
    return "unknown flags";
  bool bias = p.flags & KILN_CUDA_MATMUL_BIAS;
  bool gradientA = p.flags & KILN_CUDA_MATMUL_BIAS_GRADIENT_A;
  bool gradientB = p.flags & KILN_CUDA_MATMUL_BIAS_GRADIENT_B;
  if (int(bias) + int(gradientA) + int(gradientB) > 1)
    return "more than one of the bias and bias gradient flags";
  if (bias != (p.bias != nullptr))
    return "a bias pointer without the bias flag, or the flag without one";
  if ((gradientA || gradientB) != (p.bias_gradient != nullptr))
    return "a bias gradient pointer without a bias gradient flag, or a "
           "flag without one";
  if ((gradientA && !(p.flags & KILN_CUDA_MATMUL_TRANSPOSE_A)) ||
      (gradientB && (p.flags & KILN_CUDA_MATMUL_TRANSPOSE_B)))
    return "a bias gradient of an operand not stored with k along its rows "
           "(A transposed, B not)";
  if ((gradientA || gradientB) && (p.batch != 1 || p.c_dtype != KILN_DTYPE_F32))
    return "a bias gradient of a batch of products, or of a result that is "
           "not f32";
  return nullptr;
}

void CudaDevice::matmul(const kiln_matmul_problem_t &problem) {
  if (!failure.empty())
    return;
  // The compiler writes the flags and the epilogue's vectors; a module
  // whose product the plug-in could misread is refused here.
  if (const char *malformed = malformedProduct(problem)) {
    char flags[32];
    std::snprintf(flags, sizeof(flags), "%#llx",
                  static_cast<unsigned long long>(problem.flags));
    fail(std::string("CUDA products: malformed product (flags ") + flags +
         "): " + malformed);
    return;
  }
  if (!prepare(blas, loadBlasPlugin, kBlasWorkspaceBytes, "products"))
    return;
  char error[1024] = "";
  if (blas.table->matmul(blas.handle, &problem, streamHandle,
                         reinterpret_cast<void *>(blas.workspace),
                         kBlasWorkspaceBytes, error, sizeof(error)))
    refuse(std::string("CUDA products: ") + error);
}

void CudaDevice::conv(const int64_t *descriptor, const void *x, const void *w,
                      void *y) {
  if (!failure.empty())
    return;
  // The compiler writes the descriptor; a module whose descriptor the
  // plug-in could misread is refused here.
  int64_t spatial = descriptor[0];
  if (spatial < 1 || spatial > KILN_CUDA_CONV_MAX_SPATIAL_DIMS ||
      descriptor[1] < 1 || (descriptor[3] & ~int64_t(KILN_CUDA_CONV_FLAGS))) {
    fail("CUDA convolutions: malformed descriptor (" +
         std::to_string(spatial) + " spatial dims, " +
         std::to_string(descriptor[1]) + " groups, flags " +
         std::to_string(descriptor[3]) + ")");
    return;
  }
  if (!prepare(dnn, loadDnnPlugin, kDnnWorkspaceBytes, "convolutions"))
    return;
  char error[1024] = "";
  const void *buffers[] = {x, w, y};
  std::array<size_t, 3> bytes = convBufferBytes(descriptor);
  if (callPlanningOutsideCapture(
          3, buffers, bytes.data(), [&](const void *const *at) {
            return dnn.table->conv(dnn.handle, descriptor, at[0], at[1],
                                   const_cast<void *>(at[2]), streamHandle,
                                   reinterpret_cast<void *>(dnn.workspace),
                                   kDnnWorkspaceBytes, error, sizeof(error));
          }))
    refuse(std::string("CUDA convolutions: ") + error);
  else
    recordPlanned(KILN_CUDA_PLANNED_CONV, descriptor,
                  KILN_CUDA_CONV_HEADER_SIZE +
                      KILN_CUDA_CONV_ENTRIES_PER_DIM * spatial);
}

void CudaDevice::attention(const int64_t *descriptor, bool gradient,
                           const void *const *buffers) {
  if (!failure.empty())
    return;
  // The compiler writes the descriptor; one the plug-in could misread is
  // refused here.
  bool malformed = descriptor[1] & ~int64_t(KILN_CUDA_ATTENTION_FLAGS);
  for (int i = 2; i < 12; ++i)
    malformed |= descriptor[i] < 1;
  bool masked = descriptor[1] & KILN_CUDA_ATTENTION_MASK;
  if (malformed || masked != (buffers[gradient ? 6 : 3] != nullptr)) {
    fail("CUDA attention: malformed descriptor (flags " +
         std::to_string(descriptor[1]) + ", sizes " +
         std::to_string(descriptor[2]) + "x" + std::to_string(descriptor[3]) +
         "x" + std::to_string(descriptor[4]) + "x" +
         std::to_string(descriptor[6]) + ", " + std::to_string(descriptor[5]) +
         " keys)");
    return;
  }
  // cuDNN's attention is the compiler's default for half precision, and a
  // module's call is cuDNN's alone where its site is not tuned
  // (--no-cuda-attention-tuning, a forward under --cuda-deterministic): a
  // refusal says how to do without it. (In a tuned call site a refusal
  // only drops cuDNN's variant.)
  const char *withoutCudnn =
      " (kiln-compile --no-cuda-cudnn-attention, or kiln.jit's "
      "cuda_cudnn_attention=False, keeps attention on kiln's own kernels)";
  if (!prepare(dnn, loadDnnPlugin, kDnnWorkspaceBytes, "attention")) {
    if (refused)
      failure += withoutCudnn;
    return;
  }
  if (!dnn.table->attention) {
    refuse(std::string("CUDA attention: the plug-in has no attention") +
           withoutCudnn);
    return;
  }
  char error[1024] = "";
  std::vector<size_t> bytes = attentionBufferBytes(descriptor, gradient);
  if (callPlanningOutsideCapture(
          bytes.size(), buffers, bytes.data(), [&](const void *const *at) {
            return dnn.table->attention(
                dnn.handle, descriptor, gradient, at, streamHandle,
                reinterpret_cast<void *>(dnn.workspace), kDnnWorkspaceBytes,
                error, sizeof(error));
          }))
    refuse(std::string("CUDA attention: ") + error + withoutCudnn);
  else
    recordPlanned(gradient ? KILN_CUDA_PLANNED_ATTENTION_GRAD
                           : KILN_CUDA_PLANNED_ATTENTION,
                  descriptor, KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE);
}

int CudaDevice::callPlanningOutsideCapture(
    size_t count, const void *const *buffers, const size_t *bytes,
    const std::function<int(const void *const *buffers)> &call) {
  int status = call(buffers);
  if (status != KILN_DNN_PLAN_IN_CAPTURE || !captureTarget)
    return status;
  // Sizes no device holds (a descriptor no compiler wrote) leave the
  // refusal as it is.
  for (size_t i = 0; i < count; ++i)
    if (buffers[i] && bytes[i] > (size_t(1) << 48))
      return status;
  // A driver that cannot say where the capture stands leaves the refusal
  // as it is.
  std::vector<CUgraphNode> after;
  CUgraph captured = nullptr;
  if (driver->streamCaptureDependencies(streamHandle, after) != CUDA_SUCCESS ||
      !check(driver->streamEndCapture(streamHandle, &captured),
             "cuStreamEndCapture (before a library call's plan)"))
    return status;
  // The scratch buffers: each as far into a fresh allocation (aligned to
  // 256 bytes at least) as the real buffer is from a 256-byte boundary, so
  // that the plug-in keys the plan it makes as it keys the real call's.
  // They start zeroed (the timing of a plan's candidates reads them).
  std::vector<CUdeviceptr> allocated;
  std::vector<const void *> scratch(count, nullptr);
  bool ready = true;
  for (size_t i = 0; i < count && ready; ++i) {
    if (!buffers[i])
      continue;
    size_t offset = reinterpret_cast<uintptr_t>(buffers[i]) % 256;
    size_t words = (offset + bytes[i] + 3) / 4;
    CUdeviceptr base = 0;
    ready = check(driver->memAlloc(&base, words * 4),
                  "cuMemAlloc (a library call's scratch buffer)") &&
            check(driver->memsetD32(base, 0, words),
                  "cuMemsetD32 (a library call's scratch buffer)");
    if (base)
      allocated.push_back(base);
    scratch[i] = toHost(base + offset);
  }
  int planned = ready ? call(scratch.data()) : status;
  // The scratch buffers go once the plan's runs on them are done.
  if (!allocated.empty())
    check(driver->streamSynchronize(streamHandle),
          "cuStreamSynchronize (after a library call's plan)");
  for (CUdeviceptr base : allocated)
    driver->memFree(base);
  if (!check(driver->streamBeginCaptureToGraph(streamHandle, captureTarget,
                                               after,
                                               CU_STREAM_CAPTURE_MODE_RELAXED),
             "cuStreamBeginCaptureToGraph (after a library call's plan)") ||
      !failure.empty() || planned)
    return planned ? planned : 1;
  return call(buffers);
}

void CudaDevice::recordPlanned(int64_t code, const int64_t *descriptor,
                               int64_t length) {
  auto &descriptors = plannedCalls[code];
  DescriptorView view{descriptor, descriptor + length};
  if (!descriptors.count(view))
    descriptors.emplace(view.begin, view.end);
}

bool CudaDevice::libraryCallsPlanned(int64_t size, const int64_t *calls) {
  bool planned = true;
  for (int64_t at = 0; at < size;) {
    // Each call is its code and its descriptor, whose length follows from
    // the code (and a convolution's spatial dims).
    int64_t code = calls[at], length = 0;
    if (code == KILN_CUDA_PLANNED_CONV && at + 1 < size && calls[at + 1] >= 1 &&
        calls[at + 1] <= KILN_CUDA_CONV_MAX_SPATIAL_DIMS)
      length = KILN_CUDA_CONV_HEADER_SIZE +
               KILN_CUDA_CONV_ENTRIES_PER_DIM * calls[at + 1];
    else if (code == KILN_CUDA_PLANNED_ATTENTION ||
             code == KILN_CUDA_PLANNED_ATTENTION_GRAD)
      length = KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE;
    if (!length || length >= size - at) {
      fail("a CUDA graph loop's library calls are malformed at value " +
           std::to_string(at) + " of " + std::to_string(size) + " (code " +
           std::to_string(code) + ")");
      return false;
    }
    auto descriptors = plannedCalls.find(code);
    planned &= descriptors != plannedCalls.end() &&
               descriptors->second.count(
                   DescriptorView{calls + at + 1, calls + at + 1 + length});
    at += 1 + length;
  }
  // KILN_CUDA_CAPTURE_UNPLANNED=1: a loop is captured at its first run
  // too, its calls' plans made outside the capture
  // (callPlanningOutsideCapture).
  const char *unplanned = std::getenv("KILN_CUDA_CAPTURE_UNPLANNED");
  return planned || (unplanned && std::strcmp(unplanned, "1") == 0);
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
