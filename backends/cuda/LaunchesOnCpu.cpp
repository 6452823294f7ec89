//===- LaunchesOnCpu.cpp - The CUDA backend's kernels on the CPU ----------===//
//
// The kernels the CUDA backend generates (flash attention, tiled products,
// block reductions, grid-stride loops) are hand-built IR whose correctness
// can only be checked by running them. Without a GPU they run here: after
// the kernels are formed (synchronous gpu.launch ops on host buffers), each
// launch becomes host code that runs its body for every GPU thread, so that
// the whole program compiles for the CPU and can be checked against the
// reference evaluator (kiln-compile --target=cuda-on-cpu, the
// cuda-on-cpu.* end-to-end tests).
//
// Blocks run one after the other. A block's body is cut into phases at the
// ops that synchronize its threads (gpu.barrier, gpu.shuffle,
// gpu.all_reduce, a tensor-core product, and loops that hold one), and
// each phase is a loop over the block's threads, so that every thread
// finishes a phase before any starts the next, as a barrier promises:
//
//  - a value a later phase reads waits in a buffer of a slot per thread,
//    stored where it is computed (a view of a buffer, which no buffer
//    holds, is computed again where it is read);
//  - a shuffle stores each thread's value in its slot, and the next phase
//    reads the partner's slot, as NVVM's shfl.sync does (the warps are the
//    threads 32 at a time in linear id order, a thread whose partner lies
//    outside its segment gets its own value). A shuffle synchronizes its
//    warp only, so between two block synchronizations that hold one the
//    warps run one after the other, each through all the phases there:
//    a block barrier missing from a kernel is no more hidden by a shuffle
//    here than on a GPU;
//  - a tensor-core product (TensorCoreMma.h) stores each thread's operands
//    in slots, and in the next phase each thread computes its share of
//    the warp's product from its warp's slots, as the fragments lay them
//    out; a product synchronizes its warp only, as a shuffle. Products
//    wait until an op uses one's result (as anything but a later
//    product's accumulators) or the phase must end, and those waiting
//    then run in one phase, as the trips of one loop: the products of a
//    kernel's unrolled tile (one per fragment of a row of tiles, chained
//    along k through their accumulators) cost one phase and one copy of
//    the arithmetic, not one each;
//  - a block reduction combines the slots on the host, in thread order,
//    into one value for every thread;
//  - a loop that holds a synchronization runs on the host, its body's
//    phases inside it; what the threads carry from trip to trip waits in
//    slots. Every thread thus ends a trip before any starts the next (and
//    reaches the loop before any enters it, and leaves it before any goes
//    on), which a GPU does not promise: a workgroup buffer used on both
//    sides of those points races there, and kiln-cuda-check-launches
//    refuses it for both targets.
//
// Every thread must reach each synchronization, so that a phase is the
// same code for all: only loops whose bounds are the same for every thread
// of a block may hold one (a bound computed from the thread id or a
// shuffle's result is divergent), anything else is an error where a GPU
// would hang or answer garbage.
//
// Workgroup memory is one buffer per attribution for the whole launch,
// reused block after block (CUDA leaves it uninitialized per block too),
// and the workgroup address space leaves every type. Nothing else of the
// host code changes: the result is the program the CUDA target runs, its
// kernels' bodies inline, for the CPU lowering to finish.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreMma.h"
#include "TunedSites.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <deque>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDALAUNCHESONCPU
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Threads per warp, for shuffles.
static constexpr int64_t kWarpSize = 32;

/// Whether `op` synchronizes the threads of a block or a warp.
static bool synchronizes(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp>(op) ||
         mlir::kiln::mmaOperandType(op);
}

/// Whether `op` synchronizes a warp only.
static bool synchronizesWarp(Operation *op) {
  return isa<gpu::ShuffleOp>(op) || mlir::kiln::mmaOperandType(op);
}

namespace {
/// The values of a launch's body that may differ between the threads of a
/// block: computed from a thread id, a private buffer or a shuffle's
/// result, through any op, loop-carried value or branch result. A block
/// reduction's result is the same for every thread. Memory is not
/// followed: a value a thread loads from where another stored is as
/// uniform as the indices it is loaded at.
class Divergence {
public:
  explicit Divergence(gpu::LaunchOp launch) {
    gpu::KernelDim3 ids = launch.getThreadIds();
    for (Value id : {ids.x, ids.y, ids.z})
      divergent.insert(id);
    for (BlockArgument buffer : launch.getPrivateAttributions())
      divergent.insert(buffer);
    // To a fixed point: loop-carried values may turn divergent late.
    do
      changed = false;
    while (visit(launch.getBody()), changed);
  }

  bool contains(Value value) const { return divergent.contains(value); }

private:
  DenseSet<Value> divergent;
  bool changed = false;

  void mark(Value value) { changed |= divergent.insert(value).second; }
  void markIf(bool condition, Value value) {
    if (condition)
      mark(value);
  }
  bool any(ValueRange values) const {
    return llvm::any_of(values, [&](Value v) { return contains(v); });
  }

  void visit(Region &region) {
    for (Block &block : region)
      for (Operation &op : block)
        visit(&op);
  }

