/*===- CudaLibraryAbi.h - Library calls of CUDA modules ----------*- C -*-===*\
|*                                                                            *|
|* Host code compiled for CUDA launches its own kernels and, for the work    *|
|* where NVIDIA's libraries are fastest, calls the runtime, which queues the *|
|* library's kernels on the module's stream in order with the module's own   *|
|* work. Like the mgpu* functions (GpuRuntimeShim.h), each call goes through *|
|* an exported pointer slot, KILN_GPU_SLOT_PREFIX followed by the function's *|
|* name, which the runtime fills when it loads the module. Header-only,      *|
|* valid C and C++, shared by the CUDA backend (kiln-cuda-library-matmul)    *|
|* and the runtime.                                                           *|
|*                                                                            *|
|* KILN_CUDA_MATMUL_FUNCTION, of type kiln_cuda_matmul_fn:                   *|
|*   for each b in 0 .. batch - 1,                                           *|
|*     C[b] = op(A[b]) op(B[b])            (+ C[b] with ..._ACCUMULATE)     *|
|*   then, with ..._BIAS, bias[j] added to every column j of C[b] (bias:    *|
|*   n elements of C's type, C f32): cuBLASLt's bias epilogue, so that the  *|
|*   product writes C once, rounded once.                                    *|
|*   With ..._BIAS_GRADIENT_A (batch 1, C f32, no bias flag), the call     *|
|*   also writes bias_gradient[i] = the sum over l of op(A)[i, l] for      *|
|*   i < m, and with ..._BIAS_GRADIENT_B bias_gradient[j] = the sum over l *|
|*   of op(B)[l, j] for j < n (C's type): cuBLASLt's bias-gradient          *|
|*   epilogues, which sum an operand of a dense layer's weight gradient     *|
|*   (dY) while the product reads it; ..._BIAS_GRADIENT_A only with        *|
|*   ..._TRANSPOSE_A and ..._BIAS_GRADIENT_B only without ..._TRANSPOSE_B   *|
|*   (the operand stored with k along its rows, which cuBLASLt's kernels    *|
|*   require). bias is NULL without ..._BIAS, and bias_gradient NULL        *|
|*   without a gradient flag; at most one gradient flag.                    *|
|*   in row-major terms: C[b] is m x n with rows ldc elements apart, op(A)  *|
|*   is m x k (A stored m x k with rows lda apart, or with                  *|
|*   ..._TRANSPOSE_A stored k x m), op(B) is k x n (B stored k x n, or n x k *|
|*   with ..._TRANSPOSE_B); matrix b of each operand starts stride_X        *|
|*   elements after matrix b - 1. The pointers are device addresses.        *|
|*   ab_dtype and c_dtype are kiln_dtype_t codes (kiln/ElementTypes.def):    *|
|*   A and B f64, f32, f16 or bf16; C of the same type, or f32 for f16 and  *|
|*   bf16 A and B. Products accumulate in f32 (f64 for f64), exactly:      *|
|*   ..._TF32 allows f32 products to round their inputs to TF32 on tensor   *|
|*   cores, which the compiler asks for only under an explicit option.      *|
|*                                                                            *|
|* KILN_CUDA_CONV_FUNCTION, of type kiln_cuda_conv_fn:                       *|
|*   y = kiln.conv(x, w) for a convolution without input dilation, in      *|
|*   kiln's (ONNX's) dense row-major layouts: x [N, C, D...], w [O, C/G,   *|
|*   K...], y [N, O, E...], device addresses, all of one float type (f32,  *|
|*   f16 or bf16; sums in f32). `descriptor` points to                     *|
|*   KILN_CUDA_CONV_HEADER_SIZE + KILN_CUDA_CONV_ENTRIES_PER_DIM * k      *|
|*   int64 values: k (1 to 3 spatial dims), G, the kiln_dtype_t code, the  *|
|*   flags, N, C, O, then seven arrays of k: D, K, E, strides, low and     *|
|*   high padding, kernel dilation. f32 stays exact f32 unless the flags   *|
|*   hold KILN_CUDA_CONV_TF32. The descriptor is the module's constant, so  *|
|*   the runtime may key what it caches on its contents.                    *|
|*   With KILN_CUDA_CONV_INPUT_GRADIENT the call is the gradient of such a *|
|*   convolution with respect to its input instead (cuDNN's backward data, *|
|*   a transposed convolution): x is the cotangent [N, C, D...] of a        *|
|*   forward convolution with C output channels, w its kernel [C, O/G,     *|
|*   K...], y the input gradient [N, O, E...]; strides, padding and        *|
|*   dilation are the forward convolution's, so that D follows from E as a *|
|*   forward convolution's output size does from its input's.             *|
|*   With KILN_CUDA_CONV_WEIGHT_GRADIENT it is the gradient with respect   *|
|*   to the kernel (cuDNN's backward filter): x is the forward             *|
|*   convolution's input [N, C, D...], w its cotangent [N, O, E...], y the *|
|*   kernel gradient [O, C/G, K...]; the rest as for the forward one.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_CUDALIBRARYABI_H
#define KILN_CUDALIBRARYABI_H

#include <stdint.h>

/* The prefix of every slot through which host code reaches the runtime's
 * GPU functions (the mgpu* ABI and the library calls below). */
