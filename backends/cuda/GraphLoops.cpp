//===- GraphLoops.cpp - Device-only while loops as CUDA graphs ------------===//
//
// A kiln.while whose test and body only queue device work still waits for
// the host once per iteration: the test's predicate is copied back, the
// host waits for the stream, reads it and queues the next iteration. The
// runtime can instead capture the test, the body and the test again once
// into a CUDA graph: the first test, then a conditional WHILE node that
// repeats the body and the test on the device while the last test held
// (runtime/lib/cuda/CudaGraphLoops.cpp), so that no iteration holds a
// conditional node of its own. This pass rewrites such loops to do so
// where the runtime can, keeping the host loop for where it cannot.
// A loop is captured at each run, where nothing can be timed nor planned:
// one holding tuned call sites (TunedSites.h) or cuDNN calls (convolutions,
// attention, whose plans cuDNN makes at their first run) asks whether its
// sites are decided and its calls have run (kiln_cuda_graph_loops_tuned,
// kiln_cuda_graph_loops_planned with each call's code and descriptor), and
// runs on the host until they are (a capture that still meets a call
// without a plan, its buffers aligned otherwise than before, has the
// runtime make the plan outside the capture and capture on).
//
// Captured work keeps the addresses it was captured with, so the values a
// loop carries must stay in the same buffers from one iteration to the
// next. Ownership-based deallocation instead lets each iteration yield
// fresh buffers and free the previous ones. The graph form therefore gives
// every loop-carried value a "home" allocated before the loop (initialized
// with a copy of the loop's input) and every value the test forwards a
// home too; both copies of the test read the loop-carried homes and copy
// what they forward into the forwarded homes, the body reads those and
// copies what it yields back into the loop-carried homes. Frees of the homes
// inside the loop are dropped, the ownership flags the loop carries are false
// inside it (the homes belong to the code around the loop), and buffers
// the test or the body allocates and hands on are freed after their copy.
// The forwarded homes are the loop's results, as fresh as the buffers the
// test forwarded before (which the code after the loop frees).
//
// A loop inside such a loop that can run as a graph itself gets its graph
// form first, and the outer loop's graph form holds it: where the runtime
// captures the outer iteration, the inner loop's test and WHILE node go
// into it (CudaGraphLoops.cpp). What the inner graph form returns is fresh
// (its forwarded homes), so an outer loop that hands it on frees it after
// the copy, as it frees the buffers it allocates itself. A loop around a
// loop that cannot stays a host loop, and so does the inner one, until
// the rounds of kiln-cuda-graph-forms have settled: then the pass, with
// `inside-host-loops`, gives each loop inside a host loop that can run as
// a graph a form of its own, captured anew at each trip of the host loop
// (the filling loop of a gradient's stack, inside the host loop that
// grows the stack, waits once per growth instead of once per trip). A loop
// inside a cond inside a loop gets a graph form of its own, as a loop
// outside any loop does: the cond can then take its graph form
// (kiln-cuda-graph-conds, which puts the inner WHILE node into its IF
// node), and the outer loop its own around that (kiln-cuda-graph-forms
// runs the passes in turn). A loop inside a counted loop (a kiln.for) with
// no loop around that is a root too: the capture of the call runs the
// counted loop's trips, each adding the loop's test and WHILE node to the
// call's graph. A counted loop of constant bounds (a kiln.for)
// in the test or the body is captured with the iteration, which runs its
// trips: each trip's work becomes nodes of the iteration. Ownership-based
// deallocation guards its frees with flags it carries and checks after
// it, at run time, whether its result is the buffer it started from; both
// conditions come from no memory, so the capture decides them once for
// every replay. In the graph form those frees leave the homes alone, and
// the counted loop's result (a buffer of its last trip) is freed after its
// copy into a home. A free of a buffer from before the loop would run on
// every replay: such a loop stays a host loop. A cond
// in its graph form (kiln-cuda-graph-conds runs first) is captured with
// the iteration too, as IF nodes in it; bufferization gives its results,
// and so a loop-carried value the body yields (also through a counted loop
// that carries it), a layout of dynamic strides, which the graph form
// takes where every buffer the value takes is dense (its home is a dense
// buffer). Such a cond's graph form may run bufferization's run-time alias
// check on host buffers of its own (the gradient of a cond holding a
// kiln.for): the capture of the iteration decides it from buffer
// addresses, which the graph keeps.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

#include <set>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAGRAPHLOOPS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

using kiln::PredicateRead;

/// The query of a cond's graph form, which a loop's iteration may hold.
const StringRef kCondGraphForm[] = {KILN_CUDA_GRAPH_CONDS_FUNCTION};

/// Whether `op` is a tuned call site's choice of variant, which the
/// capture of an iteration decides as the runtime answers: the chosen
/// variant's work becomes nodes of the iteration.
bool isTunedChoice(Operation *op) {
  return isa<scf::IfOp>(op) && op->hasAttr(kiln::kTunedVariantAttr);
}

