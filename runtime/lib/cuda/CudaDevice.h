//===- CudaDevice.h - One module's CUDA device, stream and kernels -*- C++
//-*-===//
//
// A CUDA module's host code (a shared object) launches its kernels through
// the upstream GPU runtime ABI (mgpuModuleLoadJIT, mgpuLaunchKernel,
// mgpuMemAlloc, ...; see GpuRuntimeShim.h). Those calls land here, on the
// CudaDevice of the module whose function is being called:
//   - the device's primary context is made current for the call;
//   - all kernels run in order on one stream;
//   - a PTX image is JIT-loaded once (cuModuleLoadDataEx, keeping the JIT
//     error log) and cached by address for the module's lifetime, and so is
//     each kernel looked up in it;
//   - kernels and copies the host code asks for are queued on the stream
//     without waiting; the host code waits (mgpuStreamSynchronize) only
//     before it reads memory, e.g. a loop predicate it copied back;
//   - buffers are device memory (a function's arena of intermediates) or
//     CUDA managed memory (what the host code may read). Freed buffers go
//     to a pool and are handed out again for requests of a similar size,
//     so an arena is allocated from the driver once per module, not once
//     per call; everything is freed with the device, or when the driver
//     runs out of memory for a call. Reusing bytes is safe
//     without waiting because all device work runs in order on the stream
//     and the host waits before touching memory;
//   - host inputs and outputs are copied to and from device buffers once
//     per call, device tensors (kiln_tensor_to_device,
//     kiln_function_call_on_device) are passed as they are; buffers the
//     host code leaves allocated return to the pool. A device tensor's
//     buffer comes from the same pool but belongs to the tensor until it is
//     released, and the tensor holds the device open meanwhile.
//   - matrix products the host code asks for (kiln/CudaLibraryAbi.h) are
//     queued on the stream by the products plug-in (BlasPlugin.h, over
//     cuBLASLt), loaded on the first product, with one handle and one
//     workspace per device; convolutions likewise by the convolutions
//     plug-in (DnnPlugin.h, over cuDNN), loaded on the first convolution;
//   - a module's constants are uploaded to device memory once, at the
//     first call that uses them; kernels read them there in place, or a
//     call copies them on the device (into a result);
//   - the calls of a function whose host code only queues device work run
//     as one CUDA graph launch from the second call on (CudaGraphCalls.cpp);
//   - a call site the module implements in several ways runs the fastest,
//     timed at its first call (CudaTuning.cpp);
//   - counters (CudaStats) record launches, waits, copies to the host and
//     driver allocations, for kiln_module_cuda_stats.
// The mgpu ABI returns no errors, so the first failure of a call is
// recorded, later device work of that call is skipped, and the call
// returns the failure as a status.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDADEVICE_H
#define KILN_RUNTIME_LIB_CUDA_CUDADEVICE_H

#include "BlasPlugin.h"
#include "DnnPlugin.h"
#include "CudaDriver.h"

#include "kiln/runtime.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace cuda {

/// A buffer of a call: its address and size in bytes, in host memory or,
/// for a device tensor, in the device memory of this device's context.
struct CallBuffer {
  void *data;
  size_t bytes;
  bool onDevice = false;
};

/// What a device did since it was created (kiln_cuda_stats_t).
struct CudaStats {
  uint64_t calls = 0;
  uint64_t kernelLaunches = 0;
  uint64_t streamSyncs = 0;
  uint64_t deviceToHostCopies = 0;
  uint64_t deviceToHostBytes = 0;
  uint64_t driverAllocations = 0;
  uint64_t heldBytes = 0;
  uint64_t largestDeviceAllocation = 0;
  /// Loops run on the device as graphs.
  uint64_t graphLoops = 0;
  /// Calls run as one graph launch, and those of them captured.
  uint64_t graphCalls = 0;
  uint64_t graphCaptures = 0;
  /// Constants uploaded to the device, and their bytes.
  uint64_t constantUploads = 0;
  uint64_t constantBytes = 0;
  /// Bytes of the buffers graphs of calls hold (filled in by stats()).
  uint64_t graphBytes = 0;
  /// Tuned call sites decided by timing their variants.
  uint64_t tunedSites = 0;
};

