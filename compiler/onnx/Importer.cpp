//===- Importer.cpp - ONNX graphs to kiln functions -----------------------===//
//
// A graph becomes a function in four steps:
//  1. the graph inputs that are not initializers become the arguments, with
//     their ONNX names as `kiln.name`; initializers become kiln.constant;
//  2. each node, in the graph's (topological) order, goes to the
//     translation its op type has in the OpTable, with the schema version
//     that the model's opset selects;
//  3. a node whose inputs are all constants is computed at import time with
//     the reference evaluator and replaced by its values: ONNX models
//     compute shapes with Shape, Gather, Concat... and kiln needs them as
//     constants;
//  4. the graph outputs are returned, and each is checked against the type
//     ONNX's shape inference gave it, so that a translation that built the
//     wrong shape is an error rather than a wrong answer.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "Emit.h"
#include "OnnxModel.h"

#include "kiln/Compiler/HostTensor.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/Onnx/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::kiln;
using ::kiln::onnx_import::Importer;
using ::kiln::onnx_import::NodeContext;
using ::kiln::onnx_import::OpTable;
using ::kiln::onnx_import::Scope;
using ::kiln::onnx_import::typeString;

namespace {

/// ONNX's name of a data type in lower case ("float", "float8e4m3fn"), or
/// "undefined" for a number that is none.
std::string dataTypeName(int32_t type) {
  if (!onnx::TensorProto_DataType_IsValid(type) ||
      type == onnx::TensorProto::UNDEFINED)
    return "undefined";
  return llvm::StringRef(onnx::TensorProto_DataType_Name(
                             static_cast<onnx::TensorProto_DataType>(type)))
      .lower();
}

/// The element types kiln takes from ONNX, by ONNX's names in ONNX's
/// order: "float, uint8, ... and bfloat16".
std::string supportedDataTypeNames() {
  std::vector<int32_t> codes;
  for (const ::kiln::ElementTypeInfo &info : ::kiln::kElementTypes)
    if (info.onnx)
      codes.push_back(info.onnx);
  std::sort(codes.begin(), codes.end());
  std::string names;
  for (size_t i = 0; i < codes.size(); ++i)
    names += (i == 0 ? "" : i + 1 == codes.size() ? " and " : ", ") +
             dataTypeName(codes[i]);
  return names;
}

bool isNondeterministic(llvm::StringRef opType) {
  return opType.starts_with("Random") || opType == "Bernoulli";
}

std::string sanitizeIdentifier(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (out.empty())
    return "main";
  if (llvm::isDigit(out[0]))
    out = "g_" + out;
  return out;
}

/// The little-endian bytes of a raw_data field as `count` values of T.
template <typename T>
std::vector<T> readRaw(const std::string &raw, int64_t count) {
  std::vector<T> values(count);
  if (count)
    std::memcpy(values.data(), raw.data(), count * sizeof(T));
  return values;
}

DenseElementsAttr hostTensorToAttr(const ::kiln::HostTensor &t) {
  RankedTensorType type = t.getType();
  Type element = type.getElementType();
  if (element.isF32()) {
    std::vector<float> values(t.f.begin(), t.f.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef<float>(values));
  }
  if (element.isF64())
    return DenseElementsAttr::get(type, llvm::ArrayRef<double>(t.f));
  if (auto ft = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (double v : t.f) {
      APFloat f(v);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  if (element.isInteger(1)) {
    SmallVector<bool> values;
    for (int64_t v : t.i)
      values.push_back(v != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  if (element.isInteger(32)) {
    std::vector<int32_t> values(t.i.begin(), t.i.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(values));
  }
  if (element.isInteger(64))
    return DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(t.i));
  // i8, i16 and ui8 ... ui64: the low bits of each stored value.
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t v : t.i)
    values.push_back(APInt(64, static_cast<uint64_t>(v)).trunc(width));
  return DenseElementsAttr::get(type, values);
}

std::string describeNode(const onnx::NodeProto &node, int opset) {
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

} // namespace

//===----------------------------------------------------------------------===//
// OpTable
//===----------------------------------------------------------------------===//

const OpTable &OpTable::get() {
  static const OpTable table = [] {
    OpTable t;
    ::kiln::onnx_import::registerElementwiseOps(t);
    ::kiln::onnx_import::registerShapeOps(t);
    ::kiln::onnx_import::registerReductionOps(t);
    ::kiln::onnx_import::registerLinalgOps(t);
    ::kiln::onnx_import::registerControlFlowOps(t);
    ::kiln::onnx_import::registerLossOps(t);
    ::kiln::onnx_import::registerResizeOps(t);
    ::kiln::onnx_import::registerNNOps(t);
    ::kiln::onnx_import::registerRecurrentOps(t);
    ::kiln::onnx_import::registerEinsumOps(t);
    ::kiln::onnx_import::registerScatterOps(t);
    ::kiln::onnx_import::registerGridSampleOps(t);
    ::kiln::onnx_import::registerDeformConvOps(t);
    ::kiln::onnx_import::registerRoiAlignOps(t);
    ::kiln::onnx_import::registerSignalOps(t);
    ::kiln::onnx_import::registerTrainingOps(t);
    ::kiln::onnx_import::registerMLOps(t);
    return t;
  }();
  return table;
}

bool ::kiln::onnx_import::isImportedOperator(const std::string &opType) {
  return OpTable::get().lookup(opType) != nullptr;
}

//===----------------------------------------------------------------------===//
// Importer
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext &context, const onnx::ModelProto &model,
                   llvm::StringRef sourceName)
    : context(context), builder(&context), sourceName(sourceName),
      model(model) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    if (schemaDomain(opset.domain()).empty())
      opsetVersion = static_cast<int>(opset.version());
    else
      domainVersions[opset.domain()] = static_cast<int>(opset.version());
  }
}

