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
//   qk = matmul(q [* c], transpose(k) [* c])      rank 2 or 3
//   out = matmul(p, v)
//
// where every intermediate has no other user (a softmax that is also
// returned stays as it is). It also takes attention the way PyTorch's ONNX
// exporters write it: heads at rank 4 (or more) as batched products of
// rank 3 between reshapes that merge the leading dims and split them
// again, k^T a transpose of [B, Nk, H, D] straight to [B, H, D, Nk] (the
// key gets the transpose to [B, H, Nk, D] instead) or of [Nk, B * H, D]
// to [B * H, D, Nk] (torch.nn.MultiheadAttention's), q, k and v merged
// from other leading dims ([1, B, H, N, D] slices of a stacked q, k, v;
// keys and values whose heads were repeated for grouped-query attention,
// [B, Hkv, G, N, D]) or never split (all reshaped into the query's
// heads), the mask added at rank 3 before the split into heads (an
// all-zero one dropped), and `where(isnan(p), 0, p)` after the softmax. With a
// finite mask (none, or one like `where(keep, 0, -FLT_MAX)`) that guard acts
// only on rows with non-finite scores, which only non-finite queries or keys
// make, and there kiln.attention gives NaN as PyTorch's attention does; with a
// mask that may hold -inf (the TorchScript exporter's), the rows that it masks
// out entirely are zeroed after the op, as the guard zeroes them. Likewise a
// select that zeroes whole rows of p by a flag that does not vary along
// the keys (ONNX's Attention-23 body for an attn_mask) zeroes those rows
// of the result after the op.
//
// A mask that is a broadcast is used unbroadcast (reshaped to the scores'
// rank, kiln.attention broadcasts size-1 dims itself); a constant mask
// that is exactly 0 on and below the diagonal and -inf (or the lowest
// float, as transformers writes it) above, broadcast over the heads or
// not, becomes the `causal` flag, whose fully masked key tiles the fused
// kernel skips.
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "SplatConstant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

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
  /// The value the attention's result replaces: the product's, or that of
  /// the reshape splitting its leading dims back into heads.
  Value result;
  Value query, key, value, mask;
  /// Where the key must be transposed first: to [L..., Nk, D] (the
  /// exporters' transpose of [B, Nk, H, D] straight to [B, H, D, Nk]), or
  /// at rank 3 to [prod(L), Nk, D] before `keyShape` splits it (the
  /// transpose of [Nk, B * H, D] straight to [B * H, D, Nk] that
  /// torch.nn.MultiheadAttention's export writes).
  SmallVector<int64_t> keyPermutation;
  /// Where the query, the key or the value must be reshaped into the
  /// heads [L..., N, D] first: a rank-3 [prod(L), N, D] (the merge of a
  /// key or value whose heads were repeated for grouped-query attention,
  /// [B, Hkv, G, N, D] merged to [B * Hkv * G, N, D], or heads that were
  /// never at rank 4), or heads with other leading dims of the same count
  /// (the [1, B, H, N, D] slices of a stacked q, k, v).
  SmallVector<int64_t> queryShape, keyShape, valueShape;
  /// Where the mask was added to the scores at rank 3, before the split
  /// into heads: the heads' shape [L..., Nq, Nk] it is reshaped to.
  SmallVector<int64_t> maskShape;
  /// A mask broadcast to the scores' shape, whose source is used instead.
  BroadcastInDimOp broadcastMask;
  double scale = 1.0;
  bool causal = false;
  /// The rows whose mask alone makes the softmax NaN, which an exporter's
  /// NaN guard turns into zeros, are zeroed in the result.
  bool zeroMaskedRows = false;
  /// A flag per row (broadcast over the keys) whose rows of p were zeroed:
  /// the same rows of the result are.
  BroadcastInDimOp zeroRows;
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
/// in each [Nq, Nk] matrix (broadcast or not over the leading dims), or
/// the lowest finite value for j > i, as transformers and the dynamo
/// exporter write causal masks: every row keeps its diagonal, so exp of
/// a masked score is 0 either way (unless the score itself is +inf or
/// NaN, which the causal flag's skipped entries then no longer spread).
bool isCausalMask(Value mask) {
  // A broadcast over the leading dims of such a constant is one too.
  if (auto broadcast = mask.getDefiningOp<BroadcastInDimOp>()) {
    auto source = cast<RankedTensorType>(broadcast.getOperand().getType());
    auto result = cast<RankedTensorType>(broadcast.getType());
    ArrayRef<int64_t> dims = broadcast.getDims();
    int64_t rank = result.getRank();
    if (source.getRank() < 2 || dims[dims.size() - 1] != rank - 1 ||
        dims[dims.size() - 2] != rank - 2 ||
        source.getShape().take_back(2) != result.getShape().take_back(2))
      return false;
    mask = broadcast.getOperand();
  }
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
    bool masked =
        x.isNegative() &&
        (x.isInfinity() ||
         x == APFloat::getLargest(x.getSemantics(), /*Negative=*/true));
    if (j > i ? !masked : !x.isZero())
      return false;
  }
  return true;
}

