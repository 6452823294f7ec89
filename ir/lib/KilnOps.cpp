//===- KilnOps.cpp - kiln dialect operations ------------------------------===//
//
// Shape inference and verification. Every message names the operand or
// attribute at fault and what it should have been, because these are the
// errors a user sees when a traced program has a shape bug.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::kiln;

static RankedTensorType tensorOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, dim] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(dim);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// ConstantOp, IotaOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto type = dyn_cast_or_null<RankedTensorType>(
      adaptor.getValue() ? adaptor.getValue().getType() : Type());
  if (!type)
    return emitOptionalError(location, "'kiln.constant' op ", "value must be a ranked tensor literal");
  inferred.push_back(type);
  return success();
}

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match result type "
           << getType();
  return success();
}

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() == 0)
    return emitOpError("result must have rank >= 1");
  int64_t dim = getDimension();
  if (dim < 0 || dim >= type.getRank())
    return emitOpError("dimension ")
           << getDimension() << " is out of range for result of rank "
           << type.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  inferred.push_back(RankedTensorType::get(tensorOf(adaptor.getLhs()).getShape(),
                                           IntegerType::get(context, 1)));
  return success();
}

LogicalResult SelectOp::verify() {
  RankedTensorType predType = getPred().getType();
  if (predType.getRank() != 0 &&
      predType.getShape() != getType().getShape())
    return emitOpError("predicate shape ")
           << shapeString(predType.getShape())
           << " must be rank 0 or match the value shape "
           << shapeString(getType().getShape());
  return success();
}

LogicalResult CastOp::verify() {
  if (getOperand().getType().getShape() != getType().getShape())
    return emitOpError("operand shape ")
           << shapeString(getOperand().getType().getShape())
           << " differs from result shape " << shapeString(getType().getShape());
  return success();
}

