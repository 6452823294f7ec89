//===- FoldTransposesIntoMatmuls.cpp - products read transposes in place --===//
//
// Backward passes multiply by transposes (dY * W^T, X^T * dY). Lowered
// as written, each transpose is a copy: a strided pass over the whole
// matrix into a fresh buffer, then the product reads the copy. oneDNN's
// sgemm and cuBLASLt read a transposed operand in place (a transpose
// flag), and so can a loop nest, so the copy need not be made.
//
// The pass runs on memrefs, after bufferization and before memory planning.
// For every matmul-like contraction (linalg.matmul, batch_matmul, their
// _transpose_a/_b variants, or a contraction linalg.generic):
//
//   1. For each input, find the op that wrote it: a "permuting copy" (a
//      linalg op with one input, one init, only parallel loops, permutation
//      indexing maps and a body that yields its input unchanged:
//      linalg.transpose, linalg.copy, or a transposing linalg.generic) in the
//      same block, before the product.
//   2. Check that dropping the copy is safe: nothing but the product reads
//      what the copy wrote (nothing touches the copied-to buffer between
//      the two, and after the product it is overwritten whole before it is
//      read again, or never used again if it is an allocation: one-shot
//      bufferization also copies into an out-param whose result is written
//      later; or the buffer is an allocation that only the copy and the
//      product use, such as one made before a loop whose body transposes a
//      loop-invariant weight into it), and no op between the copy and the
//      product (nor the product itself, through its init) may write the
//      memory the copy read.
//   3. Rewrite the product as a linalg.generic that reads the copy's source
//      directly, the operand's indexing map composed with the copy's
//      permutation; erase the copy, and its buffer (and deallocation) if
//      nothing else uses it now.
//
// kiln-cpu-matmul-to-dnnl later turns such a generic into an sgemm call with
// the transpose flags its maps call for (below its size threshold it stays
// a loop nest that indexes the source in place), and
// kiln-cuda-library-matmul into a cuBLASLt product with those flags.
//
//===----------------------------------------------------------------------===//

#include "common/BufferAccess.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFOLDTRANSPOSESINTOMATMULS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// Whether `op` copies its only input to its only init with the indices
/// permuted, computing nothing.
static bool isPermutingCopy(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isPermutation())
      return false;
  Block *body = op.getBlock();
  if (!body || body->getOperations().size() != 1)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  return yield && yield.getNumOperands() == 1 &&
         yield.getOperand(0) == body->getArgument(0);
}

/// Whether `op` or an op nested in it has an operand that is `buffer` or a
/// view of it.
static bool touches(Operation *op, Value buffer) {
  WalkResult result = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (isa<MemRefType>(operand.getType()) && rootOf(operand) == buffer)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether `op` writes all of `buffer` without reading it first.
static bool overwrites(Operation *op, Value buffer) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumLoops() != linalgOp.getNumParallelLoops())
    return false;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  if (init->get() != buffer || linalgOp.payloadUsesValueFromOperand(init) ||
      !linalgOp.getMatchingIndexingMap(init).isPermutation())
    return false;
  for (OpOperand *input : linalgOp.getDpsInputOperands())
    if (rootOf(input->get()) == buffer)
      return false;
  return true;
}

/// Whether `buffer` is an allocation that only `copy` and `product` use,
/// besides its deallocation: a buffer allocated outside a loop whose body
/// transposes into it and multiplies by it.
static bool usedOnlyBy(Value buffer, linalg::LinalgOp copy,
                       linalg::LinalgOp product) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return false;
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    return user == copy.getOperation() || user == product.getOperation() ||
           isa<memref::DeallocOp>(user);
  });
}

/// Whether the values written into `buffer` by `copy` are read by
/// `product` alone: nothing between them touches the buffer, and after the
/// product the first op of the block that touches it overwrites it whole;
/// or nothing does and it is an allocation of this block (not an output),
/// or one that nothing but the two uses.
static bool onlyProductReads(Value buffer, linalg::LinalgOp copy,
                             linalg::LinalgOp product) {
  if (usedOnlyBy(buffer, copy, product))
    return true;
  for (Operation *op = copy->getNextNode(); op != product.getOperation();
       op = op->getNextNode())
    if (touches(op, buffer))
      return false;
  for (Operation *op = product->getNextNode(); op; op = op->getNextNode()) {
    if (!touches(op, buffer))
      continue;
    return overwrites(op, buffer);
  }
  Operation *allocation = buffer.getDefiningOp<memref::AllocOp>();
  return allocation && allocation->getBlock() == product->getBlock();
}

