//===- DnnlConvTest.cpp - kiln_dnnl_conv_* against plain sums -------------===//
//
// backends/cpu/support/DnnlConv.c called directly, as the code that
// kiln-cpu-conv-to-dnnl emits calls it: 2-d convolutions of
// integer-valued tensors (exact in f32, so every path gives the same bits)
// with a bias, an addend and a ReLU, against sums written out here; in the
// plain, the channels-last and oneDNN's blocked layouts (nChw8c and
// nChw16c as the call passes them); with the addend in its own buffer
// (a binary post-op) or in dst's (in place: the sum post-op), and a call
// site whose later call has them the other way from its first. And
// kiln_dnnl_conv_int8 on 8-bit integers with zero points, groups and
// per-channel scales. And oneDNN's Winograd kernels: as close to the exact
// sums as direct ones, and direct sums where an operand is not finite. And
// kiln_dnnl_conv_bf16 with its epilogue, rounded once (or f32 dst).
//
//===----------------------------------------------------------------------===//

#include "ConcurrentCalls.h"
#include "DnnlConvAbi.h"
#include "DnnlConvDesc.h"
#include "UniformValues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" void kiln_dnnl_conv_int8(void **slot, const int64_t *desc,
                                    const void *src, const int8_t *weights,
                                    const float *bias, const float *quant,
                                    void *dst);
extern "C" void kiln_dnnl_conv_f32(void **slot, const int64_t *desc,
                                   const float *src, const float *weights,
                                   const float *bias, const float *addend,
                                   float *dst, const float *srcBound,
                                   float *dstBound);
extern "C" void kiln_dnnl_conv_bf16(void **slot, const int64_t *desc,
                                    const uint16_t *src,
                                    const uint16_t *weights, const float *bias,
                                    const void *addend, void *dst,
                                    const float *srcBound, float *dstBound);

namespace {

// N 2, C 8, 12x12, O 16, a KxK kernel (3 or 1), stride 1, padding K / 2.
constexpr int64_t N = 2, C = 8, H = 12, O = 16;

std::vector<float> integers(size_t count, unsigned seed) {
  std::vector<float> values(count);
  for (float &v : values) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(int((seed >> 16) % 7) - 3);
  }
  return values;
}

/// The descriptor (DnnlConvAbi.h) with `flags`.
std::vector<int64_t> descriptor(int64_t flags, int64_t K) {
  int64_t pad = K / 2;
  return {2, 1, N, C, O, flags, H, H, K, K, H, H, 1, 1, pad, pad, pad, pad,
          1, 1};
}

/// Index of [n, c, y, x] in the plain (`layout` 0 or false), the
/// channels-last (1 or true) or the order blocked by `layout` channels
/// ([N, C / b, H, W, b]).
size_t at(int64_t layout, int64_t channels, int64_t n, int64_t c, int64_t y,
          int64_t x) {
  if (layout > 1)
    return (((n * (channels / layout) + c / layout) * H + y) * H + x) * layout +
           c % layout;
  return layout ? ((n * H + y) * H + x) * channels + c
                : ((n * channels + c) * H + y) * H + x;
}

struct Operands {
  explicit Operands(int64_t K) : K(K) {}
  int64_t K;
  std::vector<float> src = integers(N * C * H * H, 1);
  std::vector<float> weights = integers(O * C * K * K, 2);
  std::vector<float> bias = integers(O, 3);
  std::vector<float> addend = integers(N * O * H * H, 4);

