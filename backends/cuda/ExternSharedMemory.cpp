//===- ExternSharedMemory.cpp - Dynamic shared memory as CUDA declares it -===//
//
// convert-gpu-to-nvvm (LLVM 19) lowers gpu.dynamic_shared_memory to an
// internal global of the shared address space, an array of 0 bytes. The
// NVPTX backend prints it as a static variable of one byte
// (`.shared .align 16 .b8 __dynamic_shmem__0;`), which ptxas counts as the
// kernel's static shared memory, and whose end the kernel's accesses pass.
// CUDA's dynamic shared memory is an extern array of no size, which the
// NVPTX backend prints from a declaration: `.extern .shared .align 16 .b8
// __dynamic_shmem__0[];`. This pass makes each such global one, so that
// the kernel's accesses stay within what the launch asks for
// (kiln-cuda-dynamic-shared-memory).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAEXTERNSHAREDMEMORY
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The address space of shared memory in NVVM.
constexpr unsigned kSharedAddressSpace = 3;

struct KilnCudaExternSharedMemoryPass
    : kiln::impl::KilnCudaExternSharedMemoryBase<
          KilnCudaExternSharedMemoryPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != kSharedAddressSpace || !array ||
          array.getNumElements() != 0 || global.getValueOrNull() ||
          !global.getInitializerRegion().empty())
        return;
      global.setLinkage(LLVM::Linkage::External);
    });
  }
};

} // namespace
