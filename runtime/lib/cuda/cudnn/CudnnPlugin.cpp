//===- CudnnPlugin.cpp - Convolutions of CUDA modules on cuDNN ------------===//
//
// Exports kiln_dnn_plugin, the table of DnnPlugin.h: convolutions here,
// attention in CudnnAttention.cpp. Each convolution is
// one execution of a cuDNN 9 graph-API plan (one forward-convolution
// operation, or a backward-data one for KILN_CUDA_CONV_INPUT_GRADIENT, a
// backward-filter one for KILN_CUDA_CONV_WEIGHT_GRADIENT) queued on the
// caller's stream.
//
// The operands keep kiln's dense row-major layouts, described to cuDNN by
// their dims and strides: x [N, C, D...], w [O, C/G, K...], y [N, O,
// E...]; cuDNN reads the group count from C against w's second dim. cuDNN
// wants at least two spatial dims, so a 1-d convolution is described as a
// 2-d one over a height of 1. Padding may differ on the two sides
// (pre- and post-paddings).
//
// The plan - tensor, convolution and operation descriptors, the operation
// graph, and the engine configuration - is made on the first call of a
// descriptor (plus the pointers' alignment, which the engines take into
// account) and cached with the handle. The candidates are the engines
// cuDNN's heuristics rank (mode A, then the fallback list) that finalize
// on this device, need no more workspace than the runtime gives, and
// whose numerics kiln's contract allows: an f32 convolution takes no
// engine that rounds its inputs (tensor cores, i.e. TF32, or
// "down-converted inputs") unless the descriptor says TF32, and a
// half-precision one none that reduces in reduced precision: kiln.conv
// sums f16 and bf16 products in f32. The heuristics' first choice is
// often far from the fastest engine for exact f32 (up to several times on
// ResNet-50's gradients), so the first call of a plan times the first
// kTunedCandidates candidates on its own buffers (CUDA events of the
// driver, which the runtime has loaded) and keeps the fastest, as
// cudnnFind does; KILN_CUDA_CONV_TUNE=0 keeps the heuristics' first
// choice instead (no waiting for the stream on first calls, and the same
// engine on every run). A plan is never made while the stream is captured
// into a CUDA graph (cuDNN's planning and the timing cannot be captured):
// such a call is refused, and the runtime runs loops and calls that hold
// cuDNN calls outside a capture first.
//
//===----------------------------------------------------------------------===//

#include "cuda/DnnPlugin.h"
#include "cuda/PluginSupport.h"
#include "cuda/cudnn/CudnnAttention.h"
#include "cuda/cudnn/CudnnGraph.h"

#include "kiln/CudaLibraryAbi.h"
#include "kiln/ElementType.h"

#include <cuda.h>
#include <cudnn.h>

#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {
namespace cuda_dnn {
namespace {

using cuda_plugin::alignmentOf;
using cuda_plugin::fail;

/// The element types cuDNN convolves for kiln.
bool dataTypeOf(int64_t dtype, cudnnDataType_t &type) {
  switch (static_cast<kiln::ElementType>(dtype)) {
  case kiln::ElementType::F32:
    type = CUDNN_DATA_FLOAT;
    return true;
  case kiln::ElementType::F16:
    type = CUDNN_DATA_HALF;
    return true;
  case kiln::ElementType::BF16:
    type = CUDNN_DATA_BFLOAT16;
    return true;
  default:
    return false;
  }
}

/// A descriptor's fields (kiln/CudaLibraryAbi.h), read once.
struct Problem {
  int64_t spatial, groups, dtype, flags, n, c, o;
  std::vector<int64_t> in, kernel, out, strides, low, high, dilations;

  explicit Problem(const int64_t *d)
      : spatial(d[0]), groups(d[1]), dtype(d[2]), flags(d[3]), n(d[4]),
        c(d[5]), o(d[6]) {
    const int64_t *dims = d + KILN_CUDA_CONV_HEADER_SIZE;
    std::vector<int64_t> *arrays[] = {&in,  &kernel, &out,      &strides,
                                      &low, &high,   &dilations};
    for (std::vector<int64_t> *array : arrays) {
      array->assign(dims, dims + spatial);
      dims += spatial;
    }
  }

