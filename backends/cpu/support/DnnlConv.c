/*===- DnnlConv.c - kiln.conv through oneDNN's convolution primitive ----===*\
 *
 * Linked (as a static, position-independent archive) into the modules whose
 * code calls kiln_dnnl_conv_f32 or kiln_dnnl_conv_bf16, which
 * kiln-cpu-conv-to-dnnl emits for f32 and bf16 kiln.conv ops. Plain C on
 * oneDNN's C API: no compiler code, no LLVM.
 *
 * A bf16 convolution has bf16 src and weights and accumulates in f32
 * (oneDNN's bf16 kernels: AMX tiles or AVX-512 BF16's vdpbf16ps where the
 * CPU has them); its epilogue runs on the f32 sums, and dst is bf16 (the
 * result rounded once) or, with KILN_DNNL_CONV_F32_DST, f32 like the
 * addend. Where oneDNN has no bf16 convolution for the CPU it runs on (one
 * without AVX-512, or ONEDNN_MAX_CPU_ISA set below it), the call widens
 * src and weights to f32, runs the f32 primitive and rounds a bf16 dst
 * (to nearest even): the same sums, slower.
 *
 * Creating a primitive (choosing an implementation, generating its JIT
 * kernel) costs far more than small convolutions do, so each call site
 * owns a cache slot (a pointer-sized global of the module, null at load)
 * that holds the primitive created by the first call; the module destroys
 * them when it is unloaded. Shapes are static,
 * so one primitive per call site is all a site ever needs. Two threads
 * that call a site for the first time at once may both create one; the
 * first to publish it (compare-and-swap) wins and the other destroys its
 * own. Executing one primitive from several threads at once is safe in
 * oneDNN; streams and memory objects are made per call (they are cheap)
 * because those are not.
 *
 * The operands are in kiln's (ONNX's) plain row-major layouts: src [N, C,
 * D...], weights [O, C/G, K...] (described to oneDNN as [G, O/G, C/G,
 * K...] when G > 1, the same bytes), dst [N, O, E...], except that src and
 * dst have their channel dim last in memory where the descriptor's
 * channels-last flags say (the layouts the compiler chose for them because
 * oneDNN's fastest kernels run on them: then nothing is reordered). The
 * descriptor is translated by DnnlConvDesc.c. A convolution with
 * the descriptor's `blocked` flag (the compiler's choice: ConvToDnnl.cpp)
 * runs in layouts of oneDNN's choice, with src and weights reordered into
 * them and dst back on each call; the others run on the plain layouts.
 * Weights the descriptor marks constant (a kiln.constant: a model's
 * trained weights) are reordered once, when the
 * primitive is created, and kept in the cache entry.
 *
 * The descriptor's flags add an epilogue that oneDNN applies as it writes
 * dst (each otherwise a separate pass of the generated code over memory):
 * a per-channel bias [O] (the convolution's own bias argument), a tensor of
 * dst's shape added to the result (a `binary` add post-op reading it from
 * its own buffer where oneDNN has one and dst needs no reorder; otherwise a
 * `sum` post-op, the addend copied or reordered into dst's buffer first,
 * or already there where the compiler planned it in place), and a ReLU
 * (`eltwise_relu`), a clip (`eltwise_clip`: a ReLU6) or a SiLU
 * (`eltwise_swish` with alpha 1, x * sigmoid(x)).
 *
 * Those activations are exact only on finite values: oneDNN's ReLU and
 * clip are vmaxps/vminps with the bound as the second operand, which
 * return the bound for a NaN, where kiln.relu, kiln.max and kiln.min keep
 * the NaN; its SiLU takes -inf to -inf, where x * sigmoid(x) is NaN. So a
 * call with an activation first reads the largest magnitude of src, the
 * weights (once, for constant ones), the bias and the addend: where all
 * are finite and no sum of products can overflow (|src| * |weights| *
 * terms + |bias| + |addend| stays below FLT_MAX / 2), no NaN or infinity
 * reaches the post-op and the fused primitive runs. Otherwise the call
 * runs the site's primitive without the activation (created then, once)
 * and applies the activation itself, with kiln's semantics. The read is
 * one pass over src, where the activation's own pass would read and write
 * dst; where src is the result of another such call, that call passes on
 * a bound on its magnitude (KILN_DNNL_CONV_DST_BOUND, then
 * KILN_DNNL_CONV_SRC_BOUND: the |src| * |weights| * terms + ... bound
 * through the activation, the clip's bounds for a ReLU6; +inf where it ran
 * the activation itself), and src is read only where that bound is too
 * large.
 *
 * A convolution with KILN_DNNL_CONV_WINOGRAD (3x3, stride 1, where
 * `kiln-compile --conv-algorithm=winograd` asks) runs oneDNN's Winograd
 * kernels (AVX-512 only; the direct ones elsewhere), which
 * compute the sums from transformed tiles of src and weights in about
 * half the multiplies, with rounding errors of the order of the direct
 * sums'. The transforms combine inputs that a direct sum keeps apart (an
 * infinity in one becomes a NaN in outputs whose windows do not hold it),
 * so the call takes the same guard as an activation, with the bound
 * widened by the transforms' growth: where an operand is not finite or a
 * transformed value could overflow, the direct primitive runs instead.
 * The compiler's default is kiln's own Winograd convolution
 * (KILN_DNNL_CONV_OWN_WINOGRAD, WinogradConv.c, on every CPU, where it
 * pays) on the layouts the direct kernels take, under the same guard.
 *
 * The symbols are hidden: every module gets its own copy, and a module
 * unloaded while another still runs must not take the other's code along.
 * The engine is the module's one (DnnlSupport.c).
 *
\*===----------------------------------------------------------------------===*/

#include "DnnlConvAbi.h"
#include "DnnlConvDesc.h"
#include "DnnlSupport.h"
#include "WinogradConv.h"