  void visit(Operation *op) {
    if (isa<gpu::AllReduceOp>(op))
      return;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      markIf(contains(loop.getLowerBound()) || contains(loop.getStep()),
             loop.getInductionVar());
      auto yielded = loop.getYieldedValues();
      for (auto [i, carried] : llvm::enumerate(loop.getRegionIterArgs()))
        markIf(contains(loop.getInitArgs()[i]) || contains(yielded[i]),
               carried);
      visit(loop.getRegion());
      bool bounds = contains(loop.getLowerBound()) ||
                    contains(loop.getUpperBound()) || contains(loop.getStep());
      for (auto [i, result] : llvm::enumerate(loop.getResults()))
        markIf(bounds || contains(loop.getRegionIterArgs()[i]), result);
      return;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      visit(branch.getThenRegion());
      visit(branch.getElseRegion());
      bool condition = contains(branch.getCondition());
      for (auto [i, result] : llvm::enumerate(branch.getResults())) {
        bool yielded = contains(branch.thenYield().getOperand(i)) ||
                       contains(branch.elseYield().getOperand(i));
        markIf(condition || yielded, result);
      }
      return;
    }
    // Any other op: its results (and its regions' arguments) are divergent
    // where an operand or anything computed inside it is.
    bool inputs = any(op->getOperands());
    for (Region &region : op->getRegions()) {
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          markIf(inputs, argument);
      visit(region);
    }
    bool inside = false;
    op->walk([&](Operation *nested) {
      if (nested != op)
        inside |= any(nested->getResults()) || any(nested->getOperands());
    });
    for (Value result : op->getResults())
      markIf(inputs || inside, result);
  }
};
} // namespace

/// Whether a value of `type` can wait in a buffer for a later phase.
static bool storable(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    type = vector.getElementType();
  return type.isIntOrIndexOrFloat();
}

/// Whether `op` asks for a thread, block or grid coordinate.
static bool isIdOp(Operation *op) {
  return isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp>(
      op);
}

/// One coordinate of `dims`.
static Value pick(gpu::KernelDim3 dims, gpu::Dimension dimension) {
  return dimension == gpu::Dimension::x   ? dims.x
         : dimension == gpu::Dimension::y ? dims.y
                                          : dims.z;
}

namespace {
/// A phase of a block: a loop over its threads that runs a run of the
/// body's ops between two synchronizations.
struct Phase {
  scf::ForOp loop;
  /// The linear thread id, and the three coordinates.
  Value thread;
  gpu::KernelDim3 ids;
  /// The body's values to their copies in this phase.
  IRMapping map;
};

/// Rewrites one launch into host code.
class LaunchOnCpu {
public:
  LaunchOnCpu(gpu::LaunchOp launch, SymbolTable &symbols)
      : launch(launch), loc(launch.getLoc()), builder(launch), outside(launch),
        symbols(symbols) {}

  LogicalResult run();

private:
  gpu::LaunchOp launch;
  Location loc;
  /// Where the host code of the blocks goes.
  OpBuilder builder;
  /// Before the launch: constants and the launch's buffers.
  OpBuilder outside;
  Value zero, one, threads;
  gpu::KernelDim3 grid, block;
  /// The ops that synchronize the block (barriers, block reductions) or
  /// hold one that does, and those that synchronize a warp (shuffles) or
  /// hold one.
  DenseSet<Operation *> blockSync, warpSync;
  /// The threads a phase runs: the block's, or one warp's where the
  /// block's threads run warp after warp.
  Value low, high;
  bool warpAfterWarp = false;
  std::deque<Phase> phases;
  /// The phase ops go to, or null after a synchronization.
  Phase *open = nullptr;
  /// Where each value of the body was computed: its phase and the copy of
  /// its op.
  DenseMap<Value, std::pair<Phase *, Operation *>> computed;
  /// Values kept per thread in a buffer of a slot per thread: those read
  /// in a later phase, loop-carried values and shuffles' results.
  DenseMap<Value, Value> kept;
  /// Values that are the same for every thread, as host values, innermost
  /// scope last (a loop's body is a scope).
  SmallVector<DenseMap<Value, Value>> uniform;
  /// The buffers a shuffle or block reduction exchanges values through.
  llvm::MapVector<Type, Value> exchange;
  /// The mmas whose operands are stored and whose products are not yet
  /// computed (a batch), with the extractions of their results.
  struct WaitingMma {
    /// The operands' type: bf16, f16 or tf32.
    Type half;
    SmallVector<LLVM::ExtractValueOp> extracts;
  };
  SmallVector<WaitingMma> waiting;
  /// The waiting products' results: 4 p + i for float i of product p.
  DenseMap<Value, int64_t> waitingResults;
  /// Where the batch's values wait, a slot per thread in each row: the
  /// words of A and B (rows 6 p to 6 p + 5 for product p), and the floats:
  /// the accumulators the threads stored (4 p to 4 p + 3), then the
  /// results (4 count + 4 p to 4 count + 4 p + 3). Each batch has buffers
  /// of its own, their rows counted by `batchProducts` once it runs.
  Value batchWords, batchFloatBytes, batchFloats;
  arith::ConstantIndexOp batchProducts;
  /// For each accumulator of a waiting product, the result of an earlier
  /// one of the batch it is (4 p + i), or -1 where the threads stored it.
  SmallVector<int64_t> chained;
  /// Names the accumulators' row tables.
  SymbolTable &symbols;
  /// The ops runMma ran for an mma (the extractions of its results).
  DenseSet<Operation *> absorbed;
  SmallVector<Value> buffers;

