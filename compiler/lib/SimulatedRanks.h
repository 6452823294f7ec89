//===- SimulatedRanks.h - The ranks of an SPMD run in one process -*- C++ -*-===//
//
// The reference evaluator runs an SPMD program as N evaluators, one thread
// each, that meet at every collective op. SimulatedRanks is where they meet:
// a rank hands in its operand for its k-th collective and blocks until every
// rank has handed in its k-th, then all receive their results, computed
// here from the op's semantics (KilnCollectiveOps.td). It also notices what
// would hang a real run - a rank that stops before reaching a collective the
// others wait in, ranks whose k-th collectives differ - and turns it into an
// error on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LIB_SIMULATEDRANKS_H
#define KILN_COMPILER_LIB_SIMULATEDRANKS_H

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

class SimulatedRanks {
public:
  explicit SimulatedRanks(unsigned numRanks);

  unsigned size() const { return numRanks; }

  /// Rank `rank`'s next collective: `op` (a kiln collective or start op) on
  /// `operand`. Returns this rank's result once every rank has reached its
  /// collective of the same number, or the error that keeps the exchange
  /// from happening.
  llvm::Expected<HostTensor> exchange(unsigned rank, mlir::Operation *op,
                                      const HostTensor &operand);

  /// Records that `rank` will reach no further collective: it returned, or
  /// it failed with `failure` (non-empty). Ranks waiting for it fail.
  void stop(unsigned rank, const std::string &failure);

private:
  /// The k-th collective of every rank.
  struct Round {
    std::vector<mlir::Operation *> ops;
    std::vector<HostTensor> operands;
    std::vector<bool> arrived;
    unsigned arrivals = 0;
    bool done = false;
    std::vector<HostTensor> results;
    std::string error;
    unsigned collected = 0;
  };

  /// Checks that the ranks' ops agree, then computes every rank's result.
  void complete(Round &round);
  /// The rank that stopped without reaching `round`, if any.
  std::optional<unsigned> missingRank(const Round &round) const;

  unsigned numRanks;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<uint64_t> nextRound;
  std::vector<bool> stopped;
  std::vector<std::string> failures;
  std::map<uint64_t, Round> rounds;
};

} // namespace kiln

#endif // KILN_COMPILER_LIB_SIMULATEDRANKS_H