/// The device a process opens among \p count: KILN_CUDA_DEVICE when set (a
/// value outside 0 .. count - 1 is KILN_STATUS_DEVICE_UNAVAILABLE), else
/// the process's rank on its machine as MPI launchers or Slurm set it
/// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID) modulo
/// \p count, so that the ranks of a run on one machine use one device
/// each, else 0.
kiln_status_t chooseDeviceOrdinal(int count, int &ordinal);

/// The PTX of the kernels that set conditional nodes' conditions
/// (CudaGraphLoops.cpp), which the runtime links with the device runtime.
const char *graphConditionKernels();

/// Whether KILN_CUDA_GRAPHS=0 turns CUDA graphs off (loops and calls).
bool graphsTurnedOff();

/// The driver's device count (0 when cuInit finds no device), or
/// KILN_STATUS_DEVICE_UNAVAILABLE without a driver.
kiln_status_t countDevices(int &count);

/// The compute capability of the device chooseDeviceOrdinal picks, without
/// opening it; KILN_STATUS_DEVICE_UNAVAILABLE without a driver or device.
kiln_status_t computeCapability(int &major, int &minor);

class CudaDevice {
public:
  /// A device that opens itself on first use, so that a CUDA module can be
  /// loaded and inspected on a machine without CUDA.
  CudaDevice() = default;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;
  ~CudaDevice();

  /// Loads the driver (loadDefaultCudaDriver), initializes it, takes the
  /// primary context of the device chooseDeviceOrdinal picks and creates
  /// the stream; does nothing once open.
  /// No driver or no device is KILN_STATUS_DEVICE_UNAVAILABLE ("no CUDA
  /// driver found ...", "... no CUDA device"); any other failure is
  /// KILN_STATUS_DEVICE_ERROR.
  kiln_status_t open();

  /// Opens the device if needed, then runs `entry` (the host code's
  /// `void entry(void **args)`) on the inputs and outputs: a host buffer
  /// through a device copy (copied in for an input, back for an output), a
  /// device buffer as it is. Calls on one device are serialized.
  kiln_status_t call(void (*entry)(void **),
                     const std::vector<CallBuffer> &inputs,
                     const std::vector<CallBuffer> &outputs);

  /// Opens the device if needed and sets `buffer` to `bytes` of device
  /// memory that belongs to the caller until releaseResident, filled with
  /// a copy of `source` (host memory, or this device's memory when
  /// `sourceOnDevice`) unless `source` is NULL.
  kiln_status_t createResident(size_t bytes, const void *source,
                               bool sourceOnDevice, void *&buffer);
  /// Copies `bytes` of the resident buffer `source` into host memory.
  kiln_status_t copyToHost(void *destination, const void *source,
                           size_t bytes);
  /// Gives a resident buffer back to the pool.
  void releaseResident(void *buffer);
  /// The ordinal of the physical device once open (the driver's
  /// numbering, which DLPack's device_id follows); -1 before.
  int ordinal();
  /// Whether buffers of `other` are valid in this device's calls (both
  /// use the same context, that of the same physical device). Opens this
  /// device if needed.
  bool sharesMemoryWith(CudaDevice &other);

  /// The device whose call is running on this thread; NULL outside calls.
  static CudaDevice *current();

