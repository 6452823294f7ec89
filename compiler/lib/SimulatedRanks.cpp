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
    : numRanks(numRanks), nextRound(numRanks, 0), stopped(numRanks, false),
      failures(numRanks) {}

std::optional<unsigned> SimulatedRanks::missingRank(const Round &round) const {
  for (unsigned r = 0; r < numRanks; ++r)
    if (stopped[r] && !round.arrived[r])
      return r;
  return std::nullopt;
}

llvm::Expected<HostTensor> SimulatedRanks::exchange(unsigned rank,
                                                    Operation *op,
                                                    const HostTensor &operand) {
  std::unique_lock<std::mutex> lock(mutex);
  uint64_t number = nextRound[rank]++;
  Round &round = rounds[number];
  if (round.arrived.empty()) {
    round.ops.assign(numRanks, nullptr);
    round.operands.resize(numRanks);
    round.arrived.assign(numRanks, false);
  }
  round.ops[rank] = op;
  round.operands[rank] = operand;
  round.arrived[rank] = true;
  if (++round.arrivals == numRanks) {
    complete(round);
    round.done = true;
    changed.notify_all();
  }
  std::optional<unsigned> missing;
  changed.wait(lock, [&] {
    return round.done || (missing = missingRank(round)).has_value();
  });

  std::string error;
  HostTensor result;
  if (round.done) {
    error = round.error;
    result = std::move(round.results[rank]);
  } else {
    error = "rank " + std::to_string(*missing) + " " +
            (failures[*missing].empty()
                 ? std::string("returned")
                 : "failed (" + failures[*missing] + ")") +
            " without reaching its collective #" + std::to_string(number) +
            ", which rank " + std::to_string(rank) + " waits in: " +
            describeCollective(op, operand);
  }
  // The round is dropped once every rank that will ever reach it has.
  if (++round.collected == round.arrivals && (round.done || missing))
    rounds.erase(number);
  if (!error.empty())
    return llvm::make_error<llvm::StringError>(error,
                                               llvm::inconvertibleErrorCode());
  return result;
}

void SimulatedRanks::stop(unsigned rank, const std::string &failure) {
  std::lock_guard<std::mutex> lock(mutex);
  stopped[rank] = true;
  failures[rank] = failure;
  changed.notify_all();
}

void SimulatedRanks::complete(Round &round) {
  // Every rank collects a result, empty where the round fails.
  round.results.resize(numRanks);
  Operation *op = round.ops[0];
  for (unsigned r = 1; r < numRanks; ++r)
    if (!sameExchange(op, round.operands[0], round.ops[r],
                      round.operands[r])) {
      round.error = "the ranks disagree on a collective: rank 0 reached " +
                    describeCollective(op, round.operands[0]) + ", rank " +
                    std::to_string(r) + " " +
                    describeCollective(round.ops[r], round.operands[r]);
      return;
    }

  auto fail = [&](const Twine &message) {
    round.error = (message + ": " + describeCollective(op, round.operands[0]))
                      .str();
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

  for (ArrayRef<int64_t> group : groupRows(groups.asArrayRef(), groupSize)) {
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