  /// What is wrong with it, or empty (its number of spatial dims was
  /// checked before it was read).
  std::string check() const {
    if ((flags & KILN_CUDA_CONV_INPUT_GRADIENT) &&
        (flags & KILN_CUDA_CONV_WEIGHT_GRADIENT))
      return "both an input and a weight gradient";
    if (groups < 1 || n < 1 || c < 1 || o < 1 || c % groups || o % groups)
      return "batch " + std::to_string(n) + ", " + std::to_string(c) +
             " -> " + std::to_string(o) + " channels in " +
             std::to_string(groups) + " groups";
    for (int64_t i = 0; i < spatial; ++i) {
      if (in[i] < 1 || kernel[i] < 1 || out[i] < 1 || strides[i] < 1 ||
          dilations[i] < 1 || low[i] < 0 || high[i] < 0)
        return "spatial dim " + std::to_string(i) +
               " has a size, stride, dilation or padding out of range";
      // The forward convolution's input and output sizes: x and y, or y
      // and x for an input gradient.
      bool gradient = flags & KILN_CUDA_CONV_INPUT_GRADIENT;
      int64_t from = gradient ? out[i] : in[i], to = gradient ? in[i] : out[i];
      int64_t window = (kernel[i] - 1) * dilations[i] + 1;
      int64_t padded = from + low[i] + high[i];
      if (padded < window || (padded - window) / strides[i] + 1 != to)
        return "spatial dim " + std::to_string(i) + ": " +
               std::to_string(to) +
               " outputs do not follow from the sizes and padding";
    }
    return "";
  }
};

/// Dims and dense row-major strides of a [leading, channels, sizes...]
/// tensor, a 1-d one widened to 2-d by a height of 1.
struct Shape {
  std::vector<int64_t> dims, strides;
};

Shape shapeOf(int64_t leading, int64_t channels,
              const std::vector<int64_t> &sizes) {
  Shape shape;
  shape.dims = {leading, channels};
  if (sizes.size() == 1)
    shape.dims.push_back(1);
  shape.dims.insert(shape.dims.end(), sizes.begin(), sizes.end());
  shape.strides = denseStrides(shape.dims);
  return shape;
}

/// A spatial attribute, widened to 2-d for a 1-d convolution by `fill`.
std::vector<int64_t> widened(const std::vector<int64_t> &values,
                             int64_t fill) {
  std::vector<int64_t> result(values);
  if (result.size() == 1)
    result.insert(result.begin(), fill);
  return result;
}

constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

/// How many candidate engines a first call times.
constexpr size_t kTunedCandidates = 8;

/// A convolution's plan and everything it was made from.
struct Plan {
  Descriptor x, w, y, convolution, operation, graph, plan;
  std::vector<std::unique_ptr<Descriptor>> configs;
  int64_t workspaceBytes = 0;
};

/// The buffers, stream and workspace of one call.
struct CallBuffers {
  const void *x, *w;
  void *y;
  cudaStream_t stream;
  void *workspace;
};

/// Queues `plan` on the handle's stream.
cudnnStatus_t execute(cudnnHandle_t library, const Descriptor &plan,
                      int64_t workspaceBytes, const CallBuffers &buffers) {
  Descriptor pack;
  Builder b;
  int64_t ids[] = {kX, kW, kY};
  void *pointers[] = {const_cast<void *>(buffers.x),
                      const_cast<void *>(buffers.w), buffers.y};
  void *space = workspaceBytes ? buffers.workspace : nullptr;
  b.create(pack, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
      .set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids, 3)
      .set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           pointers, 3)
      .set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
           &space)
      .finalize(pack, "finalizing the variant pack");
  if (!b.ok())
    return CUDNN_STATUS_BAD_PARAM;
  return cudnnBackendExecute(library, plan.get(), pack.get());
}

/// The driver's event functions, from the libcuda the runtime has loaded;
/// null members where it is not there.
struct EventApi {
  CUresult (*create)(CUevent *, unsigned) = nullptr;
  CUresult (*record)(CUevent, CUstream) = nullptr;
  CUresult (*synchronize)(CUevent) = nullptr;
  CUresult (*elapsed)(float *, CUevent, CUevent) = nullptr;
  CUresult (*destroy)(CUevent) = nullptr;

