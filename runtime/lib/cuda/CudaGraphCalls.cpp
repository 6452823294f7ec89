//===- CudaGraphCalls.cpp - Whole calls as CUDA graphs --------------------===//
//
// A call whose host code only queues device work (kiln-cuda-graph-calls
// brackets such a function's entry with kiln_cuda_graph_call_begin and
// _end) costs the host a driver call per kernel, product and copy on every
// call: for a training step of small kernels, more host time than the GPU
// spends on some of them. The runtime captures such a function's work into
// a CUDA graph at its second call and launches the graph again on later
// calls with the same argument buffers: begin answers that the call's work
// is queued, and the host code returns at once. The first call runs
// without a capture: it loads the kernels and the libraries' plug-ins,
// tunes cuDNN's engines and uploads the module's constants, which a
// capture could not do.
//
// Captured work keeps the addresses it was captured with:
//   - arguments: a graph serves the calls with the argument buffers it was
//     captured with. A call with other buffers is captured again, and up to
//     kGraphsPerFunction graphs of a function are kept, so that a training
//     loop whose parameters alternate between two sets of buffers launches
//     both again; beyond that the least recently launched one is updated
//     in place where the driver can (cuGraphExecUpdate);
//   - intermediates: the buffers a capture allocates stay the function's,
//     out of the pool, while it has graphs, and its later captures are
//     handed the same buffers again. They only hold intermediates (a
//     call's results are its arguments), so the function's graphs share
//     them: they run one after the other on the stream.
// A function captured kMaxCapturesInARow times without a graph launched
// again in between (its arguments change every call) is not captured any
// more, and neither is one whose capture failed (work the driver does not
// capture): that call runs again without a capture, so it fails only where
// it would have failed anyway.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include <algorithm>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

constexpr size_t kGraphsPerFunction = 4;
constexpr int kMaxCapturesInARow = 3;

void *toHost(CUdeviceptr pointer) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
}

} // namespace

bool CudaDevice::graphCallsAvailable() {
  if (graphCallSupport)
    return graphCallSupport == 1;
  graphCallSupport = 2;
  if (graphsTurnedOff())
    return false;
  CUgraph probe = nullptr;
  if (driver->graphCreate(&probe, 0) != CUDA_SUCCESS)
    return false;
  driver->graphDestroy(probe);
  graphCallSupport = 1;
  return true;
}

bool CudaDevice::beginGraphCall() {
  if (!failure.empty() || !callEntry || capturingCall || !graphCallsAvailable())
    return false;
  std::unique_ptr<GraphCall> &slot = graphCalls[callEntry];
  if (!slot)
    slot = std::make_unique<GraphCall>();
  GraphCall &call = *slot;
  ++call.calls;
  if (call.retired || call.calls == 1)
    return false;
  for (GraphCall::Graph &graph : call.graphs) {
    if (graph.args != *callArgs)
      continue;
    graph.lastUse = call.calls;
    call.capturesInARow = 0;
    if (check(driver->graphLaunch(graph.exec, streamHandle),
              "cuGraphLaunch (a call)"))
      ++counters.graphCalls;
    return true;
  }
  if (call.capturesInARow >= kMaxCapturesInARow) {
    retireGraphCall(call);
    return false;
  }
  CUgraph graph = nullptr;
  if (driver->graphCreate(&graph, 0) != CUDA_SUCCESS)
    return false;
  if (driver->streamBeginCaptureToGraph(streamHandle, graph, {},
                                        CU_STREAM_CAPTURE_MODE_RELAXED) !=
      CUDA_SUCCESS) {
    driver->graphDestroy(graph);
    retireGraphCall(call);
    return false;
  }
  capturingCall = &call;
  captureRoot = captureTarget = graph;
  // The capture hands out the buffers the function's graphs hold first,
  // then those other functions' graphs hold: graphs run one after the
  // other on the stream, so their intermediates may share bytes, and the
  // graphs of a module hold about its largest function's, not the sum.
  call.spare = call.buffers;
  std::set<CUdeviceptr> own(call.buffers.begin(), call.buffers.end());
  for (const auto &[pointer, holders] : heldByGraphs)
    if (!own.count(pointer) && !liveBuffers.count(pointer))
      call.spare.push_back(pointer);
  return false;
}