int Importer::nodeOpset(const onnx::NodeProto &node) const {
  if (schemaDomain(node.domain()).empty())
    return opsetVersion;
  return domainVersions.lookup(node.domain());
}

LogicalResult Importer::fail(const llvm::Twine &message) {
  if (error.empty())
    error = message.str();
  return failure();
}

FailureOr<Type> Importer::convertElementType(int32_t dataType,
                                             const llvm::Twine &what) {
  for (const ::kiln::ElementTypeInfo &info : ::kiln::kElementTypes)
    if (info.onnx && info.onnx == dataType)
      return ::kiln::getMlirElementType(info.type, &context);
  return fail(what + " has element type " + dataTypeName(dataType) +
              ", which kiln does not support (it has " +
              supportedDataTypeNames() + ")");
}

/// The floating-point format of an ONNX float8 or float4 type, or null.
const llvm::fltSemantics *narrowFloatSemantics(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT8E4M3FN:
    return &llvm::APFloat::Float8E4M3FN();
  case onnx::TensorProto::FLOAT8E4M3FNUZ:
    return &llvm::APFloat::Float8E4M3FNUZ();
  case onnx::TensorProto::FLOAT8E5M2:
    return &llvm::APFloat::Float8E5M2();
  case onnx::TensorProto::FLOAT8E5M2FNUZ:
    return &llvm::APFloat::Float8E5M2FNUZ();
  case onnx::TensorProto::FLOAT4E2M1:
    return &llvm::APFloat::Float4E2M1FN();
  default:
    return nullptr;
  }
}