  LogicalResult check();
  Value index(OpBuilder &b, int64_t value) {
    return b.create<arith::ConstantIndexOp>(loc, value);
  }
  /// A fresh buffer of a slot per thread.
  Value slots(Type type) {
    Value buffer = outside.create<memref::AllocOp>(
        loc, MemRefType::get({ShapedType::kDynamic}, type), threads);
    buffers.push_back(buffer);
    return buffer;
  }
  Phase &openPhase();
  OpBuilder phaseBuilder(Phase &phase) {
    return OpBuilder::atBlockTerminator(phase.loop.getBody());
  }
  Value lookupUniform(Value value) const {
    for (const DenseMap<Value, Value> &scope : llvm::reverse(uniform))
      if (Value found = scope.lookup(value))
        return found;
    return {};
  }
  bool inBody(Value value) {
    return launch.getBody().isAncestor(value.getParentRegion());
  }
  Value keep(Value value);
  FailureOr<Value> threadValue(Value value, Phase &phase, OpBuilder &b);
  FailureOr<Value> uniformValue(Value value);
  /// Runs the ops from `begin` to `end` in phases: at the block's level,
  /// or with `warps` inside a loop over the warps.
  LogicalResult split(Block::iterator begin, Block::iterator end, bool warps);
  LogicalResult runSynchronization(Operation *op);
  LogicalResult runWarpAfterWarp(ArrayRef<Operation *> ops);
  LogicalResult runInPhase(Operation *op);
  FailureOr<Value> exchangeOf(Value value);
  LogicalResult runShuffle(gpu::ShuffleOp shuffle);
  LogicalResult runReduction(gpu::AllReduceOp reduce);
  LogicalResult runMma(LLVM::CallIntrinsicOp mma);
  void runWaitingMmas();
  bool usesWaiting(Operation *op);
  LogicalResult runLoop(scf::ForOp loop);
};
} // namespace

LogicalResult LaunchOnCpu::check() {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize())
    return launch.emitError(
        "only a synchronous launch without dynamic shared memory or "
        "clusters can run on the CPU");
  if (!launch.getBody().hasOneBlock())
    return launch.emitError("a launch body of more than one block cannot "
                            "run on the CPU");
  WalkResult walk = launch.getBody().walk([&](Operation *op) {
    if (auto reduce = dyn_cast<gpu::AllReduceOp>(op);
        reduce && !reduce.getOp()) {
      op->emitError("a block reduction with a region of its own cannot run "
                    "on the CPU");
      return WalkResult::interrupt();
    }
    if (synchronizes(op)) {
      DenseSet<Operation *> &set = synchronizesWarp(op) ? warpSync : blockSync;
      for (Operation *parent = op; parent != launch;
           parent = parent->getParentOp())
        set.insert(parent);
      return WalkResult::skip();
    }
    if (isIdOp(op) || isa<gpu::TerminatorOp>(op) ||
        !isa<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::advance();
    op->emitError("'") << op->getName() << "' cannot run on the CPU";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  if (blockSync.empty() && warpSync.empty())
    return success();
  if (!launch.getPrivateAttributions().empty())
    return launch.emitError("a launch with private attributions and "
                            "synchronizing ops cannot run on the CPU");
  // Every thread must reach each synchronization: only loops whose bounds
  // are the same for all threads may hold one.
  Divergence divergence(launch);
  walk = launch.getBody().walk([&](Operation *op) {
    if (!synchronizes(op))
      return WalkResult::advance();
    for (Operation *parent = op->getParentOp(); parent != launch;
         parent = parent->getParentOp()) {
      auto loop = dyn_cast<scf::ForOp>(parent);
      if (loop && !divergence.contains(loop.getLowerBound()) &&
          !divergence.contains(loop.getUpperBound()) &&
          !divergence.contains(loop.getStep()))
        continue;
      InFlightDiagnostic error =
          op->emitError("'")
          << op->getName() << "' cannot run on the CPU inside this '"
          << parent->getName()
          << "': only loops of the same bounds for every thread of a block "
             "may hold an op that synchronizes them";
      error.attachNote(parent->getLoc()) << "the enclosing op";
      return WalkResult::interrupt();
    }
    return WalkResult::skip();
  });
  return failure(walk.wasInterrupted());
}

Phase &LaunchOnCpu::openPhase() {
  if (open)
    return *open;
  auto loop = builder.create<scf::ForOp>(loc, low, high, one);
  Phase &phase = phases.emplace_back();
  phase.loop = loop;
  phase.thread = loop.getInductionVar();
  OpBuilder b = phaseBuilder(phase);
  Value x = b.create<arith::RemUIOp>(loc, phase.thread, block.x);
  Value rest = b.create<arith::DivUIOp>(loc, phase.thread, block.x);
  Value y = b.create<arith::RemUIOp>(loc, rest, block.y);
  Value z = b.create<arith::DivUIOp>(loc, rest, block.y);
  phase.ids = {x, y, z};
  gpu::KernelDim3 ids = launch.getThreadIds();
  phase.map.map(ids.x, x);
  phase.map.map(ids.y, y);
  phase.map.map(ids.z, z);
  open = &phase;
  return phase;
}

/// The buffer that keeps `value` in a slot per thread. A value computed in
/// an earlier phase that a buffer can hold gets one the first time: its
/// phase stores it where it is computed. Null for any other value.
Value LaunchOnCpu::keep(Value value) {
  if (Value buffer = kept.lookup(value))
    return buffer;
  auto found = computed.find(value);
  if (found == computed.end() || !storable(value.getType()))
    return {};
  auto [phase, op] = found->second;
  Value buffer = slots(value.getType());
  OpBuilder after(op->getContext());
  after.setInsertionPointAfter(op);
  after.create<memref::StoreOp>(loc, phase->map.lookup(value), buffer,
                                phase->thread);
  kept[value] = buffer;
  return buffer;
}

FailureOr<Value> LaunchOnCpu::threadValue(Value value, Phase &phase,
                                          OpBuilder &b) {
  if (Value mapped = phase.map.lookupOrNull(value))
    return mapped;
  if (!inBody(value))
    return value;
  if (Value host = lookupUniform(value))
    return host;
  if (Value buffer = keep(value)) {
    Value loaded = b.create<memref::LoadOp>(loc, buffer, phase.thread);
    phase.map.map(value, loaded);
    return loaded;
  }
  // What a buffer cannot hold (a view of a buffer) is computed again.
  Operation *op = value.getDefiningOp();
  if (!op || !computed.count(value) || !isPure(op) || op->getNumRegions()) {
    (op ? op : launch.getOperation())->emitError("a value of type ")
        << value.getType()
        << " cannot be carried across a synchronization on the CPU";
    return failure();
  }
  for (Value operand : op->getOperands()) {
    FailureOr<Value> mapped = threadValue(operand, phase, b);
    if (failed(mapped))
      return failure();
    phase.map.map(operand, *mapped);
  }
  b.clone(*op, phase.map);
  return phase.map.lookup(value);
}

FailureOr<Value> LaunchOnCpu::uniformValue(Value value) {
  if (!inBody(value))
    return value;
  if (Value host = lookupUniform(value))
    return host;
  Operation *op = value.getDefiningOp();
  if (op && isPure(op) && !op->getNumRegions() && !isIdOp(op)) {
    IRMapping map;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> host = uniformValue(operand);
      if (failed(host))
        return failure();
      map.map(operand, *host);
    }
    Value host = builder.clone(*op, map)->getResult(
        cast<OpResult>(value).getResultNumber());
    uniform.back()[value] = host;
    return host;
  }
  // Computed by the threads, the same for all: thread 0's.
  Value buffer = keep(value);
  if (!buffer)
    return launch.emitError("a loop bound cannot be computed on the host");
  return builder.create<memref::LoadOp>(loc, buffer, zero).getResult();
}

LogicalResult LaunchOnCpu::runInPhase(Operation *op) {
  if (absorbed.contains(op))
    return success();
  if (usesWaiting(op))
    runWaitingMmas();
  Phase &phase = openPhase();
  OpBuilder b = phaseBuilder(phase);
  // A coordinate asked of an op.
  auto coordinate = [&](Operation *id) -> Value {
    return TypeSwitch<Operation *, Value>(id)
        .Case([&](gpu::ThreadIdOp id) {
          return pick(phase.ids, id.getDimension());
        })
        .Case([&](gpu::BlockIdOp id) {
          return lookupUniform(pick(launch.getBlockIds(), id.getDimension()));
        })
        .Case(
            [&](gpu::BlockDimOp id) { return pick(block, id.getDimension()); })
        .Case([&](gpu::GridDimOp id) { return pick(grid, id.getDimension()); });
  };
  if (isIdOp(op)) {
    phase.map.map(op->getResult(0), coordinate(op));
    return success();
  }
  SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, used);
  for (Value value : used) {
    FailureOr<Value> mapped = threadValue(value, phase, b);
    if (failed(mapped))
      return failure();
    phase.map.map(value, *mapped);
  }
  Operation *copy = b.clone(*op, phase.map);
  for (Value result : op->getResults())
    computed[result] = {&phase, copy};
  SmallVector<Operation *> ids;
  copy->walk([&](Operation *nested) {
    if (isIdOp(nested))
      ids.push_back(nested);
  });
  for (Operation *id : ids) {
    id->getResult(0).replaceAllUsesWith(coordinate(id));
    id->erase();
  }
  return success();
}