  /// conv(src, weights) + bias (+ addend where `withAddend`), summed in
  /// float in one order, with src and addend (and the result) in the plain
  /// or the channels-last order (`last`, an `at` layout; the addend and
  /// the result in `dstLayout` where it is given).
  std::vector<float> sums(int64_t last, bool withAddend,
                          int64_t dstLayout = -1) const {
    int64_t dstLast = dstLayout < 0 ? last : dstLayout;
    std::vector<float> out(N * O * H * H);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t x = 0; x < H; ++x) {
            float sum = bias[o];
            if (withAddend)
              sum += addend[at(dstLast, O, n, o, y, x)];
            for (int64_t c = 0; c < C; ++c)
              for (int64_t i = 0; i < K; ++i)
                for (int64_t j = 0; j < K; ++j) {
                  int64_t sy = y + i - K / 2, sx = x + j - K / 2;
                  if (sy < 0 || sy >= H || sx < 0 || sx >= H)
                    continue;
                  sum += src[at(last, C, n, c, sy, sx)] *
                         weights[((o * C + c) * K + i) * K + j];
                }
            out[at(dstLast, O, n, o, y, x)] = sum;
          }
    return out;
  }

  /// relu(conv(src, weights) + bias + addend), src in the `at` layout
  /// `last`, the addend and the result in `dstLayout` (-1: the same).
  std::vector<float> expected(int64_t last, int64_t dstLayout = -1) const {
    std::vector<float> out = sums(last, /*withAddend=*/true, dstLayout);
    for (float &v : out)
      v = v > 0 ? v : 0;
    return out;
  }

  /// Relays src and the addend out into the `at` layouts `srcLayout` and
  /// `dstLayout`.
  void relayout(int64_t srcLayout, int64_t dstLayout) {
    auto relaid = [](const std::vector<float> &plain, int64_t channels,
                     int64_t layout) {
      std::vector<float> laid(plain.size());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t y = 0; y < H; ++y)
            for (int64_t x = 0; x < H; ++x)
              laid[at(layout, channels, n, c, y, x)] =
                  plain[at(false, channels, n, c, y, x)];
      return laid;
    };
    src = relaid(src, C, srcLayout);
    addend = relaid(addend, O, dstLayout);
  }

  /// Transposes src and addend into the channels-last order.
  void toChannelsLast() { relayout(1, 1); }
};

constexpr int64_t kEpilogue =
    KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_RELU;

/// Calls one site (`slot`) of a KxK convolution twice: first with the
/// addend in its own buffer or in dst's (`firstInPlace`), then the other
/// way; both must give the expected values.
void checkSite(int64_t flags, int64_t last, bool firstInPlace, int64_t K,
               int64_t dstLayout = -1) {
  SCOPED_TRACE(std::to_string(K) + "x" + std::to_string(K) +
               (firstInPlace ? ", first call in place" : ", first call apart"));
  Operands ops(K);
  ops.relayout(last, dstLayout < 0 ? last : dstLayout);
  std::vector<float> expected = ops.expected(last, dstLayout);
  std::vector<int64_t> desc = descriptor(flags, K);
  void *slot = nullptr;
  for (bool inPlace : {firstInPlace, !firstInPlace}) {
    SCOPED_TRACE(inPlace ? "addend in dst" : "addend in its own buffer");
    std::vector<float> addend = ops.addend;
    std::vector<float> dst =
        inPlace ? ops.addend : std::vector<float>(expected.size(), -1e30f);
    kiln_dnnl_conv_f32(&slot, desc.data(), ops.src.data(), ops.weights.data(),
                       ops.bias.data(), inPlace ? dst.data() : addend.data(),
                       dst.data(), nullptr, nullptr);
    EXPECT_EQ(dst, expected);
    if (!inPlace) {
      EXPECT_EQ(addend, ops.addend) << "the addend's buffer was written";
    }
  }
}

/// Every order of the addend's buffers, for 3x3 and 1x1 kernels (oneDNN
/// reads a separate addend with a binary post-op where its kernel for the
/// layouts takes one, as its 1x1 kernels do).
void checkSites(int64_t flags, int64_t last, int64_t dstLayout = -1) {
  for (int64_t K : {3, 1})
    for (bool firstInPlace : {false, true})
      checkSite(flags, last, firstInPlace, K, dstLayout);
}

TEST(DnnlConv, PlainLayoutsAddend) { checkSites(kEpilogue, /*last=*/false); }

TEST(DnnlConv, BlockedLayoutsAddend) {
  checkSites(kEpilogue | KILN_DNNL_CONV_BLOCKED, /*last=*/false);
}

TEST(DnnlConv, ChannelsLastAddend) {
  checkSites(kEpilogue | KILN_DNNL_CONV_BLOCKED |
                 KILN_DNNL_CONV_CHANNELS_LAST_SRC |
                 KILN_DNNL_CONV_CHANNELS_LAST_DST,
             /*last=*/true);
}

/// One site called from two threads at once, each on its own dst, in the
/// plain and the channels-last layouts: the site's cached primitive runs
/// concurrently, and every call must give the expected values. With
/// oneDNN's library-managed scratchpad this crashed inside
/// dnnl_primitive_execute (the plain layouts' gemm convolution), on every
/// ISA.
TEST(DnnlConv, ConcurrentCalls) {
  for (int64_t K : {3, 1})
    for (int64_t last : {0, 1}) {
      SCOPED_TRACE(std::to_string(K) + "x" + std::to_string(K) +
                   (last ? ", channels-last" : ", plain"));
      Operands ops(K);
      ops.relayout(last, last);
      std::vector<float> expected = ops.expected(last);
      int64_t flags = last ? kEpilogue | KILN_DNNL_CONV_BLOCKED |
                                 KILN_DNNL_CONV_CHANNELS_LAST_SRC |
                                 KILN_DNNL_CONV_CHANNELS_LAST_DST
                           : kEpilogue;
      std::vector<int64_t> desc = descriptor(flags, K);
      void *slot = nullptr;
      EXPECT_EQ(wrongConcurrentCalls([&] {
                  std::vector<float> dst(expected.size(), -1e30f);
                  kiln_dnnl_conv_f32(&slot, desc.data(), ops.src.data(),
                                     ops.weights.data(), ops.bias.data(),
                                     ops.addend.data(), dst.data(), nullptr,
                                     nullptr);
                  return dst == expected;
                }),
                0);
    }
}

