//===- ParallelLoops.cpp - Which parallel loops run on several threads ----===//
//
// linalg lowers to scf.parallel over its parallel dims (reductions stay
// scf.for inside), and convert-scf-to-openmp turns every scf.parallel into
// an OpenMP parallel region. That is right for the outermost loop of a big
// loop nest only: a nested scf.parallel would fork a team inside a team,
// and a small loop nest would pay the fork/join (microseconds) for
// nanoseconds of work. This pass decides before that conversion:
//
//  - a library call's loop that says its iteration's work
//    (`kiln.body_work`) first loses its dims of one iteration here, with
//    the attribute kept (the canonicalization below would drop those dims
//    and the attribute with them);
//  - perfectly nested scf.parallel loops (the inner loop is all of the
//    outer body, its bounds independent of the outer loop) are first merged
//    into one multi-dim scf.parallel (upstream's scf.parallel
//    canonicalization), which OpenMP runs as one collapsed loop, so a short
//    outer loop does not leave threads idle;
//  - an scf.parallel nested in another scf.parallel becomes scf.for loops;
//  - an outermost scf.parallel whose loop nest runs fewer than
//    `min-iterations` innermost iterations (static trip counts multiplied
//    through the nest, a loop over a chunk min(lower + c, x) counting c; a
//    loop with unknown trip count, e.g. scf.while, counts as one iteration
//    of its body; an scf.parallel with a `kiln.body_work` attribute, such
//    as kiln-cpu-matmul-to-dnnl's loop over the products of a batch, counts
//    that many per iteration) becomes scf.for loops too;
//  - of what stays an scf.parallel, a loop of several dims whose body is
//    straight-line code (an elementwise kernel: no loops, no calls) keeps
//    its last dim out of the collapsed loop, as an scf.for inside it. The
//    last dim walks contiguous memory, and LLVM vectorizes such a loop;
//    collapsed into the OpenMP loop, every element would pay one division
//    and remainder per dim to recover its indices, and the loop would stay
//    scalar. Where the other dims have fewer than `kMinParallelChunks`
//    iterations, the last dim is cut into chunks of `kChunk` elements
//    first, and the loop over chunks stays parallel.
//
// What stays an scf.parallel is worth a parallel region.
//
//===----------------------------------------------------------------------===//

#include "LoopTrips.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPARALLELLOOPS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Innermost iterations of the loops in `region` (saturating), at least 1.
static int64_t regionWork(Region &region);

static int64_t saturatingMul(int64_t a, int64_t b) {
  constexpr int64_t kMax = int64_t(1) << 40;
  if (a == 0 || b == 0)
    return 0;
  return a > kMax / b ? kMax : a * b;
}