LogicalResult BitcastOp::verify() {
  RankedTensorType from = getOperand().getType(), to = getType();
  if (from.getShape() != to.getShape())
    return emitOpError("operand shape ")
           << shapeString(from.getShape()) << " differs from result shape "
           << shapeString(to.getShape());
  Type a = from.getElementType(), b = to.getElementType();
  if (a.isInteger(1) || b.isInteger(1))
    return emitOpError("cannot reinterpret i1 (its storage is wider than "
                       "its bit)");
  if (a.getIntOrFloatBitWidth() != b.getIntOrFloatBitWidth())
    return emitOpError("element types ")
           << a << " and " << b << " differ in bit width";
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType resultType = getType();
  ArrayRef<int64_t> dims = getDims();
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType() << " differs from operand's "
           << operandType.getElementType();
  if (static_cast<int64_t>(dims.size()) != operandType.getRank())
    return emitOpError("dims has ")
           << dims.size() << " entries but the operand has rank "
           << operandType.getRank();
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= resultType.getRank())
      return emitOpError("dims[") << i << "] = " << dim
                                  << " is out of range for result rank "
                                  << resultType.getRank();
    if (i > 0 && dim <= dims[i - 1])
      return emitOpError("dims must be strictly increasing, but dims[")
             << i << "] = " << dim << " follows " << dims[i - 1];
    int64_t from = operandType.getDimSize(i);
    int64_t to = resultType.getDimSize(dim);
    if (from != 1 && from != to)
      return emitOpError("operand dimension ")
             << i << " has size " << from << ", which cannot broadcast to "
             << "result dimension " << dim << " of size " << to;
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType resultType = getType();
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType() << " differs from operand's "
           << operandType.getElementType();
  if (operandType.getNumElements() != resultType.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeString(operandType.getShape()) << " ("
           << operandType.getNumElements() << " elements) into "
           << shapeString(resultType.getShape()) << " ("
           << resultType.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return emitOptionalError(location, "'kiln.transpose' op ", "permutation has ", perm.size(),
                             " entries but the operand has rank ",
                             type.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= type.getRank() || seen[p])
      return emitOptionalError(location, "'kiln.transpose' op ", "permutation ", shapeString(perm),
                               " is not a permutation of 0..",
                               type.getRank() - 1);
    seen[p] = true;
    shape.push_back(type.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit(),
                    stride = adaptor.getStride();
  size_t rank = type.getRank();
  if (start.size() != rank || limit.size() != rank || stride.size() != rank)
    return emitOptionalError(location, "'kiln.slice' op ", "start, limit and stride need ", rank,
                             " entries each (the operand rank), got ",
                             start.size(), ", ", limit.size(), " and ",
                             stride.size());
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i) {
    int64_t dim = type.getDimSize(i);
    if (stride[i] < 1)
      return emitOptionalError(location, "'kiln.slice' op ", "stride[", i, "] = ", stride[i],
                               " must be >= 1");
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > dim)
      return emitOptionalError(location, "'kiln.slice' op ", "dimension ", i, ": need 0 <= start (",
                               start[i], ") <= limit (", limit[i],
                               ") <= size (", dim, ")");
    shape.push_back((limit[i] - start[i] + stride[i] - 1) / stride[i]);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(location, "'kiln.concat' op ", "needs at least one input");
  RankedTensorType first = tensorOf(inputs[0]);
  int64_t dimension = static_cast<int64_t>(adaptor.getDimension());
  if (dimension < 0 || dimension >= first.getRank())
    return emitOptionalError(location, "'kiln.concat' op ", "dimension ", dimension,
                             " is out of range for inputs of rank ",
                             first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    RankedTensorType type = tensorOf(input);
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != first.getRank())
      return emitOptionalError(location, "'kiln.concat' op ", "input #", i + 1, " has type ", type,
                               ", incompatible with input #0 of type ", first);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == dimension)
        continue;
      if (type.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(location, "'kiln.concat' op ", "input #", i + 1, " has size ",
                                 type.getDimSize(d), " in dimension ", d,
                                 " but input #0 has ", first.getDimSize(d));
    }
    shape[dimension] += type.getDimSize(dimension);
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult ReverseOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  SmallVector<bool> seen(type.getRank(), false);
  for (int64_t dim : adaptor.getDims()) {
    if (dim < 0 || dim >= type.getRank())
      return emitOptionalError(location, "'kiln.reverse' op ", "dimension ",
                               dim, " is out of range for operand of rank ",
                               type.getRank());
    if (seen[dim])
      return emitOptionalError(location, "'kiln.reverse' op ", "dimension ",
                               dim, " is listed twice");
    seen[dim] = true;
  }
  inferred.push_back(type);
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  RankedTensorType value = tensorOf(adaptor.getPaddingValue());
  if (value.getRank() != 0 || value.getElementType() != type.getElementType())
    return emitOptionalError(location, "'kiln.pad' op ", "padding value of type ",
                             value, " must be a rank-0 tensor of the operand's "
                             "element type ", type.getElementType());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh(),
                    interior = adaptor.getInterior();
  size_t rank = type.getRank();
  if (low.size() != rank || high.size() != rank || interior.size() != rank)
    return emitOptionalError(location, "'kiln.pad' op ", "low, high and interior need ", rank,
                             " entries each (the operand rank), got ",
                             low.size(), ", ", high.size(), " and ",
                             interior.size());
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i) {
    if (low[i] < 0 || high[i] < 0 || interior[i] < 0)
      return emitOptionalError(location, "'kiln.pad' op ", "dimension ", i,
                               ": low (", low[i], "), high (", high[i],
                               ") and interior (", interior[i],
                               ") must be >= 0");
    int64_t dim = type.getDimSize(i);
    shape.push_back(dim + low[i] + high[i] +
                    std::max<int64_t>(dim - 1, 0) * interior[i]);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, gathers
//===----------------------------------------------------------------------===//

/// The shape left after removing `dims`, which must be unique and in range.
static LogicalResult inferReducedType(std::optional<Location> location,
                                      StringRef opName, Value operand, ArrayRef<int64_t> dims,
                                      SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(operand);
  SmallVector<bool> reduced(type.getRank(), false);
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= type.getRank())
      return emitOptionalError(location, "'kiln.", opName, "' op ", "reduction dimension ", dim,
                               " is out of range for operand of rank ",
                               type.getRank());
    if (reduced[dim])
      return emitOptionalError(location, "'kiln.", opName, "' op ", "reduction dimension ", dim,
                               " is listed twice");
    reduced[dim] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!reduced[d])
      shape.push_back(type.getDimSize(d));
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

