/*===- WinogradConv.c - kiln's own Winograd convolutions -----------------===*\
 *
 * Part of the kiln_dnnl_support archive: kiln_dnnl_conv_f32 (DnnlConv.c)
 * runs a call site with KILN_DNNL_CONV_OWN_WINOGRAD here. A 3x3
 * convolution's direct kernels run at the FMA units' peak, and the only
 * way to finish sooner is to multiply less. oneDNN has Winograd kernels
 * only for AVX-512, and there the algorithm here ran every shape measured
 * as fast as they do or faster (ConvToDnnl.cpp), so the compiler picks it
 * on every CPU where it pays. F(4x4, 3x3) computes each 4x4
 * block of outputs from a 6x6 tile of inputs in 36 products per input and
 * output channel where the direct sums take 144 (Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks", 2016):
 *
 *   Y = A^T [(G g G^T) . (B^T d B)] A
 *
 * with d a 6x6 input tile, g the 3x3 window and `.` the elementwise
 * product. The interpolation points are 0, 1, -1, 1/2, -2 and infinity
 * (the matrices below, derived by Toom-Cook's construction): against the
 * textbook's 0, +-1, +-2 they halve the mean rounding error and divide the
 * largest by three (C 64, normal operands, relative to the largest
 * output: 1.3e-6 and 2.2e-6 against 2.7e-6 and 6.1e-6), as Barabasz et
 * al. found ("Error analysis and improving the accuracy of Winograd
 * convolution for deep neural networks", 2020). Summed
 * over the input channels, the elementwise products become 36 matrix
 * products, one per tile position (a, b):
 *
 *   M[a][t][k] = sum_c V[a][t][c] U[a][c][k]
 *
 * over the tiles t (of all images) and the channels: V = B^T d B of each
 * tile and channel, U = G g G^T of each window (computed once, in double,
 * where the weights are constant). The 36 products are one batched oneDNN
 * matmul primitive (the transformed weights in its packed layout where
 * they are constant); the transforms are loops here, vectorized over 8
 * channels at a time, contiguous in the channels-last and blocked layouts
 * that the call passes (plain NCHW works too, a lane at a time), and the
 * output transform applies the epilogue (bias, addend, activation) on its
 * way to dst. Where there are enough tiles, each OpenMP thread takes
 * blocks of them through all three phases (their planes stay in cache);
 * else each phase splits all tiles over the threads (oneDNN the product's
 * 36 planes).
 *
 * The transforms add and subtract inputs that the direct sums keep apart:
 * DnnlConv.c runs this only on finite operands whose transformed values
 * cannot overflow (its guard, with KILN_DNNL_CONV_WINOGRAD_GROWTH), and
 * the direct primitive otherwise (the transforms widen magnitudes by at
 * most 7 per dim on the input, 28/15 on the weights and 11.2 on the
 * output: a factor under 2400 over the direct sums' bound, which the
 * guard's 2^24 covers). Rounding: the results differ from the exact sums
 * by a few units of 1e-6 relative to the largest output.
 *
 * Windows of one row or one column (Inception's 1x7 and 7x1, 1x3 and 3x1)
 * take the one-dimensional F(m, r): m adjacent outputs along the window's
 * dim from m + r - 1 inputs in m + r - 1 products per channel pair, where
 * the direct sums take m r (F(4, 7): 10 against 28):
 *
 *   y = A^T [(G g) . (B^T d)]
 *
 * with m chosen per map (WinogradShape.c). Its matrices are built here
 * by the same construction, in double, for any m and r: the first
 * m + r - 2 of the points 0, 1, -1, 1/2, -1/2, 2, -2, 1/4, 4 and infinity;
 * V (n x n, n = m + r - 1) evaluates a polynomial of degree n - 1 at them,
 * G and A^T the first r and m of its columns (A^T transposed), B^T is
 * V^-T, each of its rows scaled to a largest entry of 1 and G's row
 * multiplied by the same (the convolution's transpose: Winograd,
 * "Arithmetic complexity of computations", 1980). The transforms are small
 * dense products (n^2 per lane; on Inception's 160 -> 160 1x7 on 17x17,
 * one thread, about a third of the call's 750 us, the products the rest).
 * Their factors (the largest row sums of A^T, G and B^T multiplied) stay
 * under 13,000 for every tiling allowed, inside the guard's 2^24.
 *
\*===----------------------------------------------------------------------===*/

#include "WinogradConv.h"

#include "DnnlConvAbi.h"
#include "DnnlConvDesc.h"
#include "DnnlSupport.h"

#include <dnnl.h>
#include <omp.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Channels per step of the transforms: one AVX2 vector. */
enum { kLanes = 8 };

/* kLanes floats as one vector (AVX2's in the AVX2 variants, two SSE ones
 * in the portable ones): over arrays of lanes the compiler vectorized
 * the line transforms poorly (scalar loads, stores and shuffles: 3x as
 * long in a profile). */
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));
/* Their bits, and the masks of lane-wise comparisons. */
typedef int32_t LaneBits __attribute__((vector_size(kLanes * sizeof(int32_t))));

/* v = the first `lanes` values `lane` apart from `p`, zeros after them. */
static inline __attribute__((always_inline)) void
loadLanes(Lanes *v, const float *p, int lanes, int64_t lane) {
  if (lane == 1 && lanes == kLanes) {
    memcpy(v, p, sizeof(*v));
    return;
  }
  Lanes zero = {0};
  *v = zero;
  for (int l = 0; l < lanes; ++l)
    (*v)[l] = p[l * lane];
}

