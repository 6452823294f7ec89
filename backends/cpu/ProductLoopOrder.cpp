//===- ProductLoopOrder.cpp - Products left as loops run along rows ------===//
//
// kiln-cpu-product-loop-order (CpuPasses.td): a matrix product that no
// library call took (integer and f64 products, f32 ones below the oneDNN
// threshold) lowers to loops in its iteration order, [b,] m, n, k: the
// innermost loop sums one output element over k, reading B down a column
// (stride n). LLVM cannot vectorize that loop (a strided read, a serial
// sum) and each step misses the cache on a large B. Reordered to [b,] m, k,
// n, the innermost loop adds A[m, k] * B[k, n] to the row C[m, :] while it
// walks B's row k and C's row m contiguously, which LLVM vectorizes; each
// output element is still summed over k in increasing order, so results
// are bitwise the same.
//
// Measured on the integer products of a dynamically quantized BERT-base
// (ONNX Runtime's quantize_dynamic: MatMulInteger on int32 operands), one
// thread of a Xeon: 128x768x3072 took 2.0 s, about 0.15 billion
// multiply-adds a second.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPRODUCTLOOPORDER
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `value`, a buffer, has unit stride in its last dim.
bool unitLastStride(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         strides.back() == 1;
}

/// The loop order that makes the output's last dim the innermost loop,
/// right after the one reduction loop, if `op` is a product that gains
/// from it: its loops end with a reduction, its one output is indexed by a
/// permutation of the parallel loops whose last dim (n) has unit stride,
/// and every input either does not use n or has it as its last index, of
/// unit stride (B[k, n], not B[n, k]: that one is read down a column
/// either way).
std::optional<SmallVector<unsigned>> rowOrder(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::reduction)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outputMap = op.getMatchingIndexingMap(init);
  if (!outputMap.isProjectedPermutation() || outputMap.getNumResults() == 0 ||
      !unitLastStride(init->get()))
    return std::nullopt;
  auto last = dyn_cast<AffineDimExpr>(outputMap.getResults().back());
  if (!last)
    return std::nullopt;
  unsigned n = last.getPosition();
  if (n != loops - 2)
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    std::optional<unsigned> at =
        map.getResultPosition(getAffineDimExpr(n, op->getContext()));
    if (at && (*at != map.getNumResults() - 1 || !unitLastStride(input->get())))
      return std::nullopt;
  }
  // [..., n, k] -> [..., k, n].
  SmallVector<unsigned> order;
  for (unsigned d = 0; d + 2 < loops; ++d)
    order.push_back(d);
  order.push_back(loops - 1);
  order.push_back(loops - 2);
  return order;
}

struct KilnCpuProductLoopOrderPass
    : kiln::impl::KilnCpuProductLoopOrderBase<KilnCpuProductLoopOrderPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, SmallVector<unsigned>>> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<SmallVector<unsigned>> order = rowOrder(op))
        products.push_back({op, *order});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, order] : products) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          isa<linalg::GenericOp>(op.getOperation())
              ? FailureOr<linalg::GenericOp>(cast<linalg::GenericOp>(op))
              : linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic) ||
          failed(linalg::interchangeGenericOp(rewriter, *generic, order))) {
        op->emitOpError("could not reorder the loops of this product");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