/// src, dst and the addend in nChw8c as the call passes them, only the
/// weights in oneDNN's layout (a chain of convolutions kept blocked).
TEST(DnnlConv, BlockedBy8AsTheyAre) {
  checkSites(kEpilogue | KILN_DNNL_CONV_ANY_WEIGHTS |
                 KILN_DNNL_CONV_BLOCKED_SRC | KILN_DNNL_CONV_BLOCKED_DST,
             /*last=*/8);
}

/// A plain src (8 channels, fewer than a block of 16: a first
/// convolution's) and dst and the addend in nChw16c.
TEST(DnnlConv, PlainIntoBlockedBy16) {
  checkSites(kEpilogue | KILN_DNNL_CONV_ANY_WEIGHTS |
                 KILN_DNNL_CONV_BLOCKED_DST | KILN_DNNL_CONV_BLOCK_16,
             /*last=*/0, /*dstLayout=*/16);
}

/// A blocked operand whose channels are no multiple of the block has no
/// description (C is 8).
TEST(DnnlConv, BlockedNeedsWholeBlocks) {
  std::vector<int64_t> desc =
      descriptor(KILN_DNNL_CONV_BLOCKED_SRC | KILN_DNNL_CONV_BLOCK_16, 3);
  dnnl_memory_desc_t user[3], bias;
  EXPECT_EQ(
      kiln_dnnl_conv_describe(desc.data(), desc[5], dnnl_f32, user, &bias),
      dnnl_invalid_arguments);
  desc = descriptor(KILN_DNNL_CONV_BLOCKED_SRC | KILN_DNNL_CONV_BLOCKED_DST, 3);
  EXPECT_EQ(
      kiln_dnnl_conv_describe(desc.data(), desc[5], dnnl_f32, user, &bias),
      dnnl_success);
}

/// The descriptor of a KxK site with `flags`, a bias, in blocked layouts
/// (channels-last where `channelsLast`) and, with a clip, its bounds [lo,
/// hi] as f32 bits.
std::vector<int64_t> blockedDescriptor(int64_t flags, int64_t K,
                                       bool channelsLast, float lo, float hi) {
  std::vector<int64_t> desc =
      descriptor(flags | KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_BLOCKED |
                     (channelsLast ? KILN_DNNL_CONV_CHANNELS_LAST_SRC |
                                         KILN_DNNL_CONV_CHANNELS_LAST_DST
                                   : 0),
                 K);
  if (flags & KILN_DNNL_CONV_CLIP)
    for (float bound : {lo, hi}) {
      uint32_t bits;
      std::memcpy(&bits, &bound, sizeof(bits));
      desc.push_back(bits);
    }
  return desc;
}

/// kiln's activation of `flags` applied to `values` in place.
void activate(std::vector<float> &values, int64_t flags, float lo, float hi) {
  for (float &v : values) {
    if (flags & KILN_DNNL_CONV_RELU)
      v = std::isnan(v) ? v : (v > 0 ? v : 0.0f);
    if (flags & KILN_DNNL_CONV_CLIP)
      v = std::isnan(v) ? v : std::min(std::max(v, lo), hi);
    if (flags & KILN_DNNL_CONV_SWISH)
      v = v * (1.0f / (1.0f + std::exp(-v)));
  }
}

