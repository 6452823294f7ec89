/*===- WinogradShape.c - Which convolutions kiln's Winograd computes ------===*\
 *
 * The one rule for which convolution descriptors kiln's own Winograd
 * convolution (WinogradConv.c) computes, and how it tiles their outputs,
 * shared by the modules' calls (in the kiln_dnnl_support archive, where
 * DnnlConv.c falls back to the direct sums for any other) and the compiler
 * (kiln-cpu-outline-dnnl-convs, which asks for it only where it applies
 * and pays, and kiln-cpu-profile, which names the calls), so that all
 * decide alike. Plain C, no oneDNN.
 *
\*===----------------------------------------------------------------------===*/

#include "WinogradConv.h"

#include "DnnlConvAbi.h"

/* The outputs per tile of a window of r along a dim of `length` outputs:
 * the m in 2 .. KILN_WINOGRAD_MAX_OUTPUTS with the fewest products per
 * line of outputs, (m + r - 1) ceil(length / m), the smaller m on a tie
 * (its transforms round less). A 1x7 window on a 17-wide map: F(4, 7), 50
 * products where the direct sums take 119; 1x3 on 8: F(4, 3), 12 against
 * 24; 7x1 on 5 rows: F(3, 7), 18 against 35. */
static int64_t lineOutputs(int64_t r, int64_t length) {
  int64_t best = 2, bestProducts = -1;
  for (int64_t m = 2; m <= KILN_WINOGRAD_MAX_OUTPUTS; ++m) {
    int64_t products = (m + r - 1) * ((length + m - 1) / m);
    if (bestProducts < 0 || products < bestProducts) {
      best = m;
      bestProducts = products;
    }
  }
  return best;
}

int kiln_winograd_conv_tiling(const int64_t *desc, KilnWinogradTiling *tiling) {
  const int64_t *d = desc + KILN_DNNL_CONV_HEADER_SIZE;
  int64_t flags = desc[5];
  if (desc[0] != 2 || desc[1] != 1 ||
      (flags & (KILN_DNNL_CONV_BFLOAT16 | KILN_DNNL_CONV_INT8)))
    return 0;
  /* Per dim: input sizes, kernel sizes, output sizes, strides, low and
   * high paddings, dilations (1: none). */
  for (int i = 0; i < 2; ++i)
    if (d[6 + i] != 1 || d[12 + i] != 1 || d[8 + i] < 0 || d[10 + i] < 0 ||
        d[4 + i] != d[i] + d[8 + i] + d[10 + i] - d[2 + i] + 1 || d[4 + i] <= 0)
      return 0;
  int64_t block = (flags & KILN_DNNL_CONV_BLOCK_16) ? 16 : 8;
  if (((flags & KILN_DNNL_CONV_BLOCKED_SRC) && desc[3] % block) ||
      ((flags & KILN_DNNL_CONV_BLOCKED_DST) && desc[4] % block))
    return 0;
  KilnWinogradTiling t;
  int64_t kh = d[2], kw = d[3], oh = d[4], ow = d[5];
  if (kh == 3 && kw == 3) {
    t.axis = KILN_WINOGRAD_SQUARE;
    t.window = 3;
    t.tileH = t.tileW = 4;
    t.positions = 36;
  } else if ((kh == 1) != (kw == 1) && kh * kw >= 3 &&
             kh * kw <= KILN_WINOGRAD_MAX_WINDOW) {
    t.axis = kh == 1 ? KILN_WINOGRAD_ROWS : KILN_WINOGRAD_COLUMNS;
    t.window = kh * kw;
    int64_t m = lineOutputs(t.window, kh == 1 ? ow : oh);
    t.tileH = kh == 1 ? 1 : m;
    t.tileW = kh == 1 ? m : 1;
    t.positions = m + t.window - 1;
  } else {
    return 0;
  }
  t.tilesH = (oh + t.tileH - 1) / t.tileH;
  t.tilesW = (ow + t.tileW - 1) / t.tileW;
  if (tiling)
    *tiling = t;
  return 1;
}

int kiln_winograd_conv_applies(const int64_t *desc) {
  return kiln_winograd_conv_tiling(desc, NULL);
}
