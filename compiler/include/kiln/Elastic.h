//===- Elastic.h - Training that goes on when workers die or arrive -*- C++ -*-===//
//
// The C++ side of elastic training (kiln-launch --nproc MIN:MAX; Python's
// kiln.distributed.elastic), over the runtime's kiln_elastic_t:
//
//   kiln::elastic::Worker worker;                  // this process's part
//   kiln::elastic::State state;                    // what survives failures
//   state.arrays["w"] = w;  state.counters["step"] = 0;
//   kiln::elastic::Jit step(worker, [&](kiln_comm *comm) {
//     kiln::JitOptions options;  options.comm = comm;  options.batchArgs = {1, 2};
//     return kiln::jit("step", body, options);     // one per size of the run
//   });
//   kiln::elastic::run(worker, state, [&](kiln::elastic::State &s) {
//     while (s.counters["step"] < steps) {
//       ... s.arrays["w"] = step({s.arrays["w"], myRows(x), myRows(y)})[1];
//       if (++s.counters["step"] % 10 == 0)
//         s.commit(worker);
//     }
//   });
//
// run() joins the run and gives every member the newest commit; when a
// collective fails (CommunicationError: a member died or hangs) every
// survivor goes back to its last commit, the survivors form the next
// generation and run() calls the function again; workers waiting to join
// come in at a commit. The worker learns its rank and the run's size from
// each rendezvous (Worker::rank, Worker::size), not from its command line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ELASTIC_H
#define KILN_ELASTIC_H

#include "kiln/Jit.h"

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>

struct kiln_elastic;

namespace kiln {
namespace elastic {

/// This process's part in the elastic run its environment names (what
/// kiln-launch --nproc MIN:MAX sets; kiln_elastic_open in kiln/runtime.h).
class Worker {
public:
  /// Opens it; throws CommunicationError saying what is missing (not
  /// started by kiln-launch --nproc MIN:MAX, a store that cannot be
  /// reached).
  Worker();
  ~Worker();
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  /// The communicator over the members of the generation joined last: one
  /// object for the whole run, whose rank and size change at each
  /// rendezvous (JitOptions::comm takes it).
  kiln_comm *comm() const;
  int64_t rank() const;
  int64_t size() const;
  /// The generation joined last; -1 before the first.
  int64_t generation() const { return generation_; }

  /// Joins the next generation with the serial of this worker's last
  /// commit; false when the run finished before this worker was admitted.
  /// \p root is the rank holding the newest commit.
  bool rendezvous(int64_t commitSerial, int64_t &root);
  /// Whether workers wait to join (agreed by every member; collective).
  bool membersWaiting();
  /// Records that the run has finished.
  void finish();

private:
  kiln_elastic *elastic_ = nullptr;
  int64_t generation_ = -1;
};

/// Thrown by State::commit when workers wait to join: run() re-forms the
/// run with them, from that commit.
class MembersWaiting : public std::exception {
public:
  const char *what() const noexcept override {
    return "workers wait to join the elastic run";
  }
};

/// What an elastic run's training keeps across failures: named arrays
/// (parameters, optimizer state) and integers (the step, the position in
/// the data, a random generator's counter).
class State {
public:
  std::map<std::string, Array> arrays;
  std::map<std::string, int64_t> counters;

  /// Keeps an in-memory copy (commit without asking about joiners).
  void save();
  /// Keeps an in-memory copy, then asks the members whether workers wait
  /// to join; throws MembersWaiting if so.
  void commit(Worker &worker);
  /// Goes back to the last commit.
  void restore();
  /// Every member takes the last commit of member \p root (collective).
  void sync(Worker &worker, int64_t root);
  /// Commits made; -1 in a worker that holds nothing of the run yet.
  int64_t serial() const { return serial_; }
  /// After the first generation's sync: the start counts as commit 0.
  void markStart() {
    if (serial_ < 0)
      serial_ = 0;
  }

private:
  /// Copies the values into the commit, its serial unchanged.
  void keep();

  std::map<std::string, Array> savedArrays;
  std::map<std::string, int64_t> savedCounters;
  int64_t serial_ = -1;
};

/// A function jitted once per size of the run, from a factory given the
/// elastic communicator; a size seen before reuses its compiled code.
class Jit {
public:
  using Factory = std::function<JitFunction(kiln_comm *comm)>;
  Jit(Worker &worker, Factory factory)
      : worker(worker), factory(std::move(factory)) {}

  std::vector<Array> operator()(const std::vector<Array> &inputs);
  /// The sizes compiled for so far.
  std::vector<int64_t> sizes() const;

private:
  Worker &worker;
  Factory factory;
  std::map<int64_t, std::unique_ptr<JitFunction>> bySize;
};

/// Runs \p train(state) elastically (Horovod's hvd.elastic.run): joined
/// and synchronized first, again from the survivors' last commit when a
/// member fails, and from the commit that saw them when workers join.
/// False in a worker that arrived after the run had finished. A commit that
/// fails more than retryLimit() times in a row ends the run with its error. Progress
/// goes to stderr, prefixed "kiln elastic: ".
/// KILN_ELASTIC_RETRIES: how many failures in a row from one commit a run
/// recovers from (default 3); throws JitError for a malformed value.
int64_t retryLimit();

template <typename Train>
bool run(Worker &worker, State &state, Train &&train) {
  const int64_t limit = retryLimit();
  int64_t retries = 0, failedAt = -2;
  for (;;) {
    int64_t root = 0;
    if (!worker.rendezvous(state.serial(), root)) {
      std::fprintf(stderr, "kiln elastic: the run finished before this "
                           "worker joined it\n");
      return false;
    }
    state.sync(worker, root);
    state.markStart();
    std::fprintf(stderr,
                 "kiln elastic: generation %lld: rank %lld of %lld, from "
                 "commit %lld of rank %lld\n",
                 (long long)worker.generation(), (long long)worker.rank(),
                 (long long)worker.size(), (long long)state.serial(),
                 (long long)root);
    try {
      train(state);
    } catch (const CommunicationError &error) {
      // The same commit failing again and again is a program that cannot go
      // on (ranks that disagree on a collective), not workers dying.
      retries = failedAt == state.serial() ? retries + 1 : 1;
      failedAt = state.serial();
      if (retries > limit) {
        std::fprintf(stderr,
                     "kiln elastic: generation %lld failed %lld times from "
                     "commit %lld without a new commit "
                     "(KILN_ELASTIC_RETRIES=%lld); giving up\n",
                     (long long)worker.generation(), (long long)retries,
                     (long long)state.serial(), (long long)limit);
        throw;
      }
      std::fprintf(stderr,
                   "kiln elastic: generation %lld failed (%s); back to "
                   "commit %lld\n",
                   (long long)worker.generation(), error.what(),
                   (long long)state.serial());
      state.restore();
      continue;
    } catch (const MembersWaiting &) {
      std::fprintf(stderr,
                   "kiln elastic: workers wait to join; generation %lld "
                   "re-forms at commit %lld\n",
                   (long long)worker.generation(), (long long)state.serial());
      continue;
    }
    worker.finish();
    return true;
  }
}

} // namespace elastic
} // namespace kiln

#endif // KILN_ELASTIC_H