FailureOr<DenseElementsAttr>
Importer::convertNarrowTensor(const onnx::TensorProto &tensor,
                              llvm::ArrayRef<int64_t> shape, int64_t count,
                              const llvm::Twine &what) {
  int32_t dataType = tensor.data_type();
  const llvm::fltSemantics *semantics = narrowFloatSemantics(dataType);
  unsigned bits = dataType == onnx::TensorProto::UINT4 ||
                          dataType == onnx::TensorProto::INT4 ||
                          dataType == onnx::TensorProto::FLOAT4E2M1
                      ? 4
                      : 8;
  // Raw data packs 8 / bits elements per byte, the first in the low bits;
  // int32_data holds one such byte per entry.
  int64_t perByte = 8 / bits, bytes = (count + perByte - 1) / perByte;
  SmallVector<uint8_t> packed;
  if (tensor.has_raw_data()) {
    for (char c : tensor.raw_data())
      packed.push_back(static_cast<uint8_t>(c));
  } else {
    for (int32_t v : tensor.int32_data())
      packed.push_back(static_cast<uint8_t>(v));
  }
  if (static_cast<int64_t>(packed.size()) != bytes)
    return fail(what + " holds " + llvm::Twine(packed.size()) +
                " bytes of data, but its " + llvm::Twine(count) + " " +
                dataTypeName(dataType) + " values need " +
                llvm::Twine(bytes));
  auto element = [&](int64_t i) -> uint8_t {
    uint8_t byte = packed[i / perByte];
    return bits == 8 ? byte : (i % 2 ? byte >> 4 : byte & 0xF);
  };
  if (semantics) {
    SmallVector<float> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(
          llvm::APFloat(*semantics, llvm::APInt(bits, element(i)))
              .convertToFloat());
    return DenseElementsAttr::get(
        RankedTensorType::get(shape, builder.getF32Type()),
        llvm::ArrayRef<float>(values));
  }
  bool isSigned = dataType == onnx::TensorProto::INT4;
  SmallVector<llvm::APInt> values;
  for (int64_t i = 0; i < count; ++i) {
    llvm::APInt v(4, element(i));
    values.push_back(isSigned ? v.sext(8) : v.zext(8));
  }
  Type type = IntegerType::get(&context, 8,
                               isSigned ? IntegerType::Signless
                                        : IntegerType::Unsigned);
  return DenseElementsAttr::get(RankedTensorType::get(shape, type), values);
}

FailureOr<DenseElementsAttr>
Importer::convertTensor(const onnx::TensorProto &tensor,
                        const llvm::Twine &what) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return fail(what + " keeps its data in an external file that was not "
                       "read");
  int32_t dataType = tensor.data_type();
  bool narrow = narrowFloatSemantics(dataType) ||
                dataType == onnx::TensorProto::UINT4 ||
                dataType == onnx::TensorProto::INT4;
  FailureOr<Type> element = Type();
  if (!narrow)
    element = convertElementType(dataType, what);
  if (failed(element))
    return failure();
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return fail(what + " has a negative dim");
    if (dim && count > (int64_t(1) << 40) / dim)
      return fail(what + " has too many elements");
    shape.push_back(dim);
    count *= dim;
  }
  if (narrow)
    return convertNarrowTensor(tensor, shape, count, what);
  auto type = RankedTensorType::get(shape, *element);
  int64_t elementBytes =
      element->isInteger(1) ? 1 : element->getIntOrFloatBitWidth() / 8;
  bool raw = tensor.has_raw_data();
  if (raw && static_cast<int64_t>(tensor.raw_data().size()) !=
                 count * elementBytes)
    return fail(what + " holds " + llvm::Twine(tensor.raw_data().size()) +
                " bytes of data, but its shape " + typeString(type) +
                " needs " + llvm::Twine(count * elementBytes));
  auto fieldSize = [&](int size) -> LogicalResult {
    if (size != count)
      return fail(what + " holds " + llvm::Twine(size) +
                  " values, but its shape " + typeString(type) + " needs " +
                  llvm::Twine(count));
    return success();
  };
  const std::string &bytes = tensor.raw_data();
  switch (dataType) {
  case onnx::TensorProto::FLOAT: {
    std::vector<float> values;
    if (raw)
      values = readRaw<float>(bytes, count);
    else if (succeeded(fieldSize(tensor.float_data_size())))
      values.assign(tensor.float_data().begin(), tensor.float_data().end());
    else
      return failure();
    return DenseElementsAttr::get(type, llvm::ArrayRef<float>(values));
  }
  case onnx::TensorProto::DOUBLE: {
    std::vector<double> values;
    if (raw)
      values = readRaw<double>(bytes, count);
    else if (succeeded(fieldSize(tensor.double_data_size())))
      values.assign(tensor.double_data().begin(), tensor.double_data().end());
    else
      return failure();
    return DenseElementsAttr::get(type, llvm::ArrayRef<double>(values));
  }
  case onnx::TensorProto::INT32: {
    std::vector<int32_t> values;
    if (raw)
      values = readRaw<int32_t>(bytes, count);
    else if (succeeded(fieldSize(tensor.int32_data_size())))
      values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
    else
      return failure();
    return DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(values));
  }
  case onnx::TensorProto::INT64: {
    std::vector<int64_t> values;
    if (raw)
      values = readRaw<int64_t>(bytes, count);
    else if (succeeded(fieldSize(tensor.int64_data_size())))
      values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
    else
      return failure();
    return DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(values));
  }
  case onnx::TensorProto::BOOL: {
    SmallVector<bool> values;
    if (raw) {
      for (char c : bytes)
        values.push_back(c != 0);
    } else if (succeeded(fieldSize(tensor.int32_data_size()))) {
      for (int32_t v : tensor.int32_data())
        values.push_back(v != 0);
    } else {
      return failure();
    }
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: {
    // Raw little-endian bytes, or one value per field: the 8- and 16-bit
    // types in int32_data, uint32 and uint64 in uint64_data (onnx.proto).
    unsigned width = element->getIntOrFloatBitWidth();
    SmallVector<APInt> values;
    if (raw) {
      for (int64_t n = 0; n < count; ++n) {
        uint64_t v = 0;
        std::memcpy(&v, bytes.data() + n * elementBytes, elementBytes);
        values.push_back(APInt(width, v));
      }
    } else if (width <= 16) {
      if (failed(fieldSize(tensor.int32_data_size())))
        return failure();
      for (int32_t v : tensor.int32_data())
        values.push_back(APInt(32, static_cast<uint32_t>(v)).trunc(width));
    } else {
      if (failed(fieldSize(tensor.uint64_data_size())))
        return failure();
      for (uint64_t v : tensor.uint64_data())
        values.push_back(APInt(64, v).trunc(width));
    }
    return DenseElementsAttr::get(type, values);
  }
  default: {
    // float16 and bfloat16: 16-bit patterns, raw or one per int32 field.
    std::vector<uint16_t> bits;
    if (raw)
      bits = readRaw<uint16_t>(bytes, count);
    else if (succeeded(fieldSize(tensor.int32_data_size())))
      for (int32_t v : tensor.int32_data())
        bits.push_back(static_cast<uint16_t>(v));
    else
      return failure();
    const llvm::fltSemantics &semantics =
        llvm::cast<FloatType>(*element).getFloatSemantics();
    SmallVector<APFloat> values;
    for (uint16_t b : bits)
      values.emplace_back(semantics, APInt(16, b));
    return DenseElementsAttr::get(type, values);
  }
  }
}