  static const EventApi &get() {
    static const EventApi api = [] {
      EventApi a;
      void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
      if (!driver)
        return a;
      auto find = [&](auto &slot, const char *name) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
            dlsym(driver, name));
      };
      find(a.create, "cuEventCreate");
      find(a.record, "cuEventRecord");
      find(a.synchronize, "cuEventSynchronize");
      find(a.elapsed, "cuEventElapsedTime_v2");
      if (!a.elapsed)
        find(a.elapsed, "cuEventElapsedTime");
      find(a.destroy, "cuEventDestroy_v2");
      if (!(a.create && a.record && a.synchronize && a.elapsed && a.destroy))
        a = EventApi();
      return a;
    }();
    return api;
  }
};

/// Whether `stream` is being captured into a CUDA graph (the driver's
/// cuStreamIsCapturing, from the libcuda the runtime has loaded; false
/// where it cannot tell).
bool capturing(void *stream) {
  using IsCapturing = CUresult (*)(CUstream, CUstreamCaptureStatus *);
  static const IsCapturing query = [] {
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return driver ? reinterpret_cast<IsCapturing>(
                        dlsym(driver, "cuStreamIsCapturing"))
                  : nullptr;
  }();
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return query &&
         query(static_cast<CUstream>(stream), &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/// The refusal of a plan to make while `stream` is captured: cuDNN's
/// plans (its heuristics, the engines' finalization, the timing of the
/// candidates) are made outside a capture, which could not hold them. The
/// runtime runs a call or a loop outside a capture first, so only work the
/// device has not run before, or buffers aligned otherwise than at its
/// earlier runs, meet this; the runtime then makes the plan outside the
/// capture (KILN_DNN_PLAN_IN_CAPTURE).
int refusePlanInCapture(char *error, size_t errorSize, const char *what) {
  fail(error, errorSize,
       "the %s's cuDNN plan is made at its first run, which a CUDA "
       "graph's capture cannot hold (this %s, or its buffers' "
       "alignment, is new to the device inside a capture)",
       what, what);
  return KILN_DNN_PLAN_IN_CAPTURE;
}

/// Whether first calls time their candidates (KILN_CUDA_CONV_TUNE unset
/// or anything but "0").
bool tuning() {
  const char *value = std::getenv("KILN_CUDA_CONV_TUNE");
  return !value || std::strcmp(value, "0") != 0;
}

/// The index of the fastest of `candidates` on `buffers` (three runs each
/// after one to warm up, between two events), or 0 when they cannot be
/// timed. A candidate that fails to run is never chosen.
size_t fastest(cudnnHandle_t library, const std::vector<Candidate> &candidates,
               const CallBuffers &buffers) {
  const EventApi &events = EventApi::get();
  if (candidates.size() < 2 || !events.create)
    return 0;
  CUevent start = nullptr, stop = nullptr;
  if (events.create(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    return 0;
  if (events.create(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    events.destroy(start);
    return 0;
  }
  CUstream stream = reinterpret_cast<CUstream>(buffers.stream);
  size_t best = 0;
  float bestTime = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate &c = candidates[i];
    bool ran =
        execute(library, *c.plan, c.workspaceBytes, buffers) ==
            CUDNN_STATUS_SUCCESS &&
        events.record(start, stream) == CUDA_SUCCESS;
    for (int run = 0; ran && run < 3; ++run)
      ran = execute(library, *c.plan, c.workspaceBytes, buffers) ==
            CUDNN_STATUS_SUCCESS;
    float time = 0;
    ran = ran && events.record(stop, stream) == CUDA_SUCCESS &&
          events.synchronize(stop) == CUDA_SUCCESS &&
          events.elapsed(&time, start, stop) == CUDA_SUCCESS;
    if (ran && (bestTime < 0 || time < bestTime)) {
      best = i;
      bestTime = time;
    }
  }
  events.destroy(start);
  events.destroy(stop);
  return best;
}

struct Handle {
  cudnnHandle_t library = nullptr;
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans;
  std::map<std::vector<int64_t>, std::unique_ptr<AttentionPlan>> attentions;
};

/// Whether the engine of `config` computes with the numerics kiln's
/// convolution allows for `problem`.
bool numericsAllowed(const Descriptor &config, const Problem &problem) {
  Descriptor engine;
  if (engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR) != CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendDescriptor_t engineHandle = engine.get();
  int64_t count = 0;
  if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &engineHandle) != CUDNN_STATUS_SUCCESS)
    return false;
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT>
      notes;
  int64_t noteCount = 0;
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                               CUDNN_TYPE_NUMERICAL_NOTE, notes.size(),
                               &noteCount,
                               notes.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  bool exactF32 =
      static_cast<kiln::ElementType>(problem.dtype) == kiln::ElementType::F32 && !(problem.flags & KILN_CUDA_CONV_TF32);
  for (int64_t i = 0; i < noteCount; ++i) {
    if (exactF32 && (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
                     notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))
      return false;
    if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
      return false;
  }
  return true;
}

/// Makes the plan of `problem` for pointers of the given alignments,
/// timing the candidates on `buffers` when tuning.
int makePlan(Handle &handle, const Problem &problem,
             const std::array<int64_t, 3> &alignments, size_t workspaceBytes,
             const CallBuffers &buffers, Plan &plan, char *error,
             size_t errorSize) {
  cudnnDataType_t dataType, computeType = CUDNN_DATA_FLOAT;
  if (!dataTypeOf(problem.dtype, dataType))
    return fail(error, errorSize,
                "no cuDNN convolution of kiln dtype %lld (f32, f16 and bf16 "
                "are supported)",
                static_cast<long long>(problem.dtype));
  Builder b;
  auto tensor = [&](Descriptor &d, int64_t id, const Shape &shape,
                    int64_t alignment) {
    int64_t rank = shape.dims.size();
    b.create(d, CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        .set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dataType)
        .set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64,
             shape.dims.data(), rank)
        .set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64,
             shape.strides.data(), rank)
        .set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id)
        .set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64,
             &alignment)
        .finalize(d, "finalizing a tensor descriptor");
  };
  tensor(plan.x, kX, shapeOf(problem.n, problem.c, problem.in),
         alignments[0]);
  // The second and third buffers: kernel and result, or for a weight
  // gradient the cotangent and the kernel's gradient.
  bool gradient = problem.flags & KILN_CUDA_CONV_INPUT_GRADIENT;
  bool weightGradient = problem.flags & KILN_CUDA_CONV_WEIGHT_GRADIENT;
  Shape kernel =
      gradient ? shapeOf(problem.c, problem.o / problem.groups, problem.kernel)
               : shapeOf(problem.o, problem.c / problem.groups, problem.kernel);
  Shape result = shapeOf(problem.n, problem.o, problem.out);
  tensor(plan.w, kW, weightGradient ? result : kernel, alignments[1]);
  tensor(plan.y, kY, weightGradient ? kernel : result, alignments[2]);

  std::vector<int64_t> strides = widened(problem.strides, 1),
                       dilations = widened(problem.dilations, 1),
                       low = widened(problem.low, 0),
                       high = widened(problem.high, 0);
  int64_t spatialDims = strides.size();
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  Descriptor &conv = plan.convolution;
  b.create(conv, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
      .set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE,
           &computeType)
      .set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
           CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64,
           &spatialDims)
      .set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64,
           dilations.data(), spatialDims)
      .set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
           strides.data(), spatialDims)
      .set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64,
           low.data(), spatialDims)
      .set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64,
           high.data(), spatialDims)
      .finalize(conv, "finalizing the convolution descriptor");

  float alpha = 1, beta = 0;
  Descriptor &op = plan.operation;
  cudnnBackendDescriptor_t x = plan.x.get(), w = plan.w.get(),
                           y = plan.y.get(), convHandle = conv.get();
  if (weightGradient) {
    // x holds the forward convolution's input, w its cotangent dy, y the
    // kernel's gradient dw.
    b.create(op,
             CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &x)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &w)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &y)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &convHandle)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
             CUDNN_TYPE_FLOAT, &alpha)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
             CUDNN_TYPE_FLOAT, &beta)
        .finalize(op, "finalizing the backward-filter convolution operation");
  } else if (gradient) {
    // x holds the forward convolution's cotangent dy, y its input
    // gradient dx.
    b.create(op, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &x)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &w)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &y)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &convHandle)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
             CUDNN_TYPE_FLOAT, &alpha)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
             CUDNN_TYPE_FLOAT, &beta)
        .finalize(op, "finalizing the backward-data convolution operation");
  } else {
    b.create(op, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &x)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &w)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &y)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &convHandle)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
             CUDNN_TYPE_FLOAT, &alpha)
        .set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
             CUDNN_TYPE_FLOAT, &beta)
        .finalize(op, "finalizing the convolution operation");
  }

  cudnnBackendDescriptor_t opHandle = op.get();
  Descriptor &graph = plan.graph;
  b.create(graph, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
      .set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
           CUDNN_TYPE_BACKEND_DESCRIPTOR, &opHandle)
      .set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE,
           &handle.library)
      .finalize(graph, "finalizing the operation graph");
  if (!b.ok())
    return b.failure(error, errorSize);

  size_t wanted = tuning() ? kTunedCandidates : 1;
  std::vector<Candidate> candidates;
  PlanTarget target;
  target.handle = handle.library;
  rankedPlans(
      graph, target, wanted, workspaceBytes,
      [&](const Descriptor &config) {
        return numericsAllowed(config, problem);
      },
      plan.configs, candidates);
  if (!candidates.empty()) {
    Candidate &chosen =
        candidates[fastest(handle.library, candidates, buffers)];
    plan.workspaceBytes = chosen.workspaceBytes;
    plan.plan.swap(*chosen.plan);
    return 0;
  }
  std::string dims;
  for (const std::vector<int64_t> *array : {&problem.in, &problem.kernel}) {
    dims += dims.empty() ? "input " : ", kernel ";
    for (size_t i = 0; i < array->size(); ++i)
      dims += (i ? "x" : "") + std::to_string((*array)[i]);
  }
  return fail(error, errorSize,
              "cuDNN has no engine for the %sconvolution of %s (batch %lld, "
              "%lld -> %lld channels, %lld groups, kiln dtype %lld%s) that "
              "keeps kiln's numerics within %zu bytes of workspace",
              gradient         ? "input-gradient "
              : weightGradient ? "weight-gradient "
                               : "",
              dims.c_str(), static_cast<long long>(problem.n),
              static_cast<long long>(problem.c),
              static_cast<long long>(problem.o),
              static_cast<long long>(problem.groups),
              static_cast<long long>(problem.dtype),
              problem.flags & KILN_CUDA_CONV_TF32 ? ", TF32 allowed" : "",
              workspaceBytes);
}

