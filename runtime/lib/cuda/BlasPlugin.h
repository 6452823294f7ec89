/*===- BlasPlugin.h - The interface of GPU matrix-product plug-ins -*- C -*-===*\
|*                                                                            *|
|* The products of CUDA modules (kiln/CudaLibraryAbi.h) run on NVIDIA's      *|
|* cuBLASLt through a plug-in, libkiln_cuda_blas.so, which the runtime       *|
|* dlopens the first time a module calls for a product, so that neither the  *|
|* runtime nor kiln-run links a CUDA library. The plug-in works on the      *|
|* device whose context is current on the calling thread (the module's,     *|
|* which the runtime makes current for the call) and queues its work on the *|
|* stream it is given; it never waits for the stream.                        *|
|*                                                                            *|
|* Every function that returns int returns 0 on success, or nonzero after    *|
|* writing a NUL-terminated description of the failure into                   *|
|* error[0 .. error_size - 1].                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_LIB_CUDA_BLASPLUGIN_H
#define KILN_RUNTIME_LIB_CUDA_BLASPLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_BLAS_PLUGIN_VERSION 3

/* The symbol a plug-in exports: const kiln_blas_plugin_t *ENTRY(void). */
#define KILN_BLAS_PLUGIN_ENTRY "kiln_blas_plugin"

/* One call of kiln_cuda_matmul (kiln/CudaLibraryAbi.h), its arguments as
 * there. */
typedef struct kiln_matmul_problem_t {
  int64_t flags;
  int64_t ab_dtype, c_dtype;
  int64_t batch, m, n, k;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *c;
  int64_t ldc, stride_c;
  /* n elements of C's type with KILN_CUDA_MATMUL_BIAS, else NULL. */
  const void *bias;
  /* m elements of C's type with KILN_CUDA_MATMUL_BIAS_GRADIENT_A, n with
   * KILN_CUDA_MATMUL_BIAS_GRADIENT_B, else NULL. */
  void *bias_gradient;
} kiln_matmul_problem_t;

typedef struct kiln_blas_plugin_t {
  /* KILN_BLAS_PLUGIN_VERSION. */
  uint32_t version;
  /* Makes the library's handle for the current device. */
  int (*create)(void **handle, char *error, size_t error_size);
  /* Releases a handle and everything cached with it. */
  void (*destroy)(void *handle);
  /* Queues `problem` on `stream` (a CUstream); `workspace` is
   * `workspace_bytes` of device memory the product may use, which no other
   * work touches while the stream runs it. Problems of the same shape reuse
   * the plug-in's cached choice of kernel. The runtime has checked the
   * flags against the ABI and the epilogue's pointers against the flags. */
  int (*matmul)(void *handle, const kiln_matmul_problem_t *problem,
                void *stream, void *workspace, size_t workspace_bytes,
                char *error, size_t error_size);
  /* The library and its version, e.g. "cuBLASLt 13.0.2", for messages. */
  const char *(*describe)(void);
} kiln_blas_plugin_t;

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_LIB_CUDA_BLASPLUGIN_H */