#define KILN_REDUCE_INFER(OP, NAME)                                                \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> location,         \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferReducedType(location, NAME, adaptor.getOperand(),              \
                            adaptor.getDims(),                                 \
                            inferred);                                         \
  }
KILN_REDUCE_INFER(ReduceSumOp, "reduce_sum")
KILN_REDUCE_INFER(ReduceMaxOp, "reduce_max")
KILN_REDUCE_INFER(ReduceMeanOp, "reduce_mean")
#undef KILN_REDUCE_INFER

/// argmax/argmin: the operand's shape without `dim`, as i64 indices.
static LogicalResult inferArgReduceType(MLIRContext *context,
                                        std::optional<Location> location,
                                        StringRef opName, Value operand,
                                        int64_t dim,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(operand);
  if (dim < 0 || dim >= type.getRank())
    return emitOptionalError(location, "'kiln.", opName, "' op ", "dimension ",
                             dim, " is out of range for operand of rank ",
                             type.getRank());
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + dim);
  inferred.push_back(
      RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

/// There is no index of an empty slice, so the reduced dimension must have
/// elements. The verifier may run before the inferred result type is
/// checked, so it checks the dimension's range itself too.
template <typename Op>
static LogicalResult verifyArgReduce(Op op) {
  int64_t dim = static_cast<int64_t>(op.getDim());
  RankedTensorType type = op.getOperand().getType();
  if (dim < 0 || dim >= type.getRank())
    return op.emitOpError("dimension ")
           << dim << " is out of range for operand of rank "
           << type.getRank();
  if (type.getDimSize(dim) == 0)
    return op.emitOpError("dimension ")
           << dim << " has size 0: there is no index to return";
  return success();
}

#define KILN_ARG_REDUCE(OP, NAME)                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *context,                     \
                                     std::optional<Location> location,         \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferArgReduceType(context, location, NAME, adaptor.getOperand(),   \
                              static_cast<int64_t>(adaptor.getDim()),          \
                              inferred);                                       \
  }                                                                            \
  LogicalResult OP::verify() { return verifyArgReduce(*this); }
KILN_ARG_REDUCE(ArgMaxOp, "argmax")
KILN_ARG_REDUCE(ArgMinOp, "argmin")
#undef KILN_ARG_REDUCE

LogicalResult SortOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  inferred.push_back(type);
  inferred.push_back(
      RankedTensorType::get(type.getShape(), IntegerType::get(context, 64)));
  return success();
}

/// `dim` names a dimension of `op`'s operand (sort, cumsum).
template <typename Op>
static LogicalResult verifyOperandDim(Op op) {
  int64_t dim = static_cast<int64_t>(op.getDim());
  int64_t rank = op.getOperand().getType().getRank();
  if (dim < 0 || dim >= rank)
    return op.emitOpError("dimension ")
           << dim << " is out of range for operand of rank " << rank;
  return success();
}

LogicalResult SortOp::verify() { return verifyOperandDim(*this); }

LogicalResult CumsumOp::verify() { return verifyOperandDim(*this); }

