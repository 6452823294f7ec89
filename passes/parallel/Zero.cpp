//===- Zero.cpp - The kiln-zero pass --------------------------------------===//
//
// Shards the optimizer across the ranks of a data-parallel training step,
// as DeepSpeed ZeRO and PyTorch FSDP do, as a rewrite of the SPMD function
// that kiln-data-parallel produced. Every sharded tensor is held as a
// *block*: its elements, flattened and padded with zeros to a multiple of
// N, cut into N blocks of c = ceil(numel / N) elements; rank r holds block
// r, a tensor<c x T>.
//
//   stage=1 the optimizer state arguments and results are blocks; the
//           gradients are all-reduced as before; each rank updates its
//           block of every parameter and the new blocks are all-gathered.
//   stage=2 as 1, but a gradient that only the update reads is
//           reduce-scattered: each rank receives only its block of the sum.
//   stage=3 as 2, and the parameters are blocks too: each read of a
//           parameter outside the update (the forward and the backward
//           pass) gathers it right before that read, and the new
//           parameters are returned as blocks.
//
// The update is elementwise (kiln/Optim.h's contract): element j of a new
// parameter and of its new state depends only on element j of the
// parameter, its reduced gradient and its state, plus rank-0 values. So
// block r of the update is the update of the blocks r, which this pass
// proves op by op and rejects otherwise.
//
// The algorithm, for one function:
//
//  1. The update U: starting from each sharded result, walk back through
//     the ops that are elementwise at the result's shape (kiln ops with the
//     Elementwise trait, select, cast), then forward from them through every
//     elementwise op that reads a value of U (the new parameters of ZeRO-1
//     read the new state). The values outside U that U reads are its
//     *leaves*.
//
//  2. Check: a value that exists only as blocks (a sharded argument, and
//     what U computes from one) must be read by U or returned, and nothing
//     else; with stage=3 a sharded argument may be read elsewhere too (it is
//     then gathered). Otherwise the op that reads it is reported. A sharded
//     result must be a sharded argument or computed by U.
//
//  3. (stage >= 2) Undo kiln-data-parallel's gradient buckets into one
//     kiln.all_reduce per gradient, placed right after the gradient is
//     computed. A sum that only U reads becomes a reduce-scatter (step 4).
//
//  4. Sharded arguments take their block types. Each op of U is copied,
//     right before the original, onto the blocks of its operands, at the
//     block's shape. The block of a leaf is: the argument itself (sharded
//     arguments); a splat or a broadcast scalar made again at the block
//     shape; for a gradient to scatter, kiln.reduce_scatter of the padded,
//     flattened partial gradient; for anything else (a replicated
//     parameter, a reduced gradient of ZeRO-1), the rank's block cut out of
//     the whole value at kiln.rank * c, with no communication.
//
//  5. The results: a sharded result returns its block; any other result
//     that exists only as blocks (the new parameters of ZeRO-1 and 2) is
//     gathered with kiln.all_gather_start right after its block is
//     computed and waited for right before the return. With stage=3, each
//     op that reads a sharded argument outside U reads it through its own
//     gather: kiln.all_gather_start placed after the previous such op (so
//     the next parameter arrives while the current one is used) and
//     kiln.collective_wait right before the op. Each gathered copy has
//     exactly one reader.
//
//  6. The ops left without uses are erased, then the exchanges are
//     bucketed: the remaining all_reduce sums (the loss) as
//     kiln-data-parallel does (GradientBuckets.cpp), the reduce-scatters
//     into buckets of their own (ScatterBuckets.cpp).
//
//===----------------------------------------------------------------------===//

#include "GradientBuckets.h"
#include "ScatterBuckets.h"
#include "TargetFunctions.h"

#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/Passes.h"
#include "kiln/Passes/Zero.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_ZERO
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Whether `op` computes element j of its result from element j of its
/// operands only, at one shape of rank >= 1 (a select may take a rank-0
/// predicate, which picks whole operands and is the same on every rank).
/// An op without operands makes its values from nothing (by position, say)
/// and is not one.
bool isElementwiseAtItsShape(Operation *op) {
  if (!isa_and_nonnull<KilnDialect>(op->getDialect()) ||
      op->getNumRegions() != 0 || op->getNumResults() != 1 ||
      op->getNumOperands() == 0)
    return false;
  if (!op->hasTrait<OpTrait::Elementwise>() && !isa<SelectOp, CastOp>(op))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape())
    return false;
  for (Value operand : op->getOperands()) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    if (operandType.getShape() != type.getShape() &&
        !(isa<SelectOp>(op) && operandType.getRank() == 0 &&
          operand == op->getOperand(0)))
      return false;
  }
  return true;
}

