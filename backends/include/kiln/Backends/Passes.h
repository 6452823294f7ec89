//===- Passes.h - kiln backend passes ---------------------------*- C++ -*-===//
#ifndef KILN_BACKENDS_PASSES_H
#define KILN_BACKENDS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
namespace kiln {
class FusedKernelOp;

// The passes both targets run (Passes.td), then each target's (CpuPasses.td,
// CudaPasses.td, whose passes live in KilnBackendsCuda). Each target's
// passes are registered with its pipelines (registerCpuPipelines(),
// registerCudaPipelines()), the shared ones by registerKilnBackendsPasses().
#define GEN_PASS_DECL
#include "kiln/Backends/Passes.h.inc"
#define GEN_PASS_DECL
#include "kiln/Backends/CpuPasses.h.inc"
#define GEN_PASS_DECL
#include "kiln/Backends/CudaPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Backends/Passes.h.inc"

/// The attribute marking the @kiln_comm_* functions (CollectiveCalls.cpp),
/// whose calls use their buffer operands only until they return, or from an
/// exchange's start until its wait, which names them again.
constexpr const char kCommFunctionAttrName[] = "kiln.comm_function";

/// The attribute on an scf.parallel whose body is a library call or a copy
/// (kiln-cpu-matmul-to-dnnl, kiln-cpu-attention-calls, kiln-cpu-row-copies):
/// the innermost iterations one of its iterations stands for, which
/// kiln-cpu-parallel-loops counts to decide whether the loop runs on threads.
constexpr const char kBodyWorkAttrName[] = "kiln.body_work";

/// The attribute on the scf.parallel over an scf.index_switch by which
/// kiln-cpu-concurrent-branches runs independent kernels side by side: the
/// thread count the schedule is for, at which kiln-cpu-concurrent-sections
/// runs each case on a thread of its own.
constexpr const char kConcurrentAttrName[] = "kiln.concurrent";

/// Attaches the BufferizableOpInterface models through which one-shot
/// bufferization turns the flat collectives into calls of the runtime's
/// communicator (CollectiveCalls.cpp). Every context that runs a backend's
/// pipeline on a module with collectives needs them.
void registerCollectiveBufferizationModels(DialectRegistry &registry);

/// Patterns lowering kiln ops to linalg/tensor/arith/math/scf on tensors;
/// `rowLoops` as kiln-to-linalg's row-loops option.
void populateKilnToLinalgPatterns(RewritePatternSet &patterns,
                                  bool rowLoops = false);

/// Kiln to linalg on tensors, the steps the CPU and CUDA pipelines share
/// first (BufferizationPipeline.cpp): with `fuse`, kiln-fuse and the linalg
/// fusion of each kiln.fused region in its kiln.fused_kernel; `rowLoops` is
/// kiln-to-linalg's option of that name.
/// With `collectives`, collectives are rewritten into the communicator's
/// flat forms after fusion and left to bufferization, which turns them
/// into calls of the runtime's communicator (CollectiveCalls.cpp).
/// `recomputeTranscendentals` is kiln-fuse-linalg-groups' option of that
/// name.
void buildLinalgPipeline(OpPassManager &pm, bool fuse, bool rowLoops = false,
                         bool collectives = false,
                         bool recomputeTranscendentals = true);

/// Linalg on tensors to linalg on buffers with results as out-params, the
/// steps the CPU and CUDA pipelines share next (BufferizationPipeline.cpp);
/// the kiln.fused_kernels must be inlined by then. `copySlicedLoopInits`
/// is kiln-copy-sliced-call-operands' loop-inits option.
void buildBufferizationPipeline(OpPassManager &pm,
                                bool copySlicedLoopInits = false);

/// Upstream's buffer deallocation pipeline (ownership-based deallocation,
/// its simplification, the lowering of bufferization.dealloc); with
/// `freeAfterLastUse`, kiln-free-after-last-use between the simplification
/// and the lowering, so that buffers are freed after their last use rather
/// than at the end of their block (BufferizationPipeline.cpp).
void buildDeallocationPipeline(OpPassManager &pm, bool freeAfterLastUse);

/// Fails with an error naming `kernel` when its body no longer holds what
/// its kind promises: when it reads a reduction (for kind `reduction`) or a
/// contraction (`matmul_epilogue`) computed outside it instead of holding
/// one, or holds one its kind does not allow (FusedKernels.cpp).
LogicalResult verifyFusedKernelKind(FusedKernelOp kernel);

/// The prefix of the exported wrapper of each compiled function.
inline constexpr const char *kEntryPrefix = "kiln_entry_";

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_PASSES_H
