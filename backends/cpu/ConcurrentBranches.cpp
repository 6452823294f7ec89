//===- ConcurrentBranches.cpp - Independent kernels on separate threads ---===//
//
// A kernel that cannot keep every thread busy (a convolution on a 17x17 map
// at batch 1, a small product) loses time to its threads' fork, join and
// imbalance; where the graph has independent branches (an Inception block's
// four, a ResNet block's shortcut beside its main path), running them side
// by side, one thread each, loses none of it. This pass decides, at compile
// time, which runs of a function's kernels go side by side, on buffers,
// before memory planning (so that the branches' buffers do not share bytes)
// and before the library calls are made:
//
//  1. The ops of the function's body are kernels (linalg ops on buffers,
//     copies, calls of the module's functions - the convolutions and
//     attentions outlined for oneDNN and kiln's kernels -, loops without
//     results), free ops (allocations, views, constants: they move before
//     the branches) or barriers (anything else: an op with results that
//     reads memory, a call of a function the module only declares, such as
//     the communicator's). Barriers split the body into segments.
//  2. Each kernel's accesses: the buffers it reads and writes, followed
//     through views to their allocation (the function's arguments count as
//     one buffer: an output may be a donated input's memory; a constant
//     global is its own). A call's are its callee's accesses of its
//     arguments. Two kernels depend on each other where they access one
//     buffer and one of them writes it.
//  3. Each kernel's time on one thread, estimated from its iteration space:
//     products and convolutions at 80 multiply-adds a nanosecond, other
//     loops at 3 iterations a nanosecond. On `threads` threads a kernel of
//     more than 20 us takes t / (0.95 threads) + 4 us; a smaller one takes
//     t (its loops stay on one thread, and oneDNN gains little from a
//     second one on it).
//  4. Within a segment, dynamic programming over runs of up to 48
//     consecutive kernels: a run whose dependences leave at least two
//     independent groups (connected components) may run side by side, its
//     groups packed onto `threads` sections (largest first onto the least
//     loaded), taking the largest section's one-thread time, plus a fifth
//     for the threads' shared memory bandwidth and caches, plus 5 us to
//     start and end the sections. The schedule with the least estimated
//     time wins. The constants come from measurements on two cores: four
//     independent 64x256x256 products (52 us each) took as long side by
//     side as one after the other on two threads, so the model keeps
//     such kernels apart; kernels too small to use the threads (products
//     of a few microseconds, a batch-1 Inception block's smaller branches)
//     go side by side.
//  5. A chosen run becomes
//       scf.parallel (%i) = (0) to (sections) step (1) {
//         scf.index_switch %i case 0 {...} case 1 {...} default {}
//       } {kiln.concurrent = threads}
//     with each section's kernels in their order; the run's free ops move
//     before it. kiln-cpu-concurrent-sections makes it OpenMP sections that
//     run side by side where the call has exactly `threads` threads, and
//     one after the other, each kernel on all threads, otherwise.
//
//===----------------------------------------------------------------------===//

#include "LoopTrips.h"
#include "common/BufferAccess.h"
#include "common/OutlinedOps.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <numeric>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUCONCURRENTBRANCHES
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The functions kiln outlines for a library call (their bodies are the
/// call's reference semantics, replaced by the call later): left alone.
constexpr llvm::StringLiteral kOutlinedKernelAttrs[] = {
    "kiln.dnnl_conv", "kiln.cpu_attention", "kiln.cpu_attention_backward"};

/// Kernels per run considered for running side by side.
constexpr unsigned kMaxRun = 48;

/// The cost model (step 3 of the file comment), in microseconds.
/// A kernel shorter than this runs on one thread whatever the count.
constexpr double kSmallKernelMicros = 20;
/// The parallel efficiency and the fork, join and imbalance of a kernel
/// alone on the threads.
constexpr double kEfficiency = 0.95, kAloneOverheadMicros = 4;
/// Sections side by side share the memory bandwidth, and starting and
/// ending them costs a fork and a barrier.
constexpr double kSharingFactor = 1.2, kSectionsOverheadMicros = 5;

/// What an access reaches, seen from inside one function.
struct Target {
  enum Kind { Argument, Global, Buffer, Unknown } kind = Unknown;
  unsigned argument = 0;           // Argument: its index
  const void *key = nullptr;       // Global: its name; Buffer: its allocation
  Operation *allocation = nullptr; // Buffer
};

/// A memref access: the value accessed and whether it is written.
struct ValueAccess {
  Value value;
  bool write;
};

/// An access of the function being scheduled: the buffer (allocation,
/// global, or nullptr for the function's arguments) and whether it is
/// written.
struct Access {
  const void *root;
  bool write;
};

/// One kernel of a segment.
struct Kernel {
  Operation *op;
  SmallVector<Access> accesses;
  double micros; // estimated, on one thread
};

/// A callee's accesses of its arguments and of globals.
struct Summary {
  SmallVector<std::pair<unsigned, bool>> arguments;
  SmallVector<Access> globals;
};

} // namespace