/// A phase in which each thread puts `value` in its slot of the exchange
/// buffer of its type, which it returns.
FailureOr<Value> LaunchOnCpu::exchangeOf(Value value) {
  Value &buffer = exchange[value.getType()];
  if (!buffer)
    buffer = slots(value.getType());
  Phase &put = openPhase();
  OpBuilder b = phaseBuilder(put);
  FailureOr<Value> mine = threadValue(value, put, b);
  if (failed(mine))
    return failure();
  b.create<memref::StoreOp>(loc, *mine, buffer, put.thread);
  open = nullptr;
  return buffer;
}

LogicalResult LaunchOnCpu::runShuffle(gpu::ShuffleOp shuffle) {
  // Each thread puts its value in its slot; in the next phase, each reads
  // its partner's, as NVVM's shfl.sync does, its own where the partner
  // lies outside its segment of the warp.
  FailureOr<Value> slotsOfType = exchangeOf(shuffle.getValue());
  if (failed(slotsOfType))
    return failure();
  Type type = shuffle.getValue().getType();
  Phase &get = openPhase();
  OpBuilder b = phaseBuilder(get);
  FailureOr<Value> offset32 = threadValue(shuffle.getOffset(), get, b);
  FailureOr<Value> width32 = threadValue(shuffle.getWidth(), get, b);
  if (failed(offset32) || failed(width32))
    return failure();
  Value offset =
      b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), *offset32);
  Value width = b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), *width32);
  Value lane = b.create<arith::RemUIOp>(loc, get.thread, index(b, kWarpSize));
  Value inSegment = b.create<arith::RemUIOp>(loc, lane, width);
  Value segment = b.create<arith::SubIOp>(loc, get.thread, inSegment);
  using Pred = arith::CmpIPredicate;
  Value source, valid;
  switch (shuffle.getMode()) {
  case gpu::ShuffleMode::XOR:
    source = b.create<arith::XOrIOp>(loc, inSegment, offset);
    break;
  case gpu::ShuffleMode::DOWN:
    source = b.create<arith::AddIOp>(loc, inSegment, offset);
    break;
  case gpu::ShuffleMode::UP:
    source = b.create<arith::SubIOp>(loc, inSegment, offset);
    valid = b.create<arith::CmpIOp>(loc, Pred::uge, inSegment, offset);
    break;
  case gpu::ShuffleMode::IDX:
    source = offset;
    break;
  }
  if (!valid)
    valid = b.create<arith::CmpIOp>(loc, Pred::ult, source, width);
  Value partner = b.create<arith::AddIOp>(loc, segment, source);
  valid = b.create<arith::AndIOp>(
      loc, valid, b.create<arith::CmpIOp>(loc, Pred::ult, partner, threads));
  partner = b.create<arith::SelectOp>(loc, valid, partner, get.thread);
  Value read = b.create<memref::LoadOp>(loc, *slotsOfType, partner);
  // The results stay in this phase's values, and in slots for later
  // phases (the next shuffle may overwrite the exchange's).
  Value results = slots(type), valids = slots(b.getI1Type());
  b.create<memref::StoreOp>(loc, read, results, get.thread);
  b.create<memref::StoreOp>(loc, valid, valids, get.thread);
  get.map.map(shuffle.getShuffleResult(), read);
  get.map.map(shuffle.getValid(), valid);
  kept[shuffle.getShuffleResult()] = results;
  kept[shuffle.getValid()] = valids;
  return success();
}

