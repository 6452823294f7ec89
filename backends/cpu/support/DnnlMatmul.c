/*===- DnnlMatmul.c - Products through oneDNN's matmul primitive -----------===*\
 *
 * Linked (in the static, position-independent kiln_dnnl_support archive)
 * into the modules whose code calls kiln_dnnl_matmul, which
 * kiln-cpu-matmul-to-dnnl emits for the products that oneDNN's matmul
 * primitive (its brgemm kernels: AMX and AVX-512 BF16 for bf16) runs
 * faster than dnnl_sgemm and dnnl_gemm_bf16bf16f32 do. Plain C on oneDNN's
 * C API: no compiler code, no LLVM. The call's contract is DnnlMatmulAbi.h.
 *
 * Creating a primitive costs far more than a small product, so each call
 * site owns a cache slot holding the primitive its first call created,
 * together with the sizes and strides it was made for; the module destroys
 * them when it is unloaded. Two threads that call a site for the first
 * time at once may both create one; the first to publish it
 * (kiln_dnnl_publish, DnnlSupport.c) wins and the other destroys its own.
 * Executing one primitive from several threads at once is safe in oneDNN;
 * streams and memory objects are made per call.
 *
 * Every call still computes its product when the primitive cannot:
 *   - where oneDNN has no implementation of the product, or only its
 *     reference one (slow loops), the site caches that and runs the GEMM
 *     that the product would otherwise have called, dnnl_sgemm or
 *     dnnl_gemm_bf16bf16f32, one per product of the batch (int8 products:
 *     plain loops, below; bf16 products on a CPU without AVX-512, where
 *     oneDNN has no bf16 GEMM: dnnl_sgemm on widened copies);
 *   - a call whose sizes or strides differ from the cached primitive's
 *     (the same code reached with other views) runs that GEMM too.
 * Both compute the same sums as the primitive, in a possibly different
 * order.
 *
\*===----------------------------------------------------------------------===*/

#include "DnnlMatmulAbi.h"
#include "DnnlSupport.h"

#include <dnnl.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* oneDNN exports it; its 2.x dnnl.h does not declare it. */
dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M,
                                    dnnl_dim_t N, dnnl_dim_t K, float alpha,
                                    const uint16_t *A, dnnl_dim_t lda,
                                    const uint16_t *B, dnnl_dim_t ldb,
                                    float beta, float *C, dnnl_dim_t ldc);

/* Whether oneDNN's int8 kernels compute exact int32 sums on this CPU:
 * with VNNI (or AMX) they do; before it they multiply with vpmaddubsw,
 * which saturates a pair's sum at 16 bits (oneDNN's "int8 computation
 * nuances"), so a product of large bytes would come out wrong. Read per
 * call site's first call: oneDNN's effective ISA honours ONEDNN_MAX_CPU_ISA. */
