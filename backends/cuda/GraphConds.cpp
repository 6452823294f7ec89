//===- GraphConds.cpp - kiln.cond as IF nodes of a call's graph -----------===//
//
// A kiln.cond reads its predicate on the host (a copy of the device byte,
// a wait for the stream, a load) and queues one branch. That wait keeps a
// call with a cond from being captured into a CUDA graph
// (kiln-cuda-graph-calls). Where both branches only queue device work and
// yield buffers they allocate, this pass gives the cond a second form, for
// the runtime to take while it captures a call:
//
//   if (kiln_cuda_graph_conds()) {
//     homes for the results (fresh buffers)
//     b = kiln_cuda_graph_if_begin(&predicate)   // IF node on the byte
//     the first branch, writing its results into the homes
//     kiln_cuda_graph_if_else(b)                 // IF node on its negation
//     the second branch, writing its results into the homes
//     kiln_cuda_graph_if_end(b)
//     yield the homes
//   } else {
//     the predicate's read and the cond as they were
//   }
//
// Both branches' host code runs during the capture; each queues its work
// into the body of its IF node (runtime/lib/cuda/CudaGraphBranches.cpp),
// and the device decides at every launch of the call's graph which one
// runs. A buffer a branch allocates and yields (or yields a reshape of)
// is its home itself, as the results of the host form are fresh buffers
// that the code after the cond frees. Outside a capture the runtime answers 0
// and the host form runs.
//
// The pass runs before kiln-cuda-graph-loops, whose loops then take conds
// in this form into their graphs (a capture of the loop's iteration runs
// the graph form), and again after it: a branch may hold loops (and conds)
// in their graph forms too, whose nodes the runtime puts inside the
// branch's IF node; their host forms, which wait for the stream, are left
// out of the check, and a graph-form result the branch yields (a fresh
// buffer where the runtime captures) is copied into the home and freed.
// So is the result of a counted loop (a kiln.for) the branch runs, a
// buffer of its last trip (one it allocates, or the graph-form result of a
// loop or cond in it): the capture runs the trips, and ownership-based
// deallocation's frees inside and after the loop are decided on the host
// from no memory. Such a result comes with an ownership flag, an i1 result
// of the cond that only decides frees after it (directly, or through
// bufferization's run-time alias check where results may alias); in the
// graph form it is true, as the homes are fresh buffers the code after the
// cond owns. A branch may run that alias check itself, on host buffers of
// its own (the gradient of a cond holding a kiln.for): the capture
// decides it from buffer addresses, which the graph keeps. A buffer a
// branch yields for several results is copied into each home after the
// first. Conds that decide on one predicate read (a
// cond and its gradient's cond) get a read each first, where they all
// qualify: the later ones read a device copy of the byte, queued where the
// host copied it.
// The host form of a cond that has a graph form already is left alone.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"

#include "common/BufferAddress.h"
#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAGRAPHCONDS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The runtime's calls a branch may make besides its library work and the
/// calls of a loop's or a cond's graph form (isDeviceWorkCall): in a
/// call's capture, the call's first run has tuned its convolutions and its
/// tuned call sites, planned its attention and uploaded its constants
/// already, so a constant's copy only queues one.
const StringLiteral kOtherCalls[] = {KILN_CUDA_COPY_CONSTANT_FUNCTION};

