//===- OnnxModel.cpp - Reading, checking and shape-inferring a model ------===//
//
// The steps, in order:
//  1. parse the protobuf bytes (a truncated or corrupted file fails here);
//  2. inline external data: each tensor whose data lives in another file
//     has its bytes read into raw_data, from a file that must stay inside
//     the model's folder;
//  3. apply the user's input shapes, then require a value for every input
//     dim, since kiln compiles static shapes only;
//  4. run ONNX's checker and its shape inference in strict mode, so that a
//     malformed graph is reported by ONNX's own rules before any kiln op is
//     built;
//  5. inline the model's local functions, and expand each operator kiln
//     has no translation for but ONNX defines as a function of other
//     operators (Attention, RotaryEmbedding, GroupNormalization, ...) into
//     that function's body, with ONNX's own inliner; shape inference runs
//     again over the expanded graph.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

#include "BoundInputs.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/inliner/inliner.h"
#include "onnx/shape_inference/implementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <exception>
#include <map>
#include <set>

using namespace kiln;
using namespace kiln::onnx_import;

namespace {

/// Protobuf refuses messages past 2 GiB; so do we, before parsing.
constexpr size_t kMaxModelBytes = size_t(1) << 31;

/// Reads the external data of `tensor` into its raw_data.
bool inlineExternalData(onnx::TensorProto &tensor, llvm::StringRef modelDir,
                        std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    const std::string &key = entry.key();
    if (key == "location") {
      location = entry.value();
    } else if (key == "offset" || key == "length") {
      int64_t value;
      if (llvm::StringRef(entry.value()).getAsInteger(10, value) || value < 0) {
        error = "tensor '" + tensor.name() + "': external data " + key +
                " '" + entry.value() + "' is not a non-negative integer";
        return false;
      }
      (key == "offset" ? offset : length) = value;
    }
  }
  std::string what = "tensor '" + tensor.name() + "': external data";
  if (location.empty()) {
    error = what + " has no location";
    return false;
  }
  if (modelDir.empty()) {
    error = what + " in '" + location +
            "', but the model was not read from a file";
    return false;
  }
  // The location is relative to the model's folder and may not leave it:
  // no absolute path, no '..', and no symbolic link that points outside.
  llvm::StringRef rel(location);
  if (llvm::sys::path::is_absolute(rel) || rel.starts_with("/") ||
      rel.starts_with("\\")) {
    error = what + " location '" + location +
            "' is an absolute path; it must be inside the model's folder";
    return false;
  }
  for (auto it = llvm::sys::path::begin(rel), e = llvm::sys::path::end(rel);
       it != e; ++it) {
    if (*it == "..") {
      error = what + " location '" + location +
              "' leaves the model's folder";
      return false;
    }
  }
  llvm::SmallString<256> path(modelDir);
  llvm::sys::path::append(path, rel);
  llvm::SmallString<256> realDir, realPath;
  if (llvm::sys::fs::real_path(modelDir, realDir) ||
      llvm::sys::fs::real_path(path, realPath)) {
    error = what + " file '" + std::string(path) + "' cannot be opened";
    return false;
  }
  if (!llvm::StringRef(realPath).starts_with(std::string(realDir) + "/")) {
    error = what + " location '" + location +
            "' resolves outside the model's folder";
    return false;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(realPath, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    error = what + " file '" + std::string(path) +
            "' cannot be read: " + file.getError().message();
    return false;
  }
  size_t size = (*file)->getBufferSize();
  if (static_cast<uint64_t>(offset) > size ||
      (length >= 0 && static_cast<uint64_t>(offset + length) > size)) {
    error = what + " range [" + std::to_string(offset) + ", " +
            (length >= 0 ? std::to_string(offset + length) : "end") +
            ") is outside file '" + location + "' of " +
            std::to_string(size) + " bytes";
    return false;
  }
  size_t count = length >= 0 ? static_cast<size_t>(length) : size - offset;
  tensor.set_raw_data((*file)->getBufferStart() + offset, count);
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return true;
}

bool inlineGraphData(onnx::GraphProto &graph, llvm::StringRef modelDir,
                     std::string &error);

bool inlineTensorData(onnx::TensorProto &tensor, llvm::StringRef modelDir,
                      std::string &error) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
    return true;
  return inlineExternalData(tensor, modelDir, error);
}

