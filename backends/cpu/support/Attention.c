/*===- Attention.c - f32 attention kernels for the CPU (FlashAttention-2) --===*\
 *
 * Linked (as a static, position-independent archive) into the modules whose
 * code calls kiln_attention_f32_forward / kiln_attention_f32_backward, which
 * kiln-cpu-attention-calls emits for f32 kiln.attention and
 * kiln.attention_grad. AttentionAbi.h is the calling contract. Plain C on
 * libc and libm only.
 *
 * Forward (one call: one batch entry, one tile of query rows). The scores
 * S = scale * q k^T + mask are never held for all keys: the keys are taken
 * a block of kForwardKeys at a time, and every query row keeps a running
 * maximum m, a running sum l of exp(S - m) and an unnormalized output
 * accumulator O (the "online softmax"). When a block raises a row's maximum
 * the row's l and O are rescaled by exp(m_old - m_new) first. At the end
 * out = O / l and lse = m + log(l). The scores are kept in base 2 (q is
 * multiplied by scale * log2(e) as it is packed, the mask by log2(e)), so
 * that the exps are 2^x, which take fewer operations than e^x; lse is
 * converted back. The working set (the tile's q, a block of k and v, the
 * block's scores and the tile's accumulators) stays in the L2 cache
 * whatever the sequence lengths are, and the two products per block
 * (q k^T and P v) run at the speed of a register-blocked matrix product.
 * The rows are taken in sub-tiles of kQueryRows, up to kSubTiles of which
 * take each key block in turn: k and v of a long sequence exceed L2, and
 * each pass over them from L3 then serves four sub-tiles instead of one.
 *
 * Backward (one call: one batch entry), FlashAttention-2's order: the outer
 * loop runs over key blocks (kKeyGroup at a time, each query block taking
 * them in turn), which own their dK and dV accumulators; the inner loop
 * over query blocks recomputes P = exp(S - lse) from q, k and the saved
 * lse, and with Delta_i = sum_c dout_ic * out_ic
 *   dV += P^T dout,  dP = dout v^T,  dS = P * (dP - Delta),
 *   dK += scale * dS^T q,  dQ += scale * dS k  (dQ in a scratch buffer).
 * No Nq x Nk buffer exists at any time.
 *
 * With causal attention the key blocks (forward) and query blocks
 * (backward) that lie entirely above the diagonal are skipped rather than
 * masked, which halves the work of long sequences; the blocks that straddle
 * it are masked element by element.
 *
 * All the products go through one micro-kernel: C[6 x 64] (+)= A B with A
 * read a scalar at a time (broadcast, any row and column stride, so that
 * P^T and dS^T need no transposed copies) and B a row of 16-float vectors
 * at a time. Its 24 accumulators live in registers; per step of the
 * reduction it loads 4 vectors of B and broadcasts 6 scalars of A for 24
 * fused multiply-adds. B must be contiguous rows of a multiple of 16
 * floats: the forward computes the scores transposed, st = k (c q)^T, from
 * (c q)^T packed once per 64 query rows (k is read in place), so that a
 * vector holds 16 query rows and the online softmax needs no horizontal
 * reductions, and accumulates the output transposed too, o^T += v^T P^T,
 * with st as the B operand and v read a column at a time in place (which
 * also makes the rescaling of o by exp(m_old - m_new) a vector product);
 * the backward packs K^T and V^T per key block; q, k and dout are copied
 * into rows padded to 16 floats only where their width is not already a
 * multiple of 16. The softmax is vectorized too, with its own exp
 * (Cephes' range reduction and polynomials, about 1 ulp where they are
 * used; below the smallest normal float they flush to 0, so that
 * exp(-inf) = 0, and a NaN stays NaN) instead of calls of expf; the
 * AVX-512 instance scales by 2^n with vscalefps.
 *
 * The kernels are written once with GCC's generic vector types (16 floats)
 * and compiled three times, the instance chosen at run time: for AVX-512
 * (6 x 64 tiles); for AVX2 with FMA (6 x 16 tiles), where a 16-float
 * vector is two registers and GCC, which keeps such vectors in memory and
 * compares them a lane at a time, gets the micro-kernel's tile and the
 * exps written on 8-float halves; and for the target's baseline ISA, which
 * any x86-64 (SSE2) and any other architecture can run (smaller tiles;
 * on x86-64 about a tenth of the AVX-512 speed: that instance is there for
 * correctness on any CPU). Defining KILN_ATTENTION_PORTABLE_ONLY leaves
 * the AVX-512 and AVX2 instances out, KILN_ATTENTION_NO_AVX512 the
 * AVX-512 one (the unit tests build both, to test the other instances on
 * machines that have AVX-512).
 *
 * A fully masked row (all scores -inf, including Nk = 0) gets NaN in out and
 * lse, as softmax's 0 / 0; in the backward its NaN lse makes its P NaN, and
 * the NaN reaches the gradients as the formulas say.
 *
 * The kernels are serial, reentrant and keep no state between calls; each
 * call allocates its scratch (one malloc). The symbols are hidden: every
 * module gets its own copy, and a module unloaded while another still runs
 * must not take the other's code along.
 *
\*===----------------------------------------------------------------------===*/

#include "AttentionAbi.h"
#include "KernelMacros.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The AVX-512 and AVX2 instances (x86-64 only; see above for the macros
 * that leave them out). */
#if defined(__x86_64__) && !defined(KILN_ATTENTION_PORTABLE_ONLY)
#define KILN_ATTENTION_AVX2 1
#define KILN_AVX2_TARGET __attribute__((target("avx2,fma")))
#include <immintrin.h>
#ifndef KILN_ATTENTION_NO_AVX512
#define KILN_ATTENTION_AVX512 1
#define KILN_AVX512_TARGET                                                     \
  __attribute__((target("avx512f,avx512dq,avx512vl,fma")))
#endif
#endif

/* Keys per block: kForwardKeys the forward's online-softmax step,
 * kKeyBlock the backward's outer loop. kQueryRows: the forward's sub-tile
 * of a (possibly large) query tile; kQueryBlock: the backward's inner
 * loop. With D = Dv = 64 the forward's transposed scores of a block are
 * 16 KiB, which o^T += v^T P^T reads for each 6 columns of v: they stay in
 * L1 beside those columns (with 128 keys they did not quite, 3% slower);
 * the backward's K^T and V^T blocks are 64 KiB and its scores and dP
 * 96 KiB: every block's operands stay in L2. kDiagonalRows: a causal
 * backward's query rows on a key block's diagonal go in chunks of this
 * many, each product only as wide as the keys its last row sees (of the
 * masked pairs computed there, a quarter are left). kScoreStride: the
 * floats from one row of the backward's scores and dP to the next. Not
 * kKeyBlock: the products dS^T q and P^T dout read a column of them at a
 * time, and rows 512 bytes apart would all fall into 8 of the L1 cache's
 * 64 sets (a third slower); 576 bytes apart they spread over all. */
#define kLog2e 1.44269504088896341f
#define kLn2 0.693147180559945309

enum { kForwardKeys = 64, kKeyBlock = 128, kQueryBlock = 96, kQueryRows = 64,
       kSubTiles = 4, kKeyGroup = 2, kLanes = 16, kDiagonalRows = 32,
       kScoreStride = kKeyBlock + 16 };

/* Bytes of k and v of one batch entry above which the forward asks for
 * the next key block ahead: a common L2's size. Below it they stay in L2
 * from one group of sub-tiles to the next, and the requests only cost
 * (1-2% at N = 1024 and 4096, D = 64); above it they come from L3 and the
 * requests save 2-3% (N = 16384). */
#define kCacheBytes ((int64_t)2 << 20)

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));

