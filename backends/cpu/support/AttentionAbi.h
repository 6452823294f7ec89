/*===- AttentionAbi.h - The CPU attention kernels' calling contract -------===*\
 *
 * kiln-cpu-attention-calls (backends/cpu/AttentionCalls.cpp) replaces each
 * f32 kiln.attention and kiln.attention_grad by calls of the kernels in
 * Attention.c; this header is the contract between the two, in plain C so
 * that both sides include it.
 *
 * Every tensor is dense and row-major. With `batch` the product of the
 * leading dims (batch x heads):
 *   q [batch, Nq, D], k [batch, Nk, D], v [batch, Nk, Dv],
 *   out, dout [batch, Nq, Dv], lse [batch, Nq] (the rows' log-sum-exp),
 *   dq like q, dk like k, dv like v.
 * The scores of one batch entry are S = scale * q k^T + mask, with every
 * key j > i of query row i masked out (-inf) when the attention is causal;
 * out = softmax(S) v row by row and lse_i = log(sum_j exp(S_ij)). A row
 * whose scores are all -inf gets NaN in out and lse, as softmax's 0 / 0.
 *
 * The mask (optional) has the rank of the scores, [leading..., Nq, Nk],
 * each dim either the scores' or 1 (broadcast); the descriptor gives its
 * stride in elements per dim (0 where it broadcasts).
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_ATTENTIONABI_H
#define KILN_BACKENDS_CPU_SUPPORT_ATTENTIONABI_H

#include <stdint.h>

/* The descriptor: a constant int64_t array of the module. */
enum KilnAttentionDescriptor {
  KILN_ATTENTION_BATCH = 0,    /* product of the leading dims */
  KILN_ATTENTION_QUERIES,      /* Nq */
  KILN_ATTENTION_KEYS,         /* Nk */
  KILN_ATTENTION_HEAD_DIM,     /* D */
  KILN_ATTENTION_VALUE_DIM,    /* Dv */
  KILN_ATTENTION_FLAGS,        /* KilnAttentionFlags */
  KILN_ATTENTION_SCALE_BITS,   /* the scale: the bits of an IEEE double */
  KILN_ATTENTION_QUERY_TILE,   /* query rows per forward call (>= 1) */
  KILN_ATTENTION_LEADING_RANK, /* r, the number of leading dims */
  KILN_ATTENTION_HEADER_SIZE
  /* then the r leading dims, then (with a mask) the mask's r + 2 strides */
};

enum KilnAttentionFlags {
  KILN_ATTENTION_CAUSAL = 1,
  KILN_ATTENTION_MASKED = 2
};

/* Query rows [tile * T, min(Nq, (tile + 1) * T)) of batch entry `batch`
 * (T the descriptor's query tile): their rows of out and lse. The
 * compiled code calls it for every (batch, tile), from several threads. */
void kiln_attention_f32_forward(const int64_t *descriptor, const float *q,
                                const float *k, const float *v,
                                const float *mask, float *out, float *lse,
                                int64_t batch, int64_t tile);

/* The gradients dq, dk, dv (overwritten) of batch entry `batch`, given the
 * forward's out and lse and the cotangent dout. The compiled code calls it
 * for every batch entry, from several threads. */
void kiln_attention_f32_backward(const int64_t *descriptor, const float *q,
                                 const float *k, const float *v,
                                 const float *mask, const float *out,
                                 const float *lse, const float *dout,
                                 float *dq, float *dk, float *dv,
                                 int64_t batch);

#endif /* KILN_BACKENDS_CPU_SUPPORT_ATTENTIONABI_H */
