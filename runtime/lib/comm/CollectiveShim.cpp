//===- CollectiveShim.cpp - The CollectiveAbi.h slots' functions ----------===//
//
// Compiled code runs only inside calls, and every call of a module with
// these slots has a current CollectiveCall; the checks for NULL keep a
// stray call (code run some other way) from crashing.
//
//===----------------------------------------------------------------------===//

#include "CollectiveShim.h"

#include "CollectiveCall.h"

#include "kiln/CollectiveAbi.h"

namespace kiln {
namespace runtime {
namespace comm {
namespace {

int64_t commRank() {
  CollectiveCall *call = CollectiveCall::current();
  return call ? call->rank() : 0;
}

int64_t commSize() {
  CollectiveCall *call = CollectiveCall::current();
  return call ? call->size() : 1;
}

int64_t commStart(int32_t kind, int32_t reduction, int32_t dtype,
                  const void *input, void *output, int64_t count, int64_t root,
                  const int64_t *groups, int64_t groupCount, int64_t groupSize,
                  const int64_t *pairs, int64_t pairCount) {
  CollectiveCall *call = CollectiveCall::current();
  if (!call)
    return -1;
  kiln_comm_plugin_collective_t collective = {
      kind, reduction, dtype,      input,     output, count,
      root, groups,    groupCount, groupSize, pairs,  pairCount};
  // Nothing may be thrown into the compiled code.
  try {
    return call->start(collective);
  } catch (...) {
    call->failOutOfMemory();
    return -1;
  }
}

void commWait(int64_t handle, const void *input, void *output) {
  CollectiveCall *call = CollectiveCall::current();
  if (!call)
    return;
  try {
    call->wait(handle, input, output);
  } catch (...) {
    call->failOutOfMemory();
  }
}

// The slots' types, so that a change of the ABI fails to compile here.
constexpr kiln_comm_rank_fn kRank = commRank;
constexpr kiln_comm_size_fn kSize = commSize;
constexpr kiln_comm_start_fn kStart = commStart;
constexpr kiln_comm_wait_fn kWait = commWait;

template <typename F> void *address(F function) {
  return reinterpret_cast<void *>(function);
}

} // namespace

const std::vector<CollectiveFunction> &collectiveFunctions() {
  static const std::vector<CollectiveFunction> functions = {
      {"rank", address(kRank)},
      {"size", address(kSize)},
      {"start", address(kStart)},
      {"wait", address(kWait)},
  };
  return functions;
}

} // namespace comm
} // namespace runtime
} // namespace kiln