LogicalResult LaunchOnCpu::runReduction(gpu::AllReduceOp reduce) {
  // Each thread puts its value in its slot; the host combines them in
  // thread order into one value for all.
  FailureOr<Value> slotsOfType = exchangeOf(reduce.getValue());
  if (failed(slotsOfType))
    return failure();
  vector::CombiningKind kind = gpu::convertReductionKind(*reduce.getOp());
  Value first = builder.create<memref::LoadOp>(loc, *slotsOfType, zero);
  auto loop = builder.create<scf::ForOp>(loc, one, threads, one, first);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(loop.getBody());
    Value next = builder.create<memref::LoadOp>(loc, *slotsOfType,
                                                loop.getInductionVar());
    builder.create<scf::YieldOp>(
        loc, vector::makeArithReduction(builder, loc, kind,
                                        loop.getRegionIterArgs()[0], next));
  }
  uniform.back()[reduce.getResult()] = loop.getResult(0);
  return success();
}

LogicalResult LaunchOnCpu::runMma(LLVM::CallIntrinsicOp mma) {
  // Each thread puts its operands in its slots of this mma; the product
  // waits (runWaitingMmas) until its results are needed, or an operand is
  // a waiting product's result.
  std::optional<int64_t> x = getConstantIntValue(block.x),
                         y = getConstantIntValue(block.y),
                         z = getConstantIntValue(block.z);
  if (!x || !y || !z || (*x * *y * *z) % kWarpSize != 0)
    return mma.emitError("an mma runs on the CPU only in blocks of whole "
                         "warps of constant size");
  if (mma.getArgs().size() != 10)
    return mma.emitError("expected the four words of A, the two of B and "
                         "the four accumulators");
  SmallVector<LLVM::ExtractValueOp> extracts;
  for (Operation *user : mma->getUsers()) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!extract || extract.getPosition().size() != 1 ||
        extract.getPosition()[0] >= 4)
      return user->emitError("an mma's results run on the CPU only as "
                             "llvm.extractvalue of one of its four floats");
    extracts.push_back(extract);
  }
  // A product whose words are a waiting product's results waits for them;
  // its accumulators may be results of the batch (each thread's share of
  // C is its share of the earlier D).
  ValueRange words = mma.getArgs().take_front(6);
  if (llvm::any_of(words, [&](Value v) { return waitingResults.count(v); }))
    runWaitingMmas();
  OpBuilder b = phaseBuilder(openPhase());
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  if (waiting.empty()) {
    // A new batch: its rows of slots, counted in runWaitingMmas.
    batchProducts = outside.create<arith::ConstantIndexOp>(loc, 0);
    auto rows = [&](int64_t perProduct) -> Value {
      return outside.create<arith::MulIOp>(loc, batchProducts,
                                           index(outside, perProduct));
    };
    auto rowsOfSlots =
        MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, i32);
    batchWords = outside.create<memref::AllocOp>(loc, rowsOfSlots,
                                                 ValueRange{rows(6), threads});
    Value floatBytes = outside.create<arith::MulIOp>(loc, rows(8 * 4), threads);
    batchFloatBytes = outside.create<memref::AllocOp>(
        loc, MemRefType::get({ShapedType::kDynamic}, outside.getI8Type()),
        floatBytes);
    batchFloats = outside.create<memref::ViewOp>(loc, rowsOfSlots.clone(f32),
                                                 batchFloatBytes, zero,
                                                 ValueRange{rows(8), threads});
    buffers.push_back(batchWords);
    buffers.push_back(batchFloatBytes);
  }
  Phase &put = *open;
  int64_t product = waiting.size();
  for (auto [i, operand] : llvm::enumerate(mma.getArgs())) {
    int64_t at = i;
    if (at >= 6) {
      auto result = waitingResults.find(operand);
      chained.push_back(result == waitingResults.end() ? -1 : result->second);
      if (chained.back() >= 0)
        continue;
    }
    FailureOr<Value> mine = threadValue(operand, put, b);
    if (failed(mine))
      return failure();
    Value word = *mine;
    if (isa<VectorType>(word.getType()))
      word = b.create<LLVM::BitcastOp>(loc, i32, word);
    Value row = index(b, at < 6 ? 6 * product + at : 4 * product + at - 6);
    b.create<memref::StoreOp>(loc, word, at < 6 ? batchWords : batchFloats,
                              ValueRange{row, put.thread});
  }
  for (LLVM::ExtractValueOp extract : extracts) {
    waitingResults[extract.getResult()] =
        4 * product + extract.getPosition()[0];
    absorbed.insert(extract);
  }
  waiting.push_back({mlir::kiln::mmaOperandType(mma), std::move(extracts)});
  return success();
}