static int hasExactInt8(void) {
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & dnnl_cpu_isa_avx512_core_vnni) ==
             dnnl_cpu_isa_avx512_core_vnni ||
         (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

/* What a primitive is made for: the call's flags, sizes and strides (in
 * elements; the batch strides 0 for a single product). */
typedef struct MatmulKey {
  int64_t flags, batch, m, n, k;
  int64_t lda, strideA, ldb, strideB, ldc, strideC;
} MatmulKey;

typedef struct CachedMatmul {
  KilnDnnlEntry link; /* first: the module's published entries */
  MatmulKey key;
  /* Null where the site runs the GEMM instead (see above). */
  dnnl_primitive_t primitive;
  /* bias: a 1 x N (1 x 1 x N for a batch) row, with KILN_DNNL_MATMUL_BIAS. */
  dnnl_memory_desc_t a, b, c, bias;
  /* A constant B in the primitive's layout (`packed`), reordered once;
   * null where B is read as the caller passes it. */
  void *packedB;
  dnnl_memory_desc_t packed;
  /* The primitive's scratchpad (DnnlSupport.h). */
  KilnDnnlScratchpad scratchpad;
} CachedMatmul;

/* Every entry this module published, destroyed when it is unloaded
 * (before the engine: DnnlSupport.c). */
static KilnDnnlEntry *published;

static void destroyEntry(CachedMatmul *entry) {
  if (entry->primitive)
    dnnl_primitive_destroy(entry->primitive);
  free(entry->packedB);
  free(entry->scratchpad.buffer);
  free(entry);
}

__attribute__((destructor)) static void destroyPublished(void) {
  KilnDnnlEntry *link = __atomic_exchange_n(&published, NULL, __ATOMIC_ACQ_REL);
  while (link) {
    KilnDnnlEntry *next = link->next;
    destroyEntry((CachedMatmul *)link);
    link = next;
  }
}

static void fail(const char *what, dnnl_status_t status) {
  kiln_dnnl_fail("matmul", what, status);
}

/* A [batch,] rows x cols matrix of `type` whose element (r, c) of product
 * p is at p * batchStride + r * rowStride + c * colStride. */
static dnnl_status_t describe(dnnl_memory_desc_t *md, int64_t batch,
                              int64_t rows, int64_t cols, int64_t rowStride,
                              int64_t colStride, int64_t batchStride,
                              dnnl_data_type_t type) {
  dnnl_dims_t dims, strides;
  int rank = 0;
  if (batch > 1) {
    dims[rank] = batch;
    strides[rank++] = batchStride;
  }
  dims[rank] = rows;
  strides[rank++] = rowStride;
  dims[rank] = cols;
  strides[rank++] = colStride;
  return dnnl_memory_desc_init_by_strides(md, rank, dims, type, strides);
}

/* The entry for `key`: a primitive, or none where oneDNN has only its
 * reference implementation or none at all. */
/* The bytes of `b` (laid out as `md`) with the top bit flipped, in a new
 * buffer: uint8 B as the int8 B - 128, which oneDNN's int8 kernels take
 * (the caller adds 128 times A's row sums back). */
static void *flippedBytes(const dnnl_memory_desc_t *md, const void *b) {
  size_t size = dnnl_memory_desc_get_size(md);
  uint8_t *flipped = kiln_dnnl_allocate("matmul", size);
  const uint8_t *from = b;
  for (size_t i = 0; i < size; ++i)
    flipped[i] = from[i] ^ 0x80;
  return flipped;
}

/* Reorders `b` (laid out as entry->b) into entry->packed, once. */
static void packB(CachedMatmul *entry, const void *b) {
  entry->packedB = kiln_dnnl_allocate(
      "matmul", dnnl_memory_desc_get_size(&entry->packed));
  dnnl_primitive_t reorder =
      kiln_dnnl_reorder_primitive("matmul", &entry->b, &entry->packed);
  void *flipped = (entry->key.flags & KILN_DNNL_MATMUL_UNSIGNED_B)
                      ? flippedBytes(&entry->b, b)
                      : NULL;
  kiln_dnnl_reorder_now("matmul", reorder, &entry->b, flipped ? flipped : b,
                        &entry->packed, entry->packedB);
  free(flipped);
  dnnl_primitive_destroy(reorder);
}

/* The site's entry for `key`; `b` is the first call's B, packed where the
 * key's flags mark it constant. */
static CachedMatmul *create(const MatmulKey *key, const void *b) {
  CachedMatmul *entry = calloc(1, sizeof(CachedMatmul));
  if (!entry)
    fail("allocating a cache entry", dnnl_out_of_memory);
  entry->key = *key;
  /* Empty products and strides oneDNN may not take: the GEMM. */
  if (key->m <= 0 || key->n <= 0 || key->k <= 0 || key->lda <= 0 ||
      key->ldb <= 0 || key->ldc <= 0 ||
      (key->batch > 1 &&
       (key->strideA <= 0 || key->strideB <= 0 || key->strideC <= 0)))
    return entry;
  int int8 = (key->flags & KILN_DNNL_MATMUL_INT8) != 0;
  if (int8 && !hasExactInt8())
    return entry;
  dnnl_data_type_t type =
      (key->flags & KILN_DNNL_MATMUL_BFLOAT16) ? dnnl_bf16 : dnnl_f32;
  dnnl_data_type_t typeA = type, typeC = dnnl_f32;
  if (int8) {
    type = dnnl_s8;
    typeA = (key->flags & KILN_DNNL_MATMUL_UNSIGNED_A) ? dnnl_u8 : dnnl_s8;
    typeC = dnnl_s32;
  }
  int transposeA = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_A) != 0;
  int transposeB = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_B) != 0;
  if (describe(&entry->a, key->batch, key->m, key->k,
               transposeA ? 1 : key->lda, transposeA ? key->lda : 1,
               key->strideA, typeA) ||
      describe(&entry->b, key->batch, key->k, key->n,
               transposeB ? 1 : key->ldb, transposeB ? key->ldb : 1,
               key->strideB, type) ||
      describe(&entry->c, key->batch, key->m, key->n, key->ldc, 1,
               key->strideC, typeC))
    return entry;
  /* A constant B in the layout of oneDNN's choice (its kernels' packed
   * form): a product of few rows reads all of B on every call, and from
   * the packed form each thread reads the same part of it on every call,
   * which stays in its cache (an LSTM step's 1x512 by 512x2048 product on
   * two threads: 83 us through sgemm, 37 us packed). */
  int constantB = (key->flags & KILN_DNNL_MATMUL_CONSTANT_B) != 0;
  entry->packed = entry->b;
  if (constantB &&
      dnnl_memory_desc_init_by_tag(&entry->packed, entry->b.ndims,
                                   entry->b.dims, type, dnnl_format_tag_any))
    return entry;
  int bias = (key->flags & KILN_DNNL_MATMUL_BIAS) != 0;
  if (bias) {
    dnnl_dims_t dims, strides;
    int rank = entry->c.ndims;
    for (int i = 0; i < rank; ++i) {
      dims[i] = 1;
      strides[i] = key->n;
    }
    dims[rank - 1] = key->n;
    strides[rank - 1] = 1;
    if (dnnl_memory_desc_init_by_strides(&entry->bias, rank, dims, dnnl_f32,
                                         strides))
      return entry;
  }
  dnnl_matmul_desc_t matmul;
  if (dnnl_matmul_desc_init(&matmul, &entry->a, &entry->packed,
                            bias ? &entry->bias : NULL, &entry->c))
    return entry;
  /* C += A B: a sum post-op adds what C holds (to the product plus the
   * bias, where there is one). */
  dnnl_primitive_attr_t attr = NULL;
  dnnl_status_t status;
  /* Not for int8: the sum post-op adds the old C in f32 and saturates,
   * which is not int32's wrapping sum (runPrimitive adds it instead). */
  if ((status = dnnl_primitive_attr_create(&attr)) ||
      (status = dnnl_primitive_attr_set_scratchpad_mode(
           attr, dnnl_scratchpad_mode_user)))
    fail("describing the product", status);
  if ((key->flags & KILN_DNNL_MATMUL_ACCUMULATE) && !int8) {
    dnnl_post_ops_t ops;
    if ((status = dnnl_post_ops_create(&ops)) ||
        (status = dnnl_post_ops_append_sum(ops, 1.0f)) ||
        (status = dnnl_primitive_attr_set_post_ops(attr, ops)))
      fail("describing the accumulation", status);
    dnnl_post_ops_destroy(ops);
  }
  dnnl_primitive_desc_t pd;
  status = dnnl_primitive_desc_create(&pd, &matmul, attr, kiln_dnnl_engine(),
                                      NULL);
  dnnl_primitive_attr_destroy(attr);
  if (status)
    return entry;
  const char *implementation = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                &implementation) == dnnl_success &&
      implementation && strncmp(implementation, "ref", 3) != 0 &&
      (status = dnnl_primitive_create(&entry->primitive, pd)))
    fail("dnnl_primitive_create", status);
  if (entry->primitive)
    kiln_dnnl_scratchpad_init(&entry->scratchpad, "matmul", pd);
  if (entry->primitive && constantB) {
    entry->packed =
        *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (dnnl_memory_desc_equal(&entry->packed, &entry->b))
      entry->packed = entry->b;
    else
      packB(entry, b);
  }
  dnnl_primitive_desc_destroy(pd);
  return entry;
}

