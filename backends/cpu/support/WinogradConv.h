/*===- WinogradConv.h - kiln's own Winograd convolution -------------------===*\
 *
 * The Winograd algorithms for the f32 convolutions at stride 1 that
 * kiln_dnnl_conv_f32 runs with KILN_DNNL_CONV_OWN_WINOGRAD (DnnlConvAbi.h):
 * F(4x4, 3x3) for 3x3 windows, on CPUs where oneDNN has no Winograd kernel
 * of its own (below AVX-512), and F(m, r) along one dim for 1 x r and r x 1
 * windows, which oneDNN's never take; on src and dst in the layouts the
 * call passes them.
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

/* The most outputs of a one-dimensional tile (m of F(m, r)), the longest
 * window r, and so the longest line of inputs a tile transforms. Longer
 * lines multiply less per output and round more: at most, from the exact
 * sums relative to the largest output (normal operands, 128 channels, in a
 * float simulation), F(4, 7) on 10 points 8.5e-6, F(2, 7) on 8 1.8e-6,
 * F(4, 3) 1.2e-6 against F(8, 3) 1.6e-5, and F(4x4, 3x3) 2.2e-6. */
#define KILN_WINOGRAD_MAX_OUTPUTS 4
#define KILN_WINOGRAD_MAX_WINDOW 7
#define KILN_WINOGRAD_MAX_LINE                                                 \
  (KILN_WINOGRAD_MAX_OUTPUTS + KILN_WINOGRAD_MAX_WINDOW - 1)

/* The dims a tile spans: both (F(4x4, 3x3) on 6x6 inputs), or one line of
 * outputs along the width (a 1 x r window) or the height (r x 1). */
enum KilnWinogradAxis {
  KILN_WINOGRAD_SQUARE = 0,
  KILN_WINOGRAD_ROWS = 1,
  KILN_WINOGRAD_COLUMNS = 2
};

/* How the algorithm tiles a convolution's outputs. */
typedef struct KilnWinogradTiling {
  int axis;
  /* The window along the axis (3 for the square one); the outputs per
   * tile along each dim (4x4, 1 x m or m x 1); the transformed values per
   * tile and channel (36, or m + r - 1), one batched product each; the
   * tiles per image along each dim. */
  int64_t window, tileH, tileW, positions, tilesH, tilesW;
} KilnWinogradTiling;

/* Whether the convolution `desc` (DnnlConvAbi.h) is one this algorithm
 * computes (WinogradShape.c, which the compiler calls too): two spatial
 * dims, one group, a 3x3, 1 x r or r x 1 (3 <= r <= 7) window at stride 1
 * without dilation, f32, src and dst each plain, channels-last or blocked;
 * and where it is, its tiling in `tiling` (unless null). */
int kiln_winograd_conv_tiling(const int64_t *desc, KilnWinogradTiling *tiling);
int kiln_winograd_conv_applies(const int64_t *desc);

/* The bytes of transformed tiles (input and output) that one thread
 * handles at a time: a core's L2 cache on the running CPU (WinogradConv.c
 * says why). */
size_t kiln_winograd_block_bytes(void);

/* The state of a call site of `desc` (which applies) with `flags` (the
 * descriptor's, whose layouts and epilogue it takes): its batched product
 * and, where the weights are constant (`constantWeights` not null), their
 * transform, computed here once. `blockBytes`: kiln_winograd_block_bytes()
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
