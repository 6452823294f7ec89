//===- CublasLtPlugin.cpp - Matrix products of CUDA modules on cuBLASLt ---===//
//
// Exports kiln_blas_plugin, the table of BlasPlugin.h. Each product is one
// cublasLtMatmul queued on the caller's stream.
//
// kiln's products are row-major; cuBLASLt's layouts are column-major by
// default. A row-major m x n matrix with rows ld apart is the column-major
// n x m matrix with columns ld apart, its transpose, so C = op(A) op(B) is
// computed as C^T = op(B)^T op(A)^T: B is cuBLASLt's first operand and A its
// second, each with the stored layout read as column-major and the same
// transpose flag.
//
// Everything cuBLASLt needs for a product besides the pointers - the
// operation and layout descriptors and the kernel its heuristic picks - is
// made once per shape (problem without pointers, plus the pointers'
// alignment, which the heuristic takes into account) and cached with the
// handle: a call site runs the heuristic on its first call only.
//
//===----------------------------------------------------------------------===//

#include "cuda/BlasPlugin.h"
#include "cuda/PluginSupport.h"

#include "kiln/CudaLibraryAbi.h"
#include "kiln/ElementType.h"

#include <cublasLt.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <tuple>

namespace kiln {
namespace cuda_blas {
namespace {

using cuda_plugin::alignmentOf;
using cuda_plugin::fail;

int failStatus(char *error, size_t errorSize, const char *what,
               cublasStatus_t status) {
  return fail(error, errorSize, "cuBLASLt: %s failed: %s (%s)", what,
              cublasLtGetStatusName(status), cublasLtGetStatusString(status));
}

/// The cuBLASLt data type of kiln element type `code`, or false.
bool dataTypeOf(int64_t code, cudaDataType_t &type) {
  switch (static_cast<kiln::ElementType>(code)) {
  case kiln::ElementType::F64:
    type = CUDA_R_64F;
    return true;
  case kiln::ElementType::F32:
    type = CUDA_R_32F;
    return true;
  case kiln::ElementType::F16:
    type = CUDA_R_16F;
    return true;
  case kiln::ElementType::BF16:
    type = CUDA_R_16BF;
    return true;
  default:
    return false;
  }
}

/// cuBLASLt's epilogue for a product's bias flag (at most one), with
/// cuBLASLt's operands in the order of the file header.
cublasLtEpilogue_t epilogueOf(int64_t flags) {
  if (flags & KILN_CUDA_MATMUL_BIAS)
    return CUBLASLT_EPILOGUE_BIAS;
  if (flags & KILN_CUDA_MATMUL_BIAS_GRADIENT_A)
    return CUBLASLT_EPILOGUE_BGRADB;
  if (flags & KILN_CUDA_MATMUL_BIAS_GRADIENT_B)
    return CUBLASLT_EPILOGUE_BGRADA;
  return CUBLASLT_EPILOGUE_DEFAULT;
}

/// The vector cuBLASLt's epilogue reads (the bias) or writes (a bias
/// gradient), or null.
const void *epilogueVectorOf(const kiln_matmul_problem_t &p) {
  return p.bias ? p.bias : p.bias_gradient;
}

/// A problem without its pointers, plus their alignments.
using ShapeKey =
    std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, uint32_t,
               uint32_t, uint32_t, uint32_t>;

ShapeKey keyOf(const kiln_matmul_problem_t &p) {
  return ShapeKey(p.flags, p.ab_dtype, p.c_dtype, p.batch, p.m, p.n, p.k, p.lda,
                  p.stride_a, p.ldb, p.stride_b, p.ldc, p.stride_c,
                  alignmentOf(p.a), alignmentOf(p.b), alignmentOf(p.c),
                  epilogueVectorOf(p) ? alignmentOf(epilogueVectorOf(p)) : 0);
}

/// The descriptors and the chosen kernel of one shape.
struct Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, result = nullptr;
  cublasLtMatmulAlgo_t algorithm;
  size_t workspaceBytes = 0;
  /// f64 products scale in f64, the others in f32.
  bool doubleScale = false;