#define KILN_GPU_SLOT_PREFIX "kiln_gpu_fn_"

#define KILN_CUDA_MATMUL_FUNCTION "kiln_cuda_matmul"

enum {
  KILN_CUDA_MATMUL_TRANSPOSE_A = 1,
  KILN_CUDA_MATMUL_TRANSPOSE_B = 2,
  KILN_CUDA_MATMUL_ACCUMULATE = 4,
  KILN_CUDA_MATMUL_TF32 = 8,
  KILN_CUDA_MATMUL_BIAS = 16,
  KILN_CUDA_MATMUL_BIAS_GRADIENT_A = 32,
  KILN_CUDA_MATMUL_BIAS_GRADIENT_B = 64,
  /* Every flag bit defined; the runtime refuses others. */
  KILN_CUDA_MATMUL_FLAGS = 127
};

typedef void (*kiln_cuda_matmul_fn)(
    int64_t flags, int64_t ab_dtype, int64_t c_dtype, int64_t batch, int64_t m,
    int64_t n, int64_t k, const void *a, int64_t lda, int64_t stride_a,
    const void *b, int64_t ldb, int64_t stride_b, void *c, int64_t ldc,
    int64_t stride_c, const void *bias, void *bias_gradient);

#define KILN_CUDA_CONV_FUNCTION "kiln_cuda_conv"

enum {
  KILN_CUDA_CONV_TF32 = 1,
  KILN_CUDA_CONV_INPUT_GRADIENT = 2,
  KILN_CUDA_CONV_WEIGHT_GRADIENT = 4,
  /* Every flag bit defined; the runtime refuses others. */
  KILN_CUDA_CONV_FLAGS = 7
};

enum {
  KILN_CUDA_CONV_HEADER_SIZE = 7,
  KILN_CUDA_CONV_ENTRIES_PER_DIM = 7,
  KILN_CUDA_CONV_MAX_SPATIAL_DIMS = 3
};

typedef void (*kiln_cuda_conv_fn)(const int64_t *descriptor, const void *x,
                                  const void *w, void *y);

/* Scaled dot-product attention of f16 or bf16 operands on cuDNN's fused
 * attention engines (kiln-cuda-library-attention): kiln.attention and
 * kiln.attention_grad with the leading dims folded into B and H. Dense
 * row-major device buffers: q [B, H, Nq, D], k [B, H, Nk, D], v [B, H, Nk,
 * Dv], o and do [B, H, Nq, Dv], lse [B, H, Nq] f32, mask (NULL without
 * KILN_CUDA_ATTENTION_MASK) [MB, MH, MQ, MK] with each dim the scores' or 1,
 * of the operands' type. `descriptor` points to
 * KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE int64 values: the kiln_dtype_t code,
 * the flags, B, H, Nq, Nk, D, Dv, MB, MH, MQ, MK and the bits of the f64
 * scale. KILN_CUDA_ATTENTION_FUNCTION writes o and lse;
 * KILN_CUDA_ATTENTION_GRAD_FUNCTION writes dq, dk and dv (the types of q, k
 * and v) from q, k, v, o, lse and do, using `scratch`, B * H * Nq * (D + 1)
 * f32 of device memory nothing else uses meanwhile. */