/// One site of a KxK convolution with a bias and the activation `flags`
/// called four times: on finite operands (oneDNN's post-op), with a NaN,
/// an infinity and a -infinity in src, with finite values so large that
/// products overflow, and with a NaN in src's last element alone (the last
/// three left to the call's own activation, since oneDNN's ReLU and clip
/// would turn the NaNs into their lower bound).
/// Every result must be kiln's: the same NaNs and infinities, the finite
/// values equal (within 1e-5 relative for the SiLU's exp). Where sums
/// overflow, which infinities meet depends on the order of the sums and on
/// whether products are fused into them, so there the expected values are
/// kiln's activation of what the convolution without it gives.
void checkActivation(int64_t flags, int64_t K, bool channelsLast) {
  SCOPED_TRACE(std::to_string(K) + "x" + std::to_string(K) + " flags " +
               std::to_string(flags) +
               (channelsLast ? ", channels last" : ""));
  float lo = 0.0f, hi = 6.0f;
  std::vector<int64_t> desc = blockedDescriptor(
      flags | KILN_DNNL_CONV_SRC_BOUND | KILN_DNNL_CONV_DST_BOUND, K,
      channelsLast, lo, hi);
  std::vector<int64_t> bare = descriptor(
      desc[5] & ~(KILN_DNNL_CONV_ACTIVATIONS | KILN_DNNL_CONV_SRC_BOUND |
                   KILN_DNNL_CONV_DST_BOUND),
      K);
  void *slot = nullptr, *bareSlot = nullptr;
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round == 0   ? "finite"
                 : round == 1 ? "NaN and infinities in src"
                 : round == 2 ? "overflowing products"
                              : "a NaN in src's last element");
    Operands ops(K);
    if (round == 1) {
      ops.src[at(false, C, 0, 1, 3, 4)] = NAN;
      ops.src[at(false, C, 1, 2, 7, 7)] = INFINITY;
      ops.src[at(false, C, 1, 5, 7, 8)] = -INFINITY;
    } else if (round == 2) {
      // Weights of magnitude 0, 2 or 3: a product of 3e38 overflows to an
      // infinity or is 0, so no sum depends on its order.
      for (float &w : ops.weights)
        w = std::abs(w) == 1 ? 2 * w : w;
      ops.src[at(false, C, 0, 3, 5, 5)] = 3e38f;
      ops.src[at(false, C, 0, 3, 5, 6)] = -3e38f;
      ops.src[at(false, C, 1, 0, 2, 9)] = 3e38f;
    } else if (round == 3) {
      // The last element (in either layout) alone, which the vector loops
      // that look for non-finite values may leave to their scalar tail.
      ops.src.back() = NAN;
    }
    if (channelsLast)
      ops.toChannelsLast();
    // kiln's activation of conv(src, weights) + bias, in the call's order:
    // exact for the small integers here, and where a sum meets an infinity
    // or a NaN the result does not depend on the order.
    std::vector<float> expected = ops.sums(channelsLast, /*withAddend=*/false);
    activate(expected, flags, lo, hi);
    std::vector<float> dst(expected.size(), -1.0f);
    // The bound on |src| that an earlier call would pass where it knew
    // none: src is read. The call's own bound on |dst|.
    float srcBound = INFINITY, dstBound = -1.0f;
    kiln_dnnl_conv_f32(&slot, desc.data(), ops.src.data(), ops.weights.data(),
                       ops.bias.data(), nullptr, dst.data(), &srcBound,
                       &dstBound);
    int64_t overflowed = 0;
    if (round == 2) {
      std::vector<float> sums(dst.size());
      kiln_dnnl_conv_f32(&bareSlot, bare.data(), ops.src.data(),
                         ops.weights.data(), ops.bias.data(), nullptr,
                         sums.data(), nullptr, nullptr);
      overflowed = std::count_if(sums.begin(), sums.end(),
                                 [](float v) { return !std::isfinite(v); });
      activate(sums, flags, lo, hi);
      expected = sums;
    }
    int64_t nonFinite = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t x = 0; x < H; ++x) {
            size_t i = at(channelsLast, O, n, o, y, x);
            float want = expected[i], got = dst[i];
            std::string where = "at [" + std::to_string(n) + ", " +
                                std::to_string(o) + ", " + std::to_string(y) +
                                ", " + std::to_string(x) + "]";
            if (!std::isfinite(want)) {
              ++nonFinite;
              EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want)
                  << where << ": " << got << " for " << want;
            } else {
              EXPECT_NEAR(got, want, 1e-5 * std::max(1.0f, std::abs(want)))
                  << where;
            }
          }
    if (round > 0) {
      EXPECT_GT(round == 2 ? overflowed : nonFinite, 0)
          << "the case has no NaN or infinity to check";
      EXPECT_EQ(dstBound, INFINITY) << "a bound where dst may hold a NaN";
    } else {
      // Finite, at least every |dst|, and the clip's own bound for a clip.
      float largest = 0;
      for (float v : dst)
        largest = std::max(largest, std::abs(v));
      EXPECT_GE(dstBound, largest);
      EXPECT_LT(dstBound, 1e6f);
      if (flags & KILN_DNNL_CONV_CLIP) {
        EXPECT_EQ(dstBound, hi);
      }
    }
  }
}