/// The allocation in `block` that `value` is, through a cast and a
/// reshape (a dense view at offset 0 of all its elements), if it is a
/// fresh device buffer of static shape and identity layout.
gpu::AllocOp freshBuffer(Value value, Block &block) {
  if (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  Operation *reshape = value.getDefiningOp();
  if (isa_and_nonnull<memref::ReinterpretCastOp, memref::CollapseShapeOp,
                      memref::ExpandShapeOp>(reshape)) {
    auto type = cast<MemRefType>(value.getType());
    int64_t offset;
    SmallVector<int64_t> strides;
    if (!memref::isStaticShapeAndContiguousRowMajor(type) ||
        failed(getStridesAndOffset(type, strides, offset)) || offset != 0)
      return nullptr;
    value = reshape->getOperand(0);
    if (cast<MemRefType>(value.getType()).getNumElements() !=
        type.getNumElements())
      return nullptr;
  }
  auto alloc = value.getDefiningOp<gpu::AllocOp>();
  if (!alloc || alloc->getBlock() != &block || alloc.getHostShared() ||
      !alloc.getAsyncToken() || !alloc.getDynamicSizes().empty() ||
      !alloc.getSymbolOperands().empty())
    return nullptr;
  auto type = cast<MemRefType>(alloc.getType());
  return type.getLayout().isIdentity() && !type.getMemorySpace() ? alloc
                                                                 : nullptr;
}

/// The graph-form result (kiln::isFreshGraphFormResult, through a cast)
/// of a loop or a cond in `block` that `value` is, if it is one: a fresh
/// buffer where the runtime captures.
Value freshGraphFormResult(Value value, Block &block) {
  if (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &block ||
      !kiln::isFreshGraphFormResult(value, kiln::kGraphFormQueries))
    return nullptr;
  auto type = cast<MemRefType>(value.getType());
  return type.hasStaticShape() && !type.getMemorySpace() ? value : nullptr;
}

/// Whether `conditions` is the host buffer of conditions that
/// bufferization's run-time alias check (its `dealloc_helper`, where
/// buffers to free may alias) decides frees by: a heap buffer, through
/// casts, that the host only stores into, frees, and passes to the helper
/// as its conditions.
bool isAliasCheckConditions(Value conditions) {
  if (!conditions.getDefiningOp<memref::AllocOp>())
    return false;
  SmallVector<Value> views{conditions};
  while (!views.empty())
    for (OpOperand &use : views.pop_back_val().getUses()) {
      Operation *user = use.getOwner();
      if (auto cast = dyn_cast<memref::CastOp>(user)) {
        views.push_back(cast.getResult());
        continue;
      }
      auto call = dyn_cast<func::CallOp>(user);
      if (call && call.getCallee() == kiln::kDeallocHelper &&
          use.getOperandNumber() == 2)
        continue;
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && store.getMemRef() == use.get())
        continue;
      if (!isa<memref::DeallocOp>(user))
        return false;
    }
  return true;
}

/// Whether `flag`, an i1, only decides frees: each use is the condition of
/// an scf.if that only frees buffers, an operand of i1 arithmetic whose
/// result only decides frees, what a while loop's body yields for a
/// loop-carried flag that only decides frees (the ownership flags
/// ownership-based deallocation gives a cond's buffer results), or a
/// condition of the run-time alias check (isAliasCheckConditions).
bool onlyDecidesFrees(Value flag, unsigned depth = 0) {
  if (depth > 8)
    return false;
  for (OpOperand &use : flag.getUses()) {
    Operation *user = use.getOwner();
    if (auto guard = dyn_cast<scf::IfOp>(user)) {
      if (!kiln::isFreeGuard(guard))
        return false;
      continue;
    }
    if (isa<arith::OrIOp, arith::AndIOp>(user) &&
        onlyDecidesFrees(user->getResult(0), depth + 1))
      continue;
    if (auto loop = dyn_cast<scf::WhileOp>(user->getParentOp());
        loop && isa<scf::YieldOp>(user) &&
        onlyDecidesFrees(loop.getBeforeArguments()[use.getOperandNumber()],
                         depth + 1))
      continue;
    if (auto store = dyn_cast<memref::StoreOp>(user);
        store && store.getValueToStore() == flag &&
        isAliasCheckConditions(store.getMemRef()))
      continue;
    return false;
  }
  return true;
}

