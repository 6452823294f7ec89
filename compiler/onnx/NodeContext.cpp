//===- NodeContext.cpp - what a translation sees of a node ----------------===//
//
// NodeContext's helpers: inputs, attributes with their defaults, constant
// inputs read as numbers, and errors that name the node.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "Emit.h"
#include "OnnxModel.h"

#include "kiln/IR/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;
using ::kiln::onnx_import::NodeContext;
using ::kiln::onnx_import::typeString;

std::string (::kiln::onnx_import::describeNode)(const onnx::NodeProto &node,
                                              int opset) {
  std::string name = node.name();
  if (name.empty())
    name = node.output_size() ? "<unnamed, output '" + node.output(0) + "'>"
                              : "<unnamed>";
  std::string op = ::kiln::onnx_import::schemaDomain(node.domain()).empty()
                       ? node.op_type()
                       : node.domain() + "." + node.op_type();
  return "node '" + name + "' (" + op + ", opset " + std::to_string(opset) +
         ")";
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(Importer &importer, const onnx::NodeProto &node,
                         Scope &scope, int version,
                         SmallVector<Value> inputs)
    : importer(importer), node(node), scope(scope), version(version),
      b(importer.builder),
      loc(NameLoc::get(StringAttr::get(
          &importer.context,
          node.name().empty() && node.output_size() ? node.output(0)
                                                    : node.name()))),
      inputs(std::move(inputs)) {}

LogicalResult NodeContext::fail(const llvm::Twine &message) {
  return importer.fail(describeNode(node, importer.nodeOpset(node)) + ": " +
                       message);
}

LogicalResult NodeContext::requireInputs(unsigned count) {
  for (unsigned i = 0; i < count; ++i)
    if (!hasInput(i))
      return fail("input " + llvm::Twine(i) + " is required");
  return success();
}

LogicalResult NodeContext::requireFloat(unsigned i) {
  if (!isFloat(input(i)))
    return fail("input " + llvm::Twine(i) + " has element type " +
                typeString(elementTypeOf(input(i))) +
                "; this op takes floats");
  return success();
}

const onnx::AttributeProto *NodeContext::attr(llvm::StringRef name) const {
  readAttributes.insert(name);
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::getInt(llvm::StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : defaultValue;
}

float NodeContext::getFloat(llvm::StringRef name, float defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : defaultValue;
}

std::string NodeContext::getString(llvm::StringRef name,
                                   llvm::StringRef defaultValue) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>>
NodeContext::getInts(llvm::StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<DenseElementsAttr> NodeContext::constantInput(unsigned i,
                                                        llvm::StringRef what) {
  if (!hasInput(i)) {
    (void)fail("input " + llvm::Twine(i) + " ('" + what + "') is required");
    return failure();
  }
  if (auto constant = input(i).getDefiningOp<ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
      if (dense.getNumElements() > kMaxConstantList) {
        (void)fail("input '" + what + "' ('" + node.input(i) + "') holds " +
                   llvm::Twine(dense.getNumElements()) +
                   " values; kiln reads it as a list of at most " +
                   llvm::Twine(kMaxConstantList));
        return failure();
      }
      return dense;
    }
  (void)fail("input '" + what + "' ('" + node.input(i) +
       "') is computed at run time; kiln compiles static shapes and needs it "
       "as a constant (an initializer, a Constant node or a computation on "
       "shapes)");
  return failure();
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          llvm::StringRef what) {
  FailureOr<DenseElementsAttr> attr = constantInput(i, what);
  if (failed(attr))
    return failure();
  SmallVector<int64_t> values;
  if (isa<IntegerType>(attr->getElementType())) {
    bool zeroExtend = attr->getElementType().isInteger(1) ||
                      attr->getElementType().isUnsignedInteger();
    for (const APInt &v : attr->getValues<APInt>())
      values.push_back(zeroExtend ? v.getZExtValue() : v.getSExtValue());
  } else {
    for (const APFloat &v : attr->getValues<APFloat>())
      values.push_back(static_cast<int64_t>(v.convertToDouble()));
  }
  return values;
}

FailureOr<SmallVector<double>> NodeContext::constantFloats(unsigned i,
                                                           llvm::StringRef what) {
  FailureOr<DenseElementsAttr> attr = constantInput(i, what);
  if (failed(attr))
    return failure();
  SmallVector<double> values;
  if (isa<IntegerType>(attr->getElementType())) {
    bool isUnsigned = attr->getElementType().isUnsignedInteger();
    for (const APInt &v : attr->getValues<APInt>())
      values.push_back(isUnsigned ? static_cast<double>(v.getZExtValue())
                                  : static_cast<double>(v.getSExtValue()));
  } else {
    for (const APFloat &v : attr->getValues<APFloat>()) {
      APFloat d = v;
      bool lost;
      d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(d.convertToDouble());
    }
  }
  return values;
}

