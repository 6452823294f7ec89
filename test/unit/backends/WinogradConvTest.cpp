//===- WinogradConvTest.cpp - kiln's own Winograd convolution -------------===//
//
// kiln_dnnl_conv_f32 with KILN_DNNL_CONV_OWN_WINOGRAD (WinogradConv.c),
// called as the code that kiln-cpu-conv-to-dnnl emits calls it: against
// sums in double, in every activation layout the call takes (plain,
// channels-last, blocked by 8 and 16), on map sizes that are and are not
// multiples of the 4x4 output tiles, with no, symmetric and lopsided
// padding, channel counts that are not multiples of the transforms' 8
// lanes, each epilogue (bias, addend apart and in place, ReLU, a clip),
// weights constant and not; tiles in blocks, one thread's at a time, and
// all at once; and its fallback to direct sums on operands that are not
// finite. Windows of one row or one column (1x7, 7x1, 1x3, 3x1, 1x5) in
// the one-dimensional F(m, r), with the tiling WinogradShape.c chooses.
//
//===----------------------------------------------------------------------===//

#include "WinogradConv.h"
#include "DnnlConvAbi.h"
#include "UniformValues.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" void kiln_dnnl_conv_f32(void **slot, const int64_t *desc,
                                   const float *src, const float *weights,
                                   const float *bias, const float *addend,
                                   float *dst, const float *srcBound,
                                   float *dstBound);

namespace {

/// The activations' layouts: an `at` of the plain, channels-last or
/// blocked order.
enum Layout : int64_t { Plain = 0, ChannelsLast = 1, Block8 = 8, Block16 = 16 };

struct Shape {
  int64_t n, c, o, h, w, top, bottom, left, right;
  /// The window.
  int64_t kh = 3, kw = 3;
  int64_t oh() const { return h + top + bottom - kh + 1; }
  int64_t ow() const { return w + left + right - kw + 1; }
  std::string str() const {
    return std::to_string(h) + "x" + std::to_string(w) + " C " +
           std::to_string(c) + " O " + std::to_string(o) + " window " +
           std::to_string(kh) + "x" + std::to_string(kw);
  }
};

/// Index of [n, c, y, x] of a [N, channels, height, width] tensor in
/// `layout`.
size_t at(Layout layout, int64_t channels, int64_t height, int64_t width,
          int64_t n, int64_t c, int64_t y, int64_t x) {
  if (layout == ChannelsLast)
    return ((n * height + y) * width + x) * channels + c;
  if (layout == Plain)
    return ((n * channels + c) * height + y) * width + x;
  int64_t b = layout;
  return (((n * (channels / b) + c / b) * height + y) * width + x) * b + c % b;
}

using kiln::test::uniformValues;

int64_t layoutFlags(Layout layout, bool dst) {
  switch (layout) {
  case Plain:
    return 0;
  case ChannelsLast:
    return dst ? KILN_DNNL_CONV_CHANNELS_LAST_DST
               : KILN_DNNL_CONV_CHANNELS_LAST_SRC;
  case Block16:
    return KILN_DNNL_CONV_BLOCK_16 |
           (dst ? KILN_DNNL_CONV_BLOCKED_DST : KILN_DNNL_CONV_BLOCKED_SRC);
  default:
    return dst ? KILN_DNNL_CONV_BLOCKED_DST : KILN_DNNL_CONV_BLOCKED_SRC;
  }
}

struct Site {
  Shape s;
  Layout layout;
  int64_t flags;
  float clip[2] = {-0.5f, 0.75f};
  std::vector<float> src = uniformValues(s.n * s.c * s.h * s.w, 11);
  std::vector<float> weights = uniformValues(s.o * s.c * s.kh * s.kw, 12);
  std::vector<float> bias = uniformValues(s.o, 13);
  std::vector<float> addend = uniformValues(s.n * s.o * s.oh() * s.ow(), 14);

  Site(Shape s, Layout layout, int64_t flags)
      : s(s), layout(layout), flags(flags) {}

