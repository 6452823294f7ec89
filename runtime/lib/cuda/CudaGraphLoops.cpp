//===- CudaGraphLoops.cpp - kiln.while loops as CUDA graphs ---------------===//
//
// The host code of a loop that kiln-cuda-graph-loops rewrote runs its test,
// its body and its test again once, between beginGraphWhile, testGraphWhile
// and endGraphWhile, while the stream is captured: its launches, copies and
// library calls become nodes of a graph instead of running. The graph is
//
//   test                       // the loop's condition region
//   set-condition(loop, *predicate)
//   while (loop) {             // conditional WHILE node
//     body                     // the loop's body
//     test                     // the condition region again
//     set-condition(loop, *predicate)
//   }
//
// launched once on the stream, so that the loop runs on the device with no
// wait for the host per iteration; each iteration is the body's and the
// test's kernels and one small kernel, with no conditional node inside
// (the test's second copy is what a do-while of the rotated loop needs). A
// kernel sets a conditional node's value only through the device runtime's
// cudaGraphSetConditional, which lives in the toolkit's libcudadevrt.a: the
// small set-condition kernel below is linked with it by the driver's JIT
// linker when a device first needs it, and a device that cannot (no
// conditional nodes in the driver, no libcudadevrt.a, KILN_CUDA_GRAPHS=0)
// runs the loops in host code, which the compiled code also holds.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include "kiln/CudaLibraryAbi.h"

#include <cstdlib>
#include <fstream>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

/// kiln_graph_set_condition sets a loop's condition to whether the byte at
/// `predicate` is nonzero; kiln_graph_set_branch sets a branch's two
/// conditions to whether it is nonzero and whether it is zero
/// (CudaGraphBranches.cpp). One thread each.
const char kSetConditionPtx[] = R"ptx(
.version 8.4
.target sm_75
.address_size 64

.extern .func cudaGraphSetConditional(.param .b64 handle, .param .b32 value);

.visible .entry kiln_graph_set_condition(.param .u64 loop_handle,
                                         .param .u64 predicate)
{
  .reg .pred %p;
  .reg .b16 %h;
  .reg .b32 %v;
  .reg .b64 %d<3>;
  ld.param.u64 %d1, [loop_handle];
  ld.param.u64 %d2, [predicate];
  cvta.to.global.u64 %d2, %d2;
  ld.global.u8 %h, [%d2];
  setp.ne.s16 %p, %h, 0;
  selp.u32 %v, 1, 0, %p;
  {
    .param .b64 handle;
    .param .b32 value;
    st.param.b64 [handle], %d1;
    st.param.b32 [value], %v;
    call.uni cudaGraphSetConditional, (handle, value);
  }
  ret;
}

.visible .entry kiln_graph_set_branch(.param .u64 then_handle,
                                      .param .u64 else_handle,
                                      .param .u64 predicate)
{
  .reg .pred %p;
  .reg .b16 %h;
  .reg .b32 %v<3>;
  .reg .b64 %d<4>;
  ld.param.u64 %d1, [then_handle];
  ld.param.u64 %d2, [else_handle];
  ld.param.u64 %d3, [predicate];
  cvta.to.global.u64 %d3, %d3;
  ld.global.u8 %h, [%d3];
  setp.ne.s16 %p, %h, 0;
  selp.u32 %v1, 1, 0, %p;
  selp.u32 %v2, 0, 1, %p;
  {
    .param .b64 handle;
    .param .b32 value;
    st.param.b64 [handle], %d1;
    st.param.b32 [value], %v1;
    call.uni cudaGraphSetConditional, (handle, value);
  }
  {
    .param .b64 handle;
    .param .b32 value;
    st.param.b64 [handle], %d2;
    st.param.b32 [value], %v2;
    call.uni cudaGraphSetConditional, (handle, value);
  }
  ret;
}
)ptx";

/// The device runtime library: KILN_CUDA_DEVRT, else the toolkit's.
std::string deviceRuntimeLibrary() {
  std::vector<std::string> candidates;
  if (const char *path = std::getenv("KILN_CUDA_DEVRT"); path && *path)
    return path;
#ifdef KILN_CUDA_DEVRT_LIBRARY
  candidates.push_back(KILN_CUDA_DEVRT_LIBRARY);
#endif
  candidates.push_back("/usr/local/cuda/lib64/libcudadevrt.a");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libcudadevrt.a");
  for (const std::string &candidate : candidates)
    if (std::ifstream(candidate).good())
      return candidate;
  return "";
}

