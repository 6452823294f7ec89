//===- CudnnAttention.cpp - Attention as cuDNN graphs ---------------------===//
//
// The graphs follow the pattern cuDNN's fused attention engines match
// (the cuDNN frontend's composite SDPA nodes): K and V are described
// transposed ([B, H, D, Nk], the products' right operands), the scores
// and the softmax are f32 virtual tensors, the softmax weights are
// rounded to the operands' type before their product with V, and the
// scalars (the scale, -inf, 1) are passed by value. The gradient keeps
// two f32 tensors of its own in the caller's scratch: dq's accumulator
// and the rows' sum of do * o.
//
//===----------------------------------------------------------------------===//

#include "cuda/cudnn/CudnnAttention.h"

#include "kiln/CudaLibraryAbi.h"
#include "kiln/ElementType.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <utility>

namespace kiln {
namespace cuda_dnn {

using cuda_plugin::fail;

AttentionProblem::AttentionProblem(const int64_t *d)
    : dtype(d[0]), flags(d[1]), b(d[2]), h(d[3]), nq(d[4]), nk(d[5]), d(d[6]),
      dv(d[7]), maskDims{d[8], d[9], d[10], d[11]} {
  std::memcpy(&scale, &d[12], sizeof(scale));
}

bool AttentionProblem::causal() const {
  return flags & KILN_CUDA_ATTENTION_CAUSAL;
}
bool AttentionProblem::masked() const {
  return flags & KILN_CUDA_ATTENTION_MASK;
}

std::string AttentionProblem::check() const {
  if (flags & ~int64_t(KILN_CUDA_ATTENTION_FLAGS))
    return "unknown flags " + std::to_string(flags);
  auto type = static_cast<kiln::ElementType>(dtype);
  if (type != kiln::ElementType::F16 && type != kiln::ElementType::BF16)
    return "kiln dtype " + std::to_string(dtype) +
           " (cuDNN's fused attention takes f16 and bf16)";
  if (b < 1 || h < 1 || nq < 1 || nk < 1 || d < 1 || dv < 1)
    return "an empty or negative size";
  std::array<int64_t, 4> full{b, h, nq, nk};
  if (masked())
    for (int i = 0; i < 4; ++i)
      if (maskDims[i] != 1 && maskDims[i] != full[i])
        return "mask dim " + std::to_string(i) + " of " +
               std::to_string(maskDims[i]) + " against " +
               std::to_string(full[i]) + " scores";
  if (!std::isfinite(scale))
    return "a scale that is not finite";
  return "";
}

namespace {

/// The ids of the tensors the variant pack names: the ABI's buffers by
/// their position (forward and gradient alike, by name), the gradient's
/// two scratch tensors, and the scalars passed by value.
enum TensorId : int64_t {
  kQ = 1,
  kK,
  kV,
  kMask,
  kO,
  kLse,
  kResultGrad,
  kQueryGrad,
  kKeyGrad,
  kValueGrad,
  kQueryGradAccumulator,
  kRowDot,
  kScale,
  kNegativeInfinity,
  kOne,
  kFirstVirtual = 100
};

/// Builds one attention graph's descriptors into an AttentionPlan.
class GraphBuilder {
public:
  GraphBuilder(AttentionPlan &plan, cudnnDataType_t io) : io(io), plan(plan) {}

  using Tensor = cudnnBackendDescriptor_t;

