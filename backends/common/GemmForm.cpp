//===- GemmForm.cpp - Contractions that a GEMM library can run ------------===//

#include "common/GemmForm.h"

#include "common/BufferAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// For a statically shaped memref of rank 2 or more whose last two dims form
/// a matrix a GEMM can read, the dim whose stride is its leading dimension:
/// rank-2 for row-major storage (last stride 1), rank-1 for column-major
/// storage (stride 1 in dim rank-2: a transposed view, which a GEMM reads
/// with its transpose flag). The leading dimension must cover a contiguous
/// row where it is known statically.
static std::optional<unsigned> leadingDimOf(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() < 2 || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return std::nullopt;
  unsigned rank = type.getRank();
  auto covers = [&](unsigned leading, unsigned contiguous) {
    return ShapedType::isDynamic(strides[leading]) ||
           strides[leading] >= std::max<int64_t>(1, type.getDimSize(contiguous));
  };
  if (strides[rank - 1] == 1 && covers(rank - 2, rank - 1))
    return rank - 2;
  if (strides[rank - 2] == 1 && covers(rank - 1, rank - 2))
    return rank - 1;
  return std::nullopt;
}

/// Whether `map` yields exactly `dims` (loop dims), in order.
static bool yieldsDims(AffineMap map, ArrayRef<unsigned> dims) {
  if (map.getNumResults() != dims.size())
    return false;
  for (auto [result, dim] : llvm::zip(map.getResults(), dims)) {
    auto expr = dyn_cast<AffineDimExpr>(result);
    if (!expr || expr.getPosition() != dim)
      return false;
  }
  return true;
}

/// Whether the body of the contraction `op` widens its input `i` unsigned
/// (true) or signed (false) before it multiplies, or nullopt where the
/// input's only use is no such widening.
static std::optional<bool> widensUnsigned(linalg::LinalgOp op, unsigned i) {
  BlockArgument arg = op.getBlock()->getArgument(i);
  if (!arg.hasOneUse())
    return std::nullopt;
  Operation *user = *arg.getUsers().begin();
  if (isa<arith::ExtUIOp>(user))
    return true;
  if (isa<arith::ExtSIOp>(user))
    return false;
  return std::nullopt;
}

std::optional<kiln::GemmForm> kiln::gemmFormOf(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() > 1 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  SmallVector<unsigned> prefix(dims->batch.begin(), dims->batch.end());
  unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
  auto with = [&](unsigned first, unsigned second) {
    SmallVector<unsigned> result = prefix;
    result.push_back(first);
    result.push_back(second);
    return result;
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  GemmForm form;
  if (!yieldsDims(maps[2], with(m, n)))
    return std::nullopt;
  if (yieldsDims(maps[0], with(k, m)))
    form.transposeA = true;
  else if (!yieldsDims(maps[0], with(m, k)))
    return std::nullopt;
  if (yieldsDims(maps[1], with(n, k)))
    form.transposeB = true;
  else if (!yieldsDims(maps[1], with(k, n)))
    return std::nullopt;
  // A column-major operand is the row-major storage of its transpose; C
  // must be row-major.
  for (unsigned i = 0; i < 3; ++i) {
    std::optional<unsigned> leading = leadingDimOf(op->getOperand(i));
    if (!leading)
      return std::nullopt;
    form.leadingDims[i] = *leading;
    bool columnMajor = *leading == prefix.size() + 1;
    if (columnMajor && i == 2)
      return std::nullopt;
    if (columnMajor)
      (i == 0 ? form.transposeA : form.transposeB) ^= true;
  }
  auto elementOf = [&](unsigned i) {
    return cast<MemRefType>(op->getOperand(i).getType()).getElementType();
  };
  if (elementOf(0) != elementOf(1))
    return std::nullopt;
  form.abType = elementOf(0);
  form.cType = elementOf(2);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (isa<IntegerType>(form.abType) && isa<IntegerType>(form.cType) &&
      form.abType.getIntOrFloatBitWidth() <
          form.cType.getIntOrFloatBitWidth()) {
    std::optional<bool> a = widensUnsigned(op, 0), b = widensUnsigned(op, 1);
    if (!a || !b)
      return std::nullopt;
    form.unsignedA = *a;
    form.unsignedB = *b;
  }
  form.batched = !prefix.empty();
  if (form.batched)
    form.batch = ranges[prefix[0]];
  form.m = ranges[m];
  form.n = ranges[n];
  form.k = ranges[k];
  return form;
}

linalg::FillOp kiln::zeroFillBefore(Operation *op, Value init) {
  Value root = rootOf(init);
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInitOperand(0)->get() == init) {
      Attribute value;
      if (!matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant(&value)))
        return nullptr;
      if (auto integer = dyn_cast<IntegerAttr>(value))
        return integer.getValue().isZero() ? fill : nullptr;
      auto real = dyn_cast<FloatAttr>(value);
      return real && real.getValue().isPosZero() ? fill : nullptr;
    }
    // Dropping the fill is safe only if nothing between it and the product
    // reads or writes what the product writes.
    if (mayAccess(prev, root))
      return nullptr;
  }
  return nullptr;
}