#define KILN_CUDA_ATTENTION_FUNCTION "kiln_cuda_attention"
#define KILN_CUDA_ATTENTION_GRAD_FUNCTION "kiln_cuda_attention_grad"

enum {
  KILN_CUDA_ATTENTION_CAUSAL = 1,
  KILN_CUDA_ATTENTION_MASK = 2,
  /* Every flag bit defined; the runtime refuses others. */
  KILN_CUDA_ATTENTION_FLAGS = 3
};

enum { KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE = 13 };

typedef void (*kiln_cuda_attention_fn)(const int64_t *descriptor, const void *q,
                                       const void *k, const void *v,
                                       const void *mask, void *o, void *lse);

typedef void (*kiln_cuda_attention_grad_fn)(
    const int64_t *descriptor, const void *q, const void *k, const void *v,
    const void *o, const void *lse, const void *result_grad, const void *mask,
    void *dq, void *dk, void *dv, void *scratch);

/* A kiln.while loop run on the device as one CUDA graph
 * (kiln-cuda-graph-loops). The host code asks KILN_CUDA_GRAPH_LOOPS_FUNCTION
 * whether the device can (nonzero) and otherwise runs the loop itself. If it
 * can, it calls KILN_CUDA_GRAPH_WHILE_BEGIN_FUNCTION, runs the loop's test
 * once (its device work is captured, not run), calls
 * KILN_CUDA_GRAPH_WHILE_TEST_FUNCTION with the loop state and the device
 * address of the test's result (a byte, nonzero to go on), runs the body
 * and then the test again once, likewise captured, and calls
 * KILN_CUDA_GRAPH_WHILE_END_FUNCTION with the address of the second test's
 * result, which queues the whole loop on the stream: the first test, then
 * the body and the second test while the last test's result is nonzero.
 * Both tests hand on their values in the same buffers. Between the first
 * and the last call the host code must not wait for the stream nor read
 * device memory, and every buffer the captured work uses stays where it is
 * for the whole loop. */
#define KILN_CUDA_GRAPH_LOOPS_FUNCTION "kiln_cuda_graph_loops"
#define KILN_CUDA_GRAPH_WHILE_BEGIN_FUNCTION "kiln_cuda_graph_while_begin"
#define KILN_CUDA_GRAPH_WHILE_TEST_FUNCTION "kiln_cuda_graph_while_test"
#define KILN_CUDA_GRAPH_WHILE_END_FUNCTION "kiln_cuda_graph_while_end_iteration"
/* Modules compiled before the test ran twice ended the loop with
 * kiln_cuda_graph_while_end(loop) after capturing the body alone; the
 * runtime answers that name with a function that fails the call (the
 * module must be compiled again) instead of running half a loop. */
#define KILN_CUDA_GRAPH_WHILE_RETIRED_END_FUNCTION "kiln_cuda_graph_while_end"

/* A loop whose test or body holds tuned call sites (below) asks
 * KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION(sites, site_numbers) instead, with
 * the numbers of those sites: nonzero where KILN_CUDA_GRAPH_LOOPS_FUNCTION
 * would answer nonzero and every one of them is decided (or tuning is off).
 * A loop's graph is captured at its first run, where nothing can be timed:
 * such a loop runs on the host until its sites are decided (at its first
 * trip), and as a graph from its next run on. */
#define KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION "kiln_cuda_graph_loops_tuned"