/// The runtime's calls that cuDNN plans at their first run, with the codes
/// kiln_cuda_graph_loops_planned knows them by.
struct PlannedCall {
  StringRef callee;
  int64_t code;
};
const PlannedCall kPlannedCalls[] = {
    {KILN_CUDA_CONV_FUNCTION, KILN_CUDA_PLANNED_CONV},
    {KILN_CUDA_ATTENTION_FUNCTION, KILN_CUDA_PLANNED_ATTENTION},
    {KILN_CUDA_ATTENTION_GRAD_FUNCTION, KILN_CUDA_PLANNED_ATTENTION_GRAD}};

/// The entry of kPlannedCalls `op` calls, or null where it calls none.
const PlannedCall *plannedCallOf(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return nullptr;
  const PlannedCall *planned =
      llvm::find_if(kPlannedCalls, [&](const PlannedCall &entry) {
        return entry.callee == call.getCallee();
      });
  return planned == std::end(kPlannedCalls) ? nullptr : planned;
}

/// What kiln_cuda_graph_loops_planned is told of the cuDNN call `call`: its
/// code, then its descriptor (the constant global kiln-cuda-library-conv
/// and -attention pass the address of); none where `call` calls no cuDNN
/// or its descriptor is not a constant of the module.
std::optional<SmallVector<int64_t>> plannedKey(func::CallOp call) {
  const PlannedCall *planned = plannedCallOf(call);
  if (!planned || call.getNumOperands() == 0)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> descriptor =
      kiln::constantAtPointer(call.getOperand(0));
  if (!descriptor)
    return std::nullopt;
  SmallVector<int64_t> key{planned->code};
  key.append(*descriptor);
  return key;
}

/// The keys (plannedKey) of the cuDNN calls inside `loop`, each once, one
/// after the other. Not those of a tuned call site's variants: the site is
/// decided after every variant ran (made its plans), or, untimed, for
/// variant 0, kiln's kernels, whose work alone the capture then holds.
SmallVector<int64_t> plannedCallsIn(scf::WhileOp loop) {
  SmallVector<int64_t> keys;
  std::set<SmallVector<int64_t>> seen;
  loop->walk([&](func::CallOp call) {
    for (Operation *parent = call->getParentOp(); parent != loop;
         parent = parent->getParentOp())
      if (isTunedChoice(parent))
        return;
    if (std::optional<SmallVector<int64_t>> key = plannedKey(call);
        key && seen.insert(*key).second)
      keys.append(*key);
  });
  return keys;
}

/// The numbers of the tuned call sites inside `loop`, in order.
SmallVector<int64_t> tunedSitesIn(scf::WhileOp loop) {
  SmallVector<int64_t> sites;
  loop->walk([&](scf::ForOp counted) {
    if (auto site = counted->getAttrOfType<IntegerAttr>(kiln::kTunedSiteAttr))
      sites.push_back(site.getInt());
  });
  return sites;
}

/// A loop to give a graph form, with its predicate read.
struct GraphLoop {
  scf::WhileOp loop;
  PredicateRead read;
};

/// Whether a loop can run as a graph.
class Eligibility {
public:
  explicit Eligibility(scf::WhileOp loop) : loop(loop) {}

  /// Checks the loop; on success `read` is its predicate read and `nested`
  /// has the loops inside it appended, innermost first, each of which can
  /// run as a graph too (its node then goes into this loop's iteration).
  bool check(PredicateRead &read, SmallVectorImpl<GraphLoop> &nested) {
    for (Type type : loop.getResultTypes())
      if (!isFixedBuffer(type))
        return false;
    // A loop-carried value may have a layout of dynamic strides (what
    // bufferization gives the results of a cond that the body yields)
    // where every buffer it takes is dense: its home is a dense buffer.
    auto yield = cast<scf::YieldOp>(loop.getAfter().front().getTerminator());
    for (auto [init, yielded] : llvm::zip(loop.getInits(), yield.getOperands()))
      if (!init.getType().isInteger(1) &&
          !(isFixedBuffer(init.getType()) ||
            (isStaticBuffer(init.getType()) && isDenseInGraph(init) &&
             isDenseInGraph(yielded))))
        return false;
    for (BlockArgument arg : loop.getAfterArguments())
      if (!isFixedBuffer(arg.getType()))
        return false;
    // Ownership flags only guard frees.
    for (BlockArgument arg : loop.getBeforeArguments()) {
      if (!arg.getType().isInteger(1))
        continue;
      for (Operation *user : arg.getUsers()) {
        auto guard = dyn_cast<scf::IfOp>(user);
        if (!guard || !kiln::isFreeGuard(guard))
          return false;
      }
    }
    if (!findPredicateRead(read))
      return false;
    SmallVector<GraphLoop> inner;
    WalkResult result = loop->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == loop)
        return WalkResult::advance();
      if (isa<gpu::LaunchOp>(op))
        return cast<gpu::LaunchOp>(op).getAsyncToken()
                   ? WalkResult::skip()
                   : WalkResult::interrupt();
      // A loop inside: captured with this one's iteration, where its graph
      // form becomes a node of the iteration; so it must have one.
      if (auto innerLoop = dyn_cast<scf::WhileOp>(op)) {
        PredicateRead innerRead;
        if (!Eligibility(innerLoop).check(innerRead, inner))
          return WalkResult::interrupt();
        inner.push_back({innerLoop, innerRead});
        return WalkResult::skip();
      }
      // A loop of a constant number of trips (a kiln.for): the capture of
      // the iteration runs it, queueing its body's work once per trip.
      if (auto counted = dyn_cast<scf::ForOp>(op))
        return kiln::tripCount(counted) ? WalkResult::advance()
                                        : WalkResult::interrupt();
      if (isa<LoopLikeOpInterface>(op))
        return WalkResult::interrupt();
      // A cond in its graph form (kiln-cuda-graph-conds): captured with
      // the loop's iteration, that form runs, as IF nodes of the
      // iteration; its host form, which reads the predicate, does not.
      if (auto choice = dyn_cast<scf::IfOp>(op);
          choice && kiln::isGraphFormChoice(choice, kCondGraphForm))
        return condFormQueuesDeviceWork(choice) ? WalkResult::skip()
                                                : WalkResult::interrupt();
      if (op == read.copy || op == read.wait || op == read.load ||
          isTunedChoice(op))
        return WalkResult::advance();
      return allowed(op) ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return false;
    nested.append(inner.begin(), inner.end());
    return true;
  }

