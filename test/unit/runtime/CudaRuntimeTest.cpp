//===- CudaRuntimeTest.cpp - The runtime's CUDA path without a GPU --------===//
//
// The driver is reached through the CudaDriver interface, so these tests
// run everywhere: the system loader's "no CUDA driver" error, and the whole
// call path (slot binding, device copies, PTX loading with its JIT log,
// launches, buffer cleanup) against a fake driver that simulates a device
// in host memory and runs the fixture's kernels on the CPU, and loops run
// as CUDA graphs: the fake captures the stream's work into graphs, runs
// their conditional WHILE and IF nodes, and refuses synchronous work while
// a capture is under way, as a driver does.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "cuda/BlasPluginLoader.h"
#include "cuda/CudaDevice.h"
#include "cuda/CudaDriver.h"
#include "cuda/LibraryBuffers.h"

#include "kiln/CudaLibraryAbi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>

extern "C" int kilnCudaCApiCheck(void);

using namespace kiln::runtime::cuda;
using kiln::test::ModulePtr;
using kiln::test::TensorPtr;
using kiln::test::ScopedVariable;
using kiln::test::take;

namespace {

constexpr CUresult kInvalidPtx = 218;
constexpr CUresult kLaunchFailed = 719;
constexpr CUresult kInvalidValue = 1;
/// What a driver answers to synchronous work on a stream being captured.
constexpr CUresult kCaptureUnsupported = 900;

/// A CUDA graph as the fake driver keeps it: its nodes in order (stream
/// capture makes a chain), each run on the host when the graph runs.
struct FakeGraph {
  std::vector<std::function<void()>> nodes;
  bool destroyed = false;
  /// For a conditional node's body, the graph that holds the node.
  FakeGraph *parent = nullptr;
};

/// What the fake driver saw, and how it should misbehave.
struct FakeState {
  int devices = 1;
  /// The compute capability of every device; the ordinal each query asked.
  int major = 9, minor = 0;
  std::vector<int> queriedOrdinals;
  /// What cuInit and cuDevicePrimaryCtxRetain return.
  CUresult initResult = CUDA_SUCCESS;
  CUresult retainResult = CUDA_SUCCESS;
  std::string rejectPtxWithLog;
  bool failLaunch = false;
  /// The shared memory a block may have with the kernel's opt-in (an
  /// H100's), what cuFuncSetAttribute allowed each kernel, the values it
  /// was called with, and each launch's dynamic shared memory.
  int sharedOptInLimit = 232448;
  std::map<std::string, int> sharedAllowed;
  std::vector<int> sharedAttributeCalls;
  std::vector<unsigned> sharedBytes;
  /// The launch with this number (from 1, counted over the fake's life)
  /// fails; 0 for none.
  int failLaunchNumber = 0;
  /// Whether the fake offers graphs with conditional nodes and the JIT
  /// linker (a CUDA 12.4+ driver), or answers "not supported" as the
  /// interface's defaults do.
  bool graphs = false;
  /// The JIT linker fails (as it does without a usable libcudadevrt.a).
  bool failLink = false;
  /// cuMemAlloc (device memory) of this many bytes fails; 0 for none.
  size_t failDeviceAllocationOf = 0;
  /// The device memory cuMemAlloc gives out at most (0: no limit), and
  /// what it has given out.
  size_t deviceMemoryLimit = 0, deviceBytes = 0;
  std::map<CUdeviceptr, size_t> deviceSizes;
  int moduleLoads = 0, functionLookups = 0, launches = 0, htod = 0, dtoh = 0;
  int launchAttempts = 0;
  int managedAllocations = 0, deviceAllocations = 0, deviceFrees = 0, syncs = 0;
  int asyncCopies = 0;
  bool sawErrorLogOption = false;
  std::string loadedImage;
  std::set<CUdeviceptr> live;
  /// Device-memory buffers (cuMemAlloc): the host must not touch them.
  std::set<CUdeviceptr> deviceOnly;
  std::vector<std::string> launched;
  /// The stream created, and every stream work was queued on.
  CUstream stream = nullptr;
  std::set<CUstream> queuedOn;
  /// Work queued on the stream, run at synchronization (as a GPU would run
  /// it some time after the launch).
  std::vector<std::function<void()>> queue;
  void drain() {
    for (auto &work : queue)
      work();
    queue.clear();
  }

  /// Graphs: every one made (kept until the test ends, so that a launched
  /// graph outlives its destruction as the driver's do), the graph being
  /// captured into, the conditional handles' values, and what happened.
  std::vector<std::unique_ptr<FakeGraph>> graphStore;
  FakeGraph *capturing = nullptr;
  struct Condition {
    unsigned value = 0, initial = 0;
    bool resetAtLaunch = false;
    /// The graph the handle was created on: its node must be in that
    /// graph or in a conditional body inside it, at any depth.
    const FakeGraph *graph = nullptr;
  };
  std::vector<Condition> conditions;
  int graphsCreated = 0, graphsDestroyed = 0, instantiated = 0,
      execsDestroyed = 0, graphLaunches = 0, captures = 0, execUpdates = 0;
  /// Conditional nodes added, as "while" or "if".
  std::vector<std::string> conditionalNodes;
  /// Synchronous work asked for while a capture was under way (which a
  /// driver refuses, and which would break the capture).
  int syncsDuringCapture = 0;
  /// Events: whether the fake has them, the milliseconds each kernel takes
  /// when it runs (`firstRunMs` for its first run, where given), the clock
  /// they advance, the time each event was reached at, and what happened.
  bool events = false;
  std::map<std::string, float> kernelMs, firstRunMs;
  std::set<std::string> ranOnce;
  float clock = 0;
  std::map<CUevent, float> reached;
  int eventsCreated = 0, eventsDestroyed = 0, eventRecords = 0;
  /// Runs kernel `name`'s time on the clock.
  void runFor(const std::string &name) {
    auto first = firstRunMs.find(name);
    if (first != firstRunMs.end() && ranOnce.insert(name).second)
      clock += first->second;
    else if (kernelMs.count(name))
      clock += kernelMs[name];
  }
  std::string linkedLibrary;

  /// Whether the `bytes` at `pointer` lie in one live device allocation,
  /// or `pointer` lies in none (host memory a fixture passes: the fake's
  /// device memory is the host's).
  bool fits(const void *pointer, size_t bytes) const {
    auto at = reinterpret_cast<CUdeviceptr>(pointer);
    auto next = deviceSizes.upper_bound(at);
    if (next == deviceSizes.begin())
      return true;
    --next;
    return at >= next->first + next->second ||
           at + bytes <= next->first + next->second;
  }

  /// Queues `work` on the stream, or adds it to the graph being captured.
  void enqueue(std::function<void()> work) {
    if (capturing)
      capturing->nodes.push_back(std::move(work));
    else
      queue.push_back(std::move(work));
  }
  /// Whether synchronous work may run now; counts the attempts made while
  /// the stream is captured.
  bool mayRunSynchronously() {
    if (!capturing)
      return true;
    ++syncsDuringCapture;
    return false;
  }
};

class FakeDriver final : public CudaDriver {
public:
  explicit FakeDriver(FakeState &state) : s(state) {}
  CUresult init(unsigned) override { return s.initResult; }
  CUresult deviceGetCount(int *count) override {
    *count = s.devices;
    return CUDA_SUCCESS;
  }
  CUresult deviceGet(CUdevice *device, int ordinal) override {
    *device = ordinal;
    return CUDA_SUCCESS;
  }
  CUresult deviceGetAttribute(int *value, int attribute,
                              CUdevice device) override {
    if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) {
      s.queriedOrdinals.push_back(device);
      *value = s.major;
      return CUDA_SUCCESS;
    }
    if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) {
      *value = s.minor;
      return CUDA_SUCCESS;
    }
    if (attribute == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) {
      *value = s.sharedOptInLimit;
      return CUDA_SUCCESS;
    }
    return 1; // CUDA_ERROR_INVALID_VALUE
  }
  CUresult devicePrimaryCtxRetain(CUcontext *context, CUdevice) override {
    if (s.retainResult != CUDA_SUCCESS)
      return s.retainResult;
    *context = reinterpret_cast<CUcontext>(&s);
    return CUDA_SUCCESS;
  }
  CUresult devicePrimaryCtxRelease(CUdevice) override { return CUDA_SUCCESS; }
  CUresult ctxPushCurrent(CUcontext) override { return CUDA_SUCCESS; }
  CUresult ctxPopCurrent(CUcontext *) override { return CUDA_SUCCESS; }
  CUresult moduleLoadDataEx(CUmodule *module, const void *image,
                            unsigned count, int *options,
                            void **values) override {
    ++s.moduleLoads;
    for (unsigned i = 0; i < count; ++i) {
      if (options[i] != CU_JIT_ERROR_LOG_BUFFER)
        continue;
      s.sawErrorLogOption = true;
      if (!s.rejectPtxWithLog.empty()) {
        std::strcpy(static_cast<char *>(values[i]),
                    s.rejectPtxWithLog.c_str());
        return kInvalidPtx;
      }
    }
    if (!image || std::strncmp(static_cast<const char *>(image),
                               "// kernels:", 11))
      return kInvalidPtx;
    s.loadedImage = static_cast<const char *>(image);
    *module = reinterpret_cast<CUmodule>(const_cast<void *>(image));
    return CUDA_SUCCESS;
  }
  CUresult moduleUnload(CUmodule) override { return CUDA_SUCCESS; }
  CUresult moduleGetFunction(CUfunction *function, CUmodule,
                             const char *name) override {
    ++s.functionLookups;
    static const char *const kernels[] = {"scale2",
                                          "scale2_a",
                                          "scale2_b",
                                          "scale2_c",
                                          "add1",
                                          "copy",
                                          "less100",
                                          "less10",
                                          "kiln_graph_set_condition",
                                          "kiln_graph_set_branch"};
    for (const char *kernel : kernels)
      if (!std::strcmp(kernel, name)) {
        *function = reinterpret_cast<CUfunction>(const_cast<char *>(kernel));
        return CUDA_SUCCESS;
      }
    return 500; // CUDA_ERROR_NOT_FOUND
  }
  CUresult funcSetAttribute(CUfunction function, int attribute,
                            int value) override {
    if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
        value > s.sharedOptInLimit)
      return 1; // CUDA_ERROR_INVALID_VALUE
    s.sharedAllowed[reinterpret_cast<const char *>(function)] = value;
    s.sharedAttributeCalls.push_back(value);
    return CUDA_SUCCESS;
  }
  CUresult launchKernel(CUfunction function, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, unsigned sharedMemBytes,
                        CUstream stream, void **params, void **) override {
    if (s.failLaunch || ++s.launchAttempts == s.failLaunchNumber)
      return kLaunchFailed;
    // As a device: more than 48 KiB of dynamic shared memory only where
    // the kernel's attribute allows it.
    if (sharedMemBytes > kSharedBytesWithoutOptIn &&
        int(sharedMemBytes) >
            s.sharedAllowed[reinterpret_cast<const char *>(function)])
      return 1; // CUDA_ERROR_INVALID_VALUE
    s.sharedBytes.push_back(sharedMemBytes);
    ++s.launches;
    s.queuedOn.insert(stream);
    std::string name = reinterpret_cast<const char *>(function);
    s.launched.push_back(name);
    if (name == "kiln_graph_set_condition") {
      // Sets the loop's condition from the predicate byte, as
      // cudaGraphSetConditional does on the device.
      auto loop = *static_cast<CUgraphConditionalHandle *>(params[0]);
      auto predicate = *static_cast<const uint8_t **>(params[1]);
      s.enqueue([this, loop, predicate] {
        s.conditions.at(loop).value = *predicate != 0;
      });
      return CUDA_SUCCESS;
    }
    if (name == "kiln_graph_set_branch") {
      auto first = *static_cast<CUgraphConditionalHandle *>(params[0]);
      auto second = *static_cast<CUgraphConditionalHandle *>(params[1]);
      auto predicate = *static_cast<const uint8_t **>(params[2]);
      s.enqueue([this, first, second, predicate] {
        s.conditions.at(first).value = *predicate != 0;
        s.conditions.at(second).value = *predicate == 0;
      });
      return CUDA_SUCCESS;
    }
    // The parameters are read at launch time, the kernel runs later.
    const float *in = *static_cast<float **>(params[0]);
    void *out = *static_cast<void **>(params[1]);
    int64_t n = *static_cast<int64_t *>(params[2]);
    s.enqueue([this, name, in, out, n] {
      s.runFor(name);
      if (name == "less100" || name == "less10") {
        *static_cast<uint8_t *>(out) = in[0] < (name == "less10" ? 10 : 100);
        return;
      }
      // scale2 and the tuned site's variants scale2_a, _b and _c.
      bool scale2 = name.rfind("scale2", 0) == 0;
      for (int64_t i = 0; i < n; ++i)
        static_cast<float *>(out)[i] = scale2             ? 2 * in[i]
                                       : name == "add1" ? in[i] + 1
                                                        : in[i];
    });
    return CUDA_SUCCESS;
  }
  CUresult memAllocManaged(CUdeviceptr *pointer, size_t bytes,
                           unsigned) override {
    ++s.managedAllocations;
    *pointer = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytes));
    s.live.insert(*pointer);
    return CUDA_SUCCESS;
  }
  CUresult memAlloc(CUdeviceptr *pointer, size_t bytes) override {
    if ((s.failDeviceAllocationOf && bytes == s.failDeviceAllocationOf) ||
        (s.deviceMemoryLimit && s.deviceBytes + bytes > s.deviceMemoryLimit))
      return 2; // CUDA_ERROR_OUT_OF_MEMORY
    ++s.deviceAllocations;
    *pointer = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytes));
    s.deviceBytes += bytes;
    s.deviceSizes[*pointer] = bytes;
    s.live.insert(*pointer);
    s.deviceOnly.insert(*pointer);
    return CUDA_SUCCESS;
  }
  CUresult memFree(CUdeviceptr pointer) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    s.drain();
    if (!s.live.erase(pointer))
      return 1;
    s.deviceFrees += s.deviceOnly.erase(pointer);
    s.deviceBytes -= s.deviceSizes[pointer];
    s.deviceSizes.erase(pointer);
    std::free(reinterpret_cast<void *>(pointer));
    return CUDA_SUCCESS;
  }
  CUresult memcpyHtoD(CUdeviceptr to, const void *from,
                      size_t bytes) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    s.drain();
    ++s.htod;
    std::memcpy(reinterpret_cast<void *>(to), from, bytes);
    return CUDA_SUCCESS;
  }
  CUresult memcpyDtoH(void *to, CUdeviceptr from, size_t bytes) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    s.drain();
    ++s.dtoh;
    std::memcpy(to, reinterpret_cast<void *>(from), bytes);
    return CUDA_SUCCESS;
  }
  CUresult memcpy(CUdeviceptr to, CUdeviceptr from, size_t bytes) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    s.drain();
    std::memcpy(reinterpret_cast<void *>(to),
                reinterpret_cast<void *>(from), bytes);
    return CUDA_SUCCESS;
  }
  CUresult memcpyAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                       CUstream stream) override {
    ++s.asyncCopies;
    s.queuedOn.insert(stream);
    s.enqueue([to, from, bytes] {
      std::memcpy(reinterpret_cast<void *>(to),
                  reinterpret_cast<void *>(from), bytes);
    });
    return CUDA_SUCCESS;
  }
  CUresult memsetD32(CUdeviceptr to, unsigned value, size_t count) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    s.drain();
    auto *words = reinterpret_cast<uint32_t *>(to);
    for (size_t i = 0; i < count; ++i)
      words[i] = value;
    return CUDA_SUCCESS;
  }
  CUresult streamCreate(CUstream *stream, unsigned) override {
    *stream = reinterpret_cast<CUstream>(&s.queue);
    s.stream = *stream;
    return CUDA_SUCCESS;
  }
  CUresult streamSynchronize(CUstream) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    ++s.syncs;
    s.drain();
    return CUDA_SUCCESS;
  }
  CUresult eventCreate(CUevent *event, unsigned) override {
    if (!s.events)
      return CUDA_ERROR_NOT_SUPPORTED;
    *event = reinterpret_cast<CUevent>(uintptr_t(++s.eventsCreated));
    return CUDA_SUCCESS;
  }
  CUresult eventRecord(CUevent event, CUstream) override {
    ++s.eventRecords;
    s.reached.erase(event);
    s.enqueue([this, event] { s.reached[event] = s.clock; });
    return CUDA_SUCCESS;
  }
  CUresult eventSynchronize(CUevent event) override {
    if (!s.mayRunSynchronously())
      return kCaptureUnsupported;
    s.drain();
    return s.reached.count(event) ? CUDA_SUCCESS : kInvalidValue;
  }
  CUresult eventElapsedTime(float *ms, CUevent start, CUevent stop) override {
    if (!s.reached.count(start) || !s.reached.count(stop))
      return kInvalidValue;
    *ms = s.reached[stop] - s.reached[start];
    return CUDA_SUCCESS;
  }
  CUresult eventDestroy(CUevent) override {
    ++s.eventsDestroyed;
    return CUDA_SUCCESS;
  }
  CUresult streamDestroy(CUstream) override { return CUDA_SUCCESS; }
  std::string describe(CUresult result) override {
    return "fake CUDA error " + std::to_string(result);
  }

  // Graphs, when the fake offers them: capture appends the stream's work
  // to a graph, a conditional node runs its body graph while (or if) its
  // handle is set, and a launched graph runs when the stream does.
  CUresult graphCreate(CUgraph *graph, unsigned) override {
    if (!s.graphs)
      return CUDA_ERROR_NOT_SUPPORTED;
    ++s.graphsCreated;
    s.graphStore.push_back(std::make_unique<FakeGraph>());
    *graph = reinterpret_cast<CUgraph>(s.graphStore.back().get());
    return CUDA_SUCCESS;
  }
  CUresult graphDestroy(CUgraph graph) override {
    FakeGraph *g = reinterpret_cast<FakeGraph *>(graph);
    if (!s.graphs || g->destroyed)
      return kInvalidValue;
    g->destroyed = true;
    ++s.graphsDestroyed;
    return CUDA_SUCCESS;
  }
  CUresult graphConditionalHandleCreate(CUgraphConditionalHandle *handle,
                                        CUgraph graph, CUcontext,
                                        unsigned initial,
                                        unsigned flags) override {
    if (!s.graphs)
      return CUDA_ERROR_NOT_SUPPORTED;
    *handle = s.conditions.size();
    s.conditions.push_back({initial, initial,
                            (flags & CU_GRAPH_COND_ASSIGN_DEFAULT) != 0,
                            reinterpret_cast<FakeGraph *>(graph)});
    return CUDA_SUCCESS;
  }
  CUresult graphAddConditionalNode(CUgraphNode *node, CUgraph graph,
                                   const CUgraphNode *dependencies,
                                   size_t count,
                                   CUgraphConditionalHandle handle, int type,
                                   CUcontext, CUgraph *body) override {
    if (!s.graphs)
      return CUDA_ERROR_NOT_SUPPORTED;
    FakeGraph *g = reinterpret_cast<FakeGraph *>(graph);
    // Captured work forms a chain: the new node must follow its last node.
    if (!g->nodes.empty() &&
        (count != 1 || dependencies[0] != nodeId(g->nodes.size() - 1)))
      return kInvalidValue;
    if (handle >= s.conditions.size() ||
        (type != CU_GRAPH_COND_TYPE_IF && type != CU_GRAPH_COND_TYPE_WHILE))
      return kInvalidValue;
    // The handle's graph holds the node, at some depth.
    const FakeGraph *holder = g;
    while (holder && holder != s.conditions[handle].graph)
      holder = holder->parent;
    if (!holder)
      return kInvalidValue;
    s.graphStore.push_back(std::make_unique<FakeGraph>());
    FakeGraph *inner = s.graphStore.back().get();
    inner->parent = g;
    *body = reinterpret_cast<CUgraph>(inner);
    bool loops = type == CU_GRAPH_COND_TYPE_WHILE;
    s.conditionalNodes.push_back(loops ? "while" : "if");
    g->nodes.push_back([this, inner, handle, loops] {
      while (s.conditions.at(handle).value) {
        run(*inner);
        if (!loops)
          break;
      }
    });
    *node = nodeId(g->nodes.size() - 1);
    return CUDA_SUCCESS;
  }
  CUresult
  streamBeginCaptureToGraph(CUstream stream, CUgraph graph,
                            const std::vector<CUgraphNode> &dependencies,
                            int mode) override {
    if (!s.graphs)
      return CUDA_ERROR_NOT_SUPPORTED;
    if (s.capturing || stream != s.stream ||
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
      return kInvalidValue;
    // The fake's graphs are chains: captured work follows the last node.
    FakeGraph *g = reinterpret_cast<FakeGraph *>(graph);
    if (!dependencies.empty() &&
        (dependencies.size() != 1 || g->nodes.empty() ||
         dependencies[0] != nodeId(g->nodes.size() - 1)))
      return kInvalidValue;
    ++s.captures;
    s.capturing = reinterpret_cast<FakeGraph *>(graph);
    return CUDA_SUCCESS;
  }
  CUresult streamEndCapture(CUstream, CUgraph *graph) override {
    if (!s.capturing)
      return kInvalidValue;
    *graph = reinterpret_cast<CUgraph>(s.capturing);
    s.capturing = nullptr;
    return CUDA_SUCCESS;
  }
  CUresult
  streamCaptureDependencies(CUstream,
                            std::vector<CUgraphNode> &dependencies) override {
    if (!s.capturing)
      return kInvalidValue;
    dependencies.clear();
    if (!s.capturing->nodes.empty())
      dependencies.push_back(nodeId(s.capturing->nodes.size() - 1));
    return CUDA_SUCCESS;
  }
  CUresult graphInstantiate(CUgraphExec *exec, CUgraph graph) override {
    if (!s.graphs || s.capturing)
      return kInvalidValue;
    ++s.instantiated;
    *exec = reinterpret_cast<CUgraphExec>(graph);
    return CUDA_SUCCESS;
  }
  CUresult graphLaunch(CUgraphExec exec, CUstream stream) override {
    if (!s.graphs || s.capturing)
      return kInvalidValue;
    ++s.graphLaunches;
    s.queuedOn.insert(stream);
    FakeGraph *g = reinterpret_cast<FakeGraph *>(exec);
    s.queue.push_back([this, g] {
      for (FakeState::Condition &condition : s.conditions)
        if (condition.resetAtLaunch)
          condition.value = condition.initial;
      run(*g);
    });
    return CUDA_SUCCESS;
  }
  CUresult graphExecDestroy(CUgraphExec) override {
    ++s.execsDestroyed;
    return CUDA_SUCCESS;
  }
  CUresult graphExecUpdate(CUgraphExec exec, CUgraph graph) override {
    if (!s.graphs || s.capturing)
      return kInvalidValue;
    FakeGraph *target = reinterpret_cast<FakeGraph *>(exec);
    FakeGraph *source = reinterpret_cast<FakeGraph *>(graph);
    // The driver updates only a graph of the same shape.
    if (target->nodes.size() != source->nodes.size())
      return kInvalidValue;
    ++s.execUpdates;
    target->nodes = source->nodes;
    return CUDA_SUCCESS;
  }
  CUresult linkWithLibrary(const std::string &ptx, const std::string &library,
                           std::string &image, std::string &) override {
    if (!s.graphs)
      return CUDA_ERROR_NOT_SUPPORTED;
    if (s.failLink)
      return kInvalidPtx;
    if (ptx.find("cudaGraphSetConditional") == std::string::npos ||
        ptx.find(".entry kiln_graph_set_condition(") == std::string::npos ||
        ptx.find(".entry kiln_graph_set_branch(") == std::string::npos)
      return kInvalidPtx;
    s.linkedLibrary = library;
    image = "// kernels: kiln_graph_set_condition, kiln_graph_set_branch\n";
    return CUDA_SUCCESS;
  }

private:
  static CUgraphNode nodeId(size_t index) {
    return reinterpret_cast<CUgraphNode>(index + 1);
  }
  void run(const FakeGraph &graph) {
    for (const auto &node : graph.nodes)
      node();
  }
  FakeState &s;
};

