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
 * (compare-and-swap) wins and the other destroys its own. Executing one
 * primitive from several threads at once is safe in oneDNN; streams and
 * memory objects are made per call.
 *
 * Every call still computes its product when the primitive cannot:
 *   - where oneDNN has no implementation of the product, or only its
 *     reference one (slow loops), the site caches that and runs the GEMM
 *     that the product would otherwise have called, dnnl_sgemm or
 *     dnnl_gemm_bf16bf16f32, one per product of the batch;
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

/* flags, batch, M, N, K, lda, strideA, ldb, strideB, ldc, strideC */
enum { KEY_SIZE = 11 };

typedef struct CachedMatmul {
  int64_t key[KEY_SIZE];
  /* Null where the site runs the GEMM instead (see above). */
  dnnl_primitive_t primitive;
  dnnl_memory_desc_t a, b, c;
  struct CachedMatmul *next; /* the module's published entries */
} CachedMatmul;

/* Every entry this module published, destroyed when it is unloaded
 * (before the engine: DnnlEngine.c). */
static CachedMatmul *published;

__attribute__((destructor)) static void destroyPublished(void) {
  CachedMatmul *entry = __atomic_exchange_n(&published, NULL, __ATOMIC_ACQ_REL);
  while (entry) {
    CachedMatmul *next = entry->next;
    if (entry->primitive)
      dnnl_primitive_destroy(entry->primitive);
    free(entry);
    entry = next;
  }
}

static void fail(const char *what, dnnl_status_t status) {
  kiln_dnnl_fail("matmul", what, status);
}

/* oneDNN's memory objects take a non-const handle, also for the buffers a
 * primitive only reads. */
static void *handle(const void *data) { return (void *)(uintptr_t)data; }

/* A [batch,] rows x cols matrix of `type` whose element (r, c) of product
 * p is at p * batchStride + r * rowStride + c * colStride. */
static dnnl_status_t describe(dnnl_memory_desc_t *md, const int64_t *key,
                              int64_t rows, int64_t cols, int64_t rowStride,
                              int64_t colStride, int64_t batchStride,
                              dnnl_data_type_t type) {
  int64_t batch = key[1];
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
static CachedMatmul *create(const int64_t *key) {
  CachedMatmul *entry = calloc(1, sizeof(CachedMatmul));
  if (!entry)
    kiln_dnnl_fail("matmul", "allocating a cache entry", dnnl_out_of_memory);
  memcpy(entry->key, key, sizeof(entry->key));
  int64_t flags = key[0], batch = key[1], m = key[2], n = key[3], k = key[4];
  int64_t lda = key[5], strideA = key[6], ldb = key[7], strideB = key[8],
          ldc = key[9], strideC = key[10];
  /* Empty products and strides oneDNN may not take: the GEMM. */
  if (m <= 0 || n <= 0 || k <= 0 || lda <= 0 || ldb <= 0 || ldc <= 0 ||
      (batch > 1 && (strideA <= 0 || strideB <= 0 || strideC <= 0)))
    return entry;
  dnnl_data_type_t type =
      (flags & KILN_DNNL_MATMUL_BFLOAT16) ? dnnl_bf16 : dnnl_f32;
  int transposeA = (flags & KILN_DNNL_MATMUL_TRANSPOSE_A) != 0;
  int transposeB = (flags & KILN_DNNL_MATMUL_TRANSPOSE_B) != 0;
  if (describe(&entry->a, key, m, k, transposeA ? 1 : lda,
               transposeA ? lda : 1, strideA, type) ||
      describe(&entry->b, key, k, n, transposeB ? 1 : ldb,
               transposeB ? ldb : 1, strideB, type) ||
      describe(&entry->c, key, m, n, ldc, 1, strideC, dnnl_f32))
    return entry;
  dnnl_matmul_desc_t matmul;
  if (dnnl_matmul_desc_init(&matmul, &entry->a, &entry->b, NULL, &entry->c))
    return entry;
  /* C += A B: a sum post-op adds what C holds. */
  dnnl_primitive_attr_t attr = NULL;
  dnnl_status_t status;
  if (flags & KILN_DNNL_MATMUL_ACCUMULATE) {
    dnnl_post_ops_t ops;
    if ((status = dnnl_post_ops_create(&ops)) ||
        (status = dnnl_post_ops_append_sum(ops, 1.0f)) ||
        (status = dnnl_primitive_attr_create(&attr)) ||
        (status = dnnl_primitive_attr_set_post_ops(attr, ops)))
      fail("describing the accumulation", status);
    dnnl_post_ops_destroy(ops);
  }
  dnnl_primitive_desc_t pd;
  status = dnnl_primitive_desc_create(&pd, &matmul, attr, kiln_dnnl_engine(),
                                      NULL);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (status)
    return entry;
  const char *implementation = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                &implementation) == dnnl_success &&
      implementation && strncmp(implementation, "ref", 3) != 0 &&
      (status = dnnl_primitive_create(&entry->primitive, pd)))
    fail("dnnl_primitive_create", status);
  dnnl_primitive_desc_destroy(pd);
  return entry;
}