/// A loop's graph while it is captured.
struct GraphWhile {
  /// The graph the loop's first test and node go into.
  CUgraph graph = nullptr;
  /// The WHILE node's body: the loop's body and its test again.
  CUgraph iteration = nullptr;
  CUgraphConditionalHandle condition = 0;
  /// Whether the stream is being captured.
  bool capturing = false;
  /// Whether the loop is nested in a capture already (a call's,
  /// CudaGraphCalls.cpp, or a loop's iteration or a branch inside one),
  /// whose graph, `graph`, the capture goes on into after the loop's
  /// node, `node`; otherwise `graph` is the loop's own, launched at its
  /// end.
  bool nested = false;
  CUgraphNode node = nullptr;
};

} // namespace

const char *graphConditionKernels() { return kSetConditionPtx; }

bool graphsTurnedOff() {
  const char *flag = std::getenv("KILN_CUDA_GRAPHS");
  return flag && std::string(flag) == "0";
}

bool CudaDevice::graphLoopsAvailable() {
  if (!failure.empty())
    return false;
  if (graphLoopSupport)
    return graphLoopSupport == 1;
  graphLoopSupport = 2;
  if (graphsTurnedOff())
    return false;
  std::string library = deviceRuntimeLibrary();
  if (library.empty())
    return false;
  std::string image, log;
  if (driver->linkWithLibrary(kSetConditionPtx, library, image, log) !=
      CUDA_SUCCESS)
    return false;
  CUmodule module = nullptr;
  if (driver->moduleLoadDataEx(&module, image.data(), 0, nullptr, nullptr) !=
      CUDA_SUCCESS)
    return false;
  // Unloaded with the device's other modules.
  modules.emplace(kSetConditionPtx, module);
  if (driver->moduleGetFunction(&setCondition, module,
                                "kiln_graph_set_condition") != CUDA_SUCCESS ||
      driver->moduleGetFunction(&setBranch, module, "kiln_graph_set_branch") !=
          CUDA_SUCCESS)
    return false;
  graphLoopSupport = 1;
  return true;
}

void *CudaDevice::beginGraphWhile() {
  auto *loop = new GraphWhile;
  if (!failure.empty())
    return loop;
  if (captureTarget) {
    // The stream is capturing already (a call, or the iteration of a loop
    // or a branch inside one): the test goes on into that graph, then the
    // loop's node. The handle belongs to the graph of the whole capture,
    // which holds the node at some depth.
    loop->graph = captureTarget;
    loop->nested = true;
    if (check(driver->graphConditionalHandleCreate(
                  &loop->condition, captureRoot, context, 0,
                  CU_GRAPH_COND_ASSIGN_DEFAULT),
              "cuGraphConditionalHandleCreate (a nested loop)"))
      loop->capturing = true;
    return loop;
  }
  // The condition is 0 at each launch until the first test sets it.
  if (check(driver->graphCreate(&loop->graph, 0), "cuGraphCreate") &&
      check(driver->graphConditionalHandleCreate(&loop->condition, loop->graph,
                                                 context, 0,
                                                 CU_GRAPH_COND_ASSIGN_DEFAULT),
            "cuGraphConditionalHandleCreate") &&
      check(driver->streamBeginCaptureToGraph(streamHandle, loop->graph, {},
                                              CU_STREAM_CAPTURE_MODE_RELAXED),
            "cuStreamBeginCaptureToGraph (a loop's first test)")) {
    loop->capturing = true;
    captureRoot = captureTarget = loop->graph;
  }
  return loop;
}