private:
  static bool isFixedBuffer(Type type) {
    return isStaticBuffer(type) &&
           cast<MemRefType>(type).getLayout().isIdentity();
  }
  static bool isStaticBuffer(Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return memref && memref.hasStaticShape() && !memref.getMemorySpace();
  }
  /// Whether `value` is, where the loop runs as a graph, a dense buffer:
  /// one of identity layout through casts, a cond's result whose graph
  /// form yields one (the graph form is what a capture runs), or a counted
  /// loop's result whose first buffer and body's yield both are (a cond
  /// inside a kiln.for gives it the cond's layout).
  static bool isDenseInGraph(Value value, unsigned depth = 0) {
    while (auto cast = value.getDefiningOp<memref::CastOp>())
      value = cast.getSource();
    if (isFixedBuffer(value.getType()))
      return true;
    auto result = dyn_cast<OpResult>(value);
    if (!result || depth > 16)
      return false;
    unsigned index = result.getResultNumber();
    if (auto counted = dyn_cast<scf::ForOp>(result.getOwner()))
      return isDenseInGraph(counted.getInitArgs()[index], depth + 1) &&
             isDenseInGraph(counted.getYieldedValues()[index], depth + 1);
    auto choice = dyn_cast<scf::IfOp>(result.getOwner());
    return choice && kiln::isGraphFormChoice(choice, kCondGraphForm) &&
           isDenseInGraph(choice.thenYield().getOperand(index), depth + 1);
  }

  bool findPredicateRead(PredicateRead &read) {
    auto condition = cast<scf::ConditionOp>(loop.getBefore().front().back());
    std::optional<PredicateRead> found =
        kiln::predicateReadOf(condition.getCondition());
    if (!found || found->load->getBlock() != &loop.getBefore().front())
      return false;
    read = *found;
    return true;
  }

  /// Whether the graph form of a cond (the then region of `choice`) only
  /// queues device work; a cond or a loop inside it counts by its graph
  /// form too (an elif's cond in the else branch of another, a loop in a
  /// branch), not by its host form. A branch's run-time alias check on
  /// host buffers of its own, and the frees it decides, are decided by the
  /// capture of the iteration from buffer addresses, which the graph keeps.
  bool condFormQueuesDeviceWork(scf::IfOp choice) {
    Region &form = choice.getThenRegion();
    WalkResult then =
        form.walk<WalkOrder::PreOrder>([&](Operation *inner) {
          if (kiln::isAliasCheckWork(inner, form))
            return WalkResult::advance();
          if (auto guard = dyn_cast<scf::IfOp>(inner);
              guard && kiln::isFreeGuard(guard)) {
            Operation *decision = guard.getCondition().getDefiningOp();
            if (isa_and_nonnull<memref::LoadOp>(decision) &&
                kiln::isAliasCheckWork(decision, form))
              return WalkResult::advance();
          }
          if (auto launch = dyn_cast<gpu::LaunchOp>(inner))
            return launch.getAsyncToken() ? WalkResult::skip()
                                          : WalkResult::interrupt();
          if (auto nested = dyn_cast<scf::IfOp>(inner);
              nested &&
              kiln::isGraphFormChoice(nested, kiln::kGraphFormQueries))
            return condFormQueuesDeviceWork(nested) ? WalkResult::skip()
                                                    : WalkResult::interrupt();
          if (auto counted = dyn_cast<scf::ForOp>(inner))
            return kiln::tripCount(counted) ? WalkResult::advance()
                                            : WalkResult::interrupt();
          return isTunedChoice(inner) || allowed(inner)
                     ? WalkResult::advance()
                     : WalkResult::interrupt();
        });
    return !then.wasInterrupted();
  }

  /// Whether `op` (outside kernels) only queues device work or computes
  /// host values that do not read memory. The runtime's calls a loop's test
  /// and body may make are its library work (products, and cuDNN's
  /// convolutions and attention, kPlannedCalls) and the calls of graph
  /// forms and tuned call sites (isDeviceWorkCall): a cond's graph form,
  /// that of a loop inside such a cond, and a tuned call site's
  /// (TunedSites.h). A loop is captured at each run, where nothing can be
  /// timed or planned: a loop holding sites or cuDNN calls asks
  /// kiln_cuda_graph_loops_tuned or _planned, which run it on the host
  /// until the sites are decided and cuDNN has run each call once (made
  /// its plan), and its capture then runs the chosen variants and the
  /// planned calls.
  bool allowed(Operation *op) {
    if (auto guard = dyn_cast<scf::IfOp>(op)) {
      auto flag = dyn_cast<BlockArgument>(guard.getCondition());
      if (flag && flag.getOwner() == &loop.getBefore().front())
        return true;
      // A guard of frees inside a counted loop or after one (ownership
      // flags, the run-time alias check of a counted loop's result): its
      // condition comes from no memory, so the capture decides it as every
      // replay of the iteration would.
      return kiln::isFreeGuard(guard) && hostDecided(guard.getCondition());
    }
    if (auto dealloc = dyn_cast<gpu::DeallocOp>(op))
      return dealloc.getAsyncToken() && heldByLoop(dealloc.getMemref());
    if (isa<scf::YieldOp, scf::ConditionOp>(op))
      return true;
    // A cuDNN call is asked about by its descriptor, a constant.
    if (plannedCallOf(op) && !plannedKey(cast<func::CallOp>(op)))
      return false;
    return kiln::queuesDeviceWorkOnly(op, {});
  }

  /// Whether the host computes `value` inside the loop from no memory:
  /// constants, buffers' addresses and metadata, pure arithmetic, and the
  /// ownership flags a counted loop carries, of the same kind.
  bool hostDecided(Value value, unsigned depth = 0) {
    if (depth > 32)
      return false;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto counted = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!counted || !loop->isProperAncestor(counted) ||
          arg == counted.getInductionVar())
        return false;
      OpOperand *init = counted.getTiedLoopInit(arg);
      Value yielded = counted.getTiedLoopYieldedValue(arg)->get();
      return hostDecided(init->get(), depth + 1) &&
             hostDecided(yielded, depth + 1);
    }
    Operation *def = value.getDefiningOp();
    if (!def)
      return false;
    if (!loop->isProperAncestor(def))
      return matchPattern(value, m_Constant());
    if (auto counted = dyn_cast<scf::ForOp>(def))
      return hostDecided(
          counted.getRegionIterArgs()[cast<OpResult>(value).getResultNumber()],
          depth + 1);
    if (def->getNumRegions() || !isMemoryEffectFree(def))
      return false;
    if (isa<memref::ExtractAlignedPointerAsIndexOp,
            memref::ExtractStridedMetadataOp>(def))
      return true;
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return hostDecided(operand, depth + 1);
    });
  }

  /// Whether `buffer` is one the loop holds: allocated inside it, or a
  /// block argument of a region inside it (a loop-carried or forwarded
  /// value, a counted loop's), or a counted loop's result; never a buffer
  /// from before the loop, which a replayed iteration would free again.
  bool heldByLoop(Value buffer) {
    Value root = kiln::rootThroughMetadata(buffer);
    if (auto arg = dyn_cast<BlockArgument>(root))
      return loop->isAncestor(arg.getOwner()->getParentOp());
    Operation *def = root.getDefiningOp();
    return def && loop->isProperAncestor(def);
  }

  scf::WhileOp loop;
};

