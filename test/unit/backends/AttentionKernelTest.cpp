//===- AttentionKernelTest.cpp - The CPU attention kernels against a reference //
//
// kiln_attention_f32_forward and kiln_attention_f32_backward
// (backends/cpu/support/Attention.c) against a direct double-precision
// evaluation of the same definitions: the scores in full, their softmax,
// and the analytical gradients, whose formulas are checked in turn against
// finite differences of the reference forward. Every case runs through the
// kernels as built for kiln (AVX-512 or AVX2 where the CPU has it), through
// a copy built with KILN_ATTENTION_NO_AVX512 (AVX2 where the CPU has it) and
// through one built with KILN_ATTENTION_PORTABLE_ONLY (the baseline-ISA
// kernels every CPU can run). The shapes are ones the kernels' blocking
// does not divide: odd head dims, Nq != Nk, query tiles of 1 and 7 rows,
// broadcast masks with -inf entries, and score magnitudes that make the
// online softmax rescale.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "AttentionAbi.h"

// The copies built with KILN_ATTENTION_PORTABLE_ONLY and
// KILN_ATTENTION_NO_AVX512 (see CMakeLists.txt).
void kiln_attention_portable_f32_forward(const int64_t *, const float *,
                                         const float *, const float *,
                                         const float *, float *, float *,
                                         int64_t, int64_t);
void kiln_attention_portable_f32_backward(const int64_t *, const float *,
                                          const float *, const float *,
                                          const float *, const float *,
                                          const float *, const float *,
                                          float *, float *, float *, int64_t);
void kiln_attention_avx2_f32_forward(const int64_t *, const float *,
                                     const float *, const float *,
                                     const float *, float *, float *, int64_t,
                                     int64_t);
void kiln_attention_avx2_f32_backward(const int64_t *, const float *,
                                      const float *, const float *,
                                      const float *, const float *,
                                      const float *, const float *, float *,
                                      float *, float *, int64_t);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using ForwardFn = decltype(&kiln_attention_f32_forward);
using BackwardFn = decltype(&kiln_attention_f32_backward);

struct Kernels {
  const char *name;
  ForwardFn forward;
  BackwardFn backward;
};

const Kernels kBuilt = {"built", kiln_attention_f32_forward,
                        kiln_attention_f32_backward};
const Kernels kPortable = {"portable", kiln_attention_portable_f32_forward,
                           kiln_attention_portable_f32_backward};
const Kernels kAvx2 = {"avx2", kiln_attention_avx2_f32_forward,
                       kiln_attention_avx2_f32_backward};

// One attention problem with its inputs.
struct Problem {
  std::vector<int64_t> leading; // the leading dims (batch = their product)
  int64_t nq = 0, nk = 0, d = 0, dv = 0, tile = 1;
  bool causal = false;
  double scale = 1.0;
  // The mask's dims ([leading..., Nq, Nk], each the scores' or 1); empty
  // without a mask.
  std::vector<int64_t> maskDims;
  std::vector<float> q, k, v, mask, dout;

  int64_t batch() const {
    int64_t b = 1;
    for (int64_t x : leading)
      b *= x;
    return b;
  }
  int64_t rank() const { return (int64_t)leading.size(); }

  // Row-major strides of the mask, 0 where it broadcasts.
  std::vector<int64_t> maskStrides() const {
    std::vector<int64_t> strides(maskDims.size());
    int64_t s = 1;
    for (int64_t i = (int64_t)maskDims.size() - 1; i >= 0; --i) {
      strides[i] = maskDims[i] == 1 ? 0 : s;
      s *= maskDims[i];
    }
    return strides;
  }

  std::vector<int64_t> descriptor() const {
    std::vector<int64_t> desc(KILN_ATTENTION_HEADER_SIZE);
    desc[KILN_ATTENTION_BATCH] = batch();
    desc[KILN_ATTENTION_QUERIES] = nq;
    desc[KILN_ATTENTION_KEYS] = nk;
    desc[KILN_ATTENTION_HEAD_DIM] = d;
    desc[KILN_ATTENTION_VALUE_DIM] = dv;
    desc[KILN_ATTENTION_FLAGS] = (causal ? KILN_ATTENTION_CAUSAL : 0) |
                                 (maskDims.empty() ? 0 : KILN_ATTENTION_MASKED);
    std::memcpy(&desc[KILN_ATTENTION_SCALE_BITS], &scale, sizeof scale);
    desc[KILN_ATTENTION_QUERY_TILE] = tile;
    desc[KILN_ATTENTION_LEADING_RANK] = rank();
    for (int64_t x : leading)
      desc.push_back(x);
    if (!maskDims.empty())
      for (int64_t s : maskStrides())
        desc.push_back(s);
    return desc;
  }