/* The entry of the call site `slot`, created by its first call. */
static CachedMatmul *cached(void **slot, const int64_t *key) {
  CachedMatmul *entry = __atomic_load_n((CachedMatmul **)slot,
                                        __ATOMIC_ACQUIRE);
  if (entry)
    return entry;
  CachedMatmul *created = create(key);
  CachedMatmul *expected = NULL;
  if (!__atomic_compare_exchange_n((CachedMatmul **)slot, &expected, created,
                                   0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    if (created->primitive)
      dnnl_primitive_destroy(created->primitive);
    free(created);
    return expected;
  }
  CachedMatmul *head = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
  do
    created->next = head;
  while (!__atomic_compare_exchange_n(&published, &head, created, 1,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return created;
}

static void runPrimitive(const CachedMatmul *entry, const void *a,
                         const void *b, float *c) {
  dnnl_engine_t cpu = kiln_dnnl_engine();
  dnnl_memory_t memory[3];
  dnnl_status_t status;
  if ((status = dnnl_memory_create(&memory[0], &entry->a, cpu, handle(a))) ||
      (status = dnnl_memory_create(&memory[1], &entry->b, cpu, handle(b))) ||
      (status = dnnl_memory_create(&memory[2], &entry->c, cpu, c)))
    fail("dnnl_memory_create", status);
  dnnl_stream_t stream;
  if ((status = dnnl_stream_create(&stream, cpu, dnnl_stream_default_flags)))
    fail("dnnl_stream_create", status);
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, memory[0]},
                             {DNNL_ARG_WEIGHTS, memory[1]},
                             {DNNL_ARG_DST, memory[2]}};
  if ((status = dnnl_primitive_execute(entry->primitive, stream, 3, args)))
    fail("dnnl_primitive_execute", status);
  if ((status = dnnl_stream_wait(stream)))
    fail("dnnl_stream_wait", status);
  dnnl_stream_destroy(stream);
  for (int i = 0; i < 3; ++i)
    dnnl_memory_destroy(memory[i]);
}

/* The same product through oneDNN's GEMMs, one call per product. */
static void runGemm(const int64_t *key, const void *a, const void *b,
                    float *c) {
  int64_t flags = key[0], batch = key[1];
  char ta = (flags & KILN_DNNL_MATMUL_TRANSPOSE_A) ? 'T' : 'N';
  char tb = (flags & KILN_DNNL_MATMUL_TRANSPOSE_B) ? 'T' : 'N';
  float beta = (flags & KILN_DNNL_MATMUL_ACCUMULATE) ? 1.0f : 0.0f;
  int bf16 = (flags & KILN_DNNL_MATMUL_BFLOAT16) != 0;
  int64_t m = key[2], n = key[3], k = key[4];
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    /* An empty sum, whose leading dimensions the GEMMs may refuse. */
    if (!(flags & KILN_DNNL_MATMUL_ACCUMULATE))
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          memset(c + p * key[10] + i * key[9], 0, n * sizeof(float));
    return;
  }
  for (int64_t p = 0; p < batch; ++p) {
    dnnl_status_t status;
    float *product = c + p * key[10];
    if (bf16)
      status = dnnl_gemm_bf16bf16f32(
          ta, tb, m, n, k, 1.0f, (const uint16_t *)a + p * key[6], key[5],
          (const uint16_t *)b + p * key[8], key[7], beta, product, key[9]);
    else
      status = dnnl_sgemm(ta, tb, m, n, k, 1.0f,
                          (const float *)a + p * key[6], key[5],
                          (const float *)b + p * key[8], key[7], beta,
                          product, key[9]);
    if (status)
      fail(bf16 ? "dnnl_gemm_bf16bf16f32" : "dnnl_sgemm", status);
  }
}

KILN_HIDDEN void kiln_dnnl_matmul(void **slot, int64_t flags, int64_t batch,
                                  int64_t m, int64_t n, int64_t k,
                                  const void *a, int64_t lda, int64_t strideA,
                                  const void *b, int64_t ldb, int64_t strideB,
                                  float *c, int64_t ldc, int64_t strideC) {
  const int64_t key[KEY_SIZE] = {flags, batch,   m,   n,      k,  lda,
                                 strideA, ldb, strideB, ldc, strideC};
  const CachedMatmul *entry = cached(slot, key);
  if (entry->primitive && memcmp(entry->key, key, sizeof(key)) == 0)
    runPrimitive(entry, a, b, c);
  else
    runGemm(key, a, b, c);
}