kiln::format::ModuleContents cudaModuleContents() {
  kiln::format::ModuleContents contents;
  contents.target = "cuda-sm_80";
  kiln::format::FunctionSignature scale2;
  scale2.name = "scale2";
  scale2.entrySymbol = "kiln_entry_scale2";
  scale2.inputs = {{"x", kiln::format::DType::F32, {4}}};
  scale2.outputs = {{"y", kiln::format::DType::F32, {4}}};
  contents.functions.push_back(scale2);
  kiln::format::FunctionSignature doubleUntil = scale2;
  doubleUntil.name = "double_until";
  doubleUntil.entrySymbol = "kiln_entry_double_until";
  contents.functions.push_back(doubleUntil);
  kiln::format::FunctionSignature doubleUntilRetired = scale2;
  doubleUntilRetired.name = "double_until_retired";
  doubleUntilRetired.entrySymbol = "kiln_entry_double_until_retired";
  contents.functions.push_back(doubleUntilRetired);
  kiln::format::FunctionSignature doubleUntilRounds = scale2;
  doubleUntilRounds.name = "double_until_rounds";
  doubleUntilRounds.entrySymbol = "kiln_entry_double_until_rounds";
  contents.functions.push_back(doubleUntilRounds);
  for (const char *name : {"scale2_graph",
                           "scale2_shared",
                           "twice_table",
                           "twice_resident",
                           "double_until_graph",
                           "pick_graph",
                           "step_until",
                           "step_until_graph",
                           "double_if_small_graph",
                           "loop_if_loop_graph",
                           "for_while_graph",
                           "scale2_tuned",
                           "scale2_tuned_graph",
                           "scale2_tuned_library",
                           "scale2_tuned_libraries",
                           "scale2_tuned_shared",
                           "double_until_tuned",
                           "double_until_tuned_loop",
                           "double_until_conv",
                           "double_until_conv_loop",
                           "double_until_conv_malformed",
                           "double_until_conv_shifted"}) {
    kiln::format::FunctionSignature bracketed = scale2;
    bracketed.name = name;
    bracketed.entrySymbol = std::string("kiln_entry_") + name;
    contents.functions.push_back(bracketed);
  }
  kiln::format::FunctionSignature dense;
  dense.name = "dense";
  dense.entrySymbol = "kiln_entry_dense";
  dense.inputs = {{"a", kiln::format::DType::F32, {2, 3}},
                  {"b", kiln::format::DType::F32, {3, 2}},
                  {"bias", kiln::format::DType::F32, {2}}};
  dense.outputs = {{"c", kiln::format::DType::F32, {2, 2}}};
  contents.functions.push_back(dense);
  kiln::format::FunctionSignature denseGradient;
  denseGradient.name = "dense_gradient";
  denseGradient.entrySymbol = "kiln_entry_dense_gradient";
  denseGradient.inputs = {{"x", kiln::format::DType::F32, {2, 3}},
                          {"dy", kiln::format::DType::F32, {2, 2}}};
  denseGradient.outputs = {{"dw", kiln::format::DType::F32, {3, 2}},
                           {"db", kiln::format::DType::F32, {2}}};
  contents.functions.push_back(denseGradient);
  denseGradient.name = "dense_gradient_malformed";
  denseGradient.entrySymbol = "kiln_entry_dense_gradient_malformed";
  contents.functions.push_back(denseGradient);
  kiln::format::FunctionSignature convolve;
  convolve.name = "convolve";
  convolve.entrySymbol = "kiln_entry_convolve";
  convolve.inputs = {{"x", kiln::format::DType::F32, {1, 2, 4, 4}},
                     {"w", kiln::format::DType::F32, {2, 1, 3, 3}}};
  convolve.outputs = {{"y", kiln::format::DType::F32, {1, 2, 2, 2}}};
  contents.functions.push_back(convolve);
  convolve.name = "convolve_bad_flags";
  convolve.entrySymbol = "kiln_entry_convolve_bad_flags";
  contents.functions.push_back(convolve);
  kiln::format::FunctionSignature attend;
  auto bf16 = [](const char *name) {
    return kiln::format::TensorSignature{
        name, kiln::format::DType::BF16, {1, 2, 4, 8}};
  };
  kiln::format::TensorSignature lse{"lse", kiln::format::DType::F32, {1, 2, 4}};
  attend.name = "attend";
  attend.entrySymbol = "kiln_entry_attend";
  attend.inputs = {bf16("q"), bf16("k"), bf16("v")};
  attend.outputs = {bf16("o"), lse};
  contents.functions.push_back(attend);
  attend.name = "attend_missing_mask";
  attend.entrySymbol = "kiln_entry_attend_missing_mask";
  contents.functions.push_back(attend);
  attend.name = "attend_graph";
  attend.entrySymbol = "kiln_entry_attend_graph";
  contents.functions.push_back(attend);
  attend.name = "attend_grad";
  attend.entrySymbol = "kiln_entry_attend_grad";
  attend.inputs = {bf16("q"), bf16("k"), bf16("v"), bf16("o"), lse, bf16("do")};
  attend.outputs = {bf16("dq"), bf16("dk"), bf16("dv")};
  contents.functions.push_back(attend);
  attend.name = "attend_grad_graph";
  attend.entrySymbol = "kiln_entry_attend_grad_graph";
  contents.functions.push_back(attend);
  kiln::format::FunctionSignature product;
  product.name = "product";
  product.entrySymbol = "kiln_entry_product";
  product.inputs = {{"a", kiln::format::DType::F32, {2, 3}},
                    {"b", kiln::format::DType::F32, {3, 2}}};
  product.outputs = {{"c", kiln::format::DType::F32, {2, 2}}};
  contents.functions.push_back(product);
  contents.code = kiln::test::readFile(KILN_FIXTURE_CUDA_HOST);
  const char ptx[] = "// kernels: scale2, copy, less100\n";
  contents.deviceCode.assign(ptx, ptx + sizeof(ptx) - 1);
  return contents;
}

ModulePtr loadCudaModule(kiln_status_code_t *code = nullptr,
                         std::string *message = nullptr,
                         bool withDeviceCode = true) {
  kiln::format::ModuleContents contents = cudaModuleContents();
  if (!withDeviceCode)
    contents.deviceCode.clear();
  std::vector<uint8_t> bytes = kiln::format::writeModule(contents);
  kiln_module_t *module = nullptr;
  kiln::test::Outcome outcome =
      take(kiln_module_load_memory(bytes.data(), bytes.size(), &module));
  if (code)
    *code = outcome.code;
  if (message)
    *message = outcome.message;
  return ModulePtr(module);
}

/// Calls `name` (scale2 by default) on [1, 2, 3, 4].
kiln::test::Outcome callScale2(kiln_module_t *module, TensorPtr &y,
                               const char *name = "scale2") {
  const kiln_function_t *function = nullptr;
  take(kiln_module_function_lookup(module, name, &function));
  TensorPtr x = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4},
                                              {1, 2, 3, 4});
  kiln_tensor_t *input = x.get();
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome outcome =
      take(kiln_function_call(function, &input, 1, &output, 1));
  y.reset(output);
  return outcome;
}

/// What the fake products plug-in saw, and how it should misbehave.
struct FakeBlasState {
  FakeState *device = nullptr;
  int creates = 0, destroys = 0, attempts = 0, products = 0;
  std::vector<kiln_matmul_problem_t> problems;
  std::set<void *> workspaces;
  bool failCreate = false, failProduct = false;
};
FakeBlasState *fakeBlas = nullptr;

/// Element (i, j) of op(X) for a row-major matrix with rows `ld` apart.
float elementOf(const float *x, int64_t ld, bool transposed, int64_t i,
                int64_t j) {
  return transposed ? x[j * ld + i] : x[i * ld + j];
}

/// A products plug-in that runs f32 products on the host when the fake
/// device's stream runs (the fake device's memory is host memory).
const kiln_blas_plugin_t fakeBlasTable = {
    KILN_BLAS_PLUGIN_VERSION,
    [](void **handle, char *error, size_t size) -> int {
      if (fakeBlas->failCreate) {
        std::snprintf(error, size, "no handle today");
        return 1;
      }
      ++fakeBlas->creates;
      *handle = fakeBlas;
      return 0;
    },
    [](void *) { ++fakeBlas->destroys; },
    [](void *, const kiln_matmul_problem_t *problem, void *stream,
       void *workspace, size_t, char *error, size_t size) -> int {
      ++fakeBlas->attempts;
      if (fakeBlas->failProduct) {
        std::snprintf(error, size, "no kernel for that");
        return 1;
      }
      ++fakeBlas->products;
      fakeBlas->problems.push_back(*problem);
      fakeBlas->workspaces.insert(workspace);
      fakeBlas->device->queuedOn.insert(static_cast<CUstream>(stream));
      kiln_matmul_problem_t p = *problem;
      fakeBlas->device->enqueue([p] {
        const float *a = static_cast<const float *>(p.a);
        const float *b = static_cast<const float *>(p.b);
        float *c = static_cast<float *>(p.c);
        for (int64_t i = 0; i < p.m; ++i)
          for (int64_t j = 0; j < p.n; ++j) {
            float sum = p.flags & KILN_CUDA_MATMUL_ACCUMULATE
                            ? c[i * p.ldc + j]
                            : 0.0f;
            for (int64_t l = 0; l < p.k; ++l)
              sum += elementOf(a, p.lda, p.flags & KILN_CUDA_MATMUL_TRANSPOSE_A,
                               i, l) *
                     elementOf(b, p.ldb, p.flags & KILN_CUDA_MATMUL_TRANSPOSE_B,
                               l, j);
            if (p.flags & KILN_CUDA_MATMUL_BIAS)
              sum += static_cast<const float *>(p.bias)[j];
            c[i * p.ldc + j] = sum;
          }
        // The bias gradients: op(A)'s row sums (op(A^T)'s column sums),
        // op(B)'s column sums.
        bool gradientA = p.flags & KILN_CUDA_MATMUL_BIAS_GRADIENT_A;
        if (gradientA || (p.flags & KILN_CUDA_MATMUL_BIAS_GRADIENT_B)) {
          const float *x = gradientA ? a : b;
          int64_t ld = gradientA ? p.lda : p.ldb;
          // op(A)[i, l] is op(A)^T[l, i]: A read with the other flag.
          bool transposed = gradientA
                                ? !(p.flags & KILN_CUDA_MATMUL_TRANSPOSE_A)
                                : bool(p.flags & KILN_CUDA_MATMUL_TRANSPOSE_B);
          float *gradient = static_cast<float *>(p.bias_gradient);
          for (int64_t j = 0; j < (gradientA ? p.m : p.n); ++j) {
            gradient[j] = 0;
            for (int64_t l = 0; l < p.k; ++l)
              gradient[j] += elementOf(x, ld, transposed, l, j);
          }
        }
      });
      return 0;
    },
    [] { return "fake BLAS"; }};

/// What the fake convolutions and attention plug-in saw.
struct FakeDnnState {
  FakeState *device = nullptr;
  int creates = 0, destroys = 0, convs = 0, attentions = 0;
  std::vector<std::vector<int64_t>> descriptors;
  std::set<void *> workspaces;
  /// The buffers of the last attention call, in the ABI's order.
  std::vector<const void *> attentionBuffers;
  /// Where not empty, every convolution (attention) is refused with this
  /// error.
  std::string refuseConvs, refuseAttentions;
  /// The plans made, as cuDNN's plug-in makes one at a call's first run:
  /// each a call's descriptor (with the direction for attention) and
  /// whether each of its buffers is 16-byte aligned (cuDNN's plug-in keys
  /// by alignments up to 256 bytes; the fake's allocations are 16-byte
  /// aligned, so that its keys do not depend on where a buffer lies); and
  /// the plans asked for while the stream was captured, which the plug-in
  /// refuses (a capture cannot hold cuDNN's planning and timing).
  std::set<std::vector<int64_t>> plans;
  int plansDuringCapture = 0;
  /// Buffers a call was given that run past the end of the device
  /// allocation they start in.
  int outOfBounds = 0;
  /// Whether the call of `key` with `buffers` has its plan: makes it where
  /// the stream is not captured, else refuses with KILN_DNN_PLAN_IN_CAPTURE.
  int plan(std::vector<int64_t> key,
           std::initializer_list<const void *> buffers, char *error,
           size_t size) {
    for (const void *buffer : buffers)
      key.push_back(reinterpret_cast<uintptr_t>(buffer) % 16 == 0);
    if (plans.count(key))
      return 0;
    if (device->capturing) {
      ++plansDuringCapture;
      std::snprintf(error, size, "a plan made inside a capture");
      return KILN_DNN_PLAN_IN_CAPTURE;
    }
    plans.insert(key);
    return 0;
  }
  /// Counts each of `buffers` (address and bytes) that runs out of its
  /// allocation; whether none does (the fake then runs nothing, which
  /// would write past the allocation).
  bool
  checkBounds(std::initializer_list<std::pair<const void *, size_t>> buffers) {
    int before = outOfBounds;
    for (auto [buffer, bytes] : buffers)
      outOfBounds += !device->fits(buffer, bytes);
    return outOfBounds == before;
  }
};
FakeDnnState *fakeDnn = nullptr;

