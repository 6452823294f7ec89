//===- CollectiveSignature.cpp - What ranks compare first -----------------===//

#include "CollectiveSignature.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/runtime.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

constexpr uint64_t kHashMask = (uint64_t(1) << 62) - 1;

uint64_t fnv1a(const void *data, size_t bytes, uint64_t hash) {
  const auto *byte = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i)
    hash = (hash ^ byte[i]) * 1099511628211ull;
  return hash;
}

int64_t hashValues(const int64_t *values, int64_t count) {
  uint64_t hash =
      fnv1a(values, size_t(count) * sizeof(int64_t), 14695981039346656037ull);
  return int64_t(hash & kHashMask);
}

bool isReduction(int64_t kind) {
  return kind == KILN_COLLECTIVE_ALL_REDUCE ||
         kind == KILN_COLLECTIVE_REDUCE_SCATTER;
}

bool hasGroups(const kiln_comm_plugin_collective_t &collective) {
  return collective.group_count != 0 || collective.group_size != 0;
}

std::string plural(int64_t count, const char *noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

const char *reductionName(int64_t reduction) {
  switch (reduction) {
  case KILN_REDUCTION_SUM:
    return "sum";
  case KILN_REDUCTION_MAX:
    return "max";
  case KILN_REDUCTION_MIN:
    return "min";
  }
  return nullptr;
}

/// Checks that every rank of the run is in exactly one row of the groups.
std::string checkGroups(const kiln_comm_plugin_collective_t &collective,
                        int64_t worldSize) {
  int64_t rows = collective.group_count, columns = collective.group_size;
  if (rows < 1 || columns < 1)
    return "its replica groups are " + std::to_string(rows) + " x " +
           std::to_string(columns) + "; every rank must be in one group";
  if (rows > worldSize || columns > worldSize || rows * columns != worldSize) {
    // rows and columns are both at most worldSize here or the product is
    // not evaluated, so it cannot overflow.
    std::string spanned = rows <= INT32_MAX && columns <= INT32_MAX
                              ? std::to_string(rows * columns)
                              : "more";
    return "its replica groups span " + spanned + " ranks (" +
           plural(rows, "group") + " of " + std::to_string(columns) +
           ") but the run has " + std::to_string(worldSize) +
           "; start it with 'mpirun -n " + spanned + "'";
  }
  if (!collective.groups)
    return "its replica groups are missing (NULL)";
  std::vector<int64_t> rowOf(size_t(worldSize), -1);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t column = 0; column < columns; ++column) {
      int64_t rank = collective.groups[row * columns + column];
      if (rank < 0 || rank >= worldSize)
        return "replica group " + std::to_string(row) + " names rank " +
               std::to_string(rank) + ", which is not a rank of the run (" +
               std::to_string(worldSize) + " ranks)";
      if (rowOf[size_t(rank)] >= 0)
        return "rank " + std::to_string(rank) + " is in replica group " +
               std::to_string(rowOf[size_t(rank)]) +
               (rowOf[size_t(rank)] == row
                    ? " twice"
                    : " and in group " + std::to_string(row));
      rowOf[size_t(rank)] = row;
    }
  }
  return "";
}

