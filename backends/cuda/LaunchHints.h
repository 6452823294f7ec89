//===- LaunchHints.h - What a launch asks of its kernel ---------*- C++ -*-===//
//
// A pass that builds a kernel may know what the kernel needs of ptxas
// (kiln-cuda-flash-attention: the blocks per multiprocessor its speed rests
// on), and states it on the gpu.launch; kiln-cuda-outline-kernels carries
// it to the outlined kernel, as upstream outlining drops a launch's
// attributes. And what every launch must stay within: the workgroup
// memory a block may have statically, which kiln-cuda-check-launches
// checks and the passes that build kernels size their buffers by.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_LAUNCHHINTS_H
#define KILN_BACKENDS_CUDA_LAUNCHHINTS_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace mlir::kiln {

/// An integer on a gpu.launch: the blocks of the launch that one
/// multiprocessor should run at a time (nvvm.minctasm on the kernel,
/// `.minnctapersm` in the PTX).
inline constexpr llvm::StringLiteral kMinBlocksPerSmAttr =
    "kiln.min_blocks_per_sm";

/// Statically allocated workgroup (shared) memory per block on every CUDA
/// device; more needs dynamic shared memory and an opt-in attribute on
/// the kernel.
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// The bytes of a workgroup buffer of `type`, if its size is static.
inline std::optional<int64_t> workgroupBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return std::nullopt;
  Type element = memref.getElementType();
  int64_t bits;
  if (auto vector = dyn_cast<VectorType>(element))
    bits = vector.getNumElements() *
           vector.getElementType().getIntOrFloatBitWidth();
  else if (element.isIntOrIndexOrFloat() && !element.isIndex())
    bits = element.getIntOrFloatBitWidth();
  else
    return std::nullopt;
  return memref.getNumElements() * llvm::divideCeil(bits, 8);
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_LAUNCHHINTS_H