/// A convolutions plug-in that runs 2-d f32 convolutions (any groups,
/// strides, padding and dilation) on the host when the fake device's
/// stream runs.
const kiln_dnn_plugin_t fakeDnnTable = {
    KILN_DNN_PLUGIN_VERSION,
    [](void **handle, char *, size_t) -> int {
      ++fakeDnn->creates;
      *handle = fakeDnn;
      return 0;
    },
    [](void *) { ++fakeDnn->destroys; },
    [](void *, const int64_t *d, const void *x, const void *w, void *y,
       void *stream, void *workspace, size_t, char *error, size_t size) -> int {
      if (!fakeDnn->refuseConvs.empty()) {
        std::snprintf(error, size, "%s", fakeDnn->refuseConvs.c_str());
        return 1;
      }
      if (d[0] != 2 || d[2] != KILN_DTYPE_F32) {
        std::snprintf(error, size, "the fake runs 2-d f32 only");
        return 1;
      }
      if (int refused = fakeDnn->plan(std::vector<int64_t>(d, d + 21),
                                      {x, w, y}, error, size))
        return refused;
      int64_t groups = d[1], n = d[4], c = d[5], o = d[6];
      if (!fakeDnn->checkBounds(
              {{x, sizeof(float) * n * c * d[7] * d[8]},
               {w, sizeof(float) * o * (c / groups) * d[9] * d[10]},
               {y, sizeof(float) * n * o * d[11] * d[12]}}))
        return std::snprintf(error, size, "a buffer out of bounds"), 1;
      ++fakeDnn->convs;
      fakeDnn->descriptors.emplace_back(d, d + 21);
      fakeDnn->workspaces.insert(workspace);
      fakeDnn->device->queuedOn.insert(static_cast<CUstream>(stream));
      std::vector<int64_t> v(d, d + 21);
      fakeDnn->device->enqueue([v, x, w, y] {
        int64_t groups = v[1], n = v[4], c = v[5], o = v[6];
        int64_t cg = c / groups, og = o / groups;
        const int64_t *in = &v[7], *k = &v[9], *e = &v[11], *s = &v[13],
                      *low = &v[15], *dil = &v[19];
        const float *xs = static_cast<const float *>(x);
        const float *ws = static_cast<const float *>(w);
        float *ys = static_cast<float *>(y);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t oc = 0; oc < o; ++oc)
            for (int64_t i = 0; i < e[0]; ++i)
              for (int64_t j = 0; j < e[1]; ++j) {
                float sum = 0;
                for (int64_t ci = 0; ci < cg; ++ci)
                  for (int64_t p = 0; p < k[0]; ++p)
                    for (int64_t q = 0; q < k[1]; ++q) {
                      int64_t r = i * s[0] + p * dil[0] - low[0];
                      int64_t t = j * s[1] + q * dil[1] - low[1];
                      if (r < 0 || r >= in[0] || t < 0 || t >= in[1])
                        continue;
                      int64_t channel = (oc / og) * cg + ci;
                      sum += xs[((b * c + channel) * in[0] + r) * in[1] + t] *
                             ws[((oc * cg + ci) * k[0] + p) * k[1] + q];
                    }
                ys[((b * o + oc) * e[0] + i) * e[1] + j] = sum;
              }
      });
      return 0;
    },
    [] { return "fake DNN"; },
    // Attention of bf16 [1, 2, 4, 8]: the forward writes v into o and
    // 0, 1, ... into lse, the gradient do into dq, k into dk and v into
    // dv, so that a test sees each buffer where the ABI puts it.
    [](void *, const int64_t *d, int gradient, const void *const *buffers,
       void *stream, void *workspace, size_t, char *error, size_t size) -> int {
      if (!fakeDnn->refuseAttentions.empty()) {
        std::snprintf(error, size, "%s", fakeDnn->refuseAttentions.c_str());
        return 1;
      }
      std::vector<int64_t> key(d, d + KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE);
      key.push_back(gradient);
      const void *const *b = buffers;
      if (int refused = gradient
                            ? fakeDnn->plan(key,
                                            {b[0], b[1], b[2], b[3], b[4], b[5],
                                             b[7], b[8], b[9]},
                                            error, size)
                            : fakeDnn->plan(key, {b[0], b[1], b[2], b[4], b[5]},
                                            error, size))
        return refused;
      // What the fake reads and writes below.
      const size_t halves = 64 * sizeof(uint16_t), lse = 8 * sizeof(float);
      if (gradient ? !fakeDnn->checkBounds({{b[1], halves},
                                            {b[2], halves},
                                            {b[5], halves},
                                            {b[7], halves},
                                            {b[8], halves},
                                            {b[9], halves}})
                   : !fakeDnn->checkBounds(
                         {{b[2], halves}, {b[4], halves}, {b[5], lse}}))
        return std::snprintf(error, size, "a buffer out of bounds"), 1;
      ++fakeDnn->attentions;
      fakeDnn->descriptors.emplace_back(
          d, d + KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE);
      fakeDnn->workspaces.insert(workspace);
      fakeDnn->device->queuedOn.insert(static_cast<CUstream>(stream));
      size_t count = gradient ? 11 : 6;
      fakeDnn->attentionBuffers.assign(buffers, buffers + count);
      std::vector<const void *> queued(buffers, buffers + count);
      fakeDnn->device->enqueue([b = queued, gradient] {
        auto copy = [](const void *from, const void *to) {
          std::memcpy(const_cast<void *>(to), from, 64 * sizeof(uint16_t));
        };
        if (!gradient) {
          copy(b[2], b[4]);
          float *lse = static_cast<float *>(const_cast<void *>(b[5]));
          for (int i = 0; i < 8; ++i)
            lse[i] = float(i);
          return;
        }
        copy(b[5], b[7]);
        copy(b[1], b[8]);
        copy(b[2], b[9]);
      });
      return 0;
    }};

/// Installs a fake driver for one test.
class FakeCudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    setCudaDriverLoaderForTesting([this](std::string &) {
      return std::unique_ptr<CudaDriver>(new FakeDriver(state));
    });
    blas.device = &state;
    fakeBlas = &blas;
    setBlasPluginLoaderForTesting([](const kiln_blas_plugin_t *&table) {
      table = &fakeBlasTable;
      return kiln_status_t(nullptr);
    });
    dnn.device = &state;
    fakeDnn = &dnn;
    setDnnPluginLoaderForTesting([](const kiln_dnn_plugin_t *&table) {
      table = &fakeDnnTable;
      return kiln_status_t(nullptr);
    });
  }
  void TearDown() override {
    setDnnPluginLoaderForTesting(nullptr);
    fakeDnn = nullptr;
    setBlasPluginLoaderForTesting(nullptr);
    setCudaDriverLoaderForTesting(nullptr);
    fakeBlas = nullptr;
  }
  FakeState state;
  FakeBlasState blas;
  FakeDnnState dnn;
};

bool systemHasCudaDriver() {
  std::string error;
  return loadCudaDriver("libcuda.so.1", error) != nullptr;
}

/// Expects the CUDA device check to fail with `code` and a message that
/// contains `fragment`.
void expectCudaCheck(kiln_status_code_t code, const std::string &fragment) {
  kiln::test::Outcome check = take(kiln_device_check(KILN_DEVICE_CUDA));
  EXPECT_EQ(check.code, code);
  EXPECT_NE(check.message.find(fragment), std::string::npos) << check.message;
}

} // namespace

TEST(CudaCApiTest, DeviceApiWorksFromC) { EXPECT_EQ(kilnCudaCApiCheck(), 0); }

TEST(CudaDriverTest, MissingLibraryIsNoCudaDriverFound) {
  std::string error;
  EXPECT_EQ(loadCudaDriver("libkiln-test-no-such-driver.so.1", error),
            nullptr);
  EXPECT_EQ(error.rfind("no CUDA driver found", 0), 0u) << error;
  EXPECT_NE(error.find("libkiln-test-no-such-driver.so.1"), std::string::npos);
}

TEST(CudaDriverTest, LibraryWithoutTheDriverApiIsRejected) {
  std::string error;
  EXPECT_EQ(loadCudaDriver("libm.so.6", error), nullptr);
  EXPECT_NE(error.find("lacks 'cuInit'"), std::string::npos) << error;
}

TEST(CudaWithoutDriverTest, DeviceCheckAndCallsSayNoCudaDriverFound) {
  if (systemHasCudaDriver())
    GTEST_SKIP() << "this machine has a CUDA driver";
  expectCudaCheck(KILN_STATUS_DEVICE_UNAVAILABLE, "no CUDA driver found");
  EXPECT_TRUE(take(kiln_device_check(KILN_DEVICE_CPU)).ok());

  // The module loads and lists; the first call reports the missing driver.
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  EXPECT_EQ(kiln_module_device(module.get()), KILN_DEVICE_CUDA);
  TensorPtr y;
  kiln::test::Outcome call = callScale2(module.get(), y);
  EXPECT_EQ(call.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(call.message.find("no CUDA driver found"), std::string::npos)
      << call.message;
  EXPECT_FALSE(y);

  // Asking for CUDA explicitly fails at load time.
  std::vector<uint8_t> bytes = kiln::format::writeModule(cudaModuleContents());
  kiln_module_t *raw = nullptr;
  kiln::test::Outcome onCuda = take(kiln_module_load_memory_on(
      KILN_DEVICE_CUDA, bytes.data(), bytes.size(), &raw));
  EXPECT_EQ(onCuda.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_EQ(raw, nullptr);
}

TEST(CudaDeviceSelectionTest, ModuleForAnotherDeviceIsRefused) {
  std::vector<uint8_t> bytes = kiln::format::writeModule(cudaModuleContents());
  kiln_module_t *raw = nullptr;
  kiln::test::Outcome onCpu = take(kiln_module_load_memory_on(
      KILN_DEVICE_CPU, bytes.data(), bytes.size(), &raw));
  EXPECT_EQ(onCpu.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(onCpu.message.find("compiled for cuda"), std::string::npos)
      << onCpu.message;
  EXPECT_EQ(raw, nullptr);

  std::vector<uint8_t> cpu =
      kiln::format::writeModule(kiln::test::addModuleContents());
  kiln::test::Outcome cpuOnCuda = take(kiln_module_load_memory_on(
      KILN_DEVICE_CUDA, cpu.data(), cpu.size(), &raw));
  EXPECT_EQ(cpuOnCuda.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(cpuOnCuda.message.find("compiled for cpu"), std::string::npos);
  EXPECT_TRUE(take(kiln_module_load_memory_on(KILN_DEVICE_CPU, cpu.data(),
                                              cpu.size(), &raw))
                  .ok());
  EXPECT_EQ(kiln_module_device(raw), KILN_DEVICE_CPU);
  kiln_module_release(raw);

  EXPECT_EQ(take(kiln_module_load_memory_on(static_cast<kiln_device_t>(7),
                                            cpu.data(), cpu.size(), &raw))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_device_name(KILN_DEVICE_CUDA), "cuda");
  EXPECT_STREQ(kiln_device_name(static_cast<kiln_device_t>(7)), "invalid");
}

TEST(CudaModuleFormatTest, DeviceCodeRoundTripsAndCpuModulesOmitIt) {
  kiln::format::ModuleContents contents = cudaModuleContents();
  std::vector<uint8_t> bytes = kiln::format::writeModule(contents);
  kiln::format::ModuleContents read;
  std::string error;
  ASSERT_TRUE(kiln::format::readModule(bytes.data(), bytes.size(), read,
                                       error))
      << error;
  EXPECT_EQ(read.deviceCode, contents.deviceCode);
  EXPECT_EQ(read.target, "cuda-sm_80");

  kiln::format::ModuleContents cpu = kiln::test::addModuleContents();
  ASSERT_TRUE(kiln::format::readModule(
      kiln::format::writeModule(cpu).data(),
      kiln::format::writeModule(cpu).size(), read, error));
  EXPECT_TRUE(read.deviceCode.empty());
}

TEST_F(FakeCudaTest, CallCopiesInLaunchesAndCopiesOut) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 2; ++round) {
    TensorPtr y;
    kiln::test::Outcome call = callScale2(module.get(), y);
    ASSERT_TRUE(call.ok()) << call.message;
    const float *values = static_cast<const float *>(kiln_tensor_data(y.get()));
    EXPECT_EQ(std::vector<float>(values, values + 4),
              (std::vector<float>{2, 4, 6, 8}));
    EXPECT_EQ(state.htod, round);
    EXPECT_EQ(state.dtoh, round);
    EXPECT_EQ(state.launches, 2 * round);
    // The launches are not waited for one by one: the runtime waits once,
    // before it copies the output back.
    EXPECT_EQ(state.syncs, round);
    EXPECT_TRUE(state.queue.empty());
  }
  // Every launch went to the device's one stream.
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
  // The PTX came from the module's device_code (through the image slot),
  // is JIT-loaded once and cached, with the error log requested, and each
  // kernel is looked up once.
  EXPECT_EQ(state.loadedImage, "// kernels: scale2, copy, less100\n");
  EXPECT_EQ(state.moduleLoads, 1);
  EXPECT_EQ(state.functionLookups, 2);
  EXPECT_TRUE(state.sawErrorLogOption);
  EXPECT_EQ(state.launched,
            (std::vector<std::string>{"scale2", "copy", "scale2", "copy"}));
  // Input, output and the arena come from the driver once, as device
  // memory (the compiled host code never touches an argument's elements);
  // the second call reuses them from the pool.
  EXPECT_EQ(state.managedAllocations, 0);
  EXPECT_EQ(state.deviceAllocations, 3);
  EXPECT_EQ(state.live.size(), 3u);
  module.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

/// Calls `product` on a = [[1, 2, 3], [4, 5, 6]] and b = [[1, 2], [3, 4],
/// [5, 6]].
kiln::test::Outcome callProduct(kiln_module_t *module, TensorPtr &c) {
  const kiln_function_t *function = nullptr;
  take(kiln_module_function_lookup(module, "product", &function));
  TensorPtr a = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2, 3},
                                              {1, 2, 3, 4, 5, 6});
  TensorPtr b = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {3, 2},
                                              {1, 2, 3, 4, 5, 6});
  kiln_tensor_t *inputs[] = {a.get(), b.get()};
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome outcome =
      take(kiln_function_call(function, inputs, 2, &output, 1));
  c.reset(output);
  return outcome;
}

/// Checks that `call` failed as a device error whose message names
/// `message`.
void expectDeviceError(const kiln::test::Outcome &call, const char *message) {
  EXPECT_EQ(call.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(call.message.find(message), std::string::npos) << call.message;
}

TEST_F(FakeCudaTest, ProductsAreQueuedOnTheStreamThroughThePlugin) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 2; ++round) {
    TensorPtr c;
    kiln::test::Outcome call = callProduct(module.get(), c);
    ASSERT_TRUE(call.ok()) << call.message;
    // a b = [[22, 28], [49, 64]]; a times b's storage read as 2 x 3 and
    // transposed = [[14, 32], [32, 77]]; the second accumulates.
    const float *values = static_cast<const float *>(kiln_tensor_data(c.get()));
    EXPECT_EQ(std::vector<float>(values, values + 4),
              (std::vector<float>{36, 60, 81, 141}));
    EXPECT_EQ(blas.products, 2 * round);
    // Queued, not waited for: the runtime waits once, before the copy out.
    EXPECT_EQ(state.syncs, round);
  }
  // One handle and one workspace for the device, in device memory.
  EXPECT_EQ(blas.creates, 1);
  ASSERT_EQ(blas.workspaces.size(), 1u);
  EXPECT_TRUE(state.deviceOnly.count(
      reinterpret_cast<CUdeviceptr>(*blas.workspaces.begin())));
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
  // The host code's arguments reach the plug-in unchanged.
  const kiln_matmul_problem_t &second = blas.problems[1];
  EXPECT_EQ(second.flags,
            KILN_CUDA_MATMUL_ACCUMULATE | KILN_CUDA_MATMUL_TRANSPOSE_B);
  EXPECT_EQ(second.ab_dtype, KILN_DTYPE_F32);
  EXPECT_EQ(second.c_dtype, KILN_DTYPE_F32);
  EXPECT_EQ(std::vector<int64_t>({second.batch, second.m, second.n, second.k,
                                  second.lda, second.ldb, second.ldc}),
            (std::vector<int64_t>{1, 2, 2, 3, 3, 3, 2}));
  EXPECT_EQ(second.bias, nullptr);
  module.reset();
  // The handle is released with the device, and so is the workspace.
  EXPECT_EQ(blas.destroys, 1);
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaTest, AProductsEpilogueReachesThePluginWithItsBias) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  const kiln_function_t *dense = nullptr;
  ASSERT_TRUE(
      take(kiln_module_function_lookup(module.get(), "dense", &dense)).ok());
  TensorPtr a = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2, 3},
                                              {1, 2, 3, -4, -5, -6});
  TensorPtr b = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {3, 2},
                                              {1, 2, 3, 4, 5, 6});
  TensorPtr bias = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2}, {1, -30});
  kiln_tensor_t *inputs[] = {a.get(), b.get(), bias.get()};
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome call =
      take(kiln_function_call(dense, inputs, 3, &output, 1));
  ASSERT_TRUE(call.ok()) << call.message;
  TensorPtr c(output);
  // a b = [[22, 28], [-49, -64]]; + [1, -30].
  const float *values = static_cast<const float *>(kiln_tensor_data(c.get()));
  EXPECT_EQ(std::vector<float>(values, values + 4),
            (std::vector<float>{23, -2, -48, -94}));
  ASSERT_EQ(blas.problems.size(), 1u);
  EXPECT_EQ(blas.problems[0].flags, KILN_CUDA_MATMUL_BIAS);
  // The bias reached the plug-in as the call's device copy of it.
  EXPECT_NE(blas.problems[0].bias, nullptr);
  EXPECT_TRUE(state.live.count(
      reinterpret_cast<CUdeviceptr>(blas.problems[0].bias)));
  EXPECT_EQ(blas.problems[0].bias_gradient, nullptr);
}

/// Calls `name` (dense_gradient or a variant) on x = [[1, 2, 3], [4, 5, 6]]
/// and dy = [[1, -1], [2, 10]], its outputs (dw, db) in `dw` and `db`.
kiln::test::Outcome callDenseGradient(kiln_module_t *module, const char *name,
                                      TensorPtr &dw, TensorPtr &db) {
  const kiln_function_t *function = nullptr;
  kiln::test::Outcome found =
      take(kiln_module_function_lookup(module, name, &function));
  if (!found.ok())
    return found;
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TensorPtr dy =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2, 2}, {1, -1, 2, 10});
  kiln_tensor_t *inputs[] = {x.get(), dy.get()};
  kiln_tensor_t *outputs[2] = {nullptr, nullptr};
  kiln::test::Outcome call =
      take(kiln_function_call(function, inputs, 2, outputs, 2));
  dw.reset(outputs[0]);
  db.reset(outputs[1]);
  return call;
}

TEST_F(FakeCudaTest, ABiasGradientIsWrittenByThePluginsProduct) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr dw, db;
  kiln::test::Outcome call =
      callDenseGradient(module.get(), "dense_gradient", dw, db);
  ASSERT_TRUE(call.ok()) << call.message;
  // x^T dy = [[9, 39], [12, 48], [15, 57]]; dy's column sums [3, 9].
  const float *w = static_cast<const float *>(kiln_tensor_data(dw.get()));
  EXPECT_EQ(std::vector<float>(w, w + 6),
            (std::vector<float>{9, 39, 12, 48, 15, 57}));
  const float *b = static_cast<const float *>(kiln_tensor_data(db.get()));
  EXPECT_EQ(std::vector<float>(b, b + 2), (std::vector<float>{3, 9}));
  ASSERT_EQ(blas.problems.size(), 1u);
  EXPECT_EQ(blas.problems[0].flags,
            KILN_CUDA_MATMUL_BIAS_GRADIENT_B | KILN_CUDA_MATMUL_TRANSPOSE_A);
  EXPECT_EQ(blas.problems[0].bias, nullptr);
  // The gradient is written into the call's device buffer for db.
  EXPECT_TRUE(state.live.count(
      reinterpret_cast<CUdeviceptr>(blas.problems[0].bias_gradient)));
}

TEST_F(FakeCudaTest, AProductThePluginWouldMisreadIsRefusedByName) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr dw, db;
  kiln::test::Outcome call =
      callDenseGradient(module.get(), "dense_gradient_malformed", dw, db);
  EXPECT_FALSE(call.ok());
  EXPECT_NE(call.message.find("malformed product (flags 0x43)"),
            std::string::npos)
      << call.message;
  EXPECT_NE(call.message.find("not stored with k along its rows"),
            std::string::npos)
      << call.message;
  // The plug-in never saw it.
  EXPECT_EQ(blas.attempts, 0);
  EXPECT_EQ(dw, nullptr);
}

