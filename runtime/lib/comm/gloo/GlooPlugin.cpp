//===- GlooPlugin.cpp - The communicator plug-in over Gloo ----------------===//
//
// Exports kiln_comm_plugin, the table of CommPlugin.h, over Gloo's TCP
// transport. Unlike MPI, nothing is initialized process-wide: each
// communicator connects to the run's other ranks through the store the
// environment names (GlooCommunicator.h), and releasing it closes its
// connections, so a process can leave a group and form another. Exports
// also kiln_elastic_plugin (ElasticPlugin.h), the rendezvous of an elastic
// run's generations (ElasticRun.h).
//
//===----------------------------------------------------------------------===//

#include "ElasticRun.h"
#include "GlooCommunicator.h"

#include "comm/ElasticPlugin.h"
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

// The elastic table (ElasticPlugin.h): each generation's group is a
// GlooCommunicator of the table above.

int elasticOpen(void **out, char *error, size_t errorSize) {
  std::string message;
  ElasticConfig config;
  if (!ElasticConfig::fromEnvironment(config, message))
    return report(message, error, errorSize);
  std::unique_ptr<ElasticRun> run = ElasticRun::open(config, message);
  if (!run)
    return report(message, error, errorSize);
  *out = run.release();
  return 0;
}

void elasticClose(void *run) { delete static_cast<ElasticRun *>(run); }

int elasticRendezvous(void *run, int64_t commitSerial,
                      kiln_elastic_plugin_generation_t *out, char *error,
                      size_t errorSize) {
  std::string message;
  Generation generation;
  if (!static_cast<ElasticRun *>(run)->rendezvous(commitSerial, generation,
                                                  message))
    return report(message, error, errorSize);
  out->generation = generation.generation;
  out->rank = generation.rank;
  out->size = generation.size;
  out->root = generation.root;
  out->comm = generation.comm.release();
  return 0;
}

int elasticWaiting(void *run, int *waiting, char *error, size_t errorSize) {
  std::string message;
  bool result = false;
  if (!static_cast<ElasticRun *>(run)->waiting(result, message))
    return report(message, error, errorSize);
  *waiting = result ? 1 : 0;
  return 0;
}

int elasticFinish(void *run, char *error, size_t errorSize) {
  std::string message;
  if (!static_cast<ElasticRun *>(run)->finish(message))
    return report(message, error, errorSize);
  return 0;
}

const kiln_elastic_plugin_t elasticTable = {
    KILN_ELASTIC_PLUGIN_VERSION, elasticOpen,    elasticClose,
    elasticRendezvous,           elasticWaiting, elasticFinish};

} // namespace
} // namespace comm_gloo
} // namespace kiln

extern "C" __attribute__((visibility("default"))) const kiln_comm_plugin_t *
kiln_comm_plugin(void) {
  return &kiln::comm_gloo::table;
}

extern "C" __attribute__((visibility("default"))) const kiln_elastic_plugin_t *
kiln_elastic_plugin(void) {
  return &kiln::comm_gloo::elasticTable;
}