bool inlineAttributeData(onnx::AttributeProto &attr, llvm::StringRef modelDir,
                         std::string &error) {
  if (attr.has_t() && !inlineTensorData(*attr.mutable_t(), modelDir, error))
    return false;
  for (onnx::TensorProto &t : *attr.mutable_tensors())
    if (!inlineTensorData(t, modelDir, error))
      return false;
  if (attr.has_g() && !inlineGraphData(*attr.mutable_g(), modelDir, error))
    return false;
  for (onnx::GraphProto &g : *attr.mutable_graphs())
    if (!inlineGraphData(g, modelDir, error))
      return false;
  return true;
}

bool inlineGraphData(onnx::GraphProto &graph, llvm::StringRef modelDir,
                     std::string &error) {
  for (onnx::TensorProto &t : *graph.mutable_initializer())
    if (!inlineTensorData(t, modelDir, error))
      return false;
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute())
      if (!inlineAttributeData(attr, modelDir, error))
        return false;
  return true;
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

/// Applies the user's shapes to the graph inputs and checks that every
/// input dim then has a value.
bool applyInputShapes(onnx::GraphProto &graph,
                      const OnnxImportOptions &options, std::string &error) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto &t : graph.initializer())
    initializers.insert(t.name());
  std::set<std::string> seen;
  for (onnx::ValueInfoProto &input : *graph.mutable_input()) {
    if (initializers.count(input.name()))
      continue;
    const std::string &name = input.name();
    if (!input.type().has_tensor_type()) {
      error = "graph input '" + name +
              "' is not a tensor (sequences, maps and optionals are not "
              "supported)";
      return false;
    }
    onnx::TypeProto_Tensor *type = input.mutable_type()->mutable_tensor_type();
    auto given = options.inputShapes.find(name);
    if (given != options.inputShapes.end()) {
      seen.insert(name);
      const std::vector<int64_t> &shape = given->second;
      if (type->has_shape() &&
          type->shape().dim_size() != static_cast<int>(shape.size())) {
        error = "--input-shape " + name + "=" + formatShape(shape) +
                " has rank " + std::to_string(shape.size()) +
                ", but the model's input '" + name + "' has rank " +
                std::to_string(type->shape().dim_size());
        return false;
      }
      for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] < 0) {
          error = "--input-shape " + name + ": dim " + std::to_string(d) +
                  " is negative";
          return false;
        }
        if (type->has_shape() && type->shape().dim(d).has_dim_value() &&
            type->shape().dim(d).dim_value() != shape[d]) {
          error = "--input-shape " + name + "=" + formatShape(shape) +
                  " gives dim " + std::to_string(d) + " the value " +
                  std::to_string(shape[d]) + ", but the model fixes it to " +
                  std::to_string(type->shape().dim(d).dim_value());
          return false;
        }
      }
      onnx::TensorShapeProto *proto = type->mutable_shape();
      proto->clear_dim();
      for (int64_t dim : shape)
        proto->add_dim()->set_dim_value(dim);
      continue;
    }
    if (!type->has_shape()) {
      error = "graph input '" + name +
              "' has no shape; give it with --input-shape " + name +
              "=<dims, e.g. 1x3x224x224>";
      return false;
    }
    for (int d = 0; d < type->shape().dim_size(); ++d) {
      const onnx::TensorShapeProto_Dimension &dim = type->shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() >= 0)
        continue;
      std::string symbol =
          dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "";
      error = "graph input '" + name + "' dim " + std::to_string(d) + symbol +
              " has no value; kiln compiles static shapes: give the whole "
              "shape with --input-shape " +
              name + "=<dims, e.g. 1x3x224x224>";
      return false;
    }
  }
  for (const auto &[name, shape] : options.inputShapes) {
    if (!seen.count(name)) {
      error = "--input-shape names '" + name +
              "', which is not an input of the graph";
      return false;
    }
  }
  return true;
}

