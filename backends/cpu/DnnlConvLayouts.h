//===- DnnlConvLayouts.h - The layouts oneDNN wants for a convolution -----===//
//
// (And, at the end, whether its matmul primitive packs a constant B.)
// kiln-cpu-outline-dnnl-convs chooses the memory order of each outlined
// convolution's input and result from what oneDNN's fastest implementation
// for it on this CPU reads and writes: asked at compile time, as the
// primitive is then created at run time (DnnlConvDesc.c describes both).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_DNNLCONVLAYOUTS_H
#define KILN_BACKENDS_CPU_DNNLCONVLAYOUTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::kiln::dnnl {

/// How a convolution's activations are laid out in memory: with the
/// channel dim last (NWC, NHWC, NDHWC), or in oneDNN's blocked layouts
/// ([N, C / b, D..., b]: nCw8c, nChw8c, nChw16c, ...), else plain.
struct ConvLayouts {
  bool inputLast = false;
  bool resultLast = false;
  /// The block of a blocked input or result (8 or 16), 0 where not.
  int64_t inputBlock = 0;
  int64_t resultBlock = 0;
  /// Read and written so by oneDNN's kernel as they are, only the weights
  /// in a layout of its choice (KILN_DNNL_CONV_ANY_WEIGHTS): no reorder of
  /// the activations on any call.
  bool direct = false;
};

/// The permutation (kiln.transpose's: result dim i is operand dim
/// perm[i]) that lays [N, C, D...] of rank `rank` out channels-last,
/// [N, D..., C]: [0, 2, ..., rank - 1, 1]. Its inverse takes it back.
inline llvm::SmallVector<int64_t> toChannelsLast(int64_t rank) {
  llvm::SmallVector<int64_t> perm{0};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  perm.push_back(1);
  return perm;
}

/// What oneDNN's f32 (or, with the descriptor's bf16 or int8 flag, bf16 or
/// quantized, the latter with zero points `srcZeroPoint` and
/// `dstZeroPoint`) forward convolution of `descriptor` (DnnlConvAbi.h),
/// created with layouts of its choice, picks for src and dst on the CPU
/// this runs on: channels-last, blocked by 8 or 16 channels, or neither
/// (`direct` is false); nullopt where kiln was built without oneDNN or
/// oneDNN has no implementation. The descriptor's epilogue flags are
/// included.
std::optional<ConvLayouts> preferredLayouts(llvm::ArrayRef<int64_t> descriptor,
                                            int32_t srcZeroPoint = 0,
                                            int32_t dstZeroPoint = 0);

/// Whether oneDNN on the CPU this runs on has a kernel of its own (not
/// its GEMM-based or reference ones) for the f32 or bf16 convolution of
/// `descriptor` on src and dst as they are in the layouts that
/// `layoutFlags` gives (KILN_DNNL_CONV_CHANNELS_LAST_* or
/// KILN_DNNL_CONV_BLOCKED_* with the block's flag), the weights in a layout
/// of its choice. Below AVX-512, where its fastest implementation wants the
/// activations in nChw8c, its AVX2 kernels read and write NHWC directly
/// too (MobileNetV2 at batch 8, one thread of an AMD EPYC: 205-237 ->
/// 121-137 ms), and nChw8c as it is from one convolution to the next.
/// False without oneDNN.
bool hasDirectKernel(llvm::ArrayRef<int64_t> descriptor, int64_t layoutFlags);

/// Whether oneDNN's int8 products on the CPU this runs on use VNNI's dot
/// products (false without oneDNN): without them a quantized convolution's
/// call widens its operands to f32 (DnnlConv.c), slower than the f32
/// convolution it replaces.
bool hasInt8DotProducts();

/// Whether oneDNN's f32 matmul primitive on the CPU this runs on, asked
/// for the M x K by K x N product (B stored N x K with `transposeB`) with
/// B in a layout of its choice, keeps a constant B packed in a layout of
/// its own (its brgemm kernels, from AVX-512 up); false where it keeps B
/// plain (its GEMM-based kernels below, which pack B on every call), has
/// only its reference kernel or none, or kiln was built without oneDNN.
/// kiln-cpu-matmul-to-dnnl packs such a B itself for products of few rows.
bool matmulPacksConstantB(int64_t m, int64_t n, int64_t k, bool transposeB);

} // namespace mlir::kiln::dnnl

#endif // KILN_BACKENDS_CPU_DNNLCONVLAYOUTS_H