std::string checkPairs(const kiln_comm_plugin_collective_t &collective,
                       int64_t worldSize) {
  if (collective.pair_count < 0 || collective.pair_count > worldSize)
    return std::to_string(collective.pair_count) +
           " source-target pairs cannot be sent between " +
           std::to_string(worldSize) + " ranks";
  if (collective.pair_count > 0 && !collective.pairs)
    return "its source-target pairs are missing (NULL)";
  std::vector<bool> isSource(static_cast<size_t>(worldSize));
  std::vector<bool> isTarget(static_cast<size_t>(worldSize));
  for (int64_t i = 0; i < collective.pair_count; ++i) {
    int64_t source = collective.pairs[2 * i];
    int64_t target = collective.pairs[2 * i + 1];
    std::string pair =
        "(" + std::to_string(source) + ", " + std::to_string(target) + ")";
    for (int64_t rank : {source, target})
      if (rank < 0 || rank >= worldSize)
        return "the pair " + pair + " names rank " + std::to_string(rank) +
               ", but the run has " + plural(worldSize, "rank") +
               (hasGroups(collective) || rank < 0
                    ? std::string()
                    : "; start it with 'mpirun -n " +
                          std::to_string(spannedRanks(collective)) + "'");
    if (isSource[size_t(source)])
      return "rank " + std::to_string(source) +
             " is the source of more than one pair";
    if (isTarget[size_t(target)])
      return "rank " + std::to_string(target) +
             " is the target of more than one pair";
    isSource[size_t(source)] = isTarget[size_t(target)] = true;
  }
  return "";
}

} // namespace

bool Signature::operator==(const Signature &other) const {
  return std::memcmp(fields, other.fields, sizeof(fields)) == 0;
}

int64_t hashName(const std::string &name) {
  return int64_t(fnv1a(name.data(), name.size(), 14695981039346656037ull) &
                 kHashMask);
}

Signature collectiveSignature(int64_t function, int64_t index,
                              const kiln_comm_plugin_collective_t &collective,
                              int64_t worldSize, bool failed) {
  Signature signature;
  int64_t *field = signature.fields;
  field[Signature::Phase] = Signature::kPhaseCollective;
  field[Signature::Function] = function;
  field[Signature::Index] = index;
  field[Signature::Kind] = collective.kind;
  field[Signature::Reduction] =
      isReduction(collective.kind) ? collective.reduction : 0;
  field[Signature::DType] = collective.dtype;
  field[Signature::Count] = collective.count;
  field[Signature::Root] =
      collective.kind == KILN_COLLECTIVE_BROADCAST ? collective.root : 0;
  field[Signature::GroupCount] = collective.group_count;
  field[Signature::GroupSize] = collective.group_size;
  int64_t rows = collective.group_count, columns = collective.group_size;
  if (collective.groups && rows >= 1 && columns >= 1 && rows <= worldSize &&
      columns <= worldSize && rows * columns == worldSize)
    field[Signature::Groups] = hashValues(collective.groups, rows * columns);
  bool permute = collective.kind == KILN_COLLECTIVE_PERMUTE;
  field[Signature::PairCount] = permute ? collective.pair_count : 0;
  if (permute && collective.pairs && collective.pair_count >= 0 &&
      collective.pair_count <= worldSize)
    field[Signature::Pairs] =
        hashValues(collective.pairs, 2 * collective.pair_count);
  field[Signature::Failed] = failed ? 1 : 0;
  // The agreement negates every field; INT64_MIN has no negation.
  for (int64_t &value : signature.fields)
    if (value == INT64_MIN)
      value = INT64_MIN + 1;
  return signature;
}

Signature returnSignature(int64_t function, int64_t collectives, bool failed) {
  Signature signature;
  signature.fields[Signature::Phase] = Signature::kPhaseReturn;
  signature.fields[Signature::Function] = function;
  signature.fields[Signature::Index] = collectives;
  signature.fields[Signature::Failed] = failed ? 1 : 0;
  return signature;
}

std::string collectiveName(int64_t kind) {
  switch (kind) {
  case KILN_COLLECTIVE_ALL_REDUCE:
    return "kiln.all_reduce";
  case KILN_COLLECTIVE_ALL_GATHER:
    return "kiln.all_gather";
  case KILN_COLLECTIVE_REDUCE_SCATTER:
    return "kiln.reduce_scatter";
  case KILN_COLLECTIVE_BROADCAST:
    return "kiln.collective_broadcast";
  case KILN_COLLECTIVE_ALL_TO_ALL:
    return "kiln.all_to_all";
  case KILN_COLLECTIVE_PERMUTE:
    return "kiln.collective_permute";
  }
  return "a collective of unknown kind " + std::to_string(kind);
}