TEST(DnnlConv, ActivationsKeepNaNsAndInfinities) {
  for (int64_t flags :
       {int64_t(KILN_DNNL_CONV_RELU), int64_t(KILN_DNNL_CONV_CLIP),
        int64_t(KILN_DNNL_CONV_SWISH)})
    for (int64_t K : {3, 1})
      for (bool channelsLast : {false, true})
        checkActivation(flags, K, channelsLast);
}

/// f32 -> bf16, to nearest even (a NaN stays a NaN), and back.
uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16);
}

float fromBf16(uint16_t half) {
  uint32_t bits = uint32_t(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

std::vector<uint16_t> toBf16(const std::vector<float> &values) {
  std::vector<uint16_t> halves;
  for (float v : values)
    halves.push_back(toBf16(v));
  return halves;
}

/// A bf16 site (kiln_dnnl_conv_bf16) of a KxK convolution with a bias and
/// `flags` (an addend, a ReLU or a clip; KILN_DNNL_CONV_F32_DST), called
/// twice: on finite operands, then with a NaN, an infinity and a -infinity
/// in src. src and the weights are small integers (exact in bf16), so the
/// f32 sums are exact in any order and the call must give their epilogue
/// rounded once: f32 dst the same bits, bf16 dst the nearest bf16 of the
/// f32 value (sums above 256 round), NaNs kept by the ReLU and the clip.
void checkBf16(int64_t flags, int64_t K, bool channelsLast) {
  SCOPED_TRACE(std::to_string(K) + "x" + std::to_string(K) + " flags " +
               std::to_string(flags) + (channelsLast ? ", channels last" : ""));
  bool f32Dst = flags & KILN_DNNL_CONV_F32_DST;
  bool activation = flags & KILN_DNNL_CONV_ACTIVATIONS;
  float lo = 0.0f, hi = 6.0f;
  std::vector<int64_t> desc = blockedDescriptor(
      flags | KILN_DNNL_CONV_BFLOAT16 | KILN_DNNL_CONV_CONSTANT_WEIGHT |
          (activation ? KILN_DNNL_CONV_SRC_BOUND | KILN_DNNL_CONV_DST_BOUND
                      : 0),
      K, channelsLast, lo, hi);
  void *slot = nullptr;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "finite" : "NaN and infinities in src");
    Operands ops(K);
    // Multiples of 7 up to 21 (5 bits, exact in bf16): sums of 72 products
    // spread over hundreds, many above 256, where bf16 rounds.
    for (float &v : ops.src)
      v *= 7;
    if (round == 1) {
      ops.src[at(false, C, 0, 1, 3, 4)] = NAN;
      ops.src[at(false, C, 1, 2, 7, 7)] = INFINITY;
      ops.src[at(false, C, 1, 5, 7, 8)] = -INFINITY;
    }
    if (channelsLast)
      ops.toChannelsLast();
    std::vector<float> expected =
        ops.sums(channelsLast, (flags & KILN_DNNL_CONV_ADDEND) != 0);
    activate(expected, flags, lo, hi);
    std::vector<uint16_t> src = toBf16(ops.src), weights = toBf16(ops.weights);
    std::vector<float> dst32(expected.size(), -1.0f);
    std::vector<uint16_t> dst16(expected.size(), 0xffff);
    float srcBound = INFINITY, dstBound = -1.0f;
    kiln_dnnl_conv_bf16(
        &slot, desc.data(), src.data(), weights.data(), ops.bias.data(),
        (flags & KILN_DNNL_CONV_ADDEND) ? ops.addend.data() : nullptr,
        f32Dst ? static_cast<void *>(dst32.data())
               : static_cast<void *>(dst16.data()),
        &srcBound, &dstBound);
    int64_t nonFinite = 0, rounded = 0;
    float largest = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      float want = f32Dst ? expected[i] : fromBf16(toBf16(expected[i]));
      float got = f32Dst ? dst32[i] : fromBf16(dst16[i]);
      nonFinite += !std::isfinite(want);
      rounded += want != expected[i] && std::isfinite(want);
      largest = std::max(largest, std::abs(got));
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << "at " << i << ": " << got;
      else
        EXPECT_EQ(got, want) << "at " << i << " (exact " << expected[i] << ")";
    }
    if (round == 1)
      EXPECT_GT(nonFinite, 0) << "the case has no NaN or infinity to check";
    if (!activation)
      continue;
    if (round == 1) {
      EXPECT_EQ(dstBound, INFINITY) << "a bound where dst may hold a NaN";
    } else {
      EXPECT_GE(dstBound, largest);
      EXPECT_LT(dstBound, 1e6f);
    }
    if (!f32Dst && !(flags & KILN_DNNL_CONV_CLIP) && round == 0 && K == 3)
      EXPECT_GT(rounded, 0) << "no sum large enough to round to bf16";
  }
}