bool kiln::yieldsSumOfArguments(linalg::GenericOp generic) {
  auto add = yieldedFirstOp<arith::AddFOp>(generic);
  Block &body = generic.getRegion().front();
  if (!add || add->getNextNode() != body.getTerminator())
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (add.getLhs() == x && add.getRhs() == y) ||
         (add.getLhs() == y && add.getRhs() == x);
}

std::optional<kiln::BiasAddition>
kiln::biasAdditionAfter(linalg::LinalgOp product, const GemmForm &form,
                        linalg::FillOp zeroFill) {
  if (!zeroFill || !form.cType.isF32())
    return std::nullopt;
  unsigned rank = form.batched ? 3 : 2;
  Value c = product.getDpsInitOperand(0)->get();
  auto cType = cast<MemRefType>(c.getType());
  SmallVector<int64_t> shape{form.m, form.n};
  if (form.batched)
    shape.insert(shape.begin(), form.batch);
  if (cType.getShape() != ArrayRef<int64_t>(shape))
    return std::nullopt;
  Value cRoot = rootOf(c);
  Operation *next = product->getNextNode();
  while (next && !mayAccess(next, cRoot))
    next = next->getNextNode();
  auto addition = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!addition || !addition.hasPureBufferSemantics() ||
      addition.getNumDpsInputs() != 2 || addition.getNumDpsInits() != 1 ||
      addition.getDpsInitOperand(0)->get() != c ||
      addition.getNumLoops() != rank ||
      addition.getNumParallelLoops() != rank)
    return std::nullopt;
  // C is either input, the bias the other.
  unsigned cInput = addition.getDpsInputOperand(0)->get() == c ? 0 : 1;
  if (addition.getDpsInputOperand(cInput)->get() != c)
    return std::nullopt;
  MLIRContext *context = product->getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  AffineMap column =
      AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context));
  SmallVector<AffineMap> maps = addition.getIndexingMapsArray();
  if (maps[cInput] != identity || maps[1 - cInput] != column ||
      maps[2] != identity)
    return std::nullopt;
  Value bias = addition.getDpsInputOperand(1 - cInput)->get();
  auto biasType = cast<MemRefType>(bias.getType());
  int64_t offset;
  SmallVector<int64_t> strides;
  if (biasType.getRank() != 1 || biasType.getShape()[0] != form.n ||
      !biasType.getElementType().isF32() ||
      failed(getStridesAndOffset(biasType, strides, offset)) ||
      strides[0] != 1)
    return std::nullopt;
  // The body is `yield addf(c, bias)` (either order) and nothing else.
  if (!yieldsSumOfArguments(addition))
    return std::nullopt;
  // The library reads the bias while it writes C: it may be no view of C,
  // and nothing in between may write it.
  Value biasRoot = rootOf(bias);
  if (mayAlias(biasRoot, cRoot) || touchedBetween(product, addition, biasRoot))
    return std::nullopt;
  return BiasAddition{addition, bias};
}
