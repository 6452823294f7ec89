//===- LaunchHints.h - What a launch asks of its kernel ---------*- C++ -*-===//
//
// A pass that builds a kernel may know what the kernel needs of ptxas
// (kiln-cuda-flash-attention: the blocks per multiprocessor its speed rests
// on), and states it on the gpu.launch; kiln-cuda-outline-kernels carries
// it to the outlined kernel, as upstream outlining drops a launch's
// attributes. And what every launch must stay within: the workgroup
// memory a block may have statically, and with its kernel's opt-in on
// each architecture, which kiln-cuda-check-launches checks and the passes
// that build kernels size their buffers by.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_LAUNCHHINTS_H
#define KILN_BACKENDS_CUDA_LAUNCHHINTS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/SmallVector.h"
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

/// The shared memory a block may have on `arch` ("sm_XX") where its kernel
/// opts in (cudaDevAttrMaxSharedMemoryPerBlockOptin; the CUDA C++
/// Programming Guide's table of technical specifications):
/// kiln-cuda-dynamic-shared-memory gives a launch whose workgroup buffers
/// exceed kMaxStaticSharedBytes dynamic shared memory, which the runtime
/// opts in for. kMaxStaticSharedBytes for an architecture not listed.
inline int64_t maxSharedBytesPerBlock(llvm::StringRef arch) {
  if (arch == "sm_90")
    return 227 * 1024;
  if (arch == "sm_80" || arch == "sm_87")
    return 163 * 1024;
  if (arch == "sm_86" || arch == "sm_89")
    return 99 * 1024;
  if (arch == "sm_70" || arch == "sm_72")
    return 96 * 1024;
  if (arch == "sm_75")
    return 64 * 1024;
  return kMaxStaticSharedBytes;
}

/// The alignment, in bytes, of each workgroup buffer that
/// kiln-cuda-dynamic-shared-memory places in dynamic shared memory (that
/// of the widest access, 16 bytes, as of the statically allocated ones).
inline constexpr int64_t kSharedBufferAlignment = 16;

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

/// The bytes of shared memory the workgroup buffers `types` take placed one
/// after the other at kSharedBufferAlignment, if their sizes are static;
/// each buffer's offset into `offsets` where given.
inline std::optional<int64_t>
sharedBytesOf(TypeRange types,
              llvm::SmallVectorImpl<int64_t> *offsets = nullptr) {
  int64_t bytes = 0;
  for (Type type : types) {
    std::optional<int64_t> size = workgroupBytes(type);
    if (!size)
      return std::nullopt;
    bytes = llvm::alignTo(bytes, kSharedBufferAlignment);
    if (offsets)
      offsets->push_back(bytes);
    bytes += *size;
  }
  return bytes;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_LAUNCHHINTS_H