/// Turns the bound graph inputs into initializers. Before IR version 4
/// every initializer must also be listed as an input, so there the input
/// stays (the importer skips inputs that have an initializer).
bool bindInputs(onnx::GraphProto &graph, int64_t irVersion,
                const std::map<std::string, std::string> &boundInputs,
                std::string &error) {
  for (const auto &binding : boundInputs) {
    const std::string &name = binding.first, &bytes = binding.second;
    auto *inputs = graph.mutable_input();
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const onnx::ValueInfoProto &v) {
                             return v.name() == name;
                           });
    if (it == inputs->end()) {
      error = "a value is bound to '" + name +
              "', which is not an input of the graph";
      return false;
    }
    onnx::TensorProto tensor;
    if (bytes.size() >= kMaxModelBytes ||
        !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      error = "the value bound to input '" + name +
              "' is not a valid ONNX tensor";
      return false;
    }
    if (it->type().has_tensor_type() &&
        it->type().tensor_type().elem_type() != tensor.data_type()) {
      error = "the value bound to input '" + name +
              "' has another element type than the input";
      return false;
    }
    tensor.set_name(name);
    bool replaced = false;
    for (onnx::TensorProto &existing : *graph.mutable_initializer())
      if (existing.name() == name) {
        existing = tensor;
        replaced = true;
      }
    if (!replaced)
      *graph.add_initializer() = tensor;
    if (irVersion >= 4)
      inputs->erase(it);
  }
  return true;
}

/// ONNX's shape inference of the windowed ops (Conv, ConvTranspose, the
/// pools), Gemm and LayerNormalization trusts the ranks and attributes it is
/// given: in 1.12 it read out of bounds when they disagree (a rank-2 input
/// to ConvTranspose dereferences null) and divided by a stride of 0; in
/// 1.23 Einsum's loops forever on a stray character of the equation. This
/// registry hands out those schemas with an inference function that checks
/// the ranks and attributes first and reports a shape inference error, then
/// runs ONNX's own. Ops the
/// importer has no translation for get no shape inference at all: their
/// inference functions are the least exercised, and the import stops at
/// them anyway with an error that names them.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    bool defaultDomain = schemaDomain(domain).empty();
    bool imported = defaultDomain && isImportedOperator(key);
    if (!schema || (imported && !isWindowed(key) && !hasOwnGuard(key)))
      return schema;
    std::string id = domain + "." + key + "/" +
                     std::to_string(schema->SinceVersion());
    auto it = guarded.find(id);
    if (it != guarded.end())
      return &it->second;
    onnx::OpSchema copy = *schema;
    onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
    if (key == "MeanVarianceNormalization") {
      // ONNX 1.23 infers it from its function body, whose Constant takes
      // the node's `axes` and has no value when the attribute is left at
      // its default; the result has the input's type and shape.
      copy.TypeAndShapeInferenceFunction([](onnx::InferenceContext &ctx) {
        onnx::propagateShapeAndTypeFromFirstInput(ctx);
      });
    } else if (!imported || key == "QLinearConv" || key == "STFT") {
      // Never imported, so its outputs need no shapes; the importer
      // reports the op when it reaches the node. ONNX 1.12's QLinearConv
      // inference rejects valid models ("input W has rank 0" for a rank-4
      // W); ONNX 1.23's STFT inference reads `onesided` with a default of
      // 0 where the schema's is 1, and so rejects a default (one-sided)
      // STFT whose output is declared. The importer checks those nodes and
      // infers their results itself.
      copy.TypeAndShapeInferenceFunction([](onnx::InferenceContext &) {});
    } else {
      copy.TypeAndShapeInferenceFunction(
          [original, key](onnx::InferenceContext &ctx) {
            if (key == "Gemm")
              checkGemmRanks(ctx);
            else if (key == "LayerNormalization")
              checkLayerNormRank(ctx);
            else if (key == "Einsum") {
              // The importer reads spaces itself (EinsumOps.cpp) and infers
              // the result; ONNX's inference would loop on them.
              if (!checkEinsumEquation(ctx))
                return;
            } else
              checkWindowedRanks(ctx);
            if (original)
              original(ctx);
          });
    }
    return &guarded.emplace(id, std::move(copy)).first->second;
  }

