//===- KilnCollectiveOps.cpp - Communication between ranks ----------------===//
//
// Replica groups (their syntax and the partition check), shape inference and
// verification of the collective ops. Messages name the attribute at fault
// and the rule it breaks, as the other kiln verifiers do.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::kiln;

bool mlir::kiln::isCollective(Operation *op) {
  return isa<RankOp, AllReduceOp, AllGatherOp, ReduceScatterOp,
             CollectiveBroadcastOp, AllToAllOp, CollectivePermuteOp,
             AllReduceStartOp, AllGatherStartOp, ReduceScatterStartOp,
             CollectiveWaitOp>(op);
}

//===----------------------------------------------------------------------===//
// Replica groups
//===----------------------------------------------------------------------===//

SmallVector<ArrayRef<int64_t>> mlir::kiln::groupRows(ArrayRef<int64_t> groups,
                                                     int64_t groupSize) {
  SmallVector<ArrayRef<int64_t>> rows;
  if (groupSize <= 0)
    return rows;
  for (size_t start = 0; start + groupSize <= groups.size(); start += groupSize)
    rows.push_back(groups.slice(start, groupSize));
  return rows;
}

ParseResult mlir::kiln::parseReplicaGroups(OpAsmParser &parser,
                                           DenseI64ArrayAttr &groups,
                                           IntegerAttr &groupSize) {
  SmallVector<int64_t> ranks;
  int64_t size = -1;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword("groups") || parser.parseEqual())
    return failure();
  auto parseRow = [&]() -> ParseResult {
    int64_t count = 0;
    if (parser.parseCommaSeparatedList(
            OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
              int64_t rank = 0;
              if (parser.parseInteger(rank))
                return failure();
              ranks.push_back(rank);
              ++count;
              return success();
            }))
      return failure();
    if (size >= 0 && count != size)
      return parser.emitError(loc, "replica groups must all have the same "
                                   "size, but one has ")
             << count << " ranks and another " << size;
    size = count;
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseRow))
    return failure();
  if (size <= 0)
    return parser.emitError(loc, "expected at least one non-empty replica "
                                 "group, e.g. groups = [[0, 1]]");
  Builder &builder = parser.getBuilder();
  groups = builder.getDenseI64ArrayAttr(ranks);
  groupSize = builder.getI64IntegerAttr(size);
  return success();
}

void mlir::kiln::printReplicaGroups(OpAsmPrinter &printer, Operation *,
                                    DenseI64ArrayAttr groups,
                                    IntegerAttr groupSize) {
  printer << "groups = [";
  llvm::interleaveComma(groupRows(groups.asArrayRef(), groupSize.getInt()),
                        printer, [&](ArrayRef<int64_t> row) {
                          printer << "[";
                          llvm::interleaveComma(row, printer);
                          printer << "]";
                        });
  printer << "]";
}

LogicalResult mlir::kiln::verifyReplicaGroups(Operation *op,
                                              ArrayRef<int64_t> groups,
                                              int64_t groupSize) {
  if (groupSize <= 0)
    return op->emitOpError("group_size must be positive, not ") << groupSize;
  if (groups.empty() || groups.size() % groupSize != 0)
    return op->emitOpError("has ")
           << groups.size() << " ranks in its groups, which is not a "
           << "positive multiple of the group size " << groupSize;
  int64_t ranks = groups.size();
  SmallVector<bool> seen(ranks, false);
  for (int64_t rank : groups) {
    if (rank < 0 || rank >= ranks)
      return op->emitOpError("replica groups name rank ")
             << rank << ", but " << ranks
             << " ranks in groups must be the ranks 0.." << ranks - 1;
    if (seen[rank])
      return op->emitOpError("replica groups name rank ")
             << rank << " twice; each rank is in exactly one group";
    seen[rank] = true;
  }
  return success();
}

template <typename Op>
static LogicalResult verifyGroups(Op op) {
  return verifyReplicaGroups(op, op.getGroups(),
                             static_cast<int64_t>(op.getGroupSize()));
}