/* The entry of the call site `slot`, created by its first call. */
static CachedMatmul *cached(void **slot, const MatmulKey *key,
                            const void *b) {
  CachedMatmul *entry = __atomic_load_n((CachedMatmul **)slot,
                                        __ATOMIC_ACQUIRE);
  if (entry)
    return entry;
  CachedMatmul *created = create(key, b);
  entry = (CachedMatmul *)kiln_dnnl_publish(slot, &published, &created->link);
  if (entry != created)
    destroyEntry(created);
  return entry;
}

/* An int8 (or, with `isUnsigned`, uint8) byte widened to 32 bits, in
 * uint32 where sums wrap with defined behaviour. */
static inline uint32_t widenByte(uint8_t byte, int isUnsigned) {
  return isUnsigned ? (uint32_t)byte : (uint32_t)(int8_t)byte;
}

/* C += 128 * (the sum of row i of A) in every C[i, j]: what a product of
 * uint8 B run as int8 B - 128 lacks. */
static void addUnsignedBShare(const MatmulKey *key, const void *a,
                              int32_t *c) {
  int transposeA = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_A) != 0;
  int unsignedA = (key->flags & KILN_DNNL_MATMUL_UNSIGNED_A) != 0;
  for (int64_t p = 0; p < key->batch; ++p) {
    const uint8_t *pa = (const uint8_t *)a + p * key->strideA;
    for (int64_t i = 0; i < key->m; ++i) {
      uint32_t sum = 0;
      for (int64_t q = 0; q < key->k; ++q) {
        uint8_t byte = pa[transposeA ? q * key->lda + i : i * key->lda + q];
        sum += widenByte(byte, unsignedA);
      }
      uint32_t *row = (uint32_t *)(c + p * key->strideC + i * key->ldc);
      for (int64_t j = 0; j < key->n; ++j)
        row[j] += 128u * sum;
    }
  }
}

