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
// The same holds for a result: a product that writes a fresh allocation
// (zero-filled just before it) which a permuting copy after it copies whole
// into another buffer (dW = (X^T dY)^T for a weight stored [out, in], as
// PyTorch and ONNX store it) writes that buffer directly: its output map is
// composed with the copy's permutation, its inputs are swapped when that
// puts the target's rows over the second input's dimensions (so that it
// keeps a GEMM form), the fill moves to the target, and the copy and the
// allocation are erased, when nothing between the product and the copy
// touches the target and no input aliases it.
//
// kiln-cpu-matmul-to-dnnl later turns such a generic into an sgemm call with
// the transpose flags its maps call for (below its size threshold it stays
// a loop nest that indexes the source in place), and
// kiln-cuda-library-matmul into a cuBLASLt product with those flags.
//
//===----------------------------------------------------------------------===//

#include "common/BufferAccess.h"
#include "common/GemmForm.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
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
      op.getNumDpsInits() != 1 || op.getNumLoops() != op.getNumParallelLoops())
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

/// A product's result that is only read permuted: the product's init C is
/// an allocation that nothing but a fill before the product, the product,
/// one permuting copy of all of C after it, in the same block, and
/// deallocations use. The product can write the copy's target itself, the
/// fill moved to the target, when nothing between the product and the copy
/// touches the target and the product reads no view of it.
struct PermutedResult {
  linalg::FillOp fill;
  linalg::LinalgOp copy;
};

