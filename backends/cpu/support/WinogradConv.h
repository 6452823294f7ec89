/*===- WinogradConv.h - kiln's own Winograd convolution -------------------===*\
 *
 * The F(4x4, 3x3) Winograd algorithm for the f32 3x3 convolutions at
 * stride 1 that kiln_dnnl_conv_f32 runs with KILN_DNNL_CONV_OWN_WINOGRAD
 * (DnnlConvAbi.h): on CPUs where oneDNN has no Winograd kernel of its own
 * (below AVX-512), on src and dst in the layouts the call passes them.
 * WinogradConv.c says how.
 *
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_WINOGRADCONV_H
#define KILN_BACKENDS_CPU_SUPPORT_WINOGRADCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct KilnWinogradConv KilnWinogradConv;

/* Whether the convolution `desc` (DnnlConvAbi.h) is one this algorithm
 * computes (WinogradShape.c, which the compiler calls too): two spatial
 * dims, one group, a 3x3 window at stride 1 without dilation, f32, src and
 * dst each plain, channels-last or blocked. */
int kiln_winograd_conv_applies(const int64_t *desc);

/* The bytes of transformed tiles (input and output) that one thread
 * handles at a time (WinogradConv.c says why). */
#define KILN_WINOGRAD_BLOCK_BYTES ((size_t)4 << 20)

/* The state of a call site of `desc` (which applies) with `flags` (the
 * descriptor's, whose layouts and epilogue it takes): its batched product
 * and, where the weights are constant (`constantWeights` not null), their
 * transform, computed here once. `blockBytes`: KILN_WINOGRAD_BLOCK_BYTES
 * (the tests take smaller blocks). */
KilnWinogradConv *kiln_winograd_conv_create(const int64_t *desc, int64_t flags,
                                            const float *constantWeights,
                                            size_t blockBytes);

/* dst = the activation of the flags of (conv(src, weights) + bias +
 * addend), as kiln_dnnl_conv_f32 defines it; `weights` is read only where
 * they were not constant at creation. `addend` may be dst. */
void kiln_winograd_conv_run(KilnWinogradConv *conv, const float *src,
                            const float *weights, const float *bias,
                            const float *addend, float *dst);

void kiln_winograd_conv_destroy(KilnWinogradConv *conv);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BACKENDS_CPU_SUPPORT_WINOGRADCONV_H */
