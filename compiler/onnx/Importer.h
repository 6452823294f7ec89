//===- Importer.h - The ONNX importer's shared state ------------*- C++ -*-===//
//
// The pieces every op translation uses:
//  - Scope: ONNX value names to SSA values, one per graph or subgraph;
//  - Importer: the module being built, graph and node import, constants;
//  - NodeContext: what an op translation sees of one node (its inputs,
//    attributes with ONNX's defaults, the schema version in effect) and how
//    it reports an error or its results;
//  - OpTable: op type to translation; each Ops*.cpp file registers its ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_IMPORTER_H
#define KILN_COMPILER_ONNX_IMPORTER_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>

namespace kiln {
namespace onnx_import {

class NodeContext;

/// "node 'NAME' (OP, opset N)": how errors name a node (NodeContext.cpp).
std::string describeNode(const onnx::NodeProto &node, int opset);

/// The values an ONNX graph (or subgraph) defines, by name. A subgraph's
/// scope has its parent's scope as parent only for finding the values it
/// captures (see Importer::bindCaptures); kiln's regions are isolated from
/// above, so an op in a region only ever uses values of its own scope.
class Scope {
public:
  explicit Scope(Scope *parent = nullptr) : parent(parent) {}
  void bind(llvm::StringRef name, mlir::Value value) { values[name] = value; }
  /// The value `name` has in this scope only.
  mlir::Value lookupLocal(llvm::StringRef name) const {
    auto it = values.find(name);
    return it == values.end() ? mlir::Value() : it->second;
  }
  /// The value `name` has in this scope or the nearest enclosing one.
  mlir::Value lookup(llvm::StringRef name) const {
    for (const Scope *s = this; s; s = s->parent)
      if (mlir::Value v = s->lookupLocal(name))
        return v;
    return {};
  }
  Scope *getParent() const { return parent; }

private:
  Scope *parent;
  llvm::StringMap<mlir::Value> values;
};

using OpHandler = mlir::LogicalResult (*)(NodeContext &);

/// Op type to translation: the default ONNX domain's under their names,
/// another domain's (ai.onnx.ml, ai.onnx.preview.training) under
/// "DOMAIN:OpType".
class OpTable {
public:
  void add(llvm::StringRef opType, OpHandler handler) {
    handlers[opType] = handler;
  }
  void add(llvm::StringRef domain, llvm::StringRef opType,
           OpHandler handler) {
    handlers[(domain + ":" + opType).str()] = handler;
  }
  OpHandler lookup(llvm::StringRef opType) const {
    auto it = handlers.find(opType);
    return it == handlers.end() ? nullptr : it->second;
  }
  OpHandler lookup(llvm::StringRef domain, llvm::StringRef opType) const {
    return domain.empty() ? lookup(opType)
                          : lookup((domain + ":" + opType).str());
  }
  static const OpTable &get();

private:
  llvm::StringMap<OpHandler> handlers;
};

/// The axis of GatherElements and ScatterElements, checked with their
/// indices (same rank as data, an integer type, no larger than data
/// outside the axis); failure with the error reported.
mlir::FailureOr<int64_t> elementsAxis(NodeContext &ctx, mlir::Value data,
                                      mlir::Value indices);

/// strides and dilations (1 by default) and the low and high pads (0 by
/// default) of a windowed op with `n` spatial dims, checked for length and
/// sign; failure with the error reported. Defined with the convolutions
/// (NNOps.cpp).
struct StridedWindow {
  llvm::SmallVector<int64_t> strides, dilations, lo, hi;
};
mlir::FailureOr<StridedWindow> readStridedWindow(NodeContext &ctx, int64_t n);

void registerElementwiseOps(OpTable &table);
void registerShapeOps(OpTable &table);
void registerReductionOps(OpTable &table);
void registerLinalgOps(OpTable &table);
void registerControlFlowOps(OpTable &table);
void registerLossOps(OpTable &table);
void registerResizeOps(OpTable &table);
void registerNNOps(OpTable &table);
void registerRecurrentOps(OpTable &table);
void registerEinsumOps(OpTable &table);
void registerScatterOps(OpTable &table);
void registerGridSampleOps(OpTable &table);
void registerDeformConvOps(OpTable &table);
void registerRoiAlignOps(OpTable &table);
void registerSignalOps(OpTable &table);
void registerTrainingOps(OpTable &table);
void registerMLOps(OpTable &table);

class Importer {
public:
  Importer(mlir::MLIRContext &context, const onnx::ModelProto &model,
           llvm::StringRef sourceName);