  // The mask's entry for scores (b, i, j), by the broadcast rules
  // themselves rather than the kernel's unravelling.
  double maskAt(int64_t b, int64_t i, int64_t j) const {
    if (maskDims.empty())
      return 0.0;
    std::vector<int64_t> index(rank());
    for (int64_t x = rank() - 1; x >= 0; --x) {
      index[x] = b % leading[x];
      b /= leading[x];
    }
    index.push_back(i);
    index.push_back(j);
    int64_t flat = 0;
    for (size_t x = 0; x < maskDims.size(); ++x)
      flat = flat * maskDims[x] + (maskDims[x] == 1 ? 0 : index[x]);
    return mask[flat];
  }
};

// Fills the inputs with uniform values in [-1, 1] (the mask too, with a
// fraction `maskedFraction` of -inf entries).
void fill(Problem &p, unsigned seed, double maskedFraction = 0.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  int64_t b = p.batch();
  auto random = [&](std::vector<float> &x, int64_t n) {
    x.resize(n);
    for (float &e : x)
      e = uniform(gen);
  };
  random(p.q, b * p.nq * p.d);
  random(p.k, b * p.nk * p.d);
  random(p.v, b * p.nk * p.dv);
  random(p.dout, b * p.nq * p.dv);
  if (!p.maskDims.empty()) {
    int64_t n = 1;
    for (int64_t x : p.maskDims)
      n *= x;
    random(p.mask, n);
    for (float &e : p.mask)
      if (coin(gen) < maskedFraction)
        e = -std::numeric_limits<float>::infinity();
  }
}

struct Results {
  std::vector<double> out, lse, dq, dk, dv;
};

// The scores of batch entry b, row i: scale * q k^T + mask, causal -inf.
std::vector<double> referenceScores(const Problem &p, int64_t b, int64_t i) {
  std::vector<double> s(p.nk);
  for (int64_t j = 0; j < p.nk; ++j) {
    if (p.causal && j > i) {
      s[j] = -kInf;
      continue;
    }
    double dot = 0.0;
    for (int64_t c = 0; c < p.d; ++c)
      dot += (double)p.q[(b * p.nq + i) * p.d + c] *
             p.k[(b * p.nk + j) * p.d + c];
    s[j] = p.scale * dot + p.maskAt(b, i, j);
  }
  return s;
}

// The definitions, in double: softmax by its maximum, then its gradients.
Results reference(const Problem &p, bool gradients) {
  const int64_t B = p.batch(), nq = p.nq, nk = p.nk, d = p.d, dv = p.dv;
  Results r;
  r.out.assign(B * nq * dv, 0.0);
  r.lse.assign(B * nq, 0.0);
  r.dq.assign(B * nq * d, 0.0);
  r.dk.assign(B * nk * d, 0.0);
  r.dv.assign(B * nk * dv, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<std::vector<double>> P(nq);
    for (int64_t i = 0; i < nq; ++i) {
      std::vector<double> s = referenceScores(p, b, i);
      double m = -kInf;
      for (double x : s)
        m = std::max(m, x);
      double *o = &r.out[(b * nq + i) * dv];
      if (m == -kInf) {
        for (int64_t c = 0; c < dv; ++c)
          o[c] = NAN;
        r.lse[b * nq + i] = NAN;
        P[i].assign(nk, NAN);
        continue;
      }
      double sum = 0.0;
      for (double &x : s)
        sum += (x = std::exp(x - m));
      for (int64_t j = 0; j < nk; ++j) {
        s[j] /= sum;
        for (int64_t c = 0; c < dv; ++c)
          o[c] += s[j] * p.v[(b * nk + j) * dv + c];
      }
      r.lse[b * nq + i] = m + std::log(sum);
      P[i] = s;
    }
    if (!gradients)
      continue;
    for (int64_t i = 0; i < nq; ++i) {
      const float *go = &p.dout[(b * nq + i) * dv];
      double delta = 0.0;
      for (int64_t c = 0; c < dv; ++c)
        delta += go[c] * r.out[(b * nq + i) * dv + c];
      for (int64_t j = 0; j < nk; ++j) {
        double dp = 0.0;
        for (int64_t c = 0; c < dv; ++c) {
          dp += go[c] * (double)p.v[(b * nk + j) * dv + c];
          r.dv[(b * nk + j) * dv + c] += P[i][j] * go[c];
        }
        double ds = P[i][j] * (dp - delta);
        for (int64_t c = 0; c < d; ++c) {
          r.dq[(b * nq + i) * d + c] +=
              p.scale * ds * p.k[(b * nk + j) * d + c];
          r.dk[(b * nk + j) * d + c] +=
              p.scale * ds * p.q[(b * nq + i) * d + c];
        }
      }
    }
  }
  return r;
}