void CudaDevice::endGraphCall() {
  GraphCall *call = capturingCall;
  if (!call)
    return;
  capturingCall = nullptr;
  call->spare.clear();
  CUgraph graph = captureRoot;
  captureRoot = captureTarget = nullptr;
  // After a failure inside a loop the stream may be capturing the loop's
  // body, a graph the call's graph owns.
  CUgraph captured = nullptr;
  bool ended =
      driver->streamEndCapture(streamHandle, &captured) == CUDA_SUCCESS &&
      captured == graph;
  // Instantiated where a graph of the function is free, else the least
  // recently launched one updated in place, or replaced where the driver
  // cannot update it.
  GraphCall::Graph *target = nullptr;
  if (ended && failure.empty()) {
    if (call->graphs.size() < kGraphsPerFunction) {
      call->graphs.emplace_back();
      target = &call->graphs.back();
    } else {
      target = &*std::min_element(
          call->graphs.begin(), call->graphs.end(),
          [](const GraphCall::Graph &a, const GraphCall::Graph &b) {
            return a.lastUse < b.lastUse;
          });
      if (driver->graphExecUpdate(target->exec, graph) != CUDA_SUCCESS) {
        driver->graphExecDestroy(target->exec);
        target->exec = nullptr;
      }
    }
    if (!target->exec &&
        driver->graphInstantiate(&target->exec, graph) != CUDA_SUCCESS) {
      target->exec = nullptr;
      target = nullptr;
    }
  }
  if (graph)
    driver->graphDestroy(graph);
  if (!target) {
    // Work the driver did not capture, or a failure while capturing: the
    // call runs again without a capture, and so do the function's later
    // calls.
    retireGraphCall(*call);
    rerunWithoutCapture = true;
    return;
  }
  target->args = *callArgs;
  target->lastUse = call->calls;
  ++call->capturesInARow;
  if (check(driver->graphLaunch(target->exec, streamHandle),
            "cuGraphLaunch (a call)")) {
    ++counters.graphCalls;
    ++counters.graphCaptures;
  }
}

void CudaDevice::retireGraphCall(GraphCall &call) {
  call.retired = true;
  // A graph launched before runs before anything queued after this.
  for (GraphCall::Graph &graph : call.graphs)
    if (graph.exec)
      driver->graphExecDestroy(graph.exec);
  call.graphs.clear();
  // Buffers no other function's graphs hold go back to the pool (those the
  // current call still uses, at its end).
  for (CUdeviceptr buffer : call.buffers) {
    auto held = heldByGraphs.find(buffer);
    if (held == heldByGraphs.end() || --held->second > 0)
      continue;
    heldByGraphs.erase(held);
    if (!liveBuffers.count(buffer))
      returnToPool(buffer);
  }
  call.buffers.clear();
  call.spare.clear();
}

void *CudaDevice::allocateForCapture(size_t size, bool hostShared) {
  std::vector<CUdeviceptr> &spare = capturingCall->spare;
  for (auto it = spare.begin(); it != spare.end(); ++it) {
    const Allocation &held = allocations[*it];
    if (held.hostShared != hostShared || held.bytes < size ||
        held.bytes / 2 > size)
      continue;
    CUdeviceptr pointer = *it;
    spare.erase(it);
    liveBuffers[pointer] = ++handedOut;
    // Another function's: this one's graphs hold it too from now on.
    std::vector<CUdeviceptr> &own = capturingCall->buffers;
    if (std::find(own.begin(), own.end(), pointer) == own.end())
      holdForCapture(pointer);
    return toHost(pointer);
  }
  return nullptr;
}

void CudaDevice::holdForCapture(CUdeviceptr pointer) {
  capturingCall->buffers.push_back(pointer);
  ++heldByGraphs[pointer];
}

void CudaDevice::runEntry(void (*entry)(void **), std::vector<void *> &args) {
  entry(args.data());
  // Host code that began a capture ends it (a capture must not outlive
  // its call).
  endGraphCall();
  if (!rerunWithoutCapture)
    return;
  rerunWithoutCapture = false;
  failure.clear();
  refused = false;
  entry(args.data());
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