/* C += product, both laid out as `key` says C is, in wrapping int32. */
static void addInt32(const MatmulKey *key, int32_t *c, const int32_t *product) {
  for (int64_t p = 0; p < key->batch; ++p)
    for (int64_t i = 0; i < key->m; ++i) {
      int64_t row = p * key->strideC + i * key->ldc;
      uint32_t *to = (uint32_t *)c + row;
      const uint32_t *from = (const uint32_t *)product + row;
      for (int64_t j = 0; j < key->n; ++j)
        to[j] += from[j];
    }
}

/* Runs the primitive of `entry` (or of a copy with fewer flags) on the
 * scratchpad of the call site's entry. */
static void runPrimitive(const CachedMatmul *entry,
                         KilnDnnlScratchpad *scratchpad, const void *a,
                         const void *b, void *c, const float *bias) {
  /* uint8 B: the product with B - 128 (flipped bytes; packed ones were
   * flipped when packed), plus 128 times A's row sums. */
  if ((entry->key.flags & KILN_DNNL_MATMUL_UNSIGNED_B) &&
      !(entry->key.flags & KILN_DNNL_MATMUL_ACCUMULATE)) {
    void *flipped = entry->packedB ? NULL : flippedBytes(&entry->b, b);
    CachedMatmul asSigned = *entry;
    asSigned.key.flags &= ~(int64_t)KILN_DNNL_MATMUL_UNSIGNED_B;
    runPrimitive(&asSigned, scratchpad, a, flipped ? flipped : b, c, bias);
    free(flipped);
    addUnsignedBShare(&entry->key, a, c);
    return;
  }
  /* int8 C += A B: the product into a buffer of C's layout, then added. */
  if ((entry->key.flags & KILN_DNNL_MATMUL_INT8) &&
      (entry->key.flags & KILN_DNNL_MATMUL_ACCUMULATE)) {
    void *product = kiln_dnnl_allocate(
        "matmul", dnnl_memory_desc_get_size(&entry->c));
    CachedMatmul overwrite = *entry;
    overwrite.key.flags &= ~(int64_t)KILN_DNNL_MATMUL_ACCUMULATE;
    runPrimitive(&overwrite, scratchpad, a, b, product, bias);
    addInt32(&entry->key, c, product);
    free(product);
    return;
  }
  dnnl_engine_t cpu = kiln_dnnl_engine();
  int count = (entry->key.flags & KILN_DNNL_MATMUL_BIAS) ? 4 : 3;
  dnnl_memory_t memory[4];
  dnnl_status_t status;
  if ((status = dnnl_memory_create(&memory[0], &entry->a, cpu,
                                   kiln_dnnl_handle(a))) ||
      (status = dnnl_memory_create(
           &memory[1], &entry->packed, cpu,
           entry->packedB ? entry->packedB : kiln_dnnl_handle(b))) ||
      (status = dnnl_memory_create(&memory[2], &entry->c, cpu, c)) ||
      (count == 4 && (status = dnnl_memory_create(&memory[3], &entry->bias,
                                                  cpu,
                                                  kiln_dnnl_handle(bias)))))
    fail("dnnl_memory_create", status);
  dnnl_stream_t stream;
  if ((status = dnnl_stream_create(&stream, cpu, dnnl_stream_default_flags)))
    fail("dnnl_stream_create", status);
  dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, memory[0]},
                             {DNNL_ARG_WEIGHTS, memory[1]},
                             {DNNL_ARG_DST, memory[2]},
                             {DNNL_ARG_BIAS, count == 4 ? memory[3] : NULL}};
  int argCount = count;
  void *ownPad;
  dnnl_memory_t padMemory =
      kiln_dnnl_scratchpad_take(scratchpad, "matmul", &ownPad);
  if (padMemory)
    args[argCount++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, padMemory};
  if ((status =
           dnnl_primitive_execute(entry->primitive, stream, argCount, args)))
    fail("dnnl_primitive_execute", status);
  if ((status = dnnl_stream_wait(stream)))
    fail("dnnl_stream_wait", status);
  dnnl_stream_destroy(stream);
  for (int i = 0; i < count; ++i)
    dnnl_memory_destroy(memory[i]);
  kiln_dnnl_scratchpad_give(scratchpad, padMemory, ownPad);
}

