//===- Matmul.cpp - Matrix products with numpy.matmul's conventions -------===//
//
// kiln.matmul takes two rank-2 or two rank-3 operands of one dtype. The
// tracer widens that to numpy.matmul: dtypes are promoted, a rank-2 operand
// is broadcast over the batch of a rank-3 one, and a 1-D operand is treated
// as a row (left) or column (right) vector whose dimension is then dropped.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

namespace kiln {

using detail::fail;

Tensor matmul(const Tensor &lhs, const Tensor &rhs, SourceLoc loc) {
  Operand lhsOperand(lhs, loc), rhsOperand(rhs, loc);
  detail::TraceState &state = detail::TraceState::of(
      {&lhsOperand, &rhsOperand}, loc, "kiln::matmul");
  auto describe = [](const Tensor &t) {
    return std::string(dtypeName(t.dtype())) + shapeString(t.shape());
  };
  for (const Tensor *t : {&lhs, &rhs})
    if (t->rank() < 1 || t->rank() > 3)
      fail(loc, "kiln::matmul operands must have rank 1, 2 or 3, got " +
                    describe(lhs) + " and " + describe(rhs));
  DType dtype = detail::promoteTypes(lhs.dtype(), rhs.dtype());
  if (dtype == DType::I1)
    fail(loc, "kiln::matmul is not defined for bool (i1) tensors; cast to a "
              "numeric dtype first");

  // Shapes after turning vectors into matrices.
  Shape a = lhs.shape(), b = rhs.shape();
  bool dropM = a.size() == 1, dropN = b.size() == 1;
  if (dropM)
    a.insert(a.begin(), 1);
  if (dropN)
    b.push_back(1);
  int64_t k = a[a.size() - 1];
  if (k != b[b.size() - 2])
    fail(loc, "kiln::matmul: contracting dimensions differ: lhs " +
                  describe(lhs) + " has K = " + std::to_string(k) + " but rhs " +
                  describe(rhs) + " has K = " +
                  std::to_string(b[b.size() - 2]));
  bool batched = a.size() == 3 || b.size() == 3;
  int64_t batch = 0;
  if (a.size() == 3 && b.size() == 3 && a[0] != b[0])
    fail(loc, "kiln::matmul: batch sizes differ: lhs " + describe(lhs) +
                  " has " + std::to_string(a[0]) + ", rhs " + describe(rhs) +
                  " has " + std::to_string(b[0]));
  if (a.size() == 3)
    batch = a[0];
  else if (b.size() == 3)
    batch = b[0];

  mlir::Value x = detail::castValue(state, state.use(lhs, loc), dtype, loc);
  mlir::Value y = detail::castValue(state, state.use(rhs, loc), dtype, loc);
  x = detail::reshapeValue(state, x, a, loc);
  y = detail::reshapeValue(state, y, b, loc);
  if (batched && a.size() == 2) {
    a.insert(a.begin(), batch);
    x = detail::broadcastValue(state, x, a, loc);
  }
  if (batched && b.size() == 2) {
    b.insert(b.begin(), batch);
    y = detail::broadcastValue(state, y, b, loc);
  }

  Shape resultShape;
  if (batched)
    resultShape.push_back(batch);
  resultShape.push_back(a[a.size() - 2]);
  resultShape.push_back(b[b.size() - 1]);
  mlir::RankedTensorType resultType =
      detail::tensorType(state.getContext(), resultShape, dtype);
  mlir::Value result =
      state.create<mlir::kiln::MatmulOp>(loc, resultType, x, y).getResult();

  Shape finalShape;
  if (batched)
    finalShape.push_back(batch);
  if (!dropM)
    finalShape.push_back(resultShape[resultShape.size() - 2]);
  if (!dropN)
    finalShape.push_back(resultShape[resultShape.size() - 1]);
  return state.wrap(detail::reshapeValue(state, result, finalShape, loc));
}

} // namespace kiln
