//===- Cuda.h - The CUDA backend --------------------------------*- C++ -*-===//
//
// kiln -> host code in the LLVM dialect that launches kernels, plus the
// kernels as PTX (NVVM through LLVM's NVPTX target). The host code is
// emitted with the CPU backend's object emitter and linker; its calls to
// the upstream GPU runtime ABI (mgpuLaunchKernel, mgpuMemAlloc, ...) go
// through function-pointer slots that the kiln runtime fills when it loads
// the module.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_H
#define KILN_BACKENDS_CUDA_H

#include "kiln/CudaLibraryAbi.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
namespace kiln {

struct CudaOptions {
  /// The GPU architecture, "sm_XX" (see isSupportedCudaArch).
  std::string arch = "sm_80";
  /// Fuse as the CPU backend does; each fused region becomes one kernel.
  bool fuse = true;
  /// Optimization level of the device code (NVPTX), 0 to 3.
  unsigned optLevel = 3;
  /// Threads per block of the generated kernels.
  int64_t blockSize = 256;
  /// The CUDA toolkit whose libdevice provides the math functions; empty
  /// means the directory found when kiln was configured.
  std::string toolkitPath;
  /// Emit a remark per function with the bytes of its device intermediates
  /// and the size of the arena they were planned into.
  bool memoryReport = false;
  /// Float matrix products as cuBLASLt calls through the runtime
  /// (kiln-cuda-library-matmul); otherwise as kiln's own kernels.
  bool libraryMatmul = true;
  /// Float convolutions as cuDNN calls through the runtime
  /// (kiln-cuda-outline-convs, kiln-cuda-library-conv); otherwise as
  /// kiln's own kernels.
  bool libraryConv = true;
  /// f16 and bf16 attention and its gradient as cuDNN calls through the
  /// runtime (kiln-cuda-outline-library-attention,
  /// kiln-cuda-library-attention) where cuDNN takes them (sm_80 and
  /// later), or, with attentionTuning where kiln's tensor-core kernels
  /// take them too, as tuned call sites of the two, whose faster the
  /// runtime keeps (cuDNN's variant dropped where cuDNN is missing or
  /// refuses); otherwise kiln's own kernels. On by default: on an H200
  /// the tuned sites measured 0.21x-0.94x PyTorch's bf16 SDPA where kiln's
  /// kernels alone took 0.57x-4.56x (bench/results-cuda.md).
  bool cudnnAttention = true;
  /// Let f32 products and convolutions round their inputs to TF32 on
  /// tensor cores.
  bool tf32 = false;
  /// f32 attention (head dims up to 128) and its gradient (up to 64) on the
  /// tensor-core kernels in 3xTF32 products, of f32's accuracy (sm_80 and
  /// later, and on the CPU; kiln-cuda-flash-attention{f32-tensor-cores});
  /// otherwise on the f32 kernels.
  bool attention3xTF32 = false;
  /// Otherwise, where an f32 attention or gradient fits the tensor-core
  /// kernels (sm_80 and later, and on the CPU) and the sums need not be
  /// deterministic, build it both ways as a tuned call site whose fastest
  /// variant the runtime keeps, timed at its first call
  /// (kiln-cuda-flash-attention{tune-f32}; on the CPU every variant runs,
  /// the f32 kernels last); and with cudnnAttention, an f16 or bf16 one
  /// both cuDNN and kiln's tensor-core kernels take as a tuned call site
  /// of the two (kiln-cuda-outline-library-attention{tune}).
  bool attentionTuning = true;
  /// Hand device-only while loops (kiln-cuda-graph-loops) and calls
  /// (kiln-cuda-graph-calls) to the runtime as CUDA graphs; otherwise every
  /// loop is a host loop and every call queues its work itself.
  bool graphs = true;
  /// Sum every result of kiln's own kernels in an order that does not
  /// depend on the order in which blocks run, so that runs agree bit for
  /// bit: the attention gradient of head dims 64 (f32) or up to 64 (f16
  /// and bf16, on tensor cores) is then two kernels that each recompute
  /// the probabilities, instead of one that adds dq with atomics
  /// (kiln-cuda-flash-attention{gradient-atomics}).
  bool deterministic = false;
  /// Run the kernels on the host instead (kiln-cuda-launches-on-cpu): the
  /// program lowers for the CPU, every kernel's body runs once per GPU
  /// thread, products, convolutions and attention are kiln's own kernels
  /// and no loop
  /// is a graph, whatever the options above say. For checking the
  /// generated kernels without a GPU.
  bool onCpu = false;
};

/// Whether this kiln has the CUDA backend (the library KilnBackendsCuda,
/// built unless configured with -DKILN_CUDA_BACKEND=OFF). Without it the
/// functions below exist but compile nothing: the driver asks first and
/// refuses --target=cuda with an error that says so.
bool hasCudaBackend();

/// What a kiln without the CUDA backend says when asked for --target=cuda.
inline constexpr const char *kNoCudaBackendMessage =
    "this kiln was built without the CUDA backend (-DKILN_CUDA_BACKEND=OFF)";

/// Whether `arch` is an architecture the backend generates PTX for
/// (sm_70, sm_75, sm_80, sm_86, sm_89, sm_90); sets `ptxFeature` to the
/// PTX ISA version it needs (e.g. "+ptx70").
bool isSupportedCudaArch(llvm::StringRef arch, std::string &ptxFeature);

/// Registers the gpu and nvvm dialects, the NVVM target and the LLVM IR
/// translations the CUDA pipeline and the host-code translation need.
void registerCudaDialects(DialectRegistry &registry);

/// Adds the passes that take a module of kiln functions to host code in the
/// LLVM dialect (with `kiln_entry_<name>` wrappers, as on the CPU) and one
/// `gpu.binary` holding the PTX of every kernel.
void buildCudaLoweringPipeline(OpPassManager &pm,
                               const CudaOptions &options = CudaOptions());

/// Registers the CUDA backend's passes (CudaPasses.td) and
/// `--kiln-cuda-lowering` (options: arch, fuse, library-matmul,
/// library-conv, tf32) for kiln-opt.
void registerCudaPipelines();

/// Reads the PTX out of the lowered module's `gpu.binary` (empty when the
/// module has no kernel). Returns false with a message when a binary holds
/// something other than one PTX object.
bool extractPtx(ModuleOp module, std::string &ptx, std::string &error);

/// The prefix of the exported pointer slot through which the host code
/// calls GPU runtime function `mgpuX`: the runtime stores its
/// implementation in `kiln_gpu_fn_mgpuX` after loading the module.
inline constexpr const char *kGpuRuntimeSlotPrefix = KILN_GPU_SLOT_PREFIX;

/// The exported pointer slot from which the host code takes its kernels'
/// PTX: the runtime stores the address of the module's `device_code` in it,
/// so that the PTX is stored once in a `.kmod`.
inline constexpr const char *kKernelImageSlot = "kiln_gpu_kernel_image";

/// Defines every declared `mgpu*` function of `module` as an internal
/// function that calls through the exported slot kGpuRuntimeSlotPrefix +
/// name, so that the shared object needs no GPU library at link or load
/// time. Fails, naming it, on an mgpu function the kiln runtime does not
/// implement (its list is in runtime/lib/cuda/GpuRuntimeShim.cpp).
/// The kernels' PTX, which the gpu.binary translation embeds as a constant
/// (`<name>_bin_cst`), is replaced by loads from kKernelImageSlot; the
/// driver stores the PTX in the `.kmod`'s device_code instead. Fixed-size
/// allocas (kernel parameter blocks) move to their function's entry block
/// so that a launch inside a loop does not grow the stack each iteration.
bool bindGpuRuntimeCalls(llvm::Module &module, std::string &error);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CUDA_H
