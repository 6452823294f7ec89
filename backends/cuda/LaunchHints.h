//===- LaunchHints.h - What a launch asks of its kernel ---------*- C++ -*-===//
//
// A pass that builds a kernel may know what the kernel needs of ptxas
// (kiln-cuda-flash-attention: the blocks per multiprocessor its speed rests
// on), and states it on the gpu.launch; kiln-cuda-outline-kernels carries
// it to the outlined kernel, as upstream outlining drops a launch's
// attributes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_LAUNCHHINTS_H
#define KILN_BACKENDS_CUDA_LAUNCHHINTS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {

/// An integer on a gpu.launch: the blocks of the launch that one
/// multiprocessor should run at a time (nvvm.minctasm on the kernel,
/// `.minnctapersm` in the PTX).
inline constexpr llvm::StringLiteral kMinBlocksPerSmAttr =
    "kiln.min_blocks_per_sm";

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_LAUNCHHINTS_H