/// Follows `value` through views to what it is a view of.
static Target targetOf(Value value) {
  Value root = kiln::rootOf(value);
  if (auto argument = dyn_cast<BlockArgument>(root)) {
    Block *block = argument.getOwner();
    if (block->isEntryBlock() && isa<func::FuncOp>(block->getParentOp()))
      return {Target::Argument, argument.getArgNumber(), nullptr};
    return {};
  }
  Operation *def = root.getDefiningOp();
  if (isa<memref::AllocOp, memref::AllocaOp>(def))
    return {Target::Buffer, 0, def, def};
  if (auto global = dyn_cast<memref::GetGlobalOp>(def))
    return {Target::Global, 0, global.getNameAttr().getAsOpaquePointer()};
  return {};
}

static std::optional<Summary>
summarize(func::FuncOp callee,
          llvm::DenseMap<Operation *, std::optional<Summary>> &cache,
          unsigned depth);

/// The memref values `op` and the ops nested in it read and write, and the
/// globals they reach through calls; false where some access is unknown (an
/// op without memory effects it can state, a call of a declaration).
static bool
collectAccesses(Operation *op, SmallVectorImpl<ValueAccess> &values,
                SmallVectorImpl<Access> &globals,
                llvm::DenseMap<Operation *, std::optional<Summary>> &cache,
                unsigned depth) {
  WalkResult result = op->walk([&](Operation *inner) {
    if (auto call = dyn_cast<func::CallOp>(inner)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      std::optional<Summary> summary;
      if (callee &&
          llvm::none_of(call.getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        summary = summarize(callee, cache, depth + 1);
      if (!summary)
        return WalkResult::interrupt();
      for (auto [index, write] : summary->arguments)
        values.push_back({call.getOperand(index), write});
      llvm::append_range(globals, summary->globals);
      return WalkResult::advance();
    }
    if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isMemoryEffectFree(inner))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &instance : instances) {
      Value value = instance.getValue();
      // An alloca's scope, an allocation's new buffer: nothing shared.
      if (isa<MemoryEffects::Allocate>(instance.getEffect()))
        continue;
      if (!value || !isa<BaseMemRefType>(value.getType()))
        return WalkResult::interrupt();
      values.push_back(
          {value, !isa<MemoryEffects::Read>(instance.getEffect())});
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// `callee`'s accesses of its arguments and of globals (its own buffers
/// left out); nullopt for a declaration, an unknown access, or calls nested
/// too deep.
static std::optional<Summary>
summarize(func::FuncOp callee,
          llvm::DenseMap<Operation *, std::optional<Summary>> &cache,
          unsigned depth) {
  if (callee.isDeclaration() || depth > 4)
    return std::nullopt;
  // A kernel replaces the calls of a placeholder later (an attention):
  // its accesses are those its arguments are marked with, not its body's.
  if (mlir::kiln::isOutlinedPlaceholder(callee)) {
    Summary summary;
    for (unsigned i = 0; i < callee.getNumArguments(); ++i)
      summary.arguments.push_back(
          {i, !mlir::kiln::isReadOnlyPlaceholderArgument(callee, i)});
    return summary;
  }
  auto cached = cache.find(callee);
  if (cached != cache.end())
    return cached->second;
  // A recursive call finds nullopt here.
  cache[callee] = std::nullopt;
  SmallVector<ValueAccess> values;
  Summary summary;
  bool known = true;
  for (Operation &op : callee.getBody().getOps())
    known =
        known && collectAccesses(&op, values, summary.globals, cache, depth);
  for (const ValueAccess &access : values) {
    if (!known)
      break;
    Target target = targetOf(access.value);
    switch (target.kind) {
    case Target::Argument:
      summary.arguments.push_back({target.argument, access.write});
      break;
    case Target::Global:
      summary.globals.push_back({target.key, access.write});
      break;
    case Target::Buffer:
      break;
    case Target::Unknown:
      known = false;
      break;
    }
  }
  std::optional<Summary> answer;
  if (known)
    answer = std::move(summary);
  cache[callee] = answer;
  return answer;
}

/// Iterations of `op`'s loops (static sizes; a dynamic one counts 1024),
/// times the constant trip counts of the scf.for loops in its body (a
/// pooling window).
static double iterations(linalg::LinalgOp op) {
  double count = 1;
  for (int64_t range : op.getStaticLoopRanges())
    count *= ShapedType::isDynamic(range) ? 1024.0 : double(range);
  op->walk([&](scf::ForOp loop) {
    count *= double(std::max<int64_t>(
        1, kiln::staticTripCount(loop.getLowerBound(), loop.getUpperBound(),
                                 loop.getStep())));
  });
  return count;
}

/// Estimated microseconds of `op` on one thread (step 3 of the file
/// comment): a loop's body times its trip count, a call its callee's.
static double estimateMicros(Operation *op,
                             llvm::DenseMap<Operation *, double> &callees,
                             unsigned depth = 0) {
  constexpr double kMacsPerMicro = 80e3, kIterationsPerMicro = 3e3;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    bool product =
        linalgOp.getNumReductionLoops() > 0 && linalgOp.getNumDpsInputs() >= 2;
    return iterations(linalgOp) /
           (product ? kMacsPerMicro : kIterationsPerMicro);
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto type = cast<MemRefType>(copy.getSource().getType());
    return type.hasStaticShape()
               ? double(type.getNumElements()) / kIterationsPerMicro
               : 1.0;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isDeclaration() || depth > 4)
      return 0;
    if (!callees.contains(callee)) {
      // A recursive call counts nothing.
      callees[callee] = 0.0;
      double calleeMicros = estimateMicros(callee, callees, depth + 1);
      callees[callee] = calleeMicros;
    }
    return callees.lookup(callee);
  }
  double body = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        body += estimateMicros(&inner, callees, depth);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return body *
           double(kiln::staticTripCount(loop.getLowerBound(),
                                        loop.getUpperBound(), loop.getStep()));
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    for (auto [lower, upper, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      body *= double(kiln::staticTripCount(lower, upper, step));
    return body;
  }
  return body;
}

/// Whether `op` can move before the kernels around it: it computes a value
/// (an allocation, a view, a constant) and touches no memory.
static bool isFree(Operation *op) {
  if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  return isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp,
             ViewLikeOpInterface>(op) ||
         isMemoryEffectFree(op);
}

namespace {

/// Groups of kernels connected by dependences, over a run of a segment.
class Components {
public:
  explicit Components(unsigned first) : first(first) {}

  void add(unsigned kernel, ArrayRef<unsigned> dependences) {
    classes.insert(kernel);
    for (unsigned other : dependences)
      if (other >= first)
        classes.unionSets(other, kernel);
  }

  /// The total time of each group, with the kernels of each (indices in
  /// the segment, in order).
  SmallVector<std::pair<double, SmallVector<unsigned>>>
  groups(ArrayRef<Kernel> kernels, unsigned last) const {
    llvm::DenseMap<unsigned, unsigned> groupOf;
    SmallVector<std::pair<double, SmallVector<unsigned>>> result;
    for (unsigned k = first; k <= last; ++k) {
      unsigned leader = classes.getLeaderValue(k);
      auto [it, fresh] = groupOf.try_emplace(leader, result.size());
      if (fresh)
        result.push_back({0.0, {}});
      result[it->second].first += kernels[k].micros;
      result[it->second].second.push_back(k);
    }
    return result;
  }

private:
  unsigned first;
  llvm::EquivalenceClasses<unsigned> classes;
};

/// Groups packed onto sections, largest first onto the least loaded: the
/// kernels of each section in order, and the largest section's time.
struct Packing {
  SmallVector<SmallVector<unsigned>> sections;
  double longest = 0;
};

} // namespace

static Packing
pack(SmallVector<std::pair<double, SmallVector<unsigned>>> groups,
     unsigned threads) {
  llvm::stable_sort(
      groups, [](const auto &a, const auto &b) { return a.first > b.first; });
  unsigned count = std::min<unsigned>(threads, groups.size());
  Packing packing;
  packing.sections.resize(count);
  SmallVector<double> load(count, 0.0);
  for (auto &[micros, members] : groups) {
    unsigned least = std::min_element(load.begin(), load.end()) - load.begin();
    load[least] += micros;
    llvm::append_range(packing.sections[least], members);
  }
  for (SmallVector<unsigned> &section : packing.sections)
    llvm::sort(section);
  packing.longest = *std::max_element(load.begin(), load.end());
  return packing;
}

/// Whether kernels `a` and `b` access one buffer and one of them writes it.
static bool depends(const Kernel &a, const Kernel &b) {
  for (const Access &x : a.accesses)
    for (const Access &y : b.accesses)
      if (x.root == y.root && (x.write || y.write))
        return true;
  return false;
}

namespace {
struct KilnCpuConcurrentBranchesPass
    : kiln::impl::KilnCpuConcurrentBranchesBase<KilnCpuConcurrentBranchesPass> {
  using KilnCpuConcurrentBranchesBase::KilnCpuConcurrentBranchesBase;

  void runOnOperation() override {
    if (threads < 2)
      return;
    for (auto function : getOperation().getOps<func::FuncOp>())
      runOnFunction(function);
  }

private:
  void runOnFunction(func::FuncOp function) {
    if (function.isDeclaration() ||
        llvm::any_of(kOutlinedKernelAttrs,
                     [&](StringRef name) { return function->hasAttr(name); }))
      return;
    // What is known of the callees is of their bodies as they are now.
    summaries.clear();
    calleeMicros.clear();
    SmallVector<Kernel> segment;
    for (Operation &op :
         llvm::make_early_inc_range(function.getBody().front())) {
      if (isFree(&op))
        continue;
      std::optional<Kernel> kernel = kernelOf(&op);
      if (kernel) {
        segment.push_back(std::move(*kernel));
        continue;
      }
      schedule(segment);
      segment.clear();
    }
    schedule(segment);
  }

  /// `op` as a kernel: no results, accesses all known.
  std::optional<Kernel> kernelOf(Operation *op) {
    if (op->getNumResults() != 0 || op->hasTrait<OpTrait::IsTerminator>())
      return std::nullopt;
    SmallVector<ValueAccess> values;
    Kernel kernel{op, {}, 0.0};
    if (!collectAccesses(op, values, kernel.accesses, summaries, 0))
      return std::nullopt;
    for (const ValueAccess &access : values) {
      Target target = targetOf(access.value);
      switch (target.kind) {
      case Target::Argument:
        kernel.accesses.push_back({nullptr, access.write});
        break;
      case Target::Global:
      case Target::Buffer:
        // A buffer of the op's own (allocated in its loop body) is no one
        // else's.
        if (target.allocation && op->isAncestor(target.allocation))
          break;
        kernel.accesses.push_back({target.key, access.write});
        break;
      case Target::Unknown:
        return std::nullopt;
      }
    }
    kernel.micros = estimateMicros(op, calleeMicros);
    return kernel;
  }

  /// The estimated time of `kernel` run by itself on `threads` threads.
  double aloneMicros(const Kernel &kernel) const {
    if (kernel.micros < kSmallKernelMicros)
      return kernel.micros;
    return kernel.micros / (kEfficiency * double(threads)) +
           kAloneOverheadMicros;
  }

  /// Step 4 and 5 of the file comment for one segment.
  void schedule(ArrayRef<Kernel> kernels) {
    unsigned n = kernels.size();
    if (n < 2)
      return;
    SmallVector<SmallVector<unsigned>> dependences(n);
    for (unsigned b = 0; b < n; ++b)
      for (unsigned a = b > kMaxRun ? b - kMaxRun : 0; a < b; ++a)
        if (depends(kernels[a], kernels[b]))
          dependences[b].push_back(a);

    constexpr double kInfinity = 1e300;
    SmallVector<double> best(n + 1, kInfinity);
    // The first kernel of the run ending at each position, the run side by
    // side when it holds more than one kernel.
    SmallVector<unsigned> start(n + 1, 0);
    best[0] = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (best[i] + aloneMicros(kernels[i]) < best[i + 1]) {
        best[i + 1] = best[i] + aloneMicros(kernels[i]);
        start[i + 1] = i;
      }
      Components components(i);
      components.add(i, dependences[i]);
      for (unsigned j = i + 1; j < n && j < i + kMaxRun; ++j) {
        components.add(j, dependences[j]);
        auto groups = components.groups(kernels, j);
        if (groups.size() < 2)
          continue;
        double side =
            pack(std::move(groups), threads).longest * kSharingFactor +
            kSectionsOverheadMicros;
        if (best[i] + side < best[j + 1]) {
          best[j + 1] = best[i] + side;
          start[j + 1] = i;
        }
      }
    }
    SmallVector<std::pair<unsigned, unsigned>> runs;
    for (unsigned end = n; end > 0; end = start[end])
      if (end - start[end] > 1)
        runs.push_back({start[end], end - 1});
    for (auto [first, last] : runs) {
      Components components(first);
      for (unsigned k = first; k <= last; ++k)
        components.add(k, dependences[k]);
      rewrite(kernels, first, last,
              pack(components.groups(kernels, last), threads));
    }
  }

  /// Step 5 of the file comment.
  void rewrite(ArrayRef<Kernel> kernels, unsigned first, unsigned last,
               const Packing &packing) {
    Operation *begin = kernels[first].op;
    Operation *end = kernels[last].op;
    llvm::SmallPtrSet<Operation *, 16> inRun;
    for (unsigned k = first; k <= last; ++k)
      inRun.insert(kernels[k].op);
    for (Operation *op = begin->getNextNode(); op != end;) {
      Operation *next = op->getNextNode();
      if (!inRun.contains(op))
        op->moveBefore(begin);
      op = next;
    }
    OpBuilder builder(begin);
    Location loc = begin->getLoc();
    auto index = [&](int64_t value) {
      return builder.create<arith::ConstantIndexOp>(loc, value).getResult();
    };
    Value zero = index(0), one = index(1),
          count = index(int64_t(packing.sections.size()));
    auto loop = builder.create<scf::ParallelOp>(
        loc, ValueRange{zero}, ValueRange{count}, ValueRange{one});
    loop->setAttr(kiln::kConcurrentAttrName,
                  builder.getI64IntegerAttr(threads));
    builder.setInsertionPoint(loop.getBody()->getTerminator());
    SmallVector<int64_t> cases(packing.sections.size());
    std::iota(cases.begin(), cases.end(), 0);
    auto sections = builder.create<scf::IndexSwitchOp>(
        loc, TypeRange(), loop.getInductionVars()[0], cases, cases.size());
    auto addBlock = [&](Region &region) {
      Block *block = builder.createBlock(&region);
      builder.setInsertionPointToEnd(block);
      builder.create<scf::YieldOp>(loc);
      return block;
    };
    addBlock(sections.getDefaultRegion());
    for (auto [region, members] :
         llvm::zip(sections.getCaseRegions(), packing.sections)) {
      Block *block = addBlock(region);
      for (unsigned k : members)
        kernels[k].op->moveBefore(block->getTerminator());
    }
  }

  llvm::DenseMap<Operation *, std::optional<Summary>> summaries;
  llvm::DenseMap<Operation *, double> calleeMicros;
};
} // namespace
