//===- SimulatedRanks.cpp - The ranks of an SPMD run in one process -------===//
//
// The meeting point (exchange/stop) and the semantics of every collective
// on host tensors: reductions combine the group's operands in group order,
// rounding (or wrapping) after each one, as KilnCollectiveOps.td specifies.
//
//===----------------------------------------------------------------------===//

#include "SimulatedRanks.h"

#include "EvaluatorMessages.h"
#include "EvaluatorNumerics.h"

#include "kiln/IR/KilnOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace ::kiln::evaluator;

namespace kiln {

//===----------------------------------------------------------------------===//
// Blocks of tensors along one dimension
//===----------------------------------------------------------------------===//

namespace {
/// A tensor seen as [outer, extent, inner] around dimension `dim`.
struct AroundDim {
  int64_t outer = 1, extent = 1, inner = 1;
  AroundDim(llvm::ArrayRef<int64_t> shape, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      (d < dim ? outer : d == dim ? extent : inner) *= shape[d];
  }
};
} // namespace

/// Calls fn(destination elements, source elements) on the storage vector
/// that holds the elements (f for floats, i for integers).
template <typename Fn>
static void withElements(HostTensor &to, const HostTensor &from, Fn fn) {
  if (from.isFloat())
    fn(to.f, from.f);
  else
    fn(to.i, from.i);
}

/// Splits `x` along `dim` into `parts` blocks of equal size.
static std::vector<HostTensor> splitBlocks(const HostTensor &x, int64_t dim,
                                           int64_t parts) {
  AroundDim around(x.shape, dim);
  int64_t rows = around.extent / parts;
  std::vector<int64_t> shape = x.shape;
  shape[dim] = rows;
  std::vector<HostTensor> blocks;
  for (int64_t b = 0; b < parts; ++b) {
    HostTensor block(x.elementType, shape);
    withElements(block, x, [&](auto &to, const auto &from) {
      for (int64_t o = 0; o < around.outer; ++o)
        std::copy_n(from.begin() +
                        (o * around.extent + b * rows) * around.inner,
                    rows * around.inner,
                    to.begin() + o * rows * around.inner);
    });
    blocks.push_back(std::move(block));
  }
  return blocks;
}

/// Joins `blocks` (equal shapes but for `dim`) along `dim`.
static HostTensor joinBlocks(llvm::ArrayRef<HostTensor> blocks, int64_t dim) {
  std::vector<int64_t> shape = blocks.front().shape;
  shape[dim] = 0;
  for (const HostTensor &block : blocks)
    shape[dim] += block.shape[dim];
  HostTensor joined(blocks.front().elementType, shape);
  AroundDim whole(shape, dim);
  int64_t offset = 0;
  for (const HostTensor &block : blocks) {
    AroundDim part(block.shape, dim);
    withElements(joined, block, [&](auto &to, const auto &from) {
      for (int64_t o = 0; o < part.outer; ++o)
        std::copy_n(from.begin() + o * part.extent * part.inner,
                    part.extent * part.inner,
                    to.begin() + (o * whole.extent + offset) * whole.inner);
    });
    offset += part.extent;
  }
  return joined;
}

/// The elementwise `kind` of `operands` (one type), combined in order.
static HostTensor reduceAll(llvm::ArrayRef<const HostTensor *> operands,
                            CollectiveReduction kind) {
  HostTensor result = *operands.front();
  ElementKind element = result.kind();
  for (const HostTensor *next : operands.drop_front()) {
    if (result.isFloat()) {
      for (auto [acc, value] : llvm::zip(result.f, next->f)) {
        switch (kind) {
        case CollectiveReduction::Sum:
        case CollectiveReduction::Mean:
          acc = roundToFloat(element, acc + value);
          break;
        case CollectiveReduction::Max:
          acc = floatMax(acc, value);
          break;
        case CollectiveReduction::Min:
          acc = floatMin(acc, value);
          break;
        }
      }
    } else {
      for (auto [acc, value] : llvm::zip(result.i, next->i)) {
        switch (kind) {
        case CollectiveReduction::Sum:
        case CollectiveReduction::Mean: // verifiers allow floats only
          acc = wrapToInt(element, wrappingAdd(acc, value));
          break;
        case CollectiveReduction::Max:
          acc = intMax(element, acc, value);
          break;
        case CollectiveReduction::Min:
          acc = intMin(element, acc, value);
          break;
        }
      }
    }
  }
  if (kind == CollectiveReduction::Mean)
    for (double &value : result.f)
      value = roundToFloat(element, value / operands.size());
  return result;
}

//===----------------------------------------------------------------------===//
// Describing what a rank does
//===----------------------------------------------------------------------===//

/// "kiln.all_reduce of tensor<4xf32> at model.mlir:3:8".
static std::string describeCollective(Operation *op,
                                      const HostTensor &operand) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " of " << operand.getType() << " at "
     << describeLocation(op->getLoc());
  return text;
}

