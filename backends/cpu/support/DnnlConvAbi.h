/*===- DnnlConvAbi.h - The oneDNN convolution calls' contract -------------===*\
 *
 * kiln-cpu-conv-to-dnnl (backends/cpu/ConvToDnnl.cpp) replaces each
 * outlined convolution by a call of kiln_dnnl_conv_f32,
 * kiln_dnnl_conv_bf16 or kiln_dnnl_conv_int8 (DnnlConv.c) with a
 * descriptor; this header is the
 * contract between the two, in plain C so that both sides include it (and
 * kiln-cpu-profile, which names the calls after their descriptors).
 *
 * The descriptor is a constant int64_t array of the module: a header of
 * KILN_DNNL_CONV_HEADER_SIZE entries (spatial rank k, 1 to 3; groups; N;
 * C; O; flags), then k entries each - one per spatial dim - of the input
 * sizes, the kernel sizes, the output sizes, the strides, the low
 * paddings, the high paddings and the (rhs) dilations. The sizes are in
 * the logical order [N, C, D...] whatever the order in memory (the
 * channels-last and blocked flags).
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_DNNLCONVABI_H
#define KILN_BACKENDS_CPU_SUPPORT_DNNLCONVABI_H

#include <stdint.h>

enum KilnDnnlConvLayout {
  KILN_DNNL_CONV_HEADER_SIZE = 6,
  KILN_DNNL_CONV_ENTRIES_PER_DIM = 7
};

/* The header's flags. */
enum KilnDnnlConvFlags {
  KILN_DNNL_CONV_BIAS = 1,            /* a per-channel bias [O] is passed */
  KILN_DNNL_CONV_ADDEND = 2,          /* a tensor of dst's shape is added */
  KILN_DNNL_CONV_RELU = 4,            /* then a ReLU */
  KILN_DNNL_CONV_CONSTANT_WEIGHT = 8, /* the weights never change */
  KILN_DNNL_CONV_BLOCKED = 16,        /* layouts of oneDNN's choice */
  KILN_DNNL_CONV_BFLOAT16 = 32,       /* bf16 src, weights and dst */
                                      /* (dst f32: KILN_DNNL_CONV_F32_DST) */
  KILN_DNNL_CONV_SWISH = 64,          /* then x * sigmoid(x) (not with
                                         KILN_DNNL_CONV_RELU) */
  /* The channel dim last in memory: src [N, D..., C] (row-major in that
   * order), dst and the addend [N, E..., O]. The descriptor's sizes stay
   * in the logical order above. */
  KILN_DNNL_CONV_CHANNELS_LAST_SRC = 128,
  KILN_DNNL_CONV_CHANNELS_LAST_DST = 256,
  /* A quantized convolution (kiln_dnnl_conv_int8): src holds 8-bit
   * integers (uint8, or int8 with KILN_DNNL_CONV_SIGNED_SRC), the weights
   * int8; with the sum s = sum((src - src zero point) * weights), exact in
   * int32, dst is the f32 scales[o] * (s + bias[o]), then a ReLU where
   * KILN_DNNL_CONV_RELU says; or, with KILN_DNNL_CONV_INT8_DST, that
   * requantized: rounded to the nearest integer (ties to even) after the
   * dst zero point is added, saturated to uint8 (int8 with
   * KILN_DNNL_CONV_SIGNED_DST). No addend. */
  KILN_DNNL_CONV_INT8 = 512,
  KILN_DNNL_CONV_SIGNED_SRC = 1024,
  KILN_DNNL_CONV_INT8_DST = 2048,
  KILN_DNNL_CONV_SIGNED_DST = 4096,
  /* After the bias and the addend, instead of a ReLU or a SiLU:
   * min(max(x, lo), hi) (a ReLU6: lo 0, hi 6), each bound possibly
   * infinite; NaN stays NaN, as kiln.max and kiln.min keep it. */
  KILN_DNNL_CONV_CLIP = 8192,
  /* Not quantized, with an activation: a bound on |dst| (an f32
   * scalar) is written, +inf where the call knows none (a NaN or an
   * infinity can be in dst); and one on |src|, written so by an earlier
   * call, is read instead of src's values where it suffices. */
  KILN_DNNL_CONV_DST_BOUND = 16384,
  KILN_DNNL_CONV_SRC_BOUND = 32768,
  /* f32 only, with KILN_DNNL_CONV_BLOCKED: oneDNN's Winograd algorithm
   * (its F(2x2, 3x3) and F(4x4, 3x3) kernels, in its nChw16c layout)
   * instead of direct sums. Its transforms add and subtract inputs that a
   * direct sum keeps apart, so an infinity, a NaN or an overflow in them
   * reaches results that the direct sum would leave finite: the call
   * runs it only where every operand is finite and no transformed value
   * can overflow, and the direct primitive otherwise (also where oneDNN
   * has no Winograd kernel for the CPU it runs on). */
  KILN_DNNL_CONV_WINOGRAD = 65536,
  /* With KILN_DNNL_CONV_BFLOAT16: dst and the addend are f32, the sums and
   * their epilogue written unrounded (else dst is bf16: the epilogue's
   * result rounded once). */
  KILN_DNNL_CONV_F32_DST = 131072,
  /* The weights in a layout of oneDNN's choice (reordered once where they
   * are constant), src and dst as the call passes them (with
   * KILN_DNNL_CONV_CHANNELS_LAST_*: oneDNN's kernels that read and write
   * channels-last activations directly, with no reorder on any call).
   * KILN_DNNL_CONV_BLOCKED asks for all three. */
  KILN_DNNL_CONV_ANY_WEIGHTS = 262144,
  /* oneDNN's blocked layouts as the call passes them: src [N, C / b, D...,
   * b] (nChw8c and the like: channel c of a position at block c / b, lane
   * c % b), dst and the addend [N, O / b, E..., b], with b 8, or 16 with
   * KILN_DNNL_CONV_BLOCK_16; C (O) a multiple of b. Not with
   * KILN_DNNL_CONV_CHANNELS_LAST_* for the same operand. With
   * KILN_DNNL_CONV_ANY_WEIGHTS, the activations of a chain of
   * convolutions stay in the layout that oneDNN's kernels read and write,
   * with no reorder on any call. */
  KILN_DNNL_CONV_BLOCKED_SRC = 524288,
  KILN_DNNL_CONV_BLOCKED_DST = 1048576,
  KILN_DNNL_CONV_BLOCK_16 = 2097152,
  /* f32 only, for a 3x3 convolution at stride 1 (WinogradConv.h): kiln's
   * own F(4x4, 3x3) Winograd algorithm, for CPUs where oneDNN has no
   * Winograd kernel, on src and dst in the layouts the call passes (with
   * KILN_DNNL_CONV_ANY_WEIGHTS and the layouts' flags, as the direct
   * kernels take them). It takes the guard of KILN_DNNL_CONV_WINOGRAD:
   * the direct primitive runs where an operand is not finite or a
   * transformed value could overflow. */
  KILN_DNNL_CONV_OWN_WINOGRAD = 4194304
};

/* The number of entries of a descriptor of spatial rank `k` with `flags`:
 * the header, the per-dim entries and, with a clip, its two bounds (the
 * last two). */
static inline int64_t kiln_dnnl_conv_descriptor_size(int64_t k,
                                                     int64_t flags) {
  return KILN_DNNL_CONV_HEADER_SIZE + KILN_DNNL_CONV_ENTRIES_PER_DIM * k +
         ((flags & KILN_DNNL_CONV_CLIP) ? 2 : 0);
}

/* The flags of the activations that oneDNN applies as post-ops (eltwise
 * relu, clip, swish): they map a NaN, and the SiLU a -inf, to a number,
 * so a call runs them only where no such value can reach them (DnnlConv.c). */
#define KILN_DNNL_CONV_ACTIVATIONS                                             \
  (KILN_DNNL_CONV_RELU | KILN_DNNL_CONV_SWISH | KILN_DNNL_CONV_CLIP)

#endif /* KILN_BACKENDS_CPU_SUPPORT_DNNLCONVABI_H */
