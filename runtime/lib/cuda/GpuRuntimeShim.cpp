//===- GpuRuntimeShim.cpp - The mgpu* ABI over CudaDevice -----------------===//
//
// The signatures are those of MLIR 19's CudaRuntimeWrappers.cpp, which the
// lowered host code calls. Streams and modules are the device's own: there
// is one in-order stream per device (so "creating" one returns it,
// "destroying" it does nothing, and synchronizing it waits for all work the
// call queued), and a module stays loaded, cached by the address of its
// PTX, until the kiln module is released. Launches and copies are queued
// on the stream without waiting.
//
//===----------------------------------------------------------------------===//

#include "GpuRuntimeShim.h"

#include "CudaDevice.h"

#include "kiln/CudaLibraryAbi.h"

#include <cstdint>
#include <type_traits>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

/// The device of the call in progress; host code runs only inside calls.
CudaDevice &device() { return *CudaDevice::current(); }

void *mgpuModuleLoad(void *data, size_t) {
  return device().loadModule(data, 4);
}
void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return device().loadModule(data, optLevel);
}
void mgpuModuleUnload(void *) {}
void *mgpuModuleGetFunction(void *module, const char *name) {
  return device().getFunction(static_cast<CUmodule>(module), name);
}
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *,
                      void **params, void **extra, size_t) {
  device().launch(static_cast<CUfunction>(function), gridX, gridY, gridZ,
                  blockX, blockY, blockZ, sharedMemBytes, params, extra);
}
void *mgpuStreamCreate() { return device().stream(); }
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *) { device().synchronize(); }
void *mgpuMemAlloc(uint64_t bytes, void *, bool isHostShared) {
  return device().allocate(bytes, isHostShared);
}
void mgpuMemFree(void *pointer, void *) { device().release(pointer); }
void mgpuMemcpy(void *destination, void *source, size_t bytes, void *) {
  device().copy(destination, source, bytes);
}
void mgpuMemset32(void *destination, unsigned value, size_t count, void *) {
  device().fill32(destination, value, count);
}

void kilnCudaMatmul(int64_t flags, int64_t abDtype, int64_t cDtype,
                    int64_t batch, int64_t m, int64_t n, int64_t k,
                    const void *a, int64_t lda, int64_t strideA, const void *b,
                    int64_t ldb, int64_t strideB, void *c, int64_t ldc,
                    int64_t strideC, const void *bias, void *biasGradient) {
  device().matmul({flags, abDtype, cDtype, batch, m, n, k, a, lda, strideA, b,
                   ldb, strideB, c, ldc, strideC, bias, biasGradient});
}
static_assert(std::is_same_v<decltype(&kilnCudaMatmul), kiln_cuda_matmul_fn>,
              "kiln_cuda_matmul's signature is kiln/CudaLibraryAbi.h's");

void kilnCudaConv(const int64_t *descriptor, const void *x, const void *w,
                  void *y) {
  device().conv(descriptor, x, w, y);
}
static_assert(std::is_same_v<decltype(&kilnCudaConv), kiln_cuda_conv_fn>,
              "kiln_cuda_conv's signature is kiln/CudaLibraryAbi.h's");

void kilnCudaAttention(const int64_t *descriptor, const void *q, const void *k,
                       const void *v, const void *mask, void *o, void *lse) {
  const void *buffers[] = {q, k, v, mask, o, lse};
  device().attention(descriptor, false, buffers);
}
static_assert(
    std::is_same_v<decltype(&kilnCudaAttention), kiln_cuda_attention_fn>,
    "kiln_cuda_attention's signature is kiln/CudaLibraryAbi.h's");

void kilnCudaAttentionGrad(const int64_t *descriptor, const void *q,
                           const void *k, const void *v, const void *o,
                           const void *lse, const void *resultGrad,
                           const void *mask, void *dq, void *dk, void *dv,
                           void *scratch) {
  const void *buffers[] = {q,    k,  v,  o,  lse,    resultGrad,
                           mask, dq, dk, dv, scratch};
  device().attention(descriptor, true, buffers);
}
static_assert(
    std::is_same_v<decltype(&kilnCudaAttentionGrad),
                   kiln_cuda_attention_grad_fn>,
    "kiln_cuda_attention_grad's signature is kiln/CudaLibraryAbi.h's");

