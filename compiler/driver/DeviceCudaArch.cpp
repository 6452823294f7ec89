//===- DeviceCudaArch.cpp - The architecture of the CUDA device at hand ---===//
//
// The runtime reads the device's compute capability without opening it
// (kiln_cuda_compute_capability); the backend says which architectures it
// supports (isSupportedCudaArch). The answer is the first supported one
// counting down from the device's own capability, so that the backend's
// list is the only one.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"

#include "kiln/runtime.h"

kiln::DeviceCudaArch kiln::deviceCudaArch() {
  DeviceCudaArch found;
  int major = 0, minor = 0;
  if (kiln_status_t status = kiln_cuda_compute_capability(&major, &minor)) {
    found.error = kiln_status_message(status);
    kiln_status_free(status);
    return found;
  }
  found.deviceFound = true;
  std::string ptxFeature;
  for (int capability = major * 10 + minor; capability >= 10; --capability) {
    std::string arch = "sm_" + std::to_string(capability);
    if (mlir::kiln::isSupportedCudaArch(arch, ptxFeature)) {
      found.arch = arch;
      return found;
    }
  }
  found.error = "the CUDA device has compute capability " +
                std::to_string(major) + "." + std::to_string(minor) +
                "; kiln's CUDA code needs 7.0 (sm_70) or newer";
  return found;
}