/// A counted loop's result in `block` that `value` is, through casts, if
/// it is a fresh buffer of its last trip (kiln::isFreshCountedResult) of
/// static shape.
Value freshCountedResult(Value value, Block &block) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &block || !kiln::isFreshCountedResult(value))
    return nullptr;
  auto type = cast<MemRefType>(value.getType());
  return type.hasStaticShape() && !type.getMemorySpace() ? value : nullptr;
}

/// A fresh buffer in `block` that a branch yielding `value` copies into its
/// home and frees: a loop's or a cond's graph-form result, or a counted
/// loop's last buffer.
Value copiedResult(Value value, Block &block) {
  if (Value result = freshGraphFormResult(value, block))
    return result;
  return freshCountedResult(value, block);
}

/// Whether the ops of `walked` (the branch region `region`, or the graph
/// form of a loop or a cond inside it) are ones a qualifying branch may
/// hold: device work only, and frees only of buffers `region` allocates.
bool onlyDeviceWork(Region &walked, Region &region) {
  WalkResult walk = walked.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto launch = dyn_cast<gpu::LaunchOp>(op))
      return launch.getAsyncToken() ? WalkResult::skip()
                                    : WalkResult::interrupt();
    // A loop's or a cond's graph form: its host form, which waits for the
    // stream, does not run where the branch is captured.
    if (auto choice = dyn_cast<scf::IfOp>(op);
        choice && kiln::isGraphFormChoice(choice, kiln::kGraphFormQueries))
      return onlyDeviceWork(choice.getThenRegion(), region)
                 ? WalkResult::skip()
                 : WalkResult::interrupt();
    if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      // A buffer the branch allocates, a graph-form result inside it or a
      // counted loop's fresh result (a buffer of its last trip), or one a
      // counted loop inside it carries (its ownership flags guard the
      // free).
      Value root = kiln::rootThroughMetadata(dealloc.getMemref());
      if (auto carried = dyn_cast<BlockArgument>(root);
          carried && dealloc.getAsyncToken() &&
          isa<scf::ForOp>(carried.getOwner()->getParentOp()) &&
          region.isAncestor(carried.getParentRegion()))
        return WalkResult::advance();
      Operation *def = root.getDefiningOp();
      if (!dealloc.getAsyncToken() || !def ||
          !(isa<gpu::AllocOp>(def) ||
            kiln::isFreshGraphFormResult(root, kiln::kGraphFormQueries) ||
            kiln::isFreshCountedResult(root)) ||
          !region.isAncestor(def->getParentRegion()))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    // The run-time alias check of buffers the branch frees, on host
    // buffers of its own: decided at the capture from buffer addresses.
    if (kiln::isAliasCheckWork(op, region))
      return WalkResult::advance();
    if (isa<scf::YieldOp, scf::ForOp, scf::IfOp>(op))
      return WalkResult::advance();
    return kiln::queuesDeviceWorkOnly(op, kOtherCalls)
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

/// Whether `branch`'s region `region` only queues device work, frees only
/// buffers it allocates, and yields a fresh buffer of its own for each
/// result: one it allocates, or the graph-form result of a loop or cond
/// inside it (where the runtime captures the branch, that graph form runs
/// too, its nodes inside the branch's IF node). A buffer yielded for
/// several results of one shape is copied into the homes after the first.
bool branchQualifies(scf::IfOp branch, Region &region) {
  if (!region.hasOneBlock())
    return false;
  Block &block = region.front();
  auto yield = cast<scf::YieldOp>(block.getTerminator());
  llvm::DenseMap<Value, ArrayRef<int64_t>> yielded;
  for (auto [value, result] :
       llvm::zip(yield.getOperands(), branch.getResults())) {
    // An ownership flag: the graph form's results are fresh homes.
    if (result.getType().isInteger(1))
      continue;
    gpu::AllocOp alloc = freshBuffer(value, block);
    Value fresh = alloc ? alloc.getMemref() : copiedResult(value, block);
    if (!fresh)
      return false;
    // A buffer the branch allocates may be yielded through a reshape (of
    // the result's elements); one it copies has the result's shape.
    ArrayRef<int64_t> shape = cast<MemRefType>(result.getType()).getShape();
    if (!alloc && cast<MemRefType>(fresh.getType()).getShape() != shape)
      return false;
    if (auto [first, inserted] = yielded.try_emplace(fresh, shape);
        !inserted && first->second != shape)
      return false;
  }
  return onlyDeviceWork(region, region);
}