int32_t kilnCudaGraphLoops() { return device().graphLoopsAvailable(); }
void *kilnCudaGraphWhileBegin() { return device().beginGraphWhile(); }
void kilnCudaGraphWhileTest(void *loop, const void *predicate) {
  device().testGraphWhile(loop, predicate);
}
void kilnCudaGraphWhileEnd(void *loop, const void *predicate) {
  device().endGraphWhile(loop, predicate);
}
void kilnCudaGraphWhileRetiredEnd(void *loop) {
  device().refuseRetiredGraphWhile(loop);
}
static_assert(
    std::is_same_v<decltype(&kilnCudaGraphLoops), kiln_cuda_graph_loops_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphWhileBegin),
                       kiln_cuda_graph_while_begin_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphWhileTest),
                       kiln_cuda_graph_while_test_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphWhileEnd),
                       kiln_cuda_graph_while_end_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphWhileRetiredEnd),
                       kiln_cuda_graph_while_retired_end_fn>,
    "the graph loop functions' signatures are "
    "kiln/CudaLibraryAbi.h's");

int32_t kilnCudaGraphConds() { return device().graphBranchesAvailable(); }
void *kilnCudaGraphIfBegin(const void *predicate) {
  return device().beginGraphIf(predicate);
}
void kilnCudaGraphIfElse(void *branch) { device().elseGraphIf(branch); }
void kilnCudaGraphIfEnd(void *branch) { device().endGraphIf(branch); }
static_assert(
    std::is_same_v<decltype(&kilnCudaGraphConds), kiln_cuda_graph_conds_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphIfBegin),
                       kiln_cuda_graph_if_begin_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphIfElse),
                       kiln_cuda_graph_if_else_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphIfEnd),
                       kiln_cuda_graph_if_end_fn>,
    "the graph branch functions' signatures are kiln/CudaLibraryAbi.h's");

void kilnCudaCopyConstant(void *destination, const void *constant,
                          int64_t bytes) {
  device().copyConstant(destination, constant, bytes);
}
void *kilnCudaResidentConstant(const void *constant, int64_t bytes) {
  return device().residentConstant(constant, bytes);
}
int32_t kilnCudaGraphCallBegin() { return device().beginGraphCall(); }
void kilnCudaGraphCallEnd() { device().endGraphCall(); }
static_assert(std::is_same_v<decltype(&kilnCudaCopyConstant),
                             kiln_cuda_copy_constant_fn> &&
                  std::is_same_v<decltype(&kilnCudaResidentConstant),
                                 kiln_cuda_resident_constant_fn> &&
                  std::is_same_v<decltype(&kilnCudaGraphCallBegin),
                                 kiln_cuda_graph_call_begin_fn> &&
                  std::is_same_v<decltype(&kilnCudaGraphCallEnd),
                                 kiln_cuda_graph_call_end_fn>,
              "the constants' and graph call functions' signatures are "
              "kiln/CudaLibraryAbi.h's");

int64_t kilnCudaTuneRounds(int64_t site, int64_t variants, const char *names) {
  return device().tuneRounds(site, variants, names);
}
int64_t kilnCudaTuneBegin(int64_t site, int64_t round) {
  return device().tuneBegin(site, round);
}
void kilnCudaTuneEnd(int64_t site, int64_t round) {
  device().tuneEnd(site, round);
}
int32_t kilnCudaGraphLoopsTuned(int64_t sites, const int64_t *siteNumbers) {
  return device().graphLoopsAvailable() &&
         device().tunedSitesDecided(sites, siteNumbers);
}
int32_t kilnCudaGraphLoopsPlanned(int64_t sites, const int64_t *siteNumbers,
                                  int64_t size, const int64_t *calls) {
  return device().graphLoopsAvailable() &&
         device().tunedSitesDecided(sites, siteNumbers) &&
         device().libraryCallsPlanned(size, calls);
}
static_assert(
    std::is_same_v<decltype(&kilnCudaGraphLoopsTuned),
                   kiln_cuda_graph_loops_tuned_fn> &&
        std::is_same_v<decltype(&kilnCudaGraphLoopsPlanned),
                       kiln_cuda_graph_loops_planned_fn> &&
        std::is_same_v<decltype(&kilnCudaTuneRounds),
                       kiln_cuda_tune_rounds_fn> &&
        std::is_same_v<decltype(&kilnCudaTuneBegin), kiln_cuda_tune_begin_fn> &&
        std::is_same_v<decltype(&kilnCudaTuneEnd), kiln_cuda_tune_end_fn>,
    "the tuned call sites' functions' signatures are kiln/CudaLibraryAbi.h's");