static int64_t roundUp16(int64_t n) { return (n + 15) & ~(int64_t)15; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/*===----------------------------------------------------------------------===*
 * Vector helpers (always inlined, so that they take the ISA of the kernel
 * that uses them).
 *===----------------------------------------------------------------------===*/

KILN_INLINE v16f vload(const float *p) {
  v16f v;
  memcpy(&v, p, sizeof v);
  return v;
}

KILN_INLINE void vstore(float *p, v16f v) { memcpy(p, &v, sizeof v); }

/* A shuffle of lane 0: compilers make it a broadcast (from memory where x
 * is loaded). Not 0 + x, which must turn -0 into +0 and so costs an add,
 * nor a lane-by-lane initializer, which GCC builds lane by lane. */
KILN_INLINE v16f vsplat(float x) {
  v16f v = {x};
  return __builtin_shufflevector(v, v, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                 0, 0, 0);
}

/* mask ? a : b, with mask lanes all ones or all zeros (C has no vector ?:). */
KILN_INLINE v16f vselect(v16i mask, v16f a, v16f b) {
  return (v16f)(((v16i)a & mask) | ((v16i)b & ~mask));
}

/* A mask entry as the forward's scores take it: finite entries beyond
 * +-kMaskLimit (just under FLT_MAX ln 2) clamped to it, infinities and NaN
 * as they are. Those scores are in base 2, the mask times log2(e), where
 * the lowest float that PyTorch and transformers put on masked keys would
 * overflow to -inf, and a row masked by it entirely would give NaN instead
 * of the softmax of equal scores. Such a row's lse is then about -2.35e38
 * rather than -FLT_MAX; any other row's softmax and lse are unchanged (its
 * masked keys' weights are 0 either way). The backward reads the mask as
 * it is: a row masked entirely by a finite mask gets no gradient (the
 * difference of two scores near FLT_MAX, at f32's 2e31 apart, says
 * nothing about its P). */
#define kMaskLimit 2.35e38f

KILN_INLINE float clampedMask(float x) {
  if (x < -kMaskLimit && x >= -FLT_MAX)
    return -kMaskLimit;
  if (x > kMaskLimit && x <= FLT_MAX)
    return kMaskLimit;
  return x;
}

/* Lanes [0, n) of the vector, n in any range: the sign of iota - n spread
 * over the lane, not iota < n, which GCC compares a lane at a time where
 * the ISA has no 16-lane vectors (AVX2). */
KILN_INLINE v16i vfirst(int64_t n) {
  const v16i iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  int32_t c = (int32_t)(n < 0 ? 0 : n > kLanes ? kLanes : n);
  return (iota - c) >> 31;
}

KILN_INLINE v16f vmax(v16f a, v16f b) { return vselect(a > b, a, b); }

/* exp(r) for |r| <= ln2 / 2 and 2^f for |f| <= 1/2: Cephes' polynomials
 * (expf's degree 7, exp2f's degree 6), shared by both instances' exps. */
KILN_INLINE v16f vexpPoly(v16f r) {
  v16f p = vsplat(1.9875691500E-4f);
  p = p * r + vsplat(1.3981999507E-3f);
  p = p * r + vsplat(8.3334519073E-3f);
  p = p * r + vsplat(4.1665795894E-2f);
  p = p * r + vsplat(1.6666665459E-1f);
  p = p * r + vsplat(5.0000001201E-1f);
  return p * (r * r) + r + vsplat(1.0f);
}

KILN_INLINE v16f vexp2Poly(v16f f) {
  v16f p = vsplat(1.535336188319500E-4f);
  p = p * f + vsplat(1.339887440266574E-3f);
  p = p * f + vsplat(9.618437357674640E-3f);
  p = p * f + vsplat(5.550332471162809E-2f);
  p = p * f + vsplat(2.402264791363012E-1f);
  p = p * f + vsplat(6.931472028550421E-1f);
  return p * f + vsplat(1.0f);
}

/* x - n ln2, with ln2 in two parts (the first exact in 9 bits), so that
 * the reduced argument keeps x's accuracy. */
KILN_INLINE v16f vreduceLn2(v16f x, v16f n) {
  v16f r = x - n * vsplat(0.693359375f);
  return r - n * vsplat(-2.12194440e-4f);
}

/* exp(x) for x <= 0 (Cephes expf): x = n ln2 + r, |r| <= ln2 / 2, exp(r)
 * by a degree 7 polynomial, 2^n put into the exponent field. Results below
 * the smallest normal float (x < -87.34, -inf included) are 0, chosen by
 * the last select whatever the arithmetic made of them; the comparisons
 * are false for NaN, which runs through as NaN. x above 88 (never the case
 * for x = S - max) is clamped rather than left to overflow the exponent. */
KILN_INLINE v16f vexp(v16f x) {
  const v16f magic = vsplat(12582912.0f); /* 1.5 * 2^23: rounds to integer */
  v16f xc = vselect(x > vsplat(88.0f), vsplat(88.0f), x);
  v16f t = xc * vsplat(1.44269504088896341f) + magic;
  v16f n = t - magic;
  v16u ni = (v16u)t - (v16u)magic;
  v16f y = vexpPoly(vreduceLn2(xc, n));
  y = y * (v16f)((ni + 127) << 23);
  return vselect(x < vsplat(-87.33654475f), vsplat(0.0f), y);
}

/* 2^x for x <= 0, the forward's exp (its scores are in base 2): x = n + f,
 * |f| <= 1/2, 2^f by Cephes' exp2f polynomial, 2^n put into the exponent
 * field. Results below 2^-126 (-inf included) are 0, chosen by the last
 * select; NaN runs through as NaN. Cheaper than vexp by the two-constant
 * reduction and the clamp (x is never above 0 here). */
KILN_INLINE v16f vexp2(v16f x) {
  const v16f magic = vsplat(12582912.0f); /* 1.5 * 2^23: rounds to integer */
  v16f t = x + magic;
  v16f f = x - (t - magic);
  v16f y = vexp2Poly(f);
  /* (n + 127) << 23, n being t's low mantissa bits. */
  const v16u bias = (v16u)magic - 127;
  y = y * (v16f)(((v16u)t - bias) << 23);
  return vselect(x < vsplat(-126.0f), vsplat(0.0f), y);
}

/* The softmax bodies take their exps, the forward its max, and their
 * loops over a block's scores (dsRow, exp2Sum) as parameters: the
 * AVX-512 and AVX2 instances pass the functions below, the baseline the
 * generic ones. The pointer is a constant once the body is inlined, and
 * the call is inlined too. */
typedef v16f (*VectorFn)(v16f);
typedef v16f (*VectorFn2)(v16f, v16f);

/* One row of the backward: p = exp(s * scale - lse) into s[0, n) and
 * p * (dp - delta) into dp[0, n), n a multiple of 16. An instance's own
 * for AVX2, as below. */
typedef void (*DsRowFn)(float *s, float *dp, int64_t n, float scale, float lse,
                        float delta);

KILN_INLINE void dsRowWith(VectorFn expFn, float *s, float *dp, int64_t n,
                           float scale, float lse, float delta) {
  const v16f vs = vsplat(scale), vl = vsplat(lse), vd = vsplat(delta);
  for (int64_t c = 0; c < n; c += kLanes) {
    v16f p = expFn(vload(s + c) * vs - vl);
    vstore(s + c, p);
    vstore(dp + c, p * (vload(dp + c) - vd));
  }
}

KILN_INLINE void dsRow(float *s, float *dp, int64_t n, float scale, float lse,
                       float delta) {
  dsRowWith(vexp, s, dp, n, scale, lse, delta);
}

/* The forward's P: s[j * ld] = 2^(s[j * ld] - sub) for j < n, returning
 * the sum of the n vectors (in the order of j). An instance's own where
 * the generic vectors live in memory (AVX2), so that the sums stay in
 * registers. */
typedef v16f (*ExpSumFn)(float *s, int64_t ld, int64_t n, v16f sub);

KILN_INLINE v16f exp2SumWith(VectorFn exp2Fn, float *s, int64_t ld, int64_t n,
                             v16f sub) {
  v16f sum = vsplat(0.0f);
  for (int64_t j = 0; j < n; ++j) {
    v16f p = exp2Fn(vload(s + j * ld) - sub);
    sum += p;
    vstore(s + j * ld, p);
  }
  return sum;
}

KILN_INLINE v16f exp2Sum(float *s, int64_t ld, int64_t n, v16f sub) {
  return exp2SumWith(vexp2, s, ld, n, sub);
}

#ifdef KILN_ATTENTION_AVX2
/* The same functions for AVX2, on the two 8-float halves of x. GCC lowers
 * the generic forms' comparisons of 16-float vectors, which have no AVX2
 * register, a lane at a time. n = round(t) by vroundps, 2^n put into the
 * exponent field as above; the same polynomials, so the same results to
 * an ulp. */

/* p * 2^n (n integral and in the exponent's range), and 0 where x < low
 * (false for NaN, which runs through). */
KILN_AVX2_TARGET KILN_INLINE __m256 vscaleHalf(__m256 p, __m256 n, __m256 x,
                                               float low) {
  __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(low), _CMP_LT_OQ), y);
}