std::vector<std::string>
Importer::collectCapturedNames(const onnx::GraphProto &graph) {
  std::set<std::string> defined;
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &t : graph.initializer())
    defined.insert(t.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      defined.insert(out);
  std::vector<std::string> names;
  std::set<std::string> seen;
  auto use = [&](const std::string &name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second)
      names.push_back(name);
  };
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      use(in);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        for (const std::string &name : collectCapturedNames(attr.g()))
          use(name);
      for (const onnx::GraphProto &g : attr.graphs())
        for (const std::string &name : collectCapturedNames(g))
          use(name);
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    use(output.name());
  return names;
}

std::vector<std::pair<std::string, Value>>
Importer::bindConstantCaptures(llvm::ArrayRef<std::string> names,
                               const Scope &outer, Scope &inner) {
  std::vector<std::pair<std::string, Value>> passed;
  for (const std::string &name : names) {
    Value value = outer.lookup(name);
    if (!value)
      continue;
    if (auto constant = value.getDefiningOp<ConstantOp>()) {
      inner.bind(name, builder.clone(*constant)->getResult(0));
      continue;
    }
    passed.emplace_back(name, value);
  }
  return passed;
}

LogicalResult Importer::importInitializers(const onnx::GraphProto &graph,
                                           Scope &scope) {
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    FailureOr<DenseElementsAttr> attr =
        convertTensor(tensor, "initializer '" + tensor.name() + "'");
    if (failed(attr))
      return failure();
    Location loc = NameLoc::get(StringAttr::get(&context, tensor.name()));
    scope.bind(tensor.name(),
               builder.create<ConstantOp>(loc, attr->getType(), *attr));
  }
  return success();
}

