//===- Fusion.cpp - The kiln-fuse pass ------------------------------------===//
//
// Groups kiln ops into kiln.fused regions, each of which a backend compiles
// as one kernel. The decision is made here, once, so the CPU and CUDA
// backends fuse the same ops. Every block is handled on its own: the bodies
// of kiln.cond, kiln.while and kiln.for are blocks like the function body,
// and kiln.fused never crosses a region boundary. For one block:
//
//  1. Classify each op. *Elementwise*: ops with the Elementwise trait,
//     select, cast, broadcast_in_dim, reshape and iota. *Reduction*:
//     reduce_sum, reduce_max, reduce_mean. *Matmul*. *Opaque*: everything
//     else (gather, transpose, slice, concat, pad, reduce_window and its
//     gradient, dynamic slices, region ops, calls, non-kiln ops), which
//     never joins a group. A window op reads each operand element for
//     several outputs, so a producer fused into it would be recomputed per
//     window, and its lowering is a loop nest of its own. Splat constants are
//     not grouped either: step 6 copies them into the regions that read
//     them, so a region does not read a broadcast scalar from memory.
//
//  2. Put every non-opaque op in a group of its own.
//
//  3. Producer-consumer fusion. Visit the ops in program order; for every
//     operand produced by an op of another group, merge the producer's
//     group into the consumer's if `canMerge` allows it:
//       a. a group holds at most one matmul, and never a matmul together
//          with a reduction;
//       b. all reductions of a group reduce the same operand shape over the
//          same dims (softmax's max and sum, or layer norm's two means, share
//          a region; a reduction of a reduction's result does not, since it
//          would be a second pass over different data);
//       c. in a group with a matmul, the matmul's operands come from outside
//          the group (a prologue would be recomputed for every output tile)
//          and every op that depends on the matmul has the matmul's result
//          shape, so the epilogue maps onto the matmul's output elements;
//       d. in a group with reductions, no op has more elements than the
//          reductions' operand: an op of a larger shape reads a broadcast of
//          a reduced value, and the region would reduce again for every
//          copy (softmax's gradient broadcast against a per-example
//          activation in an outer product);
//       e. no cycle: no path may leave the merged group through an outside op
//          and come back into it, or the region would both feed and consume
//          that op. A forward search from the outside users of both groups
//          decides this; it walks every other group as a single node, since
//          each will become one op.
//     Merging whole groups handles diamonds (x -> a, x -> b, a + b) and
//     chains alike. One consumer stays out of its producer's group: a
//     widening kiln.cast of a value that an op outside every group reads
//     too (the u8 activation of a quantized network, read by the next
//     convolution and dequantized for the residual addition), when the
//     cast's own readers can all be grouped. The narrow value is written
//     either way; fused into the producer, the cast would write the wide
//     value as a second result (4 bytes an element more, read again
//     later), while its readers' region reads the narrow one instead.
//
//  4. Multi-output (sibling) fusion. For every value read by several groups,
//     merge them when `canMerge` allows it, neither holds a matmul, and both
//     iterate over the same shape (the largest result shape of an
//     elementwise group, the operand shape of a reduction group), so the
//     value is read once. Scalars are skipped: reading one twice is free.
//
//  5. Drop groups of one op (a region around one op changes nothing) and
//     groups whose values nobody uses. The others get their kind:
//     matmul_epilogue with a matmul, reduction with a reduction, elementwise
//     otherwise.
//
//  6. Replace each group by a kiln.fused placed at its last op. Its inputs
//     are the values the group reads from outside (first use first), its
//     results the group's values used outside it. The group's ops are cloned
//     into the body in program order, with the splat constants they read;
//     outside uses move to the results and the originals are erased.
//
//  7. An outside op that sat between the group's ops and read one of its
//     values now precedes the kiln.fused that defines the value. A stable
//     topological sort of the block, which exists because of 3e, moves it
//     after.
//
// Before step 1, ops whose results nobody uses are erased (innermost and
// last first, so a dead chain goes at once). Grouped, a dead reduction
// would be dropped from its region afterwards and leave a reduction kernel
// without its reduction.
//
// No op is ever duplicated: an op whose value is also used outside its group
// becomes an extra result, so an expensive producer (matmul, reduction) is
// computed once. The cycle search costs O(n) per merge attempt, so a block
// of n ops costs O(n^2) in the worst case.
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"

#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_FUSION
#include "kiln/Fusion/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Step 1: classification
//===----------------------------------------------------------------------===//

namespace {
enum class OpClass { Elementwise, Reduction, Matmul, Opaque };
} // namespace