KILN_AVX2_TARGET KILN_INLINE __m256 vexp2Half(__m256 x) {
  __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 f = _mm256_sub_ps(x, n);
  __m256 p = _mm256_set1_ps(1.535336188319500E-4f);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.339887440266574E-3f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.618437357674640E-3f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550332471162809E-2f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402264791363012E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931472028550421E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
  /* 0 below -126, -inf included. */
  return vscaleHalf(p, n, x, -126.0f);
}

KILN_AVX2_TARGET KILN_INLINE __m256 vexpHalf(__m256 x) {
  /* min(88, x) returns x where x is NaN. */
  __m256 xc = _mm256_min_ps(_mm256_set1_ps(88.0f), x);
  __m256 n =
      _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500E-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
  p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r),
                    _mm256_set1_ps(1.0f));
  return vscaleHalf(p, n, x, -87.33654475f);
}

/* A 16-float vector's two 8-float halves, and the vector they make. */
typedef struct Halves {
  __m256 lo, hi;
} Halves;

KILN_AVX2_TARGET KILN_INLINE Halves vsplitAvx2(v16f x) {
  float h[kLanes];
  memcpy(h, &x, sizeof h);
  return (Halves){_mm256_loadu_ps(h), _mm256_loadu_ps(h + 8)};
}

KILN_AVX2_TARGET KILN_INLINE v16f vjoinAvx2(__m256 lo, __m256 hi) {
  float h[kLanes];
  _mm256_storeu_ps(h, lo);
  _mm256_storeu_ps(h + 8, hi);
  return vload(h);
}

KILN_AVX2_TARGET KILN_INLINE v16f vexp2Avx2(v16f x) {
  Halves h = vsplitAvx2(x);
  return vjoinAvx2(vexp2Half(h.lo), vexp2Half(h.hi));
}

KILN_AVX2_TARGET KILN_INLINE v16f exp2SumAvx2(float *s, int64_t ld, int64_t n,
                                              v16f sub) {
  Halves h = vsplitAvx2(sub);
  __m256 sub0 = h.lo, sub1 = h.hi;
  __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
  for (int64_t j = 0; j < n; ++j) {
    float *sj = s + j * ld;
    __m256 p0 = vexp2Half(_mm256_sub_ps(_mm256_loadu_ps(sj), sub0));
    __m256 p1 = vexp2Half(_mm256_sub_ps(_mm256_loadu_ps(sj + 8), sub1));
    sum0 = _mm256_add_ps(sum0, p0);
    sum1 = _mm256_add_ps(sum1, p1);
    _mm256_storeu_ps(sj, p0);
    _mm256_storeu_ps(sj + 8, p1);
  }
  return vjoinAvx2(sum0, sum1);
}

KILN_AVX2_TARGET KILN_INLINE void
dsRowAvx2(float *s, float *dp, int64_t n, float scale, float lse, float delta) {
  const __m256 vs = _mm256_set1_ps(scale), vl = _mm256_set1_ps(lse);
  const __m256 vd = _mm256_set1_ps(delta);
  for (int64_t c = 0; c < n; c += 8) {
    __m256 p = vexpHalf(_mm256_fmsub_ps(_mm256_loadu_ps(s + c), vs, vl));
    _mm256_storeu_ps(s + c, p);
    _mm256_storeu_ps(
        dp + c, _mm256_mul_ps(p, _mm256_sub_ps(_mm256_loadu_ps(dp + c), vd)));
  }
}

/* vmax: maxps is a > b ? a : b too, NaN lanes included. */
KILN_AVX2_TARGET KILN_INLINE v16f vmaxAvx2(v16f a, v16f b) {
  Halves ha = vsplitAvx2(a), hb = vsplitAvx2(b);
  return vjoinAvx2(_mm256_max_ps(ha.lo, hb.lo), _mm256_max_ps(ha.hi, hb.hi));
}
#endif

#ifdef KILN_ATTENTION_AVX512
/* The same functions with AVX-512's exponent instructions: n = round(t) by
 * vrndscaleps, the reduced argument by vreduceps (2^x) or two FMAs (e^x),
 * and p * 2^n by vscalefps instead of integer operations on the exponent
 * field. The same polynomials, so the same results to an ulp; results
 * below 2^-125 are 0 as above (vscalefps is not even evaluated for them,
 * so that no denormal is made), and NaN stays NaN. */
KILN_AVX512_TARGET KILN_INLINE v16f vexp2Avx512(v16f x) {
  __m512 xv = (__m512)x;
  __m512 n = _mm512_roundscale_ps(xv, _MM_FROUND_TO_NEAREST_INT);
  /* x - round(x), and 0 for x = -inf (whose lane is masked below). */
  v16f f = (v16f)_mm512_reduce_ps(xv, _MM_FROUND_TO_NEAREST_INT);
  v16f y = vexp2Poly(f);
  /* Not below -125 (true for NaN). */
  __mmask16 keep =
      _mm512_cmp_ps_mask(xv, _mm512_set1_ps(-125.0f), _CMP_NLT_UQ);
  return (v16f)_mm512_maskz_scalef_ps(keep, (__m512)y, n);
}

KILN_AVX512_TARGET KILN_INLINE v16f vexpAvx512(v16f x) {
  /* min(88, x) returns x where x is NaN. */
  __m512 xv = _mm512_min_ps(_mm512_set1_ps(88.0f), (__m512)x);
  __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(xv, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT);
  v16f y = vexpPoly(vreduceLn2((v16f)xv, (v16f)n));
  __mmask16 keep =
      _mm512_cmp_ps_mask(xv, _mm512_set1_ps(-86.6f), _CMP_NLT_UQ);
  return (v16f)_mm512_maskz_scalef_ps(keep, (__m512)y, n);
}
#endif

/*===----------------------------------------------------------------------===*
 * The matrix product: C[m x n] = (or +=) A[m x k] B[k x n], n a multiple
 * of 16, A(i, p) = a[i * rs + p * ks], B row p at b + p * ldb. Two column
 * operations ride along where the forward needs them, in the tiles'
 * prologue and epilogue rather than in passes of their own: with cs,
 * accumulate into C with column j scaled by cs[j] (the forward's rescaling
 * of o^T when a block raises the rows' maxima), and with cm, cm[j] =
 * max(cm[j], max_i C(i, j)) (the block's maxima of the scores).
 *===----------------------------------------------------------------------===*/

/* One tile of mr rows by nv vectors; mr and nv are constants after
 * inlining, so the accumulators become registers. */