LogicalResult Importer::importNodes(const onnx::GraphProto &graph,
                                    Scope &scope) {
  for (const onnx::NodeProto &node : graph.node())
    if (failed(importNode(node, scope)))
      return failure();
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, Scope &scope) {
  int opset = nodeOpset(node);
  std::string where = describeNode(node, opset);
  std::string domain = schemaDomain(node.domain());
  std::string qualified =
      domain.empty() ? node.op_type() : domain + "." + node.op_type();
  if (!domain.empty() && opset == 0)
    return fail(where + ": the model imports no opset of domain '" + domain +
                "'");
  int version = schemaSinceVersion(node.op_type(), domain, opset);
  if (version == 0)
    return fail(where + ": ONNX has no operator '" + qualified +
                "' at opset " + llvm::Twine(opset));
  OpHandler handler = OpTable::get().lookup(domain, node.op_type());
  if (!handler)
    return fail(where + ": operator " + qualified + "-" +
                llvm::Twine(version) + " is not supported by kiln");

  SmallVector<Value> inputs;
  bool allConstant = true;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(Value());
      continue;
    }
    Value value = scope.lookupLocal(name);
    if (!value)
      return fail(where + ": input '" + name +
                  "' is not defined by a graph input, an initializer or an "
                  "earlier node");
    if (!isa<RankedTensorType>(value.getType()))
      return fail(where + ": input '" + name + "' is not a tensor");
    allConstant &= static_cast<bool>(value.getDefiningOp<ConstantOp>());
    inputs.push_back(value);
  }

  Block *block = builder.getInsertionBlock();
  Operation *before = block->empty() ? nullptr : &block->back();
  NodeContext ctx(*this, node, scope, version, std::move(inputs));
  if (failed(handler(ctx))) {
    if (error.empty())
      (void)fail(where + ": could not be imported");
    return failure();
  }
  for (const onnx::AttributeProto &a : node.attribute())
    if (!ctx.readAttributes.contains(a.name()) &&
        !holdsSchemaDefault(node, a, opset))
      return fail(where + ": attribute '" + a.name() + "' of " +
                  node.op_type() + "-" + llvm::Twine(version) +
                  " is not supported by kiln");
  SmallVector<Value> &results = ctx.results;
  for (int i = results.size(); i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return fail(where + ": output " + llvm::Twine(i) + " ('" +
                  node.output(i) + "') is not supported");
  if (static_cast<int>(results.size()) > node.output_size())
    results.resize(node.output_size());
  if (allConstant && !isNondeterministic(node.op_type()))
    foldConstantNode(block, before, results);
  for (size_t i = 0; i < results.size(); ++i)
    if (!node.output(i).empty() && results[i])
      scope.bind(node.output(i), results[i]);
  return success();
}

void Importer::foldConstantNode(Block *block, Operation *before,
                                SmallVectorImpl<Value> &results) {
  // The ops the translation built, which use only each other and constants.
  SmallVector<Operation *> ops;
  for (Operation &op : llvm::make_range(
           before ? std::next(before->getIterator()) : block->begin(),
           block->end()))
    ops.push_back(&op);
  if (ops.empty() || results.empty())
    return;
  llvm::SmallPtrSet<Operation *, 16> built(ops.begin(), ops.end());
  SetVector<Operation *> constants;
  int64_t elements = 0;
  for (Operation *op : ops) {
    if (op->getNumRegions() || op->getDialect() != builder.getContext()
                                   ->getLoadedDialect<KilnDialect>())
      return;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        return;
      if (!built.count(def)) {
        if (!isa<ConstantOp>(def))
          return;
        constants.insert(def);
      }
    }
  }
  bool anyComputed = false;
  for (Value result : results) {
    if (!result)
      return;
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type)
      return;
    elements += type.getNumElements();
    anyComputed |= !result.getDefiningOp<ConstantOp>();
  }
  if (!anyComputed || elements > NodeContext::kMaxFoldedElements)
    return;
  (void)evaluateOps(ops, constants, results);
}