/// The leading dims that a reshape of a rank-3 value splits its first dim
/// into, the last two kept: [B, a, b] -> [L..., a, b] with prod(L) = B and
/// at least two of them (the batched product of heads written at rank 4 as
/// exporters do it). Empty when `reshape` is not such a split.
SmallVector<int64_t> splitLeadingDims(ReshapeOp reshape) {
  auto from = cast<RankedTensorType>(reshape.getOperand().getType());
  auto to = cast<RankedTensorType>(reshape.getType());
  if (from.getRank() != 3 || to.getRank() < 4 ||
      from.getShape().take_back(2) != to.getShape().take_back(2))
    return {};
  ArrayRef<int64_t> lead = to.getShape().drop_back(2);
  if (ShapedType::getNumElements(lead) != from.getDimSize(0))
    return {};
  return SmallVector<int64_t>(lead);
}

/// `value` before a reshape that merged its leading dims `lead` into one
/// ([L..., a, b] -> [prod(L), a, b]), or null.
Value mergedFrom(Value value, ArrayRef<int64_t> lead, Match &match) {
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return nullptr;
  auto from = cast<RankedTensorType>(reshape.getOperand().getType());
  auto to = cast<RankedTensorType>(value.getType());
  if (from.getRank() != static_cast<int64_t>(lead.size()) + 2 ||
      from.getShape().drop_back(2) != lead ||
      from.getShape().take_back(2) != to.getShape().take_back(2))
    return nullptr;
  if (value.hasOneUse())
    match.dead.push_back(reshape);
  return reshape.getOperand();
}

/// The heads' shape [L..., a, b].
SmallVector<int64_t> headsShape(ArrayRef<int64_t> lead, int64_t a, int64_t b) {
  SmallVector<int64_t> shape(lead);
  shape.append({a, b});
  return shape;
}

/// `value` (rank 3, [prod(L), a, b]) as the heads [L..., a, b]: before the
/// reshape that merged them. Where that reshape merged other leading dims
/// of the same count (the [1, B, H, N, D] slice of a stacked q, k, v, or
/// the [B, Hkv, G, N, D] of a key or value whose heads were repeated for
/// grouped-query attention), its source, and where there is none, `value`
/// itself; either with `shape` set to the heads' shape, for a reshape of
/// its own. Null when the first dim is not prod(L).
Value headsOf(Value value, ArrayRef<int64_t> lead, Match &match,
              SmallVector<int64_t> &shape) {
  if (Value merged = mergedFrom(value, lead, match))
    return merged;
  auto type = cast<RankedTensorType>(value.getType());
  int64_t count = ShapedType::getNumElements(lead);
  if (type.getRank() != 3 || type.getDimSize(0) != count)
    return nullptr;
  if (auto merge = value.getDefiningOp<ReshapeOp>()) {
    auto from = cast<RankedTensorType>(merge.getOperand().getType());
    if (from.getRank() >= 3 &&
        from.getShape().take_back(2) == type.getShape().take_back(2) &&
        ShapedType::getNumElements(from.getShape().drop_back(2)) == count) {
      if (value.hasOneUse())
        match.dead.push_back(merge);
      value = merge.getOperand();
    }
  }
  shape = headsShape(lead, type.getDimSize(1), type.getDimSize(2));
  return value;
}