TEST(DnnlConv, Bf16Epilogues) {
  for (int64_t flags :
       {int64_t(0), int64_t(KILN_DNNL_CONV_RELU), int64_t(KILN_DNNL_CONV_CLIP),
        int64_t(KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_F32_DST),
        int64_t(KILN_DNNL_CONV_ADDEND | KILN_DNNL_CONV_RELU |
                KILN_DNNL_CONV_F32_DST)})
    for (int64_t K : {3, 1})
      for (bool channelsLast : {false, true})
        checkBf16(flags, K, channelsLast);
}

/// A Winograd site (KILN_DNNL_CONV_WINOGRAD): N 1, C 16, 16x16, O 64, a 3x3
/// kernel at stride 1, padding 1, channels-last, with a bias and `flags`.
namespace winograd {
constexpr int64_t N = 1, C = 16, H = 16, O = 64;

std::vector<int64_t> descriptor(int64_t flags) {
  flags |= KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_BLOCKED |
           KILN_DNNL_CONV_CHANNELS_LAST_SRC | KILN_DNNL_CONV_CHANNELS_LAST_DST;
  return {2, 1, N, C, O, flags, H, H, 3, 3, H, H, 1, 1, 1, 1, 1, 1, 1, 1};
}

using kiln::test::uniformValues;

/// Whether oneDNN has a Winograd kernel for `desc` on the CPU running the
/// test (an AVX-512 one); elsewhere the call runs direct sums.
bool hasKernel(const std::vector<int64_t> &desc) {
  dnnl_engine_t engine;
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
    return false;
  dnnl_memory_desc_t user[3], any[3], bias;
  dnnl_primitive_desc_t pd = nullptr;
  bool has =
      kiln_dnnl_conv_describe(desc.data(), desc[5], dnnl_f32, user, &bias) ==
          dnnl_success &&
      kiln_dnnl_conv_layouts(desc[5], user, any) == dnnl_success &&
      kiln_dnnl_conv_primitive_desc(desc.data(), desc[5], any, &bias, nullptr,
                                    nullptr, engine, &pd) == dnnl_success;
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  dnnl_engine_destroy(engine);
  return has;
}

struct Site {
  std::vector<float> src = uniformValues(N * H * H * C, 5);
  std::vector<float> weights = uniformValues(O * C * 9, 6);
  std::vector<float> bias = uniformValues(O, 7);

  /// dst [1, H, H, O] of the site with `flags`, called twice on one slot
  /// (the second call is the one returned).
  std::vector<float> run(int64_t flags) const {
    std::vector<int64_t> desc = descriptor(flags);
    std::vector<float> dst(N * H * H * O, -1.0f);
    void *slot = nullptr;
    for (int call = 0; call < 2; ++call)
      kiln_dnnl_conv_f32(&slot, desc.data(), src.data(), weights.data(),
                         bias.data(), nullptr, dst.data(), nullptr, nullptr);
    return dst;
  }

  /// The convolution plus bias in double, ReLU'd where `relu`.
  std::vector<double> reference(bool relu) const {
    std::vector<double> out(N * H * H * O);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < H; ++x)
        for (int64_t o = 0; o < O; ++o) {
          double sum = bias[o];
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              int64_t sy = y + i - 1, sx = x + j - 1;
              if (sy < 0 || sy >= H || sx < 0 || sx >= H)
                continue;
              for (int64_t c = 0; c < C; ++c)
                sum += double(src[(sy * H + sx) * C + c]) *
                       weights[((o * C + c) * 3 + i) * 3 + j];
            }
          out[(y * H + x) * O + o] = relu && !(sum > 0) ? 0 : sum;
        }
    return out;
  }
};
} // namespace winograd