static OpClass classify(Operation *op) {
  if (!isa_and_nonnull<KilnDialect>(op->getDialect()) ||
      op->getNumRegions() != 0)
    return OpClass::Opaque;
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<SelectOp, CastOp, BitcastOp, BroadcastInDimOp, ReshapeOp, IotaOp>(
          op))
    return OpClass::Elementwise;
  if (isa<ReduceSumOp, ReduceMaxOp, ReduceMeanOp>(op))
    return OpClass::Reduction;
  if (isa<MatmulOp>(op))
    return OpClass::Matmul;
  return OpClass::Opaque;
}

static bool isSplatConstant(Operation *op) {
  auto constant = dyn_cast_or_null<ConstantOp>(op);
  return constant && constant.getValue().isSplat();
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// The reduced dims of a reduce op, sorted.
static SmallVector<int64_t> reducedDims(Operation *op) {
  SmallVector<int64_t> dims =
      TypeSwitch<Operation *, SmallVector<int64_t>>(op)
          .Case<ReduceSumOp, ReduceMaxOp, ReduceMeanOp>([](auto reduce) {
            return SmallVector<int64_t>(reduce.getDims());
          });
  llvm::sort(dims);
  return dims;
}

/// Whether two reductions are one pass over the same data (rule 3b).
static bool sameReduction(Operation *a, Operation *b) {
  return shapeOf(a->getOperand(0)) == shapeOf(b->getOperand(0)) &&
         reducedDims(a) == reducedDims(b);
}

//===----------------------------------------------------------------------===//
// BlockFuser: steps 2 to 7 for one block
//===----------------------------------------------------------------------===//

namespace {
class BlockFuser {
public:
  explicit BlockFuser(Block &block) : block(block) {}

  /// Runs steps 2 to 7; fails only if the block could not be put back in
  /// topological order, which 3e rules out.
  LogicalResult run(FusionStats &stats);

private:
  struct Group {
    SmallVector<Operation *> ops;
    Operation *matmul = nullptr;
    /// The first reduction; all others reduce alike (rule 3b).
    Operation *reduction = nullptr;
    /// The most elements of any of its ops' results (rule 3d).
    int64_t largestResult = 0;
    bool alive = true;
  };

  /// The op of this block that is or contains `op`, or null.
  Operation *local(Operation *op) const {
    return block.findAncestorOpInBlock(*op);
  }
  std::optional<unsigned> groupOf(Operation *op) const {
    auto it = groupIndex.find(op);
    if (it == groupIndex.end())
      return std::nullopt;
    return it->second;
  }

  bool canMerge(unsigned a, unsigned b) const;
  bool widensForReaders(Operation *op) const;
  bool epilogueFits(Operation *matmul, unsigned a, unsigned b) const;
  bool createsCycle(unsigned a, unsigned b) const;
  void merge(unsigned into, unsigned from);
  SmallVector<int64_t> iterationShape(const Group &group) const;
  void fuseSiblings(Value value);
  /// Replaces `group` by a kiln.fused (step 6); false if nobody reads it.
  bool materialize(Group &group, FusionStats &stats);

  Block &block;
  DenseMap<Operation *, unsigned> position;
  DenseMap<Operation *, unsigned> groupIndex;
  SmallVector<Group> groups;
  /// Splat constants cloned into regions; erased at the end if unused.
  llvm::SetVector<Operation *> clonedConstants;
};

} // namespace

bool BlockFuser::epilogueFits(Operation *matmul, unsigned a, unsigned b) const {
  SmallVector<Operation *> ops(groups[a].ops);
  llvm::append_range(ops, groups[b].ops);
  llvm::sort(ops, [&](Operation *x, Operation *y) {
    return position.lookup(x) < position.lookup(y);
  });
  DenseSet<Operation *> members(ops.begin(), ops.end());
  for (Value operand : matmul->getOperands())
    if (Operation *def = operand.getDefiningOp(); def && members.contains(def))
      return false;

  ArrayRef<int64_t> tile = shapeOf(matmul->getResult(0));
  DenseSet<Operation *> dependents{matmul};
  for (Operation *op : ops) {
    if (op == matmul || llvm::none_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && dependents.contains(def);
        }))
      continue;
    dependents.insert(op);
    for (Value result : op->getResults())
      if (shapeOf(result) != tile)
        return false;
  }
  return true;
}

bool BlockFuser::createsCycle(unsigned a, unsigned b) const {
  auto inUnion = [&](Operation *op) {
    std::optional<unsigned> group = groupOf(op);
    return group && (*group == a || *group == b);
  };
  SmallVector<Operation *> worklist;
  auto pushUsers = [&](Operation *op) {
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (Operation *user0 = local(user))
          worklist.push_back(user0);
  };
  // Direct edges between the two groups are what merging removes; only
  // paths through an outside op count.
  for (unsigned g : {a, b})
    for (Operation *op : groups[g].ops)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (Operation *user0 = local(user); user0 && !inUnion(user0))
            worklist.push_back(user0);

  DenseSet<Operation *> visited;
  DenseSet<unsigned> visitedGroups;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (inUnion(op))
      return true;
    if (!visited.insert(op).second)
      continue;
    std::optional<unsigned> group = groupOf(op);
    if (!group) {
      pushUsers(op);
      continue;
    }
    // Another group is one node: entering it anywhere leaves it everywhere.
    if (!visitedGroups.insert(*group).second)
      continue;
    for (Operation *member : groups[*group].ops) {
      visited.insert(member);
      pushUsers(member);
    }
  }
  return false;
}