/// `value` with a multiplication by a splat constant looked through (the
/// constant folded into `scale`), where the product has no other user (or
/// the caller checked its users: the scores, read by the softmax's maximum
/// and subtraction where no mask is added).
Value unscaled(Value value, double &scale, Match &match,
               bool usersChecked = false) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul || !(usersChecked || value.hasOneUse()))
    return value;
  if (std::optional<double> c = splatValue(mul.getRhs())) {
    scale *= *c;
    match.dead.push_back(mul);
    return mul.getLhs();
  }
  if (std::optional<double> c = splatValue(mul.getLhs())) {
    scale *= *c;
    match.dead.push_back(mul);
    return mul.getRhs();
  }
  return value;
}

/// Whether every element of `value` is finite, as far as its definition
/// shows: finite constants, and broadcasts, reshapes and selects of them
/// (the additive mask `where(mask, 0, -FLT_MAX)` that exporters write).
bool provablyFinite(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<BroadcastInDimOp, ReshapeOp>(def))
    return provablyFinite(def->getOperand(0));
  if (auto select = dyn_cast<SelectOp>(def))
    return provablyFinite(select.getOnTrue()) &&
           provablyFinite(select.getOnFalse());
  DenseElementsAttr dense;
  if (!matchPattern(value, m_Constant(&dense)) ||
      !isa<FloatType>(dense.getElementType()))
    return false;
  if (dense.isSplat())
    return dense.getSplatValue<APFloat>().isFinite();
  return llvm::all_of(dense.getValues<APFloat>(),
                      [](const APFloat &x) { return x.isFinite(); });
}

/// `select`'s predicate where `select` is `flag ? 0 : p` with the flag a
/// broadcast that is the same along the last dim (keys): it zeroes whole
/// rows of p.
BroadcastInDimOp perRowFlag(SelectOp select) {
  auto flag = select.getPred().getDefiningOp<BroadcastInDimOp>();
  std::optional<double> zero = splatValue(select.getOnTrue());
  if (!flag || !zero || *zero != 0.0)
    return nullptr;
  auto source = cast<RankedTensorType>(flag.getOperand().getType());
  int64_t last = cast<RankedTensorType>(flag.getType()).getRank() - 1;
  for (auto [i, d] : llvm::enumerate(flag.getDims()))
    if (d == last && source.getDimSize(i) != 1)
      return nullptr;
  return flag;
}

/// Whether `select` is `p != p ? 0 : p`, softmax's NaN replaced by zero.
bool isNanToZero(SelectOp select, Value p) {
  auto nan = select.getPred().getDefiningOp<CompareOp>();
  std::optional<double> zero = splatValue(select.getOnTrue());
  return nan && nan.getDirection() == CompareDirection::ne &&
         nan.getLhs() == p && nan.getRhs() == p && zero && *zero == 0.0 &&
         select.getOnFalse() == p && nan->hasOneUse();
}

