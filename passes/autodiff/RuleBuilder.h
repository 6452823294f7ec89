//===- RuleBuilder.h - Shorthands the derivative rules are written in -*- C++ -*-===//
//
// The VJP rules (VjpRules.cpp) and the JVP rules (JvpRules.cpp) build the
// same handful of kiln ops over and over; RuleBuilder names them, all at
// the differentiated op's location. The helpers below it are the pieces of
// derivative formulas both modes share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_AUTODIFF_RULEBUILDER_H
#define KILN_PASSES_AUTODIFF_RULEBUILDER_H

#include "Differentiator.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace kiln {
namespace autodiff {

class RuleBuilder {
public:
  RuleBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  /// At a rule context's builder and op (VjpContext or JvpContext).
  template <typename Context>
  explicit RuleBuilder(Context &context)
      : b(context.getBuilder()), loc(context.getLoc()) {}

  Value add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
  Value neg(Value x) { return b.create<NegOp>(loc, x); }
  Value cmp(CompareDirection direction, Value x, Value y) {
    return b.create<CompareOp>(loc, direction, x, y);
  }
  Value select(Value pred, Value x, Value y) {
    return b.create<SelectOp>(loc, pred, x, y);
  }
  Value cast(Type type, Value x) { return b.create<CastOp>(loc, type, x); }
  Value reshape(Type type, Value x) {
    return x.getType() == type ? x : b.create<ReshapeOp>(loc, type, x);
  }
  Value broadcast(Type type, Value x, ArrayRef<int64_t> dims) {
    return b.create<BroadcastInDimOp>(loc, type, x, dims);
  }
  Value reduceSum(Value x, ArrayRef<int64_t> dims) {
    return dims.empty() ? x : b.create<ReduceSumOp>(loc, x, dims);
  }
  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    return b.create<TransposeOp>(loc, x, permutation);
  }
  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
              ArrayRef<int64_t> stride) {
    return b.create<SliceOp>(loc, x, start, limit, stride);
  }
  Value concat(ValueRange inputs, int64_t dim) {
    return inputs.size() == 1 ? inputs.front()
                              : b.create<ConcatOp>(loc, inputs, dim);
  }
  Value matmul(Value x, Value y) { return b.create<MatmulOp>(loc, x, y); }
  Value reverse(Value x, ArrayRef<int64_t> dims) {
    return dims.empty() ? x : b.create<ReverseOp>(loc, x, dims);
  }
  Value conv(Value input, Value weight, ArrayRef<int64_t> strides,
             ArrayRef<int64_t> low, ArrayRef<int64_t> high,
             ArrayRef<int64_t> lhsDilation, ArrayRef<int64_t> rhsDilation,
             int64_t groups) {
    return b.create<ConvOp>(loc, input, weight, strides, low, high,
                            lhsDilation, rhsDilation, groups);
  }

  Value zeros(Type type) { return buildZeros(b, loc, type); }
  /// A splat of `value` with the type of `like`.
  Value splatLike(Value like, double value) {
    return buildSplat(b, loc, like.getType(), value);
  }

  OpBuilder &b;
  Location loc;
};

inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

inline RankedTensorType withShape(RankedTensorType type,
                                  ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType());
}

/// The dimensions a reduction over `dims` keeps, in order: the broadcast
/// that undoes the reduction maps result dimension i to kept[i].
inline SmallVector<int64_t> keptDims(int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      kept.push_back(d);
  return kept;
}

/// Broadcasts a reduction's result-shaped `value` back to the operand type.
inline Value unreduce(RuleBuilder &r, Value value,
                      RankedTensorType operandType, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return value;
  return r.broadcast(operandType, value, keptDims(operandType.getRank(), dims));
}

/// For kiln.sort: the flat (row-major) position in the operand of each
/// element of the sorted values, an i64 tensor of the operand's shape: the
/// element's own position with its coordinate along the sorted dim
/// replaced by the index the sort returned for it.
inline Value sortedSourcePositions(RuleBuilder &r, SortOp op) {
  RankedTensorType type = op.getOperand().getType();
  int64_t dim = static_cast<int64_t>(op.getDim());
  int64_t stride = 1;
  for (int64_t d = type.getRank() - 1; d > dim; --d)
    stride *= type.getDimSize(d);
  auto indexType = RankedTensorType::get(type.getShape(), r.b.getI64Type());
  auto flatIndexType =
      RankedTensorType::get({type.getNumElements()}, r.b.getI64Type());
  Value flat =
      r.reshape(indexType, r.b.create<IotaOp>(r.loc, flatIndexType, 0));
  Value along = r.b.create<IotaOp>(r.loc, indexType, dim);
  return r.add(flat, r.mul(r.sub(op.getIndices(), along),
                           r.splatLike(flat, stride)));
}

/// The attributes every grouped collective carries, for rules that build
/// other collectives over the same groups.
struct Groups {
  DenseI64ArrayAttr ranks;
  IntegerAttr size;
};

template <typename OpTy>
Groups groupsOf(OpTy op) {
  return {op.getGroupsAttr(), op.getGroupSizeAttr()};
}

/// kiln.all_reduce of `x` with `kind` over `groups`.
inline Value allReduce(OpBuilder &b, Location loc, Value x,
                       CollectiveReduction kind, Groups groups) {
  return b.create<AllReduceOp>(
      loc, x, CollectiveReductionAttr::get(b.getContext(), kind), groups.ranks,
      groups.size);
}

} // namespace autodiff
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_RULEBUILDER_H