  std::vector<int64_t> descriptor(int64_t extra) const {
    int64_t f = flags | extra | KILN_DNNL_CONV_ANY_WEIGHTS |
                layoutFlags(layout, false) | layoutFlags(layout, true);
    std::vector<int64_t> d = {2,     1,      s.n,      s.c,     s.o,    f, s.h,
                              s.w,   s.kh,   s.kw,     s.oh(),  s.ow(), 1, 1,
                              s.top, s.left, s.bottom, s.right, 1,      1};
    if (f & KILN_DNNL_CONV_CLIP)
      for (float bound : clip) {
        uint32_t bits;
        std::memcpy(&bits, &bound, sizeof(bits));
        d.push_back(bits);
      }
    return d;
  }

  /// dst of the site with `extra` flags, called twice on one slot (the
  /// second call's result); the addend in dst's buffer where `inPlace`.
  std::vector<float> run(int64_t extra, bool inPlace = false) const {
    std::vector<int64_t> desc = descriptor(extra);
    std::vector<float> dst(s.n * s.o * s.oh() * s.ow(), -7.0f);
    void *slot = nullptr;
    for (int call = 0; call < 2; ++call) {
      const float *add = nullptr;
      if (desc[5] & KILN_DNNL_CONV_ADDEND) {
        if (inPlace)
          dst = addend;
        add = inPlace ? dst.data() : addend.data();
      }
      kiln_dnnl_conv_f32(&slot, desc.data(), src.data(), weights.data(),
                         bias.data(), add, dst.data(), nullptr, nullptr);
    }
    return dst;
  }

  /// The epilogue of `flags` on the sums in double, in dst's layout.
  std::vector<double> reference() const {
    std::vector<double> out(s.n * s.o * s.oh() * s.ow());
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t o = 0; o < s.o; ++o)
        for (int64_t y = 0; y < s.oh(); ++y)
          for (int64_t x = 0; x < s.ow(); ++x) {
            size_t to = at(layout, s.o, s.oh(), s.ow(), n, o, y, x);
            double sum = (flags & KILN_DNNL_CONV_BIAS) ? bias[o] : 0;
            if (flags & KILN_DNNL_CONV_ADDEND)
              sum += addend[to];
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                int64_t sy = y + i - s.top, sx = x + j - s.left;
                if (sy < 0 || sy >= s.h || sx < 0 || sx >= s.w)
                  continue;
                for (int64_t c = 0; c < s.c; ++c)
                  sum += double(src[at(layout, s.c, s.h, s.w, n, c, sy, sx)]) *
                         weights[((o * s.c + c) * s.kh + i) * s.kw + j];
              }
            if (flags & KILN_DNNL_CONV_RELU)
              sum = sum > 0 ? sum : 0;
            if (flags & KILN_DNNL_CONV_CLIP)
              sum = std::fmin(std::fmax(sum, clip[0]), clip[1]);
            out[to] = sum;
          }
    return out;
  }
};

std::string name(Layout layout) {
  switch (layout) {
  case Plain:
    return "plain";
  case ChannelsLast:
    return "channels-last";
  default:
    return "blocked by " + std::to_string(int64_t(layout));
  }
}

/// How far from the sums in double a result may be: 4e-7 of the sum of the
/// products' magnitudes (values up to 1, kh kw C products), a few units in
/// the last place of the largest term after the transforms' factors; four
/// times that for a window of one row or column, whose F(4, 7) rounds up to
/// four times as far as F(4x4, 3x3) (8.5e-6 and 2.2e-6 of the largest
/// output at most, WinogradConv.h).
double tolerance(const Shape &s) {
  double line = s.kh == 1 || s.kw == 1 ? 4 : 1;
  return 4e-7 * line * double(s.kh * s.kw * s.c);
}

/// Every layout of `shapes`, with each epilogue: near the sums in double,
/// and not the direct call's bits everywhere (or the algorithm did not
/// change).
void expectSums(const std::vector<Shape> &shapes) {
  const int64_t epilogues[] = {
      0, KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_RELU,
      KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_RELU,
      KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_CLIP,
      KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_CONSTANT_WEIGHT};
  for (Layout layout : {Plain, ChannelsLast, Block8, Block16})
    for (const Shape &shape : shapes)
      for (int64_t epilogue : epilogues)
        for (bool inPlace : {false, true}) {
          if (inPlace && !(epilogue & KILN_DNNL_CONV_ADDEND))
            continue;
          SCOPED_TRACE(name(layout) + ", " + shape.str() + ", flags " +
                       std::to_string(epilogue) +
                       (inPlace ? ", addend in place" : ""));
          Site site(shape, layout, epilogue);
          std::vector<float> wino =
              site.run(KILN_DNNL_CONV_OWN_WINOGRAD, inPlace);
          std::vector<float> direct = site.run(0, inPlace);
          std::vector<double> exact = site.reference();
          int64_t differing = 0;
          for (size_t i = 0; i < exact.size(); ++i) {
            ASSERT_NEAR(wino[i], exact[i], tolerance(shape)) << "at " << i;
            ASSERT_NEAR(direct[i], exact[i], tolerance(shape)) << "at " << i;
            differing += wino[i] != direct[i];
          }
          EXPECT_GT(differing, 0) << "the Winograd call gave the direct bits";
        }
}