#include <dnnl.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct CachedConv {
  KilnDnnlEntry link; /* first: the module's published primitives */
  dnnl_primitive_t primitive;
  /* src, weights, dst: in the caller's plain layouts, and in the ones the
   * primitive runs on (the same where no reorder is needed). */
  dnnl_memory_desc_t plain[3], inner[3];
  /* user -> inner for src and weights, inner -> user for dst; null where
   * the layouts agree. */
  dnnl_primitive_t reorders[3];
  /* The addend (user layout) -> dst's inner layout, where they differ. */
  dnnl_primitive_t addendReorder;
  dnnl_memory_desc_t bias;
  int64_t flags;
  /* Whether the addend is read from its own buffer by a binary post-op
   * (else a sum post-op adds what dst holds, the addend copied there). */
  int binaryAddend;
  /* Whether staged[1] holds the constant weights, reordered once. */
  int constantWeights;
  /* A bf16 or quantized convolution that runs as f32 on widened copies. */
  int widened;
  /* Buffers in the inner layouts, for one call at a time (`busy`); a call
   * that finds them taken allocates its own. */
  void *staged[3];
  int busy;
  /* The primitive's scratchpad (DnnlSupport.h). */
  KilnDnnlScratchpad scratchpad;
  /* The constant weights' largest magnitude (largestMagnitude), read when
   * the primitive is created; 0 where the weights are not constant. */
  uint32_t weightMagnitude;
  int knownWeightMagnitude;
  /* The site's primitive without its activation (kiln_dnnl_conv_f32),
   * null until a call needs it. */
  void *exact;
  /* With KILN_DNNL_CONV_OWN_WINOGRAD: the site runs here instead of in
   * `primitive` (null then). */
  KilnWinogradConv *winograd;
} CachedConv;

/* The flags whose primitive gives kiln's values only on finite operands
 * whose sums cannot overflow (activationIsExact). */
#define KILN_DNNL_CONV_GUARDED                                                 \
  (KILN_DNNL_CONV_ACTIVATIONS | KILN_DNNL_CONV_WINOGRAD |                      \
   KILN_DNNL_CONV_OWN_WINOGRAD)

/* How much larger than a direct sum's bound a value inside oneDNN's
 * Winograd kernels can be. The direct bound is |src| |weights| C K^2;
 * with the textbook transforms of F(4x4, 3x3) (interpolation points 0,
 * +-1, +-2) the input transform multiplies magnitudes by up to 10 per
 * dim, the weights' by up to 1 and the output's by up to 19, a factor
 * 100 * 361 / 9 < 4100 over the direct bound; an implementation may
 * scale the weights' transform up and the output's down by the
 * denominators (up to 24 per dim). 2^24 covers both with room. */
#define KILN_DNNL_CONV_WINOGRAD_GROWTH 16777216.0

/* Every primitive this module published, destroyed when the module is
 * unloaded (before the engine: DnnlSupport.c). */
static KilnDnnlEntry *published;

static void destroyEntry(CachedConv *entry) {
  if (entry->primitive)
    dnnl_primitive_destroy(entry->primitive);
  kiln_winograd_conv_destroy(entry->winograd);
  if (entry->addendReorder)
    dnnl_primitive_destroy(entry->addendReorder);
  for (int i = 0; i < 3; ++i) {
    if (entry->reorders[i])
      dnnl_primitive_destroy(entry->reorders[i]);
    free(entry->staged[i]);
  }
  free(entry->scratchpad.buffer);
  free(entry);
}

__attribute__((destructor)) static void destroyPublished(void) {
  KilnDnnlEntry *link = __atomic_exchange_n(&published, NULL, __ATOMIC_ACQ_REL);
  while (link) {
    KilnDnnlEntry *next = link->next;
    destroyEntry((CachedConv *)link);
    link = next;
  }
}

/* A 64-byte aligned buffer of at least `bytes` bytes. */
static void *allocateStaged(size_t bytes) {
  return kiln_dnnl_allocate("convolution", bytes);
}

/* The bits of the largest magnitude among x[0..n): at least 0x7f800000
 * where one is infinite or NaN, whose magnitudes' bits are above every
 * finite value's. Bound by memory bandwidth with AVX-512. */
static uint32_t largestMagnitudePortable(const float *x, size_t n) {
  uint32_t lanes[8] = {0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      uint32_t bits;
      memcpy(&bits, &x[i + l], sizeof(bits));
      bits &= 0x7fffffffu;
      lanes[l] = bits > lanes[l] ? bits : lanes[l];
    }
  for (; i < n; ++i) {
    uint32_t bits;
    memcpy(&bits, &x[i], sizeof(bits));
    bits &= 0x7fffffffu;
    lanes[0] = bits > lanes[0] ? bits : lanes[0];
  }
  uint32_t largest = 0;
  for (int l = 0; l < 8; ++l)
    largest = lanes[l] > largest ? lanes[l] : largest;
  return largest;
}

#ifdef __x86_64__
#include <immintrin.h>

__attribute__((target("avx512f"))) static uint32_t
largestMagnitudeAvx512(const float *x, size_t n) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  __m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(x + i),
                                               magnitude));
    m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(x + i + 16),
                                               magnitude));
    m2 = _mm512_max_epu32(m2, _mm512_and_si512(_mm512_loadu_si512(x + i + 32),
                                               magnitude));
    m3 = _mm512_max_epu32(m3, _mm512_and_si512(_mm512_loadu_si512(x + i + 48),
                                               magnitude));
  }
  for (; i < n; i += 16) {
    __mmask16 lanes = n - i >= 16 ? (__mmask16)0xffff
                                  : (__mmask16)((1u << (n - i)) - 1);
    m0 = _mm512_max_epu32(
        m0, _mm512_and_si512(_mm512_maskz_loadu_epi32(lanes, x + i),
                             magnitude));
  }
  m0 = _mm512_max_epu32(_mm512_max_epu32(m0, m1), _mm512_max_epu32(m2, m3));
  return (uint32_t)_mm512_reduce_max_epu32(m0);
}

/* The same on AVX2 (1.7x the portable loop's speed on 25 MB, which GCC
 * vectorizes for SSE2 only); the tail of fewer than 32 by that loop. */
