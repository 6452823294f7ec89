//===- Promotion.cpp - Dtype promotion rules ------------------------------===//
//
// The one place that decides which dtype mixed operands compute in
// (docs/tracer.md, "Promotion"):
//
//  - Tensors promote along the chain bool < i32 < i64 < f32 < f64: the
//    result is the larger of the two. i64 with f32 gives f32, as in JAX:
//    float32 is the working precision of most models and a silent switch to
//    f64 would halve their speed. ui32 stands beside i32: with bool it
//    stays ui32, with i32 or i64 it gives i64 (which holds both ranges, as
//    numpy decides), with a float the float. f16 and bf16 stand between
//    i64 and f32, side by side: together they give f32, as in JAX.
//  - C++ scalars are weakly typed (JAX's "weak types"): `x * 2` keeps x's
//    dtype, so literals never widen a computation. Two exceptions keep the
//    value meaningful: a floating-point scalar with a bool or integer tensor
//    gives f32 (`i * 0.5` must not truncate 0.5 to 0), and an integer scalar
//    with a bool tensor gives i32 (there is no bool arithmetic).
//  - With scalars only, the result is f32, i32 or i1 by the strongest kind.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

namespace kiln {
namespace detail {

/// Position of `dtype` in the promotion chain.
static int promotionRank(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return 0;
  case DType::I32:
  case DType::UI32:
    return 1;
  case DType::I64:
    return 2;
  case DType::F16:
  case DType::BF16:
    return 3;
  case DType::F32:
    return 4;
  case DType::F64:
    return 5;
  }
  return 0;
}

DType promoteTypes(DType a, DType b) {
  if ((a == DType::I32 && b == DType::UI32) ||
      (a == DType::UI32 && b == DType::I32))
    return DType::I64;
  if ((a == DType::F16 && b == DType::BF16) ||
      (a == DType::BF16 && b == DType::F16))
    return DType::F32;
  return promotionRank(a) >= promotionRank(b) ? a : b;
}

DType promoteOperands(llvm::ArrayRef<const Operand *> operands) {
  bool anyTensor = false, floatScalar = false, intScalar = false;
  DType strongest = DType::I1;
  for (const Operand *operand : operands) {
    if (operand->isTensor()) {
      strongest = anyTensor ? promoteTypes(strongest, operand->tensor().dtype())
                            : operand->tensor().dtype();
      anyTensor = true;
      continue;
    }
    switch (operand->scalar().getKind()) {
    case Scalar::Kind::Float:
      floatScalar = true;
      break;
    case Scalar::Kind::Int:
      intScalar = true;
      break;
    case Scalar::Kind::Bool:
      break;
    }
  }
  if (!anyTensor)
    return floatScalar ? DType::F32 : intScalar ? DType::I32 : DType::I1;
  if (floatScalar && !isFloat(strongest))
    return DType::F32;
  if (intScalar && strongest == DType::I1)
    return DType::I32;
  return strongest;
}

DType floatDType(DType dtype) { return isFloat(dtype) ? dtype : DType::F32; }

mlir::Value castValue(TraceState &state, mlir::Value value, DType dtype,
                      SourceLoc loc) {
  mlir::RankedTensorType type = typeOf(value);
  if (dtypeOf(type.getElementType()) == dtype)
    return value;
  mlir::RankedTensorType resultType =
      tensorType(state.getContext(), type.getShape(), dtype);
  return state.create<mlir::kiln::CastOp>(loc, resultType, value).getResult();
}

} // namespace detail
} // namespace kiln
