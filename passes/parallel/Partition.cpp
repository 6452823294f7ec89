//===- Partition.cpp - The kiln-partition pass ----------------------------===//
//
// Tensor parallelism (and its product with data parallelism) by sharding
// annotations, in the style of GSPMD: the function names a device mesh, its
// arguments and results say which dimension is split over which mesh axis,
// and the pass rewrites it into the program every rank runs, with the
// collectives that the splits need.
//
// A mesh of several axes is partitioned one axis at a time, innermost
// first, by the one-axis partitioner (AxisPartitioner.cpp): an axis's
// ranks are the groups of ranks that differ only in their position along
// it, and the collectives an earlier (inner) axis inserted act within
// groups that share the later axis's position, so they are rewritten as
// ops that leave the later axis's split dimension alone. With the mesh
// (dp, tp), the tensor-parallel rewrite comes first; the data-parallel one
// then splits the batch of that program, and its gradient all-reduces may
// be bucketed (`bucket-axis=dp`).
//
// The Megatron patterns come out of the one-axis rules: a column-parallel
// weight (split along its output features) makes its product split along
// them without communication, a row-parallel one contracts a split
// dimension into a partial sum, summed once where the whole value is
// needed; the backward pass mirrors it. A vocabulary split over the ranks
// turns log-softmax's max and sum into all-reduces of one value per row.
//
//===----------------------------------------------------------------------===//

#include "AxisPartitioner.h"
#include "AxisPartitionRules.h"
#include "TargetFunctions.h"

#include "kiln/Passes/Partition.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_PARTITION
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

int64_t Mesh::numRanks() const {
  int64_t n = 1;
  for (int64_t size : shape)
    n *= size;
  return n;
}

std::optional<size_t> Mesh::axisIndex(StringRef name) const {
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis == name)
      return i;
  return std::nullopt;
}

int64_t Mesh::position(size_t axis, int64_t rank) const {
  return (rank / meshAxisStride(shape, axis)) % shape[axis];
}

FailureOr<std::optional<Mesh>> mlir::kiln::readMesh(func::FuncOp func) {
  Attribute attr = func->getAttr(kMeshAttrName);
  if (!attr)
    return std::optional<Mesh>();
  auto fail = [&]() {
    return func.emitError("kiln-partition: @")
           << func.getSymName() << "'s " << kMeshAttrName << " ";
  };
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto axes = dict ? dict.getAs<ArrayAttr>("axes") : ArrayAttr();
  auto shape = dict ? dict.getAs<DenseI64ArrayAttr>("shape")
                    : DenseI64ArrayAttr();
  if (!axes || !shape || dict.size() != 2)
    return fail() << "must be {axes = [\"name\", ...], shape = array<i64: "
                     "size, ...>}, not "
                  << attr;
  if (axes.empty() || axes.size() != static_cast<size_t>(shape.size()))
    return fail() << "names " << axes.size() << " axes and "
                  << shape.size()
                  << " sizes; it needs one size per axis, and an axis";
  Mesh mesh;
  llvm::StringSet<> seen;
  for (auto [name, size] : llvm::zip_equal(axes, shape.asArrayRef())) {
    auto string = dyn_cast<StringAttr>(name);
    if (!string || string.getValue().empty())
      return fail() << "has the axis name " << name
                    << "; axis names are non-empty strings";
    if (!seen.insert(string.getValue()).second)
      return fail() << "names the axis \"" << string.getValue()
                    << "\" twice";
    if (size < 1)
      return fail() << "gives the axis \"" << string.getValue()
                    << "\" the size " << size << "; sizes are >= 1";
    mesh.axes.push_back(string.getValue().str());
    mesh.shape.push_back(size);
  }
  return std::optional<Mesh>(std::move(mesh));
}

void mlir::kiln::setMesh(func::FuncOp func, const Mesh &mesh) {
  Builder b(func.getContext());
  SmallVector<StringRef> axes(mesh.axes.begin(), mesh.axes.end());
  func->setAttr(kMeshAttrName,
                b.getDictionaryAttr(
                    {b.getNamedAttr("axes", b.getStrArrayAttr(axes)),
                     b.getNamedAttr("shape",
                                    b.getDenseI64ArrayAttr(mesh.shape))}));
}

static ArrayAttr shardingAttr(MLIRContext *context,
                              ArrayRef<std::string> axisPerDim) {
  SmallVector<StringRef> axes(axisPerDim.begin(), axisPerDim.end());
  return Builder(context).getStrArrayAttr(axes);
}

