/*===- PackedMatmulAbi.h - The packed-weight product's contract ------------===*\
 *
 * kiln-cpu-matmul-to-dnnl (backends/cpu/MatmulToDnnl.cpp) gives the f32
 * products of few rows by a constant B that oneDNN would read unpacked
 * (its matmul primitive keeps such a B plain below AVX-512, and its GEMM
 * packs all of it on every call) to kiln's own kernel, over a copy of B
 * that the compiler packs into the module:
 *
 *   kiln_packed_matmul_f32(flags, M, N, K, A, lda, packedB, C, ldc, bias)
 *
 * (PackedMatmul.c): C = A B (C += A B with KILN_PACKED_MATMUL_ACCUMULATE),
 * then + bias[j] in every row with KILN_PACKED_MATMUL_BIAS. Row-major like
 * sgemm, sizes and leading dimensions in elements: A is M x K (element
 * (i, q) at A[i * lda + q]) or, with KILN_PACKED_MATMUL_TRANSPOSE_A, stored
 * K x M (at A[q * lda + i]); C is M x N with unit column stride; `bias` is N
 * contiguous floats, or null without the flag.
 *
 * The packed layout: B's columns in panels of KILN_PACKED_MATMUL_PANEL,
 * panel p a K x KILN_PACKED_MATMUL_PANEL row-major block holding columns
 * p * PANEL ... p * PANEL + PANEL - 1 of B, zeros past column N - 1:
 *
 *   packedB[(p * K + q) * PANEL + c] = B[q][p * PANEL + c]
 *
 * so a call on columns j0 ... j0 + n - 1 of a larger product (j0 a
 * multiple of PANEL) passes packedB + j0 * K, C + j0 and bias + j0. The
 * compiler splits a product's panels over the threads that way.
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_PACKEDMATMULABI_H
#define KILN_BACKENDS_CPU_SUPPORT_PACKEDMATMULABI_H

/* Columns per panel of the packed B. */
#define KILN_PACKED_MATMUL_PANEL 16

enum KilnPackedMatmulFlags {
  KILN_PACKED_MATMUL_TRANSPOSE_A = 1, /* A is stored K x M */
  KILN_PACKED_MATMUL_ACCUMULATE = 2,  /* C += A B; otherwise C = A B */
  KILN_PACKED_MATMUL_BIAS = 4         /* then bias[j] added to every row */
};

#endif /* KILN_BACKENDS_CPU_SUPPORT_PACKEDMATMULABI_H */