/// Whether `loop` has no loop around it, or a cond (not an ownership
/// flag's guard, which holds no loop) between it and the nearest one.
/// Counted loops (kiln.for) between do not count: a capture runs their
/// trips, so where the nearest while loop around takes its graph form,
/// this one's nodes go into that loop's iteration once per trip, and where
/// there is none, into the call's graph.
bool isRoot(scf::WhileOp loop) {
  for (Operation *parent = loop->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<scf::IfOp>(parent))
      return true;
    if (auto counted = dyn_cast<scf::ForOp>(parent);
        counted && kiln::tripCount(counted))
      continue;
    if (isa<LoopLikeOpInterface>(parent))
      return false;
  }
  return true;
}

/// Builds the graph form of one loop.
class GraphLoopBuilder {
public:
  /// `loopsAvailable` is asked with `query`'s operands.
  GraphLoopBuilder(scf::WhileOp loop, const PredicateRead &read,
                   func::FuncOp loopsAvailable, ValueRange query,
                   func::FuncOp begin, func::FuncOp test, func::FuncOp end)
      : loop(loop), read(read), loopsAvailable(loopsAvailable),
        query(query.begin(), query.end()), begin(begin), test(test), end(end) {}

  void build() {
    Location loc = loop.getLoc();
    OpBuilder builder(loop);
    // Each block of the choice gets its own yield below.
    scf::IfOp choice = kiln::createGraphFormChoice(
        builder, loc, loopsAvailable, loop.getResultTypes(), query);
    // The host loop, as it was, in the else branch.
    Block &hostBlock = choice.getElseRegion().front();
    loop.getResults().replaceAllUsesWith(choice.getResults());
    loop->moveBefore(&hostBlock, hostBlock.end());
    OpBuilder::atBlockEnd(&hostBlock)
        .create<scf::YieldOp>(loc, loop.getResults());

    Block &graphBlock = choice.getThenRegion().front();
    builder.setInsertionPointToEnd(&graphBlock);
    SmallVector<Value> forwardedHomes = buildGraph(builder);
    builder.create<scf::YieldOp>(loc, forwardedHomes);
  }

private:
  Value token(OpBuilder &builder) {
    return kiln::streamToken(builder, loop.getLoc());
  }
  /// A dense buffer of `type`'s shape and element type.
  Value allocate(OpBuilder &builder, Type type) {
    auto memref = cast<MemRefType>(type);
    auto alloc = builder.create<gpu::AllocOp>(
        loop.getLoc(),
        MemRefType::get(memref.getShape(), memref.getElementType()),
        builder.getType<gpu::AsyncTokenType>(), ValueRange{token(builder)},
        ValueRange(), ValueRange(), /*hostShared=*/false);
    return alloc.getMemref();
  }
  /// `buffer` as a memref of `type` (a cast where the layouts differ).
  Value as(OpBuilder &builder, Value buffer, Type type) {
    if (buffer.getType() == type)
      return buffer;
    return builder.create<memref::CastOp>(loop.getLoc(), type, buffer);
  }
  /// `buffer`, a dense buffer (Eligibility::isDenseInGraph), as one of
  /// identity layout.
  Value dense(OpBuilder &builder, Value buffer) {
    return kiln::denseView(builder, loop.getLoc(), buffer);
  }
  void copy(OpBuilder &builder, Value destination, Value source) {
    builder.create<gpu::MemcpyOp>(
        loop.getLoc(), builder.getType<gpu::AsyncTokenType>(),
        ValueRange{token(builder)}, dense(builder, destination),
        dense(builder, source));
  }
  void free(OpBuilder &builder, Value buffer) {
    builder.create<gpu::DeallocOp>(loop.getLoc(),
                                   builder.getType<gpu::AsyncTokenType>(),
                                   ValueRange{token(builder)}, buffer);
  }

