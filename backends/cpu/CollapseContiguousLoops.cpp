//===- CollapseContiguousLoops.cpp - Elementwise loops over one dim ------===//
//
// kiln-cpu-collapse-contiguous-loops (CpuPasses.td): an elementwise
// linalg.generic or a linalg.copy on buffers has the run of its last dims
// that every operand walks in order and densely made one dim, by upstream's
// collapseOpIterationDims (memref.collapse_shape of each operand).
//
// Why: a [4096, 16] f32 loop nest lowers to a loop over rows around a loop
// of 16 columns. LLVM unrolls the short inner loop completely, and its
// loop vectorizer then vectorizes the loop over rows, loading each of the
// 16 columns with a masked gather of stride 16: 54 us for what one loop
// over 65536 contiguous floats does in 8 (measured on the copy and the
// SGD update of a DLRM table). The same shape is an embedding table, its
// optimizer state, any NHWC activation of 16 channels.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUCOLLAPSECONTIGUOUSLOOPS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Whether the memref `type` is row-major dense over its dims [from, to]:
/// each of those dims' stride is the next one's times the next one's size.
static bool denseOver(MemRefType type, int64_t from, int64_t to) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  for (int64_t d = from; d < to; ++d) {
    if (ShapedType::isDynamic(strides[d]) ||
        ShapedType::isDynamic(strides[d + 1]) ||
        type.isDynamicDim(d + 1) ||
        strides[d] != strides[d + 1] * type.getDimSize(d + 1))
      return false;
  }
  return true;
}

/// Whether every operand of `op` is dense over the dims of `run` (a run
/// of its loops that every indexing map keeps in order), so that
/// collapseOpIterationDims can make them one.
static bool denseOverRun(linalg::LinalgOp op, const ReassociationIndices &run) {
  AffineExpr first = getAffineDimExpr(run.front(), op->getContext());
  return llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return false;
    // The run's first dim, where the operand's map has it; its last is
    // run.size() - 1 results on (areDimSequencesPreserved).
    std::optional<unsigned> start =
        op.getMatchingIndexingMap(&operand).getResultPosition(first);
    // An operand without the run keeps its shape, but upstream still asks
    // for its collapsed layout, which it cannot compute for a strided view
    // of rank 0 (it crashes): such operands must be plain.
    return start ? denseOver(type, *start, *start + run.size() - 1)
                 : type.getLayout().isIdentity();
  });
}

/// The longest run of `op`'s last loops, [k, n), that can be one loop, or
/// none when fewer than two can.
static ReassociationIndices collapsibleRun(linalg::LinalgOp op) {
  int64_t n = op.getNumLoops();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  for (int64_t k = 0; k + 1 < n; ++k) {
    ReassociationIndices run;
    for (int64_t d = k; d < n; ++d)
      run.push_back(d);
    if (linalg::areDimSequencesPreserved(maps, {run}) && denseOverRun(op, run))
      return run;
  }
  return {};
}

/// Makes the operands of `op` that collapse the same buffer the same way
/// one memref.collapse_shape (upstream makes one per operand), erasing the
/// others: the buffer is then one pointer to LLVM, which can see that an
/// elementwise loop writing it in place reads each element before it
/// writes it, instead of checking at run time whether two pointers overlap.
static void shareCollapses(linalg::LinalgOp op, RewriterBase &rewriter) {
  SmallVector<memref::CollapseShapeOp> kept;
  for (OpOperand &operand : op->getOpOperands()) {
    auto collapse = operand.get().getDefiningOp<memref::CollapseShapeOp>();
    if (!collapse)
      continue;
    auto same = llvm::find_if(kept, [&](memref::CollapseShapeOp other) {
      return other.getSrc() == collapse.getSrc() &&
             other.getType() == collapse.getType() &&
             other.getReassociation() == collapse.getReassociation();
    });
    if (same == kept.end()) {
      kept.push_back(collapse);
      continue;
    }
    rewriter.modifyOpInPlace(op, [&] { operand.set(same->getResult()); });
    if (collapse->use_empty())
      rewriter.eraseOp(collapse);
  }
}

namespace {
struct KilnCpuCollapseContiguousLoopsPass
    : kiln::impl::KilnCpuCollapseContiguousLoopsBase<
          KilnCpuCollapseContiguousLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
        if (generic.getNumReductionLoops() != 0 || generic.hasIndexSemantics())
          return;
      } else if (!isa<linalg::CopyOp>(op.getOperation())) {
        return;
      }
      candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      ReassociationIndices run = collapsibleRun(op);
      if (run.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, {run}, rewriter);
      if (failed(collapsed))
        continue;
      // On buffers the op has no results to replace.
      rewriter.eraseOp(op);
      shareCollapses(collapsed->collapsedOp, rewriter);
    }
  }
};
} // namespace