  // The GPU runtime ABI, for the shim. They do nothing after a failure.
  CUmodule loadModule(const void *image, int optLevel);
  CUfunction getFunction(CUmodule module, const char *name);
  void launch(CUfunction function, int64_t gridX, int64_t gridY,
              int64_t gridZ, int64_t blockX, int64_t blockY, int64_t blockZ,
              int32_t sharedMemBytes, void **params, void **extra);
  CUstream stream() const { return streamHandle; }
  void synchronize();
  /// A buffer of at least `bytes`: managed memory when `hostShared`, else
  /// device memory; from the pool when it holds one of a similar size.
  void *allocate(uint64_t bytes, bool hostShared = true);
  /// Returns a buffer of this device to the pool.
  void release(void *pointer);
  void copy(void *destination, const void *source, size_t bytes);
  void fill32(void *destination, unsigned value, size_t count);
  /// Queues `problem` on the stream through the products plug-in.
  void matmul(const kiln_matmul_problem_t &problem);
  /// Queues the convolution `descriptor` describes (kiln/CudaLibraryAbi.h)
  /// on the stream through the convolutions plug-in, after checking the
  /// descriptor's header.
  void conv(const int64_t *descriptor, const void *x, const void *w, void *y);
  /// Queues the attention (its gradient with `gradient`) `descriptor`
  /// describes (kiln/CudaLibraryAbi.h) on the stream through the same
  /// plug-in, after checking the descriptor's flags and sizes; `buffers`
  /// in the order of the ABI's function.
  void attention(const int64_t *descriptor, bool gradient,
                 const void *const *buffers);
  /// Whether each of the library calls `calls` lists (`size` values, the
  /// layout of kiln/CudaLibraryAbi.h's KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION)
  /// has run on this device before, so that its plug-in holds its plan: a
  /// loop holding them may then be captured into a graph. A malformed list
  /// fails the call. With KILN_CUDA_CAPTURE_UNPLANNED=1, true for every
  /// well-formed list: loops are captured from their first run, the plans
  /// made outside the capture (callPlanningOutsideCapture).
  bool libraryCallsPlanned(int64_t size, const int64_t *calls);

  // Loops the host code runs on the device as a CUDA graph with
  // conditional nodes (CudaGraphLoops.cpp; kiln/CudaLibraryAbi.h's
  // KILN_CUDA_GRAPH_* functions).
  /// Whether this device can: the driver has conditional nodes and the JIT
  /// linker, the device runtime library (libcudadevrt.a) is found, and
  /// KILN_CUDA_GRAPHS is not 0. Decided once per device.
  bool graphLoopsAvailable();
  /// Starts a loop's graph and captures the stream's work (the loop's
  /// first test) into it; where the stream is captured already (a call,
  /// or a loop's iteration or a branch inside one), the loop's nodes go
  /// into the graph captured into instead, and end queues nothing.
  void *beginGraphWhile();
  /// Ends the capture of the loop's first test, whose result is the byte at
  /// `predicate` (device memory), and captures the loop's iteration (the
  /// body, then the test again) into the body of a WHILE node after it.
  void testGraphWhile(void *loop, const void *predicate);
  /// Ends the capture of the iteration, whose test's result is the byte at
  /// `predicate`, and queues the loop's graph on the stream.
  void endGraphWhile(void *loop, const void *predicate);
  // kiln.cond branches in a capture (a call's, or a loop's), as IF nodes
  // of the graph captured into (CudaGraphBranches.cpp;
  // KILN_CUDA_GRAPH_IF_* functions).
  /// Whether the stream is being captured and conditional nodes are there.
  bool graphBranchesAvailable();
  /// Adds the kernel that sets the branch's conditions from the byte at
  /// `predicate` and captures the first branch into an IF node's body.
  void *beginGraphIf(const void *predicate);
  /// Captures the second branch into the body of an IF node on the
  /// predicate's negation.
  void elseGraphIf(void *branch);
  /// Ends the second branch; the enclosing capture goes on after it.
  void endGraphIf(void *branch);

  /// The end of a loop as modules compiled before the test ran twice
  /// capture it (the body alone after the test): fails the call, ends the
  /// capture and frees the loop, queueing nothing.
  void refuseRetiredGraphWhile(void *loop);

  /// Queues a copy of the module's constant at `constant` (host memory,
  /// `bytes` long) into the device buffer `destination`, after uploading
  /// it to the device if this is its first use.
  void copyConstant(void *destination, const void *constant, int64_t bytes);
  /// The device address of the module's constant at `constant` (host
  /// memory, `bytes` long), uploaded to the device if this is its first
  /// use, for kernels and library calls to read in place; null after a
  /// failure of the call.
  void *residentConstant(const void *constant, int64_t bytes);

  // Whole calls run as one CUDA graph (CudaGraphCalls.cpp;
  // kiln/CudaLibraryAbi.h's KILN_CUDA_GRAPH_CALL_* functions).
  /// At the start of the call's host code: queues the graph captured from
  /// an earlier call of the function with the same arguments and answers
  /// true (the host code then returns), or answers false, having started
  /// to capture the stream when the call is to be captured.
  bool beginGraphCall();
  /// At the end of the call's host code: ends a capture that
  /// beginGraphCall started, and queues the graph it made.
  void endGraphCall();