/// Whether two ranks' collectives are the same exchange: one op kind with
/// the same attributes on operands of one type.
static bool sameExchange(Operation *a, const HostTensor &aOperand,
                         Operation *b, const HostTensor &bOperand) {
  if (aOperand.getType() != bOperand.getType())
    return false;
  if (a == b)
    return true;
  return a->getName() == b->getName() &&
         a->getPropertiesAsAttribute() == b->getPropertiesAsAttribute() &&
         a->getResultTypes() == b->getResultTypes();
}

//===----------------------------------------------------------------------===//
// SimulatedRanks
//===----------------------------------------------------------------------===//

SimulatedRanks::SimulatedRanks(unsigned numRanks)
    : numRanks(numRanks), nextRound(numRanks), stopped(numRanks, false),
      failures(numRanks), waitingIn(numRanks), waitingFor(numRanks) {}

SimulatedRanks::Members SimulatedRanks::groupOf(unsigned rank,
                                                Operation *op) const {
  Members everyone;
  for (unsigned r = 0; r < numRanks; ++r)
    everyone.push_back(r);
  auto groups = op->getAttrOfType<DenseI64ArrayAttr>("groups");
  auto groupSize = op->getAttrOfType<IntegerAttr>("group_size");
  if (!groups || !groupSize || groupSize.getInt() < 1 ||
      static_cast<int64_t>(groups.size()) != numRanks ||
      groups.size() % groupSize.getInt() != 0)
    return everyone;
  for (ArrayRef<int64_t> row :
       groupRows(groups.asArrayRef(), groupSize.getInt())) {
    if (!llvm::is_contained(row, static_cast<int64_t>(rank)))
      continue;
    Members members;
    for (int64_t member : row) {
      if (member < 0 || member >= numRanks)
        return everyone;
      members.push_back(static_cast<unsigned>(member));
    }
    // Ranks meet by the set of ranks: two rows naming the same ranks in
    // different orders are the same group, and complete() reports that
    // the members disagree on the op.
    llvm::sort(members);
    return members;
  }
  return everyone;
}

std::optional<unsigned> SimulatedRanks::missingRank(const Round &round) const {
  for (unsigned r : round.members)
    if (stopped[r] && !round.arrived[r])
      return r;
  return std::nullopt;
}

bool SimulatedRanks::allWaitForEachOther() const {
  bool anyWaits = false;
  for (unsigned r = 0; r < numRanks; ++r) {
    if (stopped[r])
      continue;
    if (!waitingIn[r])
      return false;
    auto found = rounds.find(*waitingIn[r]);
    if (found == rounds.end() || found->second.done ||
        missingRank(found->second))
      return false;
    anyWaits = true;
  }
  return anyWaits;
}

std::string SimulatedRanks::describeRound(const RoundKey &key) const {
  std::string text = "collective #" + std::to_string(key.second);
  if (key.first.size() == numRanks &&
      llvm::all_of(llvm::enumerate(key.first), [](auto member) {
        return member.value() == member.index();
      }))
    return text;
  text += " in replica group {";
  for (auto [index, member] : llvm::enumerate(key.first))
    text += (index ? ", " : "") + std::to_string(member);
  return text + "}";
}

llvm::Expected<HostTensor> SimulatedRanks::exchange(unsigned rank,
                                                    Operation *op,
                                                    const HostTensor &operand) {
  std::unique_lock<std::mutex> lock(mutex);
  Members members = groupOf(rank, op);
  RoundKey key(members, nextRound[rank][members]++);
  Round &round = rounds[key];
  if (round.arrived.empty()) {
    round.members = members;
    round.ops.assign(numRanks, nullptr);
    round.operands.resize(numRanks);
    round.arrived.assign(numRanks, false);
  }
  round.ops[rank] = op;
  round.operands[rank] = operand;
  round.arrived[rank] = true;
  if (++round.arrivals == members.size()) {
    complete(round);
    round.done = true;
  } else {
    waitingIn[rank] = key;
    waitingFor[rank] = describeCollective(op, operand);
    if (!deadlocked && allWaitForEachOther())
      deadlocked = true;
  }
  changed.notify_all();
  std::optional<unsigned> missing;
  changed.wait(lock, [&] {
    return round.done || deadlocked ||
           (missing = missingRank(round)).has_value();
  });
  // After a deadlock every waiter describes where the others wait: that
  // stays as it was found, whichever rank wakes first.
  if (!deadlocked)
    waitingIn[rank].reset();

  std::string error;
  HostTensor result;
  std::string where = describeRound(key);
  if (round.done) {
    error = round.error;
    result = std::move(round.results[rank]);
  } else if (missing) {
    error = "rank " + std::to_string(*missing) + " " +
            (failures[*missing].empty()
                 ? std::string("returned")
                 : "failed (" + failures[*missing] + ")") +
            " without reaching its " + where + ", which rank " +
            std::to_string(rank) + " waits in: " +
            describeCollective(op, operand);
  } else {
    // Name a member that has not arrived and where it waits instead.
    unsigned absent = rank;
    for (unsigned member : round.members)
      if (!round.arrived[member]) {
        absent = member;
        break;
      }
    error = "rank " + std::to_string(rank) + " waits in its " + where +
            " (" + describeCollective(op, operand) + ") but rank " +
            std::to_string(absent) + " waits in " +
            (waitingIn[absent] ? "its " + describeRound(*waitingIn[absent]) +
                                     " (" + waitingFor[absent] + ")"
                               : std::string("another collective")) +
            ": the ranks wait for each other";
  }
  // The round is dropped once every rank that will ever reach it has.
  if (++round.collected == round.arrivals &&
      (round.done || missing || deadlocked))
    rounds.erase(key);
  if (!error.empty())
    return llvm::make_error<llvm::StringError>(error,
                                               llvm::inconvertibleErrorCode());
  return result;
}