/* A loop whose test or body calls cuDNN (KILN_CUDA_CONV_FUNCTION,
 * KILN_CUDA_ATTENTION_FUNCTION, KILN_CUDA_ATTENTION_GRAD_FUNCTION) asks
 * KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION(sites, site_numbers, size, calls)
 * instead, with the numbers of the tuned call sites it holds (none: sites
 * 0, site_numbers unread) and its library calls: `calls` is `size` int64
 * values, for each call its KILN_CUDA_PLANNED_* code followed by its
 * descriptor (KILN_CUDA_CONV_HEADER_SIZE + KILN_CUDA_CONV_ENTRIES_PER_DIM *
 * k values for a convolution, KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE for an
 * attention). Nonzero where KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION would
 * answer nonzero for the sites and each of the calls has run on this device
 * before: cuDNN makes (and times) a call's plan at its first run, which a
 * capture cannot hold, so such a loop runs on the host until its calls have
 * run, and as a graph from its next run on. */
#define KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION "kiln_cuda_graph_loops_planned"

enum {
  KILN_CUDA_PLANNED_CONV = 1,
  KILN_CUDA_PLANNED_ATTENTION = 2,
  KILN_CUDA_PLANNED_ATTENTION_GRAD = 3
};

typedef int32_t (*kiln_cuda_graph_loops_fn)(void);
typedef int32_t (*kiln_cuda_graph_loops_tuned_fn)(int64_t sites,
                                                  const int64_t *site_numbers);
typedef int32_t (*kiln_cuda_graph_loops_planned_fn)(int64_t sites,
                                                    const int64_t *site_numbers,
                                                    int64_t size,
                                                    const int64_t *calls);
typedef void *(*kiln_cuda_graph_while_begin_fn)(void);
typedef void (*kiln_cuda_graph_while_test_fn)(void *loop,
                                              const void *predicate);
typedef void (*kiln_cuda_graph_while_end_fn)(void *loop,
                                             const void *predicate);
typedef void (*kiln_cuda_graph_while_retired_end_fn)(void *loop);

/* A kiln.cond in a call being captured into a CUDA graph
 * (kiln-cuda-graph-conds; the call as below). The host code asks
 * KILN_CUDA_GRAPH_CONDS_FUNCTION whether the runtime is capturing the call
 * and has conditional nodes (nonzero), and otherwise reads the predicate
 * and branches itself. If it is, it calls KILN_CUDA_GRAPH_IF_BEGIN_FUNCTION
 * with the device address of the predicate (a byte, nonzero for the first
 * branch), queues the first branch (captured into the body of an IF node
 * on the predicate), calls KILN_CUDA_GRAPH_IF_ELSE_FUNCTION, queues the
 * second branch (captured into an IF node on its negation) and calls
 * KILN_CUDA_GRAPH_IF_END_FUNCTION; both branches write their results into
 * the same buffers, and the call's graph decides on the device which one
 * runs at each launch. */
#define KILN_CUDA_GRAPH_CONDS_FUNCTION "kiln_cuda_graph_conds"
#define KILN_CUDA_GRAPH_IF_BEGIN_FUNCTION "kiln_cuda_graph_if_begin"
#define KILN_CUDA_GRAPH_IF_ELSE_FUNCTION "kiln_cuda_graph_if_else"
#define KILN_CUDA_GRAPH_IF_END_FUNCTION "kiln_cuda_graph_if_end"

typedef int32_t (*kiln_cuda_graph_conds_fn)(void);
typedef void *(*kiln_cuda_graph_if_begin_fn)(const void *predicate);
typedef void (*kiln_cuda_graph_if_else_fn)(void *branch);
typedef void (*kiln_cuda_graph_if_end_fn)(void *branch);

/* A constant of the module (read-only host memory: a model's weights, a
 * table) copied into device memory at `destination`, stream-ordered like
 * a device copy (kiln-cuda-resident-constants). The runtime uploads each
 * constant to the device once, at the first call that copies it, keyed by
 * its host address, and keeps it there while the module is loaded; every
 * call then copies it on the device instead of from host memory. */
#define KILN_CUDA_COPY_CONSTANT_FUNCTION "kiln_cuda_copy_constant"

typedef void (*kiln_cuda_copy_constant_fn)(void *destination,
                                           const void *constant,
                                           int64_t bytes);