bool mlir::kiln::widensHalfPrecision(Operation *op) {
  auto isHalf = [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.isF16() || element.isBF16();
  };
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return matmul.getLhs().getType().getElementType().isF16();
  if (!isa<IotaOp, ReduceSumOp, ReduceMaxOp, ReduceMeanOp, ArgMaxOp, ArgMinOp,
           CumsumOp, ConvOp, ReduceWindowOp, ReduceWindowMaxGradOp,
           AttentionOp, AttentionGradOp>(op))
    return false;
  return llvm::any_of(op->getOperandTypes(), isHalf) ||
         llvm::any_of(op->getResultTypes(), isHalf);
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType lhs = tensorOf(adaptor.getLhs());
  RankedTensorType rhs = tensorOf(adaptor.getRhs());
  auto isByte = [](Type type) {
    return isa<IntegerType>(type) && type.getIntOrFloatBitWidth() == 8;
  };
  bool bytes = isByte(lhs.getElementType()) && isByte(rhs.getElementType());
  if (lhs.getElementType() != rhs.getElementType() && !bytes)
    return emitOptionalError(location, "'kiln.matmul' op ", "lhs element type ",
                             lhs.getElementType(), " differs from rhs's ",
                             rhs.getElementType());
  if (lhs.getRank() != rhs.getRank() || lhs.getRank() < 2 || lhs.getRank() > 3)
    return emitOptionalError(location,
                             "operands must both be rank 2 or both rank 3, got "
                             "lhs ",
                             shapeString(lhs.getShape()), " and rhs ",
                             shapeString(rhs.getShape()));
  int64_t r = lhs.getRank();
  if (lhs.getDimSize(r - 1) != rhs.getDimSize(r - 2))
    return emitOptionalError(location, "'kiln.matmul' op ", "contracting dimensions differ: lhs ",
                             shapeString(lhs.getShape()), " has K = ",
                             lhs.getDimSize(r - 1), " but rhs ",
                             shapeString(rhs.getShape()), " has K = ",
                             rhs.getDimSize(r - 2));
  SmallVector<int64_t> shape;
  if (r == 3) {
    if (lhs.getDimSize(0) != rhs.getDimSize(0))
      return emitOptionalError(location, "'kiln.matmul' op ", "batch sizes differ: lhs has ",
                               lhs.getDimSize(0), ", rhs has ",
                               rhs.getDimSize(0));
    shape.push_back(lhs.getDimSize(0));
  }
  shape.push_back(lhs.getDimSize(r - 2));
  shape.push_back(rhs.getDimSize(r - 1));
  Type element = lhs.getElementType();
  TypeAttr resultElement = adaptor.getResultElementTypeAttr();
  if (lhs.getElementType() != rhs.getElementType() && !resultElement)
    return emitOptionalError(location, "'kiln.matmul' op ",
                             "8-bit integer operands of two types (",
                             lhs.getElementType(), ", ", rhs.getElementType(),
                             ") need result_element_type = i32");
  if (resultElement) {
    bool widensHalf = resultElement.getValue().isF32() &&
                      (element.isF16() || element.isBF16());
    bool widensBytes = resultElement.getValue().isSignlessInteger(32) && bytes;
    if (!widensHalf && !widensBytes)
      return emitOptionalError(
          location, "'kiln.matmul' op ", "result_element_type ",
          resultElement.getValue(), " is not supported for ", element,
          " operands: it may only widen f16 or bf16 operands' product to "
          "f32, or 8-bit integers' to i32");
    element = resultElement.getValue();
  }
  inferred.push_back(RankedTensorType::get(shape, element));
  return success();
}