/// The permuting copy that fills `buffer` for `product` alone, when it is
/// safe to read its source in place at `product`.
static linalg::LinalgOp foldableCopyInto(Value buffer,
                                         linalg::LinalgOp product) {
  // The buffer itself, not a view: a copy into it writes it whole.
  if (rootOf(buffer) != buffer)
    return nullptr;
  // The last op before the product that touches the buffer.
  linalg::LinalgOp copy;
  for (Operation *op = product->getPrevNode(); op; op = op->getPrevNode()) {
    if (!touches(op, buffer))
      continue;
    copy = dyn_cast<linalg::LinalgOp>(op);
    break;
  }
  if (!copy || !isPermutingCopy(copy) ||
      copy.getDpsInitOperand(0)->get() != buffer)
    return nullptr;
  for (OpOperand &init : product.getDpsInitsMutable())
    if (rootOf(init.get()) == buffer)
      return nullptr;
  if (!onlyProductReads(buffer, copy, product))
    return nullptr;
  Value source = rootOf(copy.getDpsInputOperand(0)->get());
  for (Operation *op = copy->getNextNode(); op != product.getOperation();
       op = op->getNextNode())
    if (mayWrite(op, source))
      return nullptr;
  for (OpOperand &init : product.getDpsInitsMutable())
    if (mayAlias(rootOf(init.get()), source))
      return nullptr;
  return copy;
}

/// A product that multiplies two inputs into one init: a contraction.
static bool isProduct(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2 &&
         op.getNumDpsInits() == 1 && linalg::isaContractionOpInterface(op);
}

namespace {
struct KilnFoldTransposesIntoMatmulsPass
    : kiln::impl::KilnFoldTransposesIntoMatmulsBase<
          KilnFoldTransposesIntoMatmulsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isProduct(op))
        products.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp product : products) {
      linalg::LinalgOp copies[2];
      bool any = false;
      for (unsigned i = 0; i < 2; ++i) {
        copies[i] =
            foldableCopyInto(product.getDpsInputOperand(i)->get(), product);
        any |= static_cast<bool>(copies[i]);
      }
      if (!any)
        continue;
      // Both inputs the same copied buffer (A^T * A^T): fold it once.
      if (copies[0] && copies[0] == copies[1])
        copies[1] = nullptr;

      rewriter.setInsertionPoint(product);
      linalg::GenericOp generic;
      if (auto alreadyGeneric = dyn_cast<linalg::GenericOp>(*product)) {
        generic = alreadyGeneric;
      } else {
        FailureOr<linalg::GenericOp> generalized = linalg::generalizeNamedOp(
            rewriter, cast<linalg::LinalgOp>(*product));
        if (failed(generalized))
          continue;
        generic = *generalized;
      }
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      for (unsigned i = 0; i < 2; ++i) {
        linalg::LinalgOp copy = copies[i];
        if (!copy)
          continue;
        Value buffer = generic.getDpsInputOperand(i)->get();
        Value source = copy.getDpsInputOperand(0)->get();
        // The copy wrote buffer[out(l)] = source[in(l)], so the product's
        // index t = map(d) reads source[in(out^-1(t))]. Both inputs may
        // read the same copy (A^T * A^T).
        AffineMap in = copy.getIndexingMapsArray()[0];
        AffineMap out = copy.getIndexingMapsArray()[1];
        for (unsigned j = 0; j < 2; ++j) {
          OpOperand *operand = generic.getDpsInputOperand(j);
          if (operand->get() != buffer)
            continue;
          maps[j] = in.compose(inversePermutation(out).compose(maps[j]));
          operand->set(source);
        }
        rewriter.eraseOp(copy);
        // The buffer goes when nothing but its deallocation is left.
        auto allocation = buffer.getDefiningOp<memref::AllocOp>();
        if (allocation &&
            llvm::all_of(allocation->getUsers(), [](Operation *user) {
              return isa<memref::DeallocOp>(user);
            })) {
          for (Operation *user :
               llvm::make_early_inc_range(allocation->getUsers()))
            rewriter.eraseOp(user);
          rewriter.eraseOp(allocation);
        }
      }
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    }
  }
};
} // namespace