int create(void **result, char *error, size_t errorSize) {
  std::unique_ptr<Handle> handle(new (std::nothrow) Handle);
  if (!handle)
    return fail(error, errorSize, "out of host memory");
  cudnnStatus_t status = cudnnCreate(&handle->library);
  if (status != CUDNN_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cudnnCreate", status);
  *result = handle.release();
  return 0;
}

void destroy(void *opaque) {
  auto *handle = static_cast<Handle *>(opaque);
  if (!handle)
    return;
  // Plans go before the handle they were made with.
  handle->plans.clear();
  handle->attentions.clear();
  cudnnDestroy(handle->library);
  delete handle;
}

int conv(void *opaque, const int64_t *descriptor, const void *x,
         const void *w, void *y, void *stream, void *workspace,
         size_t workspaceBytes, char *error, size_t errorSize) {
  Handle &handle = *static_cast<Handle *>(opaque);
  int64_t spatial = descriptor[0];
  if (spatial < 1 || spatial > KILN_CUDA_CONV_MAX_SPATIAL_DIMS)
    return fail(error, errorSize,
                "invalid convolution: a convolution over %lld spatial dims "
                "(1 to 3 supported)",
                static_cast<long long>(spatial));
  std::array<int64_t, 3> alignments{alignmentOf(x), alignmentOf(w),
                                    alignmentOf(y)};
  // The cache key: the descriptor's values and the pointers' alignments.
  // A descriptor seen before was checked then.
  std::vector<int64_t> key(descriptor,
                           descriptor + KILN_CUDA_CONV_HEADER_SIZE +
                               KILN_CUDA_CONV_ENTRIES_PER_DIM * spatial);
  key.insert(key.end(), alignments.begin(), alignments.end());
  CallBuffers buffers{x, w, y, static_cast<cudaStream_t>(stream), workspace};
  cudnnStatus_t status = cudnnSetStream(handle.library, buffers.stream);
  if (status != CUDNN_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cudnnSetStream", status);
  auto found = handle.plans.find(key);
  if (found == handle.plans.end()) {
    if (capturing(stream))
      return refusePlanInCapture(error, errorSize, "convolution");
    Problem problem(descriptor);
    std::string wrong = problem.check();
    if (!wrong.empty())
      return fail(error, errorSize, "invalid convolution: %s", wrong.c_str());
    auto plan = std::make_unique<Plan>();
    if (int failed = makePlan(handle, problem, alignments, workspaceBytes,
                              buffers, *plan, error, errorSize))
      return failed;
    found = handle.plans.emplace(std::move(key), std::move(plan)).first;
  }
  Plan &plan = *found->second;
  status = execute(handle.library, plan.plan, plan.workspaceBytes, buffers);
  if (status != CUDNN_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cudnnBackendExecute", status);
  return 0;
}

int attention(void *opaque, const int64_t *descriptor, int gradient,
              const void *const *buffers, void *stream, void *workspace,
              size_t workspaceBytes, char *error, size_t errorSize) {
  Handle &handle = *static_cast<Handle *>(opaque);
  size_t count = gradient ? 11 : 6;
  // The cache key: the descriptor, the direction and the alignments of
  // the buffers (a missing mask counts as aligned).
  std::vector<int64_t> key(descriptor,
                           descriptor + KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE);
  key.push_back(gradient);
  for (size_t i = 0; i < count; ++i)
    key.push_back(buffers[i] ? alignmentOf(buffers[i]) : 256);
  cudnnStatus_t status =
      cudnnSetStream(handle.library, static_cast<cudaStream_t>(stream));
  if (status != CUDNN_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cudnnSetStream", status);
  auto found = handle.attentions.find(key);
  if (found == handle.attentions.end()) {
    if (capturing(stream))
      return refusePlanInCapture(error, errorSize, "attention");
    AttentionProblem problem(descriptor);
    auto plan = std::make_unique<AttentionPlan>();
    std::vector<Candidate> candidates;
    PlanTarget target;
    target.handle = handle.library;
    // cuDNN's heuristics rank its attention engines well: the first plan
    // that finalizes is kept.
    if (gradient && cudnnGetVersion() < 90600)
      return fail(
          error, errorSize,
          "the attention gradient needs cuDNN 9.6 or later (which "
          "clears dq's accumulator itself), not %s",
          cuda_plugin::libraryVersion("cuDNN", cudnnGetVersion()).c_str());
    if (int failed =
            planAttention(problem, gradient, buffers, target, workspaceBytes, 1,
                          *plan, candidates, error, errorSize))
      return failed;
    plan->workspaceBytes = candidates.front().workspaceBytes;
    plan->plan.swap(*candidates.front().plan);
    found = handle.attentions.emplace(std::move(key), std::move(plan)).first;
  }
  const AttentionPlan &plan = *found->second;
  status = executeAttention(handle.library, plan, plan.plan,
                            plan.workspaceBytes, buffers, workspace);
  if (status != CUDNN_STATUS_SUCCESS)
    return failStatus(error, errorSize, "cudnnBackendExecute", status);
  return 0;
}

const char *describe() {
  static const std::string name =
      cuda_plugin::libraryVersion("cuDNN", cudnnGetVersion());
  return name.c_str();
}

const kiln_dnn_plugin_t table = {
    KILN_DNN_PLUGIN_VERSION, create, destroy, conv, describe, attention};

} // namespace
} // namespace cuda_dnn
} // namespace kiln

extern "C" __attribute__((visibility("default"))) const kiln_dnn_plugin_t *
kiln_dnn_plugin(void) {
  return &kiln::cuda_dnn::table;
}
