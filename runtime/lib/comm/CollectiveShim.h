//===- CollectiveShim.h - The CollectiveAbi.h slots' functions --*- C++ -*-===//
//
// Code compiled from collective ops calls through exported pointer slots
// named KILN_COMM_SLOT_PREFIX + "rank", "size", "start", "wait"
// (kiln/CollectiveAbi.h). After loading a module the runtime stores the
// functions below in every slot it exports; each acts on
// CollectiveCall::current(), the call in progress on this thread. Binding
// the slots loads no plug-in: the communicator of the call brings its own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_COLLECTIVESHIM_H
#define KILN_RUNTIME_LIB_COMM_COLLECTIVESHIM_H

#include <vector>

namespace kiln {
namespace runtime {
namespace comm {

struct CollectiveFunction {
  /// The slot's name without KILN_COMM_SLOT_PREFIX.
  const char *name;
  void *address;
};

/// The four functions of CollectiveAbi.h.
const std::vector<CollectiveFunction> &collectiveFunctions();

} // namespace comm
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_COLLECTIVESHIM_H