/// Winograd's sums are as close to the exact ones as direct sums are (a
/// few units in the last place of the largest term), but not the same
/// bits: where oneDNN has a kernel, some result must differ from the
/// direct call's, or the algorithm did not change.
TEST(DnnlConv, WinogradSums) {
  for (int64_t relu : {int64_t(0), int64_t(KILN_DNNL_CONV_RELU)}) {
    SCOPED_TRACE(relu ? "with a ReLU" : "no activation");
    winograd::Site site;
    std::vector<float> wino = site.run(relu | KILN_DNNL_CONV_WINOGRAD);
    std::vector<float> direct = site.run(relu);
    std::vector<double> exact = site.reference(relu != 0);
    int64_t differing = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      EXPECT_NEAR(wino[i], exact[i], 2e-5) << "at " << i;
      EXPECT_NEAR(direct[i], exact[i], 2e-5) << "at " << i;
      differing += wino[i] != direct[i];
    }
    if (winograd::hasKernel(
            winograd::descriptor(relu | KILN_DNNL_CONV_WINOGRAD)))
      EXPECT_GT(differing, 0) << "the Winograd call gave the direct bits";
    else
      EXPECT_EQ(differing, 0) << "no Winograd kernel here: direct sums";
  }
}

/// An infinity or a NaN in src, a huge value whose transform could
/// overflow, or a non-finite weight: the call gives the direct sums' bits
/// (and kiln's ReLU), not what the transforms would make of them (an
/// infinity turns into NaNs in outputs whose windows do not hold it).
TEST(DnnlConv, WinogradFallsBackOnNonFiniteOperands) {
  struct Case {
    const char *name;
    int64_t at;
    float value;
    bool inWeights;
  };
  for (Case c : {Case{"+inf in src", 17 * 16 + 3, INFINITY, false},
                 Case{"NaN in src", 40 * 16, NAN, false},
                 Case{"1e30 in src", 100 * 16 + 5, 1e30f, false},
                 Case{"-inf in the weights", 9 * 16 + 4, -INFINITY, true}})
    for (int64_t relu : {int64_t(0), int64_t(KILN_DNNL_CONV_RELU)}) {
      SCOPED_TRACE(std::string(c.name) + (relu ? ", ReLU" : ""));
      winograd::Site site;
      (c.inWeights ? site.weights : site.src)[c.at] = c.value;
      std::vector<float> wino = site.run(relu | KILN_DNNL_CONV_WINOGRAD);
      std::vector<float> direct = site.run(relu);
      int64_t nonFinite = 0;
      for (size_t i = 0; i < wino.size(); ++i) {
        nonFinite += !std::isfinite(direct[i]);
        if (std::isnan(direct[i]))
          EXPECT_TRUE(std::isnan(wino[i])) << "at " << i << ": " << wino[i];
        else
          EXPECT_EQ(wino[i], direct[i]) << "at " << i;
      }
      if (!relu && c.value != 1e30f)
        EXPECT_GT(nonFinite, 0) << "the case has no non-finite result";
    }
}

/// What a quantized site's result is requantized to (KILN_DNNL_CONV_INT8_DST
/// with its zero point), or not (f32 dst).
struct Requantized {
  bool requantize = false;
  bool isSigned = false;
  int32_t zeroPoint = 0;
};

