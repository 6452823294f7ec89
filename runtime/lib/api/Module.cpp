//===- Module.cpp - Loading modules ----------------------------------------===//
//
// Loading verifies the module completely (see ModuleReader.cpp), loads its
// code and resolves every entry point up front, so that a module that loads
// successfully cannot fail later for reasons of its own.
//
//===----------------------------------------------------------------------===//

#include "Module.h"
#include "Memory.h"
#include "Profile.h"
#include "Status.h"

#include "comm/CollectiveShim.h"
#include "cuda/CudaDevice.h"
#include "cuda/GpuRuntimeShim.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ConstantsAbi.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

using kiln::runtime::makeStatus;

namespace {

/// Files beyond this size cannot be modules (FlatBuffers addresses them with
/// 32-bit offsets), so reading stops there instead of exhausting memory.
constexpr size_t kMaxModuleFileSize = size_t(1) << 31;

std::vector<kiln_tensor_signature_t>
toCSignatures(const std::vector<kiln::format::TensorSignature> &tensors) {
  std::vector<kiln_tensor_signature_t> result;
  result.reserve(tensors.size());
  for (const kiln::format::TensorSignature &tensor : tensors) {
    kiln_tensor_signature_t signature;
    signature.name = tensor.name.c_str();
    signature.dtype = static_cast<kiln_dtype_t>(tensor.dtype);
    signature.rank = tensor.shape.size();
    signature.shape = tensor.shape.empty() ? nullptr : tensor.shape.data();
    signature.tied_input = tensor.tiedInput;
    result.push_back(signature);
  }
  return result;
}

/// The device a target string names: "cuda-..." is CUDA, anything else
/// the host CPU.
kiln_device_t deviceOfTarget(const std::string &target) {
  return target.rfind("cuda-", 0) == 0 ? KILN_DEVICE_CUDA : KILN_DEVICE_CPU;
}

/// Stores each of `functions`' address (entries with a `name` and an
/// `address`) in the slot `prefix` + name through which the module's code
/// calls it, where the module exports that slot, and returns whether it
/// exports any. A module exports slots only for the functions it calls.
template <typename Functions>
bool fillSlots(const kiln::runtime::NativeLibrary &library,
               const std::string &prefix, const Functions &functions) {
  bool found = false;
  for (const auto &function : functions) {
    std::string error;
    if (void *slot = library.lookupObject(prefix + function.name, error)) {
      *static_cast<void **>(slot) = function.address;
      found = true;
    }
  }
  return found;
}

/// Stores `constants`, the address of the module's `count` bytes of
/// constants, in the code's constant slot (kiln/ConstantsAbi.h) after
/// checking that the code reads as many bytes as the module holds. The
/// bytes must outlive every call of the code.
kiln_status_t bindConstants(const kiln::runtime::NativeLibrary &library,
                            const uint8_t *constants, size_t count) {
  std::string error;
  size_t sizeBytes = 0;
  void *slot = library.lookupObject(KILN_CONSTANTS_SLOT, error);
  const void *size =
      library.lookupObject(KILN_CONSTANTS_SIZE, error, &sizeBytes);
  if (!slot && !size) {
    if (count == 0)
      return nullptr;
    return makeStatus(KILN_STATUS_INVALID_MODULE,
                      "the module holds " + std::to_string(count) +
                          " bytes of constants but its code has no "
                          "constant slot (" KILN_CONSTANTS_SLOT ")");
  }
  if (!slot || !size || sizeBytes != sizeof(uint64_t))
    return makeStatus(KILN_STATUS_INVALID_MODULE,
                      "the module's code exports only one of "
                      KILN_CONSTANTS_SLOT " and an 8-byte "
                      KILN_CONSTANTS_SIZE);
  uint64_t expected;
  std::memcpy(&expected, size, sizeof(expected));
  if (expected != count)
    return makeStatus(KILN_STATUS_INVALID_MODULE,
                      "the module's code reads " + std::to_string(expected) +
                          " bytes of constants but the module holds " +
                          std::to_string(count));
  *static_cast<void **>(slot) = const_cast<uint8_t *>(constants);
  return nullptr;
}

/// `required` is a kiln_device_t, or -1 to take the module's own. With
/// `file`, the bytes [data, data + size) are that buffer's, and the module
/// may keep it to read its constants in place instead of copying them.
kiln_status_t loadModule(const void *data, size_t size, int required,
                         kiln_module_t **outModule,
                         kiln::format::ConstantBytes *file = nullptr) {
  kiln::format::ModuleContents contents;
  std::string error;
  if (!kiln::format::readModule(
          data, size, contents, error,
          file ? kiln::format::ConstantsPlacement::InBufferIfAligned
               : kiln::format::ConstantsPlacement::Copy))
    return makeStatus(KILN_STATUS_INVALID_MODULE, error);

  auto module = std::make_unique<kiln_module>();
  module->device = deviceOfTarget(contents.target);
  if (required >= 0 && required != module->device)
    return makeStatus(
        KILN_STATUS_DEVICE_UNAVAILABLE,
        std::string("the module was compiled for ") +
            kiln_device_name(module->device) + " (target '" +
            contents.target + "'), not for " +
            kiln_device_name(static_cast<kiln_device_t>(required)) +
            "; recompile it with kiln-compile --target=" +
            kiln_device_name(static_cast<kiln_device_t>(required)));
  // A CUDA module loads anywhere (to be listed, say); its device opens at
  // the first call, or here when the caller asked for CUDA explicitly.
  if (module->device == KILN_DEVICE_CUDA) {
    module->cuda = std::make_shared<kiln::runtime::cuda::CudaDevice>();
    if (required == KILN_DEVICE_CUDA)
      if (kiln_status_t status = module->cuda->open())
        return status;
  }
  if (kiln_status_t status = kiln::runtime::NativeLibrary::load(
          contents.code.data(), contents.code.size(), module->library))
    return status;
  // The GPU runtime functions (GpuRuntimeShim.h; the compiler refuses host
  // code that calls one the runtime lacks) and the collective functions
  // (CollectiveShim.h): a module with communicator slots uses collectives.
  // No plug-in is loaded here; a call's communicator brings its own.
  module->collectives =
      fillSlots(*module->library, KILN_COMM_SLOT_PREFIX,
                kiln::runtime::comm::collectiveFunctions());
  // The constants stay in the file's buffer where they lie aligned in it
  // (a moved vector keeps its storage); otherwise they were copied out.
  const uint8_t *constants = contents.constantsInBuffer;
  size_t constantCount = contents.constantsInBufferSize;
  if (constants) {
    module->constants = std::move(*file);
  } else {
    module->constants = std::move(contents.constants);
    constants = module->constants.data();
    constantCount = module->constants.size();
  }
  if (kiln_status_t status =
          bindConstants(*module->library, constants, constantCount))
    return status;
  // The code's buffers, through the counting allocator (MemoryAbi.h).
  if (kiln_status_t status = kiln::runtime::bindMemorySlots(*module->library))
    return status;
  if (module->cuda) {
    fillSlots(*module->library, kiln::runtime::cuda::kGpuRuntimeSlotPrefix,
              kiln::runtime::cuda::gpuRuntimeFunctions());
    // The PTX is stored once, in device_code; host code that launches
    // kernels finds it through the image slot.
    void *imageSlot = module->library->lookupObject(
        kiln::runtime::cuda::kKernelImageSlot, error);
    if (imageSlot) {
      if (contents.deviceCode.empty())
        return makeStatus(KILN_STATUS_INVALID_MODULE,
                          "the host code loads its kernels from the "
                          "module's device_code, which is empty");
      module->kernelImage.assign(contents.deviceCode.begin(),
                                 contents.deviceCode.end());
      module->kernelImage.push_back('\0');
      *static_cast<void **>(imageSlot) = module->kernelImage.data();
    }
  }
  module->target = std::move(contents.target);

  for (kiln::format::FunctionSignature &signature : contents.functions) {
    auto function = std::make_unique<kiln_function>();
    void *address =
        module->library->lookupFunction(signature.entrySymbol, error);
    if (!address)
      return makeStatus(KILN_STATUS_NOT_FOUND,
                        "function '" + signature.name + "': entry symbol '" +
                            signature.entrySymbol +
                            "' cannot be resolved: " + error);
    // The CUDA runtime copies every output back from a buffer of its own;
    // only CPU code writes an output into a donated input.
    if (module->cuda)
      for (const kiln::format::TensorSignature &output : signature.outputs)
        if (output.tiedInput != -1)
          return makeStatus(KILN_STATUS_INVALID_MODULE,
                            "function '" + signature.name +
                                "': an output tied to a donated input is "
                                "only supported in CPU modules");
    function->entry = reinterpret_cast<void (*)(void **)>(address);
    function->cuda = module->cuda;
    function->collectives = module->collectives;
    function->signature = std::move(signature);
    function->inputs = toCSignatures(function->signature.inputs);
    function->outputs = toCSignatures(function->signature.outputs);
    module->functions.push_back(std::move(function));
  }
  if (kiln_status_t status = kiln::runtime::bindProfileRegions(*module))
    return status;
  *outModule = module.release();
  return nullptr;
}

/// Reads all of \p fd; pipes and other streams work as well as files. The
/// buffer is aligned as a module's constants are, so that they can be read
/// where they lie.
kiln_status_t readAll(int fd, const char *path,
                      kiln::format::ConstantBytes &bytes) {
  // A file's size is known: one buffer, with huge pages for a large one,
  // instead of one that doubles (and is copied) as it fills.
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0 &&
      static_cast<size_t>(info.st_size) <= kMaxModuleFileSize) {
    // The allocator asks for huge pages.
    bytes.reserve(static_cast<size_t>(info.st_size));
  }
  uint8_t chunk[1 << 16];
  for (;;) {
    ssize_t count = ::read(fd, chunk, sizeof(chunk));
    if (count < 0) {
      if (errno == EINTR)
        continue;
      return makeStatus(KILN_STATUS_IO_ERROR, "cannot read '" +
                                                  std::string(path) + "': " +
                                                  std::strerror(errno));
    }
    if (count == 0)
      return nullptr;
    if (bytes.size() + static_cast<size_t>(count) > kMaxModuleFileSize)
      return makeStatus(KILN_STATUS_INVALID_MODULE,
                        "'" + std::string(path) +
                            "' is too large to be a .kmod module");
    bytes.insert(bytes.end(), chunk, chunk + count);
  }
}


