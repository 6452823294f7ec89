//===- Importer.cpp - ONNX graphs to kiln functions -----------------------===//
//
// The graph import; tensors are decoded in TensorDecoding.cpp and the
// node helpers translations use are in NodeContext.cpp.
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