/// The product of the scores: `s` is matmul(q, transpose(k)), possibly
/// scaled by splat constants before (q * c, transpose(k) * c) or after
/// (* c, / c), and at rank 4 or more possibly written as a batched product
/// of rank 3 between reshapes that merge and split the leading dims.
/// Fills in the query, the key (its source and the permutation that
/// brings it to [L..., Nk, D]) and the scale. `split` holds the leading
/// dims where the caller took the split after the product already (with
/// the mask added before it).
bool matchScores(Value s, Match &match, ArrayRef<int64_t> split) {
  // A division or multiplication by a splat constant, where its operand
  // has no other user (`s` itself: the caller checked its users).
  auto descaled = [&](Value value) -> Value {
    if (auto div = value.getDefiningOp<DivOp>()) {
      std::optional<double> c = splatValue(div.getRhs());
      if (!c || *c == 0.0 || !div.getLhs().hasOneUse())
        return nullptr;
      match.scale /= *c;
      match.dead.push_back(div);
      return div.getLhs();
    }
    Value inner = unscaled(value, match.scale, match, /*usersChecked=*/true);
    if (inner != value && !inner.hasOneUse())
      return nullptr;
    return inner;
  };
  // The scale after a split of the leading dims after the product (at
  // the heads' rank, as JAX code writes `q @ k^T * c`), or before it.
  SmallVector<int64_t> lead(split);
  Value qk = s;
  if (lead.empty()) {
    if (!(qk = descaled(qk)))
      return false;
    if (auto split = qk.getDefiningOp<ReshapeOp>()) {
      lead = splitLeadingDims(split);
      if (lead.empty() || !split.getOperand().hasOneUse())
        return false;
      match.dead.push_back(split);
      qk = split.getOperand();
    }
  }
  if (!(qk = descaled(qk)))
    return false;
  auto product = qk.getDefiningOp<MatmulOp>();
  if (!product || product.getResultElementTypeAttr())
    return false;
  match.dead.push_back(product);
  // q, scaled or not, before and after a merge of the leading dims.
  Value query = unscaled(product.getLhs(), match.scale, match);
  if (!lead.empty() && !(query = headsOf(query, lead, match, match.queryShape)))
    return false;
  match.query = unscaled(query, match.scale, match);
  // k^T back to the key, through scalings and the reshapes between rank 3
  // and the heads' rank (each step takes one op off, in whichever order
  // the exporter and the canonicalizer left them): at rank 3 the transpose
  // of a merge of the key's heads [L..., Nk, D], which is the key as it
  // is; at the heads' rank a transpose of the key in any layout.
  Value keyT = product.getRhs();
  // The heads' leading dims: those split after the product, or a product
  // at the heads' rank's own.
  SmallVector<int64_t> heads(lead);
  auto productType = cast<RankedTensorType>(product.getType());
  if (heads.empty() && productType.getRank() >= 4)
    heads.assign(productType.getShape().drop_back(2).begin(),
                 productType.getShape().drop_back(2).end());
  for (int step = 0; step < 8; ++step) {
    keyT = unscaled(keyT, match.scale, match);
    int64_t rank = cast<RankedTensorType>(keyT.getType()).getRank();
    if (auto transpose = keyT.getDefiningOp<TransposeOp>()) {
      if (keyT.hasOneUse())
        match.dead.push_back(transpose);
      // The key: the transpose's source, transposed by the permutation
      // with its last two entries swapped (none if that is the identity,
      // the plain k^T).
      SmallVector<int64_t> permutation(transpose.getPermutation());
      std::swap(permutation[rank - 1], permutation[rank - 2]);
      bool plain = llvm::equal(permutation, llvm::seq<int64_t>(0, rank));
      if (!heads.empty() && rank == 3) {
        Value key = unscaled(transpose.getOperand(), match.scale, match);
        if (plain) {
          // A merge of the key's heads [L..., Nk, D], or of their count.
          if (!(key = headsOf(key, heads, match, match.keyShape)))
            return false;
          match.key = unscaled(key, match.scale, match);
          return true;
        }
        // [prod(L), Nk, D] once transposed (its first dim is k^T's),
        // split into the heads after.
        auto type = cast<RankedTensorType>(key.getType());
        match.key = key;
        match.keyPermutation = permutation;
        match.keyShape = headsShape(heads, type.getDimSize(permutation[1]),
                                    type.getDimSize(permutation[2]));
        return true;
      }
      // The key as [L..., Nk, D].
      match.key = transpose.getOperand();
      if (!plain)
        match.keyPermutation = permutation;
      return true;
    }
    auto reshape = keyT.getDefiningOp<ReshapeOp>();
    if (!reshape || heads.empty())
      return false;
    if (rank == 3) {
      if (!(keyT = mergedFrom(keyT, heads, match)))
        return false;
    } else {
      // At the heads' rank, a split of a rank-3 value into the same heads.
      if (!llvm::equal(splitLeadingDims(reshape), heads))
        return false;
      if (keyT.hasOneUse())
        match.dead.push_back(reshape);
      keyT = reshape.getOperand();
    }
  }
  return false;
}