template <typename F> void *address(F *function) {
  return reinterpret_cast<void *>(function);
}

} // namespace

const std::vector<GpuRuntimeFunction> &gpuRuntimeFunctions() {
  static const std::vector<GpuRuntimeFunction> functions = {
      {"mgpuModuleLoad", address(mgpuModuleLoad)},
      {"mgpuModuleLoadJIT", address(mgpuModuleLoadJIT)},
      {"mgpuModuleUnload", address(mgpuModuleUnload)},
      {"mgpuModuleGetFunction", address(mgpuModuleGetFunction)},
      {"mgpuLaunchKernel", address(mgpuLaunchKernel)},
      {"mgpuStreamCreate", address(mgpuStreamCreate)},
      {"mgpuStreamDestroy", address(mgpuStreamDestroy)},
      {"mgpuStreamSynchronize", address(mgpuStreamSynchronize)},
      {"mgpuMemAlloc", address(mgpuMemAlloc)},
      {"mgpuMemFree", address(mgpuMemFree)},
      {"mgpuMemcpy", address(mgpuMemcpy)},
      {"mgpuMemset32", address(mgpuMemset32)},
      {KILN_CUDA_MATMUL_FUNCTION, address(kilnCudaMatmul)},
      {KILN_CUDA_CONV_FUNCTION, address(kilnCudaConv)},
      {KILN_CUDA_ATTENTION_FUNCTION, address(kilnCudaAttention)},
      {KILN_CUDA_ATTENTION_GRAD_FUNCTION, address(kilnCudaAttentionGrad)},
      {KILN_CUDA_GRAPH_LOOPS_FUNCTION, address(kilnCudaGraphLoops)},
      {KILN_CUDA_GRAPH_WHILE_BEGIN_FUNCTION, address(kilnCudaGraphWhileBegin)},
      {KILN_CUDA_GRAPH_WHILE_TEST_FUNCTION, address(kilnCudaGraphWhileTest)},
      {KILN_CUDA_GRAPH_WHILE_END_FUNCTION, address(kilnCudaGraphWhileEnd)},
      {KILN_CUDA_GRAPH_WHILE_RETIRED_END_FUNCTION,
       address(kilnCudaGraphWhileRetiredEnd)},
      {KILN_CUDA_GRAPH_CONDS_FUNCTION, address(kilnCudaGraphConds)},
      {KILN_CUDA_GRAPH_IF_BEGIN_FUNCTION, address(kilnCudaGraphIfBegin)},
      {KILN_CUDA_GRAPH_IF_ELSE_FUNCTION, address(kilnCudaGraphIfElse)},
      {KILN_CUDA_GRAPH_IF_END_FUNCTION, address(kilnCudaGraphIfEnd)},
      {KILN_CUDA_COPY_CONSTANT_FUNCTION, address(kilnCudaCopyConstant)},
      {KILN_CUDA_RESIDENT_CONSTANT_FUNCTION, address(kilnCudaResidentConstant)},
      {KILN_CUDA_GRAPH_CALL_BEGIN_FUNCTION, address(kilnCudaGraphCallBegin)},
      {KILN_CUDA_GRAPH_CALL_END_FUNCTION, address(kilnCudaGraphCallEnd)},
      {KILN_CUDA_TUNE_ROUNDS_FUNCTION, address(kilnCudaTuneRounds)},
      {KILN_CUDA_TUNE_BEGIN_FUNCTION, address(kilnCudaTuneBegin)},
      {KILN_CUDA_TUNE_END_FUNCTION, address(kilnCudaTuneEnd)},
      {KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION, address(kilnCudaGraphLoopsTuned)},
      {KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION,
       address(kilnCudaGraphLoopsPlanned)},
  };
  return functions;
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