private:
  /// Imported ops other than the windowed ones whose inference this
  /// registry guards or replaces.
  static bool hasOwnGuard(const std::string &op) {
    return op == "Gemm" || op == "LayerNormalization" || op == "Einsum" ||
           op == "MeanVarianceNormalization" || op == "STFT";
  }

  static bool isWindowed(const std::string &op) {
    return op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" ||
           op == "QLinearConv" || op == "MaxPool" || op == "AveragePool" ||
           op == "LpPool" || op == "MaxUnpool" || op == "MaxRoiPool";
  }

  /// Gemm's inference reads dim 1 of A and B whatever their ranks.
  static void checkGemmRanks(onnx::InferenceContext &ctx) {
    for (size_t i = 0; i < 2 && i < ctx.getNumInputs(); ++i) {
      const onnx::TypeProto *type = ctx.getInputType(i);
      if (type && type->has_tensor_type() &&
          type->tensor_type().has_shape() &&
          type->tensor_type().shape().dim_size() != 2)
        fail_shape_inference("input ", i == 0 ? "A" : "B", " has rank ",
                             type->tensor_type().shape().dim_size(),
                             "; Gemm multiplies matrices (rank 2)");
    }
  }

  /// Einsum's inference (ONNX 1.23) never moves past a character of a term
  /// that is neither a letter nor part of "...": an equation with a stray
  /// '-', '.' or space makes it loop forever. Refuses any other character,
  /// and a '-' or '.' outside "->" and "..."; returns false (skip ONNX's
  /// inference) for an equation with spaces.
  static bool checkEinsumEquation(onnx::InferenceContext &ctx) {
    const onnx::AttributeProto *attr = ctx.getAttribute("equation");
    if (!attr || !attr->has_s())
      return true;
    const std::string &eq = attr->s();
    bool spaces = false;
    for (size_t i = 0; i < eq.size(); ++i) {
      char c = eq[i];
      if (llvm::isAlpha(c) || c == ',')
        continue;
      if (c == ' ') {
        spaces = true;
        continue;
      }
      if (c == '-' && i + 1 < eq.size() && eq[i + 1] == '>') {
        ++i;
        continue;
      }
      if (c == '.' && eq.compare(i, 3, "...") == 0) {
        i += 2;
        continue;
      }
      fail_shape_inference("equation '", eq, "' has the character '",
                           std::string(1, c), "' at ", i,
                           "; an Einsum equation holds letters, ',', '...' "
                           "and one '->'");
    }
    return !spaces;
  }

  /// LayerNormalization's inference indexes X's dims by `axis` unchecked.
  static void checkLayerNormRank(onnx::InferenceContext &ctx) {
    const onnx::TypeProto *type = ctx.getInputType(0);
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
      return;
    int64_t rank = type->tensor_type().shape().dim_size();
    const onnx::AttributeProto *axis = ctx.getAttribute("axis");
    int64_t a = axis ? axis->i() : -1;
    if (rank < 1 || a < -rank || a >= rank)
      fail_shape_inference("axis ", a, " is out of range for X of rank ", rank);
  }

  static void checkWindowedRanks(onnx::InferenceContext &ctx) {
    auto rankOf = [&](size_t i) -> int {
      if (ctx.getNumInputs() <= i || !ctx.getInputType(i) ||
          !ctx.getInputType(i)->has_tensor_type() ||
          !ctx.getInputType(i)->tensor_type().has_shape())
        return -1;
      return ctx.getInputType(i)->tensor_type().shape().dim_size();
    };
    int x = rankOf(0);
    if (x < 0)
      return;
    if (x < 3)
      fail_shape_inference("input X has rank ", x,
                           "; it needs a batch, a channel and at least one "
                           "spatial dim");
    size_t spatial = static_cast<size_t>(x - 2);
    for (const char *name : {"kernel_shape", "strides", "dilations",
                             "output_padding", "output_shape"}) {
      const onnx::AttributeProto *a = ctx.getAttribute(name);
      if (a && static_cast<size_t>(a->ints_size()) != spatial &&
          !(std::string(name) == "output_shape" &&
            static_cast<size_t>(a->ints_size()) == spatial + 2))
        fail_shape_inference("attribute ", name, " has ", a->ints_size(),
                             " entries for ", spatial, " spatial dims");
      // ONNX divides by strides and dilations without checking them.
      bool positive = std::string(name) == "kernel_shape" ||
                      std::string(name) == "strides" ||
                      std::string(name) == "dilations";
      if (a && positive)
        for (int64_t v : a->ints())
          if (v < 1)
            fail_shape_inference("attribute ", name, " has the entry ", v,
                                 "; it must be positive");
    }
    if (const onnx::AttributeProto *group = ctx.getAttribute("group"))
      if (group->i() < 1)
        fail_shape_inference("attribute group is ", group->i(),
                             "; it must be positive");
    if (const onnx::AttributeProto *pads = ctx.getAttribute("pads"))
      if (static_cast<size_t>(pads->ints_size()) != 2 * spatial)
        fail_shape_inference("attribute pads has ", pads->ints_size(),
                             " entries for ", spatial, " spatial dims");
    int w = rankOf(1);
    // Input 1 is the weight of Conv and ConvTranspose (of the pools only
    // MaxUnpool has one, and it is not imported).
    if (w >= 0 && w != x)
      fail_shape_inference("input W has rank ", w, " but X has rank ", x);
  }

  mutable std::map<std::string, onnx::OpSchema> guarded;
};

