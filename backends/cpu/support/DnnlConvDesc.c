/*===- DnnlConvDesc.c - A kiln convolution descriptor as oneDNN's ----------===*\
 *
 * See DnnlConvDesc.h. Linked into the modules (in the kiln_dnnl_support
 * archive, hidden like the rest of it) and into the compiler.
 *
\*===----------------------------------------------------------------------===*/

#include "DnnlConvDesc.h"
#include "DnnlConvAbi.h"

#include <string.h>

/* The spatial entries of `desc`, by kind (DnnlConvAbi.h). */
typedef struct Spatial {
  int k;
  const int64_t *in, *kernel, *out, *stride, *low, *high, *dilation;
} Spatial;

static Spatial spatialOf(const int64_t *desc) {
  Spatial s;
  s.k = (int)desc[0];
  s.in = desc + KILN_DNNL_CONV_HEADER_SIZE;
  s.kernel = s.in + s.k;
  s.out = s.kernel + s.k;
  s.stride = s.out + s.k;
  s.low = s.stride + s.k;
  s.high = s.low + s.k;
  s.dilation = s.high + s.k;
  return s;
}

/* `md` over dims[0..ndims) (logical order [N, C, spatial...]) of `type`,
 * row-major, with dim 1 innermost where `channelsLast`, or in oneDNN's
 * layout blocked by `block` channels (8 or 16; 0: not blocked). */
static dnnl_status_t describeActivation(dnnl_memory_desc_t *md, int ndims,
                                        const dnnl_dims_t dims,
                                        dnnl_data_type_t type, int channelsLast,
                                        int block) {
  static const dnnl_format_tag_t plain[] = {dnnl_abc, dnnl_abcd, dnnl_abcde};
  static const dnnl_format_tag_t last[] = {dnnl_acb, dnnl_acdb, dnnl_acdeb};
  static const dnnl_format_tag_t by8[] = {dnnl_nCw8c, dnnl_nChw8c,
                                          dnnl_nCdhw8c};
  static const dnnl_format_tag_t by16[] = {dnnl_nCw16c, dnnl_nChw16c,
                                           dnnl_nCdhw16c};
  const dnnl_format_tag_t *tags = block == 16    ? by16
                                  : block        ? by8
                                  : channelsLast ? last
                                                 : plain;
  return dnnl_memory_desc_init_by_tag(md, ndims, dims, type, tags[ndims - 3]);
}

/* Row-major strides of dims[0..ndims). */
static void rowMajor(int ndims, const dnnl_dims_t dims, dnnl_dims_t strides) {
  dnnl_dim_t stride = 1;
  for (int d = ndims - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d] > 0 ? dims[d] : 1;
  }
}

void kiln_dnnl_conv_clip_bounds(const int64_t *desc, float bounds[2]) {
  const int64_t *entries =
      desc + kiln_dnnl_conv_descriptor_size(desc[0], desc[5]) - 2;
  for (int i = 0; i < 2; ++i) {
    uint32_t bits = (uint32_t)entries[i];
    memcpy(&bounds[i], &bits, sizeof(float));
  }
}

int kiln_dnnl_int8_dot_products(void) {
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & (dnnl_cpu_isa_avx512_core_vnni & ~dnnl_cpu_isa_avx512_core)) ||
         (isa & (dnnl_cpu_isa_avx2_vnni & ~dnnl_cpu_isa_avx2));
}