  Tensor tensor(int64_t id, const std::vector<int64_t> &dims,
                const std::vector<int64_t> &strides, cudnnDataType_t type,
                bool isVirtual = false, bool byValue = false) {
    Descriptor &t = part();
    int64_t rank = dims.size(), alignment = 16;
    if (!isVirtual) {
      plan.boundIds.insert(id);
      auto found = alignments.find(id);
      if (found != alignments.end())
        alignment = found->second;
    }
    b.create(t, CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        .set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(),
             rank)
        .set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(),
             rank)
        .set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id)
        .set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment)
        .set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual)
        .set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &byValue)
        .finalize(t, "finalizing a tensor descriptor");
    return t.get();
  }
  Tensor dense(int64_t id, const std::vector<int64_t> &dims,
               cudnnDataType_t type) {
    return tensor(id, dims, denseStrides(dims), type);
  }
  Tensor virtualDense(const std::vector<int64_t> &dims,
                      cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return tensor(nextVirtual++, dims, denseStrides(dims), type, true);
  }
  Tensor virtualStrided(const std::vector<int64_t> &dims,
                        const std::vector<int64_t> &strides,
                        cudnnDataType_t type) {
    return tensor(nextVirtual++, dims, strides, type, true);
  }
  /// The f32 scalar `id`, passed by value; one descriptor however often
  /// the graph uses it.
  Tensor scalar(int64_t id) {
    Tensor &t = scalars[id];
    if (!t)
      t = tensor(id, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
    return t;
  }

  /// y = mode(x[, second[, third]]), computed in `precision`.
  void pointwise(cudnnPointwiseMode_t mode, Tensor x, Tensor second,
                 Tensor third, Tensor y,
                 cudnnDataType_t precision = CUDNN_DATA_FLOAT,
                 int64_t axis = -1) {
    Descriptor &p = part();
    b.create(p, CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
        .set(p, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
        .set(p, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE,
             &precision);
    if (axis >= 0)
      b.set(p, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    b.finalize(p, "finalizing a pointwise descriptor");
    addOperation(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                 {{CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p.get()},
                  {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x},
                  {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, second},
                  {CUDNN_ATTR_OPERATION_POINTWISE_TDESC, third},
                  {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y}},
                 "finalizing a pointwise operation");
  }

  /// c = a b over the last two dims, batched over the first two.
  void matmul(Tensor a, Tensor right, Tensor c) {
    Descriptor &m = part();
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    b.create(m, CUDNN_BACKEND_MATMUL_DESCRIPTOR)
        .set(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
        .finalize(m, "finalizing a matmul descriptor");
    addOperation(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
                 {{CUDNN_ATTR_OPERATION_MATMUL_ADESC, a},
                  {CUDNN_ATTR_OPERATION_MATMUL_BDESC, right},
                  {CUDNN_ATTR_OPERATION_MATMUL_CDESC, c},
                  {CUDNN_ATTR_OPERATION_MATMUL_DESC, m.get()}},
                 "finalizing a matmul operation");
  }

  /// y = the `reduce` of x over the dims where y has 1.
  void reduction(cudnnReduceTensorOp_t reduce, Tensor x, Tensor y) {
    Descriptor &r = part();
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    b.create(r, CUDNN_BACKEND_REDUCTION_DESCRIPTOR)
        .set(r, CUDNN_ATTR_REDUCTION_OPERATOR,
             CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &reduce)
        .set(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
        .finalize(r, "finalizing a reduction descriptor");
    addOperation(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                 {{CUDNN_ATTR_OPERATION_REDUCTION_DESC, r.get()},
                  {CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x},
                  {CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y}},
                 "finalizing a reduction operation");
  }

  /// y = x seen through y's dims and strides (a transposed view).
  void reshape(Tensor x, Tensor y) {
    addOperation(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR,
                 {{CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x},
                  {CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y}},
                 "finalizing a reshape operation");
  }

  /// The operation graph of everything built, for `handle` (null when
  /// planning without a device).
  void finish(cudnnHandle_t handle) {
    Descriptor &graph = plan.graph;
    b.create(graph, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        .set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, operations.data(),
             static_cast<int64_t>(operations.size()));
    if (handle)
      b.set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE,
            &handle);
    b.finalize(graph, "finalizing the attention graph");
  }

  Builder b;
  cudnnDataType_t io;
  /// The byte alignments of the bound tensors, by id (16 where absent).
  std::map<int64_t, int64_t> alignments;

private:
  Descriptor &part() {
    plan.parts.push_back(std::make_unique<Descriptor>());
    return *plan.parts.back();
  }
  /// An operation of `type` whose attributes name the descriptors in
  /// `inputs` (a null one left unset: an operand the mode does not take),
  /// finalized and added to the graph.
  void addOperation(cudnnBackendDescriptorType_t type,
                    std::initializer_list<std::pair<cudnnBackendAttributeName_t,
                                                    cudnnBackendDescriptor_t>>
                        inputs,
                    const char *what) {
    Descriptor &op = part();
    b.create(op, type);
    for (const auto &[name, descriptor] : inputs)
      if (descriptor)
        b.set(op, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &descriptor);
    b.finalize(op, what);
    operations.push_back(op.get());
  }

  AttentionPlan &plan;
  std::vector<cudnnBackendDescriptor_t> operations;
  int64_t nextVirtual = kFirstVirtual;
  std::map<int64_t, Tensor> scalars;
};

/// A call's buffers by tensor id, in the order of the ABI's functions (the
/// gradient's scratch split into dq's accumulator and the rows' sums),
/// absent ones (a null mask) left out.
std::vector<std::pair<int64_t, const void *>>
bindings(bool gradient, int64_t queryGradElements, const void *const *buffers) {
  static const int64_t forwardOrder[] = {kQ, kK, kV, kMask, kO, kLse};
  static const int64_t gradientOrder[] = {
      kQ,          kK,    kV,         kO,       kLse,
      kResultGrad, kMask, kQueryGrad, kKeyGrad, kValueGrad};
  std::vector<std::pair<int64_t, const void *>> bound;
  const int64_t *order = gradient ? gradientOrder : forwardOrder;
  size_t count = gradient ? 10 : 6;
  for (size_t i = 0; i < count; ++i)
    if (buffers[i])
      bound.emplace_back(order[i], buffers[i]);
  if (gradient) {
    const float *scratch = static_cast<const float *>(buffers[10]);
    bound.emplace_back(kQueryGradAccumulator, scratch);
    bound.emplace_back(kRowDot, scratch + queryGradElements);
  }
  return bound;
}

/// The scores S = scale * q k^T (+ mask), [B, H, Nq, Nk] f32, and the
/// tensors of q and of k seen transposed.
struct Scores {
  GraphBuilder::Tensor q, keyT, scores;
};

Scores buildScores(GraphBuilder &g, const AttentionProblem &p) {
  Scores s;
  s.q = g.dense(kQ, {p.b, p.h, p.nq, p.d}, g.io);
  // k [B, H, Nk, D] read as k^T [B, H, D, Nk].
  s.keyT = g.tensor(kK, {p.b, p.h, p.d, p.nk},
                    {p.h * p.nk * p.d, p.nk * p.d, 1, p.d}, g.io);
  std::vector<int64_t> dims{p.b, p.h, p.nq, p.nk};
  auto product = g.virtualDense(dims);
  g.matmul(s.q, s.keyT, product);
  auto scaled = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_MUL, product, g.scalar(kScale), nullptr, scaled);
  s.scores = scaled;
  if (p.masked()) {
    std::vector<int64_t> maskDims(p.maskDims.begin(), p.maskDims.end());
    auto mask = g.dense(kMask, maskDims, g.io);
    auto biased = g.virtualDense(dims);
    g.pointwise(CUDNN_POINTWISE_ADD, scaled, mask, nullptr, biased);
    s.scores = biased;
  }
  return s;
}

/// `x` with every key j > i of query row i at -inf: x where row >= col,
/// -inf elsewhere.
GraphBuilder::Tensor causalMask(GraphBuilder &g, const AttentionProblem &p,
                                GraphBuilder::Tensor x) {
  std::vector<int64_t> dims{p.b, p.h, p.nq, p.nk};
  auto row = g.virtualDense(dims, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, nullptr, nullptr, row,
              CUDNN_DATA_FLOAT, 2);
  auto column = g.virtualDense(dims, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, nullptr, nullptr, column,
              CUDNN_DATA_FLOAT, 3);
  auto keep = g.virtualDense(dims, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, column, nullptr, keep,
              CUDNN_DATA_BOOLEAN);
  auto masked = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, g.scalar(kNegativeInfinity),
              keep, masked);
  return masked;
}

/// o = softmax(S) v and lse = log(sum(exp(S))) by rows.
void buildForward(GraphBuilder &g, const AttentionProblem &p) {
  Scores s = buildScores(g, p);
  GraphBuilder::Tensor scores = s.scores;
  if (p.causal())
    scores = causalMask(g, p, scores);
  std::vector<int64_t> dims{p.b, p.h, p.nq, p.nk}, rows{p.b, p.h, p.nq, 1};
  auto max = g.virtualDense(rows);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, scores, max);
  auto shifted = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_SUB, scores, max, nullptr, shifted);
  auto exp = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, nullptr, exp);
  auto sum = g.virtualDense(rows);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, exp, sum);
  auto logSum = g.virtualDense(rows);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, logSum);
  auto lse = g.dense(kLse, rows, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_ADD, max, logSum, nullptr, lse);
  // The weights, rounded to the operands' type for their product with v.
  auto weights = g.virtualDense(dims, g.io);
  g.pointwise(CUDNN_POINTWISE_DIV, exp, sum, nullptr, weights);
  auto v = g.dense(kV, {p.b, p.h, p.nk, p.dv}, g.io);
  auto o = g.dense(kO, {p.b, p.h, p.nq, p.dv}, g.io);
  g.matmul(weights, v, o);
}