static int64_t operationWork(Operation *op) {
  int64_t inner = 1;
  for (Region &region : op->getRegions())
    inner = std::max(inner, regionWork(region));
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return saturatingMul(kiln::staticTripCount(loop.getLowerBound(),
                                               loop.getUpperBound(),
                                               loop.getStep()),
                         inner);
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    // A loop whose body is a library call says what an iteration is worth.
    if (auto work =
            loop->getAttrOfType<IntegerAttr>(kiln::kBodyWorkAttrName))
      inner = std::max<int64_t>(inner, work.getInt());
    int64_t trips = 1;
    for (auto [lower, upper, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      trips = saturatingMul(trips, kiln::staticTripCount(lower, upper, step));
    return saturatingMul(trips, inner);
  }
  return inner;
}

static int64_t regionWork(Region &region) {
  int64_t work = 1;
  for (Block &block : region)
    for (Operation &op : block)
      if (op.getNumRegions())
        work = std::max<int64_t>(work, std::min<int64_t>(
                                           int64_t(1) << 40,
                                           work + operationWork(&op)));
  return work;
}

/// Clones `loop`'s body into `into` (before its terminator) with the
/// induction variables `mapping` gives, moves `loop`'s attributes to
/// `replacement` and erases `loop`.
static void replaceLoop(scf::ParallelOp loop, Block *into,
                        Operation *replacement, IRMapping &mapping) {
  OpBuilder builder = OpBuilder::atBlockTerminator(into);
  for (Operation &op : loop.getBody()->without_terminator())
    builder.clone(op, mapping);
  for (NamedAttribute attribute : loop->getDiscardableAttrs())
    replacement->setAttr(attribute.getName(), attribute.getValue());
  loop.erase();
}

/// Drops the dims of `loop` (a reduction-free scf.parallel with
/// `kiln.body_work`) that run once, their induction variables replaced by
/// their lower bounds. The scf.parallel canonicalization does the same but
/// rebuilds the loop without its attributes: an attention's loop over
/// (batch entry, query tile) with a single tile then weighed its batch
/// entries as single iterations and ran them on one thread.
static void dropSingleTripDims(scf::ParallelOp loop) {
  SmallVector<Value> lowers, uppers, steps;
  SmallVector<unsigned> kept;
  for (auto [d, lower, upper, step] : llvm::enumerate(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    if (kiln::constantTripCount(lower, upper, step) == 1)
      continue;
    kept.push_back(d);
    lowers.push_back(lower);
    uppers.push_back(upper);
    steps.push_back(step);
  }
  // All dims once: the canonicalization inlines the body, which is right
  // for a single iteration.
  if (kept.empty() || kept.size() == loop.getNumLoops())
    return;
  OpBuilder builder(loop);
  auto rebuilt =
      builder.create<scf::ParallelOp>(loop.getLoc(), lowers, uppers, steps);
  IRMapping mapping;
  for (auto [d, iv] : llvm::enumerate(loop.getInductionVars()))
    mapping.map(iv, loop.getLowerBound()[d]);
  for (auto [index, d] : llvm::enumerate(kept))
    mapping.map(loop.getInductionVars()[d], rebuilt.getInductionVars()[index]);
  replaceLoop(loop, rebuilt.getBody(), rebuilt, mapping);
}

/// Replaces a reduction-free scf.parallel by a nest of scf.for loops.
static void makeSequential(scf::ParallelOp loop) {
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  IRMapping mapping;
  Block *body = nullptr;
  for (auto [iv, lower, upper, step] :
       llvm::zip(loop.getInductionVars(), loop.getLowerBound(),
                 loop.getUpperBound(), loop.getStep())) {
    auto inner = builder.create<scf::ForOp>(loc, lower, upper, step);
    mapping.map(iv, inner.getInductionVar());
    body = inner.getBody();
    builder.setInsertionPoint(body->getTerminator());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    builder.clone(op, mapping);
  loop.erase();
}

/// Outer iterations that keep every thread of a large machine busy under a
/// static schedule (within a quarter at 16 threads).
constexpr int64_t kMinParallelChunks = 64;
/// Elements of the last dim per chunk where it must be cut: a multiple of
/// every vector width, long enough that the loop's overhead vanishes.
constexpr int64_t kChunk = 1024;

/// Whether `loop`'s body is straight-line code: no nested regions, no
/// calls.
static bool isElementwiseBody(scf::ParallelOp loop) {
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.getNumRegions() != 0 || isa<CallOpInterface>(op))
      return false;
  return true;
}

/// Moves the last dim of the multi-dim `loop` into an scf.for inside it
/// (see the file comment); cuts it into chunks first where the other dims
/// are too few to share among threads. Leaves loops it cannot improve as
/// they are.
static void splitLastDim(scf::ParallelOp loop) {
  unsigned dims = loop.getNumLoops();
  if (dims < 2 || loop.getNumReductions() != 0 ||
      loop->hasAttr(kiln::kBodyWorkAttrName) || !isElementwiseBody(loop))
    return;
  int64_t outer = 1;
  for (unsigned d = 0; d + 1 < dims; ++d)
    outer = saturatingMul(outer, kiln::staticTripCount(loop.getLowerBound()[d],
                                                       loop.getUpperBound()[d],
                                                       loop.getStep()[d]));
  Value lower = loop.getLowerBound().back();
  Value upper = loop.getUpperBound().back();
  Value step = loop.getStep().back();
  std::optional<int64_t> lo = getConstantIntValue(lower);
  std::optional<int64_t> hi = getConstantIntValue(upper);
  std::optional<int64_t> st = getConstantIntValue(step);
  bool chunked = outer < kMinParallelChunks;
  // Cut only a static, unit-stride last dim long enough for several chunks.
  if (chunked && !(lo && hi && st && *st == 1 && *hi - *lo >= 2 * kChunk))
    return;

  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> lowers(loop.getLowerBound().drop_back());
  SmallVector<Value> uppers(loop.getUpperBound().drop_back());
  SmallVector<Value> steps(loop.getStep().drop_back());
  Value size;
  if (chunked) {
    size = builder.create<arith::ConstantIndexOp>(loc, kChunk);
    int64_t chunks = (*hi - *lo + kChunk - 1) / kChunk;
    lowers.push_back(builder.create<arith::ConstantIndexOp>(loc, 0));
    uppers.push_back(builder.create<arith::ConstantIndexOp>(loc, chunks));
    steps.push_back(builder.create<arith::ConstantIndexOp>(loc, 1));
  }
  auto parallel = builder.create<scf::ParallelOp>(loc, lowers, uppers, steps);
  builder.setInsertionPointToStart(parallel.getBody());
  Value first = lower, last = upper;
  if (chunked) {
    // Elements [lo + c * kChunk, min(lo + (c + 1) * kChunk, hi)).
    Value chunk = parallel.getInductionVars().back();
    first = builder.create<arith::AddIOp>(
        loc, lower, builder.create<arith::MulIOp>(loc, chunk, size));
    last = builder.create<arith::MinSIOp>(
        loc, builder.create<arith::AddIOp>(loc, first, size), upper);
  }
  auto inner = builder.create<scf::ForOp>(loc, first, last, step);
  IRMapping mapping;
  for (unsigned d = 0; d + 1 < dims; ++d)
    mapping.map(loop.getInductionVars()[d], parallel.getInductionVars()[d]);
  mapping.map(loop.getInductionVars().back(), inner.getInductionVar());
  replaceLoop(loop, inner.getBody(), parallel, mapping);
}

namespace {
struct KilnCpuParallelLoopsPass
    : kiln::impl::KilnCpuParallelLoopsBase<KilnCpuParallelLoopsPass> {
  using KilnCpuParallelLoopsBase::KilnCpuParallelLoopsBase;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> weighed;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (loop->hasAttr(kiln::kBodyWorkAttrName) &&
          loop.getNumReductions() == 0)
        weighed.push_back(loop);
    });
    for (scf::ParallelOp loop : weighed)
      dropSingleTripDims(loop);
    RewritePatternSet merge(&getContext());
    scf::ParallelOp::getCanonicalizationPatterns(merge, &getContext());
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(merge));

    SmallVector<scf::ParallelOp> sequential;
    getOperation()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      if (loop.getNumReductions() != 0)
        return;
      if (loop->getParentOfType<scf::ParallelOp>() ||
          operationWork(loop) < static_cast<int64_t>(minIterations))
        sequential.push_back(loop);
    });
    // Innermost first, so that an outer loop is cloned with sequential
    // loops inside.
    for (scf::ParallelOp loop : llvm::reverse(sequential))
      makeSequential(loop);

    SmallVector<scf::ParallelOp> parallel;
    getOperation()->walk([&](scf::ParallelOp loop) { parallel.push_back(loop); });
    for (scf::ParallelOp loop : parallel)
      splitLastDim(loop);
  }
};
} // namespace