/// F(4x4, 3x3).
TEST(WinogradConv, MatchesSums) {
  expectSums({{2, 16, 16, 13, 11, 1, 1, 1, 1}, // tiles cut by the map's edge
              {1, 16, 32, 8, 8, 0, 0, 0, 0},   // unpadded, 6x6 out
              {1, 32, 16, 9, 14, 2, 0, 0, 2},  // lopsided padding
              {3, 16, 16, 4, 4, 1, 1, 1, 1}}); // one tile per image
}

/// F(m, r) along a row or a column: Inception's 1x7 and 7x1 on 17x17
/// (F(4, 7), the last tile cut by the edge), 1x3 and 3x1 on 8x8 (F(4, 3),
/// whole tiles), 1x5 unpadded on a 9-wide map (F(3, 5)), 7x1 on 5 rows
/// (F(3, 7), with more padding than map) and lopsided padding (5 columns
/// left, where oneDNN's direct call, which these compare too, runs its
/// gemm-based convolution: with the addend read by a binary post-op it
/// added it at the wrong positions on channels-last maps, 1.9 off).
TEST(WinogradConv, LinesMatchSums) {
  expectSums({{1, 16, 32, 17, 17, 0, 0, 3, 3, 1, 7},
              {2, 16, 16, 17, 17, 3, 3, 0, 0, 7, 1},
              {1, 32, 16, 8, 8, 0, 0, 1, 1, 1, 3},
              {1, 16, 32, 8, 8, 1, 1, 0, 0, 3, 1},
              {2, 16, 16, 6, 9, 0, 0, 0, 0, 1, 5},
              {1, 16, 16, 5, 3, 3, 3, 0, 0, 7, 1},
              {1, 16, 16, 7, 11, 0, 0, 5, 1, 1, 7}});
}

/// The tiling of each window: the outputs per tile that take the fewest
/// products per line (F(4, 7) on 17, F(4, 3) on 8, F(3, 7) and F(3, 5) on
/// 5), and no other windows.
TEST(WinogradConv, Tiling) {
  struct Case {
    Shape shape;
    int axis;
    int64_t tileH, tileW, positions;
  };
  for (const Case &c :
       {Case{{1, 16, 16, 17, 17, 0, 0, 3, 3, 1, 7},
             KILN_WINOGRAD_ROWS,
             1,
             4,
             10},
        Case{{1, 16, 16, 17, 17, 3, 3, 0, 0, 7, 1},
             KILN_WINOGRAD_COLUMNS,
             4,
             1,
             10},
        Case{{1, 16, 16, 8, 8, 0, 0, 1, 1, 1, 3}, KILN_WINOGRAD_ROWS, 1, 4, 6},
        Case{{1, 16, 16, 5, 3, 3, 3, 0, 0, 7, 1},
             KILN_WINOGRAD_COLUMNS,
             3,
             1,
             9},
        Case{{1, 16, 16, 6, 9, 0, 0, 0, 0, 1, 5}, KILN_WINOGRAD_ROWS, 1, 3, 7},
        Case{{1, 16, 16, 9, 9, 1, 1, 1, 1}, KILN_WINOGRAD_SQUARE, 4, 4, 36}}) {
    SCOPED_TRACE(c.shape.str());
    Site site(c.shape, Block8, 0);
    std::vector<int64_t> desc = site.descriptor(KILN_DNNL_CONV_OWN_WINOGRAD);
    KilnWinogradTiling tiling;
    ASSERT_TRUE(kiln_winograd_conv_tiling(desc.data(), &tiling));
    EXPECT_EQ(tiling.axis, c.axis);
    EXPECT_EQ(tiling.tileH, c.tileH);
    EXPECT_EQ(tiling.tileW, c.tileW);
    EXPECT_EQ(tiling.positions, c.positions);
    EXPECT_EQ(tiling.tilesH, (c.shape.oh() + c.tileH - 1) / c.tileH);
    EXPECT_EQ(tiling.tilesW, (c.shape.ow() + c.tileW - 1) / c.tileW);
  }
  for (Shape shape : {Shape{1, 16, 16, 9, 9, 2, 2, 2, 2, 5, 5},
                      Shape{1, 16, 16, 9, 9, 0, 0, 4, 4, 1, 9},
                      Shape{1, 16, 16, 9, 9, 0, 0, 0, 0, 1, 1},
                      Shape{1, 16, 16, 9, 9, 1, 1, 0, 0, 3, 2}}) {
    SCOPED_TRACE(shape.str());
    Site site(shape, Block8, 0);
    std::vector<int64_t> desc = site.descriptor(KILN_DNNL_CONV_OWN_WINOGRAD);
    EXPECT_FALSE(kiln_winograd_conv_applies(desc.data()));
  }
}