/// Calls `name` (convolve by default) on x = [1 .. 16, -1 .. -16] (two
/// 4x4 channels) and w = [ones, a centred one] (two 3x3 kernels).
kiln::test::Outcome callConvolve(kiln_module_t *module, TensorPtr &y,
                                 const char *name = "convolve") {
  const kiln_function_t *function = nullptr;
  take(kiln_module_function_lookup(module, name, &function));
  std::vector<float> xs, ws(18, 0.0f);
  for (int i = 1; i <= 16; ++i)
    xs.push_back(float(i));
  for (int i = 1; i <= 16; ++i)
    xs.push_back(float(-i));
  for (int i = 0; i < 9; ++i)
    ws[i] = 1;
  ws[9 + 4] = 1;
  TensorPtr x = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {1, 2, 4, 4}, xs);
  TensorPtr w = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2, 1, 3, 3}, ws);
  kiln_tensor_t *inputs[] = {x.get(), w.get()};
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome outcome =
      take(kiln_function_call(function, inputs, 2, &output, 1));
  y.reset(output);
  return outcome;
}

TEST_F(FakeCudaTest, ConvolutionsAreQueuedOnTheStreamThroughThePlugin) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 2; ++round) {
    TensorPtr y;
    kiln::test::Outcome call = callConvolve(module.get(), y);
    ASSERT_TRUE(call.ok()) << call.message;
    // Group 0 sums the 3x3 windows of channel 0 at stride 2 from -1
    // (clipped by the padding): rows 0-1 or 1-3 by columns 0-1 or 1-3;
    // group 1's centred one picks channel 1 at rows and columns 0 and 2.
    const float *values = static_cast<const float *>(kiln_tensor_data(y.get()));
    EXPECT_EQ(std::vector<float>(values, values + 8),
              (std::vector<float>{14, 30, 57, 99, -1, -3, -9, -11}));
    EXPECT_EQ(dnn.convs, round);
  }
  // One handle and one workspace, in device memory, for the device.
  EXPECT_EQ(dnn.creates, 1);
  ASSERT_EQ(dnn.workspaces.size(), 1u);
  EXPECT_TRUE(state.deviceOnly.count(
      reinterpret_cast<CUdeviceptr>(*dnn.workspaces.begin())));
  EXPECT_EQ(dnn.descriptors[0],
            (std::vector<int64_t>{2, 2, 0, 0, 1, 2, 2, 4, 4, 3, 3, 2, 2, 2,
                                  2, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
  module.reset();
  EXPECT_EQ(dnn.destroys, 1);
}

/// Calls `name` on bf16 tensors [1, 2, 4, 8] of the halves 0, 1, ... (the
/// k-th input starting at 100 * k) and, for attend_grad, an f32 lse.
kiln::test::Outcome callAttention(kiln_module_t *module, const char *name,
                                  std::vector<TensorPtr> &outputs) {
  const kiln_function_t *function = nullptr;
  take(kiln_module_function_lookup(module, name, &function));
  bool gradient = std::string(name).rfind("attend_grad", 0) == 0;
  std::vector<TensorPtr> inputs;
  for (int k = 0; k < (gradient ? 6 : 3); ++k) {
    if (gradient && k == 4) {
      inputs.push_back(kiln::test::makeTensor<float>(
          KILN_DTYPE_F32, {1, 2, 4}, std::vector<float>(8, 0.5f)));
      continue;
    }
    std::vector<uint16_t> halves;
    for (int i = 0; i < 64; ++i)
      halves.push_back(uint16_t(100 * k + i));
    inputs.push_back(kiln::test::makeTensor<uint16_t>(KILN_DTYPE_BF16,
                                                      {1, 2, 4, 8}, halves));
  }
  std::vector<kiln_tensor_t *> in;
  for (TensorPtr &t : inputs)
    in.push_back(t.get());
  std::vector<kiln_tensor_t *> out(gradient ? 3 : 2, nullptr);
  kiln::test::Outcome outcome = take(kiln_function_call(
      function, in.data(), in.size(), out.data(), out.size()));
  outputs.clear();
  for (kiln_tensor_t *t : out)
    outputs.emplace_back(t);
  return outcome;
}

/// The halves of a bf16 output of callAttention.
std::vector<uint16_t> halvesOf(const TensorPtr &t) {
  const uint16_t *h = static_cast<const uint16_t *>(kiln_tensor_data(t.get()));
  return std::vector<uint16_t>(h, h + 64);
}

std::vector<uint16_t> halvesFrom(int start) {
  std::vector<uint16_t> h;
  for (int i = 0; i < 64; ++i)
    h.push_back(uint16_t(start + i));
  return h;
}

TEST_F(FakeCudaTest, AttentionIsQueuedOnTheStreamThroughThePlugin) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  std::vector<TensorPtr> outputs;
  kiln::test::Outcome call = callAttention(module.get(), "attend", outputs);
  ASSERT_TRUE(call.ok()) << call.message;
  EXPECT_EQ(dnn.attentions, 1);
  // o holds v and lse what the plug-in wrote: each buffer went where the
  // ABI says, the absent mask as null.
  EXPECT_EQ(halvesOf(outputs[0]), halvesFrom(200));
  const float *lse =
      static_cast<const float *>(kiln_tensor_data(outputs[1].get()));
  EXPECT_EQ(std::vector<float>(lse, lse + 8),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(dnn.attentionBuffers.size(), 6u);
  EXPECT_EQ(dnn.attentionBuffers[3], nullptr);
  EXPECT_EQ(dnn.descriptors.back(),
            (std::vector<int64_t>{6, 1, 1, 2, 4, 4, 8, 8, 1, 1, 1, 1,
                                  4593671619917905920}));
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
  // The gradient: dq holds do, dk k and dv v.
  call = callAttention(module.get(), "attend_grad", outputs);
  ASSERT_TRUE(call.ok()) << call.message;
  EXPECT_EQ(dnn.attentions, 2);
  ASSERT_EQ(dnn.attentionBuffers.size(), 11u);
  EXPECT_EQ(dnn.attentionBuffers[6], nullptr);
  EXPECT_EQ(halvesOf(outputs[0]), halvesFrom(500));
  EXPECT_EQ(halvesOf(outputs[1]), halvesFrom(100));
  EXPECT_EQ(halvesOf(outputs[2]), halvesFrom(200));
  // One handle and one workspace for convolutions and attention alike.
  EXPECT_EQ(dnn.creates, 1);
  EXPECT_EQ(dnn.workspaces.size(), 1u);
}

TEST_F(FakeCudaTest, AnAttentionWhoseMaskIsMissingIsRefused) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  std::vector<TensorPtr> outputs;
  expectDeviceError(
      callAttention(module.get(), "attend_missing_mask", outputs),
      "CUDA attention: malformed descriptor (flags 3, sizes 1x2x4x8, 4 keys)");
  EXPECT_EQ(dnn.attentions, 0);
  EXPECT_EQ(dnn.creates, 0);
}

TEST_F(FakeCudaTest, ARefusedAttentionSaysHowToDoWithoutCudnn) {
  // cuDNN's attention is the compiler's default for half precision; where
  // a module's call is cuDNN's alone, its refusal fails the call with the
  // way around it.
  dnn.refuseAttentions = "cuDNN has no engine for the attention";
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  std::vector<TensorPtr> outputs;
  kiln::test::Outcome call = callAttention(module.get(), "attend", outputs);
  expectDeviceError(call, "CUDA attention: cuDNN has no engine for the "
                          "attention (kiln-compile "
                          "--no-cuda-cudnn-attention, or kiln.jit's "
                          "cuda_cudnn_attention=False, keeps attention on "
                          "kiln's own kernels)");
  EXPECT_EQ(dnn.attentions, 0);
}

TEST_F(FakeCudaTest, AConvolutionWithUndefinedFlagsIsRefused) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  expectDeviceError(callConvolve(module.get(), y, "convolve_bad_flags"),
                    "CUDA convolutions: malformed descriptor (2 spatial "
                    "dims, 2 groups, flags 8)");
  EXPECT_EQ(dnn.convs, 0);
  EXPECT_EQ(dnn.creates, 0);
}

TEST_F(FakeCudaTest, AMissingConvolutionsPluginIsNamedWithWhatItNeeds) {
  setDnnPluginLoaderForTesting(nullptr);
  ScopedVariable plugin(kDnnPluginVariable, "/nonexistent/libkiln_cuda_dnn.so");
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  kiln::test::Outcome call = callConvolve(module.get(), y);
  EXPECT_EQ(call.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(call.message.find("cannot load the CUDA convolutions plug-in "
                              "'/nonexistent/libkiln_cuda_dnn.so'"),
            std::string::npos)
      << call.message;
  EXPECT_NE(call.message.find("cuDNN"), std::string::npos) << call.message;
}

TEST(CudaDnnPluginTest, TheCudnnPluginLoadsAndNamesItsLibrary) {
  if (!*KILN_DNN_PLUGIN_PATH)
    GTEST_SKIP() << "the cuDNN plug-in is not built here (no cudnn.h)";
  ScopedVariable plugin(kDnnPluginVariable, KILN_DNN_PLUGIN_PATH);
  const kiln_dnn_plugin_t *table = nullptr;
  kiln::test::Outcome loaded = take(loadDnnPlugin(table));
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_EQ(table->version, uint32_t(KILN_DNN_PLUGIN_VERSION));
  std::string name = table->describe();
  EXPECT_EQ(name.rfind("cuDNN 9.", 0), 0u) << name;
}

TEST_F(FakeCudaTest, AFailedProductFailsTheCall) {
  blas.failProduct = true;
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr c;
  expectDeviceError(callProduct(module.get(), c),
                    "CUDA products: no kernel for that");
  // The second product of the call is skipped after the first failed.
  EXPECT_EQ(blas.attempts, 1);
  blas.failProduct = false;
  ASSERT_TRUE(callProduct(module.get(), c).ok());
}

TEST_F(FakeCudaTest, AHandleThatCannotBeMadeFailsTheCall) {
  blas.failCreate = true;
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr c;
  expectDeviceError(callProduct(module.get(), c),
                    "CUDA products: no handle today");
  blas.failCreate = false;
  ASSERT_TRUE(callProduct(module.get(), c).ok());
  EXPECT_EQ(blas.creates, 1);
}

TEST_F(FakeCudaTest, AWorkspaceThatCannotBeAllocatedIsAllocatedLater) {
  state.failDeviceAllocationOf = size_t(32) << 20; // the workspace's size
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr c;
  expectDeviceError(callProduct(module.get(), c),
                    "cuMemAlloc of the products' workspace");
  EXPECT_EQ(blas.attempts, 0);
  // The next call allocates the workspace and hands it to the plug-in;
  // the handle made by the first is kept.
  state.failDeviceAllocationOf = 0;
  ASSERT_TRUE(callProduct(module.get(), c).ok());
  EXPECT_EQ(blas.creates, 1);
  ASSERT_EQ(blas.workspaces.size(), 1u);
  EXPECT_NE(*blas.workspaces.begin(), nullptr);
  EXPECT_TRUE(state.deviceOnly.count(
      reinterpret_cast<CUdeviceptr>(*blas.workspaces.begin())));
}

TEST_F(FakeCudaTest, AMissingPluginIsNamedWithWhatItNeeds) {
  setBlasPluginLoaderForTesting(nullptr);
  ScopedVariable plugin(kBlasPluginVariable, "/nonexistent/libkiln_cuda_blas.so");
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr c;
  kiln::test::Outcome call = callProduct(module.get(), c);
  EXPECT_EQ(call.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(call.message.find("cannot load the CUDA products plug-in "
                              "'/nonexistent/libkiln_cuda_blas.so'"),
            std::string::npos)
      << call.message;
  EXPECT_NE(call.message.find("cuBLASLt"), std::string::npos) << call.message;
}

TEST(CudaBlasPluginTest, TheCublasLtPluginLoadsAndNamesItsLibrary) {
  if (!*KILN_BLAS_PLUGIN_PATH)
    GTEST_SKIP() << "the cuBLASLt plug-in is not built here (no cublasLt.h)";
  ScopedVariable plugin(kBlasPluginVariable, KILN_BLAS_PLUGIN_PATH);
  const kiln_blas_plugin_t *table = nullptr;
  kiln::test::Outcome loaded = take(loadBlasPlugin(table));
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  EXPECT_EQ(table->version, uint32_t(KILN_BLAS_PLUGIN_VERSION));
  std::string name = table->describe();
  EXPECT_EQ(name.rfind("cuBLASLt 1", 0), 0u) << name;
}

TEST_F(FakeCudaTest, LoopPredicateIsCopiedBackOncePerIteration) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 2; ++round) {
    TensorPtr y;
    kiln::test::Outcome call = callScale2(module.get(), y, "double_until");
    ASSERT_TRUE(call.ok()) << call.message;
    const float *values = static_cast<const float *>(kiln_tensor_data(y.get()));
    // y[0] = 1 doubles 7 times to 128; the predicate is read 8 times.
    EXPECT_EQ(std::vector<float>(values, values + 4),
              (std::vector<float>{128, 256, 384, 512}));
    EXPECT_EQ(state.asyncCopies, 8 * round);
    EXPECT_EQ(state.syncs, 9 * round);
    EXPECT_EQ(state.launches, 23 * round);

    kiln_cuda_stats_t stats;
    ASSERT_TRUE(
        take(kiln_module_cuda_stats(module.get(), &stats, sizeof(stats))).ok());
    EXPECT_EQ(stats.calls, uint64_t(round));
    EXPECT_EQ(stats.device_to_host_copies, uint64_t(8 * round));
    EXPECT_EQ(stats.device_to_host_bytes, uint64_t(8 * round));
    EXPECT_EQ(stats.stream_syncs, uint64_t(9 * round));
    EXPECT_EQ(stats.kernel_launches, uint64_t(23 * round));
    // Input, output and one arena of 65 bytes (kept in 256-byte steps).
    EXPECT_EQ(stats.driver_allocations, 3u);
    EXPECT_EQ(stats.largest_device_allocation, 256u);
    EXPECT_EQ(stats.held_bytes, 3 * 256u);
  }
  EXPECT_EQ(state.deviceAllocations, 3);
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
}

/// The elements of a host tensor of f32.
std::vector<float> hostValues(kiln_tensor_t *tensor) {
  const float *data = static_cast<const float *>(kiln_tensor_data(tensor));
  return std::vector<float>(data, data + kiln_tensor_element_count(tensor));
}

/// Copies a device tensor to the host, expecting success.
std::vector<float> valuesOnHost(const kiln_tensor_t *tensor) {
  kiln_tensor_t *host = nullptr;
  kiln::test::Outcome copied = take(kiln_tensor_to_host(tensor, &host));
  EXPECT_TRUE(copied.ok()) << copied.message;
  TensorPtr owned(host);
  return host ? hostValues(host) : std::vector<float>();
}

/// The device runtime library the fake driver is told about.
constexpr char kFakeDeviceRuntime[] = "/opt/fake-cuda/lib64/libcudadevrt.a";

/// A fake driver that offers graphs with conditional nodes, the device
/// runtime library named, KILN_CUDA_GRAPHS unset.
class FakeCudaGraphTest : public FakeCudaTest {
protected:
  void SetUp() override {
    FakeCudaTest::SetUp();
    state.graphs = true;
  }
  ScopedVariable library{"KILN_CUDA_DEVRT", kFakeDeviceRuntime};
  ScopedVariable graphs{"KILN_CUDA_GRAPHS", nullptr};
  ScopedVariable unplanned{"KILN_CUDA_CAPTURE_UNPLANNED", nullptr};

  /// Calls `name`, a double_until loop holding a convolution whose plan the
  /// first call's capture meets missing, twice: each call's result is right
  /// and its loop one graph launch; the first makes the convolution on
  /// scratch buffers and captured (two plug-in calls), the second captured.
  void expectConvLoopGraphs(kiln_module_t *module, const char *name) {
    for (int call = 1; call <= 2; ++call) {
      int convs = dnn.convs, launches = state.graphLaunches;
      TensorPtr y;
      kiln::test::Outcome done = callScale2(module, y, name);
      ASSERT_TRUE(done.ok()) << name << ": " << done.message;
      EXPECT_EQ(hostValues(y.get()), (std::vector<float>{128, 256, 384, 512}))
          << name << ", call " << call;
      EXPECT_EQ(dnn.convs - convs, call == 1 ? 2 : 1)
          << name << ", call " << call;
      EXPECT_EQ(state.graphLaunches - launches, 1) << name << ", call " << call;
    }
  }

  /// After a call that failed during a loop's capture: the capture was
  /// ended and nothing was launched as a graph, and the stream takes work
  /// again, so that the next call runs its loop as a graph.
  void expectCaptureEndedAndNextLoopRuns(kiln_module_t *module) {
    EXPECT_EQ(state.capturing, nullptr);
    EXPECT_EQ(state.graphLaunches, 0);
    EXPECT_EQ(state.graphsDestroyed, state.graphsCreated);
    TensorPtr y;
    kiln::test::Outcome call = callScale2(module, y, "double_until");
    ASSERT_TRUE(call.ok()) << call.message;
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{128, 256, 384, 512}));
    EXPECT_EQ(state.graphLaunches, 1);
  }
};

TEST_F(FakeCudaGraphTest, DeviceOnlyLoopRunsAsOneGraphWithConditionalNodes) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 2; ++round) {
    TensorPtr y;
    kiln::test::Outcome call = callScale2(module.get(), y, "double_until");
    ASSERT_TRUE(call.ok()) << call.message;
    // Seven doublings, as the host loop makes them, without a predicate
    // copied back or a wait per iteration: one wait, for the results.
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{128, 256, 384, 512}));
    EXPECT_EQ(state.asyncCopies, 0);
    EXPECT_EQ(state.syncs, round);
    EXPECT_EQ(state.syncsDuringCapture, 0);
    // The test, the body and the test again are queued once: copy in,
    // less100, the condition's kernel, then scale2, copy, less100 and the
    // condition's kernel in the WHILE node.
    EXPECT_EQ(state.launches, 7 * round);
    EXPECT_EQ(state.captures, 2 * round);
    EXPECT_EQ(state.capturing, nullptr);
    EXPECT_EQ(state.graphLaunches, round);
    EXPECT_EQ(state.instantiated, round);
    EXPECT_EQ(state.graphsDestroyed, state.graphsCreated);
    EXPECT_EQ(state.graphsCreated, round);
    EXPECT_EQ(state.execsDestroyed, round);

    kiln_cuda_stats_t stats;
    ASSERT_TRUE(
        take(kiln_module_cuda_stats(module.get(), &stats, sizeof(stats))).ok());
    EXPECT_EQ(stats.graph_loops, uint64_t(round));
    EXPECT_EQ(stats.device_to_host_copies, 0u);
    EXPECT_EQ(stats.stream_syncs, uint64_t(round));
  }
  std::vector<std::string> call = {
      "copy", "less100", "kiln_graph_set_condition", "scale2",
      "copy", "less100", "kiln_graph_set_condition"};
  std::vector<std::string> twice = call;
  twice.insert(twice.end(), call.begin(), call.end());
  EXPECT_EQ(state.launched, twice);
  // One WHILE node a call, no IF node: the body runs inside the loop's
  // node after the first test.
  EXPECT_EQ(state.conditionalNodes,
            (std::vector<std::string>{"while", "while"}));
  // The condition's kernel was linked once, with the library named.
  EXPECT_EQ(state.linkedLibrary, kFakeDeviceRuntime);
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
}

