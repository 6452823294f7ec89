//===- Driver.h - From kiln IR to a loadable module -------------*- C++ -*-===//
//
// The compilation steps shared by kiln-compile, kiln::jit, the end-to-end
// tests and embedding hosts: read the signatures off the kiln functions,
// lower to the LLVM dialect, produce LLVM IR, object code, and finally a
// .kmod. compileModule runs this sequence as far as an EmitKind asks, so a
// tool only parses its options, reads its input and writes the bytes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_H
#define KILN_COMPILER_DRIVER_H

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Cuda.h"
#include "kiln/ModuleFormat.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/Timing.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {

/// What the compiled module runs on.
enum class Target {
  /// Native code for the host CPU.
  Cpu,
  /// Host code that launches PTX kernels on a CUDA device (`cuda`).
  Cuda,
  /// The CUDA backend's program with its kernels' bodies run on the host,
  /// once per GPU thread, as a module for the CPU (`cuda-on-cpu`): checks
  /// the generated kernels where there is no GPU. No library calls, no
  /// CUDA graphs.
  CudaOnCpu,
};

/// What compileModule produces, in the order of the sequence (kiln-compile
/// --emit).
enum class EmitKind {
  /// The input module as a .kfb model file; nothing is compiled.
  Kfb,
  /// MLIR text of the module in the LLVM dialect, after the whole lowering.
  Mlir,
  /// The PTX of the kernels, as text (Target::Cuda only).
  Ptx,
  /// Optimized LLVM IR of the host code, as text.
  Llvm,
  /// A relocatable object file of the host code.
  Obj,
  /// A module for the runtime.
  Kmod,
};

/// Whether `kind` is text (Mlir, Llvm, Ptx) rather than binary.
bool isTextEmitKind(EmitKind kind);

struct CompileOptions {
  Target target = Target::Cpu;
  /// For both targets: the host code's optimization level and CPU; `fuse`
  /// applies to the CPU target, and so does `profile` (the CUDA target
  /// refuses it).
  mlir::kiln::CpuOptions cpu;
  /// For the CUDA target: the architecture, fusion and device code options.
  mlir::kiln::CudaOptions cuda;
  /// Mixed precision: "bf16" or "f16" runs kiln-autocast with that dtype
  /// before the lowering (f32 matrix products and convolutions get
  /// half-precision operands and f32 accumulation); empty (the default)
  /// leaves the program's types as they are.
  std::string autocast;
  /// Called on the pass manager before it runs, e.g. to apply the
  /// --mlir-print-ir-* command-line options.
  std::function<void(mlir::PassManager &)> configurePassManager;
  /// Verifies the IR after every pass of the lowering, so that a pass that
  /// breaks it is named (kiln-compile --verify-each; the tests and fuzzers
  /// set it). Off by default, where the lowering's result is verified once:
  /// verifying a transformer after each of the lowering's passes took
  /// longer than all of its bufferization.
  bool verifyEachPass = false;
  /// Where compileModule reports the time of its phases (the lowering's
  /// passes, LLVM translation and optimization, code generation, linking,
  /// packing), e.g. kiln-compile --mlir-timing; NULL (the default) times
  /// nothing.
  mlir::TimingScope *timing = nullptr;
};

/// Registers every dialect a kiln module or its lowering can contain.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Registers kiln's passes and both targets' pipelines by name, so that the
/// --mlir-print-ir-before/after options can name the passes of the lowering
/// (--mlir-print-ir-after=kiln-cpu-parallel-loops).
void registerCompilerPasses();

/// Reads the native signature of every public function of a kiln module:
/// names (from `kiln.name` argument/result attributes, else argN/outN),
/// dtypes and shapes. Rejects functions the backend cannot call.
bool collectSignatures(mlir::ModuleOp module,
                       std::vector<format::FunctionSignature> &signatures,
                       std::string &error);

/// Lowers a kiln module in place to the LLVM dialect. Errors are reported
/// as diagnostics on the module's context.
mlir::LogicalResult lowerToLLVMDialect(mlir::ModuleOp module,
                                       const CompileOptions &options);

/// Compiles `module` as far as `emit` asks and puts the result in `output`:
/// checks the signatures (every kind but Kfb), lowers to the LLVM dialect
/// (Mlir and on), extracts the PTX (Ptx, and Kmod for CUDA), takes the
/// constant pool's bytes out of the module (Llvm and on; they reach only a
/// Kmod), translates the host code to LLVM IR (Llvm and on), emits its
/// object code (Obj, Kmod) and links and packs the .kmod (Kmod; for CUDA the host code's shared
/// object and the PTX, target "cuda-sm_XX"). `module` is lowered in place.
/// On failure returns false with `error` set; lowering errors are also
/// reported as diagnostics on the module's context.
bool compileModule(mlir::ModuleOp module, const CompileOptions &options,
                   EmitKind emit, std::vector<uint8_t> &output,
                   std::string &error);

/// compileModule with EmitKind::Kmod.
bool compileToKmod(mlir::ModuleOp module, const CompileOptions &options,
                   std::vector<uint8_t> &kmod, std::string &error);

/// Translates a module lowered by lowerToLLVMDialect to optimized LLVM IR
/// for the host; for the CUDA target the GPU runtime calls are bound to the
/// slots the runtime fills (mlir::kiln::bindGpuRuntimeCalls).
std::unique_ptr<llvm::Module> translateHostCode(mlir::ModuleOp module,
                                                llvm::LLVMContext &context,
                                                const CompileOptions &options,
                                                std::string &error);

/// The architecture to compile for the CUDA device that calls of CUDA
/// modules run on in this process (the runtime's choice: KILN_CUDA_DEVICE,
/// else the rank on the machine, else device 0): the newest that the
/// backend supports and the device runs, for PTX of an older architecture
/// is compiled for the device by its driver. kiln-compile
/// --cuda-arch=native and kiln::jit's default use it.
struct DeviceCudaArch {
  /// "sm_XX", or empty with `error` saying why.
  std::string arch;
  std::string error;
  /// Whether there was a device to ask (a driver that found one).
  bool deviceFound = false;
};
DeviceCudaArch deviceCudaArch();

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_H