static std::optional<PermutedResult>
permutedResultOf(linalg::LinalgOp product) {
  Value c = product.getDpsInitOperand(0)->get();
  if (!c.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  PermutedResult result;
  for (Operation *user : c.getUsers()) {
    if (user == product.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    auto fill = dyn_cast<linalg::FillOp>(user);
    if (fill && !result.fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInitOperand(0)->get() == c &&
        fill->getBlock() == product->getBlock() &&
        fill->isBeforeInBlock(product)) {
      result.fill = fill;
      continue;
    }
    auto copy = dyn_cast<linalg::LinalgOp>(user);
    if (!copy || result.copy || !isPermutingCopy(copy) ||
        copy.getDpsInputOperand(0)->get() != c ||
        copy->getBlock() != product->getBlock() ||
        !product->isBeforeInBlock(copy))
      return std::nullopt;
    result.copy = copy;
  }
  if (!result.fill || !result.copy)
    return std::nullopt;
  // The product writes the target where it is: the target must exist
  // there, or be a fresh allocation that can move up to it.
  Value written = result.copy.getDpsInitOperand(0)->get();
  auto allocation = written.getDefiningOp<memref::AllocOp>();
  if (!definedBefore(written, product) &&
      !(allocation && allocation->getNumOperands() == 0 &&
        allocation->getBlock() == product->getBlock()))
    return std::nullopt;
  Value target = rootOf(written);
  for (OpOperand *input : product.getDpsInputOperands())
    if (mayAlias(rootOf(input->get()), target))
      return std::nullopt;
  if (touchedBetween(product, result.copy, target))
    return std::nullopt;
  return result;
}

/// `product` as a linalg.generic (named products are generalized).
static linalg::GenericOp asGeneric(IRRewriter &rewriter,
                                   linalg::LinalgOp product) {
  if (auto generic = dyn_cast<linalg::GenericOp>(*product))
    return generic;
  rewriter.setInsertionPoint(product);
  FailureOr<linalg::GenericOp> generalized =
      linalg::generalizeNamedOp(rewriter, product);
  return succeeded(generalized) ? *generalized : nullptr;
}

/// Makes `product` write `result.copy`'s target directly. The index C[t]
/// the product writes is target[out(in^-1(t))] for the copy's maps. Where
/// the target's rows then run over the second input's dims (C^T = B^T
/// A^T), the inputs are swapped, the body reading each as before, so
/// that the product is again A * B with A's dims along the rows, the form
/// the GEMM libraries take. Nothing is changed when the product had a GEMM
/// form and the rewritten one would not.
static void writePermutedResult(IRRewriter &rewriter, linalg::LinalgOp product,
                                PermutedResult result) {
  Value target = result.copy.getDpsInitOperand(0)->get();
  SmallVector<AffineMap> maps = product.getIndexingMapsArray();
  AffineMap in = result.copy.getIndexingMapsArray()[0];
  AffineMap out = result.copy.getIndexingMapsArray()[1];
  maps[2] = out.compose(inversePermutation(in).compose(maps[2]));
  unsigned rank = maps[2].getNumResults();
  bool swap = rank >= 2 &&
              !maps[0].isFunctionOfDim(maps[2].getDimPosition(rank - 2)) &&
              maps[1].isFunctionOfDim(maps[2].getDimPosition(rank - 2));
  if (swap)
    std::swap(maps[0], maps[1]);
  Value first = product.getDpsInputOperand(swap ? 1 : 0)->get();
  Value second = product.getDpsInputOperand(swap ? 0 : 1)->get();

  if (!definedBefore(target, product))
    rewriter.moveOpBefore(target.getDefiningOp(), product);
  rewriter.setInsertionPoint(product);
  auto rewritten = rewriter.create<linalg::GenericOp>(
      product.getLoc(), TypeRange(), ValueRange{first, second},
      ValueRange{target}, maps, product.getIteratorTypesArray());
  // The body, cloned with the input arguments in their new order.
  Block &body = *product.getBlock();
  Block *cloned = rewriter.createBlock(
      &rewritten.getRegion(), {},
      {body.getArgument(swap ? 1 : 0).getType(),
       body.getArgument(swap ? 0 : 1).getType(), body.getArgument(2).getType()},
      {product.getLoc(), product.getLoc(), product.getLoc()});
  IRMapping mapping;
  mapping.map(body.getArgument(0), cloned->getArgument(swap ? 1 : 0));
  mapping.map(body.getArgument(1), cloned->getArgument(swap ? 0 : 1));
  mapping.map(body.getArgument(2), cloned->getArgument(2));
  for (Operation &op : body)
    rewriter.clone(op, mapping);
  if (gemmFormOf(product) && !gemmFormOf(rewritten)) {
    rewriter.eraseOp(rewritten);
    return;
  }
  // The fill moves to the target, right before the product.
  rewriter.setInsertionPoint(rewritten);
  rewriter.create<linalg::FillOp>(
      result.fill.getLoc(), result.fill.getDpsInputOperand(0)->get(), target);
  Operation *allocation = product.getDpsInitOperand(0)->get().getDefiningOp();
  rewriter.eraseOp(result.copy);
  rewriter.eraseOp(product);
  rewriter.eraseOp(result.fill);
  for (Operation *user : llvm::make_early_inc_range(allocation->getUsers()))
    rewriter.eraseOp(user);
  rewriter.eraseOp(allocation);
}

/// Makes `product` read the sources of the permuting copies that wrote its
/// inputs, where that is safe, and returns it (a linalg.generic if it
/// changed).
static linalg::LinalgOp foldInputCopies(IRRewriter &rewriter,
                                        linalg::LinalgOp product) {
  linalg::LinalgOp copies[2];
  bool any = false;
  for (unsigned i = 0; i < 2; ++i) {
    copies[i] = foldableCopyInto(product.getDpsInputOperand(i)->get(), product);
    any |= static_cast<bool>(copies[i]);
  }
  if (!any)
    return product;
  // Both inputs the same copied buffer (A^T * A^T): fold it once.
  if (copies[0] && copies[0] == copies[1])
    copies[1] = nullptr;

  linalg::GenericOp generic = asGeneric(rewriter, product);
  if (!generic)
    return product;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  for (unsigned i = 0; i < 2; ++i) {
    linalg::LinalgOp copy = copies[i];
    if (!copy)
      continue;
    Value buffer = generic.getDpsInputOperand(i)->get();
    Value source = copy.getDpsInputOperand(0)->get();
    // The copy wrote buffer[out(l)] = source[in(l)], so the product's
    // index t = map(d) reads source[in(out^-1(t))]. Both inputs may read
    // the same copy (A^T * A^T).
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
    if (allocation && llvm::all_of(allocation->getUsers(), [](Operation *user) {
          return isa<memref::DeallocOp>(user);
        })) {
      for (Operation *user : llvm::make_early_inc_range(allocation->getUsers()))
        rewriter.eraseOp(user);
      rewriter.eraseOp(allocation);
    }
  }
  generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  return generic;
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
    // Inputs first: a transpose of one product's result that another
    // reads is better read in place by the consumer (a transpose flag)
    // than written transposed by the producer.
    for (linalg::LinalgOp &product : products)
      product = foldInputCopies(rewriter, product);
    for (linalg::LinalgOp product : products)
      if (std::optional<PermutedResult> result = permutedResultOf(product))
        writePermutedResult(rewriter, product, *result);
  }
};
} // namespace
