//===- FuseAttention.cpp - softmax(q k^T * scale + mask) v as one op ------===//
//
// Attention written out (by a front end, a model exporter or by hand) is a
// product, a softmax over its rows and a second product; compiled as such
// it materializes the Nq x Nk scores per head. This pass finds that chain
// and replaces it by kiln.attention, which a backend computes without them
// (FlashAttention) and differentiates from the saved lse. It matches, from
// the final product back:
//
//   p  = e / broadcast(reduce_sum(e, last))       the softmax, with
//   e  = exp(x - broadcast(reduce_max(x, last)))  its maximum subtracted
//   x  = s [+ mask]                               an optional additive mask
//   s  = qk [* c | / c]                           an optional splat scale
//   qk = matmul(q, transpose(k))                  rank 2 or 3
//   out = matmul(p, v)
//
// where every intermediate has no other user (a softmax that is also
// returned stays as it is). A mask that is a broadcast is used
// unbroadcast (reshaped to the scores' rank, kiln.attention broadcasts
// size-1 dims itself); a constant mask that is exactly 0 on and
// below the diagonal and -inf above becomes the `causal` flag, whose fully
// masked key tiles the fused kernel skips.
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_FUSEATTENTION
#include "kiln/Fusion/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// What one match found.
struct Match {
  MatmulOp output;
  Value query, key, value, mask;
  /// A mask broadcast to the scores' shape, whose source is used instead.
  BroadcastInDimOp broadcastMask;
  double scale = 1.0;
  bool causal = false;
  /// The ops replaced, to erase after the new op takes their place.
  SmallVector<Operation *> dead;
};

/// `value`'s defining op of type OpTy, if `value` has exactly one use.
template <typename OpTy>
OpTy soleDef(Value value) {
  if (!value || !value.hasOneUse())
    return nullptr;
  return value.getDefiningOp<OpTy>();
}

/// Whether `op` reduces its rank-r operand over its last dim only.
template <typename OpTy>
bool reducesLastDim(OpTy op) {
  auto type = cast<RankedTensorType>(op.getOperand().getType());
  ArrayRef<int64_t> dims = op.getDims();
  return dims.size() == 1 && dims[0] == type.getRank() - 1;
}

