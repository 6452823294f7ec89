//===- ModelBuilder.cpp - Building IR from a checked .kfb model -----------===//
//
// Operations are created generically (by name, with their attributes as one
// dictionary, which creation splits into properties and discardable
// attributes), so the builder knows nothing about individual ops. Values are
// numbered in the same order the checks numbered them.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <vector>

namespace kiln {
namespace modelfile {

namespace {

class ModelBuilder {
public:
  explicit ModelBuilder(mlir::MLIRContext *context) : context(context) {}

  mlir::OwningOpRef<mlir::ModuleOp> build(const CheckedModel &model);

private:
  void buildFunction(const CheckedFunction &function, mlir::OpBuilder &builder);
  void buildRegion(const CheckedRegion &region, mlir::Region &target,
                   mlir::Location loc);
  void buildOperation(const CheckedOperation &op, mlir::Block &block);

  mlir::MLIRContext *context;
  /// The values of the function being built, by number, and the next number.
  std::vector<mlir::Value> values;
  uint32_t nextValue = 0;
};

mlir::OwningOpRef<mlir::ModuleOp>
ModelBuilder::build(const CheckedModel &model) {
  std::optional<llvm::StringRef> name;
  if (model.name)
    name = model.name.getValue();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(model.loc, name);
  for (mlir::NamedAttribute attribute : model.attributes)
    (*module)->setAttr(attribute.getName(), attribute.getValue());

  mlir::OpBuilder builder(context);
  builder.setInsertionPointToEnd(module->getBody());
  for (const CheckedFunction &function : model.functions)
    buildFunction(function, builder);
  return module;
}

void ModelBuilder::buildFunction(const CheckedFunction &function,
                                 mlir::OpBuilder &builder) {
  auto func = builder.create<mlir::func::FuncOp>(function.loc, function.name,
                                                 function.type);
  if (function.visibility)
    func.setSymVisibilityAttr(function.visibility);
  func.setAllArgAttrs(function.argumentAttributes);
  func.setAllResultAttrs(function.resultAttributes);
  for (mlir::NamedAttribute attribute : function.attributes)
    func->setAttr(attribute.getName(), attribute.getValue());
  if (!function.body)
    return;
  values.assign(function.numValues, mlir::Value());
  nextValue = 0;
  buildRegion(*function.body, func.getBody(), function.loc);
}

void ModelBuilder::buildRegion(const CheckedRegion &region,
                               mlir::Region &target, mlir::Location loc) {
  for (const CheckedBlock &checked : region.blocks) {
    auto *block = new mlir::Block();
    target.push_back(block);
    for (mlir::Type type : checked.argumentTypes)
      values[nextValue++] = block->addArgument(type, loc);
    for (const CheckedOperation &op : checked.operations)
      buildOperation(op, *block);
  }
}

void ModelBuilder::buildOperation(const CheckedOperation &op,
                                  mlir::Block &block) {
  llvm::SmallVector<mlir::Value, 4> operands;
  operands.reserve(op.operands.size());
  for (uint32_t value : op.operands)
    operands.push_back(values[value]);
  mlir::Operation *created = mlir::Operation::create(
      op.loc, op.name, op.resultTypes, operands,
      mlir::NamedAttrList(op.attributes), mlir::OpaqueProperties(nullptr),
      mlir::BlockRange(), op.regions.size());
  block.push_back(created);
  for (mlir::Value result : created->getResults())
    values[nextValue++] = result;
  for (auto [region, target] :
       llvm::zip_equal(op.regions, created->getRegions()))
    buildRegion(region, target, op.loc);
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> buildModule(const CheckedModel &model,
                                              mlir::MLIRContext *context) {
  return ModelBuilder(context).build(model);
}

} // namespace modelfile
} // namespace kiln