/// An ONNX function can call others, so expansion goes on while it finds
/// something to expand; this bounds it (the deepest chain in ONNX 1.23's
/// schemas is two levels).
constexpr int kMaxExpansionRounds = 8;

/// The domain of the model-local functions that stand for expanded ops
/// between their creation and their inlining.
constexpr const char *kExpansionDomain = "kiln.expansion";

/// Inlines the model's local functions (ONNX IR 8 and up) into the graph,
/// converting a function written against another version of the default
/// opset to the model's. A function that cannot be inlined (it imports
/// another version of a custom domain) is reported by name.
bool inlineLocalFunctions(onnx::ModelProto &model, std::string &error) {
  if (model.functions_size() == 0)
    return true;
  try {
    onnx::inliner::InlineLocalFunctions(model, /*convert_version=*/true);
  } catch (const std::exception &e) {
    error = std::string("ONNX inliner: ") + e.what();
    return false;
  }
  if (model.functions_size() != 0) {
    const onnx::FunctionProto &left = model.functions(0);
    error = "local function '" + left.domain() + "." + left.name() +
            "' cannot be inlined: it imports an opset version of a custom "
            "domain other than the model's";
    return false;
  }
  return true;
}

/// The type of every value of `graph` and its subgraphs that shape
/// inference (or the model) gives one, initializers included.
void collectTypes(const onnx::GraphProto &graph,
                  std::map<std::string, onnx::TypeProto> &types) {
  for (const auto *list : {&graph.input(), &graph.value_info(),
                           &graph.output()})
    for (const onnx::ValueInfoProto &value : *list)
      if (value.has_type())
        types[value.name()] = value.type();
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    onnx::TypeProto type;
    auto *tensorType = type.mutable_tensor_type();
    tensorType->set_elem_type(tensor.data_type());
    auto *shape = tensorType->mutable_shape();
    for (int64_t d : tensor.dims())
      shape->add_dim()->set_dim_value(d);
    types[tensor.name()] = type;
  }
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectTypes(attr.g(), types);
      for (const onnx::GraphProto &g : attr.graphs())
        collectTypes(g, types);
    }
}

/// Rewrites the function ops of one graph (and its subgraphs) into calls
/// of new local functions holding their bodies; see expandFunctionOps.
class FunctionOpExpander {
public:
  FunctionOpExpander(onnx::ModelProto &model, int opsetVersion)
      : model(model), opsetVersion(opsetVersion) {
    collectTypes(model.graph(), types);
  }

  void expandGraph(onnx::GraphProto &graph) {
    for (onnx::NodeProto &node : *graph.mutable_node()) {
      for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
        if (attr.has_g())
          expandGraph(*attr.mutable_g());
        for (onnx::GraphProto &g : *attr.mutable_graphs())
          expandGraph(g);
      }
      expandNode(node);
    }
  }

  onnx::inliner::FunctionIdVector expanded;