struct Outputs {
  std::vector<float> out, lse, dq, dk, dv;
};

Outputs runForward(const Kernels &kern, const Problem &p) {
  std::vector<int64_t> desc = p.descriptor();
  Outputs o;
  // Poisoned, so that rows the kernel fails to write are seen.
  o.out.assign(p.batch() * p.nq * p.dv, 12345.0f);
  o.lse.assign(p.batch() * p.nq, 12345.0f);
  int64_t tiles = (p.nq + p.tile - 1) / p.tile;
  for (int64_t b = 0; b < p.batch(); ++b)
    for (int64_t t = 0; t < tiles; ++t)
      kern.forward(desc.data(), p.q.data(), p.k.data(), p.v.data(),
                   p.mask.empty() ? nullptr : p.mask.data(), o.out.data(),
                   o.lse.data(), b, t);
  return o;
}

void runBackward(const Kernels &kern, const Problem &p, Outputs &o) {
  std::vector<int64_t> desc = p.descriptor();
  o.dq.assign(p.batch() * p.nq * p.d, 12345.0f);
  o.dk.assign(p.batch() * p.nk * p.d, 12345.0f);
  o.dv.assign(p.batch() * p.nk * p.dv, 12345.0f);
  for (int64_t b = 0; b < p.batch(); ++b)
    kern.backward(desc.data(), p.q.data(), p.k.data(), p.v.data(),
                  p.mask.empty() ? nullptr : p.mask.data(), o.out.data(),
                  o.lse.data(), p.dout.data(), o.dq.data(), o.dk.data(),
                  o.dv.data(), b);
}

// Elementwise |got - want| <= tol * (|want| + max |want|): relative to the
// entry, with an absolute floor at the tensor's own scale (entries that are
// sums of cancelling terms have no better relative accuracy). NaN must
// match NaN.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0.0;
  for (double w : want)
    if (!std::isnan(w))
      scale = std::max(scale, std::fabs(w));
  int reported = 0;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      if (!std::isnan(got[i]) && reported++ < 5)
        ADD_FAILURE() << what << "[" << i << "] = " << got[i]
                      << ", expected NaN";
      continue;
    }
    double err = std::fabs(got[i] - want[i]);
    double bound = tol * (std::fabs(want[i]) + scale);
    worst = std::max(worst, err / (std::fabs(want[i]) + scale + 1e-300));
    if (!(err <= bound) && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", expected "
                    << want[i] << " (error " << err << ", bound " << bound
                    << ")";
  }
  if (reported > 5)
    ADD_FAILURE() << what << ": " << reported << " mismatches in all";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", worst);
  ::testing::Test::RecordProperty(what + ".worst_relative_error", text);
}

// Runs both kernels of every build on p and compares them with the
// reference; the tolerance grows with the magnitude of the scores, whose
// rounding errors exp turns into relative errors of P.
void check(Problem p, bool gradients = true, double tol = 1e-5) {
  Results want = reference(p, gradients);
  for (const Kernels *kern : {&kBuilt, &kAvx2, &kPortable}) {
    SCOPED_TRACE(kern->name);
    Outputs got = runForward(*kern, p);
    expectClose(got.out, want.out, tol, "out");
    expectClose(got.lse, want.lse, tol, "lse");
    if (!gradients)
      continue;
    runBackward(*kern, p, got);
    expectClose(got.dq, want.dq, tol, "dq");
    expectClose(got.dk, want.dk, tol, "dk");
    expectClose(got.dv, want.dv, tol, "dv");
  }
}

Problem shape(std::vector<int64_t> leading, int64_t nq, int64_t nk, int64_t d,
              int64_t dv, int64_t tile, bool causal) {
  Problem p;
  p.leading = std::move(leading);
  p.nq = nq;
  p.nk = nk;
  p.d = d;
  p.dv = dv;
  p.tile = tile;
  p.causal = causal;
  p.scale = 1.0 / std::sqrt((double)d);
  return p;
}