  /// Copies `values` into `targets` (where a value is not already its
  /// target), then frees the buffers among them that `region` allocated
  /// (each once; never a home).
  void handOver(OpBuilder &builder, Region &region, ValueRange values,
                ArrayRef<Value> targets, IRMapping &mapping,
                const llvm::SmallPtrSetImpl<Value> &homes) {
    llvm::SetVector<Value> fresh;
    for (auto [value, target] : llvm::zip(values, targets)) {
      Value source = mapping.lookupOrDefault(value);
      if (source == target)
        continue;
      copy(builder, target, source);
      Value root = kiln::rootThroughMetadata(value);
      Operation *def = root.getDefiningOp();
      // A buffer the region allocated, or that a loop nested in it returns
      // from its graph form (captured with this loop, that form runs).
      bool allocated =
          isa_and_nonnull<gpu::AllocOp>(def) ||
          kiln::isFreshGraphFormResult(root, kiln::kGraphFormQueries) ||
          kiln::isFreshCountedResult(root);
      if (allocated && region.isAncestor(def->getParentRegion()) &&
          !homes.contains(mapping.lookupOrDefault(root)))
        fresh.insert(mapping.lookupOrDefault(root));
    }
    for (Value buffer : fresh)
      free(builder, buffer);
  }

  /// Clones the ops of `block` but its terminator, dropping frees of the
  /// buffers in `homes`, allocations `mapping` already maps to a home (a
  /// dropped op's token stands for the stream), and the guards of frees on
  /// the loop's ownership flags, which are false inside the graph form (an
  /// scf.if on a constant false that a loop around this one would otherwise
  /// have to accept as host control flow).
  void cloneBody(OpBuilder &builder, Block &block, IRMapping &mapping,
                 const llvm::SmallPtrSetImpl<Value> &homes) {
    for (Operation &op : block.without_terminator()) {
      if (&op == read.copy.getOperation() || &op == read.wait.getOperation() ||
          &op == read.load.getOperation())
        continue;
      if (auto guard = dyn_cast<scf::IfOp>(op);
          guard && guard.getNumResults() == 0 &&
          matchPattern(mapping.lookupOrDefault(guard.getCondition()), m_Zero()))
        continue;
      // A guard of frees (after a counted loop, its result's alias check):
      // the homes among them stay, the graph form frees them after it.
      if (auto guard = dyn_cast<scf::IfOp>(op);
          guard && guard.getNumResults() == 0 &&
          guard.getElseRegion().empty() && freesAHome(guard, mapping, homes)) {
        auto clone = cast<scf::IfOp>(builder.clone(op, mapping));
        SmallVector<gpu::DeallocOp> homeFrees;
        clone.getThenRegion().walk([&](gpu::DeallocOp dealloc) {
          if (homes.contains(kiln::rootThroughMetadata(dealloc.getMemref())))
            homeFrees.push_back(dealloc);
        });
        for (gpu::DeallocOp dealloc : homeFrees) {
          if (!dealloc.getAsyncToken().use_empty()) {
            OpBuilder at(dealloc);
            dealloc.getAsyncToken().replaceAllUsesWith(
                kiln::streamToken(at, dealloc.getLoc()));
          }
          dealloc.erase();
        }
        if (llvm::all_of(clone.getThenRegion().front(), [](Operation &inner) {
              return isa<gpu::WaitOp, scf::YieldOp>(inner);
            }))
          clone.erase();
        continue;
      }
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        if (mapping.contains(alloc.getMemref())) {
          mapping.map(alloc.getAsyncToken(), token(builder));
          continue;
        }
      }
      if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
        if (homes.contains(mapping.lookupOrDefault(
                kiln::rootThroughMetadata(dealloc.getMemref())))) {
          mapping.map(dealloc.getAsyncToken(), token(builder));
          continue;
        }
      }
      builder.clone(op, mapping);
    }
  }

  SmallVector<Value> buildGraph(OpBuilder &builder) {
    Location loc = loop.getLoc();
    Block &before = loop.getBefore().front();
    Block &after = loop.getAfter().front();
    Value noOwnership = builder.create<arith::ConstantIntOp>(loc, 0, 1);

    // Homes of the loop-carried values, initialized from the inputs.
    IRMapping testMapping;
    llvm::SmallPtrSet<Value, 8> homes;
    for (auto [arg, init] :
         llvm::zip(before.getArguments(), loop.getInits())) {
      if (!isa<MemRefType>(arg.getType())) {
        testMapping.map(arg, noOwnership);
        continue;
      }
      Value home = allocate(builder, arg.getType());
      copy(builder, home, init);
      testMapping.map(arg, as(builder, home, arg.getType()));
      homes.insert(home);
    }
    // The inputs the loop owns are freed as its first test would have.
    IRMapping initMapping;
    initMapping.map(before.getArguments(), loop.getInits());
    for (Operation &op : before.without_terminator()) {
      auto guard = dyn_cast<scf::IfOp>(op);
      if (!guard || !isa<BlockArgument>(guard.getCondition()) ||
          matchPattern(initMapping.lookup(guard.getCondition()), m_Zero()))
        continue;
      guard.walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          cloneDefinitions(builder, operand, before, initMapping);
      });
      builder.clone(op, initMapping);
    }
    // Where the test forwards buffers it allocated itself (the clones that
    // ownership-based deallocation makes), the body reads those: captured
    // once, they stay where they are. Otherwise the forwarded values get
    // homes too, and the test copies them there.
    auto condition = cast<scf::ConditionOp>(before.getTerminator());
    bool forwardsOwnBuffers = forwardsFreshBuffers(condition);
    SmallVector<Value> forwardedHomes;
    if (!forwardsOwnBuffers)
      for (BlockArgument arg : after.getArguments()) {
        forwardedHomes.push_back(allocate(builder, arg.getType()));
        homes.insert(forwardedHomes.back());
      }

    Value state =
        builder.create<func::CallOp>(loc, begin, ValueRange()).getResult(0);
    // The test, reading the loop-carried homes, before the loop's node.
    builder.create<func::CallOp>(
        loc, test,
        ValueRange{state, cloneTest(builder, testMapping, forwardsOwnBuffers,
                                    forwardedHomes, homes)});

    // The body, reading the forwarded values. A buffer it allocates and
    // yields is its loop-carried home itself: the body cannot read that
    // home (it sees the forwarded values, never the carried ones), so it
    // may write it in place of a fresh buffer and a copy.
    IRMapping bodyMapping;
    bodyMapping.map(after.getArguments(), forwardedHomes);
    auto yield = cast<scf::YieldOp>(after.getTerminator());
    SmallVector<Value> yielded, carriedHomes;
    for (auto [value, arg] :
         llvm::zip(yield.getOperands(), before.getArguments()))
      if (isa<MemRefType>(arg.getType())) {
        yielded.push_back(value);
        carriedHomes.push_back(dense(builder, testMapping.lookup(arg)));
        auto alloc = value.getDefiningOp<gpu::AllocOp>();
        if (alloc && alloc->getBlock() == &after &&
            alloc.getDynamicSizes().empty() &&
            value.getType() == carriedHomes.back().getType() &&
            !bodyMapping.contains(value))
          bodyMapping.map(value, carriedHomes.back());
      }
    cloneBody(builder, after, bodyMapping, homes);
    handOver(builder, loop.getAfter(), yielded, carriedHomes, bodyMapping,
             homes);

    // The test again, at the end of each iteration: the loop's node is a
    // do-while of the body and the test, so that an iteration holds no
    // conditional node of its own.
    builder.create<func::CallOp>(
        loc, end,
        ValueRange{state, cloneTest(builder, testMapping, forwardsOwnBuffers,
                                    forwardedHomes, homes)});

    for (Value home : carriedHomes)
      free(builder, home);
    return forwardedHomes;
  }

  /// Clones the test with its arguments mapped as `argumentMapping` says
  /// (the loop-carried homes) and hands what it forwards on to the
  /// forwarded homes; returns the address of its predicate byte. Where the
  /// test forwards buffers it allocated itself, the first clone's buffers
  /// are the forwarded homes (added to `forwardedHomes` and `homes`) and a
  /// later clone writes them instead of allocating its own.
  Value cloneTest(OpBuilder &builder, const IRMapping &argumentMapping,
                  bool forwardsOwnBuffers, SmallVector<Value> &forwardedHomes,
                  llvm::SmallPtrSetImpl<Value> &homes) {
    Block &before = loop.getBefore().front();
    auto condition = cast<scf::ConditionOp>(before.getTerminator());
    IRMapping mapping = argumentMapping;
    bool first = forwardsOwnBuffers && forwardedHomes.empty();
    if (forwardsOwnBuffers && !first)
      for (auto [value, home] : llvm::zip(condition.getArgs(), forwardedHomes))
        mapping.map(value, home);
    cloneBody(builder, before, mapping, homes);
    if (first) {
      for (Value value : condition.getArgs()) {
        forwardedHomes.push_back(mapping.lookup(value));
        homes.insert(forwardedHomes.back());
      }
    } else if (!forwardsOwnBuffers) {
      handOver(builder, loop.getBefore(), condition.getArgs(), forwardedHomes,
               mapping, homes);
    }
    Location loc = loop.getLoc();
    Value predicate = mapping.lookupOrDefault(read.devicePredicate);
    kiln::BufferAddress address =
        kiln::bufferAddressOf(builder, loc, predicate, 1);
    return builder.create<LLVM::IntToPtrOp>(
        loc, LLVM::LLVMPointerType::get(builder.getContext()), address.address);
  }

  /// Whether the test forwards only buffers it allocated, each once.
  static bool forwardsFreshBuffers(scf::ConditionOp condition) {
    llvm::SmallPtrSet<Value, 4> seen;
    for (Value value : condition.getArgs()) {
      auto alloc = value.getDefiningOp<gpu::AllocOp>();
      if (!alloc || alloc->getBlock() != condition->getBlock() ||
          !seen.insert(value).second)
        return false;
    }
    return true;
  }

  /// Whether `guard` frees a buffer that `mapping` maps into `homes`.
  static bool freesAHome(scf::IfOp guard, const IRMapping &mapping,
                         const llvm::SmallPtrSetImpl<Value> &homes) {
    WalkResult found = guard.getThenRegion().walk([&](gpu::DeallocOp dealloc) {
      Value root = kiln::rootThroughMetadata(dealloc.getMemref());
      return homes.contains(mapping.lookupOrDefault(root))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return found.wasInterrupted();
  }

  /// Clones the ops of `block` that `value` is computed from (views and
  /// metadata of its arguments), so that `value` has a mapping.
  void cloneDefinitions(OpBuilder &builder, Value value, Block &block,
                        IRMapping &mapping) {
    if (mapping.contains(value))
      return;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &block)
      return;
    // Device work a guard waits for is ordered on the stream anyway.
    if (isa<gpu::AsyncTokenType>(value.getType())) {
      mapping.map(value, token(builder));
      return;
    }
    for (Value operand : def->getOperands())
      cloneDefinitions(builder, operand, block, mapping);
    builder.clone(*def, mapping);
  }

  scf::WhileOp loop;
  PredicateRead read;
  func::FuncOp loopsAvailable;
  SmallVector<Value> query;
  func::FuncOp begin, test, end;
};