/// Matches the chain that ends in `output`.
std::optional<Match> matchAttention(MatmulOp output) {
  Match match;
  match.output = output;
  match.result = output.getResult();
  if (output.getResultElementTypeAttr())
    return std::nullopt;
  match.dead.push_back(output);
  // Heads at rank 4 or more as a batched product of rank 3: the product's
  // operands merge the leading dims that its one reader splits again.
  Value probabilities = output.getLhs();
  match.value = output.getRhs();
  if (output->hasOneUse())
    if (auto split = dyn_cast<ReshapeOp>(*output->user_begin())) {
      SmallVector<int64_t> lead = splitLeadingDims(split);
      Value p, v;
      if (!lead.empty() && probabilities.hasOneUse() &&
          (p = mergedFrom(probabilities, lead, match)) &&
          (v = headsOf(match.value, lead, match, match.valueShape))) {
        match.result = split.getResult();
        match.dead.push_back(split);
        probabilities = p;
        match.value = v;
      }
    }
  // An exporter's `where(isnan(p), 0, p)` after the softmax (PyTorch
  // writes it for masks that could cover a whole row).
  // Or whole rows of p zeroed by a flag that does not vary along the keys
  // (ONNX's Attention-23 zeroes the rows its mask leaves empty so): the
  // same rows of the result are zeroed after the op.
  SelectOp nanToZero;
  if (auto select = soleDef<SelectOp>(probabilities)) {
    Value p = select.getOnFalse();
    if (isNanToZero(select, p)) {
      nanToZero = select;
      match.dead.push_back(select);
      match.dead.push_back(select.getPred().getDefiningOp());
    } else if (BroadcastInDimOp rows = perRowFlag(select)) {
      if (!p.hasOneUse())
        return std::nullopt;
      match.zeroRows = rows;
      match.dead.push_back(select);
      match.dead.push_back(rows);
    } else {
      return std::nullopt;
    }
    probabilities = p;
  }
  // p feeds the product, or the guard's comparison and selection.
  auto p = probabilities.getDefiningOp<DivOp>();
  if (!p || (!nanToZero && !p->hasOneUse()) ||
      !llvm::all_of(p->getUsers(), [&](Operation *user) {
        return !nanToZero || user == nanToZero.getOperation() ||
               user == nanToZero.getPred().getDefiningOp();
      }))
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
  match.dead.append({p, sumBroadcast, sum, exp, shifted, maxBroadcast, max});

  // x = s + mask, either operand order; the product side is the one that
  // leads to a matmul through optional reshapes and scalings. The mask
  // may have been added at rank 3, before the split into heads (as the
  // canonicalizer leaves an exported BERT's): the split is taken here.
  Value s = x;
  SmallVector<int64_t> lead;
  if (auto split = x.getDefiningOp<ReshapeOp>()) {
    Value sum = split.getOperand();
    if (sum.getDefiningOp<AddOp>() && sum.hasOneUse() &&
        !(lead = splitLeadingDims(split)).empty()) {
      match.dead.push_back(split);
      x = sum;
    }
  }
  auto productOf = [](Value v) -> bool {
    if (auto reshape = v.getDefiningOp<ReshapeOp>())
      v = reshape.getOperand();
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
    // An all-zero mask (attention_mask=None, exported) adds nothing.
    std::optional<double> c = splatValue(match.mask);
    if (c && *c == 0.0) {
      match.mask = nullptr;
    } else if (!lead.empty()) {
      auto type = cast<RankedTensorType>(match.mask.getType());
      match.maskShape =
          headsShape(lead, type.getDimSize(1), type.getDimSize(2));
    }
  } else if (!lead.empty()) {
    return std::nullopt;
  }
  // (Each value stepped over had its uses checked on the way.)
  if (!matchScores(s, match, lead))
    return std::nullopt;

  auto queryType = cast<RankedTensorType>(match.query.getType());
  if (!match.queryShape.empty())
    queryType = queryType.clone(match.queryShape);
  if (!isa<FloatType>(queryType.getElementType()))
    return std::nullopt;
  // The NaN guard changes only rows whose scores are not all finite. With
  // no mask or a finite one, such rows come only from non-finite queries
  // or keys, for which the fused op gives NaN as PyTorch's own attention
  // does. A mask that may hold -inf (or +inf, NaN) makes them by itself:
  // those rows of the result are zeroed after the op, as the guard zeroes
  // them before the product by v.
  match.zeroMaskedRows = nanToZero && match.mask && !provablyFinite(match.mask);
  if (match.mask) {
    if (isCausalMask(match.mask)) {
      if (auto broadcast = match.mask.getDefiningOp<BroadcastInDimOp>())
        match.dead.push_back(broadcast);
      match.causal = true;
      match.mask = nullptr;
    } else if (auto broadcast =
                   match.maskShape.empty()
                       ? match.mask.getDefiningOp<BroadcastInDimOp>()
                       : nullptr) {
      // kiln.attention broadcasts size-1 dims itself: the broadcast's
      // source, with size-1 dims where the broadcast added dims, saves
      // materializing the mask per head.
      match.broadcastMask = broadcast;
    }
    if (match.mask &&
        cast<RankedTensorType>(match.mask.getType()).getElementType() !=
            queryType.getElementType())
      return std::nullopt;
  }
  // The operands as kiln.attention takes them: [L..., Nq, D], [L..., Nk,
  // D] and [L..., Nk, Dv] with one element type, the result [L..., Nq, Dv].
  // (The key is transposed first, then reshaped.)
  auto keySource = cast<RankedTensorType>(match.key.getType());
  SmallVector<int64_t> keyShape(keySource.getShape());
  if (!match.keyPermutation.empty())
    for (auto [i, d] : llvm::enumerate(match.keyPermutation))
      keyShape[i] = keySource.getDimSize(d);
  if (!match.keyShape.empty())
    keyShape = match.keyShape;
  auto valueType = cast<RankedTensorType>(match.value.getType());
  if (!match.valueShape.empty())
    valueType = valueType.clone(match.valueShape);
  auto resultType = cast<RankedTensorType>(match.result.getType());
  int64_t rank = queryType.getRank();
  if (static_cast<int64_t>(keyShape.size()) != rank ||
      valueType.getRank() != rank || resultType.getRank() != rank ||
      keySource.getElementType() != queryType.getElementType() ||
      valueType.getElementType() != queryType.getElementType() ||
      ArrayRef<int64_t>(keyShape).drop_back(2) !=
          queryType.getShape().drop_back(2) ||
      valueType.getShape().drop_back(2) != queryType.getShape().drop_back(2) ||
      keyShape[rank - 1] != queryType.getDimSize(rank - 1) ||
      keyShape[rank - 2] != valueType.getDimSize(rank - 2))
    return std::nullopt;
  return match;
}