void mlir::kiln::setArgumentSharding(func::FuncOp func, unsigned index,
                                     ArrayRef<std::string> axisPerDim) {
  func.setArgAttr(index, kShardingAttrName,
                  shardingAttr(func.getContext(), axisPerDim));
}

void mlir::kiln::setResultSharding(func::FuncOp func, unsigned index,
                                   ArrayRef<std::string> axisPerDim) {
  func.setResultAttr(index, kShardingAttrName,
                     shardingAttr(func.getContext(), axisPerDim));
}

namespace {

/// Reads and checks the sharding annotation `attr` of a value of `type`
/// (`what` names it in errors: "argument #2"); null `attr` is whole.
FailureOr<TensorSharding> readSharding(func::FuncOp func, StringRef what,
                                       Attribute attr, Type type,
                                       const Mesh &mesh) {
  auto fail = [&]() {
    return func.emitError("kiln-partition: ")
           << what << " of @" << func.getSymName() << " ";
  };
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!attr)
    return TensorSharding(tensor ? tensor.getRank() : 0);
  auto dims = dyn_cast<ArrayAttr>(attr);
  if (!dims || !llvm::all_of(dims, [](Attribute a) {
        return isa<StringAttr>(a);
      }))
    return fail() << "has " << kShardingAttrName << " = " << attr
                  << "; it must list one mesh axis name per dimension (\"\" "
                     "for a dimension that is not split)";
  if (!tensor || !tensor.hasStaticShape())
    return fail() << "has type " << type
                  << ", which is not a statically shaped tensor to split";
  if (static_cast<int64_t>(dims.size()) != tensor.getRank())
    return fail() << "has " << kShardingAttrName << " = " << attr
                  << " with " << dims.size() << " entries, but its type "
                  << type << " has rank " << tensor.getRank();
  TensorSharding sharding(tensor.getRank());
  for (auto [d, entry] : llvm::enumerate(dims)) {
    StringRef name = cast<StringAttr>(entry).getValue();
    if (name.empty())
      continue;
    std::optional<size_t> axis = mesh.axisIndex(name);
    if (!axis) {
      InFlightDiagnostic diag = fail();
      diag << "splits dimension " << d << " over the axis \"" << name
           << "\", which the mesh does not have (its axes:";
      for (const std::string &a : mesh.axes)
        diag << " \"" << a << "\"";
      return diag << ")";
    }
    for (size_t e = 0; e < d; ++e)
      if (sharding[e] == axis)
        return fail() << "splits dimensions " << e << " and " << d
                      << " over the same axis \"" << name
                      << "\"; an axis splits one dimension of a value";
    int64_t size = tensor.getDimSize(d), parts = mesh.shape[*axis];
    if (size % parts != 0)
      return fail() << "splits dimension " << d << " of size " << size
                    << " over the axis \"" << name << "\" of " << parts
                    << " ranks, which do not divide it";
    sharding[d] = axis;
  }
  return sharding;
}

/// The dimension of `sharding` split over `axis`, if any.
std::optional<int64_t> dimOver(const TensorSharding &sharding, size_t axis) {
  for (auto [d, a] : llvm::enumerate(sharding))
    if (a == axis)
      return static_cast<int64_t>(d);
  return std::nullopt;
}

} // namespace