__attribute__((target("avx2"))) static uint32_t
largestMagnitudeAvx2(const float *x, size_t n) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  __m256i m[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                  _mm256_setzero_si256(), _mm256_setzero_si256()};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int l = 0; l < 4; ++l)
      m[l] = _mm256_max_epu32(
          m[l],
          _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i + 8 * l)),
                           magnitude));
  __m256i all = _mm256_max_epu32(_mm256_max_epu32(m[0], m[1]),
                                 _mm256_max_epu32(m[2], m[3]));
  uint32_t lanes[8];
  _mm256_storeu_si256((__m256i *)lanes, all);
  uint32_t largest = largestMagnitudePortable(x + i, n - i);
  for (int l = 0; l < 8; ++l)
    largest = lanes[l] > largest ? lanes[l] : largest;
  return largest;
}
#endif

static uint32_t largestMagnitude(const float *x, size_t n) {
#ifdef __x86_64__
  if (__builtin_cpu_supports("avx512f"))
    return largestMagnitudeAvx512(x, n);
  if (__builtin_cpu_supports("avx2"))
    return largestMagnitudeAvx2(x, n);
#endif
  return largestMagnitudePortable(x, n);
}

/* largestMagnitude of n bf16 values: a bf16 value's bits are the high half
 * of its f32 value's, so the largest magnitude among them, as f32 bits, is
 * their largest 15-bit magnitude shifted up by 16. */
static uint32_t largestMagnitudeBf16Portable(const uint16_t *x, size_t n) {
  uint16_t lanes[16] = {0};
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; ++l) {
      uint16_t bits = x[i + l] & 0x7fffu;
      lanes[l] = bits > lanes[l] ? bits : lanes[l];
    }
  for (; i < n; ++i) {
    uint16_t bits = x[i] & 0x7fffu;
    lanes[0] = bits > lanes[0] ? bits : lanes[0];
  }
  uint16_t largest = 0;
  for (int l = 0; l < 16; ++l)
    largest = lanes[l] > largest ? lanes[l] : largest;
  return (uint32_t)largest << 16;
}

#ifdef __x86_64__
__attribute__((target("avx512f,avx512bw"))) static uint32_t
largestMagnitudeBf16Avx512(const uint16_t *x, size_t n) {
  const __m512i magnitude = _mm512_set1_epi16(0x7fff);
  __m512i m0 = _mm512_setzero_si512(), m1 = m0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    m0 = _mm512_max_epu16(
        m0, _mm512_and_si512(_mm512_loadu_si512(x + i), magnitude));
    m1 = _mm512_max_epu16(
        m1, _mm512_and_si512(_mm512_loadu_si512(x + i + 32), magnitude));
  }
  for (; i < n; i += 32) {
    __mmask32 lanes =
        n - i >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << (n - i)) - 1);
    m0 = _mm512_max_epu16(
        m0,
        _mm512_and_si512(_mm512_maskz_loadu_epi16(lanes, x + i), magnitude));
  }
  m0 = _mm512_max_epu16(m0, m1);
  /* The 32 16-bit lanes, widened to 32 bits, reduced. */
  __m512i low = _mm512_and_si512(m0, _mm512_set1_epi32(0xffff));
  __m512i high = _mm512_srli_epi32(m0, 16);
  return (uint32_t)_mm512_reduce_max_epu32(_mm512_max_epu32(low, high)) << 16;
}
#endif

static uint32_t largestMagnitudeBf16(const uint16_t *x, size_t n) {
#ifdef __x86_64__
  if (__builtin_cpu_supports("avx512bw"))
    return largestMagnitudeBf16Avx512(x, n);
#endif
  return largestMagnitudeBf16Portable(x, n);
}

/* Whether a call with `flags` writes bf16 dst (and reads a bf16 addend):
 * a bf16 convolution without KILN_DNNL_CONV_F32_DST. */
static int bf16Dst(int64_t flags) {
  return (flags & KILN_DNNL_CONV_BFLOAT16) && !(flags & KILN_DNNL_CONV_F32_DST);
}

/* The number of elements of `md` (a plain layout's: its dims' product). */
static size_t elementsOf(const dnnl_memory_desc_t *md) {
  size_t n = 1;
  for (int i = 0; i < md->ndims; ++i)
    n *= (size_t)md->dims[i];
  return n;
}

/* largestMagnitude of the buffer `x` of `type` (f32 or bf16) whose dims
 * `md` describes, whatever type `md` names (a widened entry's are f32). */
static uint32_t largestMagnitudeOf(dnnl_data_type_t type,
                                   const dnnl_memory_desc_t *md,
                                   const void *x) {
  size_t n = elementsOf(md);
  return type == dnnl_bf16 ? largestMagnitudeBf16(x, n)
                           : largestMagnitude(x, n);
}

