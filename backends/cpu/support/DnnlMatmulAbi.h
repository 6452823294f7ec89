/*===- DnnlMatmulAbi.h - The oneDNN matmul call's contract -----------------===*\
 *
 * kiln-cpu-matmul-to-dnnl (backends/cpu/MatmulToDnnl.cpp) replaces the
 * products that oneDNN's matmul primitive runs faster than its GEMMs by
 *
 *   kiln_dnnl_matmul(slot, flags, batch, M, N, K,
 *                    A, lda, strideA, B, ldb, strideB, C, ldc, strideC,
 *                    bias)
 *
 * (DnnlMatmul.c): C[b] (+)= A[b] B[b] (+ bias) for b < batch, row-major
 * like sgemm, every size and stride counted in elements; `bias` is N
 * contiguous f32 values added to every row of C with
 * KILN_DNNL_MATMUL_BIAS, and null without. `slot` is the call
 * site's cache slot (a pointer-sized module global, null at load); lda,
 * ldb and ldc are the leading dimensions and stride* the distances between
 * the products of a batch. This header is the contract between the two
 * (and kiln-cpu-profile, which names the call), in plain C so both sides
 * include it.
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_DNNLMATMULABI_H
#define KILN_BACKENDS_CPU_SUPPORT_DNNLMATMULABI_H

enum KilnDnnlMatmulFlags {
  KILN_DNNL_MATMUL_TRANSPOSE_A = 1, /* A is stored transposed (sgemm's T) */
  KILN_DNNL_MATMUL_TRANSPOSE_B = 2, /* B is stored as its transpose */
  KILN_DNNL_MATMUL_ACCUMULATE = 4,  /* C += A B; otherwise C = A B */
  KILN_DNNL_MATMUL_BFLOAT16 = 8,    /* bf16 A and B, f32 C */
  /* B holds the same values on every call of the site (a constant of the
   * module): the primitive keeps it packed in its own layout, reordered
   * once on the site's first call. */
  KILN_DNNL_MATMUL_CONSTANT_B = 16,
  /* The call's last operand is a row of N f32 values that the primitive
   * adds to every row of the product as it writes it (a dense layer's
   * bias, in cache instead of a pass of its own). */
  KILN_DNNL_MATMUL_BIAS = 32,
  /* int8 or uint8 A and B (KILN_DNNL_MATMUL_UNSIGNED_A, _B), int32 C:
   * each widened to int32 by its signedness, the sums wrapping around. */
  KILN_DNNL_MATMUL_INT8 = 64,
  KILN_DNNL_MATMUL_UNSIGNED_A = 128,
  KILN_DNNL_MATMUL_UNSIGNED_B = 256
};

/* The operands of the call, in order: slot, flags, batch, M, N, K, then
 * (pointer, leading dimension, batch stride) for A, B and C, then the
 * bias. */
enum KilnDnnlMatmulOperands {
  KILN_DNNL_MATMUL_FLAGS_OPERAND = 1,
  KILN_DNNL_MATMUL_BATCH_OPERAND = 2,
  KILN_DNNL_MATMUL_M_OPERAND = 3
};

#endif /* KILN_BACKENDS_CPU_SUPPORT_DNNLMATMULABI_H */
