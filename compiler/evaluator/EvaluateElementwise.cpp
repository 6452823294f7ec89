//===- EvaluateElementwise.cpp - The evaluator's elementwise ops ----------===//
//
// Constants, iota, the elementwise ops that are more than a mapped scalar
// function (division, random bits, comparisons, selects, bitcasts, casts).
//
//===----------------------------------------------------------------------===//

#include "EvaluateOps.h"

#include "kiln/IR/Threefry.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace evaluator {

llvm::Expected<HostTensor> evaluateConstant(ConstantOp op) {
  HostTensor result(resultElementType(op), resultShape(op));
  ElementKind kind = result.kind();
  Attribute value = op.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    // Iterating a splat yields its value once per element.
    if (result.isFloat()) {
      for (auto [index, element] : llvm::enumerate(dense.getValues<APFloat>()))
        result.f[index] = roundToFloat(kind, element.convertToDouble());
    } else {
      for (auto [index, element] : llvm::enumerate(dense.getValues<APInt>()))
        result.i[index] =
            wrapToInt(kind, kind == ElementKind::I1 ? element.getZExtValue()
                                                    : element.getSExtValue());
    }
    return result;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return opError(op, "dense resource '" + resource.getRawHandle().getKey() +
                             "' has no data");
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != result.byteSize())
      return opError(op, "dense resource '" + resource.getRawHandle().getKey() +
                             "' holds " + Twine(data.size()) +
                             " bytes but the type needs " +
                             Twine(result.byteSize()));
    return HostTensor::fromBytes(result.elementType, result.shape, data.data());
  }
  return opError(op, "unsupported constant attribute kind");
}

HostTensor evaluateIota(IotaOp op) {
  HostTensor result(resultElementType(op), resultShape(op));
  ElementKind kind = result.kind();
  bool isFloat = result.isFloat();
  int64_t dim = op.getDimension();
  int64_t stride = ::kiln::computeStrides(result.shape)[dim];
  int64_t size = result.shape[dim];
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    int64_t position = (n / stride) % size;
    if (isFloat)
      result.f[n] = intToFloat(kind, position);
    else
      result.i[n] = wrapToInt(kind, position);
  }
  return result;
}

llvm::Expected<HostTensor> evaluateDiv(DivOp op, const HostTensor &lhs,
                                       const HostTensor &rhs) {
  ElementKind kind = lhs.kind();
  return mapBinary(
      lhs, rhs, [](double a, double b) { return a / b; },
      [kind](int64_t a, int64_t b) { return intDiv(kind, a, b); });
}

HostTensor evaluateRngBits(RngBitsOp op, const HostTensor &key0,
                           const HostTensor &key1, const HostTensor &counterHi,
                           const HostTensor &counterLo) {
  HostTensor result(key0.elementType, key0.shape);
  for (size_t n = 0; n < result.i.size(); ++n) {
    auto [first, second] = threefry2x32(static_cast<uint32_t>(key0.i[n]),
                                        static_cast<uint32_t>(key1.i[n]),
                                        static_cast<uint32_t>(counterHi.i[n]),
                                        static_cast<uint32_t>(counterLo.i[n]));
    switch (op.getWord()) {
    case RngWord::First:
      result.i[n] = first;
      break;
    case RngWord::Second:
      result.i[n] = second;
      break;
    case RngWord::Xor:
      result.i[n] = first ^ second;
      break;
    }
  }
  return result;
}

HostTensor evaluateCompare(CompareOp op, const HostTensor &lhs,
                           const HostTensor &rhs) {
  HostTensor result(resultElementType(op), lhs.shape);
  CompareDirection direction = op.getDirection();
  bool isFloat = lhs.isFloat();
  ElementKind kind = lhs.kind();
  for (int64_t n = 0, e = result.numElements(); n < e; ++n)
    result.i[n] = isFloat ? compareValues(direction, lhs.f[n], rhs.f[n])
                          : compareValues(direction, orderKey(kind, lhs.i[n]),
                                          orderKey(kind, rhs.i[n]));
  return result;
}

HostTensor evaluateSelect(const HostTensor &pred, const HostTensor &onTrue,
                          const HostTensor &onFalse) {
  HostTensor result(onTrue.elementType, onTrue.shape);
  bool wholeTensor = pred.shape.empty();
  auto choose = [&](const auto &whenTrue, const auto &whenFalse, auto &to) {
    for (size_t n = 0; n < to.size(); ++n)
      to[n] = pred.i[wholeTensor ? 0 : n] ? whenTrue[n] : whenFalse[n];
  };
  if (onTrue.isFloat())
    choose(onTrue.f, onFalse.f, result.f);
  else
    choose(onTrue.i, onFalse.i, result.i);
  return result;
}

HostTensor evaluateBitcast(BitcastOp op, const HostTensor &operand) {
  HostTensor result(resultElementType(op), operand.shape);
  Type from = operand.elementType, to = result.elementType;
  unsigned width = from.getIntOrFloatBitWidth();
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    APInt bits;
    if (auto floatType = dyn_cast<FloatType>(from)) {
      APFloat value(operand.f[n]);
      bool lost;
      value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
      bits = value.bitcastToAPInt();
    } else {
      bits = APInt(width, static_cast<uint64_t>(operand.i[n]),
                   /*isSigned=*/false);
    }
    if (auto floatType = dyn_cast<FloatType>(to))
      result.f[n] =
          APFloat(floatType.getFloatSemantics(), bits).convertToDouble();
    else
      result.i[n] = wrapToInt(result.kind(), to.isUnsignedInteger()
                                                 ? int64_t(bits.getZExtValue())
                                                 : bits.getSExtValue());
  }
  return result;
}

HostTensor evaluateCast(CastOp op, const HostTensor &operand) {
  HostTensor result(resultElementType(op), operand.shape);
  ElementKind from = operand.kind(), to = result.kind();
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    if (to == ElementKind::I1)
      result.i[n] = isFloatKind(from) ? operand.f[n] != 0.0 : operand.i[n] != 0;
    else if (isFloatKind(from) && isFloatKind(to))
      result.f[n] = roundToFloat(to, operand.f[n]);
    else if (isFloatKind(from))
      result.i[n] = floatToInt(to, operand.f[n]);
    else if (isFloatKind(to))
      result.f[n] = intToFloat(to, operand.i[n], from == ElementKind::UI64);
    else
      result.i[n] = wrapToInt(to, operand.i[n]);
  }
  return result;
}

//===----------------------------------------------------------------------===//

} // namespace evaluator
} // namespace kiln
