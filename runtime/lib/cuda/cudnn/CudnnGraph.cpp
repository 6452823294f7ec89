//===- CudnnGraph.cpp - Ranked execution plans of a cuDNN graph -----------===//

#include "cuda/cudnn/CudnnGraph.h"

namespace kiln {
namespace cuda_dnn {

void rankedPlans(const Descriptor &graph, const PlanTarget &target,
                 size_t wanted, size_t workspaceBytes,
                 const std::function<bool(const Descriptor &)> &allowed,
                 std::vector<std::unique_ptr<Descriptor>> &configs,
                 std::vector<Candidate> &candidates,
                 std::vector<cudnnStatus_t> *refusals) {
  cudnnBackendDescriptor_t graphHandle = graph.get();
  for (cudnnBackendHeurMode_t heurMode :
       {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Descriptor heuristics;
    Builder h;
    h.create(heuristics, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
        .set(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &graphHandle)
        .set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE,
             &heurMode);
    if (!target.handle)
      h.set(heuristics, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, &target.deviceProperties);
    h.finalize(heuristics, "finalizing the engine heuristics");
    if (!h.ok())
      continue;
    int64_t count = 0;
    if (cudnnBackendGetAttribute(heuristics.get(),
                                 CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                 nullptr) != CUDNN_STATUS_SUCCESS ||
        count <= 0)
      continue;
    std::vector<std::unique_ptr<Descriptor>> found;
    std::vector<cudnnBackendDescriptor_t> handles;
    for (int64_t i = 0; i < count; ++i) {
      found.push_back(std::make_unique<Descriptor>());
      if (found.back()->create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) !=
          CUDNN_STATUS_SUCCESS)
        return;
      handles.push_back(found.back()->get());
    }
    int64_t returned = 0;
    if (cudnnBackendGetAttribute(
            heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
            handles.data()) != CUDNN_STATUS_SUCCESS)
      continue;
    for (int64_t i = 0; i < returned && candidates.size() < wanted; ++i) {
      if (!allowed(*found[i]))
        continue;
      auto candidate = std::make_unique<Descriptor>();
      Builder p;
      cudnnBackendDescriptor_t config = handles[i];
      p.create(*candidate, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      if (target.handle)
        p.set(*candidate, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
              &target.handle);
      else
        p.set(*candidate, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP,
              CUDNN_TYPE_BACKEND_DESCRIPTOR, &target.deviceProperties);
      p.set(*candidate, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, &config)
          .finalize(*candidate, "finalizing an execution plan");
      if (!p.ok()) {
        if (refusals)
          refusals->push_back(p.result());
        continue;
      }
      int64_t bytes = 0, got = 0;
      if (cudnnBackendGetAttribute(
              candidate->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
              CUDNN_TYPE_INT64, 1, &got, &bytes) != CUDNN_STATUS_SUCCESS ||
          bytes < 0 || static_cast<size_t>(bytes) > workspaceBytes)
        continue;
      candidates.push_back({std::move(candidate), bytes});
    }
    // The plans refer to their configurations: those stay with the plan.
    for (auto &config : found)
      configs.push_back(std::move(config));
    if (candidates.size() >= wanted)
      break;
  }
}

} // namespace cuda_dnn
} // namespace kiln
