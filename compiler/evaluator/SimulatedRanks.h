//===- SimulatedRanks.h - The ranks of an SPMD run in one process -*- C++ -*-===//
//
// The reference evaluator runs an SPMD program as N evaluators, one thread
// each, that meet at every collective op. SimulatedRanks is where they meet.
// Collectives are group-local (KilnCollectiveOps.td): a rank hands in its
// operand for its k-th collective with its replica group (the row of the
// op's groups that holds it; every rank for a permutation) and blocks until
// every member of that group has handed in its k-th with the group, then
// the members receive their results, computed here from the op's semantics.
// It also notices what would hang a real run - a member that stops before
// reaching a collective the others wait in, members whose k-th collectives
// differ, ranks that all wait for members waiting elsewhere - and turns it
// into an error on the ranks concerned.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EVALUATOR_SIMULATEDRANKS_H
#define KILN_COMPILER_EVALUATOR_SIMULATEDRANKS_H

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class SimulatedRanks {
public:
  explicit SimulatedRanks(unsigned numRanks);

  unsigned size() const { return numRanks; }

  /// Rank `rank`'s next collective: `op` (a kiln collective or start op) on
  /// `operand`. Returns this rank's result once every member of its group
  /// has reached its collective of the same number with that group, or the
  /// error that keeps the exchange from happening.
  llvm::Expected<HostTensor> exchange(unsigned rank, mlir::Operation *op,
                                      const HostTensor &operand);

  /// Records that `rank` will reach no further collective: it returned, or
  /// it failed with `failure` (non-empty). Ranks waiting for it fail.
  void stop(unsigned rank, const std::string &failure);

private:
  /// The ranks of a replica group, in increasing order.
  using Members = std::vector<unsigned>;
  /// A group's k-th collective.
  using RoundKey = std::pair<Members, uint64_t>;
  /// The k-th collective of a group's members; the vectors are indexed by
  /// rank, and only the members' entries are used.
  struct Round {
    Members members;
    std::vector<mlir::Operation *> ops;
    std::vector<HostTensor> operands;
    std::vector<bool> arrived;
    unsigned arrivals = 0;
    bool done = false;
    std::vector<HostTensor> results;
    std::string error;
    unsigned collected = 0;
  };

  /// The group `rank` takes part in with `op`: the row of its replica
  /// groups that holds the rank, or every rank (a permutation, or groups
  /// that do not partition the run, which complete() reports).
  Members groupOf(unsigned rank, mlir::Operation *op) const;
  /// Checks that the members' ops agree, then computes their results.
  void complete(Round &round);
  /// The member that stopped without reaching `round`, if any.
  std::optional<unsigned> missingRank(const Round &round) const;
  /// Whether every rank that has not stopped waits in a round that can no
  /// longer complete: a member of each waits in another group's round.
  bool allWaitForEachOther() const;
  /// "collective #3 in replica group {0, 1}" ("collective #3" for all
  /// ranks).
  std::string describeRound(const RoundKey &key) const;

  unsigned numRanks;
  std::mutex mutex;
  std::condition_variable changed;
  /// Per rank: the number of its next collective with each group.
  std::vector<std::map<Members, uint64_t>> nextRound;
  std::vector<bool> stopped;
  std::vector<std::string> failures;
  /// Per rank: the round it waits in and what it waits with, if it waits.
  std::vector<std::optional<RoundKey>> waitingIn;
  std::vector<std::string> waitingFor;
  /// Set once the ranks wait for each other; every waiter then fails.
  bool deadlocked = false;
  std::map<RoundKey, Round> rounds;
};

} // namespace kiln

#endif // KILN_COMPILER_EVALUATOR_SIMULATEDRANKS_H