/// Whether `broadcast` spreads its operand along the last dim of its
/// result, keeping the others in place.
bool broadcastsOverLastDim(BroadcastInDimOp broadcast) {
  auto result = cast<RankedTensorType>(broadcast.getType());
  ArrayRef<int64_t> dims = broadcast.getDims();
  if (static_cast<int64_t>(dims.size()) != result.getRank() - 1)
    return false;
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

/// The splat float of a constant, possibly broadcast.
std::optional<double> splatValue(Value value) {
  if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>())
    value = broadcast.getOperand();
  DenseElementsAttr dense;
  if (!matchPattern(value, m_Constant(&dense)) || !dense.isSplat() ||
      !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// Whether `mask` is a constant that is 0 for j <= i and -inf for j > i
/// in each [Nq, Nk] matrix (broadcast or not over the leading dims).
bool isCausalMask(Value mask) {
  DenseElementsAttr dense;
  if (!matchPattern(mask, m_Constant(&dense)) ||
      !isa<FloatType>(dense.getElementType()) || dense.isSplat())
    return false;
  auto type = cast<RankedTensorType>(dense.getType());
  int64_t rank = type.getRank();
  int64_t rows = type.getDimSize(rank - 2), columns = type.getDimSize(rank - 1);
  int64_t index = 0;
  for (APFloat x : dense.getValues<APFloat>()) {
    int64_t i = (index / columns) % rows, j = index % columns;
    ++index;
    if (j > i ? !(x.isInfinity() && x.isNegative()) : !x.isZero())
      return false;
  }
  return true;
}

/// Matches the chain that ends in `output`.
std::optional<Match> matchAttention(MatmulOp output) {
  Match match;
  match.output = output;
  if (output.getResultElementTypeAttr())
    return std::nullopt;
  auto p = soleDef<DivOp>(output.getLhs());
  if (!p)
    return std::nullopt;
  Value e = p.getLhs();
  auto sumBroadcast = soleDef<BroadcastInDimOp>(p.getRhs());
  if (!sumBroadcast || !broadcastsOverLastDim(sumBroadcast))
    return std::nullopt;
  auto sum = soleDef<ReduceSumOp>(sumBroadcast.getOperand());
  if (!sum || sum.getOperand() != e || !reducesLastDim(sum))
    return std::nullopt;
  // e feeds the sum and the division, nothing else.
  if (!llvm::all_of(e.getUsers(), [&](Operation *user) {
        return user == p.getOperation() || user == sum.getOperation();
      }))
    return std::nullopt;
  auto exp = e.getDefiningOp<ExpOp>();
  if (!exp)
    return std::nullopt;
  auto shifted = soleDef<SubOp>(exp.getOperand());
  if (!shifted)
    return std::nullopt;
  Value x = shifted.getLhs();
  auto maxBroadcast = soleDef<BroadcastInDimOp>(shifted.getRhs());
  if (!maxBroadcast || !broadcastsOverLastDim(maxBroadcast))
    return std::nullopt;
  auto max = soleDef<ReduceMaxOp>(maxBroadcast.getOperand());
  if (!max || max.getOperand() != x || !reducesLastDim(max))
    return std::nullopt;
  if (!llvm::all_of(x.getUsers(), [&](Operation *user) {
        return user == shifted.getOperation() || user == max.getOperation();
      }))
    return std::nullopt;
  match.dead = {output, p, sumBroadcast, sum, exp, shifted, maxBroadcast, max};

  // x = s + mask, either operand order; the product side is the one that
  // leads to a matmul through an optional scaling.
  Value s = x;
  auto productOf = [](Value v) -> bool {
    if (auto mul = v.getDefiningOp<MulOp>())
      v = splatValue(mul.getRhs()) ? mul.getLhs() : mul.getRhs();
    else if (auto div = v.getDefiningOp<DivOp>())
      v = div.getLhs();
    return v.getDefiningOp<MatmulOp>() != nullptr;
  };
  if (auto add = x.getDefiningOp<AddOp>()) {
    Value lhs = add.getLhs(), rhs = add.getRhs();
    if (productOf(lhs) && lhs.hasOneUse()) {
      s = lhs;
      match.mask = rhs;
    } else if (productOf(rhs) && rhs.hasOneUse()) {
      s = rhs;
      match.mask = lhs;
    } else {
      return std::nullopt;
    }
    match.dead.push_back(add);
  }
  Value qk = s;
  if (auto mul = s.getDefiningOp<MulOp>()) {
    std::optional<double> c = splatValue(mul.getRhs());
    Value other = mul.getLhs();
    if (!c) {
      c = splatValue(mul.getLhs());
      other = mul.getRhs();
    }
    if (!c || !other.hasOneUse())
      return std::nullopt;
    match.scale = *c;
    qk = other;
    match.dead.push_back(mul);
  } else if (auto div = s.getDefiningOp<DivOp>()) {
    std::optional<double> c = splatValue(div.getRhs());
    if (!c || *c == 0.0 || !div.getLhs().hasOneUse())
      return std::nullopt;
    match.scale = 1.0 / *c;
    qk = div.getLhs();
    match.dead.push_back(div);
  }
  // (Each value stepped over had its uses checked on the way.)
  auto product = qk.getDefiningOp<MatmulOp>();
  if (!product || product.getResultElementTypeAttr())
    return std::nullopt;
  auto transpose = product.getRhs().getDefiningOp<TransposeOp>();
  if (!transpose)
    return std::nullopt;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t rank = permutation.size();
  bool swapsLastTwo = true;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t expected = d < rank - 2 ? d : (d == rank - 2 ? rank - 1 : rank - 2);
    swapsLastTwo &= permutation[d] == expected;
  }
  if (!swapsLastTwo)
    return std::nullopt;
  match.query = product.getLhs();
  match.key = transpose.getOperand();
  match.value = output.getRhs();
  match.dead.push_back(product);
  if (transpose->hasOneUse())
    match.dead.push_back(transpose);

  Type element = cast<RankedTensorType>(match.query.getType()).getElementType();
  if (!isa<FloatType>(element))
    return std::nullopt;
  if (match.mask) {
    if (isCausalMask(match.mask)) {
      match.causal = true;
      match.mask = nullptr;
    } else if (auto broadcast =
                   match.mask.getDefiningOp<BroadcastInDimOp>()) {
      // kiln.attention broadcasts size-1 dims itself: the broadcast's
      // source, with size-1 dims where the broadcast added dims, saves
      // materializing the mask per head.
      match.broadcastMask = broadcast;
    }
    if (match.mask &&
        cast<RankedTensorType>(match.mask.getType()).getElementType() !=
            element)
      return std::nullopt;
  }
  return match;
}

struct FuseAttentionPass
    : mlir::kiln::impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    SmallVector<MatmulOp> candidates;
    getOperation()->walk([&](MatmulOp op) { candidates.push_back(op); });
    OpBuilder builder(&getContext());
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (MatmulOp output : candidates) {
      if (erased.contains(output))
        continue;
      std::optional<Match> match = matchAttention(output);
      if (!match)
        continue;
      // The operands must be defined before the output product, which the
      // new op replaces in place.
      builder.setInsertionPoint(output);
      if (BroadcastInDimOp broadcast = match->broadcastMask) {
        auto source = cast<RankedTensorType>(broadcast.getOperand().getType());
        auto result = cast<RankedTensorType>(broadcast.getType());
        SmallVector<int64_t> shape(result.getRank(), 1);
        for (auto [i, d] : llvm::enumerate(broadcast.getDims()))
          shape[d] = source.getDimSize(i);
        match->mask = builder.create<ReshapeOp>(
            broadcast.getLoc(), result.clone(shape), broadcast.getOperand());
        if (broadcast->hasOneUse())
          match->dead.push_back(broadcast);
      }
      auto attention = builder.create<AttentionOp>(
          output.getLoc(), match->query, match->key, match->value,
          match->mask, builder.getF64FloatAttr(match->scale),
          match->causal ? builder.getUnitAttr() : UnitAttr());
      output.getResult().replaceAllUsesWith(attention.getResult());
      // The replaced ops, then the constants (scale, causal mask) only
      // they used.
      SetVector<Operation *> constants;
      for (Operation *op : match->dead) {
        if (!op->use_empty())
          continue;
        for (Value operand : op->getOperands())
          if (auto constant = operand.getDefiningOp<ConstantOp>())
            constants.insert(constant);
        erased.insert(op);
        op->erase();
      }
      for (Operation *constant : constants)
        if (constant->use_empty())
          constant->erase();
      ++numFused;
    }
  }
};

} // namespace