std::string describe(const Signature &signature) {
  int64_t kind = signature[Signature::Kind];
  std::string text = collectiveName(kind);
  if (isReduction(kind)) {
    const char *reduction = reductionName(signature[Signature::Reduction]);
    text += reduction
                ? std::string(" (") + reduction + ")"
                : " (unknown reduction " +
                      std::to_string(signature[Signature::Reduction]) + ")";
  }
  int64_t dtype = signature[Signature::DType];
  std::string dtypeName = dtype >= INT32_MIN && dtype <= INT32_MAX
                              ? kiln_dtype_name(kiln_dtype_t(dtype))
                              : "invalid";
  if (dtypeName == "invalid")
    dtypeName = "unknown dtype " + std::to_string(dtype);
  text +=
      " of " + std::to_string(signature[Signature::Count]) + " x " + dtypeName;
  if (kind == KILN_COLLECTIVE_BROADCAST)
    text += " from group member " + std::to_string(signature[Signature::Root]);
  int64_t rows = signature[Signature::GroupCount];
  int64_t columns = signature[Signature::GroupSize];
  if (rows != 0 || columns != 0)
    text += " over " + plural(rows, "group") + " of " + plural(columns, "rank");
  if (kind == KILN_COLLECTIVE_PERMUTE)
    text += " with " +
            plural(signature[Signature::PairCount], "source-target pair");
  return text;
}

int64_t spannedRanks(const kiln_comm_plugin_collective_t &collective) {
  int64_t rows = collective.group_count, columns = collective.group_size;
  if (rows >= 1 && columns >= 1 && rows <= INT32_MAX && columns <= INT32_MAX)
    return rows * columns;
  if (collective.kind != KILN_COLLECTIVE_PERMUTE || hasGroups(collective) ||
      !collective.pairs || collective.pair_count < 0 ||
      collective.pair_count > INT32_MAX)
    return 0;
  int64_t largest = -1;
  for (int64_t i = 0; i < 2 * collective.pair_count; ++i)
    largest = std::max(largest, collective.pairs[i]);
  return largest < 0 ? 0 : largest + 1;
}

std::string checkCollective(const kiln_comm_plugin_collective_t &collective,
                            int64_t worldSize) {
  int64_t kind = collective.kind;
  if (kind < KILN_COLLECTIVE_ALL_REDUCE || kind > KILN_COLLECTIVE_PERMUTE)
    return "unknown collective kind " + std::to_string(kind);
  if (kiln_dtype_size(kiln_dtype_t(collective.dtype)) == 0)
    return "unknown dtype " + std::to_string(collective.dtype);
  if (isReduction(kind) && !reductionName(collective.reduction))
    return "unknown reduction " + std::to_string(collective.reduction);
  if (collective.count < 0)
    return "negative element count " + std::to_string(collective.count);
  if (collective.count > 0 && (!collective.input || !collective.output))
    return "its input or output buffer is NULL";
  // A permutation names its ranks in its pairs; groups are optional.
  if (kind != KILN_COLLECTIVE_PERMUTE || hasGroups(collective))
    if (std::string error = checkGroups(collective, worldSize); !error.empty())
      return error;
  int64_t members = collective.group_size;
  switch (kind) {
  case KILN_COLLECTIVE_REDUCE_SCATTER:
  case KILN_COLLECTIVE_ALL_TO_ALL:
    if (collective.count % members != 0)
      return "its " + std::to_string(collective.count) +
             " elements do not split into " + std::to_string(members) +
             " equal blocks, one per group member";
    break;
  case KILN_COLLECTIVE_BROADCAST:
    if (collective.root < 0 || collective.root >= members)
      return "its root " + std::to_string(collective.root) +
             " is not a member of a group of " + plural(members, "rank");
    break;
  case KILN_COLLECTIVE_PERMUTE:
    return checkPairs(collective, worldSize);
  }
  return "";
}

} // namespace comm
} // namespace runtime
} // namespace kiln