TEST_F(FakeCudaGraphTest, ALoopInAHostLoopIsCapturedAnewAtEachTrip) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  kiln::test::Outcome call =
      callScale2(module.get(), y, "double_until_rounds");
  ASSERT_TRUE(call.ok()) << call.message;
  // Nine trips of the host loop (w[0] = 1 to 9); the last doubles
  // {9, 10, 11, 12} four times.
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{144, 160, 176, 192}));
  // The host loop's predicate came back ten times, the inner loop's never:
  // each trip captured the inner loop into a graph of its own, launched it
  // and let it go.
  EXPECT_EQ(state.asyncCopies, 10);
  EXPECT_EQ(state.syncsDuringCapture, 0);
  EXPECT_EQ(state.capturing, nullptr);
  EXPECT_EQ(state.graphsCreated, 9);
  EXPECT_EQ(state.instantiated, 9);
  EXPECT_EQ(state.graphLaunches, 9);
  EXPECT_EQ(state.graphsDestroyed, state.graphsCreated);
  EXPECT_EQ(state.execsDestroyed, 9);
  EXPECT_EQ(state.conditionalNodes, std::vector<std::string>(9, "while"));
  kiln_cuda_stats_t stats;
  ASSERT_TRUE(
      take(kiln_module_cuda_stats(module.get(), &stats, sizeof(stats))).ok());
  EXPECT_EQ(stats.graph_loops, 9u);

  // The host form computes the same, with the inner loop's predicate back
  // on the host at every test: 46 doublings over the nine trips, and one
  // test more per trip than doublings.
  ScopedVariable off("KILN_CUDA_GRAPHS", "0");
  ModulePtr hostLoops = loadCudaModule();
  ASSERT_TRUE(hostLoops);
  int copiesBefore = state.asyncCopies;
  TensorPtr z;
  call = callScale2(hostLoops.get(), z, "double_until_rounds");
  ASSERT_TRUE(call.ok()) << call.message;
  EXPECT_EQ(hostValues(z.get()), hostValues(y.get()));
  EXPECT_EQ(state.asyncCopies - copiesBefore, 10 + 46 + 9);
  EXPECT_EQ(state.graphsCreated, 9);
}

TEST_F(FakeCudaGraphTest, GraphLoopWhoseTestFailsFirstSkipsItsBody) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  const kiln_function_t *function = nullptr;
  take(kiln_module_function_lookup(module.get(), "double_until", &function));
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {150, 1, 2, 3});
  kiln_tensor_t *input = x.get();
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome call =
      take(kiln_function_call(function, &input, 1, &output, 1));
  TensorPtr y(output);
  ASSERT_TRUE(call.ok()) << call.message;
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{150, 1, 2, 3}));
  EXPECT_EQ(state.graphLaunches, 1);
}

TEST_F(FakeCudaGraphTest, GraphLoopsOffOrUnlinkableRunTheHostLoop) {
  for (bool off : {true, false}) {
    ScopedVariable flag("KILN_CUDA_GRAPHS", off ? "0" : nullptr);
    state.failLink = !off;
    // A module per setting: each decides once per device.
    ModulePtr module = loadCudaModule();
    ASSERT_TRUE(module);
    int copiesBefore = state.asyncCopies;
    TensorPtr y;
    kiln::test::Outcome call = callScale2(module.get(), y, "double_until");
    ASSERT_TRUE(call.ok()) << call.message;
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{128, 256, 384, 512}));
    // The predicate came back to the host once per iteration.
    EXPECT_EQ(state.asyncCopies - copiesBefore, 8) << "off: " << off;
    EXPECT_EQ(state.graphsCreated, 0);
    EXPECT_EQ(state.captures, 0);
  }
}

TEST_F(FakeCudaGraphTest,
       FailureDuringGraphCaptureFailsTheCallAndEndsTheCapture) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Launches: copy in, less100, the condition, then scale2 in the body.
  state.failLaunchNumber = 4;
  TensorPtr y;
  kiln::test::Outcome failed = callScale2(module.get(), y, "double_until");
  EXPECT_EQ(failed.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(failed.message.find("fake CUDA error 719"), std::string::npos)
      << failed.message;
  EXPECT_FALSE(y);
  EXPECT_EQ(state.captures, 2);
  expectCaptureEndedAndNextLoopRuns(module.get());
  EXPECT_EQ(state.syncsDuringCapture, 0);
}

TEST_F(FakeCudaGraphTest, LoopOfAModuleBeforeTheDoWhileGraphsFailsTheCall) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  kiln::test::Outcome refused =
      callScale2(module.get(), y, "double_until_retired");
  EXPECT_EQ(refused.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(refused.message.find("compile the module again"), std::string::npos)
      << refused.message;
  EXPECT_FALSE(y);
  expectCaptureEndedAndNextLoopRuns(module.get());
}

/// A device tensor of the f32 `values` for `module`, expecting success.
TensorPtr deviceTensor(kiln_module_t *module, std::vector<float> values) {
  TensorPtr host = kiln::test::makeTensor<float>(
      KILN_DTYPE_F32, {int64_t(values.size())}, std::move(values));
  kiln_tensor_t *raw = nullptr;
  EXPECT_TRUE(take(kiln_tensor_to_device(module, host.get(), &raw)).ok());
  return TensorPtr(raw);
}

/// Calls `name` on `input` (a host or device tensor) with outputs on the
/// host, or on the device with `onDevice`; expects success.
TensorPtr callOn(kiln_module_t *module, const char *name, kiln_tensor_t *input,
                 bool onDevice = false) {
  const kiln_function_t *function = nullptr;
  take(kiln_module_function_lookup(module, name, &function));
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome call = take(
      onDevice ? kiln_function_call_on_device(function, &input, 1, &output, 1)
               : kiln_function_call(function, &input, 1, &output, 1));
  EXPECT_TRUE(call.ok()) << call.message;
  return TensorPtr(output);
}

/// One call of a graph test: its input and the output it must give.
struct Round {
  std::vector<float> x, y;
};

/// Calls `name` on round `index` of `rounds` from a host tensor and checks
/// its output, and that no capture is left open or saw synchronous work.
void expectRound(FakeState &state, kiln_module_t *module, const char *name,
                 const std::vector<Round> &rounds, size_t index) {
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, rounds[index].x);
  TensorPtr y = callOn(module, name, x.get());
  ASSERT_TRUE(y);
  EXPECT_EQ(hostValues(y.get()), rounds[index].y) << "call " << index + 1;
  EXPECT_EQ(state.capturing, nullptr);
  EXPECT_EQ(state.syncsDuringCapture, 0);
}

/// Calls `name` on each of `rounds` (expectRound), a function with a loop
/// that runs as a graph of its own at the first call, is captured with
/// the call at the second and launched with it from the third: one graph
/// instantiated at each of the first two calls, no kernel launched after.
/// `launches`, where not negative, is what each of the first two
/// launches. `firstGraphs` is the graphs the first call instantiates (one
/// per loop it runs).
void expectLoopCapturedWithTheCall(FakeState &state, kiln_module_t *module,
                                   const char *name,
                                   const std::vector<Round> &rounds,
                                   int launches = -1, int firstGraphs = 1) {
  for (size_t round = 0; round < rounds.size(); ++round) {
    int launched = state.launches, instantiated = state.instantiated;
    expectRound(state, module, name, rounds, round);
    EXPECT_EQ(state.instantiated - instantiated, round == 0   ? firstGraphs
                                                 : round == 1 ? 1
                                                              : 0)
        << "call " << round + 1;
    if (round >= 2 || launches >= 0)
      EXPECT_EQ(state.launches - launched, round < 2 ? launches : 0)
          << "call " << round + 1;
  }
}

kiln_cuda_stats_t cudaStats(kiln_module_t *module) {
  kiln_cuda_stats_t stats{};
  EXPECT_TRUE(take(kiln_module_cuda_stats(module, &stats, sizeof(stats))).ok());
  return stats;
}

TEST_F(FakeCudaGraphTest, ACallRunsAsOneGraphLaunchFromItsSecondCall) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 6; ++round) {
    int launches = state.launches, captures = state.captures,
        graphLaunches = state.graphLaunches;
    float first = float(round);
    TensorPtr x = kiln::test::makeTensor<float>(
        KILN_DTYPE_F32, {4}, {first, first + 1, first + 2, first + 3});
    TensorPtr y = callOn(module.get(), "scale2_graph", x.get());
    ASSERT_TRUE(y);
    // The graph reads each call's input, written into the same buffer.
    EXPECT_EQ(hostValues(y.get()),
              (std::vector<float>{2 * first, 2 * first + 2, 2 * first + 4,
                                  2 * first + 6}));
    // The first call runs its kernels. The second is captured (its two
    // kernels become the graph's) and launched as a graph; the pool hands
    // the host input's and output's copies the same buffers every call,
    // so later calls launch that graph again: no kernel launch, no
    // capture.
    EXPECT_EQ(state.launches - launches, round <= 2 ? 2 : 0)
        << "call " << round;
    EXPECT_EQ(state.captures - captures, round == 2 ? 1 : 0)
        << "call " << round;
    EXPECT_EQ(state.graphLaunches - graphLaunches, round >= 2 ? 1 : 0)
        << "call " << round;
    EXPECT_EQ(state.syncsDuringCapture, 0);
    EXPECT_EQ(state.capturing, nullptr);
  }
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.kernel_launches, 4u);
  EXPECT_EQ(stats.graph_calls, 5u);
  EXPECT_EQ(stats.graph_captures, 1u);
  EXPECT_EQ(state.instantiated, 1);
  // Input, output and the arena, from the driver once.
  EXPECT_EQ(state.deviceAllocations, 3);
  EXPECT_EQ(state.queuedOn, std::set<CUstream>{state.stream});
  // Released with the module.
  module.reset();
  EXPECT_EQ(state.execsDestroyed, state.instantiated);
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaGraphTest, GraphsOfCallsOffRunEveryCallsKernels) {
  ScopedVariable off("KILN_CUDA_GRAPHS", "0");
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 3; ++round) {
    TensorPtr x =
        kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
    TensorPtr y = callOn(module.get(), "scale2_graph", x.get());
    ASSERT_TRUE(y);
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{2, 4, 6, 8}));
  }
  EXPECT_EQ(state.launches, 6);
  EXPECT_EQ(state.captures, 0);
  EXPECT_EQ(cudaStats(module.get()).graph_calls, 0u);
}

TEST_F(FakeCudaGraphTest, ConstantsAreUploadedOnceAndCopiedOnTheDevice) {
  for (bool graphs : {true, false}) {
    ScopedVariable off("KILN_CUDA_GRAPHS", graphs ? nullptr : "0");
    ModulePtr module = loadCudaModule();
    ASSERT_TRUE(module);
    int htod = state.htod, copies = state.asyncCopies;
    for (int round = 1; round <= 3; ++round) {
      TensorPtr x =
          kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {0, 0, 0, 0});
      TensorPtr y = callOn(module.get(), "twice_table", x.get());
      ASSERT_TRUE(y);
      EXPECT_EQ(hostValues(y.get()), (std::vector<float>{20, 40, 60, 80}));
    }
    // Three inputs and the table once from the host; the table's device
    // copy queued by the calls that ran their host code.
    EXPECT_EQ(state.htod - htod, 4) << "graphs: " << graphs;
    EXPECT_EQ(state.asyncCopies - copies, graphs ? 2 : 3);
    kiln_cuda_stats_t stats = cudaStats(module.get());
    EXPECT_EQ(stats.constant_uploads, 1u);
    EXPECT_EQ(stats.constant_bytes, 16u);
    EXPECT_EQ(stats.graph_calls, graphs ? 2u : 0u);
    module.reset();
    EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
  }
}

TEST_F(FakeCudaGraphTest, ResidentConstantsAreUploadedOnceAndReadInPlace) {
  for (bool graphs : {true, false}) {
    ScopedVariable off("KILN_CUDA_GRAPHS", graphs ? nullptr : "0");
    ModulePtr module = loadCudaModule();
    ASSERT_TRUE(module);
    int htod = state.htod, copies = state.asyncCopies;
    int allocations = state.deviceAllocations;
    for (int round = 1; round <= 3; ++round) {
      TensorPtr x =
          kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {0, 0, 0, 0});
      TensorPtr y = callOn(module.get(), "twice_resident", x.get());
      ASSERT_TRUE(y);
      EXPECT_EQ(hostValues(y.get()), (std::vector<float>{10, 12, 14, 16}));
    }
    // Three inputs and the constant once from the host; no copy of it on
    // the device, and one device allocation for it (the calls' inputs and
    // outputs come from the pool after the first call).
    EXPECT_EQ(state.htod - htod, 4) << "graphs: " << graphs;
    EXPECT_EQ(state.asyncCopies - copies, 0);
    EXPECT_EQ(state.deviceAllocations - allocations, 3);
    kiln_cuda_stats_t stats = cudaStats(module.get());
    EXPECT_EQ(stats.constant_uploads, 1u);
    EXPECT_EQ(stats.constant_bytes, 16u);
    EXPECT_EQ(stats.graph_calls, graphs ? 2u : 0u);
    module.reset();
    EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
  }
}

TEST_F(FakeCudaGraphTest, AResidentConstantsFailedUploadFailsTheCall) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  // The constant's 16 bytes are refused; the call fails with the driver's
  // error and launches nothing with the null address.
  state.failDeviceAllocationOf = 16;
  int launches = state.launchAttempts;
  const kiln_function_t *function = nullptr;
  ASSERT_TRUE(take(kiln_module_function_lookup(module.get(), "twice_resident",
                                               &function))
                  .ok());
  kiln_tensor_t *input = x.get(), *output = nullptr;
  expectDeviceError(take(kiln_function_call(function, &input, 1, &output, 1)),
                    "cuMemAlloc of a constant of 16 bytes");
  TensorPtr none(output);
  EXPECT_EQ(state.launchAttempts, launches);
  // The next call uploads it.
  state.failDeviceAllocationOf = 0;
  TensorPtr y = callOn(module.get(), "twice_resident", x.get());
  ASSERT_TRUE(y);
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{10, 12, 14, 16}));
  EXPECT_EQ(cudaStats(module.get()).constant_uploads, 1u);
}

TEST_F(FakeCudaGraphTest, GraphsOfDifferentFunctionsShareTheirBuffers) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Two functions, each with an intermediate of its own, called in turn:
  // each is captured at its second call, the second one taking the buffer
  // the first one's graph holds, and both graphs launched again after.
  for (int round = 1; round <= 4; ++round) {
    TensorPtr x =
        kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
    TensorPtr y = callOn(module.get(), "scale2_graph", x.get());
    ASSERT_TRUE(y);
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{2, 4, 6, 8}));
    TensorPtr z = callOn(module.get(), "twice_table", x.get());
    ASSERT_TRUE(z);
    EXPECT_EQ(hostValues(z.get()), (std::vector<float>{20, 40, 60, 80}));
  }
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_captures, 2u);
  EXPECT_EQ(stats.graph_calls, 6u);
  // One 256-byte buffer for both graphs' intermediates, not one each.
  EXPECT_EQ(stats.graph_bytes, 256u);
  // A request the driver can serve only with the bytes graphs and the
  // pool hold: the graphs are dropped, the shared buffer goes back to the
  // pool once, and the pool to the driver.
  state.deviceMemoryLimit = state.deviceBytes + 4096 * sizeof(float) - 256;
  kiln_tensor_t *raw = nullptr;
  TensorPtr big = kiln::test::makeTensor<float>(
      KILN_DTYPE_F32, {4096}, std::vector<float>(4096, 1.0f));
  EXPECT_TRUE(take(kiln_tensor_to_device(module.get(), big.get(), &raw)).ok());
  TensorPtr onDevice(raw);
  EXPECT_EQ(cudaStats(module.get()).graph_bytes, 0u);
  onDevice.reset();
  module.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaGraphTest, ChainedDeviceCallsReplayTheirGraphs) {
  // A loop of steps, each output the next step's input and each input
  // released after its step, as a training loop's parameters: the buffers
  // alternate between two sets, and a graph is captured for each.
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr current = deviceTensor(module.get(), {1, 2, 3, 4});
  ASSERT_TRUE(current);
  for (int step = 1; step <= 8; ++step) {
    TensorPtr next = callOn(module.get(), "scale2_graph", current.get(), true);
    ASSERT_TRUE(next);
    current = std::move(next);
  }
  EXPECT_EQ(valuesOnHost(current.get()),
            (std::vector<float>{256, 512, 768, 1024}));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_captures, 2u);
  EXPECT_EQ(stats.graph_calls, 7u);
  EXPECT_EQ(state.launches, 2 + 2 * 2);
}

TEST_F(FakeCudaGraphTest, CallsWithOtherBuffersAreCapturedAgain) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  std::vector<TensorPtr> inputs;
  for (int i = 0; i < 5; ++i) {
    float v = float(10 * i);
    inputs.push_back(deviceTensor(module.get(), {v, v, v, v}));
    ASSERT_TRUE(inputs.back());
  }
  // Device inputs, host outputs (their device buffers come from the pool
  // and go back after each call, so only the input differs).
  auto call = [&](int i) {
    TensorPtr y = callOn(module.get(), "scale2_graph", inputs[i].get());
    ASSERT_TRUE(y);
    float v = float(20 * i);
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{v, v, v, v}))
        << "input " << i;
  };
  for (int i : {0, 0, 0, 1, 1, 2, 3, 3})
    call(i);
  // Call 1 plain, then captures of 0, 1, 2 and 3: four graphs.
  EXPECT_EQ(cudaStats(module.get()).graph_captures, 4u);
  EXPECT_EQ(state.instantiated, 4);
  // A fifth input: the least recently launched graph (input 0's) is
  // updated in place, and then input 0 takes input 1's.
  for (int i : {4, 4, 0, 0, 3})
    call(i);
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_captures, 6u);
  EXPECT_EQ(stats.graph_calls, 12u);
  EXPECT_EQ(state.instantiated, 4);
  EXPECT_EQ(state.execUpdates, 2);
}

TEST_F(FakeCudaGraphTest, ACallWhoseBuffersChangeEveryTimeStopsBeingCaptured) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr input = deviceTensor(module.get(), {1, 2, 3, 4});
  ASSERT_TRUE(input);
  // Every output kept: each call writes a new buffer.
  std::vector<TensorPtr> outputs;
  for (int i = 0; i < 7; ++i) {
    outputs.push_back(callOn(module.get(), "scale2_graph", input.get(), true));
    ASSERT_TRUE(outputs.back());
  }
  for (TensorPtr &y : outputs)
    EXPECT_EQ(valuesOnHost(y.get()), (std::vector<float>{2, 4, 6, 8}));
  // Calls 2 to 4 captured, none launched again; then plain calls.
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_captures, 3u);
  EXPECT_EQ(stats.graph_calls, 3u);
  EXPECT_EQ(state.captures, 3);
  EXPECT_EQ(state.launches, 7 * 2);
  EXPECT_EQ(state.execsDestroyed, state.instantiated);
}

