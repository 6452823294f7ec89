//===- ModelChecks.cpp - Checking a .kfb model before building IR ---------===//
//
// One pass over the verified FlatBuffer in file order. It numbers values as
// the schema describes, tracks which are visible (a value becomes visible
// where it is defined and stops being visible when its block ends; results
// become visible after their op, i.e. not inside its own regions), and
// decodes types and attributes into the context as it goes. Each table,
// vector and string is claimed when first reached, so a file that
// references one from two places is refused rather than decoded twice, and
// vectors and strings claim all their bytes, so that they cannot overlap
// either: otherwise a small file could describe any number of long operand
// lists or strings and make the reader build arbitrarily much IR.
//
//===----------------------------------------------------------------------===//

#include "ModelChecks.h"

#include "ElementTypes.h"
#include "Locations.h"
#include "OpArity.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>

namespace kiln {
namespace modelfile {

namespace {

// Scalars in vectors are copied out with memcpy (see readScalars), which
// reads the file's little-endian encoding correctly only on such hosts.
static_assert(llvm::sys::IsLittleEndianHost,
              "the .kfb reader assumes a little-endian host");

using flatbuffers::Offset;
using flatbuffers::Vector;
template <typename T> using TableVector = Vector<Offset<T>>;

/// func.func attributes that have their own fields in a Function.
constexpr llvm::StringLiteral kFunctionFieldAttributes[] = {
    "sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"};

/// The argument or result attribute stored as a Port's name.
constexpr llvm::StringLiteral kPortNameAttribute = "kiln.name";

llvm::StringRef toStringRef(const flatbuffers::String *string) {
  return string ? llvm::StringRef(string->data(), string->size())
                : llvm::StringRef();
}

/// Copies the elements of a vector of scalars. The FlatBuffers verifier
/// checks the alignment of a vector's length but not of its elements, so
/// 8-byte elements are not read in place.
template <typename T>
llvm::SmallVector<T> readScalars(const Vector<T> *vector) {
  llvm::SmallVector<T> values;
  if (!vector || vector->size() == 0)
    return values;
  values.resize(vector->size());
  std::memcpy(values.data(), vector->Data(), values.size() * sizeof(T));
  return values;
}

/// "a, b" from two steps of a path, either of which may be empty.
std::string joinSteps(llvm::StringRef first, llvm::StringRef second) {
  if (first.empty())
    return second.str();
  if (second.empty())
    return first.str();
  return (first + ", " + second).str();
}

/// ", step" for the detail argument of fail(), or "" for an empty step.
std::string detailOf(llvm::StringRef step) {
  return step.empty() ? std::string() : (", " + step).str();
}

std::string typeText(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

class ModelChecker {
public:
  ModelChecker(const kfb::Model &model, const uint8_t *base,
               mlir::MLIRContext *context, llvm::StringRef fileName,
               std::string &error)
      : model(model), base(base), context(context), error(error),
        result(moduleLocation(fileName, context)),
        diagnostics(context, [this](mlir::Diagnostic &diagnostic) {
          if (diagnosticText.empty())
            diagnosticText = diagnostic.str();
          return mlir::success();
        }) {}

  std::optional<CheckedModel> run();

private:
  /// Records "<path><detail>: <message>" as the error; returns false.
  bool fail(mlir::Location loc, const llvm::Twine &detail,
            const llvm::Twine &message);

  /// Marks the table at \p table (null is fine) as used, failing if it was
  /// used before.
  bool claim(const void *table, mlir::Location loc, const llvm::Twine &detail);
  /// Marks the bytes of a vector or string (null is fine) as used, failing
  /// if any of them were used before.
  template <typename T>
  bool claim(const Vector<T> *vector, mlir::Location loc,
             const llvm::Twine &detail) {
    return !vector || claimBytes(vector,
                                 sizeof(flatbuffers::uoffset_t) +
                                     size_t(vector->size()) * sizeof(T),
                                 loc, detail);
  }
  bool claim(const flatbuffers::String *string, mlir::Location loc,
             const llvm::Twine &detail) {
    return !string ||
           claimBytes(string,
                      sizeof(flatbuffers::uoffset_t) + string->size() + 1, loc,
                      detail);
  }
  bool claimBytes(const void *start, size_t size, mlir::Location loc,
                  const llvm::Twine &detail);
  bool failShared(const void *object, mlir::Location loc,
                  const llvm::Twine &detail);

  /// Gives the next value number, not yet visible.
  uint32_t defineValue();

  bool checkFunction(const kfb::Function *function, unsigned index,
                     llvm::StringMap<unsigned> &functionIndices);
  bool checkPorts(const TableVector<kfb::Port> *ports, mlir::Location loc,
                  llvm::StringRef kind,
                  llvm::SmallVectorImpl<mlir::Type> &types,
                  llvm::SmallVectorImpl<mlir::DictionaryAttr> &attributes);
  bool checkRegion(const kfb::Region *region, mlir::Location ownerLoc,
                   const std::string &regionStep, CheckedRegion &out);
  bool checkBlock(const kfb::Block *block, mlir::Location ownerLoc,
                  const std::string &blockStep, CheckedBlock &out);
  bool checkOperation(const kfb::Operation *op, mlir::Location ownerLoc,
                      const std::string &blockStep, unsigned index,
                      CheckedBlock &block,
                      llvm::SmallVectorImpl<uint32_t> &definedInBlock);

  mlir::RankedTensorType checkTensorType(const kfb::TensorType *type,
                                         mlir::Location loc,
                                         const llvm::Twine &detail);
  bool checkTensorTypes(const TableVector<kfb::TensorType> *types,
                        mlir::Location loc, const llvm::Twine &detail,
                        llvm::SmallVectorImpl<mlir::Type> &out);

  /// Decodes a list of named attributes into a dictionary; null on failure.
  mlir::DictionaryAttr
  checkAttributeList(const TableVector<kfb::NamedAttribute> *list,
                     mlir::Location loc, const llvm::Twine &detail);
  /// Decodes one attribute of the given union kind; null on failure.
  mlir::Attribute checkAttribute(kfb::AttributeValue kind, const void *value,
                                 mlir::Location loc, const llvm::Twine &detail);
  mlir::Attribute checkInteger(const kfb::IntegerAttr &attr, mlir::Location loc,
                               const llvm::Twine &detail);
  mlir::Attribute checkFloat(const kfb::FloatAttr &attr, mlir::Location loc,
                             const llvm::Twine &detail);
  mlir::Attribute checkElements(const kfb::DenseElementsAttr &attr,
                                mlir::Location loc, const llvm::Twine &detail);
  mlir::Attribute checkFunctionType(const kfb::FunctionTypeAttr &attr,
                                    mlir::Location loc,
                                    const llvm::Twine &detail);
  mlir::Attribute checkArray(const kfb::ArrayAttr &attr, mlir::Location loc,
                             const llvm::Twine &detail);

  /// Runs the ODS checks of \p op's inherent attributes on \p attributes.
  bool checkInherentAttributes(mlir::RegisteredOperationName op,
                               mlir::DictionaryAttr attributes,
                               mlir::Location loc, const llvm::Twine &detail);

  const kfb::Model &model;
  const uint8_t *base;
  mlir::MLIRContext *context;
  std::string &error;
  CheckedModel result;

  /// Tables in use, by address, and the byte ranges [start, end) of the
  /// vectors and strings in use, by start.
  llvm::DenseSet<const void *> claimedTables;
  std::map<uintptr_t, uintptr_t> claimedRanges;

  /// Constants already decoded, by buffer index, with the type and splat
  /// flag they were decoded for.
  struct DecodedBuffer {
    mlir::RankedTensorType type;
    bool splat;
    mlir::DenseElementsAttr value;
  };
  llvm::DenseMap<uint32_t, DecodedBuffer> decodedBuffers;

  /// Per function: how many values are defined so far, and which are
  /// visible at the current position.
  uint32_t numValues = 0;
  std::vector<uint8_t> visible;

  unsigned nextOrder = 0;

  /// The first diagnostic emitted by an ODS attribute check.
  std::string diagnosticText;
  mlir::ScopedDiagnosticHandler diagnostics;
};

bool ModelChecker::fail(mlir::Location loc, const llvm::Twine &detail,
                        const llvm::Twine &message) {
  error = (describeLocation(loc) + detail + ": " + message).str();
  return false;
}

bool ModelChecker::claim(const void *table, mlir::Location loc,
                         const llvm::Twine &detail) {
  if (!table || claimedTables.insert(table).second)
    return true;
  return failShared(table, loc, detail);
}

bool ModelChecker::claimBytes(const void *start, size_t size,
                              mlir::Location loc, const llvm::Twine &detail) {
  auto begin = reinterpret_cast<uintptr_t>(start);
  uintptr_t end = begin + size;
  auto next = claimedRanges.lower_bound(begin);
  if (next != claimedRanges.end() && next->first < end)
    return failShared(start, loc, detail);
  if (next != claimedRanges.begin() && std::prev(next)->second > begin)
    return failShared(start, loc, detail);
  claimedRanges.emplace_hint(next, begin, end);
  return true;
}

bool ModelChecker::failShared(const void *object, mlir::Location loc,
                              const llvm::Twine &detail) {
  size_t offset = static_cast<const uint8_t *>(object) - base;
  return fail(loc, detail,
              "the data at byte offset " + llvm::Twine(offset) +
                  " is also used by an earlier part of the file (a .kfb "
                  "file may not share tables, vectors or strings)");
}

uint32_t ModelChecker::defineValue() {
  visible.push_back(0);
  return numValues++;
}

std::optional<CheckedModel> ModelChecker::run() {
  mlir::Location loc = result.loc;
  result.locationOrder[loc.getAsOpaquePointer()] = nextOrder++;
  claimedTables.insert(&model);

  if (const flatbuffers::String *name = model.name()) {
    if (!claim(name, loc, ", name"))
      return std::nullopt;
    result.name = mlir::StringAttr::get(context, toStringRef(name));
  }
  result.attributes = checkAttributeList(model.attributes(), loc, "");
  if (!result.attributes)
    return std::nullopt;
  if (result.attributes.contains(mlir::SymbolTable::getSymbolAttrName())) {
    fail(loc, ", attribute 'sym_name'",
         "the module's name has its own field and may not appear among its "
         "attributes");
    return std::nullopt;
  }
  std::optional<mlir::RegisteredOperationName> moduleOp =
      mlir::RegisteredOperationName::lookup(mlir::ModuleOp::getOperationName(),
                                            context);
  if (moduleOp &&
      !checkInherentAttributes(*moduleOp, result.attributes, loc, ""))
    return std::nullopt;

  if (!claim(model.buffers(), loc, ", buffers"))
    return std::nullopt;

  if (const auto *functions = model.functions()) {
    if (!claim(functions, loc, ", functions"))
      return std::nullopt;
    llvm::StringMap<unsigned> functionIndices;
    result.functions.reserve(functions->size());
    for (unsigned i = 0, e = functions->size(); i != e; ++i)
      if (!checkFunction(functions->Get(i), i, functionIndices))
        return std::nullopt;
  }
  return std::move(result);
}

bool ModelChecker::checkFunction(const kfb::Function *function, unsigned index,
                                 llvm::StringMap<unsigned> &functionIndices) {
  mlir::Location moduleLoc = result.loc;
  std::string where = ", function #" + std::to_string(index);
  if (!claim(function, moduleLoc, where) ||
      !claim(function->name(), moduleLoc, where))
    return false;
  llvm::StringRef name = toStringRef(function->name());
  if (name.empty())
    return fail(moduleLoc, where, "the function has an empty name");
  mlir::Location loc = functionLocation(moduleLoc, name);
  auto [previous, inserted] = functionIndices.try_emplace(name, index);
  if (!inserted)
    return fail(loc, "",
                "function #" + llvm::Twine(index) +
                    " has the same name as function #" +
                    llvm::Twine(previous->second));

  CheckedFunction &checked = result.functions.emplace_back(loc);
  result.locationOrder[loc.getAsOpaquePointer()] = nextOrder++;
  checked.name = name.str();

  if (const flatbuffers::String *visibility = function->visibility()) {
    if (!claim(visibility, loc, ", visibility"))
      return false;
    llvm::StringRef text = toStringRef(visibility);
    if (text != "public" && text != "private" && text != "nested")
      return fail(loc, "",
                  "unknown visibility " + quoteName(text) +
                      " (expected 'public', 'private' or 'nested')");
    checked.visibility = mlir::StringAttr::get(context, text);
  }

  llvm::SmallVector<mlir::Type> inputTypes, outputTypes;
  if (!checkPorts(function->inputs(), loc, "input", inputTypes,
                  checked.argumentAttributes) ||
      !checkPorts(function->outputs(), loc, "output", outputTypes,
                  checked.resultAttributes))
    return false;
  checked.type = mlir::FunctionType::get(context, inputTypes, outputTypes);

  checked.attributes = checkAttributeList(function->attributes(), loc, "");
  if (!checked.attributes)
    return false;
  for (llvm::StringRef reserved : kFunctionFieldAttributes)
    if (checked.attributes.contains(reserved))
      return fail(loc, ", attribute " + quoteName(reserved),
                  "this attribute has its own field in a function and may "
                  "not appear among the function's attributes");

  if (const kfb::Region *body = function->body()) {
    numValues = 0;
    visible.clear();
    if (!checkRegion(body, loc, "", checked.body.emplace()))
      return false;
    checked.numValues = numValues;
  }
  return true;
}

bool ModelChecker::checkPorts(
    const TableVector<kfb::Port> *ports, mlir::Location loc,
    llvm::StringRef kind, llvm::SmallVectorImpl<mlir::Type> &types,
    llvm::SmallVectorImpl<mlir::DictionaryAttr> &attributes) {
  if (!ports)
    return true;
  if (!claim(ports, loc, ", " + kind + "s"))
    return false;
  for (unsigned i = 0, e = ports->size(); i != e; ++i) {
    const kfb::Port *port = ports->Get(i);
    std::string where = (", " + kind + " #" + llvm::Twine(i)).str();
    if (!claim(port, loc, where) || !claim(port->name(), loc, where))
      return false;
    if (port->name())
      where += " (" + quoteName(toStringRef(port->name())) + ")";

    mlir::RankedTensorType type = checkTensorType(port->type(), loc, where);
    if (!type)
      return false;
    mlir::DictionaryAttr portAttributes =
        checkAttributeList(port->attributes(), loc, where);
    if (!portAttributes)
      return false;
    if (const flatbuffers::String *name = port->name()) {
      if (portAttributes.contains(kPortNameAttribute))
        return fail(loc, where,
                    "it has both a name and a 'kiln.name' attribute");
      mlir::NamedAttrList list(portAttributes);
      list.set(kPortNameAttribute,
               mlir::StringAttr::get(context, toStringRef(name)));
      portAttributes = list.getDictionary(context);
    }
    types.push_back(type);
    attributes.push_back(portAttributes);
  }
  return true;
}

bool ModelChecker::checkRegion(const kfb::Region *region,
                               mlir::Location ownerLoc,
                               const std::string &regionStep,
                               CheckedRegion &out) {
  if (!claim(region, ownerLoc, detailOf(regionStep)))
    return false;
  const TableVector<kfb::Block> *blocks = region->blocks();
  if (!blocks)
    return true;
  if (!claim(blocks, ownerLoc, detailOf(regionStep)))
    return false;
  out.blocks.resize(blocks->size());
  for (unsigned i = 0, e = blocks->size(); i != e; ++i) {
    // Block indices appear in paths only where there is more than one.
    std::string blockStep =
        e == 1 ? regionStep
               : joinSteps(regionStep, "block #" + std::to_string(i));
    if (!checkBlock(blocks->Get(i), ownerLoc, blockStep, out.blocks[i]))
      return false;
  }
  return true;
}

bool ModelChecker::checkBlock(const kfb::Block *block, mlir::Location ownerLoc,
                              const std::string &blockStep, CheckedBlock &out) {
  if (!claim(block, ownerLoc, detailOf(blockStep)))
    return false;
  llvm::SmallVector<uint32_t> definedInBlock;

  if (const auto *types = block->argument_types()) {
    if (!claim(types, ownerLoc, detailOf(blockStep)))
      return false;
    for (unsigned i = 0, e = types->size(); i != e; ++i) {
      std::string where =
          ", " + joinSteps(blockStep, "argument #" + std::to_string(i));
      mlir::RankedTensorType type =
          checkTensorType(types->Get(i), ownerLoc, where);
      if (!type)
        return false;
      out.argumentTypes.push_back(type);
      uint32_t value = defineValue();
      visible[value] = 1;
      definedInBlock.push_back(value);
    }
  }

  if (const auto *operations = block->operations()) {
    if (!claim(operations, ownerLoc, detailOf(blockStep)))
      return false;
    out.operations.reserve(operations->size());
    for (unsigned i = 0, e = operations->size(); i != e; ++i)
      if (!checkOperation(operations->Get(i), ownerLoc, blockStep, i, out,
                          definedInBlock))
        return false;
  }

  for (uint32_t value : definedInBlock)
    visible[value] = 0;
  return true;
}

bool ModelChecker::checkOperation(
    const kfb::Operation *op, mlir::Location ownerLoc,
    const std::string &blockStep, unsigned index, CheckedBlock &block,
    llvm::SmallVectorImpl<uint32_t> &definedInBlock) {
  std::string where = joinSteps(blockStep, "op #" + std::to_string(index));
  if (!claim(op, ownerLoc, ", " + where) ||
      !claim(op->name(), ownerLoc, ", " + where))
    return false;
  llvm::StringRef name = toStringRef(op->name());
  mlir::Location loc =
      childLocation(ownerLoc, where + " (" + quoteName(name) + ")");

  std::optional<mlir::RegisteredOperationName> registered =
      lookupStorableOp(name, context);
  if (!registered) {
    if (name == mlir::func::FuncOp::getOperationName())
      return fail(loc, "",
                  "functions cannot be nested (func.func may only appear as "
                  "a function of the model)");
    return fail(loc, "",
                "unknown operation (a .kfb file may hold only kiln ops, "
                "func.return and func.call)");
  }
  std::optional<OpArity> arity = getOpArity(*registered);
  if (!arity)
    return fail(loc, "",
                "the operation's traits do not determine its operand, "
                "result and region counts, so the format cannot hold it");

  CheckedOperation &checked = block.operations.emplace_back(*registered, loc);
  result.locationOrder[loc.getAsOpaquePointer()] = nextOrder++;

  // Operands: each must name a value defined earlier and visible here.
  const Vector<uint32_t> *operands = op->operands();
  if (!claim(operands, loc, ", operands"))
    return false;
  size_t numOperands = operands ? operands->size() : 0;
  if (!arity->operands.accepts(numOperands))
    return fail(loc, "",
                "expected " + arity->operands.describe("operand") + ", got " +
                    llvm::Twine(numOperands));
  checked.operands = readScalars(operands);
  for (auto [i, value] : llvm::enumerate(checked.operands)) {
    if (value >= numValues)
      return fail(loc, ", operand #" + llvm::Twine(i),
                  "refers to value %" + llvm::Twine(value) +
                      ", which is not defined before this operation (the "
                      "function defines " +
                      llvm::Twine(numValues) + " values before it)");
    if (!visible[value])
      return fail(loc, ", operand #" + llvm::Twine(i),
                  "refers to value %" + llvm::Twine(value) +
                      ", which is not visible here (it is defined inside "
                      "another region, or is a result of an enclosing "
                      "operation)");
  }

  // Result types.
  const TableVector<kfb::TensorType> *resultTypes = op->result_types();
  size_t numResults = resultTypes ? resultTypes->size() : 0;
  if (!arity->results.accepts(numResults))
    return fail(loc, "",
                "expected " + arity->results.describe("result") + ", got " +
                    llvm::Twine(numResults));
  if (!checkTensorTypes(resultTypes, loc, ", result", checked.resultTypes))
    return false;

  // Attributes, with the kinds and values ODS requires of inherent ones.
  checked.attributes = checkAttributeList(op->attributes(), loc, "");
  if (!checked.attributes ||
      !checkInherentAttributes(*registered, checked.attributes, loc, ""))
    return false;

  // Results are numbered before the values inside the op's regions but
  // become visible only after the op.
  uint32_t firstResult = numValues;
  for (size_t i = 0; i != numResults; ++i)
    defineValue();

  const TableVector<kfb::Region> *regions = op->regions();
  if (!claim(regions, loc, ", regions"))
    return false;
  size_t numRegions = regions ? regions->size() : 0;
  if (!arity->regions.accepts(numRegions))
    return fail(loc, "",
                "expected " + arity->regions.describe("region") + ", got " +
                    llvm::Twine(numRegions));
  checked.regions.resize(numRegions);
  for (size_t i = 0; i != numRegions; ++i)
    if (!checkRegion(regions->Get(i), loc, "region #" + std::to_string(i),
                     checked.regions[i]))
      return false;

  for (size_t i = 0; i != numResults; ++i) {
    visible[firstResult + i] = 1;
    definedInBlock.push_back(firstResult + i);
  }
  return true;
}

mlir::RankedTensorType
ModelChecker::checkTensorType(const kfb::TensorType *type, mlir::Location loc,
                              const llvm::Twine &detail) {
  if (!type) {
    fail(loc, detail, "the type is missing");
    return {};
  }
  if (!claim(type, loc, detail) || !claim(type->shape(), loc, detail))
    return {};
  mlir::Type elementType = toMlirType(type->dtype(), context);
  if (!elementType) {
    fail(loc, detail,
         "unknown dtype " + llvm::Twine(static_cast<unsigned>(type->dtype())) +
             " (expected " + describeDTypes() + ")");
    return {};
  }
  llvm::SmallVector<int64_t> shape = readScalars(type->shape());
  int64_t numElements = 1;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (dim < 0) {
      fail(loc, detail,
           "dimension #" + llvm::Twine(i) + " is " + llvm::Twine(dim) +
               " (dimensions must be static and non-negative)");
      return {};
    }
    if (llvm::MulOverflow(numElements, dim, numElements)) {
      fail(loc, detail, "the shape has more than 2^63-1 elements");
      return {};
    }
  }
  return mlir::RankedTensorType::get(shape, elementType);
}

bool ModelChecker::checkTensorTypes(const TableVector<kfb::TensorType> *types,
                                    mlir::Location loc,
                                    const llvm::Twine &detail,
                                    llvm::SmallVectorImpl<mlir::Type> &out) {
  if (!types)
    return true;
  if (!claim(types, loc, detail + "s"))
    return false;
  for (unsigned i = 0, e = types->size(); i != e; ++i) {
    mlir::RankedTensorType type =
        checkTensorType(types->Get(i), loc, detail + " #" + llvm::Twine(i));
    if (!type)
      return false;
    out.push_back(type);
  }
  return true;
}

mlir::DictionaryAttr
ModelChecker::checkAttributeList(const TableVector<kfb::NamedAttribute> *list,
                                 mlir::Location loc,
                                 const llvm::Twine &detail) {
  if (!list)
    return mlir::DictionaryAttr::get(context);
  if (!claim(list, loc, detail + ", attributes"))
    return {};
  mlir::NamedAttrList attributes;
  for (unsigned i = 0, e = list->size(); i != e; ++i) {
    const kfb::NamedAttribute *entry = list->Get(i);
    std::string where = (detail + ", attribute #" + llvm::Twine(i)).str();
    if (!claim(entry, loc, where) || !claim(entry->name(), loc, where))
      return {};
    llvm::StringRef name = toStringRef(entry->name());
    if (name.empty()) {
      fail(loc, where, "the attribute has an empty name");
      return {};
    }
    mlir::Attribute value =
        checkAttribute(entry->value_type(), entry->value(), loc,
                       detail + ", attribute " + quoteName(name));
    if (!value)
      return {};
    attributes.append(name, value);
  }
  if (std::optional<mlir::NamedAttribute> duplicate =
          attributes.findDuplicate()) {
    fail(loc, detail + ", attribute " + quoteName(duplicate->getName()),
         "the name appears more than once");
    return {};
  }
  return attributes.getDictionary(context);
}

mlir::Attribute ModelChecker::checkAttribute(kfb::AttributeValue kind,
                                             const void *value,
                                             mlir::Location loc,
                                             const llvm::Twine &detail) {
  if (kind == kfb::AttributeValue::NONE || !value) {
    fail(loc, detail, "the attribute has no value");
    return {};
  }
  if (kind > kfb::AttributeValue::MAX) {
    fail(loc, detail,
         "unknown attribute kind " + llvm::Twine(static_cast<unsigned>(kind)));
    return {};
  }
  if (!claim(value, loc, detail))
    return {};

  switch (kind) {
  case kfb::AttributeValue::IntegerAttr:
    return checkInteger(*static_cast<const kfb::IntegerAttr *>(value), loc,
                        detail);
  case kfb::AttributeValue::FloatAttr:
    return checkFloat(*static_cast<const kfb::FloatAttr *>(value), loc, detail);
  case kfb::AttributeValue::StringAttr: {
    const auto &attr = *static_cast<const kfb::StringAttr *>(value);
    if (!claim(attr.value(), loc, detail))
      return {};
    return mlir::StringAttr::get(context, toStringRef(attr.value()));
  }
  case kfb::AttributeValue::UnitAttr:
    return mlir::UnitAttr::get(context);
  case kfb::AttributeValue::DenseI64ArrayAttr: {
    const auto &attr = *static_cast<const kfb::DenseI64ArrayAttr *>(value);
    if (!claim(attr.values(), loc, detail))
      return {};
    return mlir::DenseI64ArrayAttr::get(context, readScalars(attr.values()));
  }
  case kfb::AttributeValue::DenseElementsAttr:
    return checkElements(*static_cast<const kfb::DenseElementsAttr *>(value),
                         loc, detail);
  case kfb::AttributeValue::FunctionTypeAttr:
    return checkFunctionType(*static_cast<const kfb::FunctionTypeAttr *>(value),
                             loc, detail);
  case kfb::AttributeValue::ElementTypeAttr: {
    const auto &attr = *static_cast<const kfb::ElementTypeAttr *>(value);
    mlir::Type type = toMlirType(attr.dtype(), context);
    if (!type) {
      fail(loc, detail,
           "unknown dtype " + llvm::Twine(static_cast<unsigned>(attr.dtype())) +
               " (expected " + describeDTypes() + ")");
      return {};
    }
    return mlir::TypeAttr::get(type);
  }
  case kfb::AttributeValue::FlatSymbolRefAttr: {
    const auto &attr = *static_cast<const kfb::FlatSymbolRefAttr *>(value);
    if (!claim(attr.name(), loc, detail))
      return {};
    llvm::StringRef name = toStringRef(attr.name());
    if (name.empty()) {
      fail(loc, detail, "the symbol reference is empty");
      return {};
    }
    return mlir::FlatSymbolRefAttr::get(context, name);
  }
  case kfb::AttributeValue::ArrayAttr:
    return checkArray(*static_cast<const kfb::ArrayAttr *>(value), loc, detail);
  case kfb::AttributeValue::DictionaryAttr:
    return checkAttributeList(
        static_cast<const kfb::DictionaryAttr *>(value)->entries(), loc,
        detail);
  case kfb::AttributeValue::NONE:
    break;
  }
  fail(loc, detail,
       "unknown attribute kind " + llvm::Twine(static_cast<unsigned>(kind)));
  return {};
}

mlir::Attribute ModelChecker::checkInteger(const kfb::IntegerAttr &attr,
                                           mlir::Location loc,
                                           const llvm::Twine &detail) {
  int64_t value = attr.value();
  unsigned width;
  switch (attr.type()) {
  case kfb::DType::I1:
    if (value != 0 && value != 1) {
      fail(loc, detail,
           "the i1 integer holds " + llvm::Twine(value) + " (expected 0 or 1)");
      return {};
    }
    width = 1;
    break;
  case kfb::DType::I32:
    if (value < INT32_MIN || value > INT32_MAX) {
      fail(loc, detail,
           "the value " + llvm::Twine(value) + " does not fit in i32");
      return {};
    }
    width = 32;
    break;
  case kfb::DType::I64:
    width = 64;
    break;
  default:
    fail(loc, detail,
         "an integer attribute may not have type " + dtypeName(attr.type()) +
             " (expected i1, i32 or i64)");
    return {};
  }
  return mlir::IntegerAttr::get(
      mlir::IntegerType::get(context, width),
      llvm::APInt(width, static_cast<uint64_t>(value), /*isSigned=*/width > 1));
}

mlir::Attribute ModelChecker::checkFloat(const kfb::FloatAttr &attr,
                                         mlir::Location loc,
                                         const llvm::Twine &detail) {
  if (!isFloat(attr.type())) {
    fail(loc, detail,
         "a float attribute may not have type " + dtypeName(attr.type()) +
             " (expected f16, bf16, f32 or f64)");
    return {};
  }
  auto type = llvm::cast<mlir::FloatType>(toMlirType(attr.type(), context));
  unsigned width = type.getWidth();
  uint64_t bits = attr.bits();
  if (width < 64 && (bits >> width) != 0) {
    fail(loc, detail,
         "the bits 0x" + llvm::Twine::utohexstr(bits) + " do not fit in " +
             dtypeName(attr.type()));
    return {};
  }
  return mlir::FloatAttr::get(
      type, llvm::APFloat(type.getFloatSemantics(), llvm::APInt(width, bits)));
}

mlir::Attribute ModelChecker::checkElements(const kfb::DenseElementsAttr &attr,
                                            mlir::Location loc,
                                            const llvm::Twine &detail) {
  mlir::RankedTensorType type =
      checkTensorType(attr.type(), loc, detail + ", type");
  if (!type)
    return {};
  uint32_t index = attr.buffer();
  bool splat = attr.splat();
  auto cached = decodedBuffers.find(index);
  if (cached != decodedBuffers.end()) {
    if (cached->second.type != type || cached->second.splat != splat) {
      fail(loc, detail,
           "constant buffer #" + llvm::Twine(index) +
               " is also used by an earlier constant of a different type "
               "(constants may share a buffer only if their types are "
               "the same)");
      return {};
    }
    return cached->second.value;
  }

  const TableVector<kfb::Buffer> *buffers = model.buffers();
  size_t numBuffers = buffers ? buffers->size() : 0;
  if (index >= numBuffers) {
    fail(loc, detail,
         "refers to constant buffer #" + llvm::Twine(index) +
             ", but the file has " + llvm::Twine(numBuffers) + " buffers");
    return {};
  }
  const kfb::Buffer *buffer = buffers->Get(index);
  std::string where =
      (detail + ", constant buffer #" + llvm::Twine(index)).str();
  if (!claim(buffer, loc, where) || !claim(buffer->data(), loc, where))
    return {};
  llvm::ArrayRef<uint8_t> data;
  if (const Vector<uint8_t> *bytes = buffer->data())
    data = llvm::ArrayRef<uint8_t>(bytes->data(), bytes->size());

  kfb::DType dtype = attr.type()->dtype();
  uint64_t elementSize = storageSize(dtype);
  uint64_t numElements = static_cast<uint64_t>(type.getNumElements());
  uint64_t expected = elementSize;
  if (!splat) {
    bool overflowed = false;
    expected = llvm::SaturatingMultiply(numElements, elementSize, &overflowed);
    if (overflowed) {
      fail(loc, detail, typeText(type) + " is too large for a constant");
      return {};
    }
  }
  if (data.size() != expected) {
    fail(loc, where,
         "the buffer holds " + llvm::Twine(data.size()) + " bytes, but " +
             (splat ? "a splat of " : "") + typeText(type) + " needs " +
             llvm::Twine(expected));
    return {};
  }

  mlir::DenseElementsAttr value;
  if (dtype == kfb::DType::I1) {
    llvm::SmallVector<bool> bits;
    bits.reserve(data.size());
    for (auto [i, byte] : llvm::enumerate(data)) {
      if (byte > 1) {
        fail(loc, where,
             "byte " + llvm::Twine(i) + " is " +
                 llvm::Twine(static_cast<unsigned>(byte)) +
                 ", which is not an i1 (0 or 1)");
        return {};
      }
      bits.push_back(byte != 0);
    }
    value = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
  } else {
    value = mlir::DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(reinterpret_cast<const char *>(data.data()),
                                   data.size()));
  }
  decodedBuffers[index] = DecodedBuffer{type, splat, value};
  return value;
}

mlir::Attribute
ModelChecker::checkFunctionType(const kfb::FunctionTypeAttr &attr,
                                mlir::Location loc, const llvm::Twine &detail) {
  const kfb::FunctionType *type = attr.type();
  if (!claim(type, loc, detail))
    return {};
  llvm::SmallVector<mlir::Type> inputs, results;
  if (!checkTensorTypes(type->inputs(), loc, detail + ", input", inputs) ||
      !checkTensorTypes(type->results(), loc, detail + ", result", results))
    return {};
  return mlir::TypeAttr::get(mlir::FunctionType::get(context, inputs, results));
}

mlir::Attribute ModelChecker::checkArray(const kfb::ArrayAttr &attr,
                                         mlir::Location loc,
                                         const llvm::Twine &detail) {
  llvm::SmallVector<mlir::Attribute> elements;
  if (const auto *list = attr.elements()) {
    if (!claim(list, loc, detail))
      return {};
    elements.reserve(list->size());
    for (unsigned i = 0, e = list->size(); i != e; ++i) {
      const kfb::Attribute *element = list->Get(i);
      std::string where = (detail + ", element #" + llvm::Twine(i)).str();
      if (!claim(element, loc, where))
        return {};
      mlir::Attribute value =
          checkAttribute(element->value_type(), element->value(), loc, where);
      if (!value)
        return {};
      elements.push_back(value);
    }
  }
  return mlir::ArrayAttr::get(context, elements);
}

bool ModelChecker::checkInherentAttributes(mlir::RegisteredOperationName op,
                                           mlir::DictionaryAttr attributes,
                                           mlir::Location loc,
                                           const llvm::Twine &detail) {
  mlir::NamedAttrList list(attributes);
  diagnosticText.clear();
  if (mlir::succeeded(
          op.verifyInherentAttrs(list, [&] { return mlir::emitError(loc); })))
    return true;
  return fail(loc, detail,
              diagnosticText.empty() ? "an inherent attribute is invalid"
                                     : diagnosticText);
}

} // namespace

std::optional<CheckedModel> checkModel(const kfb::Model &model,
                                       const uint8_t *base,
                                       mlir::MLIRContext *context,
                                       llvm::StringRef fileName,
                                       std::string &error) {
  return ModelChecker(model, base, context, fileName, error).run();
}

} // namespace modelfile
} // namespace kiln
