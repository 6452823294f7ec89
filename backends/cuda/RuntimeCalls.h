//===- RuntimeCalls.h - The runtime's calls of host code --------*- C++ -*-===//
//-*-===//
//
// The CUDA passes that capture host code into graphs (kiln-cuda-graph-calls,
// -graph-conds, -graph-loops) allow the runtime's calls that only queue
// device work, and the binding of the host code to the runtime
// (GpuRuntimeBinding.cpp) checks that the runtime provides each call the
// host code makes. The calls are listed here once, in the two families the
// passes add to together, so that a new call of a graph form is allowed
// and bound everywhere by one entry.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_RUNTIMECALLS_H
#define KILN_BACKENDS_CUDA_RUNTIMECALLS_H

#include "kiln/CudaLibraryAbi.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {

/// The library calls that queue device work on the stream and nothing
/// else once their first run has loaded the library and planned the
/// problem: products (cuBLASLt), convolutions and attention (cuDNN).
inline constexpr llvm::StringLiteral kLibraryWorkCalls[] = {
    KILN_CUDA_MATMUL_FUNCTION, KILN_CUDA_CONV_FUNCTION,
    KILN_CUDA_ATTENTION_FUNCTION, KILN_CUDA_ATTENTION_GRAD_FUNCTION};

/// The calls of loops and conds in their graph forms (their queries, the
/// while and if brackets) and of tuned call sites (TunedSites.h), whose
/// work becomes nodes of the capture they run in.
inline constexpr llvm::StringLiteral kGraphFormCalls[] = {
    KILN_CUDA_GRAPH_LOOPS_FUNCTION,
    KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION,
    KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION,
    KILN_CUDA_GRAPH_WHILE_BEGIN_FUNCTION,
    KILN_CUDA_GRAPH_WHILE_TEST_FUNCTION,
    KILN_CUDA_GRAPH_WHILE_END_FUNCTION,
    KILN_CUDA_GRAPH_CONDS_FUNCTION,
    KILN_CUDA_GRAPH_IF_BEGIN_FUNCTION,
    KILN_CUDA_GRAPH_IF_ELSE_FUNCTION,
    KILN_CUDA_GRAPH_IF_END_FUNCTION,
    KILN_CUDA_TUNE_ROUNDS_FUNCTION,
    KILN_CUDA_TUNE_BEGIN_FUNCTION,
    KILN_CUDA_TUNE_END_FUNCTION};

/// Whether `callee` is one of kLibraryWorkCalls or kGraphFormCalls, or of
/// `otherCalls` (those a pass allows besides).
inline bool isDeviceWorkCall(llvm::StringRef callee,
                             llvm::ArrayRef<llvm::StringLiteral> otherCalls) {
  return llvm::is_contained(kLibraryWorkCalls, callee) ||
         llvm::is_contained(kGraphFormCalls, callee) ||
         llvm::is_contained(otherCalls, callee);
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_RUNTIMECALLS_H