/* The first `lanes` values of `v` to p .. p + lanes. */
static inline __attribute__((always_inline)) void
storeLanes(float *p, const Lanes *v, int lanes) {
  if (lanes == kLanes) {
    memcpy(p, v, sizeof(*v));
    return;
  }
  for (int l = 0; l < lanes; ++l)
    p[l] = (*v)[l];
}

/* Where channel c of position (n, h, w) of an activation is:
 * n * image + (c / block) * blockStride + (c % block) * lane + h * row +
 * w * column. Plain: one block of all channels a map apart; channels-last:
 * one block of adjacent channels; blocked: blocks of 8 or 16. */
typedef struct Layout {
  int64_t block, blockStride, lane, row, column, image;
} Layout;

struct KilnWinogradConv {
  int64_t flags;
  /* The clip's bounds, with KILN_DNNL_CONV_CLIP. */
  float bounds[2];
  int64_t n, c, k, h, w, oh, ow, top, left, tiles;
  KilnWinogradTiling tiling;
  /* A line's transforms (KILN_WINOGRAD_ROWS and _COLUMNS): B^T, A^T and G
   * (in double, for the weights). */
  float bt[KILN_WINOGRAD_MAX_LINE][KILN_WINOGRAD_MAX_LINE];
  float at[KILN_WINOGRAD_MAX_OUTPUTS][KILN_WINOGRAD_MAX_LINE];
  double g[KILN_WINOGRAD_MAX_LINE][KILN_WINOGRAD_MAX_WINDOW];
  Layout src, dst;
  dnnl_primitive_t product;
  /* V [P, T, C], U [P, C, K] (plain; `packed` the primitive's layout,
   * filled once for constant weights), M [P, T, K], with P the tiling's
   * positions. */
  dnnl_memory_desc_t vMd, uMd, packedMd, mMd;
  float *u, *packed;
  /* Tiles per product: all of them, or a block's. */
  int64_t rows;
  /* The product's scratchpad, which the caller provides (a multiple of
   * 64 bytes; 0 when it needs none): the threads of a call run the
   * product on their blocks at once, and oneDNN's library-managed
   * scratchpad is one buffer for them all (its AVX-512 matmul then mixes
   * their blocks' partial sums: WinogradConv.BlocksOfTiles). */
  dnnl_memory_desc_t scratchpadMd;
  size_t scratchpadBytes;
  /* V's and M's planes (of `rows` rows) and the product's scratchpad for
   * each of `workers` threads, for one call at a time (`busy`); a call
   * that finds them taken, or runs on more threads, allocates its own. */
  float *scratch;
  int workers, busy;
};

/* The bytes of one thread's V and M planes, then its scratchpad. */
static size_t planeBytes(const KilnWinogradConv *conv) {
  size_t bytes =
      (size_t)(conv->tiling.positions * conv->rows * (conv->c + conv->k)) *
      sizeof(float);
  return (bytes + 63) & ~(size_t)63;
}

static size_t scratchBytes(const KilnWinogradConv *conv) {
  return planeBytes(conv) + conv->scratchpadBytes;
}

/* Where channel c of image n's first position is in `layout`. */
static inline int64_t channelAt(const Layout *layout, int64_t n, int64_t c) {
  return n * layout->image + (c / layout->block) * layout->blockStride +
         (c % layout->block) * layout->lane;
}

static Layout layoutOf(int64_t flags, int channelsLast, int blocked,
                       int64_t channels, int64_t height, int64_t width) {
  int64_t block = (flags & KILN_DNNL_CONV_BLOCK_16) ? 16 : 8;
  int64_t map = height * width;
  Layout layout = {channels, 0, map, width, 1, channels * map};
  if (channelsLast)
    layout =
        (Layout){channels, 0, 1, width * channels, channels, channels * map};
  else if (blocked)
    layout =
        (Layout){block, map * block, 1, width * block, block, channels * map};
  return layout;
}

/* v = the lanes at row y, column x of the image whose first channel's
 * first position is `base` (as loadLanes takes them), zeros outside it:
 * the zero padding of an input tile. */
static inline __attribute__((always_inline)) void
sourceLanes(const KilnWinogradConv *conv, const float *base, int64_t y,
            int64_t x, int lanes, int64_t lane, Lanes *v) {
  if (y < 0 || y >= conv->h || x < 0 || x >= conv->w) {
    Lanes zero = {0};
    *v = zero;
  } else {
    loadLanes(v, base + y * conv->src.row + x * conv->src.column, lanes, lane);
  }
}

/* One dim of B^T d B: r = B^T x over six values `s` apart. */
#define KILN_WINOGRAD_INPUT(r, x, s)                                           \
  do {                                                                         \
    Lanes x0 = (x)[0], x1 = (x)[(s)], x2 = (x)[2 * (s)], x3 = (x)[3 * (s)],    \
          x4 = (x)[4 * (s)], x5 = (x)[5 * (s)];                                \
    (r)[0] = x0 + 1.5f * (x3 - x1) - 2 * x2 + x4;                              \
    (r)[(s)] = 0.5f * x2 - x1 + 2.5f * x3 + x4;                                \
    (r)[2 * (s)] = x1 - 2.5f * x2 + 0.5f * x3 + x4;                            \
    (r)[3 * (s)] = 2 * (x3 - x1) - x2 + x4;                                    \
    (r)[4 * (s)] = 0.5f * (x1 - x3) - x2 + x4;                                 \
    (r)[5 * (s)] = x1 + 1.5f * (x4 - x2) - 2 * x3 + x5;                        \
  } while (0)