TEST_F(FakeCudaGraphTest, ALoopInACallIsAConditionalNodeOfTheCallsGraph) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Inputs whose loops run 7, 5, 1 and 0 times: the trip count of the
  // call's graph is decided on the device at every launch.
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {128, 256, 384, 512}},
                               {{4, 5, 6, 7}, {128, 160, 192, 224}},
                               {{50, 1, 1, 1}, {100, 2, 2, 2}},
                               {{150, 1, 2, 3}, {150, 1, 2, 3}}};
  // The first call runs its loop as a graph of its own, the second is
  // captured with the loop's node in it, later ones launch that graph.
  expectLoopCapturedWithTheCall(state, module.get(), "double_until_graph",
                                rounds, 7);
  EXPECT_EQ(state.conditionalNodes,
            (std::vector<std::string>{"while", "while"}));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 3u);
  EXPECT_EQ(stats.graph_captures, 1u);
  EXPECT_EQ(stats.graph_loops, 2u);
  EXPECT_EQ(stats.device_to_host_copies, 0u);
}

TEST_F(FakeCudaGraphTest, ACondInACallIsAPairOfIfNodesOfTheCallsGraph) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // The branch taken changes from call to call, the captured graph's too.
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {2, 4, 6, 8}},
                               {{150, 1, 2, 3}, {150, 1, 2, 3}},
                               {{5, 6, 7, 8}, {10, 12, 14, 16}},
                               {{100, 2, 3, 4}, {100, 2, 3, 4}},
                               {{-1, 0, 1, 2}, {-2, 0, 2, 4}}};
  for (size_t round = 0; round < rounds.size(); ++round) {
    int launches = state.launches;
    expectRound(state, module.get(), "pick_graph", rounds, round);
    // The first call branches on the host (the predicate's kernel and one
    // branch); the second queues the predicate's kernel, the branches'
    // conditions and both branches into its graph; later calls launch it.
    EXPECT_EQ(state.launches - launches, round == 0   ? 2
                                         : round == 1 ? 4
                                                      : 0)
        << "call " << round + 1;
  }
  EXPECT_EQ(state.conditionalNodes, (std::vector<std::string>{"if", "if"}));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 4u);
  EXPECT_EQ(stats.graph_captures, 1u);
  // Only the first call read its predicate on the host.
  EXPECT_EQ(stats.device_to_host_copies, 1u);
}

TEST_F(FakeCudaGraphTest, ACondInALoopIsAPairOfIfNodesOfTheLoopsIteration) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Inputs that take the first branch 9 times and then the second 4 times,
  // the first once and the second 4 times, the second once, and neither:
  // every iteration decides its branch on the device.
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {160, 176, 192, 208}},
                               {{9.5, 0, 0, 0}, {168, 16, 16, 16}},
                               {{50, 1, 1, 1}, {100, 2, 2, 2}},
                               {{150, 1, 2, 3}, {150, 1, 2, 3}}};
  for (size_t round = 0; round < rounds.size(); ++round) {
    std::vector<std::string> nodes = state.conditionalNodes;
    expectRound(state, module.get(), "step_until", rounds, round);
    // Each call captures its loop's graph: the WHILE node, and in its
    // iteration the cond's two IF nodes.
    nodes.insert(nodes.end(), {"while", "if", "if"});
    EXPECT_EQ(state.conditionalNodes, nodes) << "call " << round + 1;
  }
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_loops, 4u);
  // No predicate, the loop's or the cond's, is read on the host.
  EXPECT_EQ(stats.device_to_host_copies, 0u);
  EXPECT_EQ(state.execsDestroyed, state.instantiated);
}

TEST_F(FakeCudaGraphTest, ACallWithACondInALoopIsCapturedWhole) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {160, 176, 192, 208}},
                               {{50, 1, 1, 1}, {100, 2, 2, 2}},
                               {{9.5, 0, 0, 0}, {168, 16, 16, 16}},
                               {{150, 1, 2, 3}, {150, 1, 2, 3}},
                               {{7, 1, 2, 3}, {160, 64, 80, 96}}};
  expectLoopCapturedWithTheCall(state, module.get(), "step_until_graph",
                                rounds);
  EXPECT_EQ(
      state.conditionalNodes,
      (std::vector<std::string>{"while", "if", "if", "while", "if", "if"}));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 4u);
  EXPECT_EQ(stats.graph_captures, 1u);
  EXPECT_EQ(stats.graph_loops, 2u);
  EXPECT_EQ(stats.device_to_host_copies, 0u);
}

TEST_F(FakeCudaGraphTest, ALoopInACondIsAWhileNodeInsideTheBranchsIfNode) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // The branch with the loop (7 or 1 iterations) or the empty one.
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {128, 256, 384, 512}},
                               {{150, 1, 2, 3}, {150, 1, 2, 3}},
                               {{4, 5, 6, 7}, {128, 160, 192, 224}},
                               {{50, 1, 1, 1}, {100, 2, 2, 2}},
                               {{100, 2, 3, 4}, {100, 2, 3, 4}}};
  for (size_t round = 0; round < rounds.size(); ++round) {
    int launches = state.launches;
    expectRound(state, module.get(), "double_if_small_graph", rounds, round);
    if (round >= 2)
      EXPECT_EQ(state.launches - launches, 0) << "call " << round + 1;
  }
  // The first call reads its branch's predicate on the host and runs the
  // loop as a graph of its own; the second, captured, puts the loop's
  // WHILE node into the first IF node's body.
  EXPECT_EQ(state.conditionalNodes,
            (std::vector<std::string>{"while", "if", "while", "if"}));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 4u);
  EXPECT_EQ(stats.graph_captures, 1u);
  EXPECT_EQ(stats.graph_loops, 2u);
  EXPECT_EQ(stats.device_to_host_copies, 1u);
}

TEST_F(FakeCudaGraphTest, ALoopInACondInALoopNestsWhileIfWhileNodes) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Rounds that take the inner loop (9 and 13 increments) in the first
  // outer iteration only, never (the first element is past 10), or skip
  // the outer loop: every decision is the device's.
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {160, 176, 192, 208}},
                               {{50, 1, 1, 1}, {100, 2, 2, 2}},
                               {{-3, 0, 0, 0}, {160, 208, 208, 208}},
                               {{150, 1, 2, 3}, {150, 1, 2, 3}},
                               {{9.5, 0, 0, 0}, {168, 16, 16, 16}}};
  expectLoopCapturedWithTheCall(state, module.get(), "loop_if_loop_graph",
                                rounds);
  // The first call runs the outer loop as a graph of its own, the second
  // is captured: each holds the outer WHILE node, the cond's IF nodes in
  // its iteration, and the inner WHILE node in the first IF node's body.
  EXPECT_EQ(state.conditionalNodes,
            (std::vector<std::string>{"while", "if", "while", "if", "while",
                                      "if", "while", "if"}));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 4u);
  EXPECT_EQ(stats.graph_captures, 1u);
  EXPECT_EQ(stats.device_to_host_copies, 0u);
}

TEST_F(FakeCudaGraphTest, ALoopInACountedLoopIsOneWhileNodePerTrip) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Rounds whose loop runs 9 times in the first trip and never after, never
  // (the first element is past 10), 13 times, and once: every trip's count
  // is the device's decision at every launch.
  std::vector<Round> rounds = {{{1, 2, 3, 4}, {80, 88, 96, 104}},
                               {{50, 1, 1, 1}, {400, 8, 8, 8}},
                               {{-3, 0, 0, 0}, {80, 104, 104, 104}},
                               {{9.5, 0, 0, 0}, {84, 8, 8, 8}}};
  // The first call runs each trip's loop as a graph of its own, the second
  // is captured with the three trips' WHILE nodes in it, later ones launch
  // that graph.
  expectLoopCapturedWithTheCall(state, module.get(), "for_while_graph", rounds,
                                /*launches=*/-1, /*firstGraphs=*/3);
  EXPECT_EQ(state.conditionalNodes, std::vector<std::string>(6, "while"));
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 3u);
  EXPECT_EQ(stats.graph_captures, 1u);
  EXPECT_EQ(stats.device_to_host_copies, 0u);
}

TEST_F(FakeCudaGraphTest, NestedLoopsAndCondsRunOnTheHostWithGraphsOff) {
  ScopedVariable off("KILN_CUDA_GRAPHS", "0");
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  std::vector<Round> steps = {{{1, 2, 3, 4}, {160, 176, 192, 208}},
                              {{9.5, 0, 0, 0}, {168, 16, 16, 16}}};
  std::vector<Round> doublings = {{{1, 2, 3, 4}, {128, 256, 384, 512}},
                                  {{150, 1, 2, 3}, {150, 1, 2, 3}}};
  for (size_t round = 0; round < 2; ++round) {
    for (const char *name : {"step_until", "step_until_graph"}) {
      SCOPED_TRACE(name);
      expectRound(state, module.get(), name, steps, round);
    }
    expectRound(state, module.get(), "double_if_small_graph", doublings, round);
    expectRound(state, module.get(), "loop_if_loop_graph", steps, round);
    expectRound(state, module.get(), "for_while_graph",
                std::vector<Round>{{{1, 2, 3, 4}, {80, 88, 96, 104}},
                                   {{9.5, 0, 0, 0}, {84, 8, 8, 8}}},
                round);
  }
  EXPECT_TRUE(state.conditionalNodes.empty());
  EXPECT_EQ(cudaStats(module.get()).graph_calls, 0u);
}

TEST(CudaGraphKernelsTest, TheConditionKernelsAssembleWithPtxas) {
  if (!*KILN_TEST_PTXAS)
    GTEST_SKIP() << "no ptxas here";
  std::string base = ::testing::TempDir() + "kiln_graph_conditions";
  {
    std::FILE *file = std::fopen((base + ".ptx").c_str(), "w");
    ASSERT_TRUE(file);
    std::fputs(graphConditionKernels(), file);
    std::fclose(file);
  }
  // Relocatable: cudaGraphSetConditional comes from libcudadevrt.a.
  for (const char *arch : {"sm_75", "sm_90"}) {
    std::string command = std::string(KILN_TEST_PTXAS) + " -c -arch=" + arch +
                          " " + base + ".ptx -o " + base + ".o";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
}

TEST_F(FakeCudaGraphTest, ACallWhoseCaptureFailsRunsAgainWithoutOne) {
  // Without loops as graphs (the condition's kernel cannot be linked), the
  // loop reads its predicate on the host: the second call's capture meets
  // that wait, so the call runs again without a capture, and later calls
  // are not captured.
  state.failLink = true;
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int round = 1; round <= 3; ++round) {
    TensorPtr y;
    kiln::test::Outcome call =
        callScale2(module.get(), y, "double_until_graph");
    ASSERT_TRUE(call.ok()) << call.message;
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{128, 256, 384, 512}));
    EXPECT_EQ(state.capturing, nullptr);
  }
  EXPECT_EQ(state.captures, 1);
  EXPECT_GT(state.syncsDuringCapture, 0);
  kiln_cuda_stats_t stats = cudaStats(module.get());
  EXPECT_EQ(stats.graph_calls, 0u);
  EXPECT_EQ(stats.graph_loops, 0u);
  // Eight predicates a call, read on the host, and the one the failed
  // capture queued before its wait.
  EXPECT_EQ(stats.device_to_host_copies, 3 * 8u + 1);
}

TEST_F(FakeCudaGraphTest, BuffersAGraphHoldsAreNotHandedOut) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE(callOn(module.get(), "scale2_graph", x.get()));
  // Device tensors made now take buffers from the pool: none of them is
  // the arena the graph writes.
  TensorPtr nines =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {9, 9, 9, 9});
  std::vector<TensorPtr> held;
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_t *raw = nullptr;
    ASSERT_TRUE(
        take(kiln_tensor_to_device(module.get(), nines.get(), &raw)).ok());
    held.emplace_back(raw);
  }
  TensorPtr y = callOn(module.get(), "scale2_graph", x.get());
  ASSERT_TRUE(y);
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(cudaStats(module.get()).graph_calls, 2u);
  for (TensorPtr &tensor : held)
    EXPECT_EQ(valuesOnHost(tensor.get()), (std::vector<float>{9, 9, 9, 9}));
}

TEST_F(FakeCudaGraphTest, MemoryGraphsHoldGoesBackBeforeACallRunsOutOfIt) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  // Input, output and arena: 256 bytes each; the graph holds the arena.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(callOn(module.get(), "scale2_graph", x.get()));
  EXPECT_EQ(cudaStats(module.get()).graph_calls, 2u);
  // Room for those three and the table's 16 bytes: twice_table's arena
  // fits only in the bytes the graph holds.
  state.deviceMemoryLimit = 3 * 256 + 16;
  TensorPtr y = callOn(module.get(), "twice_table", x.get());
  ASSERT_TRUE(y);
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{20, 40, 60, 80}));
  // scale2_graph's graph is gone; its calls run their kernels again.
  int launches = state.launches;
  TensorPtr z = callOn(module.get(), "scale2_graph", x.get());
  ASSERT_TRUE(z);
  EXPECT_EQ(hostValues(z.get()), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(state.launches - launches, 2);
  EXPECT_EQ(cudaStats(module.get()).graph_calls, 2u);
  EXPECT_EQ(state.execsDestroyed, state.instantiated);
  // Once nothing is pooled or held any more, a request the driver cannot
  // serve fails with its error.
  state.deviceMemoryLimit = state.deviceBytes;
  std::vector<TensorPtr> tensors;
  kiln::test::Outcome refused;
  for (int i = 0; i < 8 && refused.ok(); ++i) {
    kiln_tensor_t *raw = nullptr;
    refused = take(kiln_tensor_to_device(module.get(), x.get(), &raw));
    tensors.emplace_back(raw);
  }
  EXPECT_EQ(refused.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(refused.message.find("cuMemAlloc of 16 bytes failed"),
            std::string::npos)
      << refused.message;
  EXPECT_EQ(state.deviceBytes, state.deviceMemoryLimit);
}

TEST_F(FakeCudaGraphTest, AConstantsUploadGetsTheMemoryGraphsHoldToo) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr x =
      kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
  // Input, output and arena of 256 bytes each; the graph holds the arena.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(callOn(module.get(), "scale2_graph", x.get()));
  // Room for twice_table's input, output and arena, but its table's 16
  // bytes fit only in the bytes the graph holds.
  state.deviceMemoryLimit = 4 * 256;
  TensorPtr y = callOn(module.get(), "twice_table", x.get());
  ASSERT_TRUE(y);
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{20, 40, 60, 80}));
  EXPECT_EQ(cudaStats(module.get()).constant_uploads, 1u);
  EXPECT_EQ(state.execsDestroyed, state.instantiated);
}

TEST_F(FakeCudaTest, DeviceTensorsStayOnTheDeviceAcrossCalls) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  const kiln_function_t *scale2 = nullptr;
  ASSERT_TRUE(
      take(kiln_module_function_lookup(module.get(), "scale2", &scale2)).ok());
  TensorPtr x = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4},
                                              {1, 2, 3, 4});
  EXPECT_EQ(kiln_tensor_memory(x.get()), KILN_MEMORY_HOST);
  kiln_tensor_t *raw = nullptr;
  ASSERT_TRUE(take(kiln_tensor_to_device(module.get(), x.get(), &raw)).ok());
  TensorPtr onDevice(raw);
  EXPECT_EQ(kiln_tensor_memory(onDevice.get()), KILN_MEMORY_CUDA);
  EXPECT_TRUE(state.deviceOnly.count(
      reinterpret_cast<CUdeviceptr>(kiln_tensor_data(onDevice.get()))));
  EXPECT_EQ(state.htod, 1);

  // Three calls in a chain, each output the next call's input: nothing is
  // copied in or out, and every buffer stays device memory.
  TensorPtr current = std::move(onDevice);
  for (int i = 0; i < 3; ++i) {
    kiln_tensor_t *input = current.get();
    kiln_tensor_t *output = nullptr;
    kiln::test::Outcome call = take(
        kiln_function_call_on_device(scale2, &input, 1, &output, 1));
    ASSERT_TRUE(call.ok()) << call.message;
    ASSERT_TRUE(output);
    EXPECT_EQ(kiln_tensor_memory(output), KILN_MEMORY_CUDA);
    EXPECT_NE(kiln_tensor_data(output), kiln_tensor_data(input));
    current.reset(output);
  }
  EXPECT_EQ(state.htod, 1);
  EXPECT_EQ(state.dtoh, 0);
  EXPECT_EQ(state.managedAllocations, 0);
  EXPECT_EQ(valuesOnHost(current.get()), (std::vector<float>{8, 16, 24, 32}));
  EXPECT_EQ(state.dtoh, 1);

  // A device input with kiln_function_call: the output comes back to the
  // host, the input is not copied in again.
  TensorPtr y;
  kiln_tensor_t *input = current.get();
  kiln_tensor_t *output = nullptr;
  ASSERT_TRUE(
      take(kiln_function_call(scale2, &input, 1, &output, 1)).ok());
  y.reset(output);
  EXPECT_EQ(kiln_tensor_memory(y.get()), KILN_MEMORY_HOST);
  EXPECT_EQ(hostValues(y.get()), (std::vector<float>{16, 32, 48, 64}));
  EXPECT_EQ(state.htod, 1);

  // A device tensor copied again stays on the device, by a device copy.
  ASSERT_TRUE(
      take(kiln_tensor_to_device(module.get(), current.get(), &raw)).ok());
  TensorPtr copy(raw);
  EXPECT_NE(kiln_tensor_data(copy.get()), kiln_tensor_data(current.get()));
  EXPECT_EQ(valuesOnHost(copy.get()), (std::vector<float>{8, 16, 24, 32}));
  EXPECT_EQ(state.htod, 1);

  // A device tensor outlives its module and keeps its device open.
  module.reset();
  EXPECT_FALSE(state.live.empty());
  EXPECT_EQ(valuesOnHost(current.get()), (std::vector<float>{8, 16, 24, 32}));
  current.reset();
  copy.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaTest, ADeviceTensorBufferIsReusedOnlyAfterItsRelease) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr x = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4},
                                              {9, 9, 9, 9});
  kiln_tensor_t *raw = nullptr;
  ASSERT_TRUE(take(kiln_tensor_to_device(module.get(), x.get(), &raw)).ok());
  TensorPtr held(raw);
  // Calls of the same size take their buffers from the pool and write
  // them; none of them is the held one.
  for (int i = 0; i < 3; ++i) {
    TensorPtr y;
    ASSERT_TRUE(callScale2(module.get(), y).ok());
  }
  EXPECT_EQ(valuesOnHost(held.get()), (std::vector<float>{9, 9, 9, 9}));
  // Released, its buffer serves the next tensor without a new allocation.
  int allocations = state.deviceAllocations;
  held.reset();
  ASSERT_TRUE(take(kiln_tensor_to_device(module.get(), x.get(), &raw)).ok());
  TensorPtr again(raw);
  EXPECT_EQ(state.deviceAllocations, allocations);
}