  Plan() = default;
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;
  ~Plan() {
    if (result)
      cublasLtMatrixLayoutDestroy(result);
    if (second)
      cublasLtMatrixLayoutDestroy(second);
    if (first)
      cublasLtMatrixLayoutDestroy(first);
    if (operation)
      cublasLtMatmulDescDestroy(operation);
  }
};

struct Handle {
  cublasLtHandle_t library = nullptr;
  std::map<ShapeKey, std::unique_ptr<Plan>> plans;
  ~Handle() {
    plans.clear();
    if (library)
      cublasLtDestroy(library);
  }
};

/// A column-major layout of `rows` x `columns` with columns `ld` apart, and
/// `batch` matrices `stride` apart.
cublasStatus_t makeLayout(cublasLtMatrixLayout_t &layout, cudaDataType_t type,
                          int64_t rows, int64_t columns, int64_t ld,
                          int64_t batch, int64_t stride) {
  cublasStatus_t status = cublasLtMatrixLayoutCreate(
      &layout, type, uint64_t(rows), uint64_t(columns), ld);
  if (status != CUBLAS_STATUS_SUCCESS || batch == 1)
    return status;
  int32_t count = int32_t(batch);
  status = cublasLtMatrixLayoutSetAttribute(
      layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  return cublasLtMatrixLayoutSetAttribute(
      layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
      sizeof(stride));
}

/// Makes the plan of `p` for up to `workspaceBytes` of workspace.
int makePlan(Handle &handle, const kiln_matmul_problem_t &p,
             size_t workspaceBytes, Plan &plan, char *error,
             size_t errorSize) {
  cudaDataType_t abType, cType;
  if (!dataTypeOf(p.ab_dtype, abType) || !dataTypeOf(p.c_dtype, cType))
    return fail(error, errorSize,
                "cuBLASLt: no product of element types %lld x %lld -> %lld",
                (long long)p.ab_dtype, (long long)p.ab_dtype,
                (long long)p.c_dtype);
  bool halfInputs = abType == CUDA_R_16F || abType == CUDA_R_16BF;
  if (cType != abType && !(halfInputs && cType == CUDA_R_32F))
    return fail(error, errorSize,
                "cuBLASLt: a product of element type %lld cannot write "
                "element type %lld",
                (long long)p.ab_dtype, (long long)p.c_dtype);
  if (p.batch < 1 || p.batch > INT32_MAX || p.m < 1 || p.n < 1 || p.k < 1)
    return fail(error, errorSize,
                "cuBLASLt: a product needs a batch in 1 .. 2^31 - 1 and "
                "positive m, n, k (batch %lld, m %lld, n %lld, k %lld)",
                (long long)p.batch, (long long)p.m, (long long)p.n,
                (long long)p.k);

  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (abType == CUDA_R_64F)
    compute = CUBLAS_COMPUTE_64F;
  else if (abType == CUDA_R_32F && (p.flags & KILN_CUDA_MATMUL_TF32))
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  plan.doubleScale = abType == CUDA_R_64F;
  cublasStatus_t status = cublasLtMatmulDescCreate(
      &plan.operation, compute, plan.doubleScale ? CUDA_R_64F : CUDA_R_32F);
  if (status != CUBLAS_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cublasLtMatmulDescCreate", status);

  // cuBLASLt's first operand is B, its second A (see the file header).
  bool transposeA = p.flags & KILN_CUDA_MATMUL_TRANSPOSE_A;
  bool transposeB = p.flags & KILN_CUDA_MATMUL_TRANSPOSE_B;
  cublasOperation_t firstOp = transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t secondOp = transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  // The epilogue: cuBLASLt's bias is a vector over the rows of its
  // column-major D, which are the columns of kiln's row-major C (n of
  // them), as KILN_CUDA_MATMUL_BIAS defines it. Its bias gradients sum its
  // first operand (kiln's B) over k into n elements (BGRADA) or its second
  // (kiln's A) into m (BGRADB).
  cublasLtEpilogue_t epilogue = epilogueOf(p.flags);
  bool bias = epilogue != CUBLASLT_EPILOGUE_DEFAULT;
  if ((status = cublasLtMatmulDescSetAttribute(
           plan.operation, CUBLASLT_MATMUL_DESC_TRANSA, &firstOp,
           sizeof(firstOp))) != CUBLAS_STATUS_SUCCESS ||
      (status = cublasLtMatmulDescSetAttribute(
           plan.operation, CUBLASLT_MATMUL_DESC_TRANSB, &secondOp,
           sizeof(secondOp))) != CUBLAS_STATUS_SUCCESS ||
      (status = cublasLtMatmulDescSetAttribute(
           plan.operation, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
           sizeof(epilogue))) != CUBLAS_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cublasLtMatmulDescSetAttribute",
                      status);
  if (bias) {
    // The bias (or its gradient) has C's type; the heuristic needs a
    // pointer to choose.
    const void *vector = epilogueVectorOf(p);
    if ((status = cublasLtMatmulDescSetAttribute(
             plan.operation, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &cType,
             sizeof(cType))) != CUBLAS_STATUS_SUCCESS ||
        (status = cublasLtMatmulDescSetAttribute(
             plan.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &vector,
             sizeof(vector))) != CUBLAS_STATUS_SUCCESS)
      return failStatus(error, errorSize, "cublasLtMatmulDescSetAttribute",
                        status);
  }

  // B stored k x n (n x k transposed) is column-major n x k (k x n); A
  // stored m x k (k x m) is column-major k x m (m x k); C is n x m.
  if ((status = makeLayout(plan.first, abType, transposeB ? p.k : p.n,
                           transposeB ? p.n : p.k, p.ldb, p.batch,
                           p.stride_b)) != CUBLAS_STATUS_SUCCESS ||
      (status = makeLayout(plan.second, abType, transposeA ? p.m : p.k,
                           transposeA ? p.k : p.m, p.lda, p.batch,
                           p.stride_a)) != CUBLAS_STATUS_SUCCESS ||
      (status = makeLayout(plan.result, cType, p.n, p.m, p.ldc, p.batch,
                           p.stride_c)) != CUBLAS_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cublasLtMatrixLayoutCreate", status);

  cublasLtMatmulPreference_t preference = nullptr;
  if ((status = cublasLtMatmulPreferenceCreate(&preference)) !=
      CUBLAS_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cublasLtMatmulPreferenceCreate",
                      status);
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t,
                  cublasStatus_t (*)(cublasLtMatmulPreference_t)>
      preferenceGuard(preference, cublasLtMatmulPreferenceDestroy);
  uint64_t maxWorkspace = workspaceBytes;
  uint32_t alignments[3] = {alignmentOf(p.b), alignmentOf(p.a),
                            alignmentOf(p.c)};
  const cublasLtMatmulPreferenceAttributes_t alignmentAttributes[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES};
  if ((status = cublasLtMatmulPreferenceSetAttribute(
           preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
           sizeof(maxWorkspace))) != CUBLAS_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cublasLtMatmulPreferenceSetAttribute",
                      status);
  for (int i = 0; i < 3; ++i)
    if ((status = cublasLtMatmulPreferenceSetAttribute(
             preference, alignmentAttributes[i], &alignments[i],
             sizeof(alignments[i]))) != CUBLAS_STATUS_SUCCESS)
      return failStatus(error, errorSize,
                        "cublasLtMatmulPreferenceSetAttribute", status);
  // D is C (same pointer, same layout).
  cublasLtMatmulHeuristicResult_t found;
  int count = 0;
  status = cublasLtMatmulAlgoGetHeuristic(
      handle.library, plan.operation, plan.first, plan.second, plan.result,
      plan.result, preference, 1, &found, &count);
  if (status != CUBLAS_STATUS_SUCCESS || count == 0)
    return fail(
        error, errorSize,
        "cuBLASLt has no kernel for a product of %lld x (%lld x %lld "
        "by %lld x %lld)%s%s%s, element types %lld -> %lld: %s",
        (long long)p.batch, (long long)p.m, (long long)p.k, (long long)p.k,
        (long long)p.n, transposeA ? ", A transposed" : "",
        transposeB ? ", B transposed" : "",
        epilogue == CUBLASLT_EPILOGUE_BIAS     ? ", with a bias"
        : epilogue == CUBLASLT_EPILOGUE_BGRADB ? ", with A's bias gradient"
        : epilogue == CUBLASLT_EPILOGUE_BGRADA ? ", with B's bias gradient"
                                               : "",
        (long long)p.ab_dtype, (long long)p.c_dtype,
        status == CUBLAS_STATUS_SUCCESS ? "its heuristic returned none"
                                        : cublasLtGetStatusString(status));
  plan.algorithm = found.algo;
  plan.workspaceBytes = found.workspaceSize;
  return 0;
}

int create(void **out, char *error, size_t errorSize) {
  std::unique_ptr<Handle> handle(new (std::nothrow) Handle);
  if (!handle)
    return fail(error, errorSize, "cuBLASLt: out of host memory");
  cublasStatus_t status = cublasLtCreate(&handle->library);
  if (status != CUBLAS_STATUS_SUCCESS) {
    handle->library = nullptr;
    return failStatus(error, errorSize, "cublasLtCreate", status);
  }
  *out = handle.release();
  return 0;
}

void destroy(void *handle) { delete static_cast<Handle *>(handle); }

int matmul(void *opaque, const kiln_matmul_problem_t *p, void *stream,
           void *workspace, size_t workspaceBytes, char *error,
           size_t errorSize) {
  Handle &handle = *static_cast<Handle *>(opaque);
  // The runtime has checked the flags and the epilogue's vectors.
  ShapeKey key = keyOf(*p);
  auto found = handle.plans.find(key);
  if (found == handle.plans.end()) {
    std::unique_ptr<Plan> plan(new (std::nothrow) Plan);
    if (!plan)
      return fail(error, errorSize, "cuBLASLt: out of host memory");
    if (int failed =
            makePlan(handle, *p, workspaceBytes, *plan, error, errorSize))
      return failed;
    found = handle.plans.emplace(key, std::move(plan)).first;
  }
  Plan &plan = *found->second;
  // The plan is per shape; the bias (or its gradient) is this call's (calls
  // on a device are serialized, so setting it here cannot race another
  // product).
  if (const void *vector = epilogueVectorOf(*p)) {
    cublasStatus_t set = cublasLtMatmulDescSetAttribute(
        plan.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &vector,
        sizeof(vector));
    if (set != CUBLAS_STATUS_SUCCESS)
      return failStatus(error, errorSize, "cublasLtMatmulDescSetAttribute",
                        set);
  }
  bool accumulate = p->flags & KILN_CUDA_MATMUL_ACCUMULATE;
  double alpha64 = 1, beta64 = accumulate ? 1 : 0;
  float alpha32 = 1, beta32 = accumulate ? 1 : 0;
  const void *alpha = plan.doubleScale ? static_cast<const void *>(&alpha64)
                                       : static_cast<const void *>(&alpha32);
  const void *beta = plan.doubleScale ? static_cast<const void *>(&beta64)
                                      : static_cast<const void *>(&beta32);
  cublasStatus_t status = cublasLtMatmul(
      handle.library, plan.operation, alpha, p->b, plan.first, p->a,
      plan.second, beta, p->c, plan.result, p->c, plan.result, &plan.algorithm,
      plan.workspaceBytes ? workspace : nullptr, plan.workspaceBytes,
      static_cast<cudaStream_t>(stream));
  if (status != CUBLAS_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cublasLtMatmul", status);
  return 0;
}

const char *describe() {
  static const std::string name =
      cuda_plugin::libraryVersion("cuBLASLt", cublasLtGetVersion());
  return name.c_str();
}

const kiln_blas_plugin_t table = {KILN_BLAS_PLUGIN_VERSION, create, destroy,
                                  matmul, describe};

} // namespace
} // namespace cuda_blas
} // namespace kiln

extern "C" __attribute__((visibility("default"))) const kiln_blas_plugin_t *
kiln_blas_plugin(void) {
  return &kiln::cuda_blas::table;
}