LogicalResult
Importer::evaluateOps(ArrayRef<Operation *> ops,
                      const SetVector<Operation *> &constants,
                      SmallVectorImpl<Value> &results) {
  // Evaluate a copy of them as a function of no arguments.
  OpBuilder tmp(&context);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(builder.getUnknownLoc());
  tmp.setInsertionPointToEnd(scratch->getBody());
  SmallVector<Type> resultTypes;
  for (Value r : results)
    resultTypes.push_back(r.getType());
  auto func = tmp.create<func::FuncOp>(builder.getUnknownLoc(), "fold",
                                       tmp.getFunctionType({}, resultTypes));
  tmp.setInsertionPointToEnd(func.addEntryBlock());
  IRMapping mapping;
  for (Operation *op : constants)
    tmp.clone(*op, mapping);
  for (Operation *op : ops)
    tmp.clone(*op, mapping);
  SmallVector<Value> mapped;
  for (Value r : results)
    mapped.push_back(mapping.lookupOrDefault(r));
  tmp.create<func::ReturnOp>(builder.getUnknownLoc(), mapped);
  llvm::Expected<std::vector<::kiln::HostTensor>> values =
      ::kiln::evaluate(func, {});
  if (!values) {
    // Left to run time, where compiled code gives the op's defined result
    // (e.g. of an integer division by zero).
    llvm::consumeError(values.takeError());
    return failure();
  }
  for (size_t i = 0; i < results.size(); ++i) {
    DenseElementsAttr attr = hostTensorToAttr((*values)[i]);
    results[i] = builder.create<ConstantOp>(results[i].getLoc(),
                                            attr.getType(), attr);
  }
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
  return success();
}

FailureOr<SmallVector<Value>>
Importer::evaluateConstants(ArrayRef<Value> values) {
  Block *block = builder.getInsertionBlock();
  Dialect *kiln = context.getLoadedDialect<KilnDialect>();
  // The ops computing `values`, back to constants.
  llvm::SmallPtrSet<Operation *, 16> seen;
  SetVector<Operation *> constants;
  SmallVector<Operation *> ops;
  SmallVector<Value> worklist(values.begin(), values.end());
  int64_t elements = 0;
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != block || def->getNumRegions() ||
        def->getDialect() != kiln)
      return failure();
    if (!seen.insert(def).second)
      continue;
    if (isa<ConstantOp>(def)) {
      constants.insert(def);
      continue;
    }
    ops.push_back(def);
    for (Value result : def->getResults())
      elements += llvm::cast<RankedTensorType>(result.getType()).getNumElements();
    llvm::append_range(worklist, def->getOperands());
  }
  if (elements > NodeContext::kMaxFoldedElements)
    return failure();
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Value> results(values.begin(), values.end());
  if (!ops.empty() && failed(evaluateOps(ops, constants, results)))
    return failure();
  return results;
}