/* Adds the bias row to every row of each product of the batch. */
static void addBias(const MatmulKey *key, float *c, const float *bias) {
  for (int64_t p = 0; p < key->batch; ++p)
    for (int64_t i = 0; i < key->m; ++i) {
      float *row = c + p * key->strideC + i * key->ldc;
      for (int64_t j = 0; j < key->n; ++j)
        row[j] += bias[j];
    }
}

/* An int8 product without oneDNN: C (+)= A B in int32, wrapping (computed
 * in uint32, where wrapping is defined), the rows of B read in order. The
 * inner loop widens 16 (AVX-512) or 8 (AVX2) bytes at a time in the clone
 * for the running CPU: a dynamically quantized BERT-base took 4.1 s a
 * call with the baseline SSE2 loop alone. */
#if defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
static void runInt8Loops(const MatmulKey *key, const void *a, const void *b,
                         int32_t *c) {
  int transposeA = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_A) != 0;
  int transposeB = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_B) != 0;
  int unsignedA = (key->flags & KILN_DNNL_MATMUL_UNSIGNED_A) != 0;
  int unsignedB = (key->flags & KILN_DNNL_MATMUL_UNSIGNED_B) != 0;
  int accumulate = (key->flags & KILN_DNNL_MATMUL_ACCUMULATE) != 0;
  for (int64_t p = 0; p < key->batch; ++p) {
    const uint8_t *pa = (const uint8_t *)a + p * key->strideA;
    const uint8_t *pb = (const uint8_t *)b + p * key->strideB;
    for (int64_t i = 0; i < key->m; ++i) {
      uint32_t *row = (uint32_t *)(c + p * key->strideC + i * key->ldc);
      if (!accumulate)
        memset(row, 0, key->n * sizeof(uint32_t));
      for (int64_t q = 0; q < key->k; ++q) {
        uint8_t byte = pa[transposeA ? q * key->lda + i : i * key->lda + q];
        uint32_t x = widenByte(byte, unsignedA);
        if (transposeB)
          for (int64_t j = 0; j < key->n; ++j)
            row[j] += x * widenByte(pb[j * key->ldb + q], unsignedB);
        else
          for (int64_t j = 0; j < key->n; ++j)
            row[j] += x * widenByte(pb[q * key->ldb + j], unsignedB);
      }
    }
  }
}

/* A dense f32 copy of the rows x cols bf16 matrix at `x` (rows `ld`
 * elements apart); null where it cannot be allocated. */
static float *widenedMatrix(const uint16_t *x, int64_t ld, int64_t rows,
                            int64_t cols) {
  float *copy = malloc((size_t)rows * (size_t)cols * sizeof(float));
  if (copy)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        copy[i * cols + j] = kiln_dnnl_widen_bf16(x[i * ld + j]);
  return copy;
}

/* dnnl_gemm_bf16bf16f32's product through dnnl_sgemm on f32 copies of A
 * and B, for the CPUs where oneDNN has no bf16 GEMM (2.6: below AVX-512,
 * where it reports dnnl_unimplemented). The product of two bf16 values is
 * exact in f32, so the sums are the same, in a possibly different order. */
