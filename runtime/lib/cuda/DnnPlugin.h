/*===- DnnPlugin.h - The interface of GPU convolution plug-ins ----*- C -*-===*\
|*                                                                            *|
|* The convolutions of CUDA modules (kiln/CudaLibraryAbi.h) run on NVIDIA's   *|
|* cuDNN through a plug-in, libkiln_cuda_dnn.so, which the runtime dlopens    *|
|* the first time a module calls for a convolution, so that neither the       *|
|* runtime nor kiln-run links a CUDA library, and a machine without cuDNN     *|
|* still runs every module that has no convolution. Like the products         *|
|* plug-in (BlasPlugin.h) it works on the device whose context is current     *|
|* on the calling thread and queues its work on the stream it is given,       *|
|* never waiting for it.                                                      *|
|*                                                                            *|
|* Every function that returns int returns 0 on success, or nonzero after     *|
|* writing a NUL-terminated description of the failure into                   *|
|* error[0 .. error_size - 1]: KILN_DNN_PLAN_IN_CAPTURE where only a new      *|
|* plan made inside a capture stood in the way, 1 otherwise.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_LIB_CUDA_DNNPLUGIN_H
#define KILN_RUNTIME_LIB_CUDA_DNNPLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_DNN_PLUGIN_VERSION 2

/* What conv and attention return for a call that needs a new plan (a
 * descriptor, or buffers' alignments, the plug-in has not run before)
 * while `stream` is captured into a CUDA graph: cuDNN makes and times a
 * plan on the stream, which a capture cannot hold. The runtime then ends
 * the capture, makes the call once outside it on scratch buffers of the
 * same alignments, which makes the plan, and captures the call again
 * (CudaDevice::planOutsideCapture). */
#define KILN_DNN_PLAN_IN_CAPTURE 2

/* The symbol a plug-in exports: const kiln_dnn_plugin_t *ENTRY(void). */
#define KILN_DNN_PLUGIN_ENTRY "kiln_dnn_plugin"

typedef struct kiln_dnn_plugin_t {
  /* KILN_DNN_PLUGIN_VERSION. */
  uint32_t version;
  /* Makes the library's handle for the current device. */
  int (*create)(void **handle, char *error, size_t error_size);
  /* Releases a handle and everything cached with it. */
  void (*destroy)(void *handle);
  /* Queues y = conv(x, w) as `descriptor` describes it (the layout of
   * KILN_CUDA_CONV_FUNCTION in kiln/CudaLibraryAbi.h, which the runtime
   * has checked) on `stream` (a CUstream); `workspace` is
   * `workspace_bytes` of device memory the convolution may use, which no
   * other work touches while the stream runs it. Convolutions of the same
   * descriptor reuse the plug-in's cached choice of kernel; one that needs
   * a new choice while `stream` is captured into a CUDA graph is refused
   * with KILN_DNN_PLAN_IN_CAPTURE (the choice cannot be made in a
   * capture). */
  int (*conv)(void *handle, const int64_t *descriptor, const void *x,
              const void *w, void *y, void *stream, void *workspace,
              size_t workspace_bytes, char *error, size_t error_size);
  /* The library and its version, e.g. "cuDNN 9.19.0", for messages. */
  const char *(*describe)(void);
  /* Queues kiln.attention (gradient 0) or kiln.attention_grad (gradient
   * 1) as `descriptor` describes it (the layout of
   * KILN_CUDA_ATTENTION_FUNCTION in kiln/CudaLibraryAbi.h, whose header the
   * runtime has checked) on `stream`. `buffers` are the device addresses
   * of that ABI's function, in its order: q, k, v, mask, o, lse for the
   * forward; q, k, v, o, lse, do, mask, dq, dk, dv, scratch for the
   * gradient (mask NULL when the descriptor has none). Workspace and
   * caching as for conv. */
  int (*attention)(void *handle, const int64_t *descriptor, int gradient,
                   const void *const *buffers, void *stream, void *workspace,
                   size_t workspace_bytes, char *error, size_t error_size);
} kiln_dnn_plugin_t;

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_LIB_CUDA_DNNPLUGIN_H */