KILN_INLINE void microTile(const int mr, const int nv, int64_t k,
                           const float *a, int64_t rs, int64_t ks,
                           const float *b, int64_t ldb, float *c, int64_t ldc,
                           int accumulate, const float *cs, float *cm) {
  v16f acc[6][4];
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nv; ++j)
      acc[i][j] = accumulate ? vload(c + i * ldc + j * kLanes) : vsplat(0.0f);
  if (cs)
    for (int j = 0; j < nv; ++j) {
      v16f scale = vload(cs + j * kLanes);
      for (int i = 0; i < mr; ++i)
        acc[i][j] *= scale;
    }
  for (int64_t p = 0; p < k; ++p) {
    const float *bp = b + p * ldb;
    const float *ap = a + p * ks;
    v16f bv[4];
    for (int j = 0; j < nv; ++j)
      bv[j] = vload(bp + j * kLanes);
    for (int i = 0; i < mr; ++i) {
      v16f av = vsplat(ap[i * rs]);
      for (int j = 0; j < nv; ++j)
        acc[i][j] += av * bv[j];
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nv; ++j)
      vstore(c + i * ldc + j * kLanes, acc[i][j]);
  if (cm)
    for (int j = 0; j < nv; ++j) {
      /* As the softmax's maxima: a NaN is passed over. */
      v16f mx = vload(cm + j * kLanes);
      for (int i = 0; i < mr; ++i)
        mx = vmax(acc[i][j], mx);
      vstore(cm + j * kLanes, mx);
    }
}

/* A tile's function: microTile, or an instance's own where the generic
 * vectors do not fit its registers. Like VectorFn, a constant once the
 * callers are inlined. */
typedef void (*TileFn)(const int mr, const int nv, int64_t k, const float *a,
                       int64_t rs, int64_t ks, const float *b, int64_t ldb,
                       float *c, int64_t ldc, int accumulate, const float *cs,
                       float *cm);

#ifdef KILN_ATTENTION_AVX2
/* microTile for AVX2, nv <= 2 (mr * nv <= 6 keeps the accumulators in
 * registers). GCC keeps a 16-float generic vector, which no AVX2 register
 * holds, in memory: with microTile each multiply-add would load and store
 * its accumulator (the AVX2 instance ran slower than the baseline). The
 * same operations on 8-float halves, so the same results. */
KILN_AVX2_TARGET KILN_INLINE void
microTileAvx2(const int mr, const int nv, int64_t k, const float *a, int64_t rs,
              int64_t ks, const float *b, int64_t ldb, float *c, int64_t ldc,
              int accumulate, const float *cs, float *cm) {
  const int nh = 2 * nv;
  __m256 acc[6][4];
  for (int i = 0; i < mr; ++i)
    for (int h = 0; h < nh; ++h)
      acc[i][h] = accumulate ? _mm256_loadu_ps(c + i * ldc + h * 8)
                             : _mm256_setzero_ps();
  if (cs)
    for (int h = 0; h < nh; ++h) {
      __m256 scale = _mm256_loadu_ps(cs + h * 8);
      for (int i = 0; i < mr; ++i)
        acc[i][h] = _mm256_mul_ps(acc[i][h], scale);
    }
  for (int64_t p = 0; p < k; ++p) {
    const float *bp = b + p * ldb;
    const float *ap = a + p * ks;
    __m256 bv[4];
    for (int h = 0; h < nh; ++h)
      bv[h] = _mm256_loadu_ps(bp + h * 8);
    for (int i = 0; i < mr; ++i) {
      __m256 av = _mm256_broadcast_ss(ap + i * rs);
      for (int h = 0; h < nh; ++h)
        acc[i][h] = _mm256_fmadd_ps(av, bv[h], acc[i][h]);
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int h = 0; h < nh; ++h)
      _mm256_storeu_ps(c + i * ldc + h * 8, acc[i][h]);
  if (cm)
    for (int h = 0; h < nh; ++h) {
      /* maxps returns its second operand where either is NaN: a NaN
       * score is passed over, as by vmax. */
      __m256 mx = _mm256_loadu_ps(cm + h * 8);
      for (int i = 0; i < mr; ++i)
        mx = _mm256_max_ps(acc[i][h], mx);
      _mm256_storeu_ps(cm + h * 8, mx);
    }
}
#endif

/* All m rows against one panel of nv vectors (B's panel is reused from L1
 * by every row tile), in tiles of up to mr rows. */
KILN_INLINE void gemmPanel(TileFn tile, const int mr, const int nv, int64_t m,
                           int64_t k, const float *a, int64_t rs, int64_t ks,
                           const float *b, int64_t ldb, float *c, int64_t ldc,
                           int accumulate, const float *cs, float *cm) {
  int64_t i = 0;
  for (; i + mr <= m; i += mr)
    tile(mr, nv, k, a + i * rs, rs, ks, b, ldb, c + i * ldc, ldc, accumulate,
         cs, cm);
  const float *ai = a + i * rs;
  float *ci = c + i * ldc;
  /* m - i < mr: the tiles from mr rows up are not even instantiated. */
  switch (m - i) {
  case 5:
    if (mr > 5)
      tile(5, nv, k, ai, rs, ks, b, ldb, ci, ldc, accumulate, cs, cm);
    break;
  case 4:
    if (mr > 4)
      tile(4, nv, k, ai, rs, ks, b, ldb, ci, ldc, accumulate, cs, cm);
    break;
  case 3:
    if (mr > 3)
      tile(3, nv, k, ai, rs, ks, b, ldb, ci, ldc, accumulate, cs, cm);
    break;
  case 2:
    if (mr > 2)
      tile(2, nv, k, ai, rs, ks, b, ldb, ci, ldc, accumulate, cs, cm);
    break;
  case 1:
    if (mr > 1)
      tile(1, nv, k, ai, rs, ks, b, ldb, ci, ldc, accumulate, cs, cm);
    break;
  default:
    break;
  }
}

/* Tiles of up to mr rows by nv vectors (mr <= 6, nv <= 4): as many
 * accumulators as the ISA has vector registers to spare. */
KILN_INLINE void gemmBody(TileFn tile, const int mr, const int nv, int64_t m,
                          int64_t n, int64_t k, const float *a, int64_t rs,
                          int64_t ks, const float *b, int64_t ldb, float *c,
                          int64_t ldc, int accumulate, const float *cs,
                          float *cm) {
  for (int64_t j = 0; j < n; j += nv * kLanes) {
    const float *bj = b + j;
    float *cj = c + j;
    const float *csj = cs ? cs + j : NULL;
    float *cmj = cm ? cm + j : NULL;
    int64_t left = (n - j) / kLanes;
    /* As above, only the panels of at most nv vectors are instantiated. */
    switch (left < nv ? left : nv) {
    case 1:
      gemmPanel(tile, mr, 1, m, k, a, rs, ks, bj, ldb, cj, ldc, accumulate, csj,
                cmj);
      break;
    case 2:
      if (nv >= 2)
        gemmPanel(tile, mr, 2, m, k, a, rs, ks, bj, ldb, cj, ldc, accumulate,
                  csj, cmj);
      break;
    case 3:
      if (nv >= 3)
        gemmPanel(tile, mr, 3, m, k, a, rs, ks, bj, ldb, cj, ldc, accumulate,
                  csj, cmj);
      break;
    default:
      if (nv >= 4)
        gemmPanel(tile, mr, 4, m, k, a, rs, ks, bj, ldb, cj, ldc, accumulate,
                  csj, cmj);
      break;
    }
  }
}

/*===----------------------------------------------------------------------===*
 * The softmax steps.
 *===----------------------------------------------------------------------===*/

/* Where the mask's entries of one row are (null: no mask). */
typedef struct MaskRows {
  const float *base; /* entry (first row, first column) of the block */
  int64_t rowStride, colStride;
} MaskRows;

/* Scores of one row of a block: s[0, np) = scale * s + mask, with columns
 * [valid, np) -inf (past the block or above the diagonal). */
KILN_INLINE void scoreRow(float *s, int64_t np, int64_t valid, float scale,
                          const float *mrow, int64_t mcs) {
  const v16f ninf = vsplat(-INFINITY);
  for (int64_t c = 0; c < np; c += kLanes) {
    v16f x = vload(s + c) * vsplat(scale);
    if (mrow) {
      if (mcs == 1 && c + kLanes <= valid) {
        x += vload(mrow + c);
      } else {
        float add[kLanes];
        for (int l = 0; l < kLanes; ++l)
          add[l] = c + l < valid ? mrow[(c + l) * mcs] : 0.0f;
        x += vload(add);
      }
    }
    if (c + kLanes > valid)
      x = vselect(vfirst(valid - c), x, ninf);
    vstore(s + c, x);
  }
}

/* One key block of the forward, on the transposed scores st [nc][ldst]
 * (key j's scores of query rows [0, rows) at st + j * ldst; ldst a multiple
 * of 16). Laid out so, a vector holds 16 query rows and the running
 * maxima and sums of the online softmax take only vertical operations. The
 * raw products k q^T become P = exp(S - m_new), m and l are brought up to
 * date, and alpha = exp(m_old - m_new) is left for the product that
 * rescales and updates o^T. blockMax: the products' maxima over the block
 * (the first product's column maxima), which are the scores' where no
 * mask or diagonal applies. */
KILN_INLINE void forwardSoftmaxBody(int64_t rows, int64_t row0, int64_t j0,
                                    int64_t nc, float *st, int64_t ldst,
                                    MaskRows mask, int causal,
                                    const float *blockMax, float *m, float *l,
                                    float *alpha, VectorFn exp2Fn,
                                    VectorFn2 maxFn, ExpSumFn expSumFn) {
  const v16f ninf = vsplat(-INFINITY);
  for (int64_t g = 0; g < ldst; g += kLanes) {
    const int64_t lanes = min64(kLanes, rows - g);
    const float *mg = mask.base ? mask.base + g * mask.rowStride : NULL;
    v16f mOld = vload(m + g), mNew = mOld;
    /* Past the diagonal (or without causality) and without a mask, the
     * products are the scores already (q was scaled when it was packed). */
    const int64_t diagonal = row0 + g - j0;
    if (!mg && (!causal || diagonal >= nc - 1)) {
      mNew = maxFn(vload(blockMax + g), mNew);
    } else {
      for (int64_t j = 0; j < nc; ++j) {
        float *sj = st + j * ldst + g;
        v16f x = vload(sj);
        if (mg) {
          const float *mj = mg + j * mask.colStride;
          if (mask.rowStride == 0) {
            x += vsplat(clampedMask(*mj)) * vsplat(kLog2e);
          } else {
            float add[kLanes];
            for (int r = 0; r < kLanes; ++r)
              add[r] = r < lanes ? clampedMask(mj[r * mask.rowStride]) : 0.0f;
            x += vload(add) * vsplat(kLog2e);
          }
        }
        /* Causal: key j0 + j is above the diagonal for the rows before it. */
        if (causal && j > diagonal)
          x = vselect(vfirst(j - diagonal), ninf, x);
        vstore(sj, x);
        mNew = maxFn(x, mNew);
      }
    }
    /* Rows without a finite score yet subtract the lowest float instead of
     * -inf (their exps are 0 either way; a max, not a comparison with
     * -inf, which GCC makes lane by lane for AVX2); a NaN score was passed
     * over by vmax, and makes its exp, hence l and the row's results, NaN. */
    v16f mSub = maxFn(mNew, vsplat(-FLT_MAX));
    v16f scale = exp2Fn(mOld - mSub);
    v16f sum = expSumFn(st + g, ldst, nc, mSub);
    vstore(l + g, vload(l + g) * scale + sum);
    vstore(m + g, mNew);
    vstore(alpha + g, scale);
  }
}

/* One (key block, query block) of the backward: the raw products q k^T in
 * s become P = exp(S - lse) and the products dout v^T in dp become
 * dS = P * (dP - Delta). */
KILN_INLINE void backwardSoftmaxBody(int64_t rows, int64_t row0, int64_t j0,
                                     int64_t nc, int64_t np, float *s,
                                     float *dp, int64_t lds, float scale,
                                     MaskRows mask, int causal,
                                     const float *lse, const float *delta,
                                     DsRowFn dsRowFn) {
  for (int64_t r = 0; r < rows; ++r) {
    float *sr = s + r * lds, *dpr = dp + r * lds;
    int64_t valid = nc;
    if (causal)
      valid = min64(nc, row0 + r - j0 + 1);
    const float *mrow = mask.base ? mask.base + r * mask.rowStride : NULL;
    if (!mrow && valid == np) {
      /* Every product is a score once scaled: one pass. */
      dsRowFn(sr, dpr, np, scale, lse[r], delta[r]);
      continue;
    }
    /* x * 1 - lse rounds once, as x - lse does. */
    scoreRow(sr, np, valid, scale, mrow, mask.colStride);
    dsRowFn(sr, dpr, np, 1.0f, lse[r], delta[r]);
  }
}

/*===----------------------------------------------------------------------===*
 * Transposition: the forward's (c q)^T and its output, the backward's K^T
 * and V^T.
 *===----------------------------------------------------------------------===*/

/* a0 b0 a1 b1 ... a7 b7, and a8 b8 ... a15 b15. */
KILN_INLINE v16f vzipLow(v16f a, v16f b) {
  return __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5,
                                 21, 6, 22, 7, 23);
}
KILN_INLINE v16f vzipHigh(v16f a, v16f b) {
  return __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28,
                                 13, 29, 14, 30, 15, 31);
}