bool LaunchOnCpu::usesWaiting(Operation *op) {
  if (waitingResults.empty())
    return false;
  SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, used);
  return llvm::any_of(used, [&](Value v) { return waitingResults.count(v); });
}

void LaunchOnCpu::runWaitingMmas() {
  // In a phase after the operands were stored, each thread computes its
  // four results of each waiting product from its warp's slots, as the
  // fragments lay them out (TensorCoreMma.h): D(row, column) = C(row,
  // column) + the sum over k < 16 of A(row, k) B(k, column), A(row, k)
  // held by lane (row mod 8) * 4 + (k mod 8) / 2 in word (row >= 8) + 2
  // (k >= 8), half k mod 2, and B(k, column) by lane column * 4 + (k mod
  // 8) / 2 in word (k >= 8). The products of halves are exact in f32. A
  // TF32 product's words hold one value each (k < 8, lane ... + k mod 4,
  // word ... (k >= 4)), the f32 bits less their low 13, whose products are
  // exact in f32 too.
  //
  // The batch's products are the trips of a loop (one per run of products
  // of the same type), in order, each reading its accumulators from the
  // row a table names: the threads' stored ones, or an earlier product's
  // results. A kernel's unrolled tile holds hundreds of products, chained
  // through their accumulators (3xTF32 takes three per product of f32):
  // a phase and a copy of the arithmetic for each grew the host code, and
  // LLVM's time on it, with them.
  if (waiting.empty())
    return;
  int64_t count = waiting.size();
  batchProducts.setValueAttr(outside.getIndexAttr(count));
  SmallVector<int32_t> rows;
  for (auto [at, result] : llvm::enumerate(chained))
    rows.push_back(result < 0 ? at : 4 * count + result);
  auto tableType = MemRefType::get({4 * count}, outside.getI32Type());
  auto table =
      OpBuilder(symbols.getOp()->getContext())
          .create<memref::GlobalOp>(
              loc, "kiln_mma_accumulator_rows",
              outside.getStringAttr("private"), tableType,
              DenseElementsAttr::get(
                  RankedTensorType::get({4 * count}, outside.getI32Type()),
                  ArrayRef<int32_t>(rows)),
              /*constant=*/true, /*alignment=*/nullptr);
  symbols.insert(table);
  Value accumulatorRows =
      outside.create<memref::GetGlobalOp>(loc, tableType, table.getSymName());
  chained.clear();

  open = nullptr;
  Phase &get = openPhase();
  OpBuilder b = phaseBuilder(get);
  Type f32 = b.getF32Type();
  Value lane = b.create<arith::RemUIOp>(loc, get.thread, index(b, kWarpSize));
  Value warpStart = b.create<arith::SubIOp>(loc, get.thread, lane);
  Value group = b.create<arith::DivUIOp>(loc, lane, index(b, 4));
  Value column0 = b.create<arith::MulIOp>(
      loc, b.create<arith::RemUIOp>(loc, lane, index(b, 4)), index(b, 2));
  Value columns[2] = {column0,
                      b.create<arith::AddIOp>(loc, column0, index(b, 1))};
  // The thread holding pair p of A's row or B's column `at` (mod 8).
  auto holder = [&](Value at, int64_t p) -> Value {
    return b.create<arith::AddIOp>(
        loc, warpStart,
        b.create<arith::AddIOp>(
            loc, b.create<arith::MulIOp>(loc, at, index(b, 4)), index(b, p)));
  };
  for (int64_t first = 0, last; first < count; first = last) {
    Type half = waiting[first].half;
    for (last = first + 1; last < count && waiting[last].half == half; ++last)
      ;
    bool tf32 = half.isTF32();
    auto products =
        b.create<scf::ForOp>(loc, index(b, first), index(b, last), index(b, 1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(products.getBody());
    Value product = products.getInductionVar();
    // Row `at` of the product's `perProduct`, from row `base`.
    auto row = [&](int64_t perProduct, int64_t at, int64_t base = 0) -> Value {
      return b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, product, index(b, perProduct)),
          index(b, base + at));
    };
    auto word = [&](int64_t at, Value thread) -> Value {
      return b.create<memref::LoadOp>(loc, batchWords,
                                      ValueRange{row(6, at), thread});
    };
    // Half `which` of a word, as f32; a TF32 word's value.
    auto halfOf = [&](Value word, int64_t which) -> Value {
      if (tf32)
        return b.create<arith::BitcastOp>(
            loc, f32,
            b.create<arith::AndIOp>(
                loc, word,
                b.create<arith::ConstantIntOp>(loc, 0xFFFFE000, 32)));
      Value bits = word;
      if (which)
        bits = b.create<arith::ShRUIOp>(
            loc, word, b.create<arith::ConstantIntOp>(loc, 16, 32));
      bits = b.create<arith::TruncIOp>(loc, b.getI16Type(), bits);
      Value value = b.create<arith::BitcastOp>(loc, half, bits);
      return b.create<arith::ExtFOp>(loc, f32, value);
    };
    SmallVector<Value> sums;
    for (int64_t i = 0; i < 4; ++i) {
      Value from = b.create<arith::IndexCastOp>(
          loc, b.getIndexType(),
          b.create<memref::LoadOp>(loc, accumulatorRows, row(4, i)));
      sums.push_back(b.create<memref::LoadOp>(loc, batchFloats,
                                              ValueRange{from, get.thread}));
    }
    // k = 8 kb + 2 p + which, for the pairs p < 4 of the half kb of k (a
    // TF32 product: k = 4 kb + p).
    for (int64_t kb = 0; kb < 2; ++kb) {
      for (int64_t p = 0; p < 4; ++p) {
        Value left = holder(group, p);
        Value rowWords[2] = {word(2 * kb, left), word(2 * kb + 1, left)};
        Value columnWords[2] = {word(4 + kb, holder(columns[0], p)),
                                word(4 + kb, holder(columns[1], p))};
        for (int64_t which = 0; which < (tf32 ? 1 : 2); ++which) {
          Value a[2] = {halfOf(rowWords[0], which), halfOf(rowWords[1], which)};
          Value c[2] = {halfOf(columnWords[0], which),
                        halfOf(columnWords[1], which)};
          for (int64_t i = 0; i < 4; ++i)
            sums[i] = b.create<arith::AddFOp>(
                loc, sums[i], b.create<arith::MulFOp>(loc, a[i / 2], c[i % 2]));
        }
      }
    }
    for (int64_t i = 0; i < 4; ++i)
      b.create<memref::StoreOp>(loc, sums[i], batchFloats,
                                ValueRange{row(4, i, 4 * count), get.thread});
  }
  // Each result is read from its row where it is used, in this phase or a
  // later one: the rows as buffers of their own.
  for (auto [product, waits] : llvm::enumerate(waiting))
    for (LLVM::ExtractValueOp extract : waits.extracts) {
      int64_t at = 4 * (count + static_cast<int64_t>(product)) +
                   extract.getPosition()[0];
      Value shift =
          outside.create<arith::MulIOp>(loc, threads, index(outside, 4 * at));
      kept[extract.getResult()] = outside.create<memref::ViewOp>(
          loc, MemRefType::get({ShapedType::kDynamic}, f32), batchFloatBytes,
          shift, ValueRange{threads});
    }
  waiting.clear();
  waitingResults.clear();
}