/* One dim of A^T m A: r[0..4) = A^T x over six values `s` apart. */
#define KILN_WINOGRAD_OUTPUT(r, x, s)                                          \
  do {                                                                         \
    Lanes x0 = (x)[0], x1 = (x)[(s)], x2 = (x)[2 * (s)], x3 = (x)[3 * (s)],    \
          x4 = (x)[4 * (s)], x5 = (x)[5 * (s)];                                \
    Lanes p12 = x1 + x2, m12 = x1 - x2;                                        \
    (r)[0] = x0 + p12 + x3 + x4;                                               \
    (r)[(s)] = m12 + 0.5f * x3 - 2 * x4;                                       \
    (r)[2 * (s)] = p12 + 0.25f * x3 + 4 * x4;                                  \
    (r)[3 * (s)] = m12 + 0.125f * x3 - 8 * x4 + x5;                            \
  } while (0)

/* V[., t, c0 .. c0 + lanes) of tile t (image n, tile row ty, column tx):
 * the input tile read with zeros outside the image, transformed. */
static inline __attribute__((always_inline)) void
inputTile(const KilnWinogradConv *conv, const float *src, int64_t n, int64_t ty,
          int64_t tx, int64_t c0, int lanes, int64_t lane, float *v,
          int64_t t) {
  Lanes d[6][6], e[6][6];
  const Layout *s = &conv->src;
  const float *base = src + channelAt(s, n, c0);
  for (int i = 0; i < 6; ++i) {
    int64_t y = ty * 4 + i - conv->top;
    for (int j = 0; j < 6; ++j) {
      int64_t x = tx * 4 + j - conv->left;
      sourceLanes(conv, base, y, x, lanes, lane, &d[i][j]);
    }
  }
  for (int i = 0; i < 6; ++i)
    KILN_WINOGRAD_INPUT(&e[i][0], &d[i][0], 1);
  for (int j = 0; j < 6; ++j)
    KILN_WINOGRAD_INPUT(&d[0][j], &e[0][j], 6);
  int64_t plane = conv->rows * conv->c;
  float *to = v + t * conv->c + c0;
  for (int a = 0; a < 36; ++a)
    storeLanes(to + a * plane, &d[a / 6][a % 6], lanes);
}

/* The activation of `flags` (clip bounds in `bounds`), as
 * kiln_dnnl_conv_activated applies it (NaN and signed zeros alike), on
 * kLanes values in vector operations. A loop over the lanes that stored
 * each one and loaded the vector back stalled on every store (the ReLU of
 * a 32 -> 64 convolution on 147x147 took 45% of its output transform). */
static inline __attribute__((always_inline)) void
activateLanes(int64_t flags, const float bounds[2], Lanes *x) {
  Lanes v = *x, zero = {0};
  LaneBits bits = (LaneBits)v;
  if (flags & KILN_DNNL_CONV_RELU) {
    *x = (Lanes)(bits & ((v > zero) | (v != v)));
  } else if (flags & KILN_DNNL_CONV_CLIP) {
    Lanes low = zero + bounds[0], high = zero + bounds[1];
    LaneBits below = (v < low) | ((v == low) & (bits < 0));
    bits = (bits & ~below) | ((LaneBits)low & below);
    v = (Lanes)bits;
    LaneBits above = (v > high) | ((v == high) & (bits >= 0));
    *x = (Lanes)((bits & ~above) | ((LaneBits)high & above));
  } else if (flags & KILN_DNNL_CONV_SWISH) {
    float values[kLanes];
    memcpy(values, x, sizeof(values));
    for (int l = 0; l < kLanes; ++l)
      values[l] = kiln_dnnl_conv_activated(flags, bounds, values[l]);
    memcpy(x, values, sizeof(values));
  }
}

/* b = the bias of output channels k0 .. k0 + lanes, zeros without one. */
static inline __attribute__((always_inline)) void
biasLanes(const KilnWinogradConv *conv, const float *bias, int64_t k0,
          int lanes, Lanes *b) {
  Lanes zero = {0};
  *b = zero;
  if (conv->flags & KILN_DNNL_CONV_BIAS)
    loadLanes(b, bias + k0, lanes, 1);
}

/* dst[at + l * lane] for the first `lanes` l: `sum` (with the output's
 * bias), plus the addend there, activated. */
static inline __attribute__((always_inline)) void
storeOutput(const KilnWinogradConv *conv, const Lanes *sum, const float *addend,
            float *dst, int64_t at, int lanes, int64_t lane) {
  Lanes value = *sum;
  int64_t flags = conv->flags;
  if (flags & KILN_DNNL_CONV_ADDEND) {
    Lanes added;
    loadLanes(&added, addend + at, lanes, lane);
    value += added;
  }
  activateLanes(flags, conv->bounds, &value);
  if (lane == 1 && lanes == kLanes)
    memcpy(dst + at, &value, sizeof(value));
  else
    for (int l = 0; l < lanes; ++l)
      dst[at + l * lane] = value[l];
}

/* dst[n, k0 .. k0 + lanes) of the 4x4 outputs of tile t: M transformed,
 * then the epilogue. */
static inline __attribute__((always_inline)) void
outputTile(const KilnWinogradConv *conv, const float *m, const float *bias,
           const float *addend, float *dst, int64_t n, int64_t ty, int64_t tx,
           int64_t k0, int lanes, int64_t lane, int64_t t) {
  Lanes x[6][6], r[4][6], y[4][4];
  int64_t plane = conv->rows * conv->k;
  const float *from = m + t * conv->k + k0;
  for (int a = 0; a < 36; ++a)
    loadLanes(&x[a / 6][a % 6], from + a * plane, lanes, 1);
  for (int j = 0; j < 6; ++j)
    KILN_WINOGRAD_OUTPUT(&r[0][j], &x[0][j], 6);
  for (int i = 0; i < 4; ++i)
    KILN_WINOGRAD_OUTPUT(&y[i][0], &r[i][0], 1);
  Lanes b;
  biasLanes(conv, bias, k0, lanes, &b);
  const Layout *s = &conv->dst;
  int64_t offset = channelAt(s, n, k0);
  for (int i = 0; i < 4; ++i) {
    int64_t oy = ty * 4 + i;
    if (oy >= conv->oh)
      break;
    for (int j = 0; j < 4; ++j) {
      int64_t ox = tx * 4 + j;
      if (ox >= conv->ow)
        break;
      int64_t at = offset + oy * s->row + ox * s->column;
      Lanes sum = y[i][j] + b;
      storeOutput(conv, &sum, addend, dst, at, lanes, lane);
    }
  }
}