/// Channels that fill no whole 8 lanes (plain and channels-last): the
/// transforms' last step takes the rest.
TEST(WinogradConv, ChannelsNotMultipleOfLanes) {
  for (Layout layout : {Plain, ChannelsLast}) {
    SCOPED_TRACE(name(layout));
    Shape shape{2, 12, 20, 10, 7, 1, 1, 1, 1};
    Site site(shape, layout, KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_ADDEND);
    std::vector<float> wino = site.run(KILN_DNNL_CONV_OWN_WINOGRAD);
    std::vector<double> exact = site.reference();
    for (size_t i = 0; i < exact.size(); ++i)
      ASSERT_NEAR(wino[i], exact[i], tolerance(shape)) << "at " << i;
  }
}

/// Tiles in blocks of at least 16 tiles, as many for each thread (84 tiles
/// in 5 blocks of 17, the last one short, on one thread; in 4 of 21 on
/// two), through kiln_winograd_conv_create and kiln_winograd_conv_run: the
/// same sums as all tiles at once.
TEST(WinogradConv, BlocksOfTiles) {
  Shape shape{7, 16, 24, 13, 11, 1, 1, 1, 1}; // 7 x 12 tiles
  for (Layout layout : {Block8, ChannelsLast})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(name(layout) + ", " + std::to_string(threads) + " threads");
      Site site(shape, layout,
                KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_ADDEND |
                    KILN_DNNL_CONV_RELU | KILN_DNNL_CONV_CONSTANT_WEIGHT);
      std::vector<int64_t> desc = site.descriptor(KILN_DNNL_CONV_OWN_WINOGRAD);
      ASSERT_TRUE(kiln_winograd_conv_applies(desc.data()));
      int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      std::vector<double> exact = site.reference();
      for (size_t blockBytes : {size_t(1), kiln_winograd_block_bytes()}) {
        KilnWinogradConv *conv = kiln_winograd_conv_create(
            desc.data(), desc[5], site.weights.data(), blockBytes);
        std::vector<float> dst(exact.size(), -7.0f);
        for (int call = 0; call < 2; ++call)
          kiln_winograd_conv_run(conv, site.src.data(), nullptr,
                                 site.bias.data(), site.addend.data(),
                                 dst.data());
        kiln_winograd_conv_destroy(conv);
        for (size_t i = 0; i < exact.size(); ++i)
          ASSERT_NEAR(dst[i], exact[i], tolerance(shape))
              << "at " << i << " with blocks of " << blockBytes << " bytes";
      }
      omp_set_num_threads(before);
    }
}

