//===- CudnnAttention.h - Attention as cuDNN graphs -------------*- C++ -*-===//
//
// kiln.attention and kiln.attention_grad of f16 and bf16 operands as the
// operation graphs cuDNN's fused flash-attention engines run (what the
// cuDNN frontend calls the composite SDPA node, written here on the
// backend API): the forward a product, the scale, the mask as an additive
// bias, the causal mask, a softmax that also writes the row log-sum-exp,
// and a product; the backward recomputes the softmax from that log-sum-exp
// and writes the three gradients. The layouts are kiln's dense row-major
// ones (kiln/CudaLibraryAbi.h, KILN_CUDA_ATTENTION_FUNCTION).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDNN_CUDNNATTENTION_H
#define KILN_RUNTIME_LIB_CUDA_CUDNN_CUDNNATTENTION_H

#include "cuda/cudnn/CudnnGraph.h"

#include <array>
#include <set>
#include <string>

namespace kiln {
namespace cuda_dnn {

/// An attention descriptor's fields, read once.
struct AttentionProblem {
  int64_t dtype, flags, b, h, nq, nk, d, dv;
  std::array<int64_t, 4> maskDims;
  double scale;

  explicit AttentionProblem(const int64_t *descriptor);

  /// What is wrong with it, or empty.
  std::string check() const;
  bool causal() const;
  bool masked() const;
};

/// An attention graph, its plan and what its execution passes by value.
struct AttentionPlan {
  bool gradient = false;
  std::vector<std::unique_ptr<Descriptor>> parts;
  Descriptor graph, plan;
  std::vector<std::unique_ptr<Descriptor>> configs;
  int64_t workspaceBytes = 0;
  /// Elements of the f32 accumulator of dq in the gradient's scratch.
  int64_t queryGradElements = 0;
  /// The ids of the graph's tensors that are not virtual: those an
  /// execution binds.
  std::set<int64_t> boundIds;
  float scale = 1, negativeInfinity = 0, one = 1;
};

/// Builds the graph of `problem` (its gradient with `gradient`) into
/// `plan` and finds up to `wanted` execution plans for `target`, best
/// first; fails with a message when cuDNN takes no such graph or has no
/// engine for it within `workspaceBytes`. The tensors declare the
/// alignments of `buffers` (those of a call, in the order of
/// executeAttention), or 16 bytes where `buffers` is null. `refusals` as
/// for rankedPlans.
int planAttention(const AttentionProblem &problem, bool gradient,
                  const void *const *buffers, const PlanTarget &target,
                  size_t workspaceBytes, size_t wanted, AttentionPlan &plan,
                  std::vector<Candidate> &candidates, char *error,
                  size_t errorSize,
                  std::vector<cudnnStatus_t> *refusals = nullptr);

/// Queues `executable` (a plan of `plan`'s graph) on the handle's stream.
/// `buffers` are the call's pointers in the order of the ABI's function:
/// q, k, v, mask, o, lse for the forward; q, k, v, o, lse, do, mask, dq,
/// dk, dv, scratch for the gradient.
cudnnStatus_t executeAttention(cudnnHandle_t library, const AttentionPlan &plan,
                               const Descriptor &executable,
                               int64_t workspaceBytes,
                               const void *const *buffers, void *workspace);

} // namespace cuda_dnn
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDNN_CUDNNATTENTION_H
