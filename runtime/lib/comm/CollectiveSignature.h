//===- CollectiveSignature.h - What ranks compare first ---------*- C++ -*-===//
//
// Before each collective, and once more when a function returns, every rank
// of the run compares a Signature with the others (CollectiveCall.cpp): a
// fixed row of integers that says where the rank is in the call and what
// it is about to do. Ranks that disagree on any field would otherwise
// exchange mismatched buffers or wait forever; this way each of them learns
// what differs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_COLLECTIVESIGNATURE_H
#define KILN_RUNTIME_LIB_COMM_COLLECTIVESIGNATURE_H

#include "CommPlugin.h"

#include <cstdint>
#include <string>

namespace kiln {
namespace runtime {
namespace comm {

struct Signature {
  enum Field {
    /// kPhaseCollective or kPhaseReturn.
    Phase,
    /// A hash of the function's name.
    Function,
    /// How many collectives the call started before this point.
    Index,
    Kind,
    Reduction,
    DType,
    Count,
    Root,
    GroupCount,
    GroupSize,
    /// A hash of the replica groups (0 when they cannot be read safely).
    Groups,
    PairCount,
    /// A hash of the source-target pairs (0 when they cannot be read safely).
    Pairs,
    /// 1 when this rank failed earlier in the call (an MPI error, ...), so
    /// that the others stop too instead of waiting for it.
    Failed,
    FieldCount
  };
  static constexpr int64_t kPhaseCollective = 0;
  static constexpr int64_t kPhaseReturn = 1;

  int64_t fields[FieldCount] = {};

  int64_t operator[](Field field) const { return fields[field]; }
  bool operator==(const Signature &other) const;
  bool operator!=(const Signature &other) const { return !(*this == other); }
};

/// A 62-bit FNV-1a hash of a name (small enough to negate safely).
int64_t hashName(const std::string &name);

/// The signature of starting \p collective as the call's collective number
/// \p index (from 0) in a run of \p worldSize ranks. Reads the groups and
/// pairs only when their sizes are plausible for that many ranks.
Signature collectiveSignature(int64_t function, int64_t index,
                              const kiln_comm_plugin_collective_t &collective,
                              int64_t worldSize, bool failed);

/// The signature of returning from the function after \p collectives.
Signature returnSignature(int64_t function, int64_t collectives, bool failed);

/// The op's name in the IR: "kiln.all_reduce", ...
std::string collectiveName(int64_t kind);

/// A collective in words: "kiln.all_reduce (sum) of 1024 x f32 over 1 group
/// of 2 ranks".
std::string describe(const Signature &signature);

/// The number of ranks \p collective spans (group_count x group_size, or
/// for a permutation without groups one more than the largest rank of its
/// pairs); 0 when that cannot be told.
int64_t spannedRanks(const kiln_comm_plugin_collective_t &collective);

/// Empty if \p collective is well-formed for a run of \p worldSize ranks;
/// otherwise what is wrong with it. Depends on nothing but its arguments, so
/// ranks that agree on the signature reach the same verdict.
std::string checkCollective(const kiln_comm_plugin_collective_t &collective,
                            int64_t worldSize);

} // namespace comm
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_COLLECTIVESIGNATURE_H
