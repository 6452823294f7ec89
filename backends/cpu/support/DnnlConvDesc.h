/*===- DnnlConvDesc.h - A kiln convolution descriptor as oneDNN's ----------===*\
 *
 * The translation of a convolution descriptor (DnnlConvAbi.h) into oneDNN's
 * memory and primitive descriptors, shared by the modules' calls
 * (DnnlConv.c, which runs the primitive) and the compiler
 * (DnnlConvLayouts.cpp, which asks oneDNN at compile time which layouts
 * its fastest implementation wants), so that both describe the same
 * convolution. Plain C on oneDNN's C API.
 *
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_DNNLCONVDESC_H
#define KILN_BACKENDS_CPU_SUPPORT_DNNLCONVDESC_H

#include "DnnlConvAbi.h"

#include <dnnl.h>

#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The scales and zero points of a quantized convolution
 * (KILN_DNNL_CONV_INT8): scales[0..O) multiply each output channel's
 * integer sum (plus its bias); the dst zero point is added before an
 * 8-bit dst is rounded. */
typedef struct KilnDnnlConvQuant {
  const float *scales;
  int32_t srcZeroPoint, dstZeroPoint;
} KilnDnnlConvQuant;

/* Whether oneDNN runs int8 products with VNNI's dot-product instructions
 * (AVX-512 VNNI, AVX-VNNI) on this CPU. Without them its uint8 x int8
 * kernels add pairs of products in 16 bits (vpmaddubsw), which saturate
 * for large values, so a quantized convolution must run as f32 instead. */
int kiln_dnnl_int8_dot_products(void);

/* The operands of the convolution `desc` as its caller lays them out, on
 * elements of `type` (for KILN_DNNL_CONV_INT8: uint8 or int8 src, int8
 * weights and f32, uint8 or int8 dst, whatever `type` says): user[0] src [N, C,
 * D...], user[1] weights [O, C/G, K...] (described as [G, O/G, C/G, K...] when
 * G > 1: the same bytes), user[2] dst [N, O, E...], each row-major, but src and
 * dst with the channel dim last in memory where `flags` has the channels-last
 * flags, or blocked with its blocked flags; and `bias`, an f32 vector [O]. A
 * blocked src or dst whose channels are not a multiple of the block is
 * dnnl_invalid_arguments. */
dnnl_status_t kiln_dnnl_conv_describe(const int64_t *desc, int64_t flags,
                                      dnnl_data_type_t type,
                                      dnnl_memory_desc_t user[3],
                                      dnnl_memory_desc_t *bias);

/* The bounds of the clip that a descriptor with KILN_DNNL_CONV_CLIP ends
 * with: bounds[0] the lower, bounds[1] the upper. */
void kiln_dnnl_conv_clip_bounds(const int64_t *desc, float bounds[2]);

/* kiln.relu, kiln.max and kiln.min (NaN-propagating; +0.0 above -0.0) or
 * x * sigmoid(x), as `flags` says, of `v`; `bounds` are a clip's. */
static inline float kiln_dnnl_conv_activated(int64_t flags,
                                             const float bounds[2], float v) {
  if (flags & KILN_DNNL_CONV_RELU)
    return !(v > 0) && v == v ? 0 : v;
  if (flags & KILN_DNNL_CONV_CLIP) {
    if (v < bounds[0] || (v == bounds[0] && signbit(v)))
      v = bounds[0];
    if (v > bounds[1] || (v == bounds[1] && !signbit(v)))
      v = bounds[1];
    return v;
  }
  if (flags & KILN_DNNL_CONV_SWISH)
    return v * (1.0f / (1.0f + expf(-v)));
  return v;
}

/* `layouts` (src, weights, dst) as `user` has them or, where `flags` has
 * KILN_DNNL_CONV_BLOCKED, in the format `any` (oneDNN's choice). */
dnnl_status_t kiln_dnnl_conv_layouts(int64_t flags,
                                     const dnnl_memory_desc_t user[3],
                                     dnnl_memory_desc_t layouts[3]);

/* The forward-inference primitive descriptor of `desc` on `engine` for
 * src, weights and dst in `layouts` (any of them format `any`, then
 * queried), with the bias, addend, ReLU, clip and swish epilogue that `flags`
 * names. The addend is a `binary` add post-op reading a tensor of layout
 * `binaryAddend` (argument DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) |
 * DNNL_ARG_SRC_1) where that is not null, else a `sum` post-op adding what
 * dst holds. A quantized convolution takes its per-channel output scales
 * and its zero points from `quant` (null for the others). */
dnnl_status_t kiln_dnnl_conv_primitive_desc(
    const int64_t *desc, int64_t flags, const dnnl_memory_desc_t layouts[3],
    const dnnl_memory_desc_t *bias, const dnnl_memory_desc_t *binaryAddend,
    const KilnDnnlConvQuant *quant, dnnl_engine_t engine,
    dnnl_primitive_desc_t *pd);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BACKENDS_CPU_SUPPORT_DNNLCONVDESC_H */