static dnnl_status_t gemmBf16Widened(char ta, char tb, int64_t m, int64_t n,
                                     int64_t k, const uint16_t *a, int64_t lda,
                                     const uint16_t *b, int64_t ldb, float beta,
                                     float *c, int64_t ldc) {
  /* A is stored m x k ('N') or k x m ('T'), B k x n or n x k. */
  int64_t aRows = ta == 'N' ? m : k, aCols = ta == 'N' ? k : m;
  int64_t bRows = tb == 'N' ? k : n, bCols = tb == 'N' ? n : k;
  float *wa = widenedMatrix(a, lda, aRows, aCols);
  float *wb = widenedMatrix(b, ldb, bRows, bCols);
  dnnl_status_t status = wa && wb ? dnnl_sgemm(ta, tb, m, n, k, 1.0f, wa, aCols,
                                               wb, bCols, beta, c, ldc)
                                  : dnnl_out_of_memory;
  free(wa);
  free(wb);
  return status;
}

/* The same product through oneDNN's GEMMs, one call per product, then the
 * bias. */
static void runGemm(const MatmulKey *key, const void *a, const void *b,
                    void *result, const float *bias) {
  if (key->flags & KILN_DNNL_MATMUL_INT8) {
    if (key->m > 0 && key->n > 0)
      runInt8Loops(key, a, b, result);
    return;
  }
  float *c = result;
  char ta = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_A) ? 'T' : 'N';
  char tb = (key->flags & KILN_DNNL_MATMUL_TRANSPOSE_B) ? 'T' : 'N';
  int accumulate = (key->flags & KILN_DNNL_MATMUL_ACCUMULATE) != 0;
  int bf16 = (key->flags & KILN_DNNL_MATMUL_BFLOAT16) != 0;
  if (key->m <= 0 || key->n <= 0)
    return;
  if (key->k <= 0) {
    /* An empty sum, whose leading dimensions the GEMMs may refuse. */
    if (!accumulate)
      for (int64_t p = 0; p < key->batch; ++p)
        for (int64_t i = 0; i < key->m; ++i)
          memset(c + p * key->strideC + i * key->ldc, 0,
                 key->n * sizeof(float));
    if (key->flags & KILN_DNNL_MATMUL_BIAS)
      addBias(key, c, bias);
    return;
  }
  for (int64_t p = 0; p < key->batch; ++p) {
    dnnl_status_t status;
    float *product = c + p * key->strideC;
    if (bf16) {
      const uint16_t *pa = (const uint16_t *)a + p * key->strideA;
      const uint16_t *pb = (const uint16_t *)b + p * key->strideB;
      float beta = accumulate ? 1.0f : 0.0f;
      status = dnnl_gemm_bf16bf16f32(ta, tb, key->m, key->n, key->k, 1.0f, pa,
                                     key->lda, pb, key->ldb, beta, product,
                                     key->ldc);
      if (status == dnnl_unimplemented)
        status = gemmBf16Widened(ta, tb, key->m, key->n, key->k, pa, key->lda,
                                 pb, key->ldb, beta, product, key->ldc);
    } else
      status = dnnl_sgemm(ta, tb, key->m, key->n, key->k, 1.0f,
                          (const float *)a + p * key->strideA, key->lda,
                          (const float *)b + p * key->strideB, key->ldb,
                          accumulate ? 1.0f : 0.0f, product, key->ldc);
    if (status)
      fail(bf16 ? "dnnl_gemm_bf16bf16f32" : "dnnl_sgemm", status);
  }
  if (key->flags & KILN_DNNL_MATMUL_BIAS)
    addBias(key, c, bias);
}

KILN_HIDDEN void kiln_dnnl_matmul(void **slot, int64_t flags, int64_t batch,
                                  int64_t m, int64_t n, int64_t k,
                                  const void *a, int64_t lda, int64_t strideA,
                                  const void *b, int64_t ldb, int64_t strideB,
                                  void *c, int64_t ldc, int64_t strideC,
                                  const float *bias) {
  const MatmulKey key = {flags, batch, m,   n,       k,   lda,
                         strideA, ldb, strideB, ldc, strideC};
  CachedMatmul *entry = cached(slot, &key, b);
  if (entry->primitive && memcmp(&entry->key, &key, sizeof(key)) == 0)
    runPrimitive(entry, &entry->scratchpad, a, b, c, bias);
  else
    runGemm(&key, a, b, c, bias);
}