static float magnitudeValue(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static void fail(const char *what, dnnl_status_t status) {
  kiln_dnnl_fail("convolution", what, status);
}

static dnnl_primitive_t reorderPrimitive(const dnnl_memory_desc_t *from,
                                         const dnnl_memory_desc_t *to) {
  return kiln_dnnl_reorder_primitive("convolution", from, to);
}

/* Whether `name` (an implementation's) is one of oneDNN's direct 1x1
 * kernels (jit_1x1, brgconv_1x1), which run about as fast as each other. */
static int direct1x1(const char *name) {
  return strstr(name, "1x1") && strncmp(name, "ref", 3) != 0;
}

/* The primitive descriptor of `entry` (its flags and user layouts) with
 * the addend read by a binary post-op, so that the addend is never copied
 * into dst; null unless `withSum` (the sum post-op's descriptor) writes dst
 * in its user layout (that of the addend) and oneDNN runs the binary form,
 * on `withSum`'s src layout, with the same implementation or both with
 * direct 1x1 kernels. Some kernels take no binary post-op (oneDNN 2.6's
 * brgconv), and its 3x3 replacement (jit) is slower than the sum
 * post-op's extra pass; on a 1x1 convolution (ResNet's residual additions)
 * jit_1x1 with the binary post-op beat brgconv_1x1 with the copy: 5.3
 * against 6.3 ms for 8x64x56x56 -> 256 channels on one thread (an Intel
 * Xeon; on AMD Zen 5 8.3 against brgconv_1x1's 6.5 ms with the addend
 * already in dst, where kiln-cpu-conv-addend-in-place places it wherever
 * the addend dies at the call, so this is for the other calls). Never for
 * the gemm-based convolution (`gemm:jit`, where the direct kernels decline
 * the shape, e.g. a 1x7 window with 4 or more columns of padding on the
 * left): oneDNN 2.6's adds a binary post-op's addend at the wrong positions
 * on channels-last maps (values near 2 off by 1.9), where its sum post-op
 * is right. */
static dnnl_primitive_desc_t binaryAddendDesc(const int64_t *desc,
                                              const CachedConv *entry,
                                              dnnl_primitive_desc_t withSum) {
  if (!dnnl_memory_desc_equal(
          dnnl_primitive_desc_query_md(withSum, dnnl_query_dst_md, 0),
          &entry->plain[2]))
    return NULL;
  /* src as the sum's kernel reads it, weights of oneDNN's choice, dst in
   * its user layout. */
  dnnl_memory_desc_t layouts[3];
  dnnl_primitive_desc_t pd;
  if (kiln_dnnl_conv_layouts(KILN_DNNL_CONV_BLOCKED, entry->plain, layouts))
    return NULL;
  layouts[0] = *dnnl_primitive_desc_query_md(withSum, dnnl_query_src_md, 0);
  layouts[2] = entry->plain[2];
  if (kiln_dnnl_conv_primitive_desc(desc, entry->flags, layouts, &entry->bias,
                                    &entry->plain[2], /*quant=*/NULL,
                                    kiln_dnnl_engine(), &pd))
    return NULL;
  const char *name = NULL, *sumName = NULL;
  int same =
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) ==
          dnnl_success &&
      dnnl_primitive_desc_query(withSum, dnnl_query_impl_info_str, 0,
                                &sumName) == dnnl_success &&
      name && sumName && !strstr(name, "gemm") &&
      (!strcmp(name, sumName) || (direct1x1(name) && direct1x1(sumName)));
  if (!same) {
    dnnl_primitive_desc_destroy(pd);
    return NULL;
  }
  return pd;
}

/* Constant weights' largest magnitude, read once where a guarded call
 * (activationIsExact) will need it. */
static void readWeightMagnitude(CachedConv *entry, int64_t flags,
                                const void *weights, dnnl_data_type_t type) {
  if ((flags & KILN_DNNL_CONV_CONSTANT_WEIGHT) &&
      (flags & KILN_DNNL_CONV_GUARDED) && weights &&
      (type == dnnl_f32 || type == dnnl_bf16)) {
    entry->weightMagnitude =
        largestMagnitudeOf(type, &entry->plain[1], weights);
    entry->knownWeightMagnitude = 1;
  }
}

/* The primitive for `desc` with `flags` (the descriptor's, or fewer) on
 * src, weights and dst of `type`; `weights` are the first call's weights,
 * kept (reordered) when the flags mark them constant. `addendInDst`: the
 * first call's addend is its dst buffer (planned in place), as it then is
 * on every call of the site, so the sum post-op adds it with no copy.
 * Null where oneDNN has no implementation for a type other than f32 (an
 * f32 convolution it always has). */
static CachedConv *create(const int64_t *desc, int64_t flags,
                          const void *weights, dnnl_data_type_t type,
                          int addendInDst, const KilnDnnlConvQuant *quant) {
  CachedConv *entry = allocateStaged(sizeof(CachedConv));
  memset(entry, 0, sizeof(CachedConv));
  entry->flags = flags;
  dnnl_status_t status;
  if ((status = kiln_dnnl_conv_describe(desc, flags, type, entry->plain,
                                        &entry->bias)))
    fail("describing the operands", status);
  /* kiln's own Winograd algorithm (WinogradConv.c), with no primitive;
   * for a descriptor it does not compute, the direct sums. */
  if (flags & KILN_DNNL_CONV_OWN_WINOGRAD) {
    if (type == dnnl_f32 && kiln_winograd_conv_applies(desc)) {
      int constant = (flags & KILN_DNNL_CONV_CONSTANT_WEIGHT) && weights;
      entry->winograd = kiln_winograd_conv_create(
          desc, flags, constant ? weights : NULL, kiln_winograd_block_bytes());
      readWeightMagnitude(entry, flags, weights, type);
      return entry;
    }
    flags &= ~(int64_t)KILN_DNNL_CONV_OWN_WINOGRAD;
    entry->flags = flags;
  }
  /* Layouts of oneDNN's choice for some operands: reordered where they
   * differ from the call's. */
  int window =
      (flags & (KILN_DNNL_CONV_BLOCKED | KILN_DNNL_CONV_ANY_WEIGHTS)) != 0;
  for (int i = 0; i < 3; ++i)
    entry->inner[i] = entry->plain[i];
  dnnl_memory_desc_t layouts[3];
  dnnl_primitive_desc_t pd;
  if ((status = kiln_dnnl_conv_layouts(flags, entry->plain, layouts)))
    fail("describing the layouts", status);
  status = kiln_dnnl_conv_primitive_desc(desc, flags, layouts, &entry->bias,
                                         /*binaryAddend=*/NULL, quant,
                                         kiln_dnnl_engine(), &pd);
  /* Where oneDNN has no Winograd kernel for this CPU and these operands
   * (a module compiled on another CPU, or one that asked without
   * querying), the direct sums. */
  if (status != dnnl_success && (flags & KILN_DNNL_CONV_WINOGRAD)) {
    flags &= ~(int64_t)KILN_DNNL_CONV_WINOGRAD;
    entry->flags = flags;
    status = kiln_dnnl_conv_primitive_desc(desc, flags, layouts, &entry->bias,
                                           /*binaryAddend=*/NULL, quant,
                                           kiln_dnnl_engine(), &pd);
  }
  /* An addend in its own buffer is read by a binary post-op where oneDNN
   * runs one as well: the sum post-op needs it copied into dst first, a
   * pass over dst's bytes (on ResNet-50 about 4% of the time). */
  if (status == dnnl_success && (flags & KILN_DNNL_CONV_ADDEND) &&
      !addendInDst) {
    dnnl_primitive_desc_t binary = binaryAddendDesc(desc, entry, pd);
    if (binary) {
      dnnl_primitive_desc_destroy(pd);
      pd = binary;
      entry->binaryAddend = 1;
    }
  }
  if (status == dnnl_unimplemented && type != dnnl_f32) {
    free(entry);
    return NULL;
  }
  if (status)
    fail("creating the primitive descriptor", status);
  if (window) {
    dnnl_query_t queries[3] = {dnnl_query_src_md, dnnl_query_weights_md,
                               dnnl_query_dst_md};
    for (int i = 0; i < 3; ++i) {
      entry->inner[i] = *dnnl_primitive_desc_query_md(pd, queries[i], 0);
      if (dnnl_memory_desc_equal(&entry->inner[i], &entry->plain[i]))
        continue;
      const dnnl_memory_desc_t *from = i < 2 ? &entry->plain[i] : &entry->inner[i];
      const dnnl_memory_desc_t *to = i < 2 ? &entry->inner[i] : &entry->plain[i];
      entry->reorders[i] = reorderPrimitive(from, to);
      entry->staged[i] =
          allocateStaged(dnnl_memory_desc_get_size(&entry->inner[i]));
    }
    if ((flags & KILN_DNNL_CONV_ADDEND) && !entry->binaryAddend &&
        entry->reorders[2])
      entry->addendReorder =
          reorderPrimitive(&entry->plain[2], &entry->inner[2]);
    if ((flags & KILN_DNNL_CONV_CONSTANT_WEIGHT) && entry->reorders[1]) {
      kiln_dnnl_reorder_now("convolution", entry->reorders[1],
                            &entry->plain[1], weights, &entry->inner[1],
                            entry->staged[1]);
      entry->constantWeights = 1;
    }
  }
  readWeightMagnitude(entry, flags, weights, type);
  kiln_dnnl_scratchpad_init(&entry->scratchpad, "convolution", pd);
  status = dnnl_primitive_create(&entry->primitive, pd);
  dnnl_primitive_desc_destroy(pd);
  if (status)
    fail("dnnl_primitive_create", status);
  return entry;
}