  /// Builds the module: one public function for the main graph.
  mlir::OwningOpRef<mlir::ModuleOp> importModel(llvm::StringRef functionName,
                                                std::string &error);

  /// The kiln element type for an ONNX TensorProto data type, or failure
  /// (with the error set) for types kiln does not have. `what` names the
  /// value in the message.
  mlir::FailureOr<mlir::Type> convertElementType(int32_t dataType,
                                                 const llvm::Twine &what);

  /// The literal of an ONNX tensor (raw or typed fields), with its size
  /// checked against its shape.
  mlir::FailureOr<mlir::DenseElementsAttr>
  convertTensor(const onnx::TensorProto &tensor, const llvm::Twine &what);
  /// A float8, float4, int4 or uint4 tensor (weights quantized below 8
  /// bits) decoded at compile time: floats exactly as f32, int4 as i8 and
  /// uint4 as ui8 (kiln has no narrower types).
  mlir::FailureOr<mlir::DenseElementsAttr>
  convertNarrowTensor(const onnx::TensorProto &tensor,
                      llvm::ArrayRef<int64_t> shape, int64_t count,
                      const llvm::Twine &what);

  /// Imports the nodes of a graph, in order, at the builder's insertion
  /// point, defining their outputs in `scope`.
  mlir::LogicalResult importNodes(const onnx::GraphProto &graph,
                                  Scope &scope);

  /// Binds a subgraph's initializers in `scope` as constants at the
  /// builder's insertion point.
  mlir::LogicalResult importInitializers(const onnx::GraphProto &graph,
                                         Scope &scope);

  /// The names a subgraph uses (directly or in its own subgraphs) but does
  /// not define, in order of first use.
  static std::vector<std::string>
  collectCapturedNames(const onnx::GraphProto &graph);

  /// A subgraph's captured names that `outer` defines as constants are bound
  /// in `inner` to clones of those constants at the builder's insertion
  /// point; the others are returned as (name, outer value) for the caller to
  /// pass into its region.
  std::vector<std::pair<std::string, mlir::Value>>
  bindConstantCaptures(llvm::ArrayRef<std::string> names, const Scope &outer,
                       Scope &inner);

  /// Records an error; always returns failure. The first error wins.
  mlir::LogicalResult fail(const llvm::Twine &message);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  /// The model's opset of the default domain.
  int opsetVersion = 0;
  /// The model's opsets of the other domains it imports.
  llvm::StringMap<int> domainVersions;
  /// The opset a node's domain has in the model (0 where the model does
  /// not import the domain).
  int nodeOpset(const onnx::NodeProto &node) const;
  std::string sourceName;
  std::string error;

  /// The values of `values`, computed by region-free kiln ops of the
  /// current block from constants only, as constants built at the
  /// builder's insertion point (the reference evaluator computes them);
  /// failure where another value is reached or the evaluator fails. The
  /// ops that computed them are erased where nothing else uses them.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateConstants(llvm::ArrayRef<mlir::Value> values);

private:
  mlir::LogicalResult importNode(const onnx::NodeProto &node, Scope &scope);
  /// Replaces the outputs of a node whose inputs are all constants by their
  /// values, computed with the reference evaluator.
  void foldConstantNode(mlir::Block *block, mlir::Operation *before,
                        llvm::SmallVectorImpl<mlir::Value> &results);
  /// `results` computed by `ops` (in order) from `constants`, with the
  /// reference evaluator, as constants; failure where it fails. The ops
  /// are erased where nothing else uses them.
  mlir::LogicalResult
  evaluateOps(llvm::ArrayRef<mlir::Operation *> ops,
              const llvm::SetVector<mlir::Operation *> &constants,
              llvm::SmallVectorImpl<mlir::Value> &results);