LogicalResult LaunchOnCpu::runLoop(scf::ForOp loop) {
  // The same trips for every thread: a host loop whose body's phases run
  // the threads; what the threads carry from trip to trip waits in slots.
  FailureOr<Value> lower = uniformValue(loop.getLowerBound());
  FailureOr<Value> upper = uniformValue(loop.getUpperBound());
  FailureOr<Value> step = uniformValue(loop.getStep());
  if (failed(lower) || failed(upper) || failed(step))
    return failure();
  SmallVector<Value> carried;
  for (Value init : loop.getInitArgs()) {
    if (!storable(init.getType()))
      return loop.emitError("a loop that synchronizes threads cannot carry a "
                            "value of type ")
             << init.getType() << " on the CPU";
    carried.push_back(slots(init.getType()));
  }
  if (!carried.empty()) {
    Phase &phase = openPhase();
    OpBuilder b = phaseBuilder(phase);
    for (auto [init, buffer] : llvm::zip(loop.getInitArgs(), carried)) {
      FailureOr<Value> value = threadValue(init, phase, b);
      if (failed(value))
        return failure();
      b.create<memref::StoreOp>(loc, *value, buffer, phase.thread);
    }
  }
  open = nullptr;
  auto host = builder.create<scf::ForOp>(loc, *lower, *upper, *step);
  for (auto [argument, buffer] : llvm::zip(loop.getRegionIterArgs(), carried))
    kept[argument] = buffer;
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(host.getBody()->getTerminator());
    uniform.push_back({{loop.getInductionVar(), host.getInductionVar()}});
    Block *body = loop.getBody();
    if (failed(split(body->begin(), body->getTerminator()->getIterator(),
                     /*warps=*/warpAfterWarp)))
      return failure();
    open = nullptr;
    if (!carried.empty()) {
      // Each thread's next values, all read before any is written.
      Phase &phase = openPhase();
      OpBuilder b = phaseBuilder(phase);
      SmallVector<Value> next;
      for (Value yielded : loop.getYieldedValues()) {
        FailureOr<Value> value = threadValue(yielded, phase, b);
        if (failed(value))
          return failure();
        next.push_back(*value);
      }
      for (auto [value, buffer] : llvm::zip(next, carried))
        b.create<memref::StoreOp>(loc, value, buffer, phase.thread);
      open = nullptr;
    }
    uniform.pop_back();
  }
  for (auto [result, buffer] : llvm::zip(loop.getResults(), carried))
    kept[result] = buffer;
  return success();
}

LogicalResult LaunchOnCpu::runSynchronization(Operation *op) {
  // A product waits for its results to be needed (runMma).
  if (mlir::kiln::mmaOperandType(op))
    return runMma(cast<LLVM::CallIntrinsicOp>(op));
  // Any other synchronization ends the phase: the threads all reach it
  // before any goes on.
  runWaitingMmas();
  open = nullptr;
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](gpu::BarrierOp) { return success(); })
      .Case([&](gpu::ShuffleOp shuffle) { return runShuffle(shuffle); })
      .Case([&](gpu::AllReduceOp reduce) { return runReduction(reduce); })
      .Case([&](scf::ForOp loop) { return runLoop(loop); })
      .Default([&](Operation *other) {
        return other->emitError("cannot run on the CPU");
      });
}