TEST(AttentionKernel, OddDimsSmallTiles) {
  Problem p = shape({2, 3}, 37, 53, 17, 3, 7, false);
  fill(p, 1);
  check(p);
}

TEST(AttentionKernel, HeadDim64Causal) {
  Problem p = shape({2}, 200, 200, 64, 64, 64, true);
  fill(p, 2);
  check(p);
}

TEST(AttentionKernel, CausalFewerQueriesThanKeys) {
  Problem p = shape({3}, 130, 300, 80, 80, 64, true);
  fill(p, 3);
  check(p);
}

TEST(AttentionKernel, CausalMoreQueriesThanKeysTileOne) {
  // Rows past Nk see every key; the first rows see a single one.
  Problem p = shape({2}, 50, 20, 1, 1, 1, true);
  fill(p, 4);
  check(p);
}

TEST(AttentionKernel, MoreQueriesThanKeys) {
  Problem p = shape({2}, 150, 40, 64, 17, 64, false);
  fill(p, 5);
  check(p);
}

TEST(AttentionKernel, FewerQueriesThanTile) {
  Problem p = shape({2}, 5, 70, 3, 17, 64, false);
  fill(p, 6);
  check(p);
  p.causal = true;
  check(p);
}

TEST(AttentionKernel, LargeTileSeveralBlocks) {
  // A tile of 200 rows (several row blocks, the last partial) over 333 keys
  // (several key blocks, the last partial).
  Problem p = shape({2}, 400, 333, 64, 48, 200, false);
  fill(p, 7);
  check(p);
  p.causal = true;
  check(p);
}

TEST(AttentionKernel, TileOfSeveralSubTileGroups) {
  // A tile of 600 rows: groups of sub-tiles that take each key block in
  // turn (the last group and its last sub-tile partial), causal (each
  // sub-tile stops at its own diagonal, the group at its last one's) and
  // with a mask per row and column.
  Problem p = shape({2}, 700, 650, 64, 40, 600, true);
  fill(p, 19);
  check(p);
  p.causal = false;
  p.maskDims = {2, 700, 650};
  fill(p, 20, 0.3);
  check(p);
}

TEST(AttentionKernel, HeadDim64TileOneCausal) {
  Problem p = shape({1}, 40, 150, 64, 64, 1, true);
  fill(p, 8);
  check(p);
}

TEST(AttentionKernel, KeyPaddingMask) {
  // [B, 1, 1, Nk] with -inf keys (key 0 is kept, so no row is empty).
  Problem p = shape({2, 3}, 45, 140, 17, 20, 7, false);
  p.maskDims = {2, 1, 1, 140};
  fill(p, 9, 0.3);
  for (int64_t b = 0; b < 2; ++b)
    p.mask[b * 140] = 0.5f;
  check(p);
  p.causal = true;
  check(p);
}

TEST(AttentionKernel, HeadMaskBroadcastOverBatch) {
  // [1, H, Nq, Nk].
  Problem p = shape({2, 3}, 33, 150, 16, 16, 64, false);
  p.maskDims = {1, 3, 33, 150};
  fill(p, 10, 0.1);
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t i = 0; i < 33; ++i)
      p.mask[(h * 33 + i) * 150] = 0.0f;
  check(p);
}

TEST(AttentionKernel, FullMaskCausal) {
  Problem p = shape({2, 2}, 70, 130, 64, 64, 64, true);
  p.maskDims = {2, 2, 70, 130};
  fill(p, 11);
  check(p);
}

TEST(AttentionKernel, MaskBroadcastOverRowsOrColumns) {
  Problem p = shape({2, 3}, 30, 90, 17, 5, 7, false);
  p.maskDims = {2, 3, 1, 90};
  fill(p, 12);
  check(p);
  p.maskDims = {1, 3, 30, 1};
  fill(p, 13);
  check(p);
}

TEST(AttentionKernel, FullyMaskedRowIsNaN) {
  Problem p = shape({2, 2}, 20, 40, 17, 9, 7, false);
  p.maskDims = {2, 2, 20, 40};
  fill(p, 14);
  // Row 5 of entry (1, 0) and row 19 of entry (0, 1): all -inf.
  for (int64_t j = 0; j < 40; ++j) {
    p.mask[((1 * 2 + 0) * 20 + 5) * 40 + j] = -INFINITY;
    p.mask[((0 * 2 + 1) * 20 + 19) * 40 + j] = -INFINITY;
  }
  check(p, /*gradients=*/false);
  Outputs got = runForward(kBuilt, p);
  EXPECT_TRUE(std::isnan(got.lse[2 * 20 + 5]));
  EXPECT_TRUE(std::isnan(got.out[(2 * 20 + 5) * 9]));
  EXPECT_FALSE(std::isnan(got.lse[2 * 20 + 4]));
}