/// The loops inside host loops that can run as graphs, each after the
/// loops inside it that its form holds (innermost first): loops that are
/// no roots, outside graph forms (and their host forms, whose loops the
/// graph forms hold) and outside loops that can run as graphs themselves,
/// whose forms would hold them. Where the rounds of kiln-cuda-graph-forms
/// have settled, that is a loop whose nearest loop around kept its host
/// form. Such a loop gets a form of its own, captured and launched anew at
/// each trip of the host loop around it: one instantiation of its graph per
/// trip instead of one wait per iteration.
void collectInsideHostLoops(ModuleOp module,
                            SmallVectorImpl<GraphLoop> &loops) {
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (auto choice = dyn_cast<scf::IfOp>(op);
        choice && kiln::isGraphFormChoice(choice, kiln::kGraphFormQueries))
      return WalkResult::skip();
    auto loop = dyn_cast<scf::WhileOp>(op);
    if (!loop)
      return WalkResult::advance();
    PredicateRead read;
    SmallVector<GraphLoop> nested;
    if (!Eligibility(loop).check(read, nested))
      return WalkResult::advance();
    if (!isRoot(loop)) {
      loops.append(nested.begin(), nested.end());
      loops.push_back({loop, read});
    }
    return WalkResult::skip();
  });
}

