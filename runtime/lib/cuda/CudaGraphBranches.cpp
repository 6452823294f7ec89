//===- CudaGraphBranches.cpp - kiln.cond as IF nodes of a captured graph --===//
//
// A kiln.cond reads its predicate on the host: the host waits for the
// stream, copies the byte back and queues one branch. In a call or a loop
// being captured into a CUDA graph (CudaGraphCalls.cpp, CudaGraphLoops.cpp)
// that wait would break the capture, so the host code of a cond that
// kiln-cuda-graph-conds rewrote asks whether the runtime is capturing
// (graphBranchesAvailable) and if so queues both branches between beginGraphIf,
// elseGraphIf and endGraphIf. They become
//
//   set-branch(then, else, *predicate)   // a one-thread kernel
//   if (then) { first branch }           // conditional IF nodes
//   if (else) { second branch }
//
// in the graph being captured (a call's, or a loop's iteration or another
// branch's body inside it, at any depth), whose capture then goes on after
// them: at every launch the device decides which branch runs. The
// set-branch kernel is linked with the device runtime with the loops'
// set-condition kernel (CudaGraphLoops.cpp).
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

/// A branch while it is captured.
struct GraphIf {
  CUgraph graph = nullptr;
  CUgraphConditionalHandle conditions[2] = {0, 0};
  /// The IF node of the branch being captured, and its body.
  CUgraphNode node = nullptr;
  CUgraph body = nullptr;
  /// Whether the stream is capturing a branch's body.
  bool capturing = false;
};

} // namespace

bool CudaDevice::graphBranchesAvailable() {
  return failure.empty() && captureTarget && graphLoopsAvailable();
}

/// Ends the capture of what precedes `side`'s IF node (the call's work
/// before the branch, or the first branch's body), adds that node after it
/// and captures the stream into its body; whether all went well.
bool CudaDevice::captureGraphIfSide(void *opaque, int side) {
  auto *branch = static_cast<GraphIf *>(opaque);
  std::vector<CUgraphNode> last;
  CUgraph ended = nullptr;
  if (!check(driver->streamCaptureDependencies(streamHandle, last),
             "cuStreamGetCaptureInfo (a branch)") ||
      !check(driver->streamEndCapture(streamHandle, &ended),
             "cuStreamEndCapture (a branch)"))
    return false;
  // The first branch's node follows the call's work so far, the second
  // follows the first's node (at most one of them runs).
  if (side == 1)
    last.assign(1, branch->node);
  branch->capturing = captureIntoConditionalNode(
      branch->graph, last, branch->conditions[side], CU_GRAPH_COND_TYPE_IF,
      branch->node, branch->body, "an if node", "a branch");
  if (branch->capturing)
    captureTarget = branch->body;
  return branch->capturing;
}

void *CudaDevice::beginGraphIf(const void *predicate) {
  auto *branch = new GraphIf;
  if (!failure.empty())
    return branch;
  if (!captureTarget) {
    fail("a kiln.cond was queued as a graph branch outside a capture");
    return branch;
  }
  // The branch's nodes go where the stream captures now (a call's graph,
  // or a loop's iteration or a branch inside it); their handles belong to
  // the graph of the whole capture.
  branch->graph = captureTarget;
  for (CUgraphConditionalHandle &condition : branch->conditions)
    if (!check(driver->graphConditionalHandleCreate(
                   &condition, captureRoot, context, 0,
                   CU_GRAPH_COND_ASSIGN_DEFAULT),
               "cuGraphConditionalHandleCreate (a branch)"))
      return branch;
  void *params[] = {&branch->conditions[0], &branch->conditions[1], &predicate};
  if (check(driver->launchKernel(setBranch, 1, 1, 1, 1, 1, 1, 0, streamHandle,
                                 params, nullptr),
            "cuLaunchKernel (a branch's conditions)"))
    captureGraphIfSide(branch, 0);
  return branch;
}

void CudaDevice::elseGraphIf(void *opaque) {
  auto *branch = static_cast<GraphIf *>(opaque);
  if (failure.empty() && branch->capturing)
    captureGraphIfSide(branch, 1);
}

void CudaDevice::endGraphIf(void *opaque) {
  auto *branch = static_cast<GraphIf *>(opaque);
  if (branch->capturing) {
    // The second branch's body ends; the enclosing capture goes on after
    // its node. After a failure the capture stays ended, which fails the
    // enclosing capture (a call then runs again without one).
    captureTarget = branch->graph;
    CUgraph ended = nullptr;
    bool captured = check(driver->streamEndCapture(streamHandle, &ended),
                          "cuStreamEndCapture (a branch)") &&
                    failure.empty();
    if (captured)
      check(driver->streamBeginCaptureToGraph(streamHandle, branch->graph,
                                              {branch->node},
                                              CU_STREAM_CAPTURE_MODE_RELAXED),
            "cuStreamBeginCaptureToGraph (after a branch)");
  }
  delete branch;
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
