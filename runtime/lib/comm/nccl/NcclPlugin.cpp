//===- NcclPlugin.cpp - The device communicator plug-in over NCCL ---------===//
//
// Exports kiln_device_comm_plugin, the table of DeviceCommPlugin.h. A group
// is an NCCL communicator; each collective is queued on the caller's stream
// as one NCCL collective, or as one NCCL group of sends and receives for
// all-to-all and permutations. The plug-in links libnccl only: the one
// driver call it needs (zeroing a permutation's output that no rank sends
// to) is resolved from libcuda.so.1, which a process running a CUDA module
// has loaded already.
//
// start() checks the kind, element type and reduction before it touches the
// group, so a collective NCCL cannot carry fails the same way on every
// member, whatever the state of its group.
//
//===----------------------------------------------------------------------===//

#include "comm/DeviceCommPlugin.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"

#include <nccl.h>

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <new>

namespace kiln {
namespace comm_nccl {
namespace {

static_assert(sizeof(ncclUniqueId) <= KILN_DEVICE_COMM_MAX_ID_BYTES,
              "an ncclUniqueId must fit the interface's id buffer");

/// Writes a printf-style message into error[0 .. errorSize - 1], truncated
/// and NUL-terminated, and returns the failure code.
__attribute__((format(printf, 3, 4))) int fail(char *error, size_t errorSize,
                                               const char *format, ...) {
  if (error && errorSize > 0) {
    va_list arguments;
    va_start(arguments, format);
    std::vsnprintf(error, errorSize, format, arguments);
    va_end(arguments);
  }
  return 1;
}

/// Reports a failed NCCL call. NCCL's name for the result is generic
/// ("unhandled cuda error"); its last error says what actually went wrong.
int failNccl(const char *call, ncclResult_t result, ncclComm_t comm,
             char *error, size_t errorSize) {
  const char *detail = ncclGetLastError(comm);
  bool hasDetail = detail && *detail;
  return fail(error, errorSize, "%s failed: %s%s%s", call,
              ncclGetErrorString(result), hasDetail ? ": " : "",
              hasDetail ? detail : "");
}

/// One member's view of a group: NCCL's communicator and the group's size,
/// which the collectives that split their buffers into blocks need.
struct Group {
  ncclComm_t comm;
  int size;
};

//===----------------------------------------------------------------------===//
// Element types and reductions
//===----------------------------------------------------------------------===//

/// How the elements of a collective travel: NCCL's type, and how many
/// elements of that type make one kiln element.
struct Carrier {
  ncclDataType_t type;
  size_t width;
};

bool reduces(int32_t kind) {
  return kind == KILN_COLLECTIVE_ALL_REDUCE ||
         kind == KILN_COLLECTIVE_REDUCE_SCATTER;
}

const char *kindName(int32_t kind) {
  switch (kind) {
  case KILN_COLLECTIVE_ALL_REDUCE:
    return "all-reduce";
  case KILN_COLLECTIVE_ALL_GATHER:
    return "all-gather";
  case KILN_COLLECTIVE_REDUCE_SCATTER:
    return "reduce-scatter";
  case KILN_COLLECTIVE_BROADCAST:
    return "broadcast";
  case KILN_COLLECTIVE_ALL_TO_ALL:
    return "all-to-all";
  case KILN_COLLECTIVE_PERMUTE:
    return "permute";
  }
  return nullptr;
}

/// The carrier of `dtype` in a collective of `kind`. NCCL has no 16-bit
/// integers: collectives that only move data move them as pairs of bytes,
/// and reductions of them are refused. i1 elements are one byte each.
int carrierOf(int32_t dtype, int32_t kind, Carrier &carrier, char *error,
              size_t errorSize) {
  auto type = ElementType(dtype);
  if (dtype < 0 || !isValidElementType(type))
    return fail(error, errorSize, "nccl: unknown element type code %d", dtype);
  carrier.width = 1;
  switch (type) {
  case ElementType::F32:
    carrier.type = ncclFloat32;
    return 0;
  case ElementType::F64:
    carrier.type = ncclFloat64;
    return 0;
  case ElementType::F16:
    carrier.type = ncclFloat16;
    return 0;
  case ElementType::BF16:
    carrier.type = ncclBfloat16;
    return 0;
  case ElementType::I1:
  case ElementType::UI8:
    carrier.type = ncclUint8;
    return 0;
  case ElementType::I8:
    carrier.type = ncclInt8;
    return 0;
  case ElementType::I32:
    carrier.type = ncclInt32;
    return 0;
  case ElementType::UI32:
    carrier.type = ncclUint32;
    return 0;
  case ElementType::I64:
    carrier.type = ncclInt64;
    return 0;
  case ElementType::UI64:
    carrier.type = ncclUint64;
    return 0;
  case ElementType::I16:
  case ElementType::UI16:
    if (reduces(kind))
      return fail(error, errorSize,
                  "nccl: no %s of %s elements: NCCL has no 16-bit integer "
                  "type",
                  kindName(kind), elementTypeName(type));
    carrier.type = ncclUint8;
    carrier.width = 2;
    return 0;
  }
  return fail(error, errorSize, "nccl: unknown element type code %d", dtype);
}

/// NCCL's operation for `reduction` on `dtype`. i1 elements are 0 or 1, so
/// their sum (a logical or) is their maximum. Float maxima and minima are
/// NCCL's, which need not propagate NaN or order -0 below +0 as the
/// reference evaluator does; NCCL offers nothing closer.
int operationOf(int32_t reduction, int32_t dtype, ncclRedOp_t &op,
                char *error, size_t errorSize) {
  switch (reduction) {
  case KILN_REDUCTION_SUM:
    op = ElementType(dtype) == ElementType::I1 ? ncclMax : ncclSum;
    return 0;
  case KILN_REDUCTION_MAX:
    op = ncclMax;
    return 0;
  case KILN_REDUCTION_MIN:
    op = ncclMin;
    return 0;
  }
  return fail(error, errorSize, "nccl: unknown reduction code %d", reduction);
}

//===----------------------------------------------------------------------===//
// The CUDA driver
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdeviceptr = unsigned long long;
using MemsetD8AsyncFn = CUresult (*)(CUdeviceptr, unsigned char, size_t,
                                     cudaStream_t);
using GetErrorStringFn = CUresult (*)(CUresult, const char **);

/// The driver entry points, resolved once; memsetD8Async is null and
/// `problem` says why when the driver cannot be used.
struct Driver {
  MemsetD8AsyncFn memsetD8Async = nullptr;
  GetErrorStringFn getErrorString = nullptr;
  char problem[256] = "";
};

/// Loads the driver on first use. The handle is kept for the life of the
/// process: the driver stays loaded by the CUDA module's runtime anyway.
const Driver &driver() {
  static const Driver loaded = [] {
    Driver result;
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = dlerror();
      std::snprintf(result.problem, sizeof(result.problem),
                    "the CUDA driver (libcuda.so.1) cannot be loaded: %s",
                    reason ? reason : "unknown reason");
      return result;
    }
    result.memsetD8Async =
        reinterpret_cast<MemsetD8AsyncFn>(dlsym(handle, "cuMemsetD8Async"));
    result.getErrorString =
        reinterpret_cast<GetErrorStringFn>(dlsym(handle, "cuGetErrorString"));
    if (!result.memsetD8Async)
      std::snprintf(result.problem, sizeof(result.problem),
                    "the CUDA driver (libcuda.so.1) lacks cuMemsetD8Async");
    return result;
  }();
  return loaded;
}

/// Queues the zeroing of `bytes` bytes at `output` on `stream`.
int zeroFill(void *output, size_t bytes, cudaStream_t stream, char *error,
             size_t errorSize) {
  const Driver &cuda = driver();
  if (!cuda.memsetD8Async)
    return fail(error, errorSize,
                "nccl: cannot zero the output of a permute that receives "
                "nothing: %s",
                cuda.problem);
  CUresult result = cuda.memsetD8Async(reinterpret_cast<CUdeviceptr>(output),
                                       0, bytes, stream);
  if (result == 0)
    return 0;
  const char *description = nullptr;
  if (!cuda.getErrorString || cuda.getErrorString(result, &description) != 0 ||
      !description)
    description = "unknown error";
  return fail(error, errorSize, "nccl: cuMemsetD8Async failed: %s (%d)",
              description, result);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Collects the sends and receives of one NCCL group call, remembering the
/// first that fails. The group is ended whatever happens, as NCCL requires
/// of every ncclGroupStart; a failure inside it surfaces there as well.
class PointToPoint {
public:
  PointToPoint(ncclComm_t comm, const Carrier &carrier, cudaStream_t stream)
      : comm(comm), carrier(carrier), stream(stream) {
    check("ncclGroupStart", ncclGroupStart());
    started = failedCall == nullptr;
  }

  void send(const void *input, size_t items, int peer) {
    if (started)
      check("ncclSend",
            ncclSend(input, items, carrier.type, peer, comm, stream));
  }

  void recv(void *output, size_t items, int peer) {
    if (started)
      check("ncclRecv",
            ncclRecv(output, items, carrier.type, peer, comm, stream));
  }

  /// Ends the group; reports the first failure.
  int finish(char *error, size_t errorSize) {
    if (started)
      check("ncclGroupEnd", ncclGroupEnd());
    if (!failedCall)
      return 0;
    return failNccl(failedCall, failure, comm, error, errorSize);
  }

private:
  void check(const char *call, ncclResult_t result) {
    if (result != ncclSuccess && !failedCall) {
      failedCall = call;
      failure = result;
    }
  }

  ncclComm_t comm;
  Carrier carrier;
  cudaStream_t stream;
  bool started = false;
  const char *failedCall = nullptr;
  ncclResult_t failure = ncclSuccess;
};

/// Fails unless the collective's block split, root and peers fit a group
/// of `size` members.
int checkShape(const kiln_device_comm_collective_t &collective, int size,
               char *error, size_t errorSize) {
  const int32_t kind = collective.kind;
  if ((kind == KILN_COLLECTIVE_REDUCE_SCATTER ||
       kind == KILN_COLLECTIVE_ALL_TO_ALL) &&
      collective.count % size != 0)
    return fail(error, errorSize,
                "nccl: cannot split the %lld elements of a %s into %d blocks",
                (long long)collective.count, kindName(kind), size);
  if (kind == KILN_COLLECTIVE_BROADCAST &&
      (collective.root < 0 || collective.root >= size))
    return fail(error, errorSize,
                "nccl: broadcast from rank %lld of a group of %d",
                (long long)collective.root, size);
  const int64_t to = collective.send_to, from = collective.recv_from;
  if (kind == KILN_COLLECTIVE_PERMUTE &&
      (to < -1 || to >= size || from < -1 || from >= size))
    return fail(error, errorSize,
                "nccl: permute sending to rank %lld and receiving from rank "
                "%lld of a group of %d",
                (long long)to, (long long)from, size);
  return 0;
}

int startCollective(const Group &group,
                    const kiln_device_comm_collective_t &collective,
                    const Carrier &carrier, ncclRedOp_t op, char *error,
                    size_t errorSize) {
  if (checkShape(collective, group.size, error, errorSize))
    return 1;
  // Every member starts the same collectives, so all of them skip this one.
  if (collective.count == 0)
    return 0;

  const int size = group.size;
  auto *stream = static_cast<cudaStream_t>(collective.stream);
  const size_t items = size_t(collective.count) * carrier.width;
  const size_t bytes = size_t(collective.count) *
                       elementTypeSize(ElementType(collective.dtype));
  const char *call = nullptr;
  ncclResult_t result = ncclSuccess;
  switch (collective.kind) {
  case KILN_COLLECTIVE_ALL_REDUCE:
    call = "ncclAllReduce";
    result = ncclAllReduce(collective.input, collective.output, items,
                           carrier.type, op, group.comm, stream);
    break;
  case KILN_COLLECTIVE_ALL_GATHER:
    call = "ncclAllGather";
    result = ncclAllGather(collective.input, collective.output, items,
                           carrier.type, group.comm, stream);
    break;
  case KILN_COLLECTIVE_REDUCE_SCATTER:
    call = "ncclReduceScatter";
    result = ncclReduceScatter(collective.input, collective.output,
                               items / size, carrier.type, op, group.comm,
                               stream);
    break;
  case KILN_COLLECTIVE_BROADCAST:
    call = "ncclBroadcast";
    result = ncclBroadcast(collective.input, collective.output, items,
                           carrier.type, int(collective.root), group.comm,
                           stream);
    break;
  case KILN_COLLECTIVE_ALL_TO_ALL: {
    const auto *input = static_cast<const char *>(collective.input);
    auto *output = static_cast<char *>(collective.output);
    PointToPoint exchange(group.comm, carrier, stream);
    for (int peer = 0; peer < size; ++peer) {
      exchange.send(input + peer * (bytes / size), items / size, peer);
      exchange.recv(output + peer * (bytes / size), items / size, peer);
    }
    return exchange.finish(error, errorSize);
  }
  case KILN_COLLECTIVE_PERMUTE: {
    const int64_t to = collective.send_to, from = collective.recv_from;
    if (to >= 0 || from >= 0) {
      PointToPoint exchange(group.comm, carrier, stream);
      if (to >= 0)
        exchange.send(collective.input, items, int(to));
      if (from >= 0)
        exchange.recv(collective.output, items, int(from));
      if (exchange.finish(error, errorSize))
        return 1;
    }
    if (from >= 0)
      return 0;
    return zeroFill(collective.output, bytes, stream, error, errorSize);
  }
  }
  if (result == ncclSuccess)
    return 0;
  return failNccl(call, result, group.comm, error, errorSize);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

int makeId(void *id, char *error, size_t errorSize) {
  ncclUniqueId uniqueId;
  ncclResult_t result = ncclGetUniqueId(&uniqueId);
  if (result != ncclSuccess)
    return failNccl("ncclGetUniqueId", result, nullptr, error, errorSize);
  std::memcpy(id, &uniqueId, sizeof(uniqueId));
  return 0;
}

int create(void **out, const void *id, int64_t size, int64_t rank,
           char *error, size_t errorSize) {
  if (size < 1 || size > INT_MAX || rank < 0 || rank >= size)
    return fail(error, errorSize,
                "nccl: cannot join a group as rank %lld of %lld",
                (long long)rank, (long long)size);
  auto *group = new (std::nothrow) Group{nullptr, int(size)};
  if (!group)
    return fail(error, errorSize, "nccl: out of memory");
  ncclUniqueId uniqueId;
  std::memcpy(&uniqueId, id, sizeof(uniqueId));
  ncclResult_t result =
      ncclCommInitRank(&group->comm, int(size), uniqueId, int(rank));
  if (result != ncclSuccess) {
    failNccl("ncclCommInitRank", result, nullptr, error, errorSize);
    // A communicator that failed part of the way is released by aborting.
    if (group->comm)
      ncclCommAbort(group->comm);
    delete group;
    return 1;
  }
  *out = group;
  return 0;
}

void destroy(void *opaque) {
  auto *group = static_cast<Group *>(opaque);
  if (!group)
    return;
  // Waits for the work queued on the communicator; a failure leaves
  // nothing the caller could do.
  ncclCommDestroy(group->comm);
  delete group;
}

int start(void *opaque, const kiln_device_comm_collective_t *collective,
          char *error, size_t errorSize) {
  if (!collective)
    return fail(error, errorSize, "nccl: no collective to start");
  const int32_t kind = collective->kind;
  if (!kindName(kind))
    return fail(error, errorSize, "nccl: unknown collective kind %d", kind);
  Carrier carrier = {ncclUint8, 1};
  if (carrierOf(collective->dtype, kind, carrier, error, errorSize))
    return 1;
  // The other kinds carry reduction 0, which means nothing to them.
  ncclRedOp_t op = ncclSum;
  if (reduces(kind) &&
      operationOf(collective->reduction, collective->dtype, op, error,
                  errorSize))
    return 1;
  if (collective->count < 0)
    return fail(error, errorSize, "nccl: %s of %lld elements", kindName(kind),
                (long long)collective->count);
  if (!opaque)
    return fail(error, errorSize, "nccl: %s without a group", kindName(kind));
  return startCollective(*static_cast<Group *>(opaque), *collective, carrier,
                         op, error, errorSize);
}

const kiln_device_comm_plugin_t table = {
    KILN_DEVICE_COMM_PLUGIN_VERSION,
    "nccl",
    int64_t(sizeof(ncclUniqueId)),
    makeId,
    create,
    destroy,
    start,
};

} // namespace
} // namespace comm_nccl
} // namespace kiln

extern "C" __attribute__((visibility("default"))) const
    kiln_device_comm_plugin_t *
    kiln_device_comm_plugin(void) {
  return &kiln::comm_nccl::table;
}
