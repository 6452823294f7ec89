//===- Attention.cpp - Scaled dot-product attention ----------------------===//
//
// One kiln.attention, so that the backend computes it without the score
// matrix (FlashAttention on the CPU) and differentiates it from the saved
// lse. The conventions are PyTorch's scaled_dot_product_attention: the
// scale defaults to 1/sqrt(D), a boolean mask keeps the keys where it is
// true, a float mask is added to the scores, and `causal` lets query i see
// keys j <= i. Masks broadcast against the scores numpy-style; their
// leading size-1 dims stay size 1 (the op broadcasts them itself).
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include <cmath>
#include <limits>

namespace kiln {

using detail::fail;

Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key,
                                    const Tensor &value, const Tensor &mask,
                                    bool causal, std::optional<double> scale,
                                    SourceLoc loc) {
  const char *what = "kiln::scaled_dot_product_attention";
  Operand q(query, loc), k(key, loc), v(value, loc), m(mask, loc);
  llvm::SmallVector<const Operand *, 4> operands{&q, &k, &v};
  if (mask.defined())
    operands.push_back(&m);
  detail::TraceState &state = detail::TraceState::of(operands, loc, what);
  auto describe = [](const Tensor &t) {
    return std::string(dtypeName(t.dtype())) + shapeString(t.shape());
  };
  std::string operandsText = "query " + describe(query) + ", key " +
                             describe(key) + ", value " + describe(value);
  int64_t rank = query.rank();
  if (rank < 2 || key.rank() != rank || value.rank() != rank)
    fail(loc, std::string(what) +
                  ": query, key and value must have one rank of at least 2 "
                  "([..., rows, features]), got " +
                  operandsText);
  Shape leading(query.shape().begin(), query.shape().end() - 2);
  if (Shape(key.shape().begin(), key.shape().end() - 2) != leading ||
      Shape(value.shape().begin(), value.shape().end() - 2) != leading)
    fail(loc, std::string(what) + ": leading dims differ: " + operandsText);
  int64_t queries = query.shape()[rank - 2], headDim = query.shape()[rank - 1];
  int64_t keys = key.shape()[rank - 2];
  if (key.shape()[rank - 1] != headDim)
    fail(loc, std::string(what) + ": key must have query's feature size " +
                  std::to_string(headDim) + ", got " + operandsText);
  if (value.shape()[rank - 2] != keys)
    fail(loc, std::string(what) + ": value must have as many rows as key (" +
                  std::to_string(keys) + "), got " + operandsText);
  double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(headDim));
  if (!std::isfinite(s))
    fail(loc, std::string(what) + ": the scale must be finite, got " +
                  std::to_string(s));

  DType dtype = detail::floatDType(detail::promoteTypes(
      detail::promoteTypes(query.dtype(), key.dtype()), value.dtype()));
  mlir::Value qv = detail::castValue(state, state.use(query, loc), dtype, loc);
  mlir::Value kv = detail::castValue(state, state.use(key, loc), dtype, loc);
  mlir::Value vv = detail::castValue(state, state.use(value, loc), dtype, loc);
  mlir::Value maskValue;
  if (mask.defined()) {
    Shape scores = leading;
    scores.push_back(queries);
    scores.push_back(keys);
    if (mask.rank() > rank ||
        detail::broadcastShapes({mask.shape(), scores}, what, loc) != scores)
      fail(loc, std::string(what) + ": the mask " + describe(mask) +
                    " must broadcast to the scores' shape " +
                    shapeString(scores));
    // Leading 1s up to the scores' rank; the op broadcasts size-1 dims.
    Shape padded(rank - mask.rank(), 1);
    padded.insert(padded.end(), mask.shape().begin(), mask.shape().end());
    mlir::Value raw =
        detail::reshapeValue(state, state.use(mask, loc), padded, loc);
    if (mask.dtype() == DType::I1) {
      // Kept keys add 0, the others -inf.
      mlir::Value zero = detail::splat(state, Scalar(0.0), dtype, padded, loc);
      mlir::Value minusInf = detail::splat(
          state, Scalar(-std::numeric_limits<double>::infinity()), dtype,
          padded, loc);
      maskValue = detail::selectValue(state, raw, zero, minusInf, loc);
    } else {
      maskValue = detail::castValue(state, raw, dtype, loc);
    }
  }
  auto attention = state.create<mlir::kiln::AttentionOp>(
      loc, qv, kv, vv, maskValue, state.getBuilder().getF64FloatAttr(s),
      causal ? state.getBuilder().getUnitAttr() : mlir::UnitAttr());
  return state.wrap(attention.getResult());
}

} // namespace kiln