dnnl_status_t kiln_dnnl_conv_describe(const int64_t *desc, int64_t flags,
                                      dnnl_data_type_t type,
                                      dnnl_memory_desc_t user[3],
                                      dnnl_memory_desc_t *bias) {
  Spatial s = spatialOf(desc);
  int64_t groups = desc[1], n = desc[2], c = desc[3], o = desc[4];
  dnnl_dims_t srcDims, weightDims, dstDims, strides;
  srcDims[0] = n;
  srcDims[1] = c;
  dstDims[0] = n;
  dstDims[1] = o;
  int weightRank = 0;
  if (groups > 1)
    weightDims[weightRank++] = groups;
  weightDims[weightRank++] = o / groups;
  weightDims[weightRank++] = c / groups;
  for (int d = 0; d < s.k; ++d) {
    srcDims[2 + d] = s.in[d];
    dstDims[2 + d] = s.out[d];
    weightDims[weightRank++] = s.kernel[d];
  }
  dnnl_data_type_t srcType = type, weightType = type, dstType = type;
  if ((flags & KILN_DNNL_CONV_BFLOAT16) && (flags & KILN_DNNL_CONV_F32_DST))
    dstType = dnnl_f32;
  if (flags & KILN_DNNL_CONV_INT8) {
    srcType = (flags & KILN_DNNL_CONV_SIGNED_SRC) ? dnnl_s8 : dnnl_u8;
    weightType = dnnl_s8;
    dstType = !(flags & KILN_DNNL_CONV_INT8_DST)      ? dnnl_f32
              : (flags & KILN_DNNL_CONV_SIGNED_DST) ? dnnl_s8
                                                     : dnnl_u8;
  }
  int block = (flags & KILN_DNNL_CONV_BLOCK_16) ? 16 : 8;
  if (((flags & KILN_DNNL_CONV_BLOCKED_SRC) && c % block) ||
      ((flags & KILN_DNNL_CONV_BLOCKED_DST) && o % block))
    return dnnl_invalid_arguments;
  dnnl_status_t status;
  dnnl_dims_t biasDims = {o};
  if ((status =
           dnnl_memory_desc_init_by_tag(bias, 1, biasDims, dnnl_f32, dnnl_a)) ||
      (status = describeActivation(
           &user[0], s.k + 2, srcDims, srcType,
           (flags & KILN_DNNL_CONV_CHANNELS_LAST_SRC) != 0,
           (flags & KILN_DNNL_CONV_BLOCKED_SRC) ? block : 0)) ||
      (status = describeActivation(
           &user[2], s.k + 2, dstDims, dstType,
           (flags & KILN_DNNL_CONV_CHANNELS_LAST_DST) != 0,
           (flags & KILN_DNNL_CONV_BLOCKED_DST) ? block : 0)))
    return status;
  rowMajor(weightRank, weightDims, strides);
  return dnnl_memory_desc_init_by_strides(&user[1], weightRank, weightDims,
                                          weightType, strides);
}

dnnl_status_t kiln_dnnl_conv_layouts(int64_t flags,
                                     const dnnl_memory_desc_t user[3],
                                     dnnl_memory_desc_t layouts[3]) {
  for (int i = 0; i < 3; ++i) {
    layouts[i] = user[i];
    if ((flags & KILN_DNNL_CONV_BLOCKED) ||
        (i == 1 && (flags & KILN_DNNL_CONV_ANY_WEIGHTS))) {
      dnnl_status_t status = dnnl_memory_desc_init_by_tag(
          &layouts[i], user[i].ndims, user[i].dims, user[i].data_type,
          dnnl_format_tag_any);
      if (status)
        return status;
    }
  }
  return dnnl_success;
}

