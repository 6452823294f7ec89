//===- GlooPlugin.cpp - The communicator plug-in over Gloo ----------------===//
//
// Exports kiln_comm_plugin, the table of CommPlugin.h, over Gloo's TCP
// transport. Unlike MPI, nothing is initialized process-wide: each
// communicator connects to the run's other ranks through the store the
// environment names (GlooCommunicator.h), and releasing it closes its
// connections, so a process can leave a group and form another.
//
//===----------------------------------------------------------------------===//

#include "GlooCommunicator.h"

#include "comm/PluginTable.h"

#include <atomic>

namespace kiln {
namespace comm_gloo {
namespace {

using comm_plugin::report;

/// The communicators this process created, in order: the n-th of every
/// rank meet under the same keys.
std::atomic<int64_t> created{0};

int create(void **out, char *error, size_t errorSize) {
  std::string message;
  Rendezvous rendezvous;
  if (!Rendezvous::fromEnvironment(rendezvous, message))
    return report(message, error, errorSize);
  GlooCommunicator *comm =
      GlooCommunicator::create(rendezvous, created++, message);
  if (!comm)
    return report("rank " + std::to_string(rendezvous.rank) + " of " +
                      std::to_string(rendezvous.size) + ": " + message,
                  error, errorSize);
  *out = comm;
  return 0;
}

void destroy(void *comm) { delete static_cast<GlooCommunicator *>(comm); }

const kiln_comm_plugin_t table =
    comm_plugin::Forward<GlooCommunicator>::table("gloo", create, destroy);

} // namespace
} // namespace comm_gloo
} // namespace kiln

extern "C" __attribute__((visibility("default"))) const kiln_comm_plugin_t *
kiln_comm_plugin(void) {
  return &kiln::comm_gloo::table;
}
