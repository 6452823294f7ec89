//===- EvaluateReductions.cpp - The evaluator's reductions and products ---===//
//
// Reductions (sum, max, mean, arg max/min), sort, cumulative sums, matrix
// products, convolutions, gathers and scatters, dynamic slices and the
// stack ops of loops' saved values.
//
//===----------------------------------------------------------------------===//

#include "EvaluateOps.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace evaluator {

namespace {
/// How a reduction splits the operand's dimensions: the kept ones index the
/// result, the reduced ones are walked (row-major) for each result element.
struct ReductionLayout {
  SmallVector<int64_t> keptShape, keptStrides;
  SmallVector<int64_t> reducedShape, reducedStrides;
  int64_t reducedCount = 1;

  ReductionLayout(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
    std::vector<int64_t> strides = ::kiln::computeStrides(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      bool reduced = llvm::is_contained(dims, static_cast<int64_t>(d));
      (reduced ? reducedShape : keptShape).push_back(shape[d]);
      (reduced ? reducedStrides : keptStrides).push_back(strides[d]);
      if (reduced)
        reducedCount *= shape[d];
    }
  }
};
} // namespace

/// Folds each group of reduced elements into one result element, starting
/// from `init` and combining in row-major order.
template <typename T, typename Combine>
static void reduceStorage(const std::vector<T> &from, std::vector<T> &to,
                          const ReductionLayout &layout, T init,
                          Combine combine) {
  StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
  for (T &out : to) {
    T accumulator = init;
    StridedCursor inner(layout.reducedShape, layout.reducedStrides,
                        outer.offset());
    for (int64_t r = 0; r < layout.reducedCount; ++r) {
      accumulator = combine(accumulator, from[inner.offset()]);
      inner.advance();
    }
    out = accumulator;
    outer.advance();
  }
}

HostTensor evaluateReduceSum(Operation *op, const HostTensor &operand,
                             ArrayRef<int64_t> dims) {
  HostTensor result(operand.elementType, resultShape(op));
  ReductionLayout layout(operand.shape, dims);
  ElementKind kind = operand.kind();
  if (operand.isFloat())
    reduceStorage(operand.f, result.f, layout, 0.0, [&](double acc, double x) {
      return roundToFloat(kind, acc + x);
    });
  else
    reduceStorage(operand.i, result.i, layout, int64_t(0),
                  [&](int64_t acc, int64_t x) {
                    return wrapToInt(kind, wrappingAdd(acc, x));
                  });
  return result;
}

HostTensor evaluateReduceMax(ReduceMaxOp op, const HostTensor &operand) {
  HostTensor result(operand.elementType, resultShape(op));
  ReductionLayout layout(operand.shape, op.getDims());
  if (operand.isFloat())
    reduceStorage(operand.f, result.f, layout,
                  -std::numeric_limits<double>::infinity(), floatMax);
  else
    reduceStorage(operand.i, result.i, layout, intLowest(operand.kind()),
                  [kind = operand.kind()](int64_t acc, int64_t x) {
                    return intMax(kind, acc, x);
                  });
  return result;
}

HostTensor evaluateReduceMean(ReduceMeanOp op, const HostTensor &operand) {
  HostTensor result = evaluateReduceSum(op, operand, op.getDims());
  double count = static_cast<double>(
      ReductionLayout(operand.shape, op.getDims()).reducedCount);
  ElementKind kind = result.kind();
  for (double &value : result.f)
    value = roundToFloat(kind, value / count);
  return result;
}

/// Whether `candidate` replaces `best` in an argmax (`isMax`) or argmin
/// scan: a strictly better value does, and so does a tie when the last
/// index is wanted. NaN is the extreme value both ways: the first NaN wins
/// over every number, and later NaNs count as ties.
static bool replacesBest(double candidate, double best, bool isMax,
                         bool selectLast) {
  if (std::isnan(best))
    return selectLast && std::isnan(candidate);
  if (std::isnan(candidate))
    return true;
  if (candidate == best)
    return selectLast;
  return isMax ? candidate > best : candidate < best;
}

static bool replacesBest(int64_t candidate, int64_t best, bool isMax,
                         bool selectLast) {
  if (candidate == best)
    return selectLast;
  return isMax ? candidate > best : candidate < best;
}