void SimulatedRanks::stop(unsigned rank, const std::string &failure) {
  std::lock_guard<std::mutex> lock(mutex);
  stopped[rank] = true;
  failures[rank] = failure;
  if (!deadlocked && allWaitForEachOther())
    deadlocked = true;
  changed.notify_all();
}

void SimulatedRanks::complete(Round &round) {
  // Every rank collects a result, empty where the round fails.
  round.results.resize(numRanks);
  unsigned first = round.members.front();
  Operation *op = round.ops[first];
  for (unsigned r : llvm::drop_begin(round.members))
    if (!sameExchange(op, round.operands[first], round.ops[r],
                      round.operands[r])) {
      round.error = "the ranks disagree on a collective: rank " +
                    std::to_string(first) + " reached " +
                    describeCollective(op, round.operands[first]) +
                    ", rank " + std::to_string(r) + " " +
                    describeCollective(round.ops[r], round.operands[r]);
      return;
    }

  auto fail = [&](const Twine &message) {
    round.error =
        (message + ": " + describeCollective(op, round.operands[first])).str();
  };

  if (auto permute = dyn_cast<CollectivePermuteOp>(op)) {
    ArrayRef<int64_t> pairs = permute.getPairs();
    for (int64_t rank : pairs)
      if (rank >= numRanks)
        return fail("pairs name rank " + Twine(rank) + ", but the run has " +
                    Twine(numRanks) + " ranks");
    for (unsigned r = 0; r < numRanks; ++r)
      round.results[r] = HostTensor(round.operands[r].elementType,
                                    round.operands[r].shape);
    for (size_t i = 0; i + 1 < pairs.size(); i += 2)
      round.results[pairs[i + 1]] = round.operands[pairs[i]];
    return;
  }

  auto groups = op->getAttrOfType<DenseI64ArrayAttr>("groups");
  auto groupSizeAttr = op->getAttrOfType<IntegerAttr>("group_size");
  if (!groups || !groupSizeAttr)
    return fail("internal error: no replica groups on the collective");
  int64_t groupSize = groupSizeAttr.getInt();
  if (static_cast<int64_t>(groups.size()) != numRanks)
    return fail("the replica groups span " + Twine(groups.size()) +
                " ranks, but the run has " + Twine(numRanks));

  // The members are one row of the groups (groupOf); the other rows
  // exchange in rounds of their own.
  for (ArrayRef<int64_t> group : groupRows(groups.asArrayRef(), groupSize)) {
    if (!llvm::is_contained(group, static_cast<int64_t>(first)))
      continue;
    SmallVector<const HostTensor *> members;
    for (int64_t rank : group)
      members.push_back(&round.operands[rank]);
    auto deliver = [&](auto resultOf) {
      for (auto [index, rank] : llvm::enumerate(group))
        round.results[rank] = resultOf(static_cast<int64_t>(index));
    };
    llvm::TypeSwitch<Operation *>(op)
        .Case<AllReduceOp, AllReduceStartOp>([&](auto op) {
          HostTensor reduced = reduceAll(members, op.getKind());
          deliver([&](int64_t) { return reduced; });
        })
        .Case<AllGatherOp, AllGatherStartOp>([&](auto op) {
          std::vector<HostTensor> parts;
          for (const HostTensor *member : members)
            parts.push_back(*member);
          HostTensor joined = joinBlocks(parts, op.getDimension());
          deliver([&](int64_t) { return joined; });
        })
        .Case<ReduceScatterOp, ReduceScatterStartOp>([&](auto op) {
          std::vector<HostTensor> blocks = splitBlocks(
              reduceAll(members, op.getKind()), op.getDimension(), groupSize);
          deliver([&](int64_t index) { return std::move(blocks[index]); });
        })
        .Case([&](CollectiveBroadcastOp op) {
          HostTensor root = *members[op.getRoot()];
          deliver([&](int64_t) { return root; });
        })
        .Case([&](AllToAllOp op) {
          std::vector<std::vector<HostTensor>> sent;
          for (const HostTensor *member : members)
            sent.push_back(splitBlocks(*member, op.getSplitDim(), groupSize));
          deliver([&](int64_t index) {
            std::vector<HostTensor> received;
            for (std::vector<HostTensor> &blocks : sent)
              received.push_back(blocks[index]);
            return joinBlocks(received, op.getConcatDim());
          });
        })
        .Default([&](Operation *) {
          fail("internal error: not a collective the ranks can exchange");
        });
    if (!round.error.empty())
      return;
  }
}

} // namespace kiln