private:
  void expandNode(onnx::NodeProto &node) {
    bool defaultDomain = schemaDomain(node.domain()).empty();
    if (!defaultDomain || isImportedOperator(node.op_type()))
      return;
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), opsetVersion, "");
    if (!schema)
      return;
    onnx::FunctionProto body;
    if (const onnx::FunctionProto *fixed =
            schema->HasFunction()
                ? schema->GetFunction(opsetVersion, /*validate=*/true)
                : nullptr) {
      body = *fixed;
    } else if (schema->HasContextDependentFunction()) {
      std::vector<onnx::TypeProto> inputTypes;
      for (const std::string &input : node.input()) {
        if (input.empty()) {
          inputTypes.emplace_back();
          continue;
        }
        auto it = types.find(input);
        // Wait for a later round, after the producer is expanded.
        if (it == types.end())
          return;
        inputTypes.push_back(it->second);
      }
      onnx::FunctionBodyBuildContextImpl context(node, inputTypes);
      if (!schema->BuildContextDependentFunction(context, body, opsetVersion))
        return;
    } else {
      return;
    }
    // The body runs at the model's version of the default opset: GetFunction
    // has checked that none of its ops changed in between.
    for (onnx::OperatorSetIdProto &import : *body.mutable_opset_import())
      if (schemaDomain(import.domain()).empty())
        import.set_version(opsetVersion);
    // An attribute the node leaves out takes the schema's default, which
    // the ops of the body need not share: bind it explicitly.
    for (const auto &entry : schema->attributes()) {
      const std::string &name = entry.first;
      const onnx::OpSchema::Attribute &attr = entry.second;
      bool given = llvm::any_of(node.attribute(), [&](const auto &a) {
        return a.name() == name;
      });
      if (!given &&
          attr.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        onnx::AttributeProto *bound = node.add_attribute();
        *bound = attr.default_value;
        bound->set_name(name);
      }
    }
    // The body's nodes are named after the node they expand, so that an
    // error in one of them says where it came from.
    std::string label =
        (node.name().empty() ? "<unnamed " + node.op_type() + ", output '" +
                                   (node.output_size() ? node.output(0) : "") +
                                   "'>"
                             : node.name()) +
        " expanded";
    int step = 0;
    for (onnx::NodeProto &inner : *body.mutable_node())
      inner.set_name(label + ", step " + std::to_string(++step) +
                     (inner.name().empty() ? "" : " '" + inner.name() + "'"));
    std::string name = node.op_type() + "." + std::to_string(counter++);
    body.set_name(name);
    body.set_domain(kExpansionDomain);
    node.set_domain(kExpansionDomain);
    node.set_op_type(name);
    *model.add_functions() = std::move(body);
    expanded.emplace_back(kExpansionDomain, name);
  }

  onnx::ModelProto &model;
  int opsetVersion;
  std::map<std::string, onnx::TypeProto> types;
  int counter = 0;
};

/// The inliner makes node names unique with a "__N" suffix; the names of
/// expanded bodies are unique already and read better without it.
void dropInlinerSuffixes(onnx::GraphProto &graph) {
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    llvm::StringRef name = node.name();
    size_t cut = name.rfind("__");
    if (name.contains(" expanded, step ") && cut != llvm::StringRef::npos &&
        cut + 2 < name.size() &&
        llvm::all_of(name.drop_front(cut + 2), llvm::isDigit))
      node.set_name(name.take_front(cut).str());
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        dropInlinerSuffixes(*attr.mutable_g());
      for (onnx::GraphProto &g : *attr.mutable_graphs())
        dropInlinerSuffixes(g);
    }
  }
}