template <typename Op>
HostTensor evaluateArgReduce(Op op, const HostTensor &operand) {
  constexpr bool isMax = std::is_same_v<Op, ArgMaxOp>;
  HostTensor result(resultElementType(op), resultShape(op));
  int64_t dim = static_cast<int64_t>(op.getDim());
  bool selectLast = op.getSelectLastIndex();
  ReductionLayout layout(operand.shape, {dim});
  auto scan = [&](const auto &from) {
    StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
    int64_t stride = layout.reducedStrides[0];
    for (int64_t &out : result.i) {
      int64_t bestIndex = 0;
      auto best = from[outer.offset()];
      for (int64_t k = 1; k < layout.reducedCount; ++k) {
        auto candidate = from[outer.offset() + k * stride];
        if (replacesBest(candidate, best, isMax, selectLast)) {
          best = candidate;
          bestIndex = k;
        }
      }
      out = bestIndex;
      outer.advance();
    }
  };
  if (operand.isFloat()) {
    scan(operand.f);
  } else {
    // Order keys compare like the values (ui64 included).
    std::vector<int64_t> keys(operand.i);
    for (int64_t &key : keys)
      key = orderKey(operand.kind(), key);
    scan(keys);
  }
  return result;
}

Results evaluateSort(SortOp op, const HostTensor &operand) {
  HostTensor values(operand.elementType, operand.shape);
  HostTensor indices(op.getIndices().getType().getElementType(), operand.shape);
  int64_t dim = static_cast<int64_t>(op.getDim());
  bool descending = op.getDescending();
  ReductionLayout layout(operand.shape, {dim});
  int64_t count = layout.reducedCount, stride = layout.reducedStrides[0];
  std::vector<int64_t> keys;
  if (!operand.isFloat()) {
    keys = operand.i;
    for (int64_t &key : keys)
      key = orderKey(operand.kind(), key);
  }
  auto less = [&](int64_t a, int64_t b) {
    if (operand.isFloat()) {
      double x = operand.f[a], y = operand.f[b];
      return std::isnan(y) ? !std::isnan(x) : x < y;
    }
    return keys[a] < keys[b];
  };
  StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
  int64_t slices = count == 0 ? 0 : operand.numElements() / count;
  std::vector<int64_t> order(count);
  for (int64_t s = 0; s < slices; ++s) {
    int64_t base = outer.offset();
    for (int64_t k = 0; k < count; ++k)
      order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      int64_t x = base + a * stride, y = base + b * stride;
      return descending ? less(y, x) : less(x, y);
    });
    for (int64_t k = 0; k < count; ++k) {
      int64_t from = base + order[k] * stride, to = base + k * stride;
      if (operand.isFloat())
        values.f[to] = operand.f[from];
      else
        values.i[to] = operand.i[from];
      indices.i[to] = order[k];
    }
    outer.advance();
  }
  Results results;
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return results;
}

HostTensor evaluateCumsum(CumsumOp op, const HostTensor &operand) {
  HostTensor result(operand.elementType, operand.shape);
  int64_t dim = static_cast<int64_t>(op.getDim());
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  ElementKind kind = operand.kind();
  ReductionLayout layout(operand.shape, {dim});
  int64_t stride = layout.reducedStrides[0];
  int64_t n = layout.reducedCount;
  auto scan = [&](const auto &from, auto &to, auto zero, auto addFn) {
    StridedCursor outer(layout.keptShape, layout.keptStrides, 0);
    int64_t lines = ::kiln::computeNumElements(layout.keptShape);
    for (int64_t line = 0; line < lines; ++line) {
      auto sum = zero;
      for (int64_t step = 0; step < n; ++step) {
        int64_t k = reverse ? n - 1 - step : step;
        int64_t offset = outer.offset() + k * stride;
        if (exclusive) {
          to[offset] = sum;
          sum = addFn(sum, from[offset]);
        } else {
          sum = addFn(sum, from[offset]);
          to[offset] = sum;
        }
      }
      outer.advance();
    }
  };
  if (operand.isFloat())
    scan(operand.f, result.f, 0.0,
         [&](double a, double b) { return roundToFloat(kind, a + b); });
  else
    scan(operand.i, result.i, int64_t(0), [&](int64_t a, int64_t b) {
      return wrapToInt(kind, wrappingAdd(a, b));
    });
  return result;
}

