//===- Module.h - The kiln_module_t and kiln_function_t objects -*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_API_MODULE_H
#define KILN_RUNTIME_LIB_API_MODULE_H

#include "NativeLibrary.h"

#include "cuda/CudaDevice.h"

#include "kiln/ModuleFormat.h"
#include "kiln/runtime.h"

#include <memory>
#include <string>
#include <vector>

/// A function of a loaded module. The C signature records point into
/// `signature`, which is never modified after loading.
struct kiln_function {
  kiln::format::FunctionSignature signature;
  std::vector<kiln_tensor_signature_t> inputs;
  std::vector<kiln_tensor_signature_t> outputs;
  void (*entry)(void **args) = nullptr;
  /// The module's CUDA device when it was compiled for CUDA: calls then go
  /// through CudaDevice::call. NULL for CPU modules.
  std::shared_ptr<kiln::runtime::cuda::CudaDevice> cuda;
  /// The module's code performs collectives (it exports the slots of
  /// kiln/CollectiveAbi.h): calls run with a CollectiveCall current.
  bool collectives = false;
  /// The profiler's number for calls of this function (api/Profile.h);
  /// -1 in a module compiled without --profile.
  int32_t profileRegion = -1;
};

struct kiln_module {
  std::string target;
  kiln_device_t device = KILN_DEVICE_CPU;
  /// The kernels' PTX (the body's device_code) with a terminating NUL, for
  /// host code that takes it from the kiln_gpu_kernel_image slot.
  std::vector<char> kernelImage;
  /// The CUDA device of a CUDA module; outlives the code, which calls it,
  /// and lives on while a device tensor in its memory does.
  std::shared_ptr<kiln::runtime::cuda::CudaDevice> cuda;
  /// The code exports communicator slots (kiln/CollectiveAbi.h).
  bool collectives = false;
  /// The profiling regions of the code and its functions; 0 unless it was
  /// compiled with --profile (kiln/ProfileAbi.h).
  size_t profileRegionCount = 0;
  /// The bytes the code reads through its constant slot
  /// (kiln/ConstantsAbi.h): the constants alone, or the whole file they
  /// were read in place from (kiln_module_load_file); empty for a module
  /// without a pool.
  kiln::format::ConstantBytes constants;
  /// Held by pointer so that the kiln_function_t addresses handed out stay
  /// valid however the vector is built.
  std::vector<std::unique_ptr<kiln_function>> functions;
  /// Declared last so that it is destroyed first: nothing may run the code
  /// once it is unloaded.
  std::unique_ptr<kiln::runtime::NativeLibrary> library;
};

#endif // KILN_RUNTIME_LIB_API_MODULE_H