std::optional<int64_t>
kiln::convOutputSize(int64_t inputSize, int64_t kernelSize, int64_t stride,
                     int64_t paddingLow, int64_t paddingHigh,
                     int64_t lhsDilation, int64_t rhsDilation) {
  if (inputSize == 0 || kernelSize == 0)
    return 0;
  // Attributes are any int64 the verifier allows, so every step is checked.
  std::optional<int64_t> dilated =
      llvm::checkedMul<int64_t>(inputSize - 1, lhsDilation);
  std::optional<int64_t> padded =
      dilated ? llvm::checkedAdd<int64_t>(*dilated, 1) : std::nullopt;
  padded = padded ? llvm::checkedAdd<int64_t>(*padded, paddingLow)
                  : std::nullopt;
  padded = padded ? llvm::checkedAdd<int64_t>(*padded, paddingHigh)
                  : std::nullopt;
  std::optional<int64_t> window =
      llvm::checkedMul<int64_t>(kernelSize - 1, rhsDilation);
  window = window ? llvm::checkedAdd<int64_t>(*window, 1) : std::nullopt;
  if (!padded || !window)
    return std::nullopt;
  if (*padded < *window)
    return 0;
  return (*padded - *window) / stride + 1;
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto fail = [&](auto &&...message) {
    return emitOptionalError(location, "'kiln.conv' op ", message...);
  };
  RankedTensorType input = tensorOf(adaptor.getInput());
  RankedTensorType weight = tensorOf(adaptor.getWeight());
  if (input.getElementType() != weight.getElementType())
    return fail("input element type ", input.getElementType(),
                " differs from weight's ", weight.getElementType());
  if (input.getRank() < 3)
    return fail("input ", shapeString(input.getShape()),
                " must have rank >= 3 ([N, C, spatial...])");
  if (weight.getRank() != input.getRank())
    return fail("weight ", shapeString(weight.getShape()), " has rank ",
                weight.getRank(), " but the input ",
                shapeString(input.getShape()), " has rank ", input.getRank());
  size_t spatial = input.getRank() - 2;
  struct Named {
    StringRef name;
    ArrayRef<int64_t> values;
    int64_t minimum;
  } attributes[] = {{"strides", adaptor.getStrides(), 1},
                    {"padding_low", adaptor.getPaddingLow(), 0},
                    {"padding_high", adaptor.getPaddingHigh(), 0},
                    {"lhs_dilation", adaptor.getLhsDilation(), 1},
                    {"rhs_dilation", adaptor.getRhsDilation(), 1}};
  for (const Named &attribute : attributes) {
    if (attribute.values.size() != spatial)
      return fail(attribute.name, " has ", attribute.values.size(),
                  " entries but there are ", spatial,
                  " spatial dimensions");
    for (auto [i, value] : llvm::enumerate(attribute.values))
      if (value < attribute.minimum)
        return fail(attribute.name, "[", i, "] = ", value, " must be >= ",
                    attribute.minimum);
  }
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  int64_t channels = input.getDimSize(1), outChannels = weight.getDimSize(0);
  if (groups < 1)
    return fail("groups = ", groups, " must be >= 1");
  if (channels % groups != 0)
    return fail("groups = ", groups, " does not divide the ", channels,
                " input channels");
  if (outChannels % groups != 0)
    return fail("groups = ", groups, " does not divide the ", outChannels,
                " output channels (weight dimension 0)");
  if (weight.getDimSize(1) != channels / groups)
    return fail("weight ", shapeString(weight.getShape()),
                " must have C / groups = ", channels / groups,
                " in dimension 1 (input channels ", channels, ", groups ",
                groups, ")");
  SmallVector<int64_t> shape{input.getDimSize(0), outChannels};
  for (size_t i = 0; i < spatial; ++i) {
    std::optional<int64_t> size = convOutputSize(
        input.getDimSize(i + 2), weight.getDimSize(i + 2),
        adaptor.getStrides()[i], adaptor.getPaddingLow()[i],
        adaptor.getPaddingHigh()[i], adaptor.getLhsDilation()[i],
        adaptor.getRhsDilation()[i]);
    if (!size)
      return fail("spatial dimension ", i,
                  ": the padded, dilated input or the dilated kernel is "
                  "larger than 64-bit sizes allow");
    shape.push_back(*size);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType table = tensorOf(adaptor.getTable());
  RankedTensorType indices = tensorOf(adaptor.getIndices());
  if (table.getRank() < 1 || table.getDimSize(0) < 1)
    return emitOptionalError(location,
                             "table must have rank >= 1 and at least one row");
  SmallVector<int64_t> shape(indices.getShape());
  llvm::append_range(shape, table.getShape().drop_front());
  inferred.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  RankedTensorType table = tensorOf(adaptor.getTable());
  RankedTensorType indices = tensorOf(adaptor.getIndices());
  RankedTensorType updates = tensorOf(adaptor.getUpdates());
  if (table.getRank() < 1 || table.getDimSize(0) < 1)
    return emitOptionalError(location, "'kiln.scatter_add' op table must "
                                       "have rank >= 1 and at least one row");
  SmallVector<int64_t> shape(indices.getShape());
  llvm::append_range(shape, table.getShape().drop_front());
  if (updates.getShape() != ArrayRef<int64_t>(shape) ||
      updates.getElementType() != table.getElementType())
    return emitOptionalError(
        location, "'kiln.scatter_add' op updates must be ",
        RankedTensorType::get(shape, table.getElementType()),
        " (the indices' shape, then the table's past its rows), got ",
        updates);
  inferred.push_back(table);
  return success();
}

//===----------------------------------------------------------------------===//
// Windowed reductions
//===----------------------------------------------------------------------===//

/// The result shape of a kiln.reduce_window of `shape` with these window
/// attributes, or an error naming `opName` and the attribute at fault.
static FailureOr<SmallVector<int64_t>> inferWindowedShape(
    std::optional<Location> location, StringRef opName, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> paddingLow, ArrayRef<int64_t> paddingHigh,
    ArrayRef<int64_t> dilations) {
  auto fail = [&](auto &&...message) -> FailureOr<SmallVector<int64_t>> {
    (void)emitOptionalError(location, "'kiln.", opName, "' op ", message...);
    return failure();
  };
  size_t rank = shape.size();
  if (window.size() != rank || strides.size() != rank ||
      paddingLow.size() != rank || paddingHigh.size() != rank ||
      dilations.size() != rank)
    return fail("window, strides, padding_low, padding_high and dilations "
                "need ", rank, " entries each (the operand rank), got ",
                window.size(), ", ", strides.size(), ", ", paddingLow.size(),
                ", ", paddingHigh.size(), " and ", dilations.size());
  SmallVector<int64_t> result;
  for (size_t d = 0; d < rank; ++d) {
    if (window[d] < 1)
      return fail("window[", d, "] = ", window[d], " must be >= 1");
    if (strides[d] < 1)
      return fail("strides[", d, "] = ", strides[d], " must be >= 1");
    if (dilations[d] < 1)
      return fail("dilations[", d, "] = ", dilations[d], " must be >= 1");
    if (paddingLow[d] < 0 || paddingHigh[d] < 0)
      return fail("dimension ", d, ": padding_low (", paddingLow[d],
                  ") and padding_high (", paddingHigh[d], ") must be >= 0");
    int64_t padded = shape[d] + paddingLow[d] + paddingHigh[d];
    int64_t span = (window[d] - 1) * dilations[d] + 1;
    if (padded == 0) {
      result.push_back(0);
      continue;
    }
    if (span > padded)
      return fail("dimension ", d, ": the window spans ", span,
                  " elements (window ", window[d], ", dilation ", dilations[d],
                  ") but the padded operand has only ", padded);
    result.push_back((padded - span) / strides[d] + 1);
  }
  return result;
}

LogicalResult ReduceWindowOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  FailureOr<SmallVector<int64_t>> shape = inferWindowedShape(
      location, "reduce_window", type.getShape(), adaptor.getWindow(),
      adaptor.getStrides(), adaptor.getPaddingLow(), adaptor.getPaddingHigh(),
      adaptor.getDilations());
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, type.getElementType()));
  return success();
}