// The part [begin, end) of a vector, for comparing some rows only.
template <typename T>
std::vector<T> part(const std::vector<T> &x, size_t begin, size_t end) {
  return std::vector<T>(x.begin() + begin, x.begin() + end);
}

TEST(AttentionKernel, LowestFloatMask) {
  // The key-padding mask that PyTorch's exporter and transformers write: 0
  // on kept keys and the lowest float, not -inf, on the others. Entry 0
  // keeps 60 of 150 keys; entry 1 masks them all, and its rows are the
  // softmax of equal scores, the mean of v (in the kernel's base-2 scores
  // the mask times log2(e) would overflow to -inf and make them NaN).
  Problem p = shape({2, 3}, 45, 150, 17, 20, 7, false);
  p.maskDims = {2, 1, 1, 150};
  fill(p, 16);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 150; ++j)
      p.mask[b * 150 + j] = b == 0 && j % 5 < 2 ? 0.0f : -FLT_MAX;
  Results want = reference(p, /*gradients=*/true);
  const size_t rows = 3 * 45; // entry 0's rows: 3 heads of 45 queries
  for (const Kernels *kern : {&kBuilt, &kAvx2, &kPortable}) {
    SCOPED_TRACE(kern->name);
    Outputs got = runForward(*kern, p);
    expectClose(got.out, want.out, 1e-5, "out");
    expectClose(part(got.lse, 0, rows), part(want.lse, 0, rows), 1e-5, "lse");
    // A row masked entirely: the clamped mask's lse (Attention.c).
    for (size_t r = rows; r < 2 * rows; ++r)
      EXPECT_TRUE(std::isfinite(got.lse[r]) && got.lse[r] < -2e38f)
          << "lse[" << r << "] = " << got.lse[r];
    // Gradients where some key is kept (a row masked entirely gets none).
    runBackward(*kern, p, got);
    expectClose(part(got.dq, 0, rows * 17), part(want.dq, 0, rows * 17), 1e-5,
                "dq");
    expectClose(part(got.dk, 0, 3 * 150 * 17), part(want.dk, 0, 3 * 150 * 17),
                1e-5, "dk");
    expectClose(part(got.dv, 0, 3 * 150 * 20), part(want.dv, 0, 3 * 150 * 20),
                1e-5, "dv");
  }
  // A mask per query and key with one row of entry (1, 1) all lowest
  // floats, the others in [-1, 1]: the per-row mask reads.
  p.maskDims = {2, 3, 45, 150};
  fill(p, 17);
  for (int64_t j = 0; j < 150; ++j)
    p.mask[((1 * 3 + 1) * 45 + 7) * 150 + j] = -FLT_MAX;
  want = reference(p, /*gradients=*/false);
  for (const Kernels *kern : {&kBuilt, &kAvx2, &kPortable}) {
    SCOPED_TRACE(kern->name);
    expectClose(runForward(*kern, p).out, want.out, 1e-5, "out");
  }
}

TEST(AttentionKernel, LargeScoresRescale) {
  // Scale 10, and keys growing along the sequence, so that later key
  // blocks raise the rows' maxima again and again.
  Problem p = shape({2}, 150, 300, 17, 17, 64, false);
  fill(p, 15);
  p.scale = 10.0;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 300; ++j)
      for (int64_t c = 0; c < 17; ++c)
        p.k[(b * 300 + j) * 17 + c] *= 0.2f + j / 300.0f;
  // Scores up to about 100: their f32 rounding is some 1e-5 absolute,
  // which exp turns into as much relative error.
  check(p, true, 2e-5);
  p.causal = true;
  check(p, true, 2e-5);
}