LogicalResult mlir::kiln::partitionFunction(func::FuncOp func,
                                            const PartitionConfig &config) {
  FailureOr<std::optional<Mesh>> read = readMesh(func);
  if (failed(read))
    return failure();
  if (!*read)
    return func.emitError("kiln-partition: @")
           << func.getSymName() << " has no " << kMeshAttrName
           << " annotation to partition it over (" << kMeshAttrName
           << " = {axes = [\"tp\"], shape = array<i64: 2>})";
  const Mesh &mesh = **read;
  if (!(config.bucketMb >= 0))
    return func.emitError("kiln-partition: bucket-mb must be >= 0, not ")
           << config.bucketMb;
  if (!config.bucketAxis.empty()) {
    std::optional<size_t> axis = mesh.axisIndex(config.bucketAxis);
    if (axis && *axis != 0)
      return func.emitError("kiln-partition: bucket-axis=")
             << config.bucketAxis << " must be the first axis of @"
             << func.getSymName() << "'s mesh (\"" << mesh.axes.front()
             << "\"), the one partitioned last";
  }
  if (func.isDeclaration())
    return func.emitError("kiln-partition: @")
           << func.getSymName() << " has no body to partition";
  if (auto module = func->getParentOfType<ModuleOp>();
      module && !SymbolTable::symbolKnownUseEmpty(func, module))
    return func.emitError("kiln-partition: @")
           << func.getSymName()
           << " is called in this module, and its callers would pass whole "
              "values; partition the caller instead (function=<name>)";

  // The shardings of the arguments, then of the results.
  SmallVector<TensorSharding> arguments, results;
  auto readAll = [&](StringRef what, TypeRange types,
                     function_ref<Attribute(unsigned)> attrOf,
                     SmallVector<TensorSharding> &into) {
    for (auto [i, type] : llvm::enumerate(types)) {
      FailureOr<TensorSharding> sharding = readSharding(
          func, (what + " #" + Twine(i)).str(), attrOf(i), type, mesh);
      if (failed(sharding))
        return failure();
      into.push_back(std::move(*sharding));
    }
    return success();
  };
  if (failed(readAll(
          "argument", func.getArgumentTypes(),
          [&](unsigned i) { return func.getArgAttr(i, kShardingAttrName); },
          arguments)) ||
      failed(readAll(
          "result", func.getResultTypes(),
          [&](unsigned i) { return func.getResultAttr(i, kShardingAttrName); },
          results)))
    return failure();

  // Innermost axis first: its collectives act within the groups of the
  // outer axes' rewrites. The first run also refuses, before changing
  // anything, a body of several blocks or one that already communicates.
  for (size_t axis = mesh.axes.size(); axis-- > 0;) {
    AxisPartitionConfig step;
    step.passName = "kiln-partition";
    step.size = mesh.shape[axis];
    step.groups = meshAxisGroups(mesh.shape, axis);
    step.stride = meshAxisStride(mesh.shape, axis);
    for (const TensorSharding &s : arguments)
      step.argumentDims.push_back(dimOver(s, axis));
    for (const TensorSharding &s : results)
      step.resultDims.push_back(dimOver(s, axis));
    step.bucket = config.bucketAxis == mesh.axes[axis];
    step.bucketMb = config.bucketMb;
    step.overlap = config.overlap;
    step.lookupCapacity = config.lookupCapacity;
    step.otherAxesCommunicate = axis + 1 != mesh.axes.size();
    if (failed(partitionAlongAxis(func, step)))
      return failure();
  }

  // Few large exchanges for the many small ones the rules wrote (one per
  // table of an embedding model).
  if (config.combine && config.bucketMb > 0)
    func.walk([&](Block *block) {
      combineCollectives(*block, static_cast<int64_t>(std::floor(
                                     config.bucketMb * 1024.0 * 1024.0)));
    });

  auto name = StringAttr::get(func.getContext(), kShardingAttrName);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.removeArgAttr(i, name);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.removeResultAttr(i, name);
  func->removeAttr(kMeshAttrName);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct PartitionPass : kiln::impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    PartitionBase::getDependentDialects(registry);
    registerAxisPartitionRules(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    PartitionConfig config;
    config.bucketAxis = bucketAxis;
    config.bucketMb = bucketMb;
    config.overlap = overlap;
    config.combine = combine;
    config.lookupCapacity = lookupCapacity;
    SmallVector<func::FuncOp> targets;
    if (!functionName.empty()) {
      FailureOr<SmallVector<func::FuncOp>> named =
          targetFunctions(module, functionName, "kiln-partition");
      if (failed(named))
        return signalPassFailure();
      targets = std::move(*named);
    } else {
      // Every function that names a mesh; a sharding annotation without
      // one is a mistake.
      for (auto f : module.getOps<func::FuncOp>()) {
        if (f->hasAttr(kMeshAttrName)) {
          targets.push_back(f);
          continue;
        }
        auto annotated = [&](ArrayAttr dicts) {
          return dicts && llvm::any_of(dicts, [](Attribute d) {
                   auto dict = dyn_cast<DictionaryAttr>(d);
                   return dict && dict.contains(kShardingAttrName);
                 });
        };
        if (annotated(f.getArgAttrsAttr()) || annotated(f.getResAttrsAttr())) {
          f.emitError("kiln-partition: @")
              << f.getSymName() << " has " << kShardingAttrName
              << " annotations but no " << kMeshAttrName
              << " to split them over";
          return signalPassFailure();
        }
      }
    }
    for (func::FuncOp f : targets)
      if (failed(partitionFunction(f, config)))
        return signalPassFailure();
  }
};
} // namespace