/* The device address of a constant of the module (read-only host memory)
 * that kernels and library calls read in place, without a copy per call
 * (kiln-cuda-resident-constants). The runtime uploads the constant once,
 * at the first call that asks for it, keyed by its host address and size
 * as for KILN_CUDA_COPY_CONSTANT_FUNCTION, and keeps it there while the
 * module is loaded, so the address stays the same from call to call (and
 * a call run as a CUDA graph may hold it). Nothing may write there. Null
 * after a failure of the call, whose later device work is then skipped. */
#define KILN_CUDA_RESIDENT_CONSTANT_FUNCTION "kiln_cuda_resident_constant"

typedef void *(*kiln_cuda_resident_constant_fn)(const void *constant,
                                                int64_t bytes);

/* A whole call run as one CUDA graph (kiln-cuda-graph-calls). The entry of
 * a function whose host code only queues device work (launches, device
 * copies, constants' copies, device allocations and frees, products,
 * convolutions, loops and conds in their graph forms; no wait for the
 * stream, no host access to device memory) starts with
 *   if (KILN_CUDA_GRAPH_CALL_BEGIN_FUNCTION() != 0) return;
 * and ends with KILN_CUDA_GRAPH_CALL_END_FUNCTION(). Begin answers nonzero
 * when the runtime has queued a graph it captured from an earlier call of
 * the function with the same argument buffers: that call's work, which
 * the host code then does not queue again. Otherwise the host code runs,
 * and the runtime may be capturing its work into a graph meanwhile, which
 * end then queues; a loop run as a graph (KILN_CUDA_GRAPH_WHILE_*) or a
 * cond in its graph form (KILN_CUDA_GRAPH_IF_*) in a call being captured
 * becomes conditional nodes of the call's graph. The
 * host code must queue the same work for the same argument buffers every
 * time. */
#define KILN_CUDA_GRAPH_CALL_BEGIN_FUNCTION "kiln_cuda_graph_call_begin"
#define KILN_CUDA_GRAPH_CALL_END_FUNCTION "kiln_cuda_graph_call_end"

typedef int32_t (*kiln_cuda_graph_call_begin_fn)(void);
typedef void (*kiln_cuda_graph_call_end_fn)(void);

/* A tuned call site: one computation that the module implements in several
 * ways (variants), each writing the same results from the same operands
 * and none writing what it reads, of which the runtime runs the fastest on
 * this device (kiln-cuda-flash-attention's f32 attentions: on CUDA cores,
 * and in 3xTF32 products on tensor cores). The host code runs
 *   rounds = KILN_CUDA_TUNE_ROUNDS_FUNCTION(site, variants, names)
 *   for (round = 0; round < rounds; ++round) {
 *     variant = KILN_CUDA_TUNE_BEGIN_FUNCTION(site, round)
 *     queue the work of variant `variant` (0 .. variants - 1)
 *     KILN_CUDA_TUNE_END_FUNCTION(site, round)
 *   }
 * `site` numbers the module's tuned sites from 0, `names` (a NUL-terminated
 * string, read during the call) names the variants, separated by commas,
 * for KILN_CUDA_TUNE_LOG. Once a site is decided, rounds is 1 and begin
 * answers the chosen variant. The first call of an undecided site outside
 * a capture into a CUDA graph runs every variant once to warm up and three
 * times between two CUDA events, then the fastest, whose results the call
 * returns; KILN_CUDA_TUNE=0 (or a driver without events) decides for
 * variant 0 without timing. In a capture, an undecided site runs variant 0
 * and stays undecided. */
#define KILN_CUDA_TUNE_ROUNDS_FUNCTION "kiln_cuda_tune_rounds"
#define KILN_CUDA_TUNE_BEGIN_FUNCTION "kiln_cuda_tune_begin"
#define KILN_CUDA_TUNE_END_FUNCTION "kiln_cuda_tune_end"

typedef int64_t (*kiln_cuda_tune_rounds_fn)(int64_t site, int64_t variants,
                                            const char *names);
typedef int64_t (*kiln_cuda_tune_begin_fn)(int64_t site, int64_t round);
typedef void (*kiln_cuda_tune_end_fn)(int64_t site, int64_t round);

#endif /* KILN_CUDALIBRARYABI_H */
