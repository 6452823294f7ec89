//===- Cpu.h - The CPU backend ----------------------------------*- C++ -*-===//
//
// kiln -> LLVM dialect (a pass pipeline), LLVM dialect -> optimized LLVM IR
// and host object code (LLVM's TargetMachine), object -> shared object that
// the runtime can load.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_H
#define KILN_BACKENDS_CPU_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class DialectRegistry;
namespace kiln {

struct CpuOptions {
  /// LLVM optimization level, 0 to 3.
  unsigned optLevel = 2;
  /// CPU to generate code for; "host" means the machine compiling.
  std::string cpu = "host";
  /// Group ops into kiln.fused regions (kiln-fuse) and fuse each region's
  /// linalg ops into as few loop nests as upstream fusion allows. Off, every
  /// kiln op becomes its own loop nest (kiln-compile --no-fusion).
  bool fuse = true;
  /// Call oneDNN for f32 and bf16 matmuls (kiln-cpu-matmul-to-dnnl) and its
  /// convolution primitive for f32 convolutions (kiln-cpu-conv-to-dnnl) of
  /// at least `dnnlMinMacs` multiply-adds, where kiln was built with oneDNN
  /// (see cpuHasDnnl()); otherwise they are loops.
  bool dnnl = true;
  int64_t dnnlMinMacs = 16384;
  /// The memory order of oneDNN convolutions' inputs and results
  /// (kiln-cpu-outline-dnnl-convs's `layouts`): "query" (channels-last or
  /// oneDNN's blocked layout where its implementation on the compiling CPU
  /// wants it and reads and writes it as it is, else channels-last where
  /// it has a kernel that does that; for another `cpu` than "host",
  /// "plain"), "channels-last", "channels-last-direct", "blocked-8",
  /// "blocked-16" or "plain".
  std::string dnnlConvLayouts = "query";
  /// The algorithm of oneDNN's f32 3x3 convolutions (kiln-compile
  /// --conv-algorithm; kiln-cpu-outline-dnnl-convs's `winograd`): "auto"
  /// (Winograd where it pays: oneDNN's where it has a kernel for it on the
  /// compiling CPU, else kiln's own; for another `cpu` than "host",
  /// direct), "winograd" (oneDNN's wherever the shape allows, without
  /// asking; direct where oneDNN has no kernel at run time),
  /// "own-winograd" (kiln's own wherever the shape allows) or "direct".
  std::string convAlgorithm = "auto";
  /// Which f32 products of at most 16 rows by a constant B run kiln's own
  /// kernel over a copy of B packed into the module, and those of more rows
  /// read a copy of B stored transposed
  /// (kiln-cpu-matmul-to-dnnl's `packed`; kiln-compile --packed-matmuls):
  /// "query" (the products of few rows on every CPU, the transposed copies
  /// where oneDNN's matmul primitive on the compiling CPU would keep B
  /// plain; for another `cpu` than "host", never), "always" or "never".
  std::string packedMatmuls = "query";
  /// Functions with at least this many outermost loop nests have each nest
  /// moved into a function of its own (kiln-cpu-outline-loop-nests'
  /// `min-nests`; kiln-compile --outline-loop-nests): LLVM's passes over
  /// one function grow faster than its length.
  int64_t outlineMinNests = 128;
  /// Run the outermost parallel loop of each loop nest that does at least
  /// `parallelMinIterations` innermost iterations on OpenMP threads
  /// (kiln-cpu-parallel-loops, convert-scf-to-openmp; LLVM's libomp, so
  /// OMP_NUM_THREADS sets the thread count), where kiln was built with
  /// libomp (see cpuHasOpenMP()); otherwise all loops are sequential.
  bool parallel = true;
  int64_t parallelMinIterations = 65536;
  /// With `parallel`: run independent kernels side by side, one thread
  /// each, where a call has `concurrentThreads` threads and the cost
  /// estimate says it pays (kiln-cpu-concurrent-branches,
  /// kiln-cpu-concurrent-sections; kiln-compile --concurrent-threads).
  /// Below 2, never.
  int64_t concurrentThreads = 2;
  /// Plan the intermediate buffers of each block into one arena, sharing
  /// bytes between buffers whose lifetimes do not overlap
  /// (kiln-cpu-plan-memory); `memoryReport` adds a remark per function with
  /// the intermediate bytes before and after planning (kiln-compile
  /// --memory-report).
  bool planMemory = true;
  bool memoryReport = false;
  /// Bracket each loop nest, oneDNN call and source loop with calls that
  /// time it at run time (kiln-cpu-profile-names, kiln-cpu-profile;
  /// kiln-compile --profile). Off, the code is exactly what it is without.
  bool profile = false;
};

/// Whether this build of kiln can link generated code against libomp.
bool cpuHasOpenMP();

/// Whether this build of kiln can link generated code against oneDNN.
bool cpuHasDnnl();

/// Whether the CPU that `options` compiles for ("host": this machine) has
/// bf16 dot-product instructions (AVX512-BF16 or AMX-BF16). Without them
/// oneDNN emulates bf16 products and convolutions, slower than f32.
bool cpuHasBf16DotProducts(const CpuOptions &options);

/// Whether the CPU that `options` compiles for has AVX512-VBMI's byte
/// permutations (vpermi2b), which kiln-cpu-byte-lookups uses.
bool cpuHasByteShuffles(const CpuOptions &options);

/// Adds the passes that take a module of kiln functions to the LLVM dialect,
/// each public function gaining a `kiln_entry_<name>(void **args)` wrapper.
/// Of `options`, all but `optLevel` matter here; `cpu` only for whether
/// kiln-cpu-byte-lookups may use AVX512-VBMI (cpuHasByteShuffles).
void buildCpuLoweringPipeline(OpPassManager &pm,
                              const CpuOptions &options = CpuOptions());

/// Adds the conversions that end the CPU lowering, from loops, vectors and
/// buffers (the SCF already converted to control flow) to the LLVM
/// dialect: math through LLVM intrinsics and libm, buffers through the
/// runtime's counting allocator (kiln-cpu-memory-hooks), and with
/// `openmp` the OpenMP dialect's parallel regions. The CUDA backend ends
/// with them too where it runs its kernels on the host.
void addCpuLlvmConversions(OpPassManager &pm, bool openmp);

/// Registers the CPU backend's passes (CpuPasses.td) and
/// `--kiln-cpu-lowering` (the pipeline above) for kiln-opt;
/// `--kiln-cpu-lowering=fuse=false` turns fusion off.
void registerCpuPipelines();


/// The unit attribute by which kiln-cpu-profile-names marks the functions
/// of the program, the only ones kiln-cpu-profile instruments (not the
/// helpers the lowering adds).
constexpr const char kProfiledFunctionAttrName[] = "kiln.profiled";


/// The integer attribute by which kiln-cpu-pool-constants gives a constant
/// global its offset in the module's constant pool.
constexpr const char kPoolOffsetAttrName[] = "kiln.pool_offset";

/// The constant pool taken out of a module: its size in bytes and, for each
/// global kiln-cpu-pool-constants pooled, its offset and bytes. The bytes
/// are a dense attribute's storage, which the MLIRContext owns: they stay
/// valid after the globals are erased, for as long as the context lives.
struct ConstantPool {
  uint64_t size = 0;
  llvm::SmallVector<std::pair<uint64_t, llvm::ArrayRef<char>>> pieces;