TEST_F(FakeCudaTest, DeviceTensorsAndCpuFunctionsDoNotMix) {
  ModulePtr cuda = loadCudaModule();
  ModulePtr cpu = kiln::test::loadModule(kiln::test::addModuleContents());
  ASSERT_TRUE(cuda && cpu);
  TensorPtr a = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4},
                                              {1, 2, 3, 4});
  kiln_tensor_t *raw = nullptr;
  kiln::test::Outcome toCpu =
      take(kiln_tensor_to_device(cpu.get(), a.get(), &raw));
  EXPECT_EQ(toCpu.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(toCpu.message.find("compiled for cpu"), std::string::npos)
      << toCpu.message;
  EXPECT_EQ(raw, nullptr);

  ASSERT_TRUE(take(kiln_tensor_to_device(cuda.get(), a.get(), &raw)).ok());
  TensorPtr onDevice(raw);
  const kiln_function_t *add = nullptr;
  ASSERT_TRUE(take(kiln_module_function_lookup(cpu.get(), "add", &add)).ok());
  kiln_tensor_t *inputs[] = {a.get(), onDevice.get()};
  kiln_tensor_t *output = nullptr;
  kiln::test::Outcome call = take(kiln_function_call(add, inputs, 2, &output, 1));
  EXPECT_EQ(call.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(call.message.find("input 1 ('b') is in CUDA device memory"),
            std::string::npos)
      << call.message;
  EXPECT_EQ(output, nullptr);

  kiln_tensor_t *hostInputs[] = {a.get(), a.get()};
  kiln::test::Outcome onDeviceCall =
      take(kiln_function_call_on_device(add, hostInputs, 2, &output, 1));
  EXPECT_EQ(onDeviceCall.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(onDeviceCall.message.find("was compiled for the CPU"),
            std::string::npos)
      << onDeviceCall.message;

  // A device tensor of the wrong shape is refused like a host one.
  TensorPtr wide = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {2, 2},
                                                 {1, 2, 3, 4});
  ASSERT_TRUE(take(kiln_tensor_to_device(cuda.get(), wide.get(), &raw)).ok());
  TensorPtr wideOnDevice(raw);
  const kiln_function_t *scale2 = nullptr;
  ASSERT_TRUE(
      take(kiln_module_function_lookup(cuda.get(), "scale2", &scale2)).ok());
  kiln_tensor_t *input = wideOnDevice.get();
  kiln::test::Outcome shape =
      take(kiln_function_call_on_device(scale2, &input, 1, &output, 1));
  EXPECT_EQ(shape.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(shape.message.find("has shape [2,2]"), std::string::npos)
      << shape.message;

  // NULL arguments are refused, and a host tensor copied to the host is a
  // copy.
  EXPECT_EQ(take(kiln_tensor_to_device(nullptr, a.get(), &raw)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_tensor_to_host(nullptr, &raw)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  ASSERT_TRUE(take(kiln_tensor_to_host(a.get(), &raw)).ok());
  TensorPtr hostCopy(raw);
  EXPECT_NE(kiln_tensor_data(hostCopy.get()), kiln_tensor_data(a.get()));
  EXPECT_EQ(hostValues(hostCopy.get()), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(FakeCudaTest, ForeignDeviceMemoryIsWrappedWithoutACopy) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Device memory kiln does not own: here a buffer of the fake device.
  CUdeviceptr foreign = 0;
  FakeDriver driver(state);
  ASSERT_EQ(driver.memAlloc(&foreign, 16), CUDA_SUCCESS);
  const float values[] = {1, 2, 3, 4};
  std::memcpy(reinterpret_cast<void *>(foreign), values, sizeof(values));
  int64_t shape[] = {4};
  kiln_tensor_t *raw = nullptr;
  ASSERT_TRUE(take(kiln_tensor_wrap_device(module.get(), 0, KILN_DTYPE_F32, 1,
                                           shape,
                                           reinterpret_cast<void *>(foreign),
                                           &raw))
                  .ok());
  TensorPtr wrapped(raw);
  EXPECT_EQ(kiln_tensor_memory(wrapped.get()), KILN_MEMORY_CUDA);
  EXPECT_EQ(kiln_tensor_device_index(wrapped.get()), 0);
  EXPECT_EQ(kiln_tensor_data(wrapped.get()), reinterpret_cast<void *>(foreign));
  int htod = state.htod;
  const kiln_function_t *scale2 = nullptr;
  ASSERT_TRUE(
      take(kiln_module_function_lookup(module.get(), "scale2", &scale2)).ok());
  kiln_tensor_t *input = wrapped.get();
  kiln_tensor_t *output = nullptr;
  ASSERT_TRUE(
      take(kiln_function_call_on_device(scale2, &input, 1, &output, 1)).ok());
  TensorPtr y(output);
  EXPECT_EQ(state.htod, htod);
  EXPECT_EQ(valuesOnHost(y.get()), (std::vector<float>{2, 4, 6, 8}));
  // Releasing the wrapper leaves the memory to its owner.
  wrapped.reset();
  EXPECT_TRUE(state.live.count(foreign));
  EXPECT_EQ(driver.memFree(foreign), CUDA_SUCCESS);

  // Memory of another device, and host tensors.
  kiln::test::Outcome other = take(kiln_tensor_wrap_device(
      module.get(), 1, KILN_DTYPE_F32, 1, shape, const_cast<float *>(values),
      &raw));
  EXPECT_EQ(other.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(other.message.find("the memory is on CUDA device 1 but the "
                               "module runs on device 0"),
            std::string::npos)
      << other.message;
  EXPECT_EQ(raw, nullptr);
  EXPECT_EQ(take(kiln_tensor_wrap_device(module.get(), 0, KILN_DTYPE_F32, 1,
                                         shape, nullptr, &raw))
                .code,
            KILN_STATUS_INVALID_ARGUMENT);
  TensorPtr host = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4},
                                                 {1, 2, 3, 4});
  EXPECT_EQ(kiln_tensor_device_index(host.get()), -1);
  ModulePtr cpu = kiln::test::loadModule(kiln::test::addModuleContents());
  kiln::test::Outcome onCpu = take(kiln_tensor_wrap_device(
      cpu.get(), 0, KILN_DTYPE_F32, 1, shape, const_cast<float *>(values),
      &raw));
  EXPECT_EQ(onCpu.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(onCpu.message.find("compiled for cpu"), std::string::npos)
      << onCpu.message;
}

TEST_F(FakeCudaTest, ADeviceTensorWithoutADeviceIsUnavailable) {
  state.devices = 0;
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr a = kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4},
                                              {1, 2, 3, 4});
  kiln_tensor_t *raw = nullptr;
  kiln::test::Outcome made =
      take(kiln_tensor_to_device(module.get(), a.get(), &raw));
  EXPECT_EQ(made.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(made.message.find("kiln_tensor_to_device: "), std::string::npos)
      << made.message;
  EXPECT_EQ(raw, nullptr);
}

TEST_F(FakeCudaTest, StatsOfACpuModuleAreRefused) {
  std::vector<uint8_t> cpu =
      kiln::format::writeModule(kiln::test::addModuleContents());
  kiln_module_t *raw = nullptr;
  ASSERT_TRUE(
      take(kiln_module_load_memory(cpu.data(), cpu.size(), &raw)).ok());
  ModulePtr module(raw);
  kiln_cuda_stats_t stats;
  kiln::test::Outcome outcome =
      take(kiln_module_cuda_stats(module.get(), &stats, sizeof(stats)));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outcome.message.find("not for cuda"), std::string::npos)
      << outcome.message;
  EXPECT_EQ(take(kiln_module_cuda_stats(nullptr, &stats, sizeof(stats))).code,
            KILN_STATUS_INVALID_ARGUMENT);
}

TEST_F(FakeCudaTest, StatsFillOnlyTheFieldsTheCallerKnows) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  ASSERT_TRUE(callScale2(module.get(), y).ok());
  // A caller compiled when the struct had three fields, with its next
  // variable right after them.
  struct {
    uint64_t calls, kernelLaunches, streamSyncs;
    uint64_t next;
  } older = {0, 0, 0, 0xfeed};
  ASSERT_TRUE(
      take(kiln_module_cuda_stats(module.get(),
                                  reinterpret_cast<kiln_cuda_stats_t *>(&older),
                                  3 * sizeof(uint64_t)))
          .ok());
  EXPECT_EQ(older.calls, 1u);
  EXPECT_EQ(older.kernelLaunches, uint64_t(state.launches));
  EXPECT_EQ(older.next, 0xfeedu) << "written past the caller's struct";
  // A caller compiled against a struct with two more fields: zeros there.
  struct {
    kiln_cuda_stats_t known;
    uint64_t newer[2];
  } newer;
  std::memset(&newer, 0xff, sizeof(newer));
  ASSERT_TRUE(
      take(kiln_module_cuda_stats(module.get(), &newer.known, sizeof(newer)))
          .ok());
  EXPECT_EQ(newer.known.calls, 1u);
  EXPECT_EQ(newer.newer[0], 0u);
  EXPECT_EQ(newer.newer[1], 0u);
  kiln_cuda_stats_t stats;
  for (size_t size : {size_t(0), size_t(12)}) {
    kiln::test::Outcome odd =
        take(kiln_module_cuda_stats(module.get(), &stats, size));
    EXPECT_EQ(odd.code, KILN_STATUS_INVALID_ARGUMENT) << size;
    EXPECT_NE(odd.message.find("pass sizeof(kiln_cuda_stats_t)"),
              std::string::npos)
        << odd.message;
  }
}

TEST_F(FakeCudaTest, HostCodeTakingItsPtxFromAnEmptyDeviceCodeIsRejected) {
  kiln_status_code_t code;
  std::string message;
  ModulePtr module = loadCudaModule(&code, &message, /*withDeviceCode=*/false);
  EXPECT_FALSE(module);
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODULE);
  EXPECT_NE(message.find("device_code, which is empty"), std::string::npos)
      << message;
}

TEST_F(FakeCudaTest, RejectedPtxSurfacesTheJitErrorLog) {
  state.rejectPtxWithLog = "ptxas application ptx input, line 3; fatal";
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  kiln::test::Outcome call = callScale2(module.get(), y);
  EXPECT_EQ(call.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(call.message.find("cuModuleLoadDataEx"), std::string::npos)
      << call.message;
  EXPECT_NE(call.message.find("line 3; fatal"), std::string::npos)
      << call.message;
  EXPECT_NE(call.message.find("function 'scale2'"), std::string::npos);
  EXPECT_FALSE(y);
  EXPECT_EQ(state.launches, 0);
  module.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaTest, KernelsAreAllowedTheSharedMemoryTheirLaunchesAskFor) {
  ModulePtr module = loadCudaModule();
  for (int round = 1; round <= 2; ++round) {
    TensorPtr y;
    kiln::test::Outcome call = callScale2(module.get(), y, "scale2_shared");
    ASSERT_TRUE(call.ok()) << call.message;
    const float *values = static_cast<const float *>(kiln_tensor_data(y.get()));
    EXPECT_EQ(std::vector<float>(values, values + 4),
              (std::vector<float>{2, 4, 6, 8}));
  }
  // scale2 asks for 64 KiB and 256 bytes, copy for 48 KiB (no opt-in);
  // scale2's attribute is set once, before its first launch.
  EXPECT_EQ(state.sharedBytes,
            (std::vector<unsigned>{65792, 49152, 65792, 49152}));
  EXPECT_EQ(state.sharedAttributeCalls, std::vector<int>{65792});
}

TEST_F(FakeCudaTest, AKernelNeedingMoreSharedMemoryThanTheDeviceHasFails) {
  state.sharedOptInLimit = 65536;
  ModulePtr module = loadCudaModule();
  TensorPtr y;
  kiln::test::Outcome call = callScale2(module.get(), y, "scale2_shared");
  EXPECT_FALSE(y);
  expectDeviceError(call, "a kernel needs 65792 bytes of shared memory a "
                          "block, and this device gives a block at most "
                          "65536");
  EXPECT_TRUE(state.sharedAttributeCalls.empty());
  EXPECT_EQ(state.launches, 0);
}

TEST_F(FakeCudaTest, LaunchFailureIsAnErrorAndLaterWorkIsSkipped) {
  state.failLaunch = true;
  ModulePtr module = loadCudaModule();
  TensorPtr y;
  kiln::test::Outcome call = callScale2(module.get(), y);
  EXPECT_EQ(call.code, KILN_STATUS_DEVICE_ERROR);
  EXPECT_NE(call.message.find("cuLaunchKernel failed: fake CUDA error 719"),
            std::string::npos)
      << call.message;
  EXPECT_EQ(state.dtoh, 0);

  // The device recovers for the next call.
  state.failLaunch = false;
  kiln::test::Outcome again = callScale2(module.get(), y);
  EXPECT_TRUE(again.ok()) << again.message;
  module.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaTest, NoDeviceIsUnavailable) {
  state.devices = 0;
  expectCudaCheck(KILN_STATUS_DEVICE_UNAVAILABLE, "no CUDA device");
}

TEST_F(FakeCudaTest, ComputeCapabilityIsTheChosenDevices) {
  state.devices = 2;
  state.major = 8;
  state.minor = 6;
  ScopedVariable device("KILN_CUDA_DEVICE", "1");
  int major = 0, minor = 0;
  kiln::test::Outcome asked =
      take(kiln_cuda_compute_capability(&major, &minor));
  ASSERT_TRUE(asked.ok()) << asked.message;
  EXPECT_EQ(major, 8);
  EXPECT_EQ(minor, 6);
  EXPECT_EQ(state.queriedOrdinals, std::vector<int>{1});
  // Asking opens nothing: no context, no stream, no module.
  EXPECT_EQ(state.moduleLoads, 0);
  EXPECT_TRUE(state.live.empty());
}

TEST_F(FakeCudaTest, ComputeCapabilityWithoutADeviceIsUnavailable) {
  int major = -1, minor = -1;
  state.devices = 0;
  kiln::test::Outcome none = take(kiln_cuda_compute_capability(&major, &minor));
  EXPECT_EQ(none.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(none.message.find("no CUDA device"), std::string::npos)
      << none.message;
  state.devices = 2;
  ScopedVariable device("KILN_CUDA_DEVICE", "2");
  kiln::test::Outcome absent =
      take(kiln_cuda_compute_capability(&major, &minor));
  EXPECT_EQ(absent.code, KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(absent.message.find("KILN_CUDA_DEVICE is '2'"), std::string::npos)
      << absent.message;
  EXPECT_EQ(take(kiln_cuda_compute_capability(nullptr, &minor)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(major, -1);
}

// Only "no driver" and "no device" are unavailable; a device that is there
// but cannot be opened is an error, so that test harnesses skip only the
// former.

TEST_F(FakeCudaTest, NoDeviceAtInitIsUnavailable) {
  state.initResult = CUDA_ERROR_NO_DEVICE;
  expectCudaCheck(KILN_STATUS_DEVICE_UNAVAILABLE, "no CUDA device");
}

TEST_F(FakeCudaTest, OtherInitFailureIsADeviceError) {
  state.initResult = 999; // CUDA_ERROR_UNKNOWN
  expectCudaCheck(KILN_STATUS_DEVICE_ERROR, "cuInit failed");
}

TEST_F(FakeCudaTest, ContextFailureIsADeviceError) {
  state.retainResult = 2; // CUDA_ERROR_OUT_OF_MEMORY
  expectCudaCheck(KILN_STATUS_DEVICE_ERROR, "cuDevicePrimaryCtxRetain failed");
}

TEST(CudaDriverLoaderTest, MissingDriverIsUnavailableABrokenOneAnError) {
  std::string loaderError;
  setCudaDriverLoaderForTesting([&](std::string &error) {
    error = loaderError;
    return std::unique_ptr<CudaDriver>();
  });
  loaderError = "no CUDA driver found (libcuda.so.1 cannot be loaded)";
  kiln::test::Outcome missing = take(kiln_device_check(KILN_DEVICE_CUDA));
  loaderError = "libcuda.so.1 lacks 'cuInit'";
  kiln::test::Outcome broken = take(kiln_device_check(KILN_DEVICE_CUDA));
  setCudaDriverLoaderForTesting(nullptr);
  EXPECT_EQ(missing.code, KILN_STATUS_DEVICE_UNAVAILABLE) << missing.message;
  EXPECT_EQ(broken.code, KILN_STATUS_DEVICE_ERROR) << broken.message;
  EXPECT_NE(broken.message.find("lacks 'cuInit'"), std::string::npos);
}

namespace {
int ordinalFor(int count) {
  int ordinal = -1;
  kiln_status_t status = chooseDeviceOrdinal(count, ordinal);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_free(status);
  return ordinal;
}
} // namespace

TEST(CudaDeviceOrdinalTest, RanksOfAMachineTakeOneDeviceEach) {
  ScopedVariable device("KILN_CUDA_DEVICE", nullptr);
  ScopedVariable mpich("MPI_LOCALRANKID", nullptr);
  ScopedVariable slurm("SLURM_LOCALID", nullptr);
  {
    ScopedVariable local("OMPI_COMM_WORLD_LOCAL_RANK", nullptr);
    EXPECT_EQ(ordinalFor(4), 0);
  }
  ScopedVariable local("OMPI_COMM_WORLD_LOCAL_RANK", "3");
  EXPECT_EQ(ordinalFor(4), 3);
  EXPECT_EQ(ordinalFor(2), 1);
  {
    ScopedVariable explicitDevice("KILN_CUDA_DEVICE", "0");
    EXPECT_EQ(ordinalFor(4), 0);
  }
  {
    ScopedVariable notANumber("OMPI_COMM_WORLD_LOCAL_RANK", "x");
    ScopedVariable other("SLURM_LOCALID", "5");
    EXPECT_EQ(ordinalFor(4), 1);
  }
}

TEST(CudaDeviceOrdinalTest, ADeviceTheMachineLacksIsUnavailable) {
  ScopedVariable device("KILN_CUDA_DEVICE", "2");
  int ordinal = -1;
  kiln_status_t status = chooseDeviceOrdinal(2, ordinal);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_STREQ(kiln_status_message(status),
               "CUDA: KILN_CUDA_DEVICE is '2', but the devices are 0 to 1");
  kiln_status_free(status);
}

/// Tuned call sites (CudaTuning.cpp): the fixture's scale2_tuned and its
/// variants scale2_a, scale2_b and scale2_c, which take `ms` milliseconds
/// each on the fake's clock.
class FakeCudaTuningTest : public FakeCudaGraphTest {
protected:
  void SetUp() override {
    FakeCudaGraphTest::SetUp();
    state.events = true;
    state.kernelMs = {{"scale2_a", 3}, {"scale2_b", 1}, {"scale2_c", 2}};
  }
  ScopedVariable tune{"KILN_CUDA_TUNE", nullptr};
  ScopedVariable log{"KILN_CUDA_TUNE_LOG", nullptr};

  /// Calls `name` on {1, 2, 3, 4} and checks its output (y = 2 x unless
  /// `expected` says otherwise); the kernels it launched.
  std::vector<std::string>
  launchedBy(kiln_module_t *module, const char *name,
             const std::vector<float> &expected = {2, 4, 6, 8}) {
    size_t before = state.launched.size();
    TensorPtr x =
        kiln::test::makeTensor<float>(KILN_DTYPE_F32, {4}, {1, 2, 3, 4});
    TensorPtr y = callOn(module, name, x.get());
    EXPECT_TRUE(y);
    if (y)
      EXPECT_EQ(hostValues(y.get()), expected);
    return std::vector<std::string>(state.launched.begin() + before,
                                    state.launched.end());
  }
};

/// `kernel` `times` times.
std::vector<std::string> repeated(const std::string &kernel, size_t times) {
  return std::vector<std::string>(times, kernel);
}

TEST_F(FakeCudaTuningTest, TheFirstCallTimesEachVariantAndKeepsTheFastest) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // Each variant once to warm up and three times timed, then the fastest
  // once more, whose results the call returns.
  std::vector<std::string> first;
  for (auto [kernel, runs] : {std::pair<const char *, size_t>{"scale2_a", 4},
                              {"scale2_b", 4},
                              {"scale2_c", 4},
                              {"scale2_b", 1}}) {
    std::vector<std::string> more = repeated(kernel, runs);
    first.insert(first.end(), more.begin(), more.end());
  }
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned"), first);
  // Two events a variant, recorded around its timed runs, then destroyed.
  EXPECT_EQ(state.eventsCreated, 6);
  EXPECT_EQ(state.eventRecords, 6);
  EXPECT_EQ(state.eventsDestroyed, 6);
  for (int call = 2; call <= 3; ++call)
    EXPECT_EQ(launchedBy(module.get(), "scale2_tuned"),
              std::vector<std::string>{"scale2_b"})
        << "call " << call;
  EXPECT_EQ(state.eventsCreated, 6);
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
}

TEST_F(FakeCudaTuningTest, TheWarmUpRunIsNotTimed) {
  // The fastest variant's first run is the slowest of all (its kernels
  // loaded, its shared memory allowed): it is still the fastest.
  state.firstRunMs = {{"scale2_b", 100}};
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  launchedBy(module.get(), "scale2_tuned");
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned"),
            std::vector<std::string>{"scale2_b"});
}

TEST_F(FakeCudaTuningTest, TheLogNamesEachVariantsTime) {
  ScopedVariable logged("KILN_CUDA_TUNE_LOG", "1");
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  ::testing::internal::CaptureStderr();
  launchedBy(module.get(), "scale2_tuned");
  std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, "kiln: tuned call site 0: b (a 3.0000 ms, b 1.0000 ms, "
                     "c 2.0000 ms)\n");
}

TEST_F(FakeCudaTuningTest, TuningOffOrNoEventsRunsTheFirstVariant) {
  for (int without = 0; without < 2; ++without) {
    ScopedVariable off("KILN_CUDA_TUNE", without == 0 ? "0" : nullptr);
    state.events = without == 0;
    ModulePtr module = loadCudaModule();
    ASSERT_TRUE(module);
    for (int call = 1; call <= 2; ++call)
      EXPECT_EQ(launchedBy(module.get(), "scale2_tuned"),
                std::vector<std::string>{"scale2_a"})
          << (without == 0 ? "KILN_CUDA_TUNE=0" : "no events") << ", call "
          << call;
    EXPECT_EQ(cudaStats(module.get()).tuned_sites, 0u);
  }
  EXPECT_EQ(state.eventRecords, 0);
  EXPECT_EQ(state.eventsCreated, state.eventsDestroyed);
}

TEST_F(FakeCudaTuningTest, AGraphOfTheCallHoldsTheChosenVariant) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // The first call runs without a capture and decides; the second is
  // captured with the chosen variant alone; the third launches that graph.
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_graph").size(), 13u);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_graph"),
            std::vector<std::string>{"scale2_b"});
  EXPECT_EQ(state.captures, 1);
  EXPECT_TRUE(launchedBy(module.get(), "scale2_tuned_graph").empty());
  EXPECT_EQ(state.graphLaunches, 2);
  EXPECT_EQ(state.syncsDuringCapture, 0);
}