/// Whether `branch`, its predicate aside, can take the graph form: two
/// regions that qualify, with buffer results only (and ownership flags).
bool formQualifies(scf::IfOp branch) {
  if (branch->getParentOfType<gpu::LaunchOp>() ||
      branch.getElseRegion().empty() || kiln::isHostForm(branch))
    return false;
  for (Value result : branch.getResults()) {
    Type type = result.getType();
    if (type.isInteger(1) && onlyDecidesFrees(result))
      continue;
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !memref.hasStaticShape() || memref.getMemorySpace())
      return false;
  }
  return branchQualifies(branch, branch.getThenRegion()) &&
         branchQualifies(branch, branch.getElseRegion());
}

/// Whether `branch` can take the graph form: a predicate read on the host,
/// in its block, chooses between two regions that qualify.
bool qualifies(scf::IfOp branch, kiln::PredicateRead &read) {
  if (!formQualifies(branch))
    return false;
  std::optional<kiln::PredicateRead> found =
      kiln::predicateReadOf(branch.getCondition());
  if (!found || found->load->getBlock() != branch->getBlock())
    return false;
  read = *found;
  return true;
}

/// Gives each cond after the first that decides on `read`'s predicate a
/// read of its own, where they all are conds of its block that can take
/// the graph form (a cond's gradient decides on the cond's predicate
/// again). A device copy of the predicate's byte, queued where the host
/// copies it (so it holds the value the host reads, whatever reuses the
/// byte later), is what the later conds read; it is freed after the last.
void splitSharedRead(kiln::PredicateRead read) {
  SmallVector<scf::IfOp> conds;
  for (Operation *user : read.load->getUsers()) {
    auto branch = dyn_cast<scf::IfOp>(user);
    if (!branch || branch->getBlock() != read.load->getBlock() ||
        !formQualifies(branch))
      return;
    conds.push_back(branch);
  }
  llvm::sort(conds,
             [](scf::IfOp a, scf::IfOp b) { return a->isBeforeInBlock(b); });
  Location loc = read.load.getLoc();
  OpBuilder builder(read.copy);
  auto tokenType = builder.getType<gpu::AsyncTokenType>();
  auto byte = builder.create<gpu::AllocOp>(
      loc, cast<MemRefType>(read.devicePredicate.getType()), tokenType,
      ValueRange{kiln::streamToken(builder, loc)}, ValueRange(), ValueRange(),
      /*hostShared=*/false);
  builder.create<gpu::MemcpyOp>(loc, tokenType,
                                ValueRange{byte.getAsyncToken()},
                                byte.getMemref(), read.devicePredicate);
  auto function = read.load->getParentOfType<func::FuncOp>();
  OpBuilder atEntry = OpBuilder::atBlockBegin(&function.getBody().front());
  for (scf::IfOp branch : ArrayRef(conds).drop_front()) {
    builder.setInsertionPoint(branch);
    Value slot = atEntry.create<memref::AllocaOp>(
        loc, cast<MemRefType>(read.load.getMemRef().getType()));
    auto copy = builder.create<gpu::MemcpyOp>(
        loc, tokenType, ValueRange{kiln::streamToken(builder, loc)}, slot,
        byte.getMemref());
    builder.create<gpu::WaitOp>(loc, Type(), copy.getAsyncToken());
    branch.getConditionMutable().assign(
        builder.create<memref::LoadOp>(loc, slot));
  }
  builder.setInsertionPointAfter(conds.back());
  builder.create<gpu::DeallocOp>(loc, tokenType,
                                 ValueRange{kiln::streamToken(builder, loc)},
                                 byte.getMemref());
}