kiln_status_t loadMemory(const void *data, size_t size, int required,
                         kiln_module_t **outModule) {
  if (!outModule)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_load_memory: out_module is NULL");
  *outModule = nullptr;
  try {
    return loadModule(data, size, required, outModule);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t loadFile(const char *path, int required,
                       kiln_module_t **outModule) {
  if (!outModule)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_load_file: out_module is NULL");
  *outModule = nullptr;
  if (!path)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_load_file: path is NULL");
  try {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      int error = errno;
      return makeStatus(error == ENOENT ? KILN_STATUS_NOT_FOUND
                                        : KILN_STATUS_IO_ERROR,
                        "cannot open '" + std::string(path) +
                            "': " + std::strerror(error));
    }
    kiln::format::ConstantBytes bytes;
    kiln_status_t status = readAll(fd, path, bytes);
    ::close(fd);
    if (status)
      return status;
    status = loadModule(bytes.data(), bytes.size(), required, outModule,
                        &bytes);
    if (status && status->code != KILN_STATUS_OUT_OF_MEMORY)
      status->message = "'" + std::string(path) + "': " + status->message;
    return status;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

bool isDevice(kiln_device_t device) {
  return device == KILN_DEVICE_CPU || device == KILN_DEVICE_CUDA;
}

} // namespace

extern "C" {

kiln_status_t kiln_module_load_memory(const void *data, size_t size,
                                      kiln_module_t **outModule) {
  return loadMemory(data, size, -1, outModule);
}

kiln_status_t kiln_module_load_file(const char *path,
                                    kiln_module_t **outModule) {
  return loadFile(path, -1, outModule);
}

kiln_status_t kiln_module_load_memory_on(kiln_device_t device,
                                         const void *data, size_t size,
                                         kiln_module_t **outModule) {
  if (!isDevice(device)) {
    if (outModule)
      *outModule = nullptr;
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_load_memory_on: unknown device " +
                          std::to_string(int(device)));
  }
  return loadMemory(data, size, device, outModule);
}

kiln_status_t kiln_module_load_file_on(kiln_device_t device, const char *path,
                                       kiln_module_t **outModule) {
  if (!isDevice(device)) {
    if (outModule)
      *outModule = nullptr;
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_load_file_on: unknown device " +
                          std::to_string(int(device)));
  }
  return loadFile(path, device, outModule);
}

const char *kiln_device_name(kiln_device_t device) {
  switch (device) {
  case KILN_DEVICE_CPU:
    return "cpu";
  case KILN_DEVICE_CUDA:
    return "cuda";
  }
  return "invalid";
}

kiln_status_t kiln_device_check(kiln_device_t device) {
  if (device == KILN_DEVICE_CPU)
    return nullptr;
  if (device != KILN_DEVICE_CUDA)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_device_check: unknown device " +
                          std::to_string(int(device)));
  try {
    kiln::runtime::cuda::CudaDevice cuda;
    return cuda.open();
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_device_count(kiln_device_t device, int64_t *count) {
  if (!count)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_device_count: count must not be NULL");
  if (device == KILN_DEVICE_CPU) {
    *count = 1;
    return nullptr;
  }
  if (device != KILN_DEVICE_CUDA)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_device_count: unknown device " +
                          std::to_string(int(device)));
  try {
    int devices = 0;
    if (kiln_status_t status = kiln::runtime::cuda::countDevices(devices))
      return status;
    *count = devices;
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_cuda_compute_capability(int *major, int *minor) {
  if (!major || !minor)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_cuda_compute_capability: major and minor must "
                      "not be NULL");
  try {
    return kiln::runtime::cuda::computeCapability(*major, *minor);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_module_cuda_stats(const kiln_module_t *module,
                                     kiln_cuda_stats_t *stats,
                                     size_t statsSize) {
  if (!module || !stats)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_cuda_stats: module and stats must not "
                      "be NULL");
  if (statsSize == 0 || statsSize % sizeof(uint64_t) != 0)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_cuda_stats: stats_size is " +
                          std::to_string(statsSize) +
                          ", not a whole number of 8-byte fields; pass "
                          "sizeof(kiln_cuda_stats_t)");
  if (!module->cuda)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_cuda_stats: the module was compiled for " +
                          std::string(kiln_device_name(module->device)) +
                          ", not for cuda");
  kiln::runtime::cuda::CudaStats counters = module->cuda->stats();
  // Filled whole here, then copied as far as the caller's struct reaches.
  kiln_cuda_stats_t all{};
  all.calls = counters.calls;
  all.kernel_launches = counters.kernelLaunches;
  all.stream_syncs = counters.streamSyncs;
  all.device_to_host_copies = counters.deviceToHostCopies;
  all.device_to_host_bytes = counters.deviceToHostBytes;
  all.driver_allocations = counters.driverAllocations;
  all.held_bytes = counters.heldBytes;
  all.largest_device_allocation = counters.largestDeviceAllocation;
  all.graph_loops = counters.graphLoops;
  all.graph_calls = counters.graphCalls;
  all.graph_captures = counters.graphCaptures;
  all.constant_uploads = counters.constantUploads;
  all.constant_bytes = counters.constantBytes;
  all.graph_bytes = counters.graphBytes;
  all.tuned_sites = counters.tunedSites;
  std::memcpy(stats, &all, std::min(statsSize, sizeof(all)));
  if (statsSize > sizeof(all))
    std::memset(reinterpret_cast<char *>(stats) + sizeof(all), 0,
                statsSize - sizeof(all));
  return nullptr;
}

int kiln_module_uses_collectives(const kiln_module_t *module) {
  return module && module->collectives ? 1 : 0;
}

kiln_device_t kiln_module_device(const kiln_module_t *module) {
  return module ? module->device : KILN_DEVICE_CPU;
}

void kiln_module_release(kiln_module_t *module) { delete module; }

const char *kiln_module_target(const kiln_module_t *module) {
  return module ? module->target.c_str() : nullptr;
}

size_t kiln_module_function_count(const kiln_module_t *module) {
  return module ? module->functions.size() : 0;
}

const kiln_function_t *kiln_module_function_at(const kiln_module_t *module,
                                               size_t index) {
  if (!module || index >= module->functions.size())
    return nullptr;
  return module->functions[index].get();
}

kiln_status_t kiln_module_function_lookup(const kiln_module_t *module,
                                          const char *name,
                                          const kiln_function_t **outFunction) {
  if (!outFunction)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_function_lookup: out_function is NULL");
  *outFunction = nullptr;
  if (!module || !name)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_module_function_lookup: module or name is NULL");
  try {
    for (const auto &function : module->functions) {
      if (function->signature.name == name) {
        *outFunction = function.get();
        return nullptr;
      }
    }
    std::string known;
    for (const auto &function : module->functions)
      known += (known.empty() ? "" : ", ") + function->signature.name;
    return makeStatus(KILN_STATUS_NOT_FOUND,
                      "the module has no function named '" +
                          std::string(name) + "' (it has: " + known + ")");
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

} // extern "C"