/// Whether `op` is a widening kiln.cast left to its readers' group rather
/// than fused into its producer's (the exception in step 3).
bool BlockFuser::widensForReaders(Operation *op) const {
  auto cast = dyn_cast<CastOp>(op);
  if (!cast || cast->use_empty())
    return false;
  Type from = getElementTypeOrSelf(cast.getOperand().getType());
  Type to = getElementTypeOrSelf(cast.getType());
  if (!from.isIntOrFloat() || !to.isIntOrFloat() ||
      to.getIntOrFloatBitWidth() <= from.getIntOrFloatBitWidth())
    return false;
  auto grouped = [&](Operation *user) {
    Operation *user0 = local(user);
    return user0 && groupOf(user0).has_value();
  };
  return !llvm::all_of(cast.getOperand().getUsers(), grouped) &&
         llvm::all_of(cast->getUsers(), grouped);
}

bool BlockFuser::canMerge(unsigned a, unsigned b) const {
  const Group &ga = groups[a], &gb = groups[b];
  if (ga.matmul && gb.matmul)
    return false;
  Operation *matmul = ga.matmul ? ga.matmul : gb.matmul;
  if (matmul && (ga.reduction || gb.reduction))
    return false;
  if (ga.reduction && gb.reduction &&
      !sameReduction(ga.reduction, gb.reduction))
    return false;
  if (matmul && !epilogueFits(matmul, a, b))
    return false;
  if (Operation *reduction = ga.reduction ? ga.reduction : gb.reduction) {
    int64_t operandElements =
        cast<RankedTensorType>(reduction->getOperand(0).getType())
            .getNumElements();
    if (std::max(ga.largestResult, gb.largestResult) > operandElements)
      return false;
  }
  return !createsCycle(a, b);
}

void BlockFuser::merge(unsigned into, unsigned from) {
  Group &target = groups[into], &source = groups[from];
  for (Operation *op : source.ops) {
    groupIndex[op] = into;
    target.ops.push_back(op);
  }
  if (!target.matmul)
    target.matmul = source.matmul;
  if (!target.reduction)
    target.reduction = source.reduction;
  target.largestResult = std::max(target.largestResult, source.largestResult);
  source.ops.clear();
  source.alive = false;
}

SmallVector<int64_t> BlockFuser::iterationShape(const Group &group) const {
  if (group.reduction)
    return SmallVector<int64_t>(shapeOf(group.reduction->getOperand(0)));
  ArrayRef<int64_t> largest;
  int64_t largestCount = -1;
  for (Operation *op : group.ops)
    for (Value result : op->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      if (type.getNumElements() > largestCount) {
        largestCount = type.getNumElements();
        largest = type.getShape();
      }
    }
  return SmallVector<int64_t>(largest);
}

void BlockFuser::fuseSiblings(Value value) {
  // A gradient's run-time stack (a dynamic leading dimension) is read by
  // stack ops only, which no group holds.
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() <= 1 ||
      isSplatConstant(value.getDefiningOp()))
    return;
  // One reading op per group, in program order, so the result does not
  // depend on the order of the use list.
  SmallVector<Operation *> readers;
  DenseSet<unsigned> seen;
  for (Operation *user : value.getUsers()) {
    Operation *user0 = local(user);
    std::optional<unsigned> group = user0 ? groupOf(user0) : std::nullopt;
    if (group && seen.insert(*group).second)
      readers.push_back(user0);
  }
  if (readers.size() < 2)
    return;
  llvm::sort(readers, [&](Operation *x, Operation *y) {
    return position.lookup(x) < position.lookup(y);
  });
  for (Operation *reader : llvm::drop_begin(readers)) {
    unsigned first = *groupOf(readers.front()), other = *groupOf(reader);
    if (first == other || groups[first].matmul || groups[other].matmul)
      continue;
    if (iterationShape(groups[first]) != iterationShape(groups[other]))
      continue;
    if (canMerge(first, other))
      merge(first, other);
  }
}