OwningOpRef<ModuleOp> Importer::importModel(llvm::StringRef functionName,
                                            std::string &errorOut) {
  const onnx::GraphProto &graph = model.graph();
  Location fileLoc = FileLineColLoc::get(&context, sourceName, 1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  auto finish = [&]() -> OwningOpRef<ModuleOp> {
    errorOut = error;
    return nullptr;
  };

  std::set<std::string> initializerNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializerNames.count(input.name()))
      continue;
    const onnx::TypeProto_Tensor &tensorType = input.type().tensor_type();
    FailureOr<Type> element = convertElementType(
        tensorType.elem_type(), "graph input '" + input.name() + "'");
    if (failed(element))
      return finish();
    SmallVector<int64_t> shape;
    for (const onnx::TensorShapeProto_Dimension &dim :
         tensorType.shape().dim())
      shape.push_back(dim.dim_value());
    argTypes.push_back(RankedTensorType::get(shape, *element));
    argNames.push_back(input.name());
  }

  std::string name = functionName.empty() ? sanitizeIdentifier(graph.name())
                                          : functionName.str();
  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      fileLoc, name, builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  Scope scope;
  for (size_t i = 0; i < argNames.size(); ++i) {
    scope.bind(argNames[i], entry->getArgument(i));
    func.setArgAttr(i, "kiln.name", builder.getStringAttr(argNames[i]));
  }
  if (failed(importInitializers(graph, scope)) ||
      failed(importNodes(graph, scope)))
    return finish();

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = scope.lookupLocal(output.name());
    if (!value) {
      (void)fail("graph output '" + output.name() + "' is not computed by the graph");
      return finish();
    }
    // Check the type against ONNX's: a disagreement is an importer bug that
    // would otherwise surface as wrong results.
    const onnx::TypeProto &declared = output.type();
    if (declared.has_tensor_type()) {
      auto type = llvm::cast<RankedTensorType>(value.getType());
      FailureOr<Type> element = convertElementType(
          declared.tensor_type().elem_type(),
          "graph output '" + output.name() + "'");
      if (failed(element))
        return finish();
      bool mismatch = *element != type.getElementType();
      if (declared.tensor_type().has_shape()) {
        const onnx::TensorShapeProto &shape = declared.tensor_type().shape();
        mismatch |= shape.dim_size() != type.getRank();
        for (int d = 0; !mismatch && d < shape.dim_size(); ++d)
          mismatch |= shape.dim(d).has_dim_value() &&
                      shape.dim(d).dim_value() != type.getDimSize(d);
      }
      if (mismatch) {
        (void)fail("graph output '" + output.name() + "' was imported as " +
             typeString(type) +
             ", which disagrees with the type ONNX infers for it");
        return finish();
      }
    }
    results.push_back(value);
    resultTypes.push_back(value.getType());
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  for (size_t i = 0; i < results.size(); ++i)
    func.setResultAttr(i, "kiln.name",
                       builder.getStringAttr(graph.output(i).name()));

  // Constants that only fed folded nodes are dead now.
  SmallVector<Operation *> dead;
  func.walk<WalkOrder::PostOrder>([&](ConstantOp op) {
    if (op->use_empty())
      dead.push_back(op);
  });
  for (Operation *op : dead)
    op->erase();

  if (failed(verify(*module))) {
    (void)fail("the imported module does not verify (see the diagnostics above)");
    return finish();
  }
  return module;
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

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool ::kiln::parseOnnxInputShape(llvm::StringRef spec, std::string &name,
                               std::vector<int64_t> &shape,
                               std::string &error) {
  size_t eq = spec.rfind('=');
  if (eq == llvm::StringRef::npos || eq == 0) {
    error = "--input-shape '" + spec.str() +
            "' is not NAME=DIMS (e.g. input=1x3x224x224)";
    return false;
  }
  name = spec.take_front(eq).str();
  llvm::StringRef dims = spec.drop_front(eq + 1);
  shape.clear();
  if (dims.empty())
    return true;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0) {
      error = "--input-shape '" + spec.str() + "': '" + part.str() +
              "' is not a dim (a non-negative integer)";
      return false;
    }
    shape.push_back(dim);
  }
  return true;
}

auto ::kiln::importOnnxBytes(llvm::StringRef bytes,
                                            llvm::StringRef modelDir,
                                            llvm::StringRef sourceName,
                                            MLIRContext &context,
                                            const ::kiln::OnnxImportOptions &options,
                                            std::string &error)
    -> OwningOpRef<ModuleOp> {
  context.loadDialect<KilnDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (!::kiln::onnx_import::loadModel(bytes, modelDir, options, model, error)) {
    error = sourceName.str() + ": " + error;
    return nullptr;
  }
  Importer importer(context, model, sourceName);
  OwningOpRef<ModuleOp> module =
      importer.importModel(options.functionName, error);
  if (!module)
    error = sourceName.str() + ": " + error;
  return module;
}

auto ::kiln::importOnnxFile(llvm::StringRef path,
                                           MLIRContext &context,
                                           const ::kiln::OnnxImportOptions &options,
                                           std::string &error)
    -> OwningOpRef<ModuleOp> {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    error = path.str() + ": cannot be read: " + file.getError().message();
    return nullptr;
  }
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return ::kiln::importOnnxBytes((*file)->getBuffer(), dir, path, context, options,
                         error);
}

DenseElementsAttr (::kiln::readOnnxTensor)(llvm::StringRef bytes,
                                       MLIRContext &context, std::string &name,
                                       std::string &error) {
  onnx::TensorProto tensor;
  if (bytes.size() >= (size_t(1) << 31) ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX tensor: the protobuf data is truncated or "
            "corrupted";
    return {};
  }
  name = tensor.name();
  onnx::ModelProto none;
  Importer importer(context, none, "");
  FailureOr<DenseElementsAttr> attr =
      importer.convertTensor(tensor, "tensor '" + tensor.name() + "'");
  if (failed(attr)) {
    error = importer.error;
    return {};
  }
  return *attr;
}