static LogicalResult groupSizeError(std::optional<Location> location,
                                    StringRef opName, int64_t groupSize) {
  return emitOptionalError(location, "'kiln.", opName, "' op ",
                           "group_size must be positive, not ", groupSize);
}

static LogicalResult checkDimension(std::optional<Location> location,
                                    StringRef opName, StringRef what,
                                    int64_t dim, RankedTensorType type) {
  if (dim < 0 || dim >= type.getRank())
    return emitOptionalError(location, "'kiln.", opName, "' op ", what, " ",
                             dim, " is out of range for an operand of rank ",
                             type.getRank());
  return success();
}

static LogicalResult checkDivisible(std::optional<Location> location,
                                    StringRef opName, StringRef what,
                                    int64_t dim, RankedTensorType type,
                                    int64_t groupSize) {
  if (type.getDimSize(dim) % groupSize != 0)
    return emitOptionalError(location, "'kiln.", opName, "' op ", what, " ",
                             dim, " has size ", type.getDimSize(dim),
                             ", which is not divisible by the group size ",
                             groupSize);
  return success();
}

static RankedTensorType withDim(RankedTensorType type, int64_t dim,
                                int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return RankedTensorType::get(shape, type.getElementType());
}

static LogicalResult checkMean(Operation *op, CollectiveReduction kind,
                               Type operandType) {
  if (kind == CollectiveReduction::Mean &&
      !isa<FloatType>(getElementTypeOrSelf(operandType)))
    return op->emitOpError("kind = mean needs a float operand, not ")
           << operandType;
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes of the collectives, shared by the synchronous and start forms
//===----------------------------------------------------------------------===//

static LogicalResult inferAllGather(std::optional<Location> location,
                                    StringRef opName, Value operand,
                                    int64_t dim, int64_t groupSize,
                                    SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(operand.getType());
  if (groupSize <= 0)
    return groupSizeError(location, opName, groupSize);
  if (failed(checkDimension(location, opName, "dim", dim, type)))
    return failure();
  inferred.push_back(withDim(type, dim, type.getDimSize(dim) * groupSize));
  return success();
}

static LogicalResult inferReduceScatter(std::optional<Location> location,
                                        StringRef opName, Value operand,
                                        int64_t dim, int64_t groupSize,
                                        SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(operand.getType());
  if (groupSize <= 0)
    return groupSizeError(location, opName, groupSize);
  if (failed(checkDimension(location, opName, "dim", dim, type)) ||
      failed(checkDivisible(location, opName, "dim", dim, type, groupSize)))
    return failure();
  inferred.push_back(withDim(type, dim, type.getDimSize(dim) / groupSize));
  return success();
}

//===----------------------------------------------------------------------===//
// AllReduceOp, AllGatherOp, ReduceScatterOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroups(*this)))
    return failure();
  return checkMean(*this, getKind(), getOperand().getType());
}

LogicalResult AllGatherOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferAllGather(location, "all_gather", adaptor.getOperand(),
                        adaptor.getDimension(), adaptor.getGroupSize(),
                        inferred);
}

LogicalResult AllGatherOp::verify() { return verifyGroups(*this); }

LogicalResult ReduceScatterOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferReduceScatter(location, "reduce_scatter", adaptor.getOperand(),
                            adaptor.getDimension(), adaptor.getGroupSize(),
                            inferred);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyGroups(*this)))
    return failure();
  return checkMean(*this, getKind(), getOperand().getType());
}

//===----------------------------------------------------------------------===//
// CollectiveBroadcastOp, AllToAllOp, CollectivePermuteOp
//===----------------------------------------------------------------------===//

LogicalResult CollectiveBroadcastOp::verify() {
  if (failed(verifyGroups(*this)))
    return failure();
  auto root = static_cast<int64_t>(getRoot());
  auto groupSize = static_cast<int64_t>(getGroupSize());
  if (root < 0 || root >= groupSize)
    return emitOpError("root ")
           << root << " is not a group index (0.." << groupSize - 1 << ")";
  return success();
}