static void execute(dnnl_primitive_t primitive, dnnl_stream_t stream,
                    int count, const dnnl_exec_arg_t *args) {
  dnnl_status_t status = dnnl_primitive_execute(primitive, stream, count, args);
  if (status)
    fail("dnnl_primitive_execute", status);
}

/* The primitive of the call site `slot` for `desc` with `flags` (the
 * descriptor's, or fewer), created by its first call (a quantized one
 * with the scales and zero point of `quant`, which are constants of the
 * module). */
static CachedConv *cached(void **slot, const int64_t *desc, int64_t flags,
                          const void *weights, int addendInDst,
                          const KilnDnnlConvQuant *quant) {
  CachedConv *entry = __atomic_load_n((CachedConv **)slot, __ATOMIC_ACQUIRE);
  if (!entry) {
    CachedConv *created =
        (flags & KILN_DNNL_CONV_INT8) && !kiln_dnnl_int8_dot_products()
            ? NULL
            : create(desc, flags, weights,
                     flags & KILN_DNNL_CONV_BFLOAT16 ? dnnl_bf16 : dnnl_f32,
                     addendInDst, quant);
    if (!created) {
      /* A widened quantized call applies its bias, ReLU and requantization
       * itself (kiln_dnnl_conv_int8). */
      if (flags & KILN_DNNL_CONV_INT8)
        flags &= ~(int64_t)(KILN_DNNL_CONV_INT8 | KILN_DNNL_CONV_SIGNED_SRC |
                            KILN_DNNL_CONV_INT8_DST |
                            KILN_DNNL_CONV_SIGNED_DST | KILN_DNNL_CONV_BIAS |
                            KILN_DNNL_CONV_RELU);
      /* Widened copies are made per call: no constant weights to keep. */
      created = create(desc, flags & ~(int64_t)KILN_DNNL_CONV_CONSTANT_WEIGHT,
                       NULL, dnnl_f32, /*addendInDst=*/0, /*quant=*/NULL);
      created->widened = 1;
    }
    entry = (CachedConv *)kiln_dnnl_publish(slot, &published, &created->link);
    if (entry != created)
      destroyEntry(created);
  }
  return entry;
}