/// A quantized site (kiln_dnnl_conv_int8): 8-bit src minus `zeroPoint`
/// (uint8, or int8 where `isSigned`), int8 weights, `groups` groups, a
/// power-of-two scale per output channel (so that every product is exact
/// in f32), a bias and a ReLU where `epilogue` says, an f32 or a
/// requantized 8-bit dst, in the plain or the channels-last layouts,
/// called twice, against sums written out; the padding adds nothing (a
/// dequantized 0).
void checkQuantized(bool isSigned, int32_t zeroPoint, int64_t groups,
                    bool last, int64_t K, bool epilogue = false,
                    Requantized requantized = {}) {
  SCOPED_TRACE(std::string(isSigned ? "int8" : "uint8") + " src, zero point " +
               std::to_string(zeroPoint) + ", " + std::to_string(groups) +
               " groups, " + std::to_string(K) + "x" + std::to_string(K) +
               (last ? ", channels-last" : ", plain"));
  int64_t perGroup = C / groups, outPerGroup = O / groups;
  std::vector<uint8_t> src(N * C * H * H);
  std::vector<int8_t> weights(O * perGroup * K * K);
  unsigned seed = 11;
  auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return int(seed >> 16);
  };
  for (uint8_t &v : src)
    v = static_cast<uint8_t>(next() % 256);
  for (int8_t &w : weights)
    w = static_cast<int8_t>(next() % 255 - 127);
  // The O scales, then the src and dst zero points.
  std::vector<float> quant(O + 2), bias(O);
  for (int64_t o = 0; o < O; ++o) {
    quant[o] = 1.0f / float(1 << (o % 5 + (requantized.requantize ? 8 : 0)));
    bias[o] = float(next() % 20001 - 10000);
  }
  quant[O] = float(zeroPoint);
  quant[O + 1] = float(requantized.zeroPoint);
  auto value = [&](size_t i) {
    return isSigned ? int(static_cast<int8_t>(src[i])) : int(src[i]);
  };
  std::vector<float> expected(N * O * H * H);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < H; ++x) {
          int64_t sum = 0;
          for (int64_t c = 0; c < perGroup; ++c)
            for (int64_t i = 0; i < K; ++i)
              for (int64_t j = 0; j < K; ++j) {
                int64_t sy = y + i - K / 2, sx = x + j - K / 2;
                if (sy < 0 || sy >= H || sx < 0 || sx >= H)
                  continue;
                int64_t channel = o / outPerGroup * perGroup + c;
                sum += (value(at(last, C, n, channel, sy, sx)) - zeroPoint) *
                       weights[((o * perGroup + c) * K + i) * K + j];
              }
          float value = (float(sum) + (epilogue ? bias[o] : 0.0f)) * quant[o];
          if (epilogue && value < 0)
            value = 0;
          if (requantized.requantize) {
            float low = requantized.isSigned ? -128.0f : 0.0f;
            value = std::nearbyint(value + float(requantized.zeroPoint));
            value = std::min(std::max(value, low), low + 255.0f);
          }
          expected[at(last, O, n, o, y, x)] = value;
        }
  int64_t flags = KILN_DNNL_CONV_INT8 | KILN_DNNL_CONV_BLOCKED |
                  KILN_DNNL_CONV_CONSTANT_WEIGHT;
  if (isSigned)
    flags |= KILN_DNNL_CONV_SIGNED_SRC;
  if (epilogue)
    flags |= KILN_DNNL_CONV_BIAS | KILN_DNNL_CONV_RELU;
  if (requantized.requantize)
    flags |= KILN_DNNL_CONV_INT8_DST;
  if (requantized.isSigned)
    flags |= KILN_DNNL_CONV_SIGNED_DST;
  if (last)
    flags |= KILN_DNNL_CONV_CHANNELS_LAST_SRC | KILN_DNNL_CONV_CHANNELS_LAST_DST;
  std::vector<int64_t> desc = descriptor(flags, K);
  desc[1] = groups;
  void *slot = nullptr;
  for (int call = 0; call < 2; ++call) {
    std::vector<float> dst(expected.size(), -1e30f);
    std::vector<uint8_t> bytes(expected.size(), 77);
    kiln_dnnl_conv_int8(&slot, desc.data(), src.data(), weights.data(),
                        epilogue ? bias.data() : nullptr, quant.data(),
                        requantized.requantize ? (void *)bytes.data()
                                               : (void *)dst.data());
    if (requantized.requantize)
      for (size_t i = 0; i < bytes.size(); ++i)
        dst[i] = requantized.isSigned ? float(int8_t(bytes[i]))
                                      : float(bytes[i]);
    EXPECT_EQ(dst, expected) << "call " << call;
  }
}

TEST(DnnlConv, QuantizedUnsignedSource) {
  for (int32_t zeroPoint : {0, 128, 3})
    for (bool last : {false, true})
      for (int64_t K : {3, 1})
        checkQuantized(/*isSigned=*/false, zeroPoint, /*groups=*/1, last, K);
}

TEST(DnnlConv, QuantizedSignedSource) {
  for (int32_t zeroPoint : {0, -5})
    for (bool last : {false, true})
      checkQuantized(/*isSigned=*/true, zeroPoint, /*groups=*/1, last, 3);
}

/// A bias and a ReLU, and the result requantized to uint8 or int8 with a
/// zero point (rounded to even after the zero point is added, saturated).
TEST(DnnlConv, QuantizedEpilogueAndRequantization) {
  for (bool last : {false, true})
    for (int64_t K : {3, 1}) {
      checkQuantized(/*isSigned=*/false, /*zeroPoint=*/128, /*groups=*/1,
                     last, K, /*epilogue=*/true);
      checkQuantized(/*isSigned=*/false, /*zeroPoint=*/128, /*groups=*/1,
                     last, K, /*epilogue=*/true, {true, false, 3});
      checkQuantized(/*isSigned=*/true, /*zeroPoint=*/-2, /*groups=*/1, last,
                     K, /*epilogue=*/false, {true, true, -7});
    }
}

/// Grouped (and depthwise: as many groups as channels) quantized
/// convolutions: the scales are per output channel across the groups.
TEST(DnnlConv, QuantizedGroups) {
  for (int64_t groups : {int64_t(2), C})
    for (bool last : {false, true})
      checkQuantized(/*isSigned=*/false, /*zeroPoint=*/7, groups, last, 3);
}

} // namespace