/* r[16 x 16] transposed in place: four rounds of the perfect shuffle
 * (rows 2i and 2i + 1 of a round interleave rows i and i + 8 of the last),
 * 64 two-vector permutes for 256 floats. */
KILN_INLINE void vtranspose(v16f r[kLanes]) {
  for (int round = 0; round < 4; ++round) {
    v16f t[kLanes];
    for (int i = 0; i < kLanes / 2; ++i) {
      t[2 * i] = vzipLow(r[i], r[i + kLanes / 2]);
      t[2 * i + 1] = vzipHigh(r[i], r[i + kLanes / 2]);
    }
    for (int i = 0; i < kLanes; ++i)
      r[i] = t[i];
  }
}

/* t[c][r] = scale * x[r][c] * (cs ? cs[c] : 1) for r < rows, c < cols:
 * blocks of 16 x 16 in registers, the edges a float at a time. */
KILN_INLINE void transposeBody(const float *x, int64_t ldx, int64_t rows,
                               int64_t cols, float *t, int64_t ldt,
                               float scale, const float *cs) {
  int64_t r0 = 0;
  for (; r0 + kLanes <= rows; r0 += kLanes) {
    int64_t c0 = 0;
    for (; c0 + kLanes <= cols; c0 += kLanes) {
      v16f v[kLanes];
      v16f f = vsplat(scale);
      if (cs)
        f *= vload(cs + c0);
      for (int i = 0; i < kLanes; ++i)
        v[i] = vload(x + (r0 + i) * ldx + c0) * f;
      vtranspose(v);
      for (int i = 0; i < kLanes; ++i)
        vstore(t + (c0 + i) * ldt + r0, v[i]);
    }
    for (int64_t r = r0; r < r0 + kLanes; ++r)
      for (int64_t c = c0; c < cols; ++c)
        t[c * ldt + r] = scale * x[r * ldx + c] * (cs ? cs[c] : 1.0f);
  }
  for (int64_t r = r0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[c * ldt + r] = scale * x[r * ldx + c] * (cs ? cs[c] : 1.0f);
}

/*===----------------------------------------------------------------------===*
 * The instances of each kernel, and the choice between them.
 *===----------------------------------------------------------------------===*/

#define KILN_GEMM_PARAMS                                                       \
  (int64_t m, int64_t n, int64_t k, const float *a, int64_t rs, int64_t ks,    \
   const float *b, int64_t ldb, float *c, int64_t ldc, int accumulate,        \
   const float *cs, float *cm)
#define KILN_FWD_PARAMS                                                        \
  (int64_t rows, int64_t row0, int64_t j0, int64_t nc, float *st,              \
   int64_t ldst, MaskRows mask, int causal, const float *blockMax, float *m,   \
   float *l, float *alpha)
#define KILN_FWD_ARGS                                                          \
  rows, row0, j0, nc, st, ldst, mask, causal, blockMax, m, l, alpha
#define KILN_TRANSPOSE_PARAMS                                                  \
  (const float *x, int64_t ldx, int64_t rows, int64_t cols, float *t,          \
   int64_t ldt, float scale, const float *cs)
#define KILN_TRANSPOSE_ARGS (x, ldx, rows, cols, t, ldt, scale, cs)
#define KILN_BWD_PARAMS                                                        \
  (int64_t rows, int64_t row0, int64_t j0, int64_t nc, int64_t np, float *s,   \
   float *dp, int64_t lds, float scale, MaskRows mask, int causal,             \
   const float *lse, const float *delta)
#define KILN_BWD_ARGS                                                          \
  rows, row0, j0, nc, np, s, dp, lds, scale, mask, causal, lse, delta

/* The baseline's tiles: a 16-float vector is 4 registers of SSE2 (16 of
 * them) or NEON (32). Compilers split the 64-byte vectors with some
 * overhead there: the baseline instance is for correctness on any CPU more
 * than for speed. */
#if defined(__x86_64__) || defined(__i386__)
enum { kBaselineRows = 2 };
#else
enum { kBaselineRows = 5 };
#endif
static void gemmBaseline KILN_GEMM_PARAMS {
  gemmBody(microTile, kBaselineRows, 1, m, n, k, a, rs, ks, b, ldb, c, ldc,
           accumulate, cs, cm);
}
static void forwardSoftmaxBaseline KILN_FWD_PARAMS {
  forwardSoftmaxBody(KILN_FWD_ARGS, vexp2, vmax, exp2Sum);
}
static void backwardSoftmaxBaseline KILN_BWD_PARAMS {
  backwardSoftmaxBody(KILN_BWD_ARGS, dsRow);
}
static void transposeBaseline KILN_TRANSPOSE_PARAMS {
  transposeBody KILN_TRANSPOSE_ARGS;
}

#ifdef KILN_ATTENTION_AVX2
/* 6 x 16 floats: 12 of AVX2's 16 registers accumulate (a 16-float vector
 * is two of them), two hold B's row and one the broadcast of A. */
KILN_AVX2_TARGET static void gemmAvx2 KILN_GEMM_PARAMS {
  gemmBody(microTileAvx2, 6, 1, m, n, k, a, rs, ks, b, ldb, c, ldc, accumulate,
           cs, cm);
}
KILN_AVX2_TARGET static void forwardSoftmaxAvx2 KILN_FWD_PARAMS {
  forwardSoftmaxBody(KILN_FWD_ARGS, vexp2Avx2, vmaxAvx2, exp2SumAvx2);
}
KILN_AVX2_TARGET static void backwardSoftmaxAvx2 KILN_BWD_PARAMS {
  backwardSoftmaxBody(KILN_BWD_ARGS, dsRowAvx2);
}
KILN_AVX2_TARGET static void transposeAvx2 KILN_TRANSPOSE_PARAMS {
  transposeBody KILN_TRANSPOSE_ARGS;
}
#endif

#ifdef KILN_ATTENTION_AVX512
KILN_AVX512_TARGET KILN_INLINE void dsRowAvx512(float *s, float *dp, int64_t n,
                                                float scale, float lse,
                                                float delta) {
  dsRowWith(vexpAvx512, s, dp, n, scale, lse, delta);
}

KILN_AVX512_TARGET KILN_INLINE v16f exp2SumAvx512(float *s, int64_t ld,
                                                  int64_t n, v16f sub) {
  return exp2SumWith(vexp2Avx512, s, ld, n, sub);
}

/* 6 x 64 floats: 24 of AVX-512's 32 registers accumulate. */
KILN_AVX512_TARGET static void gemmAvx512 KILN_GEMM_PARAMS {
  gemmBody(microTile, 6, 4, m, n, k, a, rs, ks, b, ldb, c, ldc, accumulate, cs,
           cm);
}
KILN_AVX512_TARGET static void forwardSoftmaxAvx512 KILN_FWD_PARAMS {
  forwardSoftmaxBody(KILN_FWD_ARGS, vexp2Avx512, vmax, exp2SumAvx512);
}
KILN_AVX512_TARGET static void backwardSoftmaxAvx512 KILN_BWD_PARAMS {
  backwardSoftmaxBody(KILN_BWD_ARGS, dsRowAvx512);
}
KILN_AVX512_TARGET static void transposeAvx512 KILN_TRANSPOSE_PARAMS {
  transposeBody KILN_TRANSPOSE_ARGS;
}
#endif

typedef struct Kernels {
  void (*gemm) KILN_GEMM_PARAMS;
  void (*forwardSoftmax) KILN_FWD_PARAMS;
  void (*backwardSoftmax) KILN_BWD_PARAMS;
  void (*transpose) KILN_TRANSPOSE_PARAMS;
} Kernels;

static Kernels selectKernels(void) {
#ifdef KILN_ATTENTION_AVX512
  /* libgcc (or compiler-rt) fills in the CPU model before constructors
   * run, the OS's support of the zmm state included. */
  if (__builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
    return (Kernels){gemmAvx512, forwardSoftmaxAvx512, backwardSoftmaxAvx512,
                     transposeAvx512};
#endif
#ifdef KILN_ATTENTION_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return (Kernels){gemmAvx2, forwardSoftmaxAvx2, backwardSoftmaxAvx2,
                     transposeAvx2};
#endif

  return (Kernels){gemmBaseline, forwardSoftmaxBaseline,
                   backwardSoftmaxBaseline, transposeBaseline};
}

/*===----------------------------------------------------------------------===*
 * The descriptor, scratch memory and packing.
 *===----------------------------------------------------------------------===*/

typedef struct Problem {
  int64_t batch, nq, nk, d, dv, tile;
  int causal;
  float scale;
  /* The mask of this batch entry: its first entry and row, column strides
   * (base null without a mask). */
  MaskRows mask;
} Problem;

static Problem readDescriptor(const int64_t *desc, const float *mask,
                              int64_t batch) {
  Problem p;
  p.batch = desc[KILN_ATTENTION_BATCH];
  p.nq = desc[KILN_ATTENTION_QUERIES];
  p.nk = desc[KILN_ATTENTION_KEYS];
  p.d = desc[KILN_ATTENTION_HEAD_DIM];
  p.dv = desc[KILN_ATTENTION_VALUE_DIM];
  p.tile = desc[KILN_ATTENTION_QUERY_TILE];
  int64_t flags = desc[KILN_ATTENTION_FLAGS];
  p.causal = (flags & KILN_ATTENTION_CAUSAL) != 0;
  double scale;
  memcpy(&scale, &desc[KILN_ATTENTION_SCALE_BITS], sizeof scale);
  p.scale = (float)scale;
  p.mask.base = NULL;
  p.mask.rowStride = p.mask.colStride = 0;
  if ((flags & KILN_ATTENTION_MASKED) && mask) {
    int64_t rank = desc[KILN_ATTENTION_LEADING_RANK];
    const int64_t *dims = desc + KILN_ATTENTION_HEADER_SIZE;
    const int64_t *strides = dims + rank;
    /* Unravel the batch index over the leading dims (row-major). */
    int64_t offset = 0, rest = batch;
    for (int64_t i = rank - 1; i >= 0; --i) {
      offset += (rest % dims[i]) * strides[i];
      rest /= dims[i];
    }
    p.mask.base = mask + offset;
    p.mask.rowStride = strides[rank];
    p.mask.colStride = strides[rank + 1];
  }
  return p;
}

/* One 64-byte aligned block for all of a call's scratch. */
static float *allocateScratch(int64_t floats, const char *what) {
  size_t bytes = ((size_t)(floats > 0 ? floats : 1) * sizeof(float) + 63) &
                 ~(size_t)63;
  float *p = aligned_alloc(64, bytes);
  if (!p) {
    fprintf(stderr, "kiln: out of memory for the attention %s (%zu bytes)\n",
            what, bytes);
    abort();
  }
  return p;
}

/* Rows [j0, j0 + n) of x [*, w] transposed into t [w][ldt] and multiplied
 * by `scale`, columns [n, ldt) zero. */
static void packTransposed(const Kernels *kern, const float *x, int64_t w,
                           int64_t j0, int64_t n, float *t, int64_t ldt,
                           float scale) {
  for (int64_t d = 0; d < w; ++d) {
    float *td = t + d * ldt;
    for (int64_t j = n; j < ldt; ++j)
      td[j] = 0.0f;
  }
  kern->transpose(x + j0 * w, w, n, w, t, ldt, scale, NULL);
}

/* Share `part` of `parts` of the cache lines of [p, p + bytes), asked for
 * ahead of their use: into L1, or with `intoL2` into L2. */
static void prefetchShare(const void *p, int64_t bytes, int64_t part,
                          int64_t parts, int intoL2) {
  const int64_t lines = (bytes + 63) / 64;
  const char *base = (const char *)p;
  for (int64_t i = lines * part / parts, e = lines * (part + 1) / parts; i < e;
       ++i) {
    if (intoL2)
      __builtin_prefetch(base + i * 64, 0, 2);
    else
      __builtin_prefetch(base + i * 64, 0, 3);
  }
}

/* x [rows, w] into rows of ldp >= w floats, the padding zero. */
static void packPadded(const float *x, int64_t rows, int64_t w, float *p,
                       int64_t ldp) {
  for (int64_t i = 0; i < rows; ++i) {
    memcpy(p + i * ldp, x + i * w, (size_t)w * sizeof(float));
    memset(p + i * ldp + w, 0, (size_t)(ldp - w) * sizeof(float));
  }
}

/*===----------------------------------------------------------------------===*
 * Forward.
 *===----------------------------------------------------------------------===*/

/* One sub-tile of the forward's query rows and its state: (c q)^T, o^T,
 * the running maxima and sums. */
typedef struct SubTile {
  int64_t r0, rows, keys, ld;
  float *qt, *o, *m, *l;
} SubTile;

KILN_HIDDEN void kiln_attention_f32_forward(const int64_t *descriptor,
                                            const float *q, const float *k,
                                            const float *v, const float *mask,
                                            float *out, float *lse,
                                            int64_t batch, int64_t tile) {
  Problem pr = readDescriptor(descriptor, mask, batch);
  const int64_t nq = pr.nq, nk = pr.nk, d = pr.d, dv = pr.dv;
  const int64_t i0 = tile * pr.tile, i1 = min64(nq, i0 + pr.tile);
  if (i0 >= i1)
    return;
  Kernels kern = selectKernels();
  q += batch * nq * d;
  k += batch * nk * d;
  v += batch * nk * dv;
  out += batch * nq * dv;
  lse += batch * nq;

  /* Sub-tiles of kQueryRows rows, in groups of up to kSubTiles that take
   * each key block in turn while it is in the cache. */
  const int64_t rowsMax = min64(kQueryRows, i1 - i0), ldst = roundUp16(rowsMax);
  const int64_t groupMax =
      min64(kSubTiles, (i1 - i0 + kQueryRows - 1) / kQueryRows);
  const int64_t subFloats = (d + dv + 2) * ldst;
  float *scratch = allocateScratch(
      groupMax * subFloats + (kForwardKeys + 2) * ldst, "forward");
  float *st = scratch + groupMax * subFloats;
  float *blockMax = st + kForwardKeys * ldst;
  float *alpha = blockMax + ldst;

  for (int64_t g0 = i0; g0 < i1; g0 += kSubTiles * kQueryRows) {
    const int64_t g1 = min64(i1, g0 + kSubTiles * kQueryRows);
    const int64_t subs = (g1 - g0 + kQueryRows - 1) / kQueryRows;
    SubTile sub[kSubTiles];
    for (int64_t t = 0; t < subs; ++t) {
      SubTile *u = &sub[t];
      u->r0 = g0 + t * kQueryRows;
      u->rows = min64(g1, u->r0 + kQueryRows) - u->r0;
      u->keys = pr.causal ? min64(nk, u->r0 + u->rows) : nk;
      u->ld = roundUp16(u->rows);
      u->qt = scratch + t * subFloats;
      u->o = u->qt + d * ldst;
      u->m = u->o + dv * ldst;
      u->l = u->m + ldst;
      /* (scale log2(e) q)^T of the rows: the B operand of st = k (...)^T,
       * the scores in base 2. */
      packTransposed(&kern, q, d, u->r0, u->rows, u->qt, u->ld,
                     pr.scale * kLog2e);
      memset(u->o, 0, (size_t)(dv * u->ld) * sizeof(float));
      for (int64_t r = 0; r < u->ld; ++r) {
        u->m[r] = -INFINITY;
        u->l[r] = 0.0f;
      }
    }
    /* The rows of out this group writes at the end, and the rows of q the
     * next one packs (in this call or the next, and in the next batch
     * entry after the last): a share of them per key block. Both are
     * usually in no cache yet, and on a miss at their time the transposes
     * would wait for memory. */
    const int64_t keys = sub[subs - 1].keys;
    const int64_t blocks = (keys + kForwardKeys - 1) / kForwardKeys;
    const int streamed = keys * (d + dv) * 4 > kCacheBytes;
    const int64_t nextRows =
        min64(kSubTiles * kQueryRows, (pr.batch - batch) * nq - g1);
    for (int64_t j0 = 0; j0 < keys; j0 += kForwardKeys) {
      prefetchShare(out + g0 * dv, (g1 - g0) * dv * 4, j0 / kForwardKeys,
                    blocks, 0);
      if (nextRows > 0)
        prefetchShare(q + g1 * d, nextRows * d * 4, j0 / kForwardKeys,
                      blocks, 0);
      /* Where k and v come from L3, the next key block's lines are asked
       * for into L2 while this one is used, a share per sub-tile. */
      const int64_t nextKeys = min64(kForwardKeys, keys - j0 - kForwardKeys);
      for (int64_t t = 0; t < subs; ++t) {
        const SubTile *u = &sub[t];
        if (streamed && nextKeys > 0) {
          const int64_t j1 = j0 + kForwardKeys;
          prefetchShare(k + j1 * d, nextKeys * d * 4, t, subs, 1);
          prefetchShare(v + j1 * dv, nextKeys * dv * 4, t, subs, 1);
        }
        if (j0 >= u->keys)
          continue; /* causal: the keys are all above its rows */
        const int64_t nc = min64(kForwardKeys, u->keys - j0), ldq = u->ld;
        for (int64_t r = 0; r < ldq; ++r)
          blockMax[r] = -INFINITY;
        kern.gemm(nc, ldq, d, k + j0 * d, d, 1, u->qt, ldq, st, ldq, 0, NULL,
                  blockMax);
        MaskRows mr = pr.mask;
        if (mr.base)
          mr.base += u->r0 * mr.rowStride + j0 * mr.colStride;
        kern.forwardSoftmax(u->rows, u->r0, j0, nc, st, ldq, mr, pr.causal,
                            blockMax, u->m, u->l, alpha);
        /* o^T = o^T alpha + v^T P^T: P^T is st, v^T is v read a column at
         * a time. */
        kern.gemm(dv, ldq, nc, v + j0 * dv, 1, dv, st, ldq, u->o, ldq, 1,
                  alpha, NULL);
      }
    }
    for (int64_t t = 0; t < subs; ++t) {
      const SubTile *u = &sub[t];
      const int64_t r0 = u->r0, rows = u->rows;
      /* out = (o^T)^T / l, alpha's space holding 1 / l. */
      for (int64_t r = 0; r < rows; ++r)
        alpha[r] = 1.0f / u->l[r];
      kern.transpose(u->o, u->ld, dv, rows, out + r0 * dv, dv, 1.0f, alpha);
      for (int64_t r = 0; r < rows; ++r) {
        if (!(u->l[r] > 0.0f)) {
          /* Nothing but -inf (or a NaN): softmax's 0 / 0. */
          for (int64_t c = 0; c < dv; ++c)
            out[(r0 + r) * dv + c] = NAN;
          lse[r0 + r] = NAN;
          continue;
        }
        /* Back from base 2. */
        lse[r0 + r] =
            (float)(((double)u->m[r] + log2((double)u->l[r])) * kLn2);
      }
    }
  }
  free(scratch);
}

/*===----------------------------------------------------------------------===*
 * Backward.
 *===----------------------------------------------------------------------===*/

/* One key block of a group and its state: K^T, V^T and the dK, dV
 * accumulators. */
typedef struct KeyBlock {
  int64_t j0, nc;
  float *kt, *vt, *dk, *dv;
} KeyBlock;

KILN_HIDDEN void kiln_attention_f32_backward(
    const int64_t *descriptor, const float *q, const float *k, const float *v,
    const float *mask, const float *out, const float *lse, const float *dout,
    float *dq, float *dk, float *dv, int64_t batch) {
  Problem pr = readDescriptor(descriptor, mask, batch);
  const int64_t nq = pr.nq, nk = pr.nk, d = pr.d, dvDim = pr.dv;
  Kernels kern = selectKernels();
  q += batch * nq * d;
  k += batch * nk * d;
  v += batch * nk * dvDim;
  out += batch * nq * dvDim;
  dout += batch * nq * dvDim;
  lse += batch * nq;
  dq += batch * nq * d;
  dk += batch * nk * d;
  dv += batch * nk * dvDim;

  const int64_t dp16 = roundUp16(d), dvp = roundUp16(dvDim);
  const int padD = dp16 != d, padV = dvp != dvDim;
  int64_t qFloats = padD ? nq * dp16 : 0;
  int64_t kFloats = padD ? nk * dp16 : 0;
  int64_t doFloats = padV ? nq * dvp : 0;
  int64_t dqFloats = nq * dp16;
  int64_t deltaFloats = roundUp16(nq);
  /* Per key block of a group: K^T, V^T and the dK, dV accumulators. */
  int64_t ktFloats = d * kKeyBlock, vtFloats = dvDim * kKeyBlock;
  int64_t dkFloats = kKeyBlock * dp16, dvFloats = kKeyBlock * dvp;
  int64_t keyFloats = ktFloats + vtFloats + dkFloats + dvFloats;
  int64_t blockFloats = kQueryBlock * kScoreStride;
  float *scratch = allocateScratch(qFloats + kFloats + doFloats + dqFloats +
                                       deltaFloats + 2 * blockFloats +
                                       kKeyGroup * keyFloats,
                                   "backward");
  float *qp = scratch;
  float *kp = qp + qFloats;
  float *dop = kp + kFloats;
  float *dqAcc = dop + doFloats;
  float *delta = dqAcc + dqFloats;
  float *s = delta + deltaFloats;
  float *dpBuf = s + blockFloats;
  float *keyState = dpBuf + blockFloats;

  /* The products with q, k, dout as their B operand need rows of a
   * multiple of 16 floats. */
  const float *qb = q, *kb = k, *dob = dout;
  const int64_t ldqk = padD ? dp16 : d, lddo = padV ? dvp : dvDim;
  if (padD) {
    packPadded(q, nq, d, qp, dp16);
    packPadded(k, nk, d, kp, dp16);
    qb = qp;
    kb = kp;
  }
  if (padV) {
    packPadded(dout, nq, dvDim, dop, dvp);
    dob = dop;
  }
  for (int64_t i = 0; i < nq; ++i) {
    double acc = 0.0;
    for (int64_t c = 0; c < dvDim; ++c)
      acc += (double)dout[i * dvDim + c] * out[i * dvDim + c];
    delta[i] = (float)acc;
  }
  memset(dqAcc, 0, (size_t)dqFloats * sizeof(float));

  /* Key blocks in groups of up to kKeyGroup, which take each block of
   * query rows in turn: q, dout and dQ of a long sequence exceed L2, and
   * each pass over them then serves several key blocks. */
  for (int64_t g0 = 0; g0 < nk; g0 += kKeyGroup * kKeyBlock) {
    const int64_t g1 = min64(nk, g0 + kKeyGroup * kKeyBlock);
    const int64_t blocks = (g1 - g0 + kKeyBlock - 1) / kKeyBlock;
    KeyBlock key[kKeyGroup];
    for (int64_t b = 0; b < blocks; ++b) {
      KeyBlock *e = &key[b];
      e->j0 = g0 + b * kKeyBlock;
      e->nc = min64(kKeyBlock, nk - e->j0);
      e->kt = keyState + b * keyFloats;
      e->vt = e->kt + ktFloats;
      e->dk = e->vt + vtFloats;
      e->dv = e->dk + dkFloats;
      packTransposed(&kern, k, d, e->j0, e->nc, e->kt, kKeyBlock, 1.0f);
      packTransposed(&kern, v, dvDim, e->j0, e->nc, e->vt, kKeyBlock, 1.0f);
      memset(e->dk, 0, (size_t)dkFloats * sizeof(float));
      memset(e->dv, 0, (size_t)dvFloats * sizeof(float));
    }
    /* Causal: query rows before g0 see none of these keys, and the rows on
     * the group's diagonal go in chunks of kDiagonalRows, each with only
     * the keys its last row sees. */
    for (int64_t i0 = pr.causal ? g0 : 0, rows; i0 < nq; i0 += rows) {
      rows = min64(kQueryBlock, nq - i0);
      if (pr.causal && i0 < g1)
        rows = min64(rows, kDiagonalRows);
      for (int64_t b = 0; b < blocks; ++b) {
        const KeyBlock *e = &key[b];
        const int64_t j0 = e->j0;
        int64_t seen = e->nc;
        if (pr.causal) {
          if (i0 + rows <= j0)
            continue; /* every key of the block is above these rows */
          seen = min64(e->nc, i0 + rows - j0);
        }
        const float *kt = e->kt, *vt = e->vt;
        float *dkAcc = e->dk, *dvAcc = e->dv;
        const int64_t sp = roundUp16(seen);
        kern.gemm(rows, sp, d, q + i0 * d, d, 1, kt, kKeyBlock, s,
                  kScoreStride, 0, NULL, NULL);
        kern.gemm(rows, sp, dvDim, dout + i0 * dvDim, dvDim, 1, vt, kKeyBlock,
                  dpBuf, kScoreStride, 0, NULL, NULL);
        MaskRows mr = pr.mask;
        if (mr.base)
          mr.base += i0 * mr.rowStride + j0 * mr.colStride;
        kern.backwardSoftmax(rows, i0, j0, seen, sp, s, dpBuf, kScoreStride,
                             pr.scale, mr, pr.causal, lse + i0, delta + i0);
        /* dV += P^T dout, dK += dS^T q (scaled at the end), dQ += dS k. */
        kern.gemm(seen, dvp, rows, s, 1, kScoreStride, dob + i0 * lddo, lddo,
                  dvAcc, dvp, 1, NULL, NULL);
        kern.gemm(seen, dp16, rows, dpBuf, 1, kScoreStride, qb + i0 * ldqk,
                  ldqk, dkAcc, dp16, 1, NULL, NULL);
        kern.gemm(rows, dp16, seen, dpBuf, kScoreStride, 1, kb + j0 * ldqk,
                  ldqk, dqAcc + i0 * dp16, dp16, 1, NULL, NULL);
      }
    }
    for (int64_t b = 0; b < blocks; ++b) {
      const KeyBlock *e = &key[b];
      for (int64_t j = 0; j < e->nc; ++j) {
        for (int64_t c = 0; c < d; ++c)
          dk[(e->j0 + j) * d + c] = pr.scale * e->dk[j * dp16 + c];
        memcpy(dv + (e->j0 + j) * dvDim, e->dv + j * dvp,
               (size_t)dvDim * sizeof(float));
      }
    }
  }
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t c = 0; c < d; ++c)
      dq[i * d + c] = pr.scale * dqAcc[i * dp16 + c];
  free(scratch);
}