dnnl_status_t kiln_dnnl_conv_primitive_desc(
    const int64_t *desc, int64_t flags, const dnnl_memory_desc_t layouts[3],
    const dnnl_memory_desc_t *bias, const dnnl_memory_desc_t *binaryAddend,
    const KilnDnnlConvQuant *quant, dnnl_engine_t engine,
    dnnl_primitive_desc_t *pd) {
  Spatial s = spatialOf(desc);
  dnnl_dims_t strides, dilates, padLow, padHigh;
  for (int d = 0; d < s.k; ++d) {
    strides[d] = s.stride[d];
    dilates[d] = s.dilation[d] - 1; /* oneDNN counts the holes */
    padLow[d] = s.low[d];
    padHigh[d] = s.high[d];
  }
  dnnl_status_t status;
  dnnl_convolution_desc_t convolution;
  if ((status = dnnl_dilated_convolution_forward_desc_init(
           &convolution, dnnl_forward_inference,
           (flags & KILN_DNNL_CONV_WINOGRAD) ? dnnl_convolution_winograd
                                             : dnnl_convolution_direct,
           &layouts[0], &layouts[1],
           (flags & KILN_DNNL_CONV_BIAS) ? bias : NULL, &layouts[2], strides,
           dilates, padLow, padHigh)))
    return status;
  /* The epilogue: dst = act(conv + bias + addend), act a ReLU, a clip or
   * a SiLU (oneDNN's swish with alpha 1: x * sigmoid(x)), the addend read from
   * its own buffer (a binary post-op) or being what dst holds before the
   * primitive runs (a sum post-op). */
  dnnl_primitive_attr_t attr = NULL;
  /* A quantized convolution: dst = relu(scales[o] * (sum of (src - src
   * zero point) * weights + bias[o])) (oneDNN 2.6 adds an int8
   * convolution's bias before its scales), plus the dst zero point before
   * an 8-bit dst is rounded; the src zero point's compensation (padding
   * included) is oneDNN's. */
  if (flags & KILN_DNNL_CONV_INT8) {
    if (!quant)
      return dnnl_invalid_arguments;
    dnnl_post_ops_t ops = NULL;
    if ((status = dnnl_primitive_attr_create(&attr)) ||
        (status = dnnl_primitive_attr_set_output_scales(
             attr, desc[4], /*mask: dim 1, the channels*/ 1 << 1,
             quant->scales)) ||
        (quant->srcZeroPoint &&
         (status = dnnl_primitive_attr_set_zero_points(
              attr, DNNL_ARG_SRC, 1, 0, &quant->srcZeroPoint))) ||
        (quant->dstZeroPoint &&
         (status = dnnl_primitive_attr_set_zero_points(
              attr, DNNL_ARG_DST, 1, 0, &quant->dstZeroPoint))) ||
        ((flags & KILN_DNNL_CONV_RELU) &&
         ((status = dnnl_post_ops_create(&ops)) ||
          (status = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu,
                                                 0.0f, 0.0f)) ||
          (status = dnnl_primitive_attr_set_post_ops(attr, ops))))) {
      if (ops)
        dnnl_post_ops_destroy(ops);
      if (attr)
        dnnl_primitive_attr_destroy(attr);
      return status;
    }
    if (ops)
      dnnl_post_ops_destroy(ops);
  } else if (flags & (KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_ACTIVATIONS)) {
    float clip[2] = {0, 0};
    if (flags & KILN_DNNL_CONV_CLIP)
      kiln_dnnl_conv_clip_bounds(desc, clip);
    dnnl_post_ops_t ops;
    if ((status = dnnl_post_ops_create(&ops)))
      return status;
    if (((flags & KILN_DNNL_CONV_ADDEND) &&
         (status = binaryAddend ? dnnl_post_ops_append_binary(
                                      ops, dnnl_binary_add, binaryAddend)
                                : dnnl_post_ops_append_sum(ops, 1.0f))) ||
        ((flags & KILN_DNNL_CONV_RELU) &&
         (status = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu,
                                                0.0f, 0.0f))) ||
        ((flags & KILN_DNNL_CONV_CLIP) &&
         (status = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_clip,
                                                clip[0], clip[1]))) ||
        ((flags & KILN_DNNL_CONV_SWISH) &&
         (status = dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_swish,
                                                1.0f, 0.0f))) ||
        (status = dnnl_primitive_attr_create(&attr)) ||
        (status = dnnl_primitive_attr_set_post_ops(attr, ops))) {
      dnnl_post_ops_destroy(ops);
      if (attr)
        dnnl_primitive_attr_destroy(attr);
      return status;
    }
    dnnl_post_ops_destroy(ops);
  }
  /* The caller provides the scratchpad (DnnlConv.c): calls of a module
   * on several threads at once each run on their own. */
  if ((!attr && (status = dnnl_primitive_attr_create(&attr))) ||
      (status = dnnl_primitive_attr_set_scratchpad_mode(
           attr, dnnl_scratchpad_mode_user))) {
    if (attr)
      dnnl_primitive_attr_destroy(attr);
    return status;
  }
  status = dnnl_primitive_desc_create(pd, &convolution, attr, engine, NULL);
  dnnl_primitive_attr_destroy(attr);
  return status;
}