LogicalResult LaunchOnCpu::runWarpAfterWarp(ArrayRef<Operation *> ops) {
  // A shuffle synchronizes a warp only: each warp runs all of `ops` before
  // the next starts, so that what a block barrier should order and a
  // shuffle does not is not ordered here either.
  open = nullptr;
  Value warpSize = index(builder, kWarpSize);
  Value warps = builder.create<arith::CeilDivUIOp>(loc, threads, warpSize);
  auto loop = builder.create<scf::ForOp>(loc, zero, warps, one);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(loop.getBody()->getTerminator());
  low = builder.create<arith::MulIOp>(loc, loop.getInductionVar(), warpSize);
  high = builder.create<arith::MinUIOp>(
      loc, builder.create<arith::AddIOp>(loc, low, warpSize), threads);
  warpAfterWarp = true;
  uniform.emplace_back();
  for (Operation *op : ops)
    if (failed(warpSync.contains(op) ? runSynchronization(op) : runInPhase(op)))
      return failure();
  runWaitingMmas();
  open = nullptr;
  uniform.pop_back();
  warpAfterWarp = false;
  low = zero;
  high = threads;
  return success();
}

LogicalResult LaunchOnCpu::split(Block::iterator begin, Block::iterator end,
                                 bool warps) {
  if (warps) {
    for (Operation &op : llvm::make_range(begin, end))
      if (failed(warpSync.contains(&op) ? runSynchronization(&op)
                                        : runInPhase(&op)))
        return failure();
    runWaitingMmas();
    return success();
  }
  // Between two block synchronizations, the ops run in phases of all the
  // block's threads, or warp after warp where they shuffle.
  SmallVector<Operation *> between;
  auto runBetween = [&]() -> LogicalResult {
    bool shuffles = llvm::any_of(
        between, [&](Operation *op) { return warpSync.contains(op); });
    LogicalResult done = success();
    if (shuffles)
      done = runWarpAfterWarp(between);
    else
      for (Operation *op : between)
        if (failed(done = runInPhase(op)))
          break;
    between.clear();
    return done;
  };
  for (Operation &op : llvm::make_range(begin, end)) {
    if (!blockSync.contains(&op)) {
      between.push_back(&op);
      continue;
    }
    if (failed(runBetween()) || failed(runSynchronization(&op)))
      return failure();
  }
  return runBetween();
}

LogicalResult LaunchOnCpu::run() {
  if (failed(check()))
    return failure();
  grid = launch.getGridSizeOperandValues();
  block = launch.getBlockSizeOperandValues();
  zero = index(outside, 0);
  one = index(outside, 1);
  threads = outside.create<arith::MulIOp>(
      loc, block.x, outside.create<arith::MulIOp>(loc, block.y, block.z));

  // Blocks one after the other; the launch's buffers are made before.
  SmallVector<Value> blockIds;
  for (Value extent : {grid.z, grid.y, grid.x}) {
    auto loop = builder.create<scf::ForOp>(loc, zero, extent, one);
    if (blockIds.empty())
      outside.setInsertionPoint(loop);
    builder.setInsertionPoint(loop.getBody()->getTerminator());
    blockIds.push_back(loop.getInductionVar());
  }
  DenseMap<Value, Value> &host = uniform.emplace_back();
  gpu::KernelDim3 ids = launch.getBlockIds();
  host[ids.x] = blockIds[2];
  host[ids.y] = blockIds[1];
  host[ids.z] = blockIds[0];
  gpu::KernelDim3 gridArgs = launch.getGridSize(),
                  blockArgs = launch.getBlockSize();
  host[gridArgs.x] = grid.x;
  host[gridArgs.y] = grid.y;
  host[gridArgs.z] = grid.z;
  host[blockArgs.x] = block.x;
  host[blockArgs.y] = block.y;
  host[blockArgs.z] = block.z;
  // Workgroup memory for the whole launch, block after block; private
  // memory likewise where the threads run one after the other (check()
  // refuses it where they synchronize).
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    host[attribution] = outside.create<memref::AllocOp>(
        loc, cast<MemRefType>(attribution.getType()));
    buffers.push_back(host[attribution]);
  }
  for (BlockArgument attribution : launch.getPrivateAttributions()) {
    host[attribution] = outside.create<memref::AllocOp>(
        loc, cast<MemRefType>(attribution.getType()));
    buffers.push_back(host[attribution]);
  }

  low = zero;
  high = threads;
  Block &body = launch.getBody().front();
  if (failed(split(body.begin(), body.getTerminator()->getIterator(),
                   /*warps=*/false)))
    return failure();
  builder.setInsertionPointAfter(launch);
  for (Value buffer : buffers)
    builder.create<memref::DeallocOp>(loc, buffer);
  launch->erase();
  return success();
}

namespace {
struct KilnCudaLaunchesOnCpuPass
    : mlir::kiln::impl::KilnCudaLaunchesOnCpuBase<KilnCudaLaunchesOnCpuPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(LaunchOnCpu(launch, symbols).run()))
        return signalPassFailure();
    if (failed(mlir::kiln::runEveryVariantOnHost(module)))
      return signalPassFailure();
    // Workgroup buffers are host memory now.
    AttrTypeReplacer replacer;
    replacer.addReplacement([](MemRefType type) -> std::optional<Type> {
      if (!isa_and_nonnull<gpu::AddressSpaceAttr>(type.getMemorySpace()))
        return std::nullopt;
      return MemRefType::get(type.getShape(), type.getElementType(),
                             type.getLayout());
    });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }
};
} // namespace