/* A line tile's first output (its image's row and column) and the step
 * along its line. */
static inline __attribute__((always_inline)) void
lineOrigin(const KilnWinogradConv *conv, int64_t ty, int64_t tx, int64_t *y,
           int64_t *x, int64_t *dy, int64_t *dx) {
  const KilnWinogradTiling *tiling = &conv->tiling;
  *y = ty * tiling->tileH;
  *x = tx * tiling->tileW;
  *dy = tiling->axis == KILN_WINOGRAD_COLUMNS;
  *dx = tiling->axis == KILN_WINOGRAD_ROWS;
}

/* V[., t, c0 .. c0 + lanes) of line tile t: its `positions` (m + r - 1,
 * a constant where inlined) inputs (zeros outside the image) times B^T. */
static inline __attribute__((always_inline)) void
lineInputTile(const KilnWinogradConv *conv, const float *src, int64_t n,
              int64_t ty, int64_t tx, int64_t c0, int lanes, int64_t lane,
              float *v, int64_t t, const int64_t positions) {
  Lanes d[KILN_WINOGRAD_MAX_LINE];
  int64_t y0, x0, dy, dx;
  lineOrigin(conv, ty, tx, &y0, &x0, &dy, &dx);
  const Layout *s = &conv->src;
  const float *base = src + channelAt(s, n, c0);
  for (int64_t j = 0; j < positions; ++j) {
    int64_t y = y0 + j * dy - conv->top, x = x0 + j * dx - conv->left;
    sourceLanes(conv, base, y, x, lanes, lane, &d[j]);
  }
  int64_t plane = conv->rows * conv->c;
  float *to = v + t * conv->c + c0;
  for (int64_t a = 0; a < positions; ++a) {
    Lanes r = {0};
    for (int64_t j = 0; j < positions; ++j)
      r += conv->bt[a][j] * d[j];
    storeLanes(to + a * plane, &r, lanes);
  }
}

/* dst[n, k0 .. k0 + lanes) of the m outputs of line tile t: A^T M, then
 * the epilogue (`positions` as for lineInputTile). */
static inline __attribute__((always_inline)) void
lineOutputTile(const KilnWinogradConv *conv, const float *m, const float *bias,
               const float *addend, float *dst, int64_t n, int64_t ty,
               int64_t tx, int64_t k0, int lanes, int64_t lane, int64_t t,
               const int64_t positions) {
  Lanes x[KILN_WINOGRAD_MAX_LINE];
  int64_t y0, x0, dy, dx;
  int64_t outputs = positions - conv->tiling.window + 1;
  lineOrigin(conv, ty, tx, &y0, &x0, &dy, &dx);
  int64_t plane = conv->rows * conv->k;
  const float *from = m + t * conv->k + k0;
  for (int64_t a = 0; a < positions; ++a)
    loadLanes(&x[a], from + a * plane, lanes, 1);
  Lanes b;
  biasLanes(conv, bias, k0, lanes, &b);
  const Layout *s = &conv->dst;
  int64_t offset = channelAt(s, n, k0);
  for (int64_t i = 0; i < outputs; ++i) {
    int64_t oy = y0 + i * dy, ox = x0 + i * dx;
    if (oy >= conv->oh || ox >= conv->ow)
      break;
    Lanes value = {0};
    for (int64_t a = 0; a < positions; ++a)
      value += conv->at[i][a] * x[a];
    int64_t at = offset + oy * s->row + ox * s->column;
    value += b;
    storeOutput(conv, &value, addend, dst, at, lanes, lane);
  }
}

/* The line lengths a tiling can have (m + r - 1 for 2 <= m <= 4 and
 * 3 <= r <= 7), each a case of the tiles' loops with the length constant
 * (the transforms' loops unrolled, the line in registers: Inception's
 * 160 -> 160 1x7 on 17x17 in 750 us instead of 930). */
#define KILN_WINOGRAD_LINES(X) X(4) X(5) X(6) X(7) X(8) X(9) X(10)

/* The input transform of tiles first .. first + count (numbered over all
 * images, row by row) into rows 0 .. count of V. */
static inline __attribute__((always_inline)) void
inputTiles(const KilnWinogradConv *conv, const float *src, float *v,
           int64_t first, int64_t count) {
  const KilnWinogradTiling *tiling = &conv->tiling;
  int64_t perImage = tiling->tilesH * tiling->tilesW;
  for (int64_t i = 0; i < count; ++i) {
    int64_t g = first + i, n = g / perImage, ty = g % perImage / tiling->tilesW,
            tx = g % tiling->tilesW;
    for (int64_t c0 = 0; c0 < conv->c; c0 += kLanes) {
      int lanes = conv->c - c0 < kLanes ? (int)(conv->c - c0) : kLanes;
      if (tiling->axis != KILN_WINOGRAD_SQUARE) {
        int full = conv->src.lane == 1 && lanes == kLanes;
#define KILN_WINOGRAD_LINE_INPUT(P)                                            \
  case P:                                                                      \
    if (full)                                                                  \
      lineInputTile(conv, src, n, ty, tx, c0, kLanes, 1, v, i, P);             \
    else                                                                       \
      lineInputTile(conv, src, n, ty, tx, c0, lanes, conv->src.lane, v, i, P); \
    break;
        switch (tiling->positions) {
          KILN_WINOGRAD_LINES(KILN_WINOGRAD_LINE_INPUT)
        }
#undef KILN_WINOGRAD_LINE_INPUT
      } else if (conv->src.lane == 1 && lanes == kLanes) {
        inputTile(conv, src, n, ty, tx, c0, kLanes, 1, v, i);
      } else {
        inputTile(conv, src, n, ty, tx, c0, lanes, conv->src.lane, v, i);
      }
    }
  }
}