int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// The rewrite of one function (steps 1-6 of the file comment).
class ZeroRewriter {
public:
  ZeroRewriter(func::FuncOp func, const ZeroConfig &config)
      : func(func), config(config), builder(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult findGroup();
  void collectUpdate();
  LogicalResult check();
  void unbucket();
  void sortUpdate();
  Value blockOf(Value v);
  Value cutBlock(Value whole);
  Value flattenAndPad(Value whole);
  Value gather(Value block, Type wholeType, Operation *startAfter,
               Operation *waitBefore);
  void gatherParameterReads();

  int64_t blockSize(Value v) const {
    return (numElements(v) + ranks - 1) / ranks;
  }
  RankedTensorType blockType(Value v) const {
    return RankedTensorType::get(
        {blockSize(v)}, cast<RankedTensorType>(v.getType()).getElementType());
  }
  bool inUpdate(Operation *op) const { return op && update.contains(op); }

  func::FuncOp func;
  const ZeroConfig &config;
  OpBuilder builder;
  Block *body = nullptr;
  int64_t ranks = 0;
  SmallVector<int64_t> group;

  llvm::SmallDenseSet<unsigned> shardedArgs, shardedResults;
  /// The ops of the update, in block order.
  llvm::SetVector<Operation *> update;
  /// The values that exist only as blocks after the rewrite: the sharded
  /// arguments and what the update computes from them.
  llvm::SetVector<Value> blocksOnly;
  /// With stage=3: the reads of sharded arguments outside the update.
  SmallVector<OpOperand *> parameterReads;
  /// The all_reduce sums step 3 made of the buckets, and those that become
  /// reduce-scatters.
  SmallVector<AllReduceOp> reductions;
  llvm::DenseSet<Value> toScatter;
  SmallVector<ReduceScatterOp> scatters;

  /// Value of the original function -> this rank's block of it; the
  /// whole types of the sharded arguments.
  DenseMap<Value, Value> blocks;
  DenseMap<Value, Type> originalTypes;
  Value rank;
  /// Block size c -> kiln.rank * c.
  DenseMap<int64_t, Value> offsets;
};

//===----------------------------------------------------------------------===//
// Steps 1-2: the update and its checks
//===----------------------------------------------------------------------===//

/// The replica group of the function's collectives: kiln-data-parallel
/// made them all over the one group of every rank.
LogicalResult ZeroRewriter::findGroup() {
  func.walk([&](Operation *op) {
    if (ranks)
      return;
    if (auto groupSize = op->getAttrOfType<IntegerAttr>("group_size")) {
      auto groups = op->getAttrOfType<DenseI64ArrayAttr>("groups");
      if (groups && static_cast<int64_t>(groups.size()) == groupSize.getInt()) {
        ranks = groupSize.getInt();
        group.assign(groups.asArrayRef().begin(), groups.asArrayRef().end());
      }
    }
  });
  if (!ranks)
    return func.emitError("kiln-zero runs on the output of "
                          "kiln-data-parallel, but @")
           << func.getSymName()
           << " has no collective over all ranks to take their number from";
  return success();
}

void ZeroRewriter::collectUpdate() {
  // Back from the sharded results through elementwise ops.
  SmallVector<Value> work;
  Operation *terminator = body->getTerminator();
  for (unsigned i : shardedResults)
    work.push_back(terminator->getOperand(i));
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || update.contains(def) || !isElementwiseAtItsShape(def))
      continue;
    update.insert(def);
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  // Forward through elementwise ops that read a value of the update.
  for (Operation &op : body->without_terminator())
    if (!update.contains(&op) && isElementwiseAtItsShape(&op) &&
        llvm::any_of(op.getOperands(),
                     [&](Value v) { return inUpdate(v.getDefiningOp()); }))
      update.insert(&op);
  sortUpdate();

  for (int64_t i : config.shardedArgs)
    blocksOnly.insert(body->getArgument(i));
  for (Operation *op : update)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return blocksOnly.contains(v); }))
      blocksOnly.insert(op->getResult(0));
}