TEST(AttentionKernel, NaNScoresPropagate) {
  // Key 150 (in the second key block) has a NaN: one NaN score in every
  // row, among finite ones, which the softmax must not pass over. Query
  // row 70 (of the second 64-row sub-tile, beside finite rows in the same
  // vectors) has one too: all of its scores are NaN.
  Problem p = shape({1}, 100, 300, 64, 64, 100, false);
  fill(p, 18);
  Problem clean = p;
  p.k[150 * 64 + 5] = NAN;
  Problem rowNaN = clean;
  rowNaN.q[70 * 64 + 5] = NAN;
  for (const Kernels *kern : {&kBuilt, &kAvx2, &kPortable}) {
    SCOPED_TRACE(kern->name);
    Outputs want = runForward(*kern, clean);
    Outputs got = runForward(*kern, p);
    for (float x : got.out)
      EXPECT_TRUE(std::isnan(x));
    for (float x : got.lse)
      EXPECT_TRUE(std::isnan(x));
    // The backward with the clean forward's results: the NaN reaches dq
    // through every row's dS, dk and dv only in row 150.
    got.out = want.out;
    got.lse = want.lse;
    runBackward(*kern, p, got);
    for (int64_t i = 0; i < 100; ++i)
      EXPECT_TRUE(std::isnan(got.dq[i * 64])) << "dq row " << i;
    for (int64_t j = 0; j < 300; ++j) {
      EXPECT_EQ(std::isnan(got.dk[j * 64]), j == 150) << "dk row " << j;
      EXPECT_EQ(std::isnan(got.dv[j * 64]), j == 150) << "dv row " << j;
    }

    got = runForward(*kern, rowNaN);
    for (int64_t i = 0; i < 100; ++i) {
      EXPECT_EQ(std::isnan(got.lse[i]), i == 70) << "row " << i;
      for (int64_t c = 0; c < 64; ++c)
        if (i == 70)
          EXPECT_TRUE(std::isnan(got.out[i * 64 + c]));
        else
          EXPECT_EQ(got.out[i * 64 + c], want.out[i * 64 + c]);
    }
  }
}

TEST(AttentionKernel, NoKeys) {
  Problem p = shape({2}, 6, 0, 5, 4, 4, false);
  fill(p, 16);
  for (const Kernels *kern : {&kBuilt, &kAvx2, &kPortable}) {
    Outputs got = runForward(*kern, p);
    for (float x : got.out)
      EXPECT_TRUE(std::isnan(x));
    for (float x : got.lse)
      EXPECT_TRUE(std::isnan(x));
    runBackward(*kern, p, got);
    for (float x : got.dq)
      EXPECT_EQ(x, 0.0f); // an empty sum over keys
  }
}

TEST(AttentionKernel, ConcurrentCalls) {
  // The compiled code calls the kernels from several threads at once.
  Problem p = shape({4}, 96, 200, 64, 64, 32, true);
  fill(p, 17);
  Outputs serial = runForward(kBuilt, p);
  std::vector<int64_t> desc = p.descriptor();
  std::vector<float> out(serial.out.size()), lse(serial.lse.size());
  std::vector<std::thread> threads;
  for (int64_t b = 0; b < 4; ++b)
    threads.emplace_back([&, b] {
      for (int64_t t = 0; t < 3; ++t)
        kiln_attention_f32_forward(desc.data(), p.q.data(), p.k.data(),
                                   p.v.data(), nullptr, out.data(),
                                   lse.data(), b, t);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(out, serial.out);
  EXPECT_EQ(lse, serial.lse);
}

// The reference's gradient formulas against central differences of the
// reference forward, for L = sum(out * dout).
TEST(AttentionKernel, ReferenceGradientsMatchFiniteDifferences) {
  for (bool causal : {false, true}) {
    Problem p = shape({2}, 4, 5, 3, 2, 2, causal);
    p.maskDims = {1, 4, 5};
    fill(p, 18);
    Results r = reference(p, true);
    auto loss = [&]() {
      Results f = reference(p, false);
      double l = 0.0;
      for (size_t i = 0; i < f.out.size(); ++i)
        l += f.out[i] * p.dout[i];
      return l;
    };
    // The inputs are float, the differences are taken on them in float
    // steps of 2^-10 (exact), with the loss in double.
    const float h = 1.0f / 1024;
    auto probe = [&](std::vector<float> &x, const std::vector<double> &g,
                     const char *what) {
      for (size_t i = 0; i < x.size(); ++i) {
        float saved = x[i];
        x[i] = saved + h;
        double up = loss();
        x[i] = saved - h;
        double down = loss();
        x[i] = saved;
        double numeric = (up - down) / (2.0 * h);
        EXPECT_NEAR(numeric, g[i], 1e-5 + 1e-5 * std::fabs(g[i]))
            << what << "[" << i << "] causal " << causal;
      }
    };
    probe(p.q, r.dq, "dq");
    probe(p.k, r.dk, "dk");
    probe(p.v, r.dv, "dv");
  }
}

} // namespace