LogicalResult ReduceWindowMaxGradOp::verify() {
  RankedTensorType type = getOperand().getType();
  FailureOr<SmallVector<int64_t>> shape = inferWindowedShape(
      getLoc(), "reduce_window_max_grad", type.getShape(), getWindow(),
      getStrides(), getPaddingLow(), getPaddingHigh(), getDilations());
  if (failed(shape))
    return failure();
  auto expected = RankedTensorType::get(*shape, type.getElementType());
  if (getCotangent().getType() != expected)
    return emitOpError("cotangent has type ")
           << getCotangent().getType() << " but the max pooling's result has "
           << "type " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// Slicing at a run-time row index
//===----------------------------------------------------------------------===//

LogicalResult DynamicSliceOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> location,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorOf(adaptor.getOperand());
  if (type.getRank() < 1)
    return emitOptionalError(location, "'kiln.dynamic_slice' op ",
                             "operand must have rank >= 1");
  int64_t size = static_cast<int64_t>(adaptor.getSize());
  if (size < 0 || size > type.getDimSize(0))
    return emitOptionalError(location, "'kiln.dynamic_slice' op ", "size ",
                             size, " must be in [0, ", type.getDimSize(0),
                             "] (the operand's rows)");
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = size;
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult DynamicUpdateSliceOp::verify() {
  RankedTensorType type = getOperand().getType();
  RankedTensorType update = getUpdate().getType();
  if (type.getRank() < 1)
    return emitOpError("operand must have rank >= 1");
  if (update.getElementType() != type.getElementType() ||
      update.getRank() != type.getRank() ||
      update.getShape().drop_front() != type.getShape().drop_front() ||
      update.getDimSize(0) > type.getDimSize(0))
    return emitOpError("update of type ")
           << update << " does not fit in operand of type " << type
           << ": it needs the operand's element type and shape past "
           << "dimension 0, and at most " << type.getDimSize(0) << " rows";
  return success();
}

//===----------------------------------------------------------------------===//
// Structured control flow
//===----------------------------------------------------------------------===//

/// Checks that `region`'s block arguments have `expected` types and that its
/// terminator yields `yielded` types.
static LogicalResult verifyRegion(Operation *op, Region &region,
                                  StringRef regionName, TypeRange expectedArgs,
                                  TypeRange expectedYield) {
  Block &block = region.front();
  if (block.getNumArguments() != expectedArgs.size())
    return op->emitOpError() << regionName << " region takes "
                             << block.getNumArguments()
                             << " arguments but needs " << expectedArgs.size();
  for (auto [i, arg, type] :
       llvm::enumerate(block.getArgumentTypes(), expectedArgs))
    if (arg != type)
      return op->emitOpError() << regionName << " region argument #" << i
                               << " has type " << arg << " but needs " << type;
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError() << regionName
                             << " region must end with kiln.yield";
  if (yield.getValues().size() != expectedYield.size())
    return yield.emitOpError()
           << "in the " << regionName << " region yields "
           << yield.getValues().size() << " values but needs "
           << expectedYield.size();
  for (auto [i, got, type] :
       llvm::enumerate(yield.getValues().getTypes(), expectedYield))
    if (got != type)
      return yield.emitOpError() << "in the " << regionName
                                 << " region: value #" << i << " has type "
                                 << got << " but needs " << type;
  return success();
}

LogicalResult CondOp::verifyRegionSignatures() {
  TypeRange inputs = getInputs().getTypes();
  if (failed(verifyRegion(*this, getThenRegion(), "then", inputs,
                          getResultTypes())))
    return failure();
  return verifyRegion(*this, getElseRegion(), "else", inputs,
                      getResultTypes());
}

LogicalResult WhileOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, adaptor.getInits().getTypes());
  return success();
}