/* Runs `entry` on buffers of the types it was created for. */
static void run(CachedConv *entry, const void *src, const void *weights,
                const float *bias, const void *addend, void *dst) {
  if (entry->winograd) {
    kiln_winograd_conv_run(entry->winograd, src, weights, bias, addend, dst);
    return;
  }
  dnnl_engine_t cpu = kiln_dnnl_engine();
  /* The buffers a call reorders into: the constant weights are not. */
  int reordered[3] = {entry->reorders[0] != NULL,
                      entry->reorders[1] && !entry->constantWeights,
                      entry->reorders[2] != NULL};
  int staging = reordered[0] || reordered[1] || reordered[2];
  int own = staging && __atomic_exchange_n(&entry->busy, 1, __ATOMIC_ACQUIRE);
  void *user[3] = {kiln_dnnl_handle(src), kiln_dnnl_handle(weights), dst};
  void *inner[3];
  dnnl_memory_t userMemory[3], innerMemory[3];
  dnnl_status_t status;
  for (int i = 0; i < 3; ++i) {
    inner[i] = user[i];
    if (entry->reorders[i])
      inner[i] = own && reordered[i]
                     ? allocateStaged(dnnl_memory_desc_get_size(&entry->inner[i]))
                     : entry->staged[i];
    if ((status = dnnl_memory_create(&userMemory[i], &entry->plain[i], cpu,
                                     user[i])) ||
        (status = dnnl_memory_create(&innerMemory[i], &entry->inner[i], cpu,
                                     inner[i])))
      fail("dnnl_memory_create", status);
  }
  dnnl_stream_t stream;
  if ((status = dnnl_stream_create(&stream, cpu, dnnl_stream_default_flags)))
    fail("dnnl_stream_create", status);
  for (int i = 0; i < 2; ++i)
    if (reordered[i]) {
      dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, userMemory[i]},
                                 {DNNL_ARG_TO, innerMemory[i]}};
      execute(entry->reorders[i], stream, 2, args);
    }
  /* The binary post-op reads the addend from its buffer, which must not be
   * dst's (oneDNN may keep partial sums in dst): the site's first call had
   * them apart, so this is only a guard. */
  void *ownAddend = NULL;
  dnnl_memory_t addendMemory = NULL;
  if (entry->binaryAddend) {
    const void *from = addend;
    if (addend == dst) {
      size_t bytes = dnnl_memory_desc_get_size(&entry->plain[2]);
      ownAddend = allocateStaged(bytes);
      memcpy(ownAddend, addend, bytes);
      from = ownAddend;
    }
    if ((status = dnnl_memory_create(&addendMemory, &entry->plain[2], cpu,
                                     kiln_dnnl_handle(from))))
      fail("dnnl_memory_create", status);
  }
  /* The sum post-op adds what dst's buffer holds: the addend. */
  if ((entry->flags & KILN_DNNL_CONV_ADDEND) && !entry->binaryAddend) {
    if (entry->addendReorder) {
      dnnl_memory_t addendMemory;
      if ((status = dnnl_memory_create(&addendMemory, &entry->plain[2], cpu,
                                       kiln_dnnl_handle(addend))))
        fail("dnnl_memory_create", status);
      dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, addendMemory},
                                 {DNNL_ARG_TO, innerMemory[2]}};
      execute(entry->addendReorder, stream, 2, args);
      if ((status = dnnl_stream_wait(stream)))
        fail("dnnl_stream_wait", status);
      dnnl_memory_destroy(addendMemory);
    } else if (addend != dst) {
      memmove(dst, addend, dnnl_memory_desc_get_size(&entry->plain[2]));
    }
  }
  dnnl_memory_t biasMemory = NULL;
  if ((entry->flags & KILN_DNNL_CONV_BIAS) &&
      (status = dnnl_memory_create(&biasMemory, &entry->bias, cpu,
                                   kiln_dnnl_handle(bias))))
    fail("dnnl_memory_create", status);
  dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, innerMemory[0]},
                             {DNNL_ARG_WEIGHTS, innerMemory[1]},
                             {DNNL_ARG_DST, innerMemory[2]}};
  int count = 3;
  if (biasMemory)
    args[count++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, biasMemory};
  if (addendMemory)
    args[count++] = (dnnl_exec_arg_t){
        DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, addendMemory};
  void *ownPad;
  dnnl_memory_t padMemory =
      kiln_dnnl_scratchpad_take(&entry->scratchpad, "convolution", &ownPad);
  if (padMemory)
    args[count++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, padMemory};
  execute(entry->primitive, stream, count, args);
  if (entry->reorders[2]) {
    dnnl_exec_arg_t back[2] = {{DNNL_ARG_FROM, innerMemory[2]},
                               {DNNL_ARG_TO, userMemory[2]}};
    execute(entry->reorders[2], stream, 2, back);
  }
  if ((status = dnnl_stream_wait(stream)))
    fail("dnnl_stream_wait", status);
  dnnl_stream_destroy(stream);
  kiln_dnnl_scratchpad_give(&entry->scratchpad, padMemory, ownPad);
  if (biasMemory)
    dnnl_memory_destroy(biasMemory);
  if (addendMemory)
    dnnl_memory_destroy(addendMemory);
  free(ownAddend);
  for (int i = 0; i < 3; ++i) {
    dnnl_memory_destroy(userMemory[i]);
    dnnl_memory_destroy(innerMemory[i]);
    if (own && reordered[i])
      free(inner[i]);
  }
  if (staging && !own)
    __atomic_store_n(&entry->busy, 0, __ATOMIC_RELEASE);
}

/* Whether the fused activation of `entry` (or its Winograd kernel) gives
 * kiln's values on these operands: all finite, and no sum that can
 * overflow (see the top; for Winograd, no transformed value either). If
 * so, `*sums` is a bound on the magnitude of every sum (before the
 * activation). |src| is taken from `srcBound` (an earlier call's bound on
 * it: +inf where it had none) where that suffices, else read from src.
 * src and the weights are of `type` (f32 or bf16: the call's, whatever
 * the entry runs on), the bias f32, the addend f32 or, with a bf16 dst,
 * bf16. */
static int activationIsExact(const CachedConv *entry, const int64_t *desc,
                             dnnl_data_type_t type, const void *src,
                             const void *weights, const float *bias,
                             const void *addend, const float *srcBound,
                             double *sums) {
  const uint32_t infinite = 0x7f800000u;
  dnnl_data_type_t addendType = bf16Dst(entry->flags) ? dnnl_bf16 : dnnl_f32;
  uint32_t w = entry->knownWeightMagnitude
                   ? entry->weightMagnitude
                   : largestMagnitudeOf(type, &entry->plain[1], weights);
  uint32_t b = (entry->flags & KILN_DNNL_CONV_BIAS)
                   ? largestMagnitudeOf(dnnl_f32, &entry->bias, bias)
                   : 0;
  uint32_t a = (entry->flags & KILN_DNNL_CONV_ADDEND)
                   ? largestMagnitudeOf(addendType, &entry->plain[2], addend)
                   : 0;
  if (w >= infinite || b >= infinite || a >= infinite)
    return 0;
  /* Terms per sum: C / G input channels times the kernel's size. */
  double terms = (double)desc[3] / (double)desc[1];
  for (int64_t d = 0; d < desc[0]; ++d)
    terms *= (double)desc[KILN_DNNL_CONV_HEADER_SIZE + desc[0] + d];
  double scale = (double)magnitudeValue(w) * terms;
  if (entry->flags & (KILN_DNNL_CONV_WINOGRAD | KILN_DNNL_CONV_OWN_WINOGRAD))
    scale *= KILN_DNNL_CONV_WINOGRAD_GROWTH;
  double rest = (double)magnitudeValue(b) + magnitudeValue(a);
  /* An earlier call's bound, where it is finite and small enough. */
  double s = srcBound && *srcBound <= FLT_MAX ? *srcBound : INFINITY;
  if (!(s * scale + rest <= FLT_MAX / 2)) {
    uint32_t bits = largestMagnitudeOf(type, &entry->plain[0], src);
    if (bits >= infinite)
      return 0;
    s = magnitudeValue(bits);
  }
  /* Rounding can carry a float sum above the exact one by a factor of up
   * to (1 + eps)^terms. */
  *sums = (s * scale + rest) * (1 + (terms + 2) * FLT_EPSILON);
  return *sums <= FLT_MAX / 2;
}