  const onnx::ModelProto &model;
};

/// What a translation sees of one node.
class NodeContext {
public:
  NodeContext(Importer &importer, const onnx::NodeProto &node, Scope &scope,
              int version, llvm::SmallVector<mlir::Value> inputs);

  Importer &importer;
  const onnx::NodeProto &node;
  Scope &scope;
  /// The since-version of the op's schema in effect for the model's opset:
  /// translations test it for per-version behaviour.
  int version;
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// Inputs as the node lists them; an omitted optional input is null.
  unsigned numInputs() const { return inputs.size(); }
  bool hasInput(unsigned i) const { return i < inputs.size() && inputs[i]; }
  mlir::Value input(unsigned i) const { return inputs[i]; }
  llvm::ArrayRef<mlir::Value> getInputs() const { return inputs; }
  unsigned numOutputs() const { return node.output_size(); }
  /// Whether output `i` is listed and named (optional outputs may be "").
  bool hasOutput(unsigned i) const {
    return static_cast<int>(i) < node.output_size() && !node.output(i).empty();
  }

  /// The node's attribute `name`, or null. Every attribute a translation
  /// reads through these accessors is recorded: one it never reads must be
  /// absent or hold its schema's default (Importer::importNode checks), so
  /// that an attribute a newer opset added is refused, not ignored.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t defaultValue) const;
  float getFloat(llvm::StringRef name, float defaultValue) const;
  std::string getString(llvm::StringRef name,
                        llvm::StringRef defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name) const;

  /// Input `i` as a constant; failure (with an error naming `what`) when it
  /// is computed at run time: kiln needs shapes and the like at compile
  /// time. The inputs read this way are short lists (a shape, axes, pads,
  /// scales, sequence lengths): one of more than kMaxConstantList values
  /// is refused rather than expanded (a splat stores a huge one in a few
  /// bytes).
  mlir::FailureOr<mlir::DenseElementsAttr> constantInput(unsigned i,
                                                         llvm::StringRef what);
  static constexpr int64_t kMaxConstantList = 1 << 16;
  /// Constants the importer computes (folded nodes, Range, EyeLike) hold at
  /// most this many elements; a larger one is an error or stays a run-time
  /// computation, never a multi-gigabyte allocation at compile time.
  static constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  constantInts(unsigned i, llvm::StringRef what);
  mlir::FailureOr<llvm::SmallVector<double>>
  constantFloats(unsigned i, llvm::StringRef what);

  /// Reports an error on this node: `node 'NAME' (OP, opset N): message`.
  mlir::LogicalResult fail(const llvm::Twine &message);
  /// Requires input `i` (reports it missing otherwise).
  mlir::LogicalResult requireInputs(unsigned count);
  /// Reports an error unless the element type of input `i` is one of the
  /// given kinds (floats, ints, bool).
  mlir::LogicalResult requireFloat(unsigned i);

  /// The node's results, in output order; outputs beyond them must be
  /// unnamed.
  llvm::SmallVector<mlir::Value> results;
  mlir::LogicalResult setResults(mlir::Value value) {
    results.assign({value});
    return mlir::success();
  }
  mlir::LogicalResult setResults(llvm::ArrayRef<mlir::Value> values) {
    results.assign(values.begin(), values.end());
    return mlir::success();
  }

  /// The attributes read through attr() and the getters.
  mutable llvm::StringSet<> readAttributes;

private:
  llvm::SmallVector<mlir::Value> inputs;
};

} // namespace onnx_import
} // namespace kiln

#endif // KILN_COMPILER_ONNX_IMPORTER_H
