//===- KilnAttentionOps.cpp - Scaled dot-product attention ----------------===//
//
// Shape inference and verification of kiln.attention and
// kiln.attention_grad (KilnAttentionOps.td). Messages name the operand at
// fault and the shapes that disagree.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

Type mlir::kiln::attentionLseElementType(Type element) {
  return element.isF64() ? element : Float32Type::get(element.getContext());
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, dim] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(dim);
  return s + "]";
}

namespace {
/// The checked shapes of an attention's operands.
struct AttentionShapes {
  SmallVector<int64_t> leading;
  int64_t queries, keys, headDim, valueDim;
  Type element;
};
} // namespace

/// Checks query, key, value and the optional mask of an attention named
/// `opName`; on success fills `shapes`.
static LogicalResult checkAttentionOperands(std::optional<Location> location,
                                            StringRef opName, Value query,
                                            Value key, Value value, Value mask,
                                            AttentionShapes &shapes) {
  auto fail = [&](auto &&...parts) {
    return emitOptionalError(location, "'kiln.", opName, "' op ", parts...);
  };
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return fail("query, key and value must have one element type, got ",
                q.getElementType(), ", ", k.getElementType(), " and ",
                v.getElementType());
  int64_t rank = q.getRank();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank)
    return fail("query, key and value must have one rank of at least 2 "
                "([leading..., rows, features]), got query ",
                shapeString(q.getShape()), ", key ", shapeString(k.getShape()),
                " and value ", shapeString(v.getShape()));
  ArrayRef<int64_t> leading = q.getShape().drop_back(2);
  if (k.getShape().drop_back(2) != leading ||
      v.getShape().drop_back(2) != leading)
    return fail("leading dims differ: query ", shapeString(q.getShape()),
                ", key ", shapeString(k.getShape()), ", value ",
                shapeString(v.getShape()));
  if (k.getDimSize(rank - 1) != q.getDimSize(rank - 1))
    return fail("key ", shapeString(k.getShape()),
                " must have the feature size of query ",
                shapeString(q.getShape()), " (", q.getDimSize(rank - 1), ")");
  if (v.getDimSize(rank - 2) != k.getDimSize(rank - 2))
    return fail("value ", shapeString(v.getShape()),
                " must have as many rows as key ", shapeString(k.getShape()),
                " (", k.getDimSize(rank - 2), ")");
  shapes.leading.assign(leading.begin(), leading.end());
  shapes.queries = q.getDimSize(rank - 2);
  shapes.keys = k.getDimSize(rank - 2);
  shapes.headDim = q.getDimSize(rank - 1);
  shapes.valueDim = v.getDimSize(rank - 1);
  shapes.element = q.getElementType();
  if (!mask)
    return success();
  auto m = cast<RankedTensorType>(mask.getType());
  SmallVector<int64_t> scores(leading);
  scores.push_back(shapes.queries);
  scores.push_back(shapes.keys);
  if (m.getElementType() != shapes.element)
    return fail("mask element type ", m.getElementType(),
                " differs from query's ", shapes.element);
  bool broadcastable = m.getRank() == rank;
  for (int64_t d = 0; broadcastable && d < rank; ++d)
    broadcastable = m.getDimSize(d) == scores[d] || m.getDimSize(d) == 1;
  if (!broadcastable)
    return fail("mask ", shapeString(m.getShape()),
                " must have the scores' shape ", shapeString(scores),
                " with any dim possibly 1");
  return success();
}

/// The types of an attention's result and lse.
static void forwardTypes(const AttentionShapes &shapes,
                         SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> shape(shapes.leading);
  shape.push_back(shapes.queries);
  SmallVector<int64_t> lse(shape);
  shape.push_back(shapes.valueDim);
  types.push_back(RankedTensorType::get(shape, shapes.element));
  types.push_back(RankedTensorType::get(
      lse, attentionLseElementType(shapes.element)));
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  AttentionShapes shapes;
  if (failed(checkAttentionOperands(location, "attention", adaptor.getQuery(),
                                    adaptor.getKey(), adaptor.getValue(),
                                    adaptor.getMask(), shapes)))
    return failure();
  forwardTypes(shapes, inferred);
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  AttentionShapes shapes;
  if (failed(checkAttentionOperands(location, "attention_grad",
                                    adaptor.getQuery(), adaptor.getKey(),
                                    adaptor.getValue(), adaptor.getMask(),
                                    shapes)))
    return failure();
  SmallVector<Type> forward;
  forwardTypes(shapes, forward);
  auto expect = [&](Value operand, Type type, StringRef name) {
    if (operand.getType() == type)
      return success();
    return emitOptionalError(location, "'kiln.attention_grad' op ", name,
                             " must have type ", type, " (the attention's), "
                             "got ",
                             operand.getType());
  };
  if (failed(expect(adaptor.getResult(), forward[0], "result")) ||
      failed(expect(adaptor.getResultGrad(), forward[0], "result_grad")) ||
      failed(expect(adaptor.getLse(), forward[1], "lse")))
    return failure();
  inferred.push_back(adaptor.getQuery().getType());
  inferred.push_back(adaptor.getKey().getType());
  inferred.push_back(adaptor.getValue().getType());
  return success();
}

/// A scale that is not finite makes every score inf or NaN.
static LogicalResult verifyScale(Operation *op, APFloat scale) {
  if (scale.isFinite())
    return success();
  return op->emitOpError("scale must be finite, got ")
         << scale.convertToDouble();
}

LogicalResult AttentionOp::verify() { return verifyScale(*this, getScale()); }

LogicalResult AttentionGradOp::verify() {
  return verifyScale(*this, getScale());
}