/// Expands each op of the default domain that the importer does not
/// translate and ONNX defines as a function (a fixed body, or one built
/// from the node's attributes and input types) into that body, by making it
/// a call of a new local function and inlining that with ONNX's inliner.
/// Returns how many ops were expanded, or -1 with `error` set.
int expandFunctionOps(onnx::ModelProto &model, std::string &error) {
  int opsetVersion = 0;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (schemaDomain(opset.domain()).empty())
      opsetVersion = static_cast<int>(opset.version());
  if (opsetVersion == 0)
    return 0;
  try {
    FunctionOpExpander expander(model, opsetVersion);
    expander.expandGraph(*model.mutable_graph());
    if (expander.expanded.empty())
      return 0;
    int count = static_cast<int>(expander.expanded.size());
    auto selected =
        onnx::inliner::FunctionIdSet::Create(std::move(expander.expanded));
    onnx::inliner::InlineSelectedLocalFunctions(model, *selected);
    dropInlinerSuffixes(*model.mutable_graph());
    return count;
  } catch (const std::exception &e) {
    error = std::string("ONNX function expansion: ") + e.what();
    return -1;
  }
}

} // namespace

bool onnx_import::loadModel(llvm::StringRef bytes, llvm::StringRef modelDir,
                            const OnnxImportOptions &options,
                            onnx::ModelProto &model, std::string &error) {
  if (bytes.size() >= kMaxModelBytes) {
    error = "the model is " + std::to_string(bytes.size()) +
            " bytes; ONNX files over 2 GiB must keep their weights as "
            "external data";
    return false;
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX model: the protobuf data is truncated or "
            "corrupted";
    return false;
  }
  if (!model.has_graph()) {
    error = "not a valid ONNX model: it has no graph";
    return false;
  }
  if (!inlineGraphData(*model.mutable_graph(), modelDir, error))
    return false;
  for (onnx::FunctionProto &function : *model.mutable_functions())
    for (onnx::NodeProto &node : *function.mutable_node())
      for (onnx::AttributeProto &attr : *node.mutable_attribute())
        if (!inlineAttributeData(attr, modelDir, error))
          return false;
  std::map<std::string, std::string> bound = options.boundInputs;
  if (!resolveBoundValues(model.graph(), options.boundInputValues, bound,
                          error) ||
      !bindInputs(*model.mutable_graph(), model.ir_version(), bound,
                  error) ||
      !applyInputShapes(*model.mutable_graph(), options, error))
    return false;
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    error = std::string("ONNX checker: ") + e.what();
    return false;
  }
  if (!inlineLocalFunctions(model, error))
    return false;
  // Each round infers shapes, then expands the function ops whose input
  // types are known; an expansion can reveal further function ops (or give
  // a waiting one its input types), so a few rounds may be needed.
  for (int round = 0;; ++round) {
    try {
      onnx::ShapeInferenceOptions inference(/*check_type=*/true,
                                            /*strict_mode=*/1,
                                            /*data_prop=*/true);
      GuardedSchemaRegistry registry;
      onnx::shape_inference::InferShapes(model, &registry, inference);
    } catch (const std::exception &e) {
      error = std::string("ONNX shape inference: ") + e.what();
      return false;
    }
    if (round == kMaxExpansionRounds)
      break;
    int expanded = expandFunctionOps(model, error);
    if (expanded < 0)
      return false;
    if (expanded == 0)
      break;
  }
  return true;
}

int onnx_import::schemaSinceVersion(const std::string &opType,
                                    const std::string &domain,
                                    int opsetVersion) {
  try {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(opType, opsetVersion, domain);
    return schema ? schema->SinceVersion() : 0;
  } catch (const std::exception &) {
    return 0;
  }
}

bool onnx_import::holdsSchemaDefault(const onnx::NodeProto &node,
                                     const onnx::AttributeProto &attr,
                                     int opsetVersion) {
  try {
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        node.op_type(), opsetVersion, schemaDomain(node.domain()));
    if (!schema)
      return false;
    auto it = schema->attributes().find(attr.name());
    if (it == schema->attributes().end())
      return false;
    const onnx::AttributeProto &def = it->second.default_value;
    if (def.type() == onnx::AttributeProto::UNDEFINED)
      return false;
    // Compare the values alone: the names and documentation may differ.
    onnx::AttributeProto given = attr, expected = def;
    for (onnx::AttributeProto *a : {&given, &expected}) {
      a->clear_name();
      a->clear_doc_string();
      a->clear_ref_attr_name();
      if (a->type() == onnx::AttributeProto::UNDEFINED)
        a->set_type(def.type());
    }
    return given.SerializeAsString() == expected.SerializeAsString();
  } catch (const std::exception &) {
    return false;
  }
}