/* A bound on the magnitude of the activation of `flags` of values whose
 * magnitudes are at most `sums`, rounded up to a float; with a bf16 dst,
 * of those values rounded to bf16 (up to 2^-8 of them larger). */
static float activatedBound(int64_t flags, const int64_t *desc, double sums) {
  double bound = sums;
  if (flags & KILN_DNNL_CONV_CLIP) {
    /* The clip is monotonic: its results lie between those of -sums and
     * sums. */
    float bounds[2];
    kiln_dnnl_conv_clip_bounds(desc, bounds);
    double low = fmax(bounds[0], fmin(bounds[1], -sums));
    double high = fmax(bounds[0], fmin(bounds[1], sums));
    bound = fmax(fabs(low), fabs(high));
  }
  if (bf16Dst(flags))
    bound *= 1 + 1.0 / 256;
  float rounded = (float)bound;
  return (double)rounded < bound ? nextafterf(rounded, INFINITY) : rounded;
}

/* f32 -> bf16, rounding to nearest even; a NaN stays a (quiet) NaN. */
static uint16_t narrow(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((bits >> 16) | 0x40);
  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16);
}

/* The activation of `flags` applied to dst's `count` values in place, f32
 * or bf16 (`type`; each bf16 value widened, activated and rounded back). */
static void activate(int64_t flags, const int64_t *desc, dnnl_data_type_t type,
                     void *dst, size_t count) {
  float bounds[2] = {0, 0};
  if (flags & KILN_DNNL_CONV_CLIP)
    kiln_dnnl_conv_clip_bounds(desc, bounds);
  if (type == dnnl_bf16) {
    uint16_t *values = dst;
    for (size_t i = 0; i < count; ++i)
      values[i] = narrow(kiln_dnnl_conv_activated(
          flags, bounds, kiln_dnnl_widen_bf16(values[i])));
  } else {
    float *values = dst;
    for (size_t i = 0; i < count; ++i)
      values[i] = kiln_dnnl_conv_activated(flags, bounds, values[i]);
  }
}

/* uint8 (or int8) src minus its zero point, convolved with int8 weights in
 * int32, plus the bias, times each output channel's scale, a ReLU where
 * the flags say, into f32 dst or requantized into 8-bit dst (the dst zero
 * point added, rounded to even, saturated): oneDNN's int8 kernels with
 * VNNI's vpdpbusd. `quant` holds the O scales, then the src and dst zero
 * points (as floats: they are small integers); it and the bias are
 * constants of the module, read by the site's first call. On a CPU
 * without VNNI (kiln_dnnl_int8_dot_products) the call widens src minus its zero point
 * and the weights to f32, runs the f32 primitive and applies the rest
 * itself: the same sums, exact in f32 up to 2^24. */
KILN_HIDDEN void kiln_dnnl_conv_int8(void **slot, const int64_t *desc,
                                     const void *src, const int8_t *weights,
                                     const float *bias, const float *quant,
                                     void *dst) {
  int64_t channels = desc[4], flags = desc[5];
  KilnDnnlConvQuant parameters = {quant, (int32_t)quant[channels],
                                  (int32_t)quant[channels + 1]};
  CachedConv *entry =
      cached(slot, desc, flags, weights, /*addendInDst=*/0, &parameters);
  if (!entry->widened) {
    run(entry, src, weights, bias, /*addend=*/NULL, dst);
    return;
  }
  int isSigned = (flags & KILN_DNNL_CONV_SIGNED_SRC) != 0;
  size_t srcCount = dnnl_memory_desc_get_size(&entry->plain[0]) / sizeof(float);
  size_t weightCount =
      dnnl_memory_desc_get_size(&entry->plain[1]) / sizeof(float);
  size_t dstCount = dnnl_memory_desc_get_size(&entry->plain[2]) / sizeof(float);
  float *wideSrc = allocateStaged(srcCount * sizeof(float));
  float *wideWeights = allocateStaged(weightCount * sizeof(float));
  float *sums = (flags & KILN_DNNL_CONV_INT8_DST)
                    ? allocateStaged(dstCount * sizeof(float))
                    : (float *)dst;
  for (size_t i = 0; i < srcCount; ++i)
    wideSrc[i] = (float)((isSigned ? (int)((const int8_t *)src)[i]
                                   : (int)((const uint8_t *)src)[i]) -
                         parameters.srcZeroPoint);
  for (size_t i = 0; i < weightCount; ++i)
    wideWeights[i] = (float)weights[i];
  run(entry, wideSrc, wideWeights, /*bias=*/NULL, /*addend=*/NULL, sums);
  /* dst [N, O, E...] or, channels-last, [N, E..., O]. */
  size_t positions = dstCount / (size_t)(desc[2] * channels);
  int last = (flags & KILN_DNNL_CONV_CHANNELS_LAST_DST) != 0;
  for (size_t i = 0; i < dstCount; ++i) {
    size_t o = last ? i % channels : (i / positions) % channels;
    float value = sums[i];
    if (flags & KILN_DNNL_CONV_BIAS)
      value += bias[o];
    value *= quant[o];
    if ((flags & KILN_DNNL_CONV_RELU) && value < 0)
      value = 0;
    if (!(flags & KILN_DNNL_CONV_INT8_DST)) {
      sums[i] = value;
      continue;
    }
    float low = (flags & KILN_DNNL_CONV_SIGNED_DST) ? -128.0f : 0.0f;
    float rounded = nearbyintf(value + (float)parameters.dstZeroPoint);
    rounded = rounded < low ? low : rounded > low + 255 ? low + 255 : rounded;
    if (flags & KILN_DNNL_CONV_SIGNED_DST)
      ((int8_t *)dst)[i] = (int8_t)rounded;
    else
      ((uint8_t *)dst)[i] = (uint8_t)rounded;
  }
  free(wideSrc);
  free(wideWeights);
  if (sums != dst)
    free(sums);
}