/// dq, dk and dv from the forward's lse:
///   P = exp(S - lse), dv = P^T do, dP = do v^T,
///   dS = scale * P * (dP - rowsum(do * o)), dq = dS k, dk = dS^T q.
void buildGradient(GraphBuilder &g, const AttentionProblem &p) {
  std::vector<int64_t> dims{p.b, p.h, p.nq, p.nk}, rows{p.b, p.h, p.nq, 1},
      resultDims{p.b, p.h, p.nq, p.dv};
  auto o = g.dense(kO, resultDims, g.io);
  auto resultGrad = g.dense(kResultGrad, resultDims, g.io);
  auto product = g.virtualDense(resultDims);
  g.pointwise(CUDNN_POINTWISE_MUL, resultGrad, o, nullptr, product);
  auto rowSum = g.virtualDense(rows);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, product, rowSum);
  auto rowDot = g.dense(kRowDot, rows, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, rowSum, g.scalar(kOne), nullptr, rowDot);

  Scores s = buildScores(g, p);
  auto lse = g.dense(kLse, rows, CUDNN_DATA_FLOAT);
  auto shifted = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_SUB, s.scores, lse, nullptr, shifted);
  if (p.causal())
    shifted = causalMask(g, p, shifted);
  auto weights = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, nullptr, weights);

  // dv = P^T do, P^T the weights seen transposed in the operands' type.
  std::vector<int64_t> transposed{p.b, p.h, p.nk, p.nq},
      transposedStrides{p.h * p.nq * p.nk, p.nq * p.nk, 1, p.nk};
  auto weightsT = g.virtualStrided(transposed, transposedStrides, g.io);
  g.reshape(weights, weightsT);
  g.matmul(weightsT, resultGrad,
           g.dense(kValueGrad, {p.b, p.h, p.nk, p.dv}, g.io));

  // dP = do v^T, v [B, H, Nk, Dv] read as v^T [B, H, Dv, Nk].
  auto valueT = g.tensor(kV, {p.b, p.h, p.dv, p.nk},
                         {p.h * p.nk * p.dv, p.nk * p.dv, 1, p.dv}, g.io);
  auto weightsGrad = g.virtualDense(dims);
  g.matmul(resultGrad, valueT, weightsGrad);
  auto centered = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_SUB, weightsGrad, rowDot, nullptr, centered);
  auto scoresGrad = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_MUL, centered, weights, nullptr, scoresGrad);
  auto scaledGrad = g.virtualDense(dims);
  g.pointwise(CUDNN_POINTWISE_MUL, scoresGrad, g.scalar(kScale), nullptr,
              scaledGrad);

  // dk = dS^T q.
  auto scaledGradT = g.virtualStrided(transposed, transposedStrides, g.io);
  g.reshape(scaledGrad, scaledGradT);
  g.matmul(scaledGradT, s.q, g.dense(kKeyGrad, {p.b, p.h, p.nk, p.d}, g.io));

  // dq = dS k, accumulated in f32 and then rounded into dq.
  auto key = g.virtualStrided({p.b, p.h, p.nk, p.d},
                              denseStrides({p.b, p.h, p.nk, p.d}), g.io);
  g.reshape(s.keyT, key);
  std::vector<int64_t> queryDims{p.b, p.h, p.nq, p.d};
  auto accumulator =
      g.dense(kQueryGradAccumulator, queryDims, CUDNN_DATA_FLOAT);
  g.matmul(scaledGrad, key, accumulator);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, accumulator, nullptr, nullptr,
              g.dense(kQueryGrad, queryDims, g.io));
}

} // namespace