HostTensor evaluateMatmul(MatmulOp op, const HostTensor &lhs,
                          const HostTensor &rhs) {
  HostTensor result(op.getType().getElementType(), resultShape(op));
  ElementKind kind = lhs.kind();
  bool bf16 = kind == ElementKind::BF16;
  if (bf16)
    kind = ElementKind::F32;
  bool isFloat = lhs.isFloat();
  // 8-bit operands widened to an i32 result (each read by its own
  // signedness) multiply and sum in i32.
  if (!isFloat)
    kind = result.kind();
  size_t rank = lhs.shape.size();
  int64_t batch = rank == 3 ? lhs.shape[0] : 1;
  int64_t m = lhs.shape[rank - 2], k = lhs.shape[rank - 1],
          n = rhs.shape[rank - 1];
  for (int64_t b = 0; b < batch; ++b) {
    int64_t lhsBase = b * m * k, rhsBase = b * k * n, outBase = b * m * n;
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        int64_t out = outBase + row * n + col;
        for (int64_t p = 0; p < k; ++p) {
          int64_t a = lhsBase + row * k + p, c = rhsBase + p * n + col;
          if (isFloat) {
            double product = roundToFloat(kind, lhs.f[a] * rhs.f[c]);
            result.f[out] = roundToFloat(kind, result.f[out] + product);
          } else {
            int64_t product = wrapToInt(kind, wrappingMul(lhs.i[a], rhs.i[c]));
            result.i[out] =
                wrapToInt(kind, wrappingAdd(result.i[out], product));
          }
        }
      }
    }
  }
  if (bf16) {
    ElementKind resultKind = result.kind();
    for (double &value : result.f)
      value = roundToFloat(resultKind, value);
  }
  return result;
}

HostTensor evaluateConv(ConvOp op, const HostTensor &input,
                        const HostTensor &weight) {
  HostTensor result(input.elementType, resultShape(op));
  ElementKind kind = input.kind();
  size_t spatial = input.shape.size() - 2;
  ArrayRef<int64_t> strides = op.getStrides(), low = op.getPaddingLow(),
                    lhsDilation = op.getLhsDilation(),
                    rhsDilation = op.getRhsDilation();
  int64_t groups = op.getGroups();
  int64_t batch = input.shape[0], channels = input.shape[1];
  int64_t outChannels = weight.shape[0];
  int64_t groupChannels = channels / groups;
  int64_t groupOutChannels = outChannels / groups;
  ArrayRef<int64_t> inSizes = ArrayRef(input.shape).drop_front(2);
  ArrayRef<int64_t> kernelSizes = ArrayRef(weight.shape).drop_front(2);
  ArrayRef<int64_t> outSizes = ArrayRef(result.shape).drop_front(2);
  int64_t inSpatial = ::kiln::computeNumElements(inSizes);
  int64_t kernelSpatial = ::kiln::computeNumElements(kernelSizes);
  int64_t outSpatial = ::kiln::computeNumElements(outSizes);
  std::vector<int64_t> inStrides = ::kiln::computeStrides(inSizes);
  SmallVector<int64_t> outIndex(spatial), kernelIndex(spatial);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < outChannels; ++o) {
      int64_t firstChannel = (o / groupOutChannels) * groupChannels;
      for (int64_t e = 0; e < outSpatial; ++e) {
        // The spatial index of output element e, row-major.
        for (int64_t d = spatial - 1, rest = e; d >= 0; --d) {
          outIndex[d] = rest % outSizes[d];
          rest /= outSizes[d];
        }
        double sum = 0.0;
        for (int64_t c = 0; c < groupChannels; ++c) {
          int64_t inBase = (n * channels + firstChannel + c) * inSpatial;
          int64_t weightBase = (o * groupChannels + c) * kernelSpatial;
          for (int64_t k = 0; k < kernelSpatial; ++k) {
            for (int64_t d = spatial - 1, rest = k; d >= 0; --d) {
              kernelIndex[d] = rest % kernelSizes[d];
              rest /= kernelSizes[d];
            }
            // Position in the dilated, padded input, then in the input.
            int64_t offset = inBase;
            bool inside = true;
            for (size_t d = 0; d < spatial && inside; ++d) {
              int64_t position = outIndex[d] * strides[d] +
                                 kernelIndex[d] * rhsDilation[d] - low[d];
              if (position < 0 || position % lhsDilation[d] != 0 ||
                  position / lhsDilation[d] >= inSizes[d])
                inside = false;
              else
                offset += (position / lhsDilation[d]) * inStrides[d];
            }
            if (!inside)
              continue;
            double product =
                roundToFloat(kind, input.f[offset] * weight.f[weightBase + k]);
            sum = roundToFloat(kind, sum + product);
          }
        }
        result.f[(n * outChannels + o) * outSpatial + e] = sum;
      }
    }
  }
  return result;
}