TEST_F(FakeCudaTuningTest, ASiteFirstMetInACaptureRunsVariantZeroUndecided) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  const std::vector<float> doubled = {128, 256, 384, 512};
  // The loop's body is captured into a graph at every call: nothing runs
  // while it is captured, so nothing is timed, and the site stays
  // undecided with its first variant.
  for (int call = 1; call <= 2; ++call) {
    std::vector<std::string> launched =
        launchedBy(module.get(), "double_until_tuned", doubled);
    EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_a"), 1)
        << "call " << call;
    EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_b"), 0);
    EXPECT_EQ(state.syncsDuringCapture, 0);
  }
  EXPECT_EQ(state.eventRecords, 0);
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 0u);
  // Run by the host, the loop tunes its body at the first trip.
  ScopedVariable off("KILN_CUDA_GRAPHS", "0");
  ModulePtr host = loadCudaModule();
  ASSERT_TRUE(host);
  std::vector<std::string> launched =
      launchedBy(host.get(), "double_until_tuned", doubled);
  // {1, 2, 3, 4} doubles seven times: 13 runs at the first trip, the
  // chosen one at the six others.
  EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_b"), 5 + 6);
  EXPECT_EQ(cudaStats(host.get()).tuned_sites, 1u);
}

TEST_F(FakeCudaTuningTest, AFailedTimingCallIsTimedAgainAtTheNextCall) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // The sixth launch (the second variant's first timed run) fails: the
  // call fails, the rest of its work is skipped, and nothing is decided.
  state.failLaunchNumber = state.launchAttempts + 6;
  TensorPtr y;
  kiln::test::Outcome failed = callScale2(module.get(), y, "scale2_tuned");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 0u);
  EXPECT_EQ(state.eventsCreated, state.eventsDestroyed);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned").size(), 13u);
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned"),
            std::vector<std::string>{"scale2_b"});
}

TEST_F(FakeCudaTuningTest, ALibraryCallCanBeTheFastestVariant) {
  // The library variant (a convolution by the plug-in) takes no time on
  // the fake's clock, the kernel 3 ms.
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_library"),
            repeated("scale2_a", 4));
  EXPECT_EQ(dnn.convs, 5);
  EXPECT_TRUE(launchedBy(module.get(), "scale2_tuned_library").empty());
  EXPECT_EQ(dnn.convs, 6);
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
}

TEST_F(FakeCudaTuningTest, AVariantWhoseLibraryRefusesItIsDropped) {
  // As cuDNN may take no engine for a problem: the plug-in refuses each
  // convolution. The call goes on with the kernel, which the site keeps.
  dnn.refuseConvs = "no engine for the problem";
  ScopedVariable logged("KILN_CUDA_TUNE_LOG", "1");
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_library"),
            repeated("scale2_a", 5));
  std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, "kiln: tuned call site 1: kernel (kernel 3.0000 ms, "
                     "library refused: CUDA convolutions: no engine for the "
                     "problem)\n");
  EXPECT_EQ(dnn.convs, 0);
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
  EXPECT_EQ(state.eventsCreated, state.eventsDestroyed);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_library"),
            std::vector<std::string>{"scale2_a"});
  // A refusal outside a tuned site still fails the call.
  TensorPtr y;
  expectDeviceError(callConvolve(module.get(), y),
                    "CUDA convolutions: no engine for the problem");
}

TEST_F(FakeCudaTuningTest, ALoopHoldingASiteRunsAsAGraphOnceItIsDecided) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  const std::vector<float> doubled = {128, 256, 384, 512};
  // The first call runs the loop on the host, which tunes the site at its
  // first trip: 13 runs there, the chosen one at the six other trips.
  std::vector<std::string> launched =
      launchedBy(module.get(), "double_until_tuned_loop", doubled);
  EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_b"), 5 + 6);
  EXPECT_EQ(state.captures, 0);
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
  // Then the loop is a graph, whose capture holds the chosen variant.
  for (int call = 2; call <= 3; ++call) {
    launched = launchedBy(module.get(), "double_until_tuned_loop", doubled);
    EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_b"), 1)
        << "call " << call;
    EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_a"), 0);
    EXPECT_EQ(state.syncsDuringCapture, 0);
  }
  int captures = state.captures;
  EXPECT_GT(captures, 0);
  // With tuning off, the loop is a graph from its first run, on variant 0.
  ScopedVariable off("KILN_CUDA_TUNE", "0");
  ModulePtr untuned = loadCudaModule();
  ASSERT_TRUE(untuned);
  launched = launchedBy(untuned.get(), "double_until_tuned_loop", doubled);
  EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_a"), 1);
  EXPECT_EQ(std::count(launched.begin(), launched.end(), "scale2_b"), 0);
  EXPECT_GT(state.captures, captures);
}

TEST_F(FakeCudaGraphTest, ALoopHoldingAConvolutionRunsAsAGraphOnceItHasRun) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // As kiln-cuda-graph-loops makes it, the loop asks whether its
  // convolution has run: the first call runs it on the host (seven trips),
  // which makes the plan.
  TensorPtr y;
  int captures = state.captures;
  for (int call = 1; call <= 3; ++call) {
    int convs = dnn.convs;
    kiln::test::Outcome done =
        callScale2(module.get(), y, "double_until_conv_loop");
    ASSERT_TRUE(done.ok()) << done.message;
    EXPECT_EQ(hostValues(y.get()), (std::vector<float>{128, 256, 384, 512}))
        << "call " << call;
    if (call == 1) {
      EXPECT_EQ(dnn.convs - convs, 7);
      EXPECT_EQ(state.captures, captures);
    } else {
      // Then the loop is a graph: its body, convolution included, is
      // captured once and replayed on the device.
      EXPECT_EQ(dnn.convs - convs, 1) << "call " << call;
      EXPECT_GT(state.captures, captures) << "call " << call;
    }
    captures = state.captures;
  }
  EXPECT_EQ(dnn.plansDuringCapture, 0);
  EXPECT_EQ(dnn.plans.size(), 1u);
  // Once planned, the loop that did not ask is a graph too.
  kiln::test::Outcome unasked =
      callScale2(module.get(), y, "double_until_conv");
  ASSERT_TRUE(unasked.ok()) << unasked.message;
  EXPECT_GT(state.captures, captures);
  // A list of calls cut short fails the call, naming where.
  expectDeviceError(
      callScale2(module.get(), y, "double_until_conv_malformed"),
      "a CUDA graph loop's library calls are malformed at value 0 of 21 "
      "(code 1)");
}

TEST_F(FakeCudaGraphTest, ALoopCapturedBeforeItsConvolutionRanPlansItOutside) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // The loop does not ask whether its convolution has run, so its first
  // run is captured: the plug-in refuses to plan inside the capture, the
  // runtime ends the capture, makes the plan on scratch buffers and
  // captures the convolution again.
  // The first call: the call on scratch buffers, then the captured one.
  expectConvLoopGraphs(module.get(), "double_until_conv");
  EXPECT_EQ(dnn.plansDuringCapture, 1);
  EXPECT_EQ(dnn.plans.size(), 1u);
  // The scratch buffers were as large as the ABI says, waited for and
  // freed (x, w and y: three).
  EXPECT_EQ(dnn.outOfBounds, 0);
  EXPECT_EQ(state.deviceFrees, 3);
  EXPECT_EQ(state.syncsDuringCapture, 0);
  EXPECT_EQ(state.capturing, nullptr);
  module.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST_F(FakeCudaGraphTest,
       ALoopMeetingABufferAlignedAnewPlansItOutsideTheCapture) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  TensorPtr y;
  kiln::test::Outcome done =
      callScale2(module.get(), y, "double_until_conv_loop");
  ASSERT_TRUE(done.ok()) << done.message;
  EXPECT_EQ(dnn.plans.size(), 1u);
  // The same convolution with its filter 4 bytes past a 16-byte boundary:
  // the loop's query finds the descriptor run, so the loop is captured,
  // where the plug-in has no plan for these alignments. The plan is made
  // on scratch buffers aligned as the filter is, and the loop runs as a
  // graph.
  expectConvLoopGraphs(module.get(), "double_until_conv_shifted");
  EXPECT_EQ(dnn.plansDuringCapture, 1);
  EXPECT_EQ(dnn.plans.size(), 2u);
  EXPECT_EQ(dnn.outOfBounds, 0);
  EXPECT_EQ(state.capturing, nullptr);
}

TEST_F(FakeCudaGraphTest,
       CapturingUnplannedLoopsMakesThemGraphsFromTheirFirstRun) {
  ScopedVariable unplanned{"KILN_CUDA_CAPTURE_UNPLANNED", "1"};
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  // The loop asks whether its convolution has run: not yet, but the
  // runtime captures it anyway and makes the plan outside the capture.
  expectConvLoopGraphs(module.get(), "double_until_conv_loop");
  EXPECT_EQ(dnn.plansDuringCapture, 1);
  // A malformed list still fails the call.
  TensorPtr y;
  expectDeviceError(
      callScale2(module.get(), y, "double_until_conv_malformed"),
      "a CUDA graph loop's library calls are malformed at value 0 of 21 "
      "(code 1)");
}

TEST_F(FakeCudaGraphTest, ACallCaptureMeetingANewAttentionPlanKeepsItsGraph) {
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (const char *name : {"attend_graph", "attend_grad_graph"}) {
    // The first call runs without a capture and makes the plan; the plug-in
    // then loses it (as where the second call's buffers are aligned
    // otherwise), so that the capture of the second call meets none.
    std::vector<TensorPtr> outputs;
    kiln::test::Outcome call = callAttention(module.get(), name, outputs);
    ASSERT_TRUE(call.ok()) << call.message;
    dnn.plans.clear();
    int refusals = dnn.plansDuringCapture;
    uint64_t captures = cudaStats(module.get()).graph_captures;
    for (int round = 2; round <= 3; ++round) {
      call = callAttention(module.get(), name, outputs);
      ASSERT_TRUE(call.ok()) << name << ": " << call.message;
      bool gradient = std::string(name) == "attend_grad_graph";
      EXPECT_EQ(halvesOf(outputs[0]), halvesFrom(gradient ? 500 : 200))
          << name << ", call " << round;
    }
    // The plan was made outside the capture, and the call's graph, kept,
    // launched again at the third call.
    EXPECT_EQ(dnn.plansDuringCapture - refusals, 1) << name;
    EXPECT_EQ(cudaStats(module.get()).graph_captures - captures, 1u) << name;
    EXPECT_EQ(dnn.plans.size(), 1u) << name;
  }
  EXPECT_EQ(cudaStats(module.get()).graph_calls, 4u);
  EXPECT_EQ(dnn.outOfBounds, 0);
  EXPECT_EQ(state.capturing, nullptr);
  module.reset();
  EXPECT_TRUE(state.live.empty()) << "device buffers leaked";
}

TEST(LibraryBuffersTest, ConvolutionBuffersAreSizedAsTheAbiLaysThemOut) {
  using kiln::runtime::cuda::convBufferBytes;
  // 2-d f32, 2 groups: N 3, C 4, O 6, D 5x7, K 3x2, E 3x6 (the strides,
  // padding and dilation do not size a buffer).
  int64_t conv[] = {
      2, 2, KILN_DTYPE_F32, 0, 3, 4, 6, 5, 7, 3, 2, 3, 6, 1, 1, 0, 0, 0, 0,
      1, 1};
  // x [3, 4, 5, 7], w [6, 2, 3, 2], y [3, 6, 3, 6].
  EXPECT_EQ(convBufferBytes(conv), (std::array<size_t, 3>{1680, 288, 1296}));
  // The input gradient: x the cotangent [3, 4, 5, 7], w [4, 3, 3, 2], y
  // [3, 6, 3, 6].
  conv[3] = KILN_CUDA_CONV_INPUT_GRADIENT;
  EXPECT_EQ(convBufferBytes(conv), (std::array<size_t, 3>{1680, 288, 1296}));
  // The kernel gradient: x the input [3, 4, 5, 7], w the cotangent
  // [3, 6, 3, 6], y [6, 2, 3, 2].
  conv[3] = KILN_CUDA_CONV_WEIGHT_GRADIENT;
  EXPECT_EQ(convBufferBytes(conv), (std::array<size_t, 3>{1680, 1296, 288}));
  // 3-d f16: x [1, 2, 2, 3, 4], w [4, 2, 1, 2, 1], y [1, 4, 2, 2, 4].
  int64_t volume[] = {3, 1, KILN_DTYPE_F16,
                      0, 1, 2,
                      4, 2, 3,
                      4, 1, 2,
                      1, 2, 2,
                      4, 1, 1,
                      1, 0, 0,
                      0, 0, 0,
                      0, 1, 1,
                      1};
  EXPECT_EQ(convBufferBytes(volume), (std::array<size_t, 3>{96, 32, 128}));
  // Sizes no descriptor from the compiler gives are SIZE_MAX.
  conv[3] = 0;
  conv[4] = -3;
  EXPECT_EQ(convBufferBytes(conv)[0], SIZE_MAX);
  conv[4] = int64_t(1) << 40;
  conv[5] = int64_t(1) << 40;
  EXPECT_EQ(convBufferBytes(conv)[0], SIZE_MAX);
}

TEST(LibraryBuffersTest, AttentionBuffersAreSizedAsTheAbiLaysThemOut) {
  using kiln::runtime::cuda::attentionBufferBytes;
  // bf16, B 2, H 3, Nq 5, Nk 7, D 8, Dv 4, a mask [1, 3, 5, 7].
  const int64_t attention[] = {
      KILN_DTYPE_BF16, 3, 2, 3, 5, 7, 8, 4, 1, 3, 5, 7, 0};
  // q, k, v, mask, o, lse (f32).
  EXPECT_EQ(attentionBufferBytes(attention, false),
            (std::vector<size_t>{480, 672, 336, 210, 240, 120}));
  // q, k, v, o, lse, do, mask, dq, dk, dv, and the f32 scratch
  // [2, 3, 5, 9].
  EXPECT_EQ(attentionBufferBytes(attention, true),
            (std::vector<size_t>{480, 672, 336, 240, 120, 240, 210, 480, 672,
                                 336, 1080}));
}

TEST_F(FakeCudaTuningTest, AVariantTheDeviceCannotLaunchIsDropped) {
  // The faster variant needs more shared memory than this device gives a
  // block: the site keeps the other, where such a launch alone fails.
  state.sharedOptInLimit = 65536;
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_shared"),
            repeated("scale2_a", 5));
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
  EXPECT_EQ(launchedBy(module.get(), "scale2_tuned_shared"),
            std::vector<std::string>{"scale2_a"});
  // Where the device gives enough, the wide variant is the faster.
  state.sharedOptInLimit = 232448;
  ModulePtr roomy = loadCudaModule();
  ASSERT_TRUE(roomy);
  launchedBy(roomy.get(), "scale2_tuned_shared");
  EXPECT_EQ(launchedBy(roomy.get(), "scale2_tuned_shared"),
            std::vector<std::string>{"scale2_c"});
}

TEST_F(FakeCudaTuningTest, ASiteWhoseEveryVariantIsRefusedFailsTheCall) {
  dnn.refuseConvs = "no engine for the problem";
  ModulePtr module = loadCudaModule();
  ASSERT_TRUE(module);
  for (int call = 1; call <= 2; ++call) {
    TensorPtr y;
    expectDeviceError(callScale2(module.get(), y, "scale2_tuned_libraries"),
                      "CUDA convolutions: no engine for the problem");
    EXPECT_EQ(cudaStats(module.get()).tuned_sites, 0u) << "call " << call;
    EXPECT_EQ(state.eventsCreated, state.eventsDestroyed);
  }
  // Once the library takes the problem, the site is timed and decided.
  dnn.refuseConvs.clear();
  launchedBy(module.get(), "scale2_tuned_libraries");
  EXPECT_EQ(cudaStats(module.get()).tuned_sites, 1u);
}