LogicalResult AllToAllOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
  int64_t groupSize = adaptor.getGroupSize();
  if (groupSize <= 0)
    return groupSizeError(location, "all_to_all", groupSize);
  int64_t split = adaptor.getSplitDim(), concat = adaptor.getConcatDim();
  if (failed(checkDimension(location, "all_to_all", "split_dim", split, type)) ||
      failed(checkDimension(location, "all_to_all", "concat_dim", concat,
                            type)) ||
      failed(checkDivisible(location, "all_to_all", "split_dim", split, type,
                            groupSize)))
    return failure();
  RankedTensorType result =
      withDim(type, split, type.getDimSize(split) / groupSize);
  result = withDim(result, concat, result.getDimSize(concat) * groupSize);
  inferred.push_back(result);
  return success();
}

LogicalResult AllToAllOp::verify() { return verifyGroups(*this); }

LogicalResult CollectivePermuteOp::verify() {
  ArrayRef<int64_t> pairs = getPairs();
  if (pairs.size() % 2 != 0)
    return emitOpError("pairs must hold (source, target) pairs, but has ")
           << pairs.size() << " entries";
  llvm::SmallSet<int64_t, 8> sources, targets;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    if (pairs[i] < 0 || pairs[i + 1] < 0)
      return emitOpError("pair (")
             << pairs[i] << ", " << pairs[i + 1] << ") names a negative rank";
    if (!sources.insert(pairs[i]).second)
      return emitOpError("rank ") << pairs[i] << " is the source of two pairs";
    if (!targets.insert(pairs[i + 1]).second)
      return emitOpError("rank ")
             << pairs[i + 1] << " is the target of two pairs";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The start ops and CollectiveWaitOp
//===----------------------------------------------------------------------===//

/// The start op's result is used once, by a kiln.collective_wait in its
/// block that names the start's operand as its source.
static LogicalResult verifyStart(Operation *op) {
  Value pending = op->getResult(0);
  if (!pending.hasOneUse())
    return op->emitOpError("result must have exactly one use, a "
                           "kiln.collective_wait, but has ")
           << std::distance(pending.use_begin(), pending.use_end());
  auto wait = dyn_cast<CollectiveWaitOp>(*pending.user_begin());
  if (!wait || wait.getPending() != pending)
    return op->emitOpError("result must be the pending operand of a "
                           "kiln.collective_wait");
  if (wait->getBlock() != op->getBlock())
    return op->emitOpError("is completed by a kiln.collective_wait in "
                           "another block");
  return success();
}

LogicalResult AllReduceStartOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getOperand().getType());
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyGroups(*this)) ||
      failed(checkMean(*this, getKind(), getOperand().getType())))
    return failure();
  return verifyStart(*this);
}

LogicalResult AllGatherStartOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferAllGather(location, "all_gather_start", adaptor.getOperand(),
                        adaptor.getDimension(), adaptor.getGroupSize(),
                        inferred);
}

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyGroups(*this)))
    return failure();
  return verifyStart(*this);
}

LogicalResult ReduceScatterStartOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferReduceScatter(location, "reduce_scatter_start",
                            adaptor.getOperand(), adaptor.getDimension(),
                            adaptor.getGroupSize(), inferred);
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyGroups(*this)) ||
      failed(checkMean(*this, getKind(), getOperand().getType())))
    return failure();
  return verifyStart(*this);
}

LogicalResult CollectiveWaitOp::verify() {
  Operation *start = getPending().getDefiningOp();
  if (!isa_and_nonnull<AllReduceStartOp, AllGatherStartOp,
                       ReduceScatterStartOp>(start))
    return emitOpError("pending operand must be the result of a kiln.*_start "
                       "op (all_reduce_start, all_gather_start, "
                       "reduce_scatter_start)");
  if (start->getOperand(0) != getSource())
    return emitOpError("source must be the operand of the start op that "
                       "began the exchange");
  return success();
}