/// Queues the kernel that sets `loop`'s condition from the byte at
/// `predicate`, and ends the capture; whether both went well.
bool CudaDevice::setGraphWhileCondition(void *opaque, const void *predicate,
                                        std::vector<CUgraphNode> &last) {
  auto *loop = static_cast<GraphWhile *>(opaque);
  void *params[] = {&loop->condition, &predicate};
  bool queued = check(driver->launchKernel(setCondition, 1, 1, 1, 1, 1, 1, 0,
                                           streamHandle, params, nullptr),
                      "cuLaunchKernel (a loop's condition)") &&
                check(driver->streamCaptureDependencies(streamHandle, last),
                      "cuStreamGetCaptureInfo");
  // The capture ends even after a failure, so that the stream takes work
  // again.
  CUgraph captured = nullptr;
  loop->capturing = false;
  return check(driver->streamEndCapture(streamHandle, &captured),
               "cuStreamEndCapture (a loop's test)") &&
         queued && failure.empty();
}

void CudaDevice::testGraphWhile(void *opaque, const void *predicate) {
  auto *loop = static_cast<GraphWhile *>(opaque);
  if (!failure.empty() || !loop->capturing)
    return;
  std::vector<CUgraphNode> last;
  if (!setGraphWhileCondition(loop, predicate, last))
    return;
  if (captureIntoConditionalNode(
          loop->graph, last, loop->condition, CU_GRAPH_COND_TYPE_WHILE,
          loop->node, loop->iteration, "a while node", "a loop's iteration")) {
    loop->capturing = true;
    captureTarget = loop->iteration;
  }
}

bool CudaDevice::captureIntoConditionalNode(
    CUgraph graph, const std::vector<CUgraphNode> &after,
    CUgraphConditionalHandle condition, int type, CUgraphNode &node,
    CUgraph &body, const char *nodeWhat, const char *bodyWhat) {
  return check(driver->graphAddConditionalNode(&node, graph, after.data(),
                                               after.size(), condition, type,
                                               context, &body),
               (std::string("cuGraphAddNode (") + nodeWhat + ")").c_str()) &&
         check(driver->streamBeginCaptureToGraph(
                   streamHandle, body, {}, CU_STREAM_CAPTURE_MODE_RELAXED),
               (std::string("cuStreamBeginCaptureToGraph (") + bodyWhat + ")")
                   .c_str());
}

void CudaDevice::endGraphWhile(void *opaque, const void *predicate) {
  auto *loop = static_cast<GraphWhile *>(opaque);
  std::vector<CUgraphNode> last;
  bool captured = loop->capturing && failure.empty() &&
                  setGraphWhileCondition(loop, predicate, last);
  if (loop->capturing) {
    // After a failure before the condition's kernel.
    CUgraph graph = nullptr;
    loop->capturing = false;
    check(driver->streamEndCapture(streamHandle, &graph),
          "cuStreamEndCapture (a loop's iteration)");
  }
  if (loop->nested) {
    // The enclosing capture goes on after the loop's node; the graph of
    // the whole capture is launched at its end. After a failure the
    // capture stays ended, which fails the enclosing capture.
    captureTarget = loop->graph;
    if (captured && check(driver->streamBeginCaptureToGraph(
                              streamHandle, loop->graph, {loop->node},
                              CU_STREAM_CAPTURE_MODE_RELAXED),
                          "cuStreamBeginCaptureToGraph (after a nested loop)"))
      ++counters.graphLoops;
    delete loop;
    return;
  }
  captureRoot = captureTarget = nullptr;
  CUgraphExec exec = nullptr;
  if (captured &&
      check(driver->graphInstantiate(&exec, loop->graph),
            "cuGraphInstantiate (a loop)") &&
      check(driver->graphLaunch(exec, streamHandle), "cuGraphLaunch (a loop)"))
    ++counters.graphLoops;
  // Both are freed once the launched graph has run.
  if (exec)
    driver->graphExecDestroy(exec);
  if (loop->graph)
    driver->graphDestroy(loop->graph);
  delete loop;
}

void CudaDevice::refuseRetiredGraphWhile(void *loop) {
  fail("the module runs a loop as a CUDA graph the way kiln's modules did "
       "before the loop's test ran twice "
       "(" KILN_CUDA_GRAPH_WHILE_RETIRED_END_FUNCTION
       "), which this runtime no longer runs: compile the module again");
  // After the failure, the end only ends the capture and frees the loop.
  endGraphWhile(loop, nullptr);
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