/// Keeps `update` in block order, which step 4 follows.
void ZeroRewriter::sortUpdate() {
  SmallVector<Operation *> ordered(update.begin(), update.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  update.clear();
  update.insert(ordered.begin(), ordered.end());
}

LogicalResult ZeroRewriter::check() {
  Operation *terminator = body->getTerminator();
  for (unsigned i : shardedResults) {
    Value result = terminator->getOperand(i);
    Operation *def = result.getDefiningOp();
    auto type = cast<RankedTensorType>(result.getType());
    if (type.getRank() == 0)
      return func.emitError("kiln-zero: sharded result #")
             << i << " of @" << func.getSymName()
             << " is rank 0; the step count and other scalars stay whole";
    if (!def) {
      if (!shardedArgs.contains(cast<BlockArgument>(result).getArgNumber()))
        return func.emitError("kiln-zero: sharded result #")
               << i << " of @" << func.getSymName() << " returns argument #"
               << cast<BlockArgument>(result).getArgNumber()
               << ", which is not sharded";
      continue;
    }
    if (!update.contains(def))
      return def->emitError("kiln-zero: sharded result #")
             << i << " of @" << func.getSymName() << " is computed by '"
             << def->getName()
             << "', which is not elementwise in (parameter, gradient, "
                "optimizer state)";
  }
  for (Value v : blocksOnly) {
    for (OpOperand &use : v.getUses()) {
      Operation *reader = body->findAncestorOpInBlock(*use.getOwner());
      if (reader == terminator || update.contains(reader))
        continue;
      auto arg = dyn_cast<BlockArgument>(v);
      if (arg && config.stage == 3) {
        parameterReads.push_back(&use);
        continue;
      }
      if (arg)
        return use.getOwner()->emitError("kiln-zero: '")
               << use.getOwner()->getName() << "' reads sharded argument #"
               << arg.getArgNumber()
               << " whole; with stage=1 or 2 only the elementwise optimizer "
                  "update may read a sharded argument (stage=3 gathers "
                  "parameters before such reads)";
      return use.getOwner()->emitError("kiln-zero: '")
             << use.getOwner()->getName()
             << "' reads whole a value the update computes from sharded "
                "state; the update must be elementwise in (parameter, "
                "gradient, optimizer state)";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Step 3: one all_reduce per gradient
//===----------------------------------------------------------------------===//

/// Turns each bucket kiln-data-parallel made (an all_reduce_start of the
/// concatenated, flattened gradients; a collective_wait whose slices,
/// reshaped, are the reduced gradients) back into one kiln.all_reduce per
/// gradient, right after the gradient is computed. A bucket of another
/// shape is left as it is (its gradients are then cut, as in ZeRO-1).
void ZeroRewriter::unbucket() {
  SmallVector<CollectiveWaitOp> waits;
  body->walk([&](CollectiveWaitOp wait) { waits.push_back(wait); });
  auto reduceAfterDef = [&](Value v) {
    if (Operation *def = v.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointAfter(rank.getDefiningOp());
    auto sum = builder.create<AllReduceOp>(
        v.getLoc(), v, CollectiveReduction::Sum, group, ranks);
    reductions.push_back(sum);
    return sum;
  };
  for (CollectiveWaitOp wait : waits) {
    auto start = wait.getPending().getDefiningOp<AllReduceStartOp>();
    if (!start || start.getKind() != CollectiveReduction::Sum ||
        start.getGroupSize() != static_cast<uint64_t>(ranks))
      continue;
    Value source = start.getOperand();
    auto concat = source.getDefiningOp<ConcatOp>();
    // The members of a bucket of several: (gradient, offset in the bucket).
    SmallVector<std::pair<Value, int64_t>> members;
    bool several = concat && concat.getDimension() == 0 &&
                   concat.getInputs().size() > 1 &&
                   llvm::all_of(wait->getUsers(),
                                [](Operation *u) { return isa<SliceOp>(u); });
    if (several) {
      int64_t offset = 0;
      for (Value input : concat.getInputs()) {
        Value gradient = input;
        if (auto reshape = input.getDefiningOp<ReshapeOp>())
          gradient = reshape.getOperand();
        members.push_back({gradient, offset});
        offset += numElements(input);
      }
      for (Operation *user : wait->getUsers()) {
        auto slice = cast<SliceOp>(user);
        const auto *member = llvm::find_if(
            members, [&](auto &m) { return m.second == slice.getStart()[0]; });
        if (slice.getStride()[0] != 1 || member == members.end() ||
            numElements(member->first) != numElements(slice.getResult()))
          several = false;
      }
    }
    if (!several) {
      if (concat && concat.getInputs().size() > 1)
        continue; // a bucket of an unknown shape
      AllReduceOp sum = reduceAfterDef(source);
      wait.getResult().replaceAllUsesWith(sum.getResult());
    } else {
      SmallVector<AllReduceOp> sums = llvm::map_to_vector(
          members, [&](auto &m) { return reduceAfterDef(m.first); });
      for (Operation *user : llvm::make_early_inc_range(wait->getUsers())) {
        auto slice = cast<SliceOp>(user);
        size_t k = llvm::find_if(members,
                                 [&](auto &m) {
                                   return m.second == slice.getStart()[0];
                                 }) -
                   members.begin();
        AllReduceOp sum = sums[k];
        for (Operation *reader : llvm::make_early_inc_range(slice->getUsers()))
          if (auto reshape = dyn_cast<ReshapeOp>(reader);
              reshape && reshape.getType() == sum.getType()) {
            reshape.getResult().replaceAllUsesWith(sum.getResult());
            reshape.erase();
          }
        if (!slice->use_empty()) {
          builder.setInsertionPointAfter(sum);
          Value flat = sum.getType() == slice.getType()
                           ? sum.getResult()
                           : builder.create<ReshapeOp>(slice.getLoc(),
                                                       slice.getType(), sum);
          slice.getResult().replaceAllUsesWith(flat);
        }
        slice.erase();
      }
    }
    wait.erase();
    start.erase();
  }
}

//===----------------------------------------------------------------------===//
// Step 4: blocks
//===----------------------------------------------------------------------===//

/// `whole` as a vector of N * c elements, zeros after its own.
Value ZeroRewriter::flattenAndPad(Value whole) {
  Location loc = whole.getLoc();
  auto type = cast<RankedTensorType>(whole.getType());
  int64_t count = type.getNumElements(), padded = blockSize(whole) * ranks;
  Value flat = whole;
  if (type.getRank() != 1)
    flat = builder.create<ReshapeOp>(
        loc, RankedTensorType::get({count}, type.getElementType()), whole);
  if (padded == count)
    return flat;
  auto scalar = RankedTensorType::get({}, type.getElementType());
  Value zero = builder.create<ConstantOp>(
      loc, DenseElementsAttr::get(scalar,
                                  builder.getZeroAttr(type.getElementType())));
  return builder.create<PadOp>(loc, flat, zero, ArrayRef<int64_t>{0},
                               ArrayRef<int64_t>{padded - count},
                               ArrayRef<int64_t>{0});
}

/// This rank's block of the whole value `whole`, without communication.
Value ZeroRewriter::cutBlock(Value whole) {
  Location loc = whole.getLoc();
  Value flat = flattenAndPad(whole);
  int64_t size = blockSize(whole);
  Value &offset = offsets[size];
  if (!offset) {
    // kiln.rank * c, once per block size, at the top of the body.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfter(rank.getDefiningOp());
    auto scalar = RankedTensorType::get({}, builder.getI64Type());
    Value c = builder.create<ConstantOp>(
        loc, DenseElementsAttr::get(scalar, builder.getI64IntegerAttr(size)));
    offset = builder.create<MulOp>(loc, rank, c);
  }
  return builder.create<DynamicSliceOp>(loc, flat, offset, size);
}

/// The block of `v` (step 4), made at the builder's insertion point if it
/// is not made yet.
Value ZeroRewriter::blockOf(Value v) {
  if (cast<RankedTensorType>(v.getType()).getRank() == 0)
    return v; // a select's rank-0 predicate, the same on every rank
  if (Value done = blocks.lookup(v))
    return done;
  Location loc = v.getLoc();
  Value block;
  Operation *def = v.getDefiningOp();
  if (auto constant = dyn_cast_or_null<ConstantOp>(def);
      constant && isa<DenseElementsAttr>(constant.getValue()) &&
      cast<DenseElementsAttr>(constant.getValue()).isSplat()) {
    auto dense = cast<DenseElementsAttr>(constant.getValue());
    block = builder.create<ConstantOp>(
        loc,
        DenseElementsAttr::get(blockType(v), dense.getSplatValue<Attribute>()));
  } else if (auto broadcast = dyn_cast_or_null<BroadcastInDimOp>(def);
             broadcast && broadcast.getOperand().getType().getRank() == 0) {
    block = builder.create<BroadcastInDimOp>(
        loc, blockType(v), broadcast.getOperand(), ArrayRef<int64_t>{});
  } else if (toScatter.contains(v)) {
    // Reduce-scattered right where the all_reduce was.
    OpBuilder::InsertionGuard guard(builder);
    auto sum = cast<AllReduceOp>(def);
    builder.setInsertionPoint(sum);
    auto scatter = builder.create<ReduceScatterOp>(
        loc, flattenAndPad(sum.getOperand()), CollectiveReduction::Sum, 0,
        group, ranks);
    scatters.push_back(scatter);
    block = scatter;
  } else {
    block = cutBlock(v);
  }
  blocks[v] = block;
  return block;
}

/// `block`, gathered from the ranks into a whole value of `wholeType`:
/// kiln.all_gather_start after `startAfter` (at the top of the body if
/// null; without overlap, right before the wait), kiln.collective_wait
/// right before `waitBefore`.
Value ZeroRewriter::gather(Value block, Type wholeType, Operation *startAfter,
                           Operation *waitBefore) {
  Location loc = block.getLoc();
  if (!config.overlap)
    builder.setInsertionPoint(waitBefore);
  else if (startAfter)
    builder.setInsertionPointAfter(startAfter);
  else
    builder.setInsertionPointAfter(rank.getDefiningOp());
  Value pending = builder.create<AllGatherStartOp>(loc, block, 0, group, ranks);
  builder.setInsertionPoint(waitBefore);
  Value whole = builder.create<CollectiveWaitOp>(loc, pending, block);
  auto type = cast<RankedTensorType>(wholeType);
  int64_t count = type.getNumElements();
  if (count != cast<RankedTensorType>(whole.getType()).getNumElements())
    whole =
        builder.create<SliceOp>(loc, whole, ArrayRef<int64_t>{0},
                                ArrayRef<int64_t>{count}, ArrayRef<int64_t>{1});
  if (type.getRank() != 1)
    whole = builder.create<ReshapeOp>(loc, type, whole);
  return whole;
}

/// Step 5 for stage=3: every op outside the update that reads a sharded
/// argument reads its own gathered copy, started after the previous such
/// op.
void ZeroRewriter::gatherParameterReads() {
  // The readers in block order, each with the reads it makes.
  llvm::MapVector<Operation *, SmallVector<OpOperand *>> readers;
  llvm::sort(parameterReads, [&](OpOperand *a, OpOperand *b) {
    return body->findAncestorOpInBlock(*a->getOwner())
        ->isBeforeInBlock(body->findAncestorOpInBlock(*b->getOwner()));
  });
  for (OpOperand *read : parameterReads)
    readers[body->findAncestorOpInBlock(*read->getOwner())].push_back(read);
  Operation *previous = nullptr;
  for (auto &[reader, reads] : readers) {
    DenseMap<Value, Value> gathered;
    for (OpOperand *read : reads) {
      Value arg = read->get();
      Value &whole = gathered[arg];
      if (!whole)
        whole = gather(arg, originalTypes[arg], previous, reader);
      read->set(whole);
    }
    previous = reader;
  }
}

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

LogicalResult ZeroRewriter::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("kiln-zero handles functions whose body is one "
                          "block (kiln control flow is structured)");
  body = &func.front();
  auto checkIndex = [&](int64_t index, unsigned count, StringRef what,
                        llvm::SmallDenseSet<unsigned> &into) -> LogicalResult {
    if (index < 0 || index >= count)
      return func.emitError("kiln-zero: ")
             << what << " index " << index << " is out of range: @"
             << func.getSymName() << " has " << count << " " << what << "s";
    into.insert(index);
    return success();
  };
  for (int64_t i : config.shardedArgs)
    if (failed(checkIndex(i, body->getNumArguments(), "argument", shardedArgs)))
      return failure();
  for (int64_t i : config.shardedResults)
    if (failed(checkIndex(i, func.getNumResults(), "result", shardedResults)))
      return failure();
  for (unsigned i : shardedArgs) {
    auto type = dyn_cast<RankedTensorType>(body->getArgument(i).getType());
    if (!type || !type.hasStaticShape() || type.getRank() == 0)
      return func.emitError("kiln-zero: sharded argument #")
             << i << " of @" << func.getSymName() << " has type "
             << body->getArgument(i).getType()
             << "; only tensors of rank >= 1 and static shape are sharded "
                "(the step count and other scalars stay whole)";
  }
  if (failed(findGroup()))
    return failure();

  // 1-2, before anything changes.
  collectUpdate();
  if (failed(check()))
    return failure();

  builder.setInsertionPointToStart(body);
  rank = builder.create<RankOp>(
      func.getLoc(), RankedTensorType::get({}, builder.getI64Type()));

  // 3.
  if (config.stage >= 2) {
    unbucket();
    for (AllReduceOp sum : reductions)
      if (!sum->use_empty() && llvm::all_of(sum->getUsers(), [&](Operation *u) {
            return update.contains(u);
          }))
        toScatter.insert(sum.getResult());
  }

  // 4.
  for (unsigned i : shardedArgs) {
    BlockArgument arg = body->getArgument(i);
    originalTypes[arg] = arg.getType();
    blocks[arg] = arg;
  }
  for (unsigned i : shardedArgs) {
    BlockArgument arg = body->getArgument(i);
    arg.setType(blockType(arg));
  }
  for (Operation *op : update) {
    builder.setInsertionPoint(op);
    IRMapping mapping;
    for (Value operand : op->getOperands())
      mapping.map(operand, blockOf(operand));
    Operation *copy = builder.clone(*op, mapping);
    Value result = op->getResult(0);
    copy->getResult(0).setType(RankedTensorType::get(
        {(numElements(result) + ranks - 1) / ranks},
        cast<RankedTensorType>(result.getType()).getElementType()));
    blocks[result] = copy->getResult(0);
  }

  // 5.
  Operation *terminator = body->getTerminator();
  SmallVector<Value> results;
  for (auto [i, v] : llvm::enumerate(terminator->getOperands())) {
    if (shardedResults.contains(i)) {
      results.push_back(blocks.lookup(v));
    } else if (blocksOnly.contains(v)) {
      Value block = blocks.lookup(v);
      Type type = v.getType();
      if (auto arg = dyn_cast<BlockArgument>(v))
        type = originalTypes[arg];
      results.push_back(gather(block, type, block.getDefiningOp(), terminator));
    } else {
      results.push_back(v);
    }
  }
  terminator->setOperands(results);
  if (config.stage == 3)
    gatherParameterReads();
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         body->getArgumentTypes(),
                                         terminator->getOperandTypes()));

  // 6.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  SmallVector<AllReduceOp> remaining;
  for (AllReduceOp sum : reductions) {
    if (toScatter.contains(sum.getResult())) {
      assert(sum->use_empty() && "a scattered gradient read whole");
      sum.erase();
    } else {
      remaining.push_back(sum);
    }
  }
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  double cap = std::floor(config.bucketMb * 1024.0 * 1024.0);
  int64_t capBytes = cap >= 9.0e18 ? std::numeric_limits<int64_t>::max()
                                   : static_cast<int64_t>(cap);
  bucketPartialSums(*body, remaining, {}, capBytes, config.overlap);
  bucketScatters(*body, scatters, capBytes, config.overlap);
  return success();
}

} // namespace

LogicalResult mlir::kiln::shardOptimizerUpdate(func::FuncOp func,
                                               const ZeroConfig &config) {
  if (config.stage < 1 || config.stage > 3)
    return func.emitError("kiln-zero: stage must be 1, 2 or 3, not ")
           << config.stage;
  if (config.shardedArgs.empty() && config.shardedResults.empty())
    return func.emitError("kiln-zero needs the sharded arguments and "
                          "results: sharded-args=<i>,... "
                          "sharded-results=<j>,...");
  if (!(config.bucketMb >= 0))
    return func.emitError("kiln-zero: bucket-mb must be >= 0, not ")
           << config.bucketMb;
  return ZeroRewriter(func, config).run();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct ZeroPass : kiln::impl::ZeroBase<ZeroPass> {
  using ZeroBase::ZeroBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ZeroConfig config;
    config.stage = stage;
    config.shardedArgs.assign(shardedArgs.begin(), shardedArgs.end());
    config.shardedResults.assign(shardedResults.begin(), shardedResults.end());
    config.bucketMb = bucketMb;
    config.overlap = overlap;

    FailureOr<SmallVector<func::FuncOp>> targets =
        targetFunctions(module, functionName, "kiln-zero");
    if (failed(targets))
      return signalPassFailure();
    for (func::FuncOp f : *targets)
      if (failed(shardOptimizerUpdate(f, config)))
        return signalPassFailure();
  }
};
} // namespace