/* The output transform of tiles first .. first + count from rows 0 ..
 * count of M. */
static inline __attribute__((always_inline)) void
outputTiles(const KilnWinogradConv *conv, const float *m, const float *bias,
            const float *addend, float *dst, int64_t first, int64_t count) {
  const KilnWinogradTiling *tiling = &conv->tiling;
  int64_t perImage = tiling->tilesH * tiling->tilesW;
  for (int64_t i = 0; i < count; ++i) {
    int64_t g = first + i, n = g / perImage, ty = g % perImage / tiling->tilesW,
            tx = g % tiling->tilesW;
    for (int64_t k0 = 0; k0 < conv->k; k0 += kLanes) {
      int lanes = conv->k - k0 < kLanes ? (int)(conv->k - k0) : kLanes;
      if (tiling->axis != KILN_WINOGRAD_SQUARE) {
        int full = conv->dst.lane == 1 && lanes == kLanes;
#define KILN_WINOGRAD_LINE_OUTPUT(P)                                           \
  case P:                                                                      \
    if (full)                                                                  \
      lineOutputTile(conv, m, bias, addend, dst, n, ty, tx, k0, kLanes, 1, i,  \
                     P);                                                       \
    else                                                                       \
      lineOutputTile(conv, m, bias, addend, dst, n, ty, tx, k0, lanes,         \
                     conv->dst.lane, i, P);                                    \
    break;
        switch (tiling->positions) {
          KILN_WINOGRAD_LINES(KILN_WINOGRAD_LINE_OUTPUT)
        }
#undef KILN_WINOGRAD_LINE_OUTPUT
      } else if (conv->dst.lane == 1 && lanes == kLanes) {
        outputTile(conv, m, bias, addend, dst, n, ty, tx, k0, kLanes, 1, i);
      } else {
        outputTile(conv, m, bias, addend, dst, n, ty, tx, k0, lanes,
                   conv->dst.lane, i);
      }
    }
  }
}

/* The transforms, once for the target's baseline ISA and, on x86-64, once
 * for AVX2 with FMA (a vector of 8 lanes per instruction where the
 * baseline's SSE2 takes two), chosen at run time: of some tiles, and of
 * all of them split over the OpenMP threads. */
#define KILN_WINOGRAD_PHASES(suffix, attributes)                               \
  attributes static void inputTiles##suffix(const KilnWinogradConv *conv,      \
                                            const float *src, float *v,        \
                                            int64_t first, int64_t count) {    \
    inputTiles(conv, src, v, first, count);                                    \
  }                                                                            \
  attributes static void outputTiles##suffix(                                  \
      const KilnWinogradConv *conv, const float *m, const float *bias,         \
      const float *addend, float *dst, int64_t first, int64_t count) {         \
    outputTiles(conv, m, bias, addend, dst, first, count);                     \
  }                                                                            \
  attributes static void inputTransform##suffix(const KilnWinogradConv *conv,  \
                                                const float *src, float *v) {  \
    _Pragma("omp parallel for schedule(static)") for (int64_t t = 0;           \
                                                      t < conv->tiles; ++t)    \
        inputTiles(conv, src, v + t * conv->c, t, 1);                          \
  }                                                                            \
  attributes static void outputTransform##suffix(                              \
      const KilnWinogradConv *conv, const float *m, const float *bias,         \
      const float *addend, float *dst) {                                       \
    _Pragma("omp parallel for schedule(static)") for (int64_t t = 0;           \
                                                      t < conv->tiles; ++t)    \
        outputTiles(conv, m + t * conv->k, bias, addend, dst, t, 1);           \
  }

KILN_WINOGRAD_PHASES(Portable, )
#if defined(__x86_64__)
KILN_WINOGRAD_PHASES(Avx2, __attribute__((target("avx2,fma"))))
#endif

static int hasAvx2(void) {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return 0;
#endif
}

typedef struct Phases {
  void (*inputTiles)(const KilnWinogradConv *, const float *, float *, int64_t,
                     int64_t);
  void (*outputTiles)(const KilnWinogradConv *, const float *, const float *,
                      const float *, float *, int64_t, int64_t);
  void (*inputTransform)(const KilnWinogradConv *, const float *, float *);
  void (*outputTransform)(const KilnWinogradConv *, const float *,
                          const float *, const float *, float *);
} Phases;

static Phases phases(void) {
#if defined(__x86_64__)
  if (hasAvx2())
    return (Phases){inputTilesAvx2, outputTilesAvx2, inputTransformAvx2,
                    outputTransformAvx2};
#endif
  return (Phases){inputTilesPortable, outputTilesPortable,
                  inputTransformPortable, outputTransformPortable};
}

/* U[a][c][k] = (G g G^T)[a] of the window of output channel k and input
 * channel c (weights [K, C, 3, 3]), in double. */