  /// Writes the pooled bytes into `pool`, `size` zeroed bytes (the gaps
  /// that alignment leaves stay zero).
  void write(uint8_t *pool) const;
};

/// Takes the globals kiln-cpu-pool-constants pooled out of the module into
/// `pool` and erases them; the module is then ready for translation. Leaves
/// `pool` empty for a module without a pool. Returns false with `error` set
/// for a pool that the pass did not make.
bool extractConstantPool(ModuleOp module, ConstantPool &pool,
                         std::string &error);

/// Translates an LLVM-dialect module to LLVM IR for the target and runs
/// LLVM's optimization pipeline at `options.optLevel`.
std::unique_ptr<llvm::Module> translateAndOptimize(ModuleOp module,
                                                   llvm::LLVMContext &context,
                                                   const CpuOptions &options,
                                                   std::string &error);

/// Emits the relocatable object code of an optimized LLVM module.
bool emitObject(llvm::Module &module, const CpuOptions &options,
                llvm::SmallVectorImpl<char> &object, std::string &error);

/// Links a relocatable object into a shared object with the host C
/// compiler driver, resolving libm; returns the shared object's bytes.
bool linkSharedObject(llvm::ArrayRef<char> object,
                      std::vector<uint8_t> &sharedObject, std::string &error);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CPU_H