class GraphCondBuilder {
public:
  GraphCondBuilder(scf::IfOp branch, const kiln::PredicateRead &read,
                   func::FuncOp available, func::FuncOp begin,
                   func::FuncOp otherwise, func::FuncOp end)
      : branch(branch), read(read), available(available), begin(begin),
        otherwise(otherwise), end(end) {}

  void build() {
    Location loc = branch.getLoc();
    OpBuilder builder(branch);
    scf::IfOp choice = kiln::createGraphFormChoice(builder, loc, available,
                                                   branch.getResultTypes());

    // The host form: the predicate's read, then the cond.
    branch.getResults().replaceAllUsesWith(choice.getResults());
    Block &hostBlock = choice.getElseRegion().front();
    for (Operation *op : {read.copy.getOperation(), read.wait.getOperation(),
                          read.load.getOperation(), branch.getOperation()})
      op->moveBefore(&hostBlock, hostBlock.end());
    OpBuilder::atBlockEnd(&hostBlock)
        .create<scf::YieldOp>(loc, branch.getResults());

    // The graph form.
    builder.setInsertionPointToEnd(&choice.getThenRegion().front());
    // A home per buffer result; an ownership flag is true, as the homes
    // are fresh buffers the code after the cond owns.
    SmallVector<Value> homes;
    for (Type type : branch.getResultTypes()) {
      if (type.isInteger(1)) {
        homes.push_back(builder.create<arith::ConstantIntOp>(loc, 1, 1));
        continue;
      }
      auto memref = cast<MemRefType>(type);
      auto home = builder.create<gpu::AllocOp>(
          loc, MemRefType::get(memref.getShape(), memref.getElementType()),
          builder.getType<gpu::AsyncTokenType>(), ValueRange{token(builder)},
          ValueRange(), ValueRange(), /*hostShared=*/false);
      homes.push_back(home.getMemref());
    }
    kiln::BufferAddress address =
        kiln::bufferAddressOf(builder, loc, read.devicePredicate, 1);
    Value predicate = builder.create<LLVM::IntToPtrOp>(
        loc, LLVM::LLVMPointerType::get(builder.getContext()), address.address);
    Value state =
        builder.create<func::CallOp>(loc, begin, predicate).getResult(0);
    cloneBranch(builder, branch.getThenRegion().front(), homes);
    builder.create<func::CallOp>(loc, otherwise, state);
    cloneBranch(builder, branch.getElseRegion().front(), homes);
    builder.create<func::CallOp>(loc, end, state);
    SmallVector<Value> results;
    for (auto [home, type] : llvm::zip(homes, branch.getResultTypes()))
      results.push_back(
          home.getType() == type
              ? home
              : builder.create<memref::CastOp>(loc, type, home).getResult());
    builder.create<scf::YieldOp>(loc, results);
  }

private:
  Value token(OpBuilder &builder) {
    return kiln::streamToken(builder, branch.getLoc());
  }

  /// `home` as a buffer of `type`, a shape of the same elements (where the
  /// branch yields a reshape of the buffer it allocates): a dense view of
  /// it at offset 0.
  Value reshaped(OpBuilder &builder, Value home, MemRefType type) {
    if (home.getType() == type)
      return home;
    SmallVector<int64_t> strides = getStridesAndOffset(type).first;
    return builder.create<memref::ReinterpretCastOp>(
        branch.getLoc(), type, home, /*offset=*/0, type.getShape(), strides);
  }

