//===- ElasticRun.h - The generations of an elastic run ---------*- C++ -*-===//
//
// A worker's side of an elastic run's rendezvous. The run's workers agree,
// through its store and nothing else, on the members of each generation:
//
//   <run>/elastic/generation         the last generation whose members are
//                                    settled
//   <run>/elastic/done               set when the run has finished
//   <run>/elastic/g<G>/arrivals      a counter: each worker joining G adds
//                                    one and is the a-th to arrive
//   <run>/elastic/g<G>/arrival/<a>   its commit serial and name
//   <run>/elastic/g<G>/size          K, written once when G is settled
//                                    (the first writer wins); "0 A" when
//                                    G could not be formed in time:
//                                    arrivals 1..A fail, later ones try
//                                    G + 1
//
// Every worker waiting at G may settle it, so that no worker's death
// stalls a rendezvous: at once when the maximum has arrived, otherwise when
// at least the minimum has and no one else arrived for the settle time;
// after generation 0, only when one of its first K arrivals holds the
// run's state (commit serial >= 0), so that workers that have just started
// never go on alone. Arrivals 1 to K are ranks 0 to K - 1; a later arrival
// tries G + 1, where it waits until the members of G see it at a commit
// (waiting()) and come. Workers that survive a failure of G join G + 1; a
// worker that starts joins the one after the last settled. The counter
// makes the order of arrival, and so the ranks, one agreed fact, on Redis
// (INCRBY, SET NX) and on a shared directory (flock, link).
//
// Each generation's group is a GlooCommunicator over the keys
// <run>/g<G>, with the detection timeout as its time limit: a member that
// dies is noticed when its connections close, one that hangs within the
// timeout.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_GLOO_ELASTICRUN_H
#define KILN_RUNTIME_LIB_COMM_GLOO_ELASTICRUN_H

#include "GlooCommunicator.h"
#include "KeyValueStore.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kiln {
namespace comm_gloo {

/// The environment of an elastic worker (what kiln-launch --nproc MIN:MAX
/// sets): KILN_STORE, KILN_RUN_ID (default "kiln"), KILN_ELASTIC=MIN:MAX,
/// KILN_ELASTIC_TIMEOUT (seconds to notice a member that hangs; default 5),
/// KILN_ELASTIC_RENDEZVOUS_TIMEOUT (seconds a rendezvous may wait for the
/// minimum, or a waiting worker for admission; default 60),
/// KILN_ELASTIC_SETTLE (seconds without a new arrival that settle a
/// generation; default 1), KILN_WORKER_ID (default HOST:PID) and
/// KILN_GLOO_HOSTNAME.
struct ElasticConfig {
  std::string store;
  std::string runId = "kiln";
  int64_t minSize = 1, maxSize = 1;
  std::chrono::milliseconds timeout{5000};
  std::chrono::milliseconds rendezvousTimeout{60000};
  std::chrono::milliseconds settle{1000};
  std::string workerId;
  std::string hostname;

  static bool fromEnvironment(ElasticConfig &out, std::string &error);
};

/// What one rendezvous settled.
struct Generation {
  /// -1: the run had finished before this worker was admitted.
  int64_t generation = -1;
  int64_t rank = 0, size = 0, root = 0;
  std::unique_ptr<GlooCommunicator> comm;
};

class ElasticRun {
public:
  static std::unique_ptr<ElasticRun> open(const ElasticConfig &config,
                                          std::string &error);

  /// Joins the generation after the last one joined (after the last settled
  /// one, for a worker that has joined none) with \p commitSerial.
  bool rendezvous(int64_t commitSerial, Generation &out, std::string &error);
  /// Whether workers wait for the generation after the one joined last, and
  /// the run has room for them.
  bool waiting(bool &result, std::string &error);
  bool finish(std::string &error);

private:
  ElasticRun() = default;
  std::string key(const std::string &name) const;
  std::string generationKey(int64_t generation, const std::string &name) const;
  /// Waits until \p generation is settled, settling it when this worker
  /// sees it due: its size in \p size (-1 when the run finished); for a
  /// generation given up (size 0), \p abandonedAt is how many workers had
  /// arrived by then.
  bool settle(int64_t generation, int64_t &size, int64_t &abandonedAt,
              std::string &error);
  bool finished(bool &result, std::string &error);
  /// The commit serial that arrival \p arrival of \p generation wrote.
  bool arrivalSerial(int64_t generation, int64_t arrival,
                     std::optional<int64_t> &serial, std::string &error);

  ElasticConfig config;
  StoreAddress address;
  std::unique_ptr<KeyValueStore> store;
  /// The generation joined last; -1 before the first.
  int64_t joined = -1;
  int64_t joinedSize = 0;
};

} // namespace comm_gloo
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_GLOO_ELASTICRUN_H