LogicalResult WhileOp::verify() {
  // A loop without carried values computes nothing (kiln ops are pure).
  if (getInits().empty())
    return emitOpError("needs at least one loop-carried value");
  return success();
}

LogicalResult WhileOp::verifyRegionSignatures() {
  TypeRange inits = getInits().getTypes();
  Type predicate = RankedTensorType::get({}, IntegerType::get(getContext(), 1));
  if (failed(verifyRegion(*this, getCondRegion(), "cond", inits, predicate)))
    return failure();
  return verifyRegion(*this, getBodyRegion(), "body", inits, inits);
}

LogicalResult ForOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, adaptor.getInits().getTypes());
  return success();
}

LogicalResult ForOp::verify() {
  if (getInits().empty())
    return emitOpError("needs at least one loop-carried value");
  if (static_cast<int64_t>(getTripCount()) < 0)
    return emitOpError("trip_count must be >= 0, got ")
           << static_cast<int64_t>(getTripCount());
  return success();
}

LogicalResult ForOp::verifyRegionSignatures() {
  // The first block argument is the iteration index.
  SmallVector<Type> args{
      RankedTensorType::get({}, IntegerType::get(getContext(), 64))};
  llvm::append_range(args, getInits().getTypes());
  return verifyRegion(*this, getBodyRegion(), "body", args,
                      getInits().getTypes());
}

bool kiln::isStackType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 1 || !tensor.isDynamicDim(0))
    return false;
  Type element = tensor.getElementType();
  auto integer = dyn_cast<IntegerType>(element);
  bool isElement =
      isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(element) ||
      (integer &&
       llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth()) &&
       (integer.isSignless() ||
        (integer.isUnsigned() && integer.getWidth() != 1)));
  if (!isElement)
    return false;
  return llvm::all_of(tensor.getShape().drop_front(),
                      [](int64_t dim) { return !ShapedType::isDynamic(dim); });
}

RankedTensorType kiln::getStackRowType(RankedTensorType stack) {
  return RankedTensorType::get(stack.getShape().drop_front(),
                               stack.getElementType());
}

RankedTensorType kiln::getStackType(RankedTensorType row) {
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  llvm::append_range(shape, row.getShape());
  return RankedTensorType::get(shape, row.getElementType());
}

LogicalResult StackPushOp::verify() {
  RankedTensorType row = getStackRowType(getStack().getType());
  if (getValue().getType() != row)
    return emitOpError("pushes a ")
           << getValue().getType() << " onto a stack of " << row;
  return success();
}

LogicalResult StackReadOp::verify() {
  RankedTensorType row = getStackRowType(getStack().getType());
  if (getResult().getType() != row)
    return emitOpError("reads a ")
           << getResult().getType() << " from a stack of " << row;
  return success();
}

#define GET_OP_CLASSES
#include "kiln/IR/KilnOps.cpp.inc"
