/*===- WinogradShape.c - Which convolutions kiln's Winograd computes ------===*\
 *
 * The one rule for which convolution descriptors kiln's own Winograd
 * convolution (WinogradConv.c) computes, shared by the modules' calls (in
 * the kiln_dnnl_support archive, where DnnlConv.c falls back to the direct
 * sums for any other) and the compiler (kiln-cpu-outline-dnnl-convs, which
 * asks for it only where it applies), so that both decide alike. Plain C,
 * no oneDNN.
 *
\*===----------------------------------------------------------------------===*/

#include "WinogradConv.h"

#include "DnnlConvAbi.h"

int kiln_winograd_conv_applies(const int64_t *desc) {
  const int64_t *d = desc + KILN_DNNL_CONV_HEADER_SIZE;
  int64_t flags = desc[5];
  if (desc[0] != 2 || desc[1] != 1 ||
      (flags & (KILN_DNNL_CONV_BFLOAT16 | KILN_DNNL_CONV_INT8)))
    return 0;
  /* Per dim: input sizes, kernel sizes, output sizes, strides, low and
   * high paddings, dilations (1: none). */
  for (int i = 0; i < 2; ++i)
    if (d[2 + i] != 3 || d[6 + i] != 1 || d[12 + i] != 1 || d[8 + i] < 0 ||
        d[10 + i] < 0 || d[4 + i] != d[i] + d[8 + i] + d[10 + i] - 2 ||
        d[4 + i] <= 0)
      return 0;
  int64_t block = (flags & KILN_DNNL_CONV_BLOCK_16) ? 16 : 8;
  if (((flags & KILN_DNNL_CONV_BLOCKED_SRC) && desc[3] % block) ||
      ((flags & KILN_DNNL_CONV_BLOCKED_DST) && desc[4] % block))
    return 0;
  return 1;
}