  // Tuned call sites (CudaTuning.cpp; kiln/CudaLibraryAbi.h's
  // KILN_CUDA_TUNE_* functions).
  /// The rounds the host code runs `site` for in this call: 1 where it is
  /// decided, or inside a capture, else one warm-up and kTimedRuns timed
  /// runs of each of its `variants`, then the chosen one.
  int64_t tuneRounds(int64_t site, int64_t variants, const char *names);
  /// The variant `site` runs in `round`; starts the variant's timing.
  int64_t tuneBegin(int64_t site, int64_t round);
  /// Ends `round` of `site`; stops the variant's timing.
  void tuneEnd(int64_t site, int64_t round);
  /// Whether each of the `count` sites `numbers` is decided, or tuning is
  /// off: a loop holding them may then be captured into a graph.
  bool tunedSitesDecided(int64_t count, const int64_t *numbers);
  /// Records the first failure of the current call.
  void fail(const std::string &message);
  /// Records the first failure of the current call as a refusal of work
  /// before it was queued: a library's (its plug-in missing, or refusing
  /// the problem), or a kernel's that needs more shared memory than the
  /// device gives a block. A tuned site that meets one while it times a
  /// variant drops that variant instead of failing the call (the chosen
  /// variant then writes every result again).
  void refuse(const std::string &message);

  /// The counters so far.
  CudaStats stats();

private:
  kiln_status_t openLocked();
  /// Runs `work` with the device open and its context current, under the
  /// call lock, returning the first failure it records as a status.
  template <typename Work> kiln_status_t withDevice(Work &&work);
  /// The body of call(), inside withDevice.
  void runCall(void (*entry)(void **), const std::vector<CallBuffer> &inputs,
               const std::vector<CallBuffer> &outputs);
  /// Runs the host code `entry` on `args`; runs it once more without a
  /// capture when its capture into a graph failed (CudaGraphCalls.cpp).
  void runEntry(void (*entry)(void **), std::vector<void *> &args);
  /// Records `what` with the driver's description of `result` when it is
  /// not success; returns whether it was.
  bool check(CUresult result, const char *what);
  /// Lets launches of `function` ask for `bytes` of dynamic shared memory,
  /// more than kSharedBytesWithoutOptIn (once per kernel and size), or
  /// fails the call saying what the device gives.
  bool allowShared(CUfunction function, int32_t bytes);