  /// Clones `block` but its terminator, each buffer it allocates and
  /// yields being the corresponding home instead of an allocation of its
  /// own; a loop's or a cond's graph-form result that it yields is copied
  /// into the home and freed, and a buffer it yields again is copied from
  /// its first home.
  void cloneBranch(OpBuilder &builder, Block &block, ArrayRef<Value> homes) {
    IRMapping mapping;
    auto yield = cast<scf::YieldOp>(block.getTerminator());
    SmallVector<std::pair<Value, Value>> copied;
    // The first home of each buffer yielded, and the homes that take a
    // copy of another (of a buffer yielded again).
    llvm::DenseMap<Value, Value> firstHome;
    SmallVector<std::pair<Value, Value>> repeated;
    for (auto [value, home] : llvm::zip(yield.getOperands(), homes)) {
      if (home.getType().isInteger(1))
        continue;
      gpu::AllocOp alloc = freshBuffer(value, block);
      Value fresh = alloc ? alloc.getMemref() : copiedResult(value, block);
      if (auto [first, inserted] = firstHome.try_emplace(fresh, home);
          !inserted)
        repeated.push_back({first->second, home});
      else if (alloc)
        mapping.map(fresh, reshaped(builder, home, alloc.getType()));
      else
        copied.push_back({fresh, home});
    }
    for (Operation &op : block.without_terminator()) {
      if (auto alloc = dyn_cast<gpu::AllocOp>(op);
          alloc && mapping.contains(alloc.getMemref())) {
        // The allocation's token stands for the stream.
        mapping.map(alloc.getAsyncToken(), token(builder));
        continue;
      }
      builder.clone(op, mapping);
    }
    Location loc = branch.getLoc();
    auto tokenType = builder.getType<gpu::AsyncTokenType>();
    for (auto [result, home] : copied) {
      Value buffer = mapping.lookup(result);
      builder.create<gpu::MemcpyOp>(loc, tokenType, ValueRange{token(builder)},
                                    home,
                                    kiln::denseView(builder, loc, buffer));
      builder.create<gpu::DeallocOp>(loc, tokenType, ValueRange{token(builder)},
                                     buffer);
    }
    for (auto [first, home] : repeated)
      builder.create<gpu::MemcpyOp>(loc, tokenType, ValueRange{token(builder)},
                                    home, first);
  }

  scf::IfOp branch;
  kiln::PredicateRead read;
  func::FuncOp available, begin, otherwise, end;
};

struct KilnCudaGraphCondsPass
    : kiln::impl::KilnCudaGraphCondsBase<KilnCudaGraphCondsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Conds that share a predicate read get one each first.
    SmallVector<kiln::PredicateRead> shared;
    module.walk([&](memref::LoadOp load) {
      if (std::optional<kiln::PredicateRead> read =
              kiln::predicateReadOf(load.getResult(), /*severalUses=*/true);
          read && !load.getResult().hasOneUse())
        shared.push_back(*read);
    });
    for (kiln::PredicateRead &read : shared)
      splitSharedRead(read);
    SmallVector<std::pair<scf::IfOp, kiln::PredicateRead>> conds;
    module.walk([&](scf::IfOp branch) {
      kiln::PredicateRead read;
      if (qualifies(branch, read))
        conds.push_back({branch, read});
    });
    if (conds.empty())
      return;
    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    func::FuncOp available = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_CONDS_FUNCTION,
        FunctionType::get(context, {}, {IntegerType::get(context, 32)}));
    func::FuncOp begin = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_IF_BEGIN_FUNCTION,
        FunctionType::get(context, {pointer}, {pointer}));
    func::FuncOp otherwise =
        kiln::declareLibraryFunction(module, KILN_CUDA_GRAPH_IF_ELSE_FUNCTION,
                                     FunctionType::get(context, {pointer}, {}));
    func::FuncOp end =
        kiln::declareLibraryFunction(module, KILN_CUDA_GRAPH_IF_END_FUNCTION,
                                     FunctionType::get(context, {pointer}, {}));
    if (!available || !begin || !otherwise || !end)
      return signalPassFailure();
    for (auto &[branch, read] : conds)
      GraphCondBuilder(branch, read, available, begin, otherwise, end).build();
  }
};
} // namespace