/// Shapes, layouts, epilogues, block sizes and thread counts drawn at
/// random (fixed seeds): F(4x4, 3x3) and F(m, r) through
/// kiln_winograd_conv_create and kiln_winograd_conv_run, with blocks of one
/// tile's bytes up to a core's L2 (equal blocks, a multiple of the threads,
/// or all tiles at once where the weights outweigh the planes), near the
/// sums in double.
TEST(WinogradConv, RandomShapesInBlocks) {
  std::mt19937 random(20261201);
  auto draw = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  int before = omp_get_max_threads();
  int cases = 0;
  for (int i = 0; i < 24; ++i) {
    Layout layout =
        std::vector<Layout>{Plain, ChannelsLast, Block8, Block16}[draw(0, 3)];
    int64_t unit = layout == Block16 ? 16 : 8;
    Shape shape{draw(1, 4),
                unit * draw(1, 4),
                unit * draw(1, 4),
                draw(3, 22),
                draw(3, 22),
                0,
                0,
                0,
                0};
    int64_t window = draw(0, 2);
    if (window) {
      (window == 1 ? shape.kw : shape.kh) = draw(3, 7);
      (window == 1 ? shape.kh : shape.kw) = 1;
    }
    shape.top = draw(0, shape.kh - 1);
    shape.bottom = draw(0, shape.kh - 1);
    shape.left = draw(0, shape.kw - 1);
    shape.right = draw(0, shape.kw - 1);
    if (shape.oh() < 1 || shape.ow() < 1)
      continue;
    int64_t flags = std::vector<int64_t>{
        0, KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_RELU,
        KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_ADDEND,
        KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_CLIP}[draw(0, 3)];
    bool constant = draw(0, 1);
    if (constant)
      flags |= KILN_DNNL_CONV_CONSTANT_WEIGHT;
    Site site(shape, layout, flags);
    std::vector<int64_t> desc = site.descriptor(KILN_DNNL_CONV_OWN_WINOGRAD);
    ASSERT_TRUE(kiln_winograd_conv_applies(desc.data())) << shape.str();
    std::vector<double> exact = site.reference();
    ++cases;
    for (int threads : {1, 2})
      for (size_t blockBytes : {size_t(1), size_t(20000), size_t(200000),
                                kiln_winograd_block_bytes()}) {
        SCOPED_TRACE(name(layout) + ", N " + std::to_string(shape.n) + ", " +
                     shape.str() + ", flags " + std::to_string(flags) + ", " +
                     std::to_string(threads) + " threads, blocks of " +
                     std::to_string(blockBytes) + " bytes");
        omp_set_num_threads(threads);
        KilnWinogradConv *conv = kiln_winograd_conv_create(
            desc.data(), desc[5], constant ? site.weights.data() : nullptr,
            blockBytes);
        std::vector<float> dst(exact.size(), -7.0f);
        for (int call = 0; call < 2; ++call)
          kiln_winograd_conv_run(conv, site.src.data(), site.weights.data(),
                                 site.bias.data(), site.addend.data(),
                                 dst.data());
        kiln_winograd_conv_destroy(conv);
        for (size_t j = 0; j < exact.size(); ++j)
          ASSERT_NEAR(dst[j], exact[j], tolerance(shape)) << "at " << j;
      }
  }
  omp_set_num_threads(before);
  EXPECT_GE(cases, 16) << "too few shapes drawn had outputs";
}

/// An infinity or a NaN in src, a value whose transform could overflow, or
/// a non-finite weight: the direct sums' bits (and kiln's ReLU), not what
/// the transforms would make of them.
TEST(WinogradConv, DirectSumsOnNonFiniteOperands) {
  struct Case {
    const char *name;
    size_t at;
    float value;
    bool inWeights;
  };
  for (Case c : {Case{"+inf in src", 37, INFINITY, false},
                 Case{"NaN in src", 300, NAN, false},
                 Case{"1e30 in src", 123, 1e30f, false},
                 Case{"-inf in the weights", 40, -INFINITY, true}})
    for (int64_t flags : {int64_t(KILN_DNNL_CONV_BIAS),
                          int64_t(KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_RELU |
                                  KILN_DNNL_CONV_CONSTANT_WEIGHT)}) {
      SCOPED_TRACE(std::string(c.name) + ", flags " + std::to_string(flags));
      Site site({1, 16, 16, 12, 12, 1, 1, 1, 1}, Block8, flags);
      (c.inWeights ? site.weights : site.src)[c.at] = c.value;
      std::vector<float> wino = site.run(KILN_DNNL_CONV_OWN_WINOGRAD);
      std::vector<float> direct = site.run(0);
      for (size_t i = 0; i < wino.size(); ++i) {
        if (std::isnan(direct[i]))
          EXPECT_TRUE(std::isnan(wino[i])) << "at " << i << ": " << wino[i];
        else
          EXPECT_EQ(wino[i], direct[i]) << "at " << i;
      }
    }
}

} // namespace