int planAttention(const AttentionProblem &problem, bool gradient,
                  const void *const *buffers, const PlanTarget &target,
                  size_t workspaceBytes, size_t wanted, AttentionPlan &plan,
                  std::vector<Candidate> &candidates, char *error,
                  size_t errorSize, std::vector<cudnnStatus_t> *refusals) {
  std::string wrong = problem.check();
  if (!wrong.empty())
    return fail(error, errorSize, "invalid attention: %s", wrong.c_str());
  cudnnDataType_t io =
      static_cast<kiln::ElementType>(problem.dtype) == kiln::ElementType::F16
          ? CUDNN_DATA_HALF
          : CUDNN_DATA_BFLOAT16;
  plan.gradient = gradient;
  plan.scale = static_cast<float>(problem.scale);
  plan.negativeInfinity = -std::numeric_limits<float>::infinity();
  plan.one = 1;
  plan.queryGradElements = problem.b * problem.h * problem.nq * problem.d;
  GraphBuilder g(plan, io);
  if (buffers)
    for (auto [id, pointer] :
         bindings(gradient, plan.queryGradElements, buffers))
      g.alignments[id] =
          std::min<int64_t>(16, cuda_plugin::alignmentOf(pointer));
  if (gradient)
    buildGradient(g, problem);
  else
    buildForward(g, problem);
  g.finish(target.handle);
  if (!g.b.ok())
    return g.b.failure(error, errorSize);
  rankedPlans(
      plan.graph, target, wanted, workspaceBytes,
      [](const Descriptor &) { return true; }, plan.configs, candidates,
      refusals);
  if (candidates.empty()) {
    // cuDNN's reason for the last refusal, for whoever has to find out why.
    char detail[256] = "";
    cudnnGetLastErrorString(detail, sizeof(detail));
    return fail(error, errorSize,
                "cuDNN has no engine for the attention%s of [%lld, %lld, "
                "%lld, %lld] queries and %lld keys (value dim %lld%s%s, kiln "
                "dtype %lld) within %zu bytes of workspace%s%s",
                gradient ? " gradient" : "", (long long)problem.b,
                (long long)problem.h, (long long)problem.nq,
                (long long)problem.d, (long long)problem.nk,
                (long long)problem.dv, problem.causal() ? ", causal" : "",
                problem.masked() ? ", masked" : "", (long long)problem.dtype,
                workspaceBytes, *detail ? ": " : "", detail);
  }
  return 0;
}

cudnnStatus_t executeAttention(cudnnHandle_t library, const AttentionPlan &plan,
                               const Descriptor &executable,
                               int64_t workspaceBytes,
                               const void *const *buffers, void *workspace) {
  std::vector<int64_t> ids;
  std::vector<void *> pointers;
  auto add = [&](int64_t id, const void *pointer) {
    if (!plan.boundIds.count(id))
      return;
    ids.push_back(id);
    pointers.push_back(const_cast<void *>(pointer));
  };
  for (auto [id, pointer] :
       bindings(plan.gradient, plan.queryGradElements, buffers))
    add(id, pointer);
  add(kOne, &plan.one);
  add(kScale, &plan.scale);
  add(kNegativeInfinity, &plan.negativeInfinity);
  Descriptor pack;
  Builder b;
  void *space = workspaceBytes ? workspace : nullptr;
  int64_t count = ids.size();
  b.create(pack, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
      .set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
           ids.data(), count)
      .set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           pointers.data(), count)
      .set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &space)
      .finalize(pack, "finalizing the variant pack");
  if (!b.ok())
    return CUDNN_STATUS_BAD_PARAM;
  return cudnnBackendExecute(library, executable.get(), pack.get());
}

} // namespace cuda_dnn
} // namespace kiln