/* A widened f32 copy of the `bytes` bytes of f32 data that `md` describes,
 * read from the bf16 values at `from`. */
static float *widenedCopy(const dnnl_memory_desc_t *md, const uint16_t *from) {
  size_t count = dnnl_memory_desc_get_size(md) / sizeof(float);
  float *copy = allocateStaged(count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    copy[i] = kiln_dnnl_widen_bf16(from[i]);
  return copy;
}

/* `entry` run on bf16 src and weights and a dst of the call's type (f32
 * with KILN_DNNL_CONV_F32_DST, else bf16; the addend is dst's): on
 * oneDNN's bf16 kernels, or where it has none for this CPU (`widened`) on
 * its f32 ones over widened copies, dst rounded to bf16 afterwards. */
static void runBf16(CachedConv *entry, int64_t flags, const uint16_t *src,
                    const uint16_t *weights, const float *bias,
                    const void *addend, void *dst) {
  if (!entry->widened) {
    run(entry, src, weights, bias, addend, dst);
    return;
  }
  int f32Dst = !bf16Dst(flags);
  float *wideSrc = widenedCopy(&entry->plain[0], src);
  float *wideWeights = widenedCopy(&entry->plain[1], weights);
  float *wideAddend =
      addend && !f32Dst ? widenedCopy(&entry->plain[2], addend) : NULL;
  size_t count = dnnl_memory_desc_get_size(&entry->plain[2]) / sizeof(float);
  float *wideDst = f32Dst ? dst : allocateStaged(count * sizeof(float));
  run(entry, wideSrc, wideWeights, bias, wideAddend ? wideAddend : addend,
      wideDst);
  if (!f32Dst)
    for (size_t i = 0; i < count; ++i)
      ((uint16_t *)dst)[i] = narrow(wideDst[i]);
  free(wideSrc);
  free(wideWeights);
  free(wideAddend);
  if (!f32Dst)
    free(wideDst);
}

/* A call of kiln_dnnl_conv_f32 or kiln_dnnl_conv_bf16 (src and weights of
 * `type`): the site's primitive where its activation (or Winograd kernel)
 * is exact on these operands, else the site's primitive without it and
 * kiln's activation applied here to dst's values. */
static void convolve(void **slot, const int64_t *desc, dnnl_data_type_t type,
                     const void *src, const void *weights, const float *bias,
                     const void *addend, void *dst, const float *srcBound,
                     float *dstBound) {
  int addendInDst = addend && addend == dst;
  CachedConv *entry =
      cached(slot, desc, desc[5], weights, addendInDst, /*quant=*/NULL);
  int64_t flags = entry->flags;
  int64_t guarded = flags & KILN_DNNL_CONV_GUARDED;
  if (!(flags & KILN_DNNL_CONV_SRC_BOUND))
    srcBound = NULL;
  if (!(flags & KILN_DNNL_CONV_DST_BOUND))
    dstBound = NULL;
  double sums;
  float bound = INFINITY;
  if (guarded && !activationIsExact(entry, desc, type, src, weights, bias,
                                    addend, srcBound, &sums)) {
    entry = cached(&entry->exact, desc, flags & ~guarded, weights, addendInDst,
                   /*quant=*/NULL);
  } else if (guarded) {
    bound = activatedBound(flags, desc, sums);
    guarded = 0;
  }
  if (type == dnnl_bf16)
    runBf16(entry, flags, src, weights, bias, addend, dst);
  else
    run(entry, src, weights, bias, addend, dst);
  /* The direct sums: the activation applied here. */
  if (guarded)
    activate(flags, desc, bf16Dst(flags) ? dnnl_bf16 : dnnl_f32, dst,
             elementsOf(&entry->plain[2]));
  if (dstBound)
    *dstBound = bound;
}

/* `srcBound`, with KILN_DNNL_CONV_SRC_BOUND: an earlier call's bound on
 * |src|; `dstBound`, with KILN_DNNL_CONV_DST_BOUND: where this call writes
 * its bound on |dst| (DnnlConvAbi.h). Null where the flags say none. */
KILN_HIDDEN void kiln_dnnl_conv_f32(void **slot, const int64_t *desc,
                                    const float *src, const float *weights,
                                    const float *bias, const float *addend,
                                    float *dst, const float *srcBound,
                                    float *dstBound) {
  convolve(slot, desc, dnnl_f32, src, weights, bias, addend, dst, srcBound,
           dstBound);
}

/* bf16 src and weights, accumulating in f32; the epilogue (bias, addend,
 * ReLU or clip) on the f32 sums, and dst f32 or the result rounded once to
 * bf16 (KILN_DNNL_CONV_F32_DST). The activations take the guard of
 * kiln_dnnl_conv_f32 (the magnitudes of the bf16 operands, the bounds);
 * where it fails, the site's primitive without the activation runs and the
 * activation is applied here, to dst's values. */
KILN_HIDDEN void kiln_dnnl_conv_bf16(void **slot, const int64_t *desc,
                                     const uint16_t *src,
                                     const uint16_t *weights, const float *bias,
                                     const void *addend, void *dst,
                                     const float *srcBound, float *dstBound) {
  convolve(slot, desc, dnnl_bf16, src, weights, bias, addend, dst, srcBound,
           dstBound);
}