static void weightTransform(const KilnWinogradConv *conv, const float *weights,
                            float *u) {
  static const double g[6][3] = {{1, 0, 0},
                                 {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                 {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                 {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                 {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                 {0, 0, 1}};
  int64_t plane = conv->c * conv->k;
  for (int64_t k = 0; k < conv->k; ++k)
    for (int64_t c = 0; c < conv->c; ++c) {
      const float *w = weights + (k * conv->c + c) * 9;
      double gw[6][3];
      for (int a = 0; a < 6; ++a)
        for (int j = 0; j < 3; ++j)
          gw[a][j] = g[a][0] * w[j] + g[a][1] * w[3 + j] + g[a][2] * w[6 + j];
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b)
          u[(a * 6 + b) * plane + c * conv->k + k] =
              (float)(gw[a][0] * g[b][0] + gw[a][1] * g[b][1] +
                      gw[a][2] * g[b][2]);
    }
}

/* U[a][c][k] = (G g)[a] of the window of output channel k and input
 * channel c (weights [K, C, r] in memory), in double. */
static void lineWeightTransform(const KilnWinogradConv *conv,
                                const float *weights, float *u) {
  int64_t plane = conv->c * conv->k, r = conv->tiling.window;
  for (int64_t k = 0; k < conv->k; ++k)
    for (int64_t c = 0; c < conv->c; ++c) {
      const float *w = weights + (k * conv->c + c) * r;
      for (int64_t a = 0; a < conv->tiling.positions; ++a) {
        double sum = 0;
        for (int64_t j = 0; j < r; ++j)
          sum += conv->g[a][j] * w[j];
        u[a * plane + c * conv->k + k] = (float)sum;
      }
    }
}

static void transformWeights(const KilnWinogradConv *conv, const float *weights,
                             float *u) {
  if (conv->tiling.axis == KILN_WINOGRAD_SQUARE)
    weightTransform(conv, weights, u);
  else
    lineWeightTransform(conv, weights, u);
}

/* B^T, A^T and G of F(m, r) on a line of n = m + r - 1 (the construction
 * at the top). */
static void lineTransforms(KilnWinogradConv *conv) {
  static const double points[KILN_WINOGRAD_MAX_LINE - 1] = {
      0, 1, -1, 0.5, -0.5, 2, -2, 0.25, 4};
  enum { kMax = KILN_WINOGRAD_MAX_LINE };
  int64_t n = conv->tiling.positions, r = conv->tiling.window, m = n - r + 1;
  /* V's rows: the powers of each point, then infinity's (the leading
   * coefficient); [V | I] reduced to [I | V^-1]. */
  double v[kMax][2 * kMax];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double power = 1;
      for (int64_t e = 0; e < j; ++e)
        power *= points[i];
      v[i][j] = i + 1 < n ? power : j + 1 == n;
      v[i][n + j] = i == j;
    }
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t i = col + 1; i < n; ++i)
      if (fabs(v[i][col]) > fabs(v[pivot][col]))
        pivot = i;
    for (int64_t j = 0; j < 2 * n; ++j) {
      double swap = v[col][j];
      v[col][j] = v[pivot][j];
      v[pivot][j] = swap;
    }
    double scale = 1 / v[col][col];
    for (int64_t j = 0; j < 2 * n; ++j)
      v[col][j] *= scale;
    for (int64_t i = 0; i < n; ++i) {
      double factor = v[i][col];
      if (i == col || factor == 0)
        continue;
      for (int64_t j = 0; j < 2 * n; ++j)
        v[i][j] -= factor * v[col][j];
    }
  }
  for (int64_t a = 0; a < n; ++a) {
    /* B^T's row a is V^-1's column a; scaled to a largest entry of 1. */
    double largest = 0;
    for (int64_t j = 0; j < n; ++j)
      largest = fmax(largest, fabs(v[j][n + a]));
    for (int64_t j = 0; j < n; ++j)
      conv->bt[a][j] = (float)(v[j][n + a] / largest);
    double power = 1;
    for (int64_t j = 0; j < r; ++j, power *= a + 1 < n ? points[a] : 0)
      conv->g[a][j] = (a + 1 < n ? power : j + 1 == r) * largest;
    power = 1;
    for (int64_t i = 0; i < m; ++i, power *= a + 1 < n ? points[a] : 0)
      conv->at[i][a] = (float)(a + 1 < n ? power : i + 1 == m);
  }
}

static void fail(const char *what, dnnl_status_t status) {
  kiln_dnnl_fail("Winograd convolution", what, status);
}

static void *allocate(size_t bytes) {
  return kiln_dnnl_allocate("Winograd convolution", bytes);
}

/* A [positions, rows, columns] row-major f32 memory descriptor. */
static dnnl_memory_desc_t planes(int64_t positions, int64_t rows,
                                 int64_t columns) {
  dnnl_memory_desc_t md;
  dnnl_dims_t dims = {positions, rows, columns};
  dnnl_status_t status =
      dnnl_memory_desc_init_by_tag(&md, 3, dims, dnnl_f32, dnnl_abc);
  if (status)
    fail("describing the transformed operands", status);
  return md;
}

/* V's and M's planes for `workers` threads: V then M for each, zeroed (a
 * last block of fewer tiles multiplies rows it does not read back). */
static float *allocateScratch(const KilnWinogradConv *conv, int workers) {
  size_t bytes = scratchBytes(conv) * (size_t)workers;
  float *scratch = allocate(bytes);
  memset(scratch, 0, bytes);
  return scratch;
}

