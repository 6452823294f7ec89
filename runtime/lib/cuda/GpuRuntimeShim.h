//===- GpuRuntimeShim.h - The mgpu* ABI over CudaDevice ---------*- C++ -*-===//
//
// Host code compiled by the CUDA backend calls the upstream GPU runtime ABI
// (the functions MLIR's gpu-to-llvm and gpu.launch_func translation emit
// calls to) and kiln's library calls (kiln/CudaLibraryAbi.h) through
// exported pointer slots `kiln_gpu_fn_<name>`; the
// compiler never links a GPU library into it. After loading such a module,
// the runtime stores the implementations below in every slot the module
// exports. Each implementation acts on CudaDevice::current(), the device
// of the call in progress on this thread.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_GPURUNTIMESHIM_H
#define KILN_RUNTIME_LIB_CUDA_GPURUNTIMESHIM_H

#include "kiln/CudaLibraryAbi.h"

#include <vector>

namespace kiln {
namespace runtime {
namespace cuda {

/// The slot prefix; must equal mlir::kiln::kGpuRuntimeSlotPrefix.
constexpr const char *kGpuRuntimeSlotPrefix = KILN_GPU_SLOT_PREFIX;

/// The exported pointer through which the host code finds its kernels' PTX
/// (must equal mlir::kiln::kKernelImageSlot): the runtime stores the
/// address of the module's `device_code`, NUL-terminated, in it.
constexpr const char *kKernelImageSlot = "kiln_gpu_kernel_image";

struct GpuRuntimeFunction {
  const char *name;
  void *address;
};

/// Every mgpu and library function the runtime implements (the compiler rejects host
/// code that needs any other).
const std::vector<GpuRuntimeFunction> &gpuRuntimeFunctions();

} // namespace cuda
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_GPURUNTIMESHIM_H
