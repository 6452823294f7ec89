//===- CudnnGraph.h - cuDNN graph-API descriptors and plans -----*- C++ -*-===//
//
// What the plug-in's convolutions and attention share: backend descriptors
// that destroy themselves, a builder that stops at the first failure, and
// the ranked execution plans of an operation graph. Plans are made for the
// device of a cuDNN handle or, without one, for the device a
// CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR describes (cuDNN's device-less
// planning), which is how a machine without a GPU checks that cuDNN has
// an engine for a graph.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDNN_CUDNNGRAPH_H
#define KILN_RUNTIME_LIB_CUDA_CUDNN_CUDNNGRAPH_H

#include "cuda/PluginSupport.h"

#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace kiln {
namespace cuda_dnn {

inline int failStatus(char *error, size_t errorSize, const char *what,
                      cudnnStatus_t status) {
  char detail[256] = "";
  cudnnGetLastErrorString(detail, sizeof(detail));
  return cuda_plugin::fail(error, errorSize, "cuDNN: %s failed: %s%s%s", what,
                           cudnnGetErrorString(status), *detail ? ": " : "",
                           detail);
}

/// Dense row-major strides of `dims` (not empty).
inline std::vector<int64_t> denseStrides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

/// One backend descriptor, destroyed with its owner.
class Descriptor {
public:
  Descriptor() = default;
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  ~Descriptor() {
    if (descriptor)
      cudnnBackendDestroyDescriptor(descriptor);
  }
  cudnnStatus_t create(cudnnBackendDescriptorType_t type) {
    return cudnnBackendCreateDescriptor(type, &descriptor);
  }
  cudnnBackendDescriptor_t get() const { return descriptor; }
  void swap(Descriptor &other) { std::swap(descriptor, other.descriptor); }

private:
  cudnnBackendDescriptor_t descriptor = nullptr;
};

/// Sets attributes and finalizes descriptors, stopping at the first
/// failure, which it keeps for the message.
class Builder {
public:
  template <typename T>
  Builder &set(const Descriptor &d, cudnnBackendAttributeName_t name,
               cudnnBackendAttributeType_t type, const T *values,
               int64_t count = 1) {
    if (status == CUDNN_STATUS_SUCCESS)
      record(cudnnBackendSetAttribute(d.get(), name, type, count, values),
             "cudnnBackendSetAttribute");
    return *this;
  }
  Builder &create(Descriptor &d, cudnnBackendDescriptorType_t type) {
    if (status == CUDNN_STATUS_SUCCESS)
      record(d.create(type), "cudnnBackendCreateDescriptor");
    return *this;
  }
  Builder &finalize(const Descriptor &d, const char *what) {
    if (status == CUDNN_STATUS_SUCCESS)
      record(cudnnBackendFinalize(d.get()), what);
    return *this;
  }
  bool ok() const { return status == CUDNN_STATUS_SUCCESS; }
  cudnnStatus_t result() const { return status; }
  int failure(char *error, size_t errorSize) const {
    return failStatus(error, errorSize, what, status);
  }

private:
  void record(cudnnStatus_t result, const char *step) {
    status = result;
    what = step;
  }
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  const char *what = "";
};

/// An execution plan that may run a graph.
struct Candidate {
  std::unique_ptr<Descriptor> plan;
  int64_t workspaceBytes;
};

/// The device plans are made for: a handle's, or the one a device-property
/// descriptor describes (handle null).
struct PlanTarget {
  cudnnHandle_t handle = nullptr;
  cudnnBackendDescriptor_t deviceProperties = nullptr;
};

/// Appends to `candidates`, best first, up to `wanted` execution plans of
/// `graph` that finalize for `target`, need at most `workspaceBytes` and
/// whose engine configuration `allowed` accepts, from cuDNN's heuristics
/// (mode A, then the fallback list). The configurations the plans refer to
/// are kept in `configs`. `refusals`, if given, receives the status of
/// each plan that failed to finalize: without a device (a PlanTarget of
/// device properties) an engine that compiles its kernels at run time
/// (NVRTC) fails at loading them, CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER,
/// only after it has taken the graph and compiled them.
void rankedPlans(const Descriptor &graph, const PlanTarget &target,
                 size_t wanted, size_t workspaceBytes,
                 const std::function<bool(const Descriptor &)> &allowed,
                 std::vector<std::unique_ptr<Descriptor>> &configs,
                 std::vector<Candidate> &candidates,
                 std::vector<cudnnStatus_t> *refusals = nullptr);

} // namespace cuda_dnn
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDNN_CUDNNGRAPH_H