HostTensor evaluateGather(GatherOp op, const HostTensor &table,
                          const HostTensor &indices) {
  HostTensor result(table.elementType, resultShape(op));
  int64_t rows = table.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(table.shape).drop_front());
  for (size_t n = 0; n < indices.i.size(); ++n) {
    int64_t row = std::clamp<int64_t>(indices.i[n], 0, rows - 1);
    withStorage(table, result, [&](const auto &from, auto &to) {
      std::copy_n(from.begin() + row * rowSize, rowSize,
                  to.begin() + n * rowSize);
    });
  }
  return result;
}

HostTensor evaluateScatterAdd(const HostTensor &table,
                              const HostTensor &indices,
                              const HostTensor &updates) {
  HostTensor result = table;
  ElementKind kind = table.kind();
  int64_t rows = table.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(table.shape).drop_front());
  for (size_t n = 0; n < indices.i.size(); ++n) {
    int64_t row = std::clamp<int64_t>(indices.i[n], 0, rows - 1);
    for (int64_t k = 0; k < rowSize; ++k) {
      int64_t to = row * rowSize + k, from = n * rowSize + k;
      if (table.isFloat())
        result.f[to] = roundToFloat(kind, result.f[to] + updates.f[from]);
      else
        result.i[to] =
            wrapToInt(kind, wrappingAdd(result.i[to], updates.i[from]));
    }
  }
  return result;
}

/// The first of `count` rows of a `rows`-row tensor that a dynamic slice
/// reads or writes: the index clamped so that all of them are in bounds.
static int64_t clampedRowStart(const HostTensor &index, int64_t rows,
                               int64_t count) {
  return std::clamp<int64_t>(index.i[0], 0, rows - count);
}

HostTensor evaluateDynamicSlice(DynamicSliceOp op, const HostTensor &operand,
                                const HostTensor &index) {
  HostTensor result(operand.elementType, resultShape(op));
  int64_t count = result.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(operand.shape).drop_front());
  int64_t start = clampedRowStart(index, operand.shape[0], count);
  withStorage(operand, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin() + start * rowSize, count * rowSize, to.begin());
  });
  return result;
}

HostTensor evaluateDynamicUpdateSlice(const HostTensor &operand,
                                      const HostTensor &update,
                                      const HostTensor &index) {
  HostTensor result = operand;
  int64_t count = update.shape[0];
  int64_t rowSize =
      ::kiln::computeNumElements(ArrayRef(operand.shape).drop_front());
  int64_t start = clampedRowStart(index, operand.shape[0], count);
  withStorage(update, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin(), count * rowSize, to.begin() + start * rowSize);
  });
  return result;
}

HostTensor evaluateStackReserve(const HostTensor &stack,
                                const HostTensor &rows) {
  int64_t capacity = stack.shape[0];
  if (rows.i[0] <= capacity)
    return stack;
  SmallVector<int64_t> shape(stack.shape.begin(), stack.shape.end());
  shape[0] = rows.i[0];
  HostTensor result(stack.elementType, shape);
  withStorage(stack, result, [&](const auto &from, auto &to) {
    std::copy(from.begin(), from.end(), to.begin());
  });
  return result;
}

llvm::Expected<HostTensor> evaluateStackPush(StackPushOp op,
                                             const HostTensor &stack,
                                             const HostTensor &index,
                                             const HostTensor &value) {
  int64_t capacity = stack.shape[0];
  int64_t row = index.i[0];
  if (row < 0 || row >= capacity)
    return opError(op, "pushes row " + Twine(row) +
                           " onto a stack with capacity " + Twine(capacity));
  HostTensor result = stack;
  int64_t rowSize = value.numElements();
  withStorage(value, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin(), rowSize, to.begin() + row * rowSize);
  });
  return result;
}

llvm::Expected<HostTensor> evaluateStackRead(StackReadOp op,
                                             const HostTensor &stack,
                                             const HostTensor &index) {
  int64_t rows = stack.shape[0];
  int64_t row = index.i[0];
  if (row < 0 || row >= rows)
    return opError(op, "reads row " + Twine(row) +
                           " of a stack with capacity " + Twine(rows));
  HostTensor result(stack.elementType, ArrayRef(stack.shape).drop_front());
  int64_t rowSize = result.numElements();
  withStorage(stack, result, [&](const auto &from, auto &to) {
    std::copy_n(from.begin() + row * rowSize, rowSize, to.begin());
  });
  return result;
}

//===----------------------------------------------------------------------===//

/// The ops evaluateArgReduce serves.
template HostTensor evaluateArgReduce(ArgMaxOp op, const HostTensor &operand);
template HostTensor evaluateArgReduce(ArgMinOp op, const HostTensor &operand);

} // namespace evaluator
} // namespace kiln