struct KilnCudaGraphLoopsPass
    : kiln::impl::KilnCudaGraphLoopsBase<KilnCudaGraphLoopsPass> {
  using KilnCudaGraphLoopsBase::KilnCudaGraphLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Outermost loops (counted loops aside), and loops whose nearest loop
    // around them is outside a cond around them; the loops inside one get graph
    // forms with it, first (its iteration holds their nodes), or stay on the
    // host with it. A loop in a cond in a loop gets its own:
    // kiln-cuda-graph-conds can then give the cond its form, which the outer
    // loop's form needs.
    SmallVector<GraphLoop> loops;
    if (insideHostLoops)
      collectInsideHostLoops(module, loops);
    else
      module.walk([&](scf::WhileOp loop) {
        // A loop with a graph form already is the host form of a choice.
        if (loop->getParentOfType<gpu::LaunchOp>() || !isRoot(loop) ||
            kiln::isHostForm(loop))
          return;
        PredicateRead read;
        if (Eligibility(loop).check(read, loops))
          loops.push_back({loop, read});
      });
    if (loops.empty())
      return;
    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i32 = IntegerType::get(context, 32);
    func::FuncOp available = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_LOOPS_FUNCTION,
        FunctionType::get(context, {}, {i32}));
    func::FuncOp begin = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_WHILE_BEGIN_FUNCTION,
        FunctionType::get(context, {}, {pointer}));
    func::FuncOp test = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_WHILE_TEST_FUNCTION,
        FunctionType::get(context, {pointer, pointer}, {}));
    func::FuncOp end = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_WHILE_END_FUNCTION,
        FunctionType::get(context, {pointer, pointer}, {}));
    if (!available || !begin || !test || !end)
      return signalPassFailure();
    SymbolTable symbols(module);
    Type i64 = IntegerType::get(context, 64);
    func::FuncOp tunedAvailable, plannedAvailable;
    for (GraphLoop &graphLoop : loops) {
      // A loop holding tuned call sites asks whether they are decided too,
      // passing their numbers in a constant global; one holding cuDNN
      // calls also whether they have run, passing their keys likewise.
      SmallVector<int64_t> sites = tunedSitesIn(graphLoop.loop);
      SmallVector<int64_t> calls = plannedCallsIn(graphLoop.loop);
      if (sites.empty() && calls.empty()) {
        GraphLoopBuilder(graphLoop.loop, graphLoop.read, available, {}, begin,
                         test, end)
            .build();
        continue;
      }
      Location loc = graphLoop.loop.getLoc();
      auto atModule = OpBuilder::atBlockEnd(module.getBody());
      OpBuilder builder(graphLoop.loop);
      // The constant global of `values` named `name`, and its address.
      auto constantList = [&](StringRef name, ArrayRef<int64_t> values) {
        memref::GlobalOp global = kiln::createI64Global(
            atModule, loc, symbols, name, values, /*constant=*/true,
            atModule.getI64IntegerAttr(8));
        return kiln::globalPointer(builder, loc, global);
      };
      auto count = [&](size_t size) -> Value {
        return builder.create<arith::ConstantIntOp>(
            loc, static_cast<int64_t>(size), 64);
      };
      SmallVector<Value> query;
      if (!sites.empty())
        query = {count(sites.size()),
                 constantList("kiln_graph_loop_sites", sites)};
      if (calls.empty()) {
        if (!tunedAvailable)
          tunedAvailable = kiln::declareLibraryFunction(
              module, KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION,
              FunctionType::get(context, {i64, pointer}, {i32}));
        if (!tunedAvailable)
          return signalPassFailure();
        GraphLoopBuilder(graphLoop.loop, graphLoop.read, tunedAvailable, query,
                         begin, test, end)
            .build();
        continue;
      }
      if (!plannedAvailable)
        plannedAvailable = kiln::declareLibraryFunction(
            module, KILN_CUDA_GRAPH_LOOPS_PLANNED_FUNCTION,
            FunctionType::get(context, {i64, pointer, i64, pointer}, {i32}));
      if (!plannedAvailable)
        return signalPassFailure();
      if (sites.empty())
        query = {count(0), builder.create<LLVM::ZeroOp>(loc, pointer)};
      query.push_back(count(calls.size()));
      query.push_back(constantList("kiln_graph_loop_calls", calls));
      GraphLoopBuilder(graphLoop.loop, graphLoop.read, plannedAvailable, query,
                       begin, test, end)
          .build();
    }
  }
};
} // namespace
