//===- GlooCommunicator.h - A kiln communicator over Gloo -------*- C++ -*-===//
//
// One per kiln_comm_t over Gloo's TCP transport. The ranks find each other
// through a store (Gloo's FileStore on a shared directory, or RedisStore),
// named with their rank and the run's size by the environment - what a
// launcher sets - rather than by an engine that started them, so a group
// can be formed again in a live process.
//
// Every replica group that communicates gets a Gloo context of its own for
// the data of its collectives, connected the first time the group is seen
// (all its members are then starting the same collective, as the runtime
// has checked). The runtime's comparisons between ranks go point to point
// over one context of all ranks, made with the communicator, so that a
// member busy elsewhere is reported after the comparison's time limit
// rather than keeping a connection from forming.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_GLOO_GLOOCOMMUNICATOR_H
#define KILN_RUNTIME_LIB_COMM_GLOO_GLOOCOMMUNICATOR_H

#include "comm/CommPlugin.h"

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace comm_gloo {

/// Where a rank finds the others: read from KILN_RANK, KILN_WORLD_SIZE,
/// KILN_STORE (file:DIRECTORY or redis://HOST[:PORT]), KILN_RUN_ID (the
/// prefix of the run's keys in the store; default "kiln"),
/// KILN_GLOO_HOSTNAME (the address others reach this rank at; default the
/// host's name) and KILN_GLOO_TIMEOUT (seconds a connection or a
/// collective may take; default 300).
struct Rendezvous {
  int64_t rank = 0;
  int64_t size = 1;
  std::string store;
  std::string runId = "kiln";
  std::string hostname;
  std::chrono::milliseconds timeout{300 * 1000};

  /// False, with what is missing or malformed in \p error.
  static bool fromEnvironment(Rendezvous &out, std::string &error);
};

/// The address other ranks reach this one at: KILN_GLOO_HOSTNAME, else
/// the host's name.
bool hostnameFromEnvironment(std::string &hostname, std::string &error);

class GlooCommunicator {
public:
  /// Connects this rank to the others of the run; \p serial tells apart
  /// the communicators one process creates (the n-th of each rank meet).
  static GlooCommunicator *create(const Rendezvous &rendezvous, int64_t serial,
                                  std::string &error);

  int64_t rank() const { return rankValue; }
  int64_t size() const { return sizeValue; }

  bool minAll(int64_t *values, int64_t count, std::string &error);
  bool gatherAll(const int64_t *values, int64_t count, int64_t *all,
                 std::string &error);
  bool exchangeGroup(const int64_t *members, int64_t memberCount,
                     const int64_t *values, int64_t count, int64_t *all,
                     int64_t timeoutMs, std::string &error);
  /// Gloo's collectives block: start runs the collective to completion and
  /// wait only retires its handle.
  bool start(const kiln_comm_plugin_collective_t &collective, int64_t &handle,
             std::string &error);
  bool wait(int64_t handle, std::string &error);

private:
  GlooCommunicator() = default;

  /// The data or comparison context of the ranks \p members (increasing,
  /// this rank among them), connected the first time; null with \p error
  /// set when the connection fails within \p timeout.
  std::shared_ptr<gloo::Context> context(const std::vector<int64_t> &members,
                                         bool comparisons,
                                         std::chrono::milliseconds timeout,
                                         std::string &error);
  bool runCollective(const kiln_comm_plugin_collective_t &collective,
                     std::string &error);
  bool permute(const kiln_comm_plugin_collective_t &collective,
               std::string &error);

  int64_t rankValue = 0, sizeValue = 1;
  std::string prefix;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<gloo::rendezvous::Store> store;
  std::shared_ptr<gloo::transport::Device> device;
  /// Ranks 0 to size - 1, and the comparison context among all of them
  /// (made with the communicator; null in a run of one rank).
  std::vector<int64_t> everyone;
  std::shared_ptr<gloo::Context> world;
  /// By (members, comparisons).
  std::map<std::pair<std::vector<int64_t>, bool>,
           std::shared_ptr<gloo::Context>>
      contexts;
  /// The tag of a context's next collective, so that no two in a row share
  /// one.
  std::map<gloo::Context *, uint32_t> nextTag;
  /// How many exchanges each group of members has made: the members number
  /// them alike, whatever the other ranks do.
  std::map<std::vector<int64_t>, uint32_t> exchangeSerial;
  /// Handles given out by start and not yet waited for.
  std::vector<int64_t> open;
  int64_t nextHandle = 0;
};

} // namespace comm_gloo
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_GLOO_GLOOCOMMUNICATOR_H
