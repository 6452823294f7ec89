//===- EvaluateAttention.cpp - The evaluator's attention ------------------===//
//
// The reference for the fused kernels: each row of scores is computed in
// double precision from the operands (which the evaluator holds exactly),
// its softmax and products in double too, and every result is rounded once
// to its element type. The fused kernels and the composition round at
// every step in their own order; the reference is the value they
// approximate, not a copy of either order.
//
//===----------------------------------------------------------------------===//

#include "EvaluateAttention.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {
namespace evaluator {

namespace {

/// The sizes of one attention and the mask's element strides.
struct Geometry {
  int64_t batch = 1, queries, keys, headDim, valueDim;
  std::vector<int64_t> leading;
  /// Per dim of the scores [leading..., Nq, Nk]: the mask's stride, 0
  /// where the mask broadcasts.
  std::vector<int64_t> maskStrides;
  double scale;
  bool causal;

  Geometry(const HostTensor &query, const HostTensor &key,
           const HostTensor &value, const HostTensor *mask, double scale,
           bool causal)
      : scale(scale), causal(causal) {
    size_t rank = query.shape.size();
    leading.assign(query.shape.begin(), query.shape.end() - 2);
    for (int64_t d : leading)
      batch *= d;
    queries = query.shape[rank - 2];
    headDim = query.shape[rank - 1];
    keys = key.shape[rank - 2];
    valueDim = value.shape[rank - 1];
    if (!mask)
      return;
    maskStrides.assign(rank, 0);
    for (int64_t d = rank - 1, stride = 1; d >= 0; --d) {
      maskStrides[d] = mask->shape[d] == 1 ? 0 : stride;
      stride *= mask->shape[d];
    }
  }

  /// The offset of batch entry b's scores in the mask.
  int64_t maskOffset(int64_t b) const {
    int64_t offset = 0;
    for (int64_t d = leading.size() - 1; d >= 0; --d) {
      offset += (b % leading[d]) * maskStrides[d];
      b /= leading[d];
    }
    return offset;
  }

  /// The scores of query row i of batch entry b, into `row` (Nk values).
  void scores(const HostTensor &query, const HostTensor &key,
              const HostTensor *mask, int64_t b, int64_t i,
              std::vector<double> &row) const {
    const double *q = query.f.data() + (b * queries + i) * headDim;
    int64_t rank = leading.size() + 2;
    for (int64_t j = 0; j < keys; ++j) {
      const double *k = key.f.data() + (b * keys + j) * headDim;
      double dot = 0;
      for (int64_t d = 0; d < headDim; ++d)
        dot += q[d] * k[d];
      double s = scale * dot;
      if (mask)
        s += mask->f[maskOffset(b) + i * maskStrides[rank - 2] +
                     j * maskStrides[rank - 1]];
      if (causal && j > i)
        s = -std::numeric_limits<double>::infinity();
      row[j] = s;
    }
  }
};

/// exp(s - lse) for one row; NaN where lse is (a fully masked row).
double probability(double s, double lse) { return std::exp(s - lse); }

/// log(sum exp(row)), with the maximum subtracted first; NaN when every
/// score is -inf (or there is none), as softmax's 0 / 0.
double logSumExp(const std::vector<double> &row) {
  double max = -std::numeric_limits<double>::infinity();
  for (double s : row)
    max = std::isnan(s) || std::isnan(max) ? NAN : std::max(max, s);
  if (std::isnan(max) || max == -std::numeric_limits<double>::infinity())
    return NAN;
  double sum = 0;
  for (double s : row)
    sum += std::exp(s - max);
  return max + std::log(sum);
}

/// Rounds every element of `tensor` to its element type.
void roundAll(HostTensor &tensor) {
  ElementKind kind = tensor.kind();
  for (double &x : tensor.f)
    x = roundToFloat(kind, x);
}

} // namespace

std::vector<HostTensor> evaluateAttention(mlir::kiln::AttentionOp op,
                                          const HostTensor &query,
                                          const HostTensor &key,
                                          const HostTensor &value,
                                          const HostTensor *mask) {
  Geometry g(query, key, value, mask, op.getScale().convertToDouble(),
             op.getCausal());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto lseType = cast<RankedTensorType>(op.getLse().getType());
  HostTensor result(query.elementType, resultType.getShape());
  HostTensor lse(lseType.getElementType(), lseType.getShape());
  std::vector<double> row(g.keys);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t i = 0; i < g.queries; ++i) {
      g.scores(query, key, mask, b, i, row);
      double l = logSumExp(row);
      lse.f[b * g.queries + i] = l;
      double *out = result.f.data() + (b * g.queries + i) * g.valueDim;
      for (int64_t c = 0; c < g.valueDim; ++c)
        out[c] = std::isnan(l) ? NAN : 0.0;
      if (std::isnan(l))
        continue;
      for (int64_t j = 0; j < g.keys; ++j) {
        double p = probability(row[j], l);
        const double *v = value.f.data() + (b * g.keys + j) * g.valueDim;
        for (int64_t c = 0; c < g.valueDim; ++c)
          out[c] += p * v[c];
      }
    }
  }
  roundAll(result);
  roundAll(lse);
  std::vector<HostTensor> results;
  results.push_back(std::move(result));
  results.push_back(std::move(lse));
  return results;
}

std::vector<HostTensor>
evaluateAttentionGrad(mlir::kiln::AttentionGradOp op, const HostTensor &query,
                      const HostTensor &key, const HostTensor &value,
                      const HostTensor &result, const HostTensor &lse,
                      const HostTensor &resultGrad, const HostTensor *mask) {
  Geometry g(query, key, value, mask, op.getScale().convertToDouble(),
             op.getCausal());
  HostTensor dq(query.elementType, query.shape);
  HostTensor dk(key.elementType, key.shape);
  HostTensor dv(value.elementType, value.shape);
  std::vector<double> row(g.keys), dp(g.keys);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t i = 0; i < g.queries; ++i) {
      g.scores(query, key, mask, b, i, row);
      double l = lse.f[b * g.queries + i];
      const double *o = result.f.data() + (b * g.queries + i) * g.valueDim;
      const double *dout =
          resultGrad.f.data() + (b * g.queries + i) * g.valueDim;
      double delta = 0;
      for (int64_t c = 0; c < g.valueDim; ++c)
        delta += dout[c] * o[c];
      const double *q = query.f.data() + (b * g.queries + i) * g.headDim;
      double *dqRow = dq.f.data() + (b * g.queries + i) * g.headDim;
      for (int64_t j = 0; j < g.keys; ++j) {
        double p = probability(row[j], l);
        const double *v = value.f.data() + (b * g.keys + j) * g.valueDim;
        double *dvRow = dv.f.data() + (b * g.keys + j) * g.valueDim;
        double dpj = 0;
        for (int64_t c = 0; c < g.valueDim; ++c) {
          dvRow[c] += p * dout[c];
          dpj += dout[c] * v[c];
        }
        double ds = p * (dpj - delta) * g.scale;
        const double *k = key.f.data() + (b * g.keys + j) * g.headDim;
        double *dkRow = dk.f.data() + (b * g.keys + j) * g.headDim;
        for (int64_t d = 0; d < g.headDim; ++d) {
          dqRow[d] += ds * k[d];
          dkRow[d] += ds * q[d];
        }
      }
    }
  }
  roundAll(dq);
  roundAll(dk);
  roundAll(dv);
  std::vector<HostTensor> results;
  results.push_back(std::move(dq));
  results.push_back(std::move(dk));
  results.push_back(std::move(dv));
  return results;
}

} // namespace evaluator
} // namespace kiln