/* The bytes of V's and M's planes that one thread's block of tiles may
 * take: a core's L2, where they stay from the input transform through the
 * product to the output transform. Blocks also bound the scratch a site
 * keeps (a batch of 8 56x56 maps of 64 channels would take 29 MB). Measured
 * in ResNet-50 at batch 8 (`kiln-compile --profile`, one thread, a Zen 5
 * EPYC with 1 MB of L2 a core), ms per call for its 3x3 convolutions with
 * blocks of 0.3, 0.6, 1, 2 and 4 MB: 64 channels on 56x56 17.2, 16.8, 14.8,
 * 15.2, 15.7; 128 on 28x28 11.8, 11.8, 10.1, 10.3, 11.0; the whole model's
 * 3x3 ones 83.6, 82.9, 78.1, 79.5, 79.6. Between 256 KB and 4 MB; 1 MB
 * where the CPU does not say. */
size_t kiln_winograd_block_bytes(void) {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0)
    return (size_t)1 << 20;
  if (l2 < (256L << 10))
    return (size_t)256 << 10;
  return l2 > (4L << 20) ? (size_t)4 << 20 : (size_t)l2;
}

/* The fewest tiles in a block: fewer make each product too thin for
 * oneDNN's kernels (an AVX2 EPYC, one thread, 1x64x56x56 1.2 ms whole, 1.7
 * ms in blocks of 64 tiles). */
enum { kMinBlock = 16 };

KilnWinogradConv *kiln_winograd_conv_create(const int64_t *desc, int64_t flags,
                                            const float *constantWeights,
                                            size_t blockBytes) {
  const int64_t *d = desc + KILN_DNNL_CONV_HEADER_SIZE;
  KilnWinogradConv *conv = allocate(sizeof(KilnWinogradConv));
  memset(conv, 0, sizeof(KilnWinogradConv));
  conv->flags = flags;
  if (flags & KILN_DNNL_CONV_CLIP)
    kiln_dnnl_conv_clip_bounds(desc, conv->bounds);
  conv->n = desc[2];
  conv->c = desc[3];
  conv->k = desc[4];
  conv->h = d[0];
  conv->w = d[1];
  conv->oh = d[4];
  conv->ow = d[5];
  conv->top = d[8];
  conv->left = d[9];
  kiln_winograd_conv_tiling(desc, &conv->tiling);
  if (conv->tiling.axis != KILN_WINOGRAD_SQUARE)
    lineTransforms(conv);
  int64_t positions = conv->tiling.positions;
  conv->tiles = conv->n * conv->tiling.tilesH * conv->tiling.tilesW;
  conv->src = layoutOf(flags, (flags & KILN_DNNL_CONV_CHANNELS_LAST_SRC) != 0,
                       (flags & KILN_DNNL_CONV_BLOCKED_SRC) != 0, conv->c,
                       conv->h, conv->w);
  conv->dst = layoutOf(flags, (flags & KILN_DNNL_CONV_CHANNELS_LAST_DST) != 0,
                       (flags & KILN_DNNL_CONV_BLOCKED_DST) != 0, conv->k,
                       conv->oh, conv->ow);
  /* Blocks of tiles, each transformed, multiplied and transformed back by
   * one thread while its planes stay in cache, where there are enough of
   * them for every thread; else all tiles at once, each phase split over
   * the threads (the product over its planes). */
  conv->workers = omp_get_max_threads();
  /* Blocks of equal size: a short last one (7 of Inception-v3's 85 tiles
   * of 1x7 windows on 17x17 maps in blocks of 78) makes a thin product
   * that costs nearly as much as a full one (its 160 -> 160 ones 1.88 ms
   * per call in blocks of 78 and 7, 1.23 in two of 43). As many for each
   * thread: DenseNet-121's six 128 -> 32 on 56x56 maps in 5 blocks each
   * took 3.09 ms a call on two threads against 4.75 on one. Each block reads
   * all the transformed weights: where those outweigh the planes of all tiles,
   * all at once (ResNet-50's 512 -> 512 on 7x7 maps at batch 8: 32 tiles,
   * 38 MB of weights and 4.7 MB of planes; 10.4 ms in blocks of 27 and 5,
   * 5.7 at once). */
  int64_t block =
      (int64_t)(blockBytes / (size_t)(positions * (conv->c + conv->k) * 4));
  block = block < kMinBlock ? kMinBlock : block;
  int64_t workers = conv->workers;
  int64_t blocks = (conv->tiles + block - 1) / block;
  blocks = (blocks + workers - 1) / workers * workers;
  while (blocks > workers && conv->tiles < blocks * kMinBlock)
    blocks -= workers;
  size_t weightBytes = (size_t)(positions * conv->c * conv->k) * 4;
  size_t planeBytesOfAll =
      (size_t)(conv->tiles * positions * (conv->c + conv->k)) * 4;
  conv->rows = blocks >= 2 && conv->tiles >= blocks * kMinBlock &&
                       weightBytes < planeBytesOfAll
                   ? (conv->tiles + blocks - 1) / blocks
                   : conv->tiles;
  conv->vMd = planes(positions, conv->rows, conv->c);
  conv->uMd = planes(positions, conv->c, conv->k);
  conv->mMd = planes(positions, conv->rows, conv->k);
  conv->packedMd = conv->uMd;
  dnnl_status_t status;
  if (constantWeights) {
    dnnl_dims_t dims = {positions, conv->c, conv->k};
    if ((status = dnnl_memory_desc_init_by_tag(&conv->packedMd, 3, dims,
                                               dnnl_f32, dnnl_format_tag_any)))
      fail("describing the packed weights", status);
  }
  dnnl_matmul_desc_t matmul;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_attr_t attr;
  if ((status = dnnl_primitive_attr_create(&attr)) ||
      (status = dnnl_primitive_attr_set_scratchpad_mode(
           attr, dnnl_scratchpad_mode_user)) ||
      (status = dnnl_matmul_desc_init(&matmul, &conv->vMd, &conv->packedMd,
                                      NULL, &conv->mMd)) ||
      (status = dnnl_primitive_desc_create(&pd, &matmul, attr,
                                           kiln_dnnl_engine(), NULL)))
    fail("creating the batched product", status);
  dnnl_primitive_attr_destroy(attr);
  conv->packedMd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  conv->scratchpadMd =
      *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  conv->scratchpadBytes =
      (dnnl_memory_desc_get_size(&conv->scratchpadMd) + 63) & ~(size_t)63;
  if ((status = dnnl_primitive_create(&conv->product, pd)))
    fail("dnnl_primitive_create", status);
  dnnl_primitive_desc_destroy(pd);
  if (constantWeights) {
    conv->u = allocate(dnnl_memory_desc_get_size(&conv->uMd));
    transformWeights(conv, constantWeights, conv->u);
    if (dnnl_memory_desc_equal(&conv->packedMd, &conv->uMd)) {
      conv->packed = conv->u;
      conv->u = NULL;
    } else {
      conv->packed = allocate(dnnl_memory_desc_get_size(&conv->packedMd));
      dnnl_primitive_t reorder = kiln_dnnl_reorder_primitive(
          "Winograd convolution", &conv->uMd, &conv->packedMd);
      kiln_dnnl_reorder_now("Winograd convolution", reorder, &conv->uMd,
                            conv->u, &conv->packedMd, conv->packed);
      dnnl_primitive_destroy(reorder);
      free(conv->u);
      conv->u = NULL;
    }
  }
  conv->scratch = allocateScratch(conv, conv->workers);
  return conv;
}