/// Whether the mask alone makes a row's softmax NaN: all of its entries
/// -inf, or one +inf or NaN. From the mask [..., Nq or 1, Nk], in the shape
/// of the result [L..., Nq, Dv].
Value rowsMaskedOut(OpBuilder &b, Location loc, Value mask,
                    RankedTensorType result) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank();
  double inf = std::numeric_limits<double>::infinity();
  // Each entry's kind, 0 for -inf, 1 if finite, 2 for +inf and NaN: a
  // row's largest is 1 unless the row is one of those.
  Value kind = b.create<SelectOp>(
      loc,
      b.create<CompareOp>(loc, CompareDirection::eq, mask,
                          splatConstant(b, loc, type, -inf)),
      splatConstant(b, loc, type, 0.0),
      b.create<SelectOp>(loc,
                         b.create<CompareOp>(loc, CompareDirection::lt, mask,
                                             splatConstant(b, loc, type, inf)),
                         splatConstant(b, loc, type, 1.0),
                         splatConstant(b, loc, type, 2.0)));
  Value largest = b.create<ReduceMaxOp>(loc, kind, ArrayRef<int64_t>{rank - 1});
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = 1;
  auto rowType = type.clone(shape);
  Value row = b.create<ReshapeOp>(loc, rowType, largest);
  Value masked = b.create<CompareOp>(loc, CompareDirection::ne, row,
                                     splatConstant(b, loc, rowType, 1.0));
  return b.create<BroadcastInDimOp>(
      loc, result.clone(b.getI1Type()), masked,
      llvm::to_vector(llvm::seq<int64_t>(0, rank)));
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
      auto reshaped = [&](Value value, ArrayRef<int64_t> shape) -> Value {
        if (shape.empty())
          return value;
        return builder.create<ReshapeOp>(
            output.getLoc(),
            cast<RankedTensorType>(value.getType()).clone(shape), value);
      };
      if (match->mask)
        match->mask = reshaped(match->mask, match->maskShape);
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
      Value key = match->key;
      if (!match->keyPermutation.empty())
        key = builder.create<TransposeOp>(
            output.getLoc(), key,
            builder.getDenseI64ArrayAttr(match->keyPermutation));
      key = reshaped(key, match->keyShape);
      Value query = reshaped(match->query, match->queryShape);
      Value value = reshaped(match->value, match->valueShape);
      auto attention = builder.create<AttentionOp>(
          output.getLoc(), query, key, value, match->mask,
          builder.getF64FloatAttr(match->scale),
          match->causal ? builder.getUnitAttr() : UnitAttr());
      Value result = attention.getResult();
      if (match->zeroMaskedRows) {
        auto type = cast<RankedTensorType>(result.getType());
        result = builder.create<SelectOp>(
            output.getLoc(),
            rowsMaskedOut(builder, output.getLoc(), match->mask, type),
            splatConstant(builder, output.getLoc(), type, 0.0), result);
      }
      if (BroadcastInDimOp rows = match->zeroRows) {
        auto type = cast<RankedTensorType>(result.getType());
        Value flag = builder.create<BroadcastInDimOp>(
            rows.getLoc(), type.clone(builder.getI1Type()), rows.getOperand(),
            rows.getDims());
        result = builder.create<SelectOp>(
            output.getLoc(), flag,
            splatConstant(builder, output.getLoc(), type, 0.0), result);
      }
      match->result.replaceAllUsesWith(result);
      // The replaced ops, then the constants (scale, causal mask) only
      // they used.
      // Readers go before what they read, in whatever order the match
      // listed them.
      SetVector<Operation *> constants;
      SetVector<Operation *> dead(match->dead.begin(), match->dead.end());
      for (bool progress = true; progress;) {
        progress = false;
        for (Operation *op : dead) {
          if (erased.contains(op) || !op->use_empty())
            continue;
          for (Value operand : op->getOperands())
            if (auto constant = operand.getDefiningOp<ConstantOp>())
              constants.insert(constant);
          erased.insert(op);
          op->erase();
          progress = true;
        }
      }
      for (Operation *constant : constants)
        if (constant->use_empty())
          constant->erase();
      ++numFused;
    }
  }
};

} // namespace
