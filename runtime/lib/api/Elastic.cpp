//===- Elastic.cpp - A worker of an elastic run ---------------------------===//
//
// kiln_elastic_t: the Gloo plug-in's rendezvous (ElasticPlugin.h) and one
// kiln_comm_t whose transport is replaced at each generation, so that the
// functions a host program bound to it stay bound across generations.
//
//===----------------------------------------------------------------------===//

#include "Status.h"

#include "comm/PluginLoader.h"
#include "comm/Transport.h"

#include <string>

using kiln::runtime::makeStatus;
using kiln::runtime::comm::Transport;

namespace {

/// The transport of a communicator between generations: every use fails.
class DetachedTransport final : public Transport {
public:
  DetachedTransport(int64_t rank, int64_t size, std::string why)
      : rankValue(rank), sizeValue(size), why(std::move(why)) {}
  int64_t rank() const override { return rankValue; }
  int64_t size() const override { return sizeValue; }
  bool minAll(int64_t *, int64_t, std::string &error) override {
    return detached(error);
  }
  bool gatherAll(const int64_t *, int64_t, int64_t *,
                 std::string &error) override {
    return detached(error);
  }
  bool exchangeGroup(const std::vector<int64_t> &, const int64_t *, int64_t,
                     int64_t *, int64_t, std::string &error) override {
    return detached(error);
  }
  bool start(const kiln_comm_plugin_collective_t &, int64_t &,
             std::string &error) override {
    return detached(error);
  }
  bool wait(int64_t, std::string &error) override { return detached(error); }
  std::mutex &callLock() override { return lock; }

private:
  bool detached(std::string &error) const {
    error = why;
    return false;
  }
  int64_t rankValue, sizeValue;
  std::string why;
  std::mutex lock;
};

} // namespace

struct kiln_elastic {
  const kiln_elastic_plugin_t *table = nullptr;
  void *run = nullptr;
  kiln_comm comm;
  int64_t generation = -1;
  char error[1024] = {};

  ~kiln_elastic() {
    comm.transport.reset();
    if (run)
      table->close(run);
  }

  kiln_status_t failure(const char *function) {
    error[sizeof(error) - 1] = '\0';
    return makeStatus(KILN_STATUS_COMM_ERROR,
                      std::string(function) + ": " + error);
  }
};

extern "C" {

kiln_status_t kiln_elastic_open(kiln_elastic_t **out) {
  if (!out)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_elastic_open: out_elastic is NULL");
  *out = nullptr;
  try {
    auto elastic = std::make_unique<kiln_elastic>();
    if (kiln_status_t status =
            kiln::runtime::comm::loadElasticPlugin(elastic->table))
      return status;
    if (elastic->table->open(&elastic->run, elastic->error,
                             sizeof(elastic->error)) != 0)
      return elastic->failure("kiln_elastic_open");
    elastic->comm.transport = std::make_unique<DetachedTransport>(
        0, 0, "this elastic worker has joined no generation yet "
              "(kiln_elastic_rendezvous)");
    *out = elastic.release();
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

void kiln_elastic_release(kiln_elastic_t *elastic) { delete elastic; }

kiln_comm_t *kiln_elastic_comm(kiln_elastic_t *elastic) {
  return elastic ? &elastic->comm : nullptr;
}

kiln_status_t kiln_elastic_rendezvous(kiln_elastic_t *elastic,
                                      int64_t commitSerial,
                                      int64_t *generation, int64_t *root) {
  if (!elastic || !generation || !root)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_elastic_rendezvous: elastic, generation and root "
                      "must not be NULL");
  try {
    // Leave the current generation first: closing its connections tells
    // members that have not noticed yet.
    std::string left =
        elastic->generation < 0
            ? "this elastic worker has joined no generation yet"
            : "this elastic worker left generation " +
                  std::to_string(elastic->generation) +
                  " and has not joined another";
    elastic->comm.transport =
        std::make_unique<DetachedTransport>(0, 0, left);
    kiln_elastic_plugin_generation_t joined = {};
    if (elastic->table->rendezvous(elastic->run, commitSerial, &joined,
                                   elastic->error,
                                   sizeof(elastic->error)) != 0)
      return elastic->failure("kiln_elastic_rendezvous");
    *generation = joined.generation;
    *root = joined.root;
    if (joined.generation < 0) {
      elastic->comm.transport = std::make_unique<DetachedTransport>(
          0, 0, "the elastic run finished before this worker joined it");
      return nullptr;
    }
    std::unique_ptr<Transport> transport;
    if (kiln_status_t status = kiln::runtime::comm::adoptGlooCommunicator(
            joined.comm, transport))
      return status;
    elastic->comm.transport = std::move(transport);
    elastic->generation = joined.generation;
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_elastic_members_waiting(kiln_elastic_t *elastic,
                                           int *waiting) {
  if (!elastic || !waiting)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_elastic_members_waiting: elastic and waiting "
                      "must not be NULL");
  int seen = 0;
  if (elastic->table->waiting(elastic->run, &seen, elastic->error,
                              sizeof(elastic->error)) != 0)
    return elastic->failure("kiln_elastic_members_waiting");
  int none = 0;
  if (kiln_status_t status = kiln_comm_all_ok(&elastic->comm, !seen, &none))
    return status;
  *waiting = none ? 0 : 1;
  return nullptr;
}

kiln_status_t kiln_elastic_finish(kiln_elastic_t *elastic) {
  if (!elastic)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_elastic_finish: elastic is NULL");
  if (elastic->table->finish(elastic->run, elastic->error,
                             sizeof(elastic->error)) != 0)
    return elastic->failure("kiln_elastic_finish");
  return nullptr;
}

} // extern "C"