bool BlockFuser::materialize(Group &group, FusionStats &stats) {
  llvm::sort(group.ops, [&](Operation *x, Operation *y) {
    return position.lookup(x) < position.lookup(y);
  });
  DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
  auto isOutside = [&](OpOperand &use) {
    Operation *user = local(use.getOwner());
    return !user || !members.contains(user);
  };

  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if ((def && members.contains(def)) || isSplatConstant(def))
        continue;
      inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUses(), isOutside))
        outputs.push_back(result);
  }
  // Nobody reads the group: its (pure) ops are dead code, left to the
  // canonicalizer.
  if (outputs.empty())
    return false;

  FusionKind kind = group.matmul      ? FusionKind::matmul_epilogue
                    : group.reduction ? FusionKind::reduction
                                      : FusionKind::elementwise;
  // The region goes where its first op was, or right after the last of its
  // inputs defined further down the block, not where its last op was: a
  // matmul epilogue that ends in an update appended at the end of a
  // training step (w - lr * dw) then runs with its product, while the
  // product's operands are still live, instead of after later ops have
  // reused their buffers (which keeps a transposed operand from being read
  // in place). Nothing outside the group reads its results before its last
  // op, so any point from there back to its inputs is valid.
  Operation *insertion = group.ops.front();
  for (Value input : inputs) {
    Operation *def = input.getDefiningOp();
    if (def && def->getBlock() == insertion->getBlock() &&
        !def->isBeforeInBlock(insertion))
      insertion = def->getNextNode();
  }
  OpBuilder builder(insertion);
  SmallVector<Location> locations;
  for (Operation *op : group.ops)
    locations.push_back(op->getLoc());
  Location loc = builder.getFusedLoc(locations);
  auto fused = builder.create<FusedOp>(loc, ValueRange(outputs).getTypes(),
                                       kind, inputs.getArrayRef());

  Block *body = builder.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (isSplatConstant(def) && !mapping.contains(operand)) {
        builder.clone(*def, mapping);
        clonedConstants.insert(def);
      }
    }
    builder.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value output : outputs)
    yielded.push_back(mapping.lookup(output));
  builder.create<YieldOp>(loc, yielded);

  for (auto [output, result] : llvm::zip(outputs, fused.getResults()))
    output.replaceUsesWithIf(result, isOutside);
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
  ++stats.regions;
  stats.fusedOps += group.ops.size();
  return true;
}

LogicalResult BlockFuser::run(FusionStats &stats) {
  // Step 2: one group per non-opaque op.
  for (auto [index, op] : llvm::enumerate(block)) {
    position[&op] = index;
    OpClass kind = classify(&op);
    if (kind == OpClass::Opaque)
      continue;
    groupIndex[&op] = groups.size();
    Group &group = groups.emplace_back();
    group.ops.push_back(&op);
    for (Value result : op.getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType()))
        group.largestResult =
            std::max(group.largestResult, type.getNumElements());
    if (kind == OpClass::Matmul)
      group.matmul = &op;
    else if (kind == OpClass::Reduction)
      group.reduction = &op;
  }
  if (groups.size() < 2)
    return success();

  // Step 3: producers into consumers, in program order.
  for (Operation &op : block) {
    for (Value operand : op.getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != &block)
        continue;
      std::optional<unsigned> from = groupOf(producer);
      std::optional<unsigned> into = groupOf(&op);
      if (from && into && *from != *into && !widensForReaders(&op) &&
          canMerge(*from, *into))
        merge(*into, *from);
    }
  }

  // Step 4: groups reading the same value.
  for (BlockArgument argument : block.getArguments())
    fuseSiblings(argument);
  for (Operation &op : block)
    for (Value result : op.getResults())
      fuseSiblings(result);

  // Steps 5 and 6.
  bool changed = false;
  for (Group &group : groups)
    if (group.alive && group.ops.size() >= 2)
      changed |= materialize(group, stats);
  for (Operation *constant : clonedConstants)
    if (constant->use_empty())
      constant->erase();

  // Step 7.
  if (changed && !sortTopologically(&block))
    return failure();
  return success();
}

FusionStats mlir::kiln::fuseOps(Operation *root) {
  root->walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
    if (isOpTriviallyDead(op))
      op->erase();
  });
  // Blocks of kiln.fused regions are already fused; every other block is
  // handled on its own.
  SmallVector<Block *> blocks;
  root->walk([&](Block *block) {
    if (!isa_and_nonnull<FusedOp>(block->getParentOp()))
      blocks.push_back(block);
  });
  FusionStats stats;
  for (Block *block : blocks) {
    LogicalResult sorted = BlockFuser(*block).run(stats);
    (void)sorted;
    assert(succeeded(sorted) && "fusion groups must not form a cycle");
  }
  return stats;
}

namespace {
struct FusionPass : kiln::impl::FusionBase<FusionPass> {
  void runOnOperation() override {
    FusionStats stats = fuseOps(getOperation());
    numRegions += stats.regions;
    numFusedOps += stats.fusedOps;
    if (stats.regions == 0)
      markAllAnalysesPreserved();
  }
};
} // namespace