/* M = V U on the planes at `v` and `m`, with the scratchpad at `pad` (on
 * the caller's thread only, where it runs inside a parallel region). */
static void multiply(const KilnWinogradConv *conv, float *v, float *u, float *m,
                     float *pad) {
  dnnl_engine_t cpu = kiln_dnnl_engine();
  dnnl_memory_t memories[4];
  const dnnl_memory_desc_t *mds[4] = {&conv->vMd, &conv->packedMd, &conv->mMd,
                                      &conv->scratchpadMd};
  void *buffers[4] = {v, u, m, pad};
  int count = conv->scratchpadBytes ? 4 : 3;
  dnnl_status_t status;
  for (int i = 0; i < count; ++i)
    if ((status = dnnl_memory_create(&memories[i], mds[i], cpu, buffers[i])))
      fail("dnnl_memory_create", status);
  dnnl_stream_t stream;
  if ((status = dnnl_stream_create(&stream, cpu, dnnl_stream_default_flags)))
    fail("dnnl_stream_create", status);
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, memories[0]},
                             {DNNL_ARG_WEIGHTS, memories[1]},
                             {DNNL_ARG_DST, memories[2]},
                             {DNNL_ARG_SCRATCHPAD, memories[3]}};
  if ((status = dnnl_primitive_execute(conv->product, stream, count, args)) ||
      (status = dnnl_stream_wait(stream)))
    fail("the batched product", status);
  dnnl_stream_destroy(stream);
  for (int i = 0; i < count; ++i)
    dnnl_memory_destroy(memories[i]);
}

void kiln_winograd_conv_run(KilnWinogradConv *conv, const float *src,
                            const float *weights, const float *bias,
                            const float *addend, float *dst) {
  Phases phase = phases();
  int threads = omp_get_max_threads();
  int workers = conv->rows < conv->tiles ? threads : 1;
  /* The site's scratch, or this call's where another call holds it or it
   * has too few threads' planes. */
  int own = workers > conv->workers ||
            __atomic_exchange_n(&conv->busy, 1, __ATOMIC_ACQUIRE);
  float *scratch = own ? allocateScratch(conv, workers) : conv->scratch;
  /* Weights that change: transformed on each call, into a buffer of the
   * call's (two calls at once must not share one). */
  float *u = conv->packed;
  if (!u) {
    u = allocate(dnnl_memory_desc_get_size(&conv->uMd));
    transformWeights(conv, weights, u);
  }
  size_t perWorker = scratchBytes(conv) / sizeof(float);
  size_t vFloats = dnnl_memory_desc_get_size(&conv->vMd) / sizeof(float);
  size_t padAt = planeBytes(conv) / sizeof(float);
  if (conv->rows == conv->tiles) {
    phase.inputTransform(conv, src, scratch);
    multiply(conv, scratch, u, scratch + vFloats, scratch + padAt);
    phase.outputTransform(conv, scratch + vFloats, bias, addend, dst);
  } else {
    int64_t blocks = (conv->tiles + conv->rows - 1) / conv->rows;
#pragma omp parallel num_threads(workers)
    {
      float *v = scratch + perWorker * (size_t)omp_get_thread_num();
      float *m = v + vFloats;
#pragma omp for schedule(static)
      for (int64_t b = 0; b < blocks; ++b) {
        int64_t first = b * conv->rows;
        int64_t count =
            conv->tiles - first < conv->rows ? conv->tiles - first : conv->rows;
        phase.inputTiles(conv, src, v, first, count);
        multiply(conv, v, u, m, v + padAt);
        phase.outputTiles(conv, m, bias, addend, dst, first, count);
      }
    }
  }
  if (u != conv->packed)
    free(u);
  if (own)
    free(scratch);
  else
    __atomic_store_n(&conv->busy, 0, __ATOMIC_RELEASE);
}

void kiln_winograd_conv_destroy(KilnWinogradConv *conv) {
  if (!conv)
    return;
  dnnl_primitive_destroy(conv->product);
  free(conv->u);
  free(conv->packed);
  free(conv->scratch);
  free(conv);
}