  std::unique_ptr<CudaDriver> driver;
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool contextRetained = false;
  CUstream streamHandle = nullptr;
  int deviceOrdinal = -1;
  std::mutex callMutex;
  /// JIT-loaded images by address; unloaded with the device.
  std::map<const void *, CUmodule> modules;
  /// Kernels already looked up: the host code asks before every launch.
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
  /// The dynamic shared memory over kSharedBytesWithoutOptIn each kernel
  /// was allowed (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  std::map<CUfunction, int32_t> sharedOptIns;
  /// Every buffer the driver gave this device, by address.
  struct Allocation {
    size_t bytes;
    bool hostShared;
  };
  std::map<CUdeviceptr, Allocation> allocations;
  /// Buffers handed out during the current call and not yet released.
  /// By address, with the order they were handed out in: they go back to
  /// the pool in that order, so that the next call with the same
  /// allocations is handed the same buffers (and launches the graphs of
  /// calls captured with them).
  std::map<CUdeviceptr, uint64_t> liveBuffers;
  uint64_t handedOut = 0;
  /// Released buffers by size, separately for managed and device memory.
  std::multimap<size_t, CUdeviceptr> pool[2];
  /// Puts a buffer the driver gave this device into the pool of its kind.
  void returnToPool(CUdeviceptr pointer);
  /// Stops the graphs of calls holding buffers and gives the pool's
  /// buffers back to the driver; whether it freed any.
  bool releaseCachedMemory();
  /// `bytes` of device (or, `hostShared`, managed) memory from the driver,
  /// tried again after releaseCachedMemory where the driver has none left
  /// (outside a capture).
  CUresult allocateFromDriver(CUdeviceptr &pointer, size_t bytes,
                              bool hostShared);
  /// Whether `pointer` lies in a buffer of this device.
  bool isDevicePointer(const void *pointer) const;
  /// A library plug-in, its handle and its workspace, made on the first
  /// call that needs them and kept until the device is closed.
  template <typename Table> struct Library {
    const Table *table = nullptr;
    void *handle = nullptr;
    CUdeviceptr workspace = 0;
  };
  Library<kiln_blas_plugin_t> blas;
  Library<kiln_dnn_plugin_t> dnn;
  /// A descriptor's values, compared without a copy.
  struct DescriptorView {
    const int64_t *begin, *end;
  };
  /// Orders descriptors by their values, stored ones and views alike, so
  /// that a call looks its descriptor up without building a key.
  struct DescriptorOrder {
    using is_transparent = void;
    static DescriptorView view(const std::vector<int64_t> &values) {
      return {values.data(), values.data() + values.size()};
    }
    static DescriptorView view(DescriptorView values) { return values; }
    template <typename A, typename B>
    bool operator()(const A &a, const B &b) const {
      DescriptorView x = view(a), y = view(b);
      return std::lexicographical_compare(x.begin, x.end, y.begin, y.end);
    }
  };
  /// The cuDNN calls that have run on this device, by their
  /// KILN_CUDA_PLANNED_* code: the descriptors of each. The plug-in keeps
  /// their plans while the device is open (libraryCallsPlanned).
  std::map<int64_t, std::set<std::vector<int64_t>, DescriptorOrder>>
      plannedCalls;
  /// Records that the call of `code` on `descriptor` (`length` values)
  /// went through the plug-in.
  void recordPlanned(int64_t code, const int64_t *descriptor, int64_t length);
  /// Runs a cuDNN call, `call` on its `count` buffers (device addresses of
  /// `bytes` each, nulls for absent ones), and answers its status. Where
  /// the plug-in answers KILN_DNN_PLAN_IN_CAPTURE (a plan new to it while
  /// the stream is captured: buffers aligned otherwise than at the call's
  /// earlier runs, or a call the capture meets first), the capture is ended
  /// where it stands, the call made once on scratch buffers of the same
  /// sizes and alignments, which makes the plan and runs nothing the
  /// capture holds, and the capture goes on from the same nodes, where the
  /// call is made again. A failure of the driver on the way fails the call.
  int callPlanningOutsideCapture(
      size_t count, const void *const *buffers, const size_t *bytes,
      const std::function<int(const void *const *buffers)> &call);
  /// Loads `library`'s plug-in with `load`, makes its handle and a
  /// workspace of `workspaceBytes` where missing; a step that fails is
  /// recorded (its message naming `what`, "products" or "convolutions")
  /// and tried again next time.
  /// Returns whether all three are there.
  template <typename Table>
  bool prepare(Library<Table> &library,
               kiln_status_t (*load)(const Table *&), size_t workspaceBytes,
               const char *what);
  /// Gives `library`'s handle and workspace back.
  template <typename Table> void close(Library<Table> &library);
  /// graphLoopsAvailable's answer once decided (0 unknown, 1 yes, 2 no)
  /// and the kernel that sets a loop's condition.
  int graphLoopSupport = 0;
  CUfunction setCondition = nullptr, setBranch = nullptr;
  /// Adds a conditional node of `type` on `condition` to `graph` after the
  /// nodes `after` (as `node`, its body graph as `body`) and captures the
  /// stream into that body from here on; `what` names the node and the
  /// body in errors ("an if node", "a branch"). Whether both went well.
  bool captureIntoConditionalNode(CUgraph graph,
                                  const std::vector<CUgraphNode> &after,
                                  CUgraphConditionalHandle condition, int type,
                                  CUgraphNode &node, CUgraph &body,
                                  const char *nodeWhat, const char *bodyWhat);
  /// Captures a branch's IF node (`side` 0 for the first, 1 for the
  /// second) after what the stream captured so far; whether it went well.
  bool captureGraphIfSide(void *branch, int side);
  /// Captures the kernel that sets a graph loop's condition from the byte
  /// at `predicate` and ends the capture; `last` is what the kernel's node
  /// is. Whether all went well.
  bool setGraphWhileCondition(void *loop, const void *predicate,
                              std::vector<CUgraphNode> &last);
  /// Whole calls as graphs: whether this device can (0 unknown, 1 yes,
  /// 2 no), each function's graphs by its entry, the function whose call
  /// is running and its arguments, the graphs of the function whose call
  /// is being captured, and whether the call's capture failed so that it
  /// must run again without one.
  int graphCallSupport = 0;
  struct GraphCall {
    /// A graph captured from a call with `args`, last launched at the
    /// function's call number `lastUse`.
    struct Graph {
      std::vector<void *> args;
      CUgraphExec exec = nullptr;
      uint64_t lastUse = 0;
    };
    std::vector<Graph> graphs;
    /// The device buffers its captured work uses (its intermediates), held
    /// for its graphs, and during a capture those not handed out again yet.
    std::vector<CUdeviceptr> buffers, spare;
    uint64_t calls = 0;
    /// Captures in a row, without a graph launched again in between.
    int capturesInARow = 0;
    bool retired = false;
  };
  std::map<void (*)(void **), std::unique_ptr<GraphCall>> graphCalls;
  void (*callEntry)(void **) = nullptr;
  const std::vector<void *> *callArgs = nullptr;
  GraphCall *capturingCall = nullptr;
  /// While the stream is captured (a call, whose graph it is then, or a
  /// loop run as a graph of its own), the graph that holds the whole
  /// capture, on which nested loops and branches create their conditional
  /// handles, and the graph the stream captures into now: that graph, or
  /// the body of a conditional node inside it (a loop's iteration, a
  /// branch), at any depth.
  CUgraph captureRoot = nullptr;
  CUgraph captureTarget = nullptr;
  bool rerunWithoutCapture = false;
  bool graphCallsAvailable();
  /// Stops capturing `call`'s calls: its graphs are destroyed and the
  /// buffers they held go back to the pool.
  void retireGraphCall(GraphCall &call);
  /// During a capture, a buffer of at least `size` bytes among those the
  /// captured function's graphs hold and the capture has not been handed
  /// yet; NULL if none.
  void *allocateForCapture(size_t size, bool hostShared);
  /// Makes a buffer the capture allocated one the function's graphs hold.
  void holdForCapture(CUdeviceptr pointer);
  /// The buffers graphs of calls hold (out of the pool).
  /// The buffers graphs of calls hold, with the number of functions whose
  /// graphs hold each: graphs of different functions share buffers (they
  /// run one after the other on the stream), and a buffer goes back to the
  /// pool when no function's graphs hold it any more.
  std::map<CUdeviceptr, int> heldByGraphs;
  /// The module's constants on the device, by host address and size.
  std::map<std::pair<const void *, int64_t>, CUdeviceptr> constants;
  /// The device copy of a constant (uploadConstant's), uploaded at its
  /// first use; 0, with the call failed, when that fails.
  CUdeviceptr uploadConstant(const void *constant, int64_t bytes);
  /// A tuned call site: its variants and their names, the variant chosen
  /// (-1 while undecided), whether the rounds of this call time the
  /// variants, each variant's events around its timed runs, why a library
  /// refused each variant while this call timed it (empty where none did),
  /// and whether the call had failed when the current round began.
  struct TunedSite {
    int64_t variants = 0;
    std::string names;
    int64_t chosen = -1;
    bool timing = false;
    std::vector<CUevent> starts, stops;
    std::vector<std::string> refusals;
    bool failedBeforeRound = false;
  };
  std::map<int64_t, TunedSite> tunedSites;
  /// Decides `site` for the fastest of its timed variants not refused, or
  /// for the first not refused where a time cannot be read; leaves it
  /// undecided where each was refused.
  void decide(int64_t siteNumber, TunedSite &site);
  /// Destroys `site`'s events.
  void dropEvents(TunedSite &site);
  /// Updated under callMutex.
  CudaStats counters;
  /// The first failure of the current call; empty while it goes well.
  std::string failure;
  /// Whether that failure is a library's refusal (refuse()).
  bool refused = false;
};

} // namespace cuda
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDADEVICE_H
