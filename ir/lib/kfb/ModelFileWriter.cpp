//===- ModelFileWriter.cpp - Writing .kfb model files ---------------------===//
//
// Walks the module in order, numbering values as the schema describes, and
// builds the FlatBuffer bottom-up (FlatBuffers needs every child finished
// before its parent table starts). Anything the format cannot hold is an
// error naming the op, never silently dropped, because the point of the
// format is a lossless round trip. The finished bytes go through the
// reader's structural checks, so a written file is never refused for its
// structure.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/ModelFile.h"

#include "kiln/IR/KilnOps.h"
#include "ElementTypes.h"
#include "FileStructure.h"
#include "Locations.h"
#include "OpArity.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

namespace {

// Constants are copied from MLIR's in-memory representation, which is
// little-endian only on little-endian hosts.
static_assert(llvm::sys::IsLittleEndianHost,
              "the .kfb writer assumes a little-endian host");

using flatbuffers::Offset;
using flatbuffers::Vector;
template <typename T> using TableVector = Vector<Offset<T>>;

/// FlatBuffers files are limited to 2 GiB; stop well before the builder
/// would overflow.
constexpr size_t kMaxFileSize = (size_t(1) << 31) - (size_t(1) << 26);

/// The argument or result attribute stored as a Port's name.
constexpr llvm::StringLiteral kPortNameAttribute = "kiln.name";

/// Prints \p value for a message, shortened: it may be a large constant.
template <typename T> std::string shortText(T value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  if (text.size() > 80)
    text = text.substr(0, 77) + "...";
  return text;
}

class ModelWriter {
public:
  explicit ModelWriter(std::string &error) : error(error) {}

  bool write(mlir::ModuleOp module, std::vector<uint8_t> &bytes);

private:
  /// Records the first error, prefixed with the current path.
  void fail(const llvm::Twine &message);

  Offset<kfb::Function> writeFunction(mlir::func::FuncOp function);
  Offset<TableVector<kfb::Port>>
  writePorts(llvm::ArrayRef<mlir::Type> types,
             llvm::ArrayRef<mlir::DictionaryAttr> attributes,
             llvm::StringRef kind);
  Offset<kfb::Region> writeRegion(mlir::Region &region);
  Offset<kfb::Block> writeBlock(mlir::Block &block);
  Offset<kfb::Operation> writeOperation(mlir::Operation &op);

  Offset<kfb::TensorType> writeTensorType(mlir::Type type);
  Offset<TableVector<kfb::TensorType>> writeTensorTypes(mlir::TypeRange types);
  Offset<TableVector<kfb::NamedAttribute>>
  writeAttributeList(llvm::ArrayRef<mlir::NamedAttribute> attributes);
  Offset<void> writeAttribute(mlir::Attribute attribute,
                              kfb::AttributeValue &kind);
  Offset<kfb::DenseElementsAttr>
  writeElements(mlir::DenseIntOrFPElementsAttr elements);
  /// Returns the index of the buffer holding \p elements' data.
  uint32_t writeBuffer(mlir::DenseIntOrFPElementsAttr elements, bool splat);

  /// Creates a vector only if \p items is not empty; an absent vector reads
  /// as an empty one.
  template <typename T>
  Offset<Vector<T>> optionalVector(const std::vector<T> &items) {
    return items.empty() ? Offset<Vector<T>>() : builder.CreateVector(items);
  }

  std::string &error;
  bool failed = false;
  flatbuffers::FlatBufferBuilder builder;
  /// Steps of the path to the op being written, for messages.
  llvm::SmallVector<std::string> path;

  /// Value numbers of the function being written.
  llvm::DenseMap<mlir::Value, uint32_t> valueNumbers;
  uint32_t numValues = 0;

  llvm::DenseMap<mlir::Attribute, uint32_t> bufferIndices;
  std::vector<Offset<kfb::Buffer>> buffers;
};

void ModelWriter::fail(const llvm::Twine &message) {
  if (failed)
    return;
  failed = true;
  error = (llvm::join(path, ", ") + ": " + message).str();
}

bool ModelWriter::write(mlir::ModuleOp module, std::vector<uint8_t> &bytes) {
  path = {"module"};
  Offset<flatbuffers::String> name;
  if (std::optional<llvm::StringRef> symName = module.getSymName())
    name = builder.CreateString(symName->data(), symName->size());

  llvm::SmallVector<mlir::NamedAttribute> moduleAttributes;
  for (mlir::NamedAttribute attribute : module->getAttrs())
    if (attribute.getName() != mlir::SymbolTable::getSymbolAttrName())
      moduleAttributes.push_back(attribute);
  auto attributes = writeAttributeList(moduleAttributes);

  std::vector<Offset<kfb::Function>> functions;
  for (auto [index, op] : llvm::enumerate(module.getBody()->getOperations())) {
    auto function = llvm::dyn_cast<mlir::func::FuncOp>(op);
    if (!function) {
      fail("operation #" + llvm::Twine(index) + " (" +
           modelfile::quoteName(op.getName().getStringRef()) +
           ") is not a func.func; a .kfb file holds only functions");
      break;
    }
    functions.push_back(writeFunction(function));
    if (failed)
      break;
  }
  if (failed)
    return false;

  auto functionVector = optionalVector(functions);
  auto bufferVector = optionalVector(buffers);
  kfb::Version version(kModelFileVersionMajor, kModelFileVersionMinor);
  kfb::FinishModelBuffer(builder,
                         kfb::CreateModel(builder, &version, name, attributes,
                                          functionVector, bufferVector));

  std::vector<uint8_t> result(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
  std::string structureError;
  if (!modelfile::verifyFileStructure(result.data(), result.size(),
                                      structureError)) {
    path = {"module"};
    fail("the model cannot be stored: " + structureError);
    return false;
  }
  bytes = std::move(result);
  return true;
}

Offset<kfb::Function> ModelWriter::writeFunction(mlir::func::FuncOp function) {
  path = {"function " + modelfile::quoteName(function.getSymName())};
  mlir::FunctionType type = function.getFunctionType();

  llvm::SmallVector<mlir::DictionaryAttr> argumentAttributes, resultAttributes;
  function.getAllArgAttrs(argumentAttributes);
  function.getAllResultAttrs(resultAttributes);
  auto inputs = writePorts(type.getInputs(), argumentAttributes, "input");
  auto outputs = writePorts(type.getResults(), resultAttributes, "output");

  llvm::SmallVector<mlir::NamedAttribute> discardable(
      function->getDiscardableAttrs());
  auto attributes = writeAttributeList(discardable);

  Offset<kfb::Region> body;
  if (!function.getBody().empty()) {
    valueNumbers.clear();
    numValues = 0;
    body = writeRegion(function.getBody());
  }
  if (failed)
    return {};

  auto name = builder.CreateString(function.getSymName().data(),
                                   function.getSymName().size());
  Offset<flatbuffers::String> visibility;
  if (mlir::StringAttr attr = function.getSymVisibilityAttr())
    visibility =
        builder.CreateString(attr.getValue().data(), attr.getValue().size());
  return kfb::CreateFunction(builder, name, visibility, inputs, outputs,
                             attributes, body);
}

Offset<TableVector<kfb::Port>>
ModelWriter::writePorts(llvm::ArrayRef<mlir::Type> types,
                        llvm::ArrayRef<mlir::DictionaryAttr> attributes,
                        llvm::StringRef kind) {
  std::vector<Offset<kfb::Port>> ports;
  for (auto [index, type] : llvm::enumerate(types)) {
    path.push_back((kind + " #" + llvm::Twine(index)).str());
    Offset<flatbuffers::String> name;
    llvm::SmallVector<mlir::NamedAttribute> others;
    if (mlir::DictionaryAttr dictionary = attributes[index]) {
      for (mlir::NamedAttribute attribute : dictionary) {
        auto text = llvm::dyn_cast<mlir::StringAttr>(attribute.getValue());
        if (attribute.getName() == kPortNameAttribute && text &&
            llvm::isa<mlir::NoneType>(text.getType()))
          name = builder.CreateString(text.getValue().data(),
                                      text.getValue().size());
        else
          others.push_back(attribute);
      }
    }
    auto portType = writeTensorType(type);
    auto portAttributes = writeAttributeList(others);
    path.pop_back();
    if (failed)
      return {};
    ports.push_back(kfb::CreatePort(builder, name, portType, portAttributes));
  }
  return optionalVector(ports);
}

Offset<kfb::Region> ModelWriter::writeRegion(mlir::Region &region) {
  std::vector<Offset<kfb::Block>> blocks;
  bool several = !region.empty() && !region.hasOneBlock();
  for (auto [index, block] : llvm::enumerate(region)) {
    if (several)
      path.push_back("block #" + std::to_string(index));
    blocks.push_back(writeBlock(block));
    if (several)
      path.pop_back();
    if (failed)
      return {};
  }
  return kfb::CreateRegion(builder, optionalVector(blocks));
}

Offset<kfb::Block> ModelWriter::writeBlock(mlir::Block &block) {
  for (mlir::BlockArgument argument : block.getArguments())
    valueNumbers[argument] = numValues++;
  auto argumentTypes = writeTensorTypes(block.getArgumentTypes());

  std::vector<Offset<kfb::Operation>> operations;
  for (auto [index, op] : llvm::enumerate(block)) {
    path.push_back("op #" + std::to_string(index) + " (" +
                   modelfile::quoteName(op.getName().getStringRef()) + ")");
    operations.push_back(writeOperation(op));
    path.pop_back();
    if (failed)
      return {};
  }
  return kfb::CreateBlock(builder, argumentTypes, optionalVector(operations));
}

Offset<kfb::Operation> ModelWriter::writeOperation(mlir::Operation &op) {
  if (!modelfile::isStorableOp(op.getName())) {
    fail("the operation cannot be stored (a .kfb file may hold only kiln "
         "ops, func.return and func.call)");
    return {};
  }
  if (llvm::isa<mlir::kiln::StackEmptyOp, mlir::kiln::StackReserveOp,
                mlir::kiln::StackPushOp, mlir::kiln::StackReadOp>(op)) {
    fail("the operation cannot be stored (stacks are made by reverse-mode "
         "differentiation of kiln.while, which runs after a model is loaded)");
    return {};
  }
  if (op.getNumSuccessors() != 0) {
    fail("the operation has successors, which the format cannot hold");
    return {};
  }
  if (builder.GetSize() > kMaxFileSize) {
    fail("the model is too large for a .kfb file (the limit is 2 GiB)");
    return {};
  }

  std::vector<uint32_t> operands;
  operands.reserve(op.getNumOperands());
  for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
    auto found = valueNumbers.find(operand);
    if (found == valueNumbers.end()) {
      fail("operand #" + llvm::Twine(index) +
           " is not defined before its use in this function");
      return {};
    }
    operands.push_back(found->second);
  }
  auto operandVector = optionalVector(operands);

  // Results are numbered before the values inside the op's regions.
  for (mlir::OpResult result : op.getResults())
    valueNumbers[result] = numValues++;
  auto resultTypes = writeTensorTypes(op.getResultTypes());

  llvm::SmallVector<mlir::NamedAttribute> attributeList(
      op.getAttrDictionary().getValue());
  auto attributes = writeAttributeList(attributeList);

  std::vector<Offset<kfb::Region>> regions;
  for (auto [index, region] : llvm::enumerate(op.getRegions())) {
    path.push_back("region #" + std::to_string(index));
    regions.push_back(writeRegion(region));
    path.pop_back();
    if (failed)
      return {};
  }
  if (failed)
    return {};

  llvm::StringRef name = op.getName().getStringRef();
  return kfb::CreateOperation(
      builder, builder.CreateString(name.data(), name.size()), operandVector,
      resultTypes, attributes, optionalVector(regions));
}

Offset<kfb::TensorType> ModelWriter::writeTensorType(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getEncoding()) {
    fail("type " + shortText(type) +
         " cannot be stored (the format holds statically shaped tensors)");
    return {};
  }
  std::optional<kfb::DType> dtype = modelfile::toDType(tensor.getElementType());
  if (!dtype) {
    std::string names;
    for (const ::kiln::ElementTypeInfo &info : ::kiln::kElementTypes)
      names += (names.empty() ? "" : ", ") + std::string(info.name);
    fail("type " + shortText(type) + " cannot be stored (element types are " +
         names + ")");
    return {};
  }
  Offset<Vector<int64_t>> shape;
  if (tensor.getRank() != 0)
    shape = builder.CreateVector(tensor.getShape().data(), tensor.getRank());
  return kfb::CreateTensorType(builder, *dtype, shape);
}

Offset<TableVector<kfb::TensorType>>
ModelWriter::writeTensorTypes(mlir::TypeRange types) {
  std::vector<Offset<kfb::TensorType>> offsets;
  for (mlir::Type type : types) {
    offsets.push_back(writeTensorType(type));
    if (failed)
      return {};
  }
  return optionalVector(offsets);
}

Offset<TableVector<kfb::NamedAttribute>> ModelWriter::writeAttributeList(
    llvm::ArrayRef<mlir::NamedAttribute> attributes) {
  std::vector<Offset<kfb::NamedAttribute>> entries;
  for (mlir::NamedAttribute attribute : attributes) {
    path.push_back("attribute " +
                   modelfile::quoteName(attribute.getName().getValue()));
    kfb::AttributeValue kind = kfb::AttributeValue::NONE;
    Offset<void> value = writeAttribute(attribute.getValue(), kind);
    path.pop_back();
    if (failed)
      return {};
    llvm::StringRef name = attribute.getName().getValue();
    entries.push_back(kfb::CreateNamedAttribute(
        builder, builder.CreateString(name.data(), name.size()), kind, value));
  }
  return optionalVector(entries);
}

Offset<void> ModelWriter::writeAttribute(mlir::Attribute attribute,
                                         kfb::AttributeValue &kind) {
  if (auto integer = llvm::dyn_cast<mlir::IntegerAttr>(attribute)) {
    auto type = llvm::dyn_cast<mlir::IntegerType>(integer.getType());
    std::optional<kfb::DType> dtype;
    if (type)
      dtype = modelfile::toDType(type);
    if (!dtype) {
      fail("integer attribute " + shortText(attribute) +
           " cannot be stored (integer attributes are i1, i32 or i64)");
      return {};
    }
    const llvm::APInt &value = integer.getValue();
    int64_t stored = type.getWidth() == 1
                         ? static_cast<int64_t>(value.getZExtValue())
                         : value.getSExtValue();
    kind = kfb::AttributeValue::IntegerAttr;
    return kfb::CreateIntegerAttr(builder, *dtype, stored).Union();
  }
  if (auto floating = llvm::dyn_cast<mlir::FloatAttr>(attribute)) {
    std::optional<kfb::DType> dtype = modelfile::toDType(floating.getType());
    if (!dtype || !modelfile::isFloat(*dtype)) {
      fail("float attribute " + shortText(attribute) +
           " cannot be stored (float attributes are f16, bf16, f32 or f64)");
      return {};
    }
    kind = kfb::AttributeValue::FloatAttr;
    return kfb::CreateFloatAttr(
               builder, *dtype,
               floating.getValue().bitcastToAPInt().getZExtValue())
        .Union();
  }
  if (auto string = llvm::dyn_cast<mlir::StringAttr>(attribute)) {
    if (!llvm::isa<mlir::NoneType>(string.getType())) {
      fail("typed string attribute " + shortText(attribute) +
           " cannot be stored");
      return {};
    }
    kind = kfb::AttributeValue::StringAttr;
    llvm::StringRef text = string.getValue();
    return kfb::CreateStringAttr(builder,
                                 builder.CreateString(text.data(), text.size()))
        .Union();
  }
  if (llvm::isa<mlir::UnitAttr>(attribute)) {
    kind = kfb::AttributeValue::UnitAttr;
    return kfb::CreateUnitAttr(builder).Union();
  }
  if (auto array = llvm::dyn_cast<mlir::DenseI64ArrayAttr>(attribute)) {
    kind = kfb::AttributeValue::DenseI64ArrayAttr;
    llvm::ArrayRef<int64_t> values = array.asArrayRef();
    Offset<Vector<int64_t>> vector;
    if (!values.empty())
      vector = builder.CreateVector(values.data(), values.size());
    return kfb::CreateDenseI64ArrayAttr(builder, vector).Union();
  }
  if (auto elements =
          llvm::dyn_cast<mlir::DenseIntOrFPElementsAttr>(attribute)) {
    auto offset = writeElements(elements);
    kind = kfb::AttributeValue::DenseElementsAttr;
    return offset.Union();
  }
  if (auto typeAttr = llvm::dyn_cast<mlir::TypeAttr>(attribute)) {
    if (std::optional<kfb::DType> dtype =
            modelfile::toDType(typeAttr.getValue())) {
      kind = kfb::AttributeValue::ElementTypeAttr;
      return kfb::CreateElementTypeAttr(builder, *dtype).Union();
    }
    auto function = llvm::dyn_cast<mlir::FunctionType>(typeAttr.getValue());
    if (!function) {
      fail("type attribute " + shortText(attribute) +
           " cannot be stored (type attributes hold element types or "
           "function types)");
      return {};
    }
    auto inputs = writeTensorTypes(function.getInputs());
    auto results = writeTensorTypes(function.getResults());
    if (failed)
      return {};
    kind = kfb::AttributeValue::FunctionTypeAttr;
    return kfb::CreateFunctionTypeAttr(
               builder, kfb::CreateFunctionType(builder, inputs, results))
        .Union();
  }
  if (auto symbol = llvm::dyn_cast<mlir::FlatSymbolRefAttr>(attribute)) {
    kind = kfb::AttributeValue::FlatSymbolRefAttr;
    llvm::StringRef name = symbol.getValue();
    return kfb::CreateFlatSymbolRefAttr(
               builder, builder.CreateString(name.data(), name.size()))
        .Union();
  }
  if (auto array = llvm::dyn_cast<mlir::ArrayAttr>(attribute)) {
    std::vector<Offset<kfb::Attribute>> elements;
    for (auto [index, element] : llvm::enumerate(array)) {
      path.push_back("element #" + std::to_string(index));
      kfb::AttributeValue elementKind = kfb::AttributeValue::NONE;
      Offset<void> value = writeAttribute(element, elementKind);
      path.pop_back();
      if (failed)
        return {};
      elements.push_back(kfb::CreateAttribute(builder, elementKind, value));
    }
    kind = kfb::AttributeValue::ArrayAttr;
    return kfb::CreateArrayAttr(builder, optionalVector(elements)).Union();
  }
  if (auto dictionary = llvm::dyn_cast<mlir::DictionaryAttr>(attribute)) {
    auto entries = writeAttributeList(dictionary.getValue());
    kind = kfb::AttributeValue::DictionaryAttr;
    return kfb::CreateDictionaryAttr(builder, entries).Union();
  }
  fail("attribute " + shortText(attribute) +
       " is of a kind the format cannot hold");
  return {};
}

Offset<kfb::DenseElementsAttr>
ModelWriter::writeElements(mlir::DenseIntOrFPElementsAttr elements) {
  auto type = writeTensorType(elements.getType());
  if (failed)
    return {};
  // A splat of one element is stored as that element; it reads back the
  // same either way, and this keeps the flag meaningful. A splat of no
  // elements keeps its value (`dense<0.5> : tensor<0xf32>` is not
  // `dense<> : tensor<0xf32>` as text, though both hold nothing).
  bool splat = elements.isSplat() && elements.getNumElements() != 1;
  uint32_t buffer = writeBuffer(elements, splat);
  if (failed)
    return {};
  return kfb::CreateDenseElementsAttr(builder, type, buffer, splat);
}

uint32_t ModelWriter::writeBuffer(mlir::DenseIntOrFPElementsAttr elements,
                                  bool splat) {
  auto found = bufferIndices.find(elements);
  if (found != bufferIndices.end())
    return found->second;

  mlir::Type elementType = elements.getElementType();
  size_t elementSize = modelfile::storageSize(*modelfile::toDType(elementType));
  size_t numElements = static_cast<size_t>(elements.getNumElements());
  size_t stored = splat ? 1 : numElements;

  std::vector<uint8_t> booleans;
  llvm::ArrayRef<uint8_t> data;
  if (elementType.isInteger(1) && splat) {
    booleans.push_back(elements.getSplatValue<bool>() ? 1 : 0);
    data = booleans;
  } else if (elementType.isInteger(1)) {
    // MLIR packs i1 elements into bits; the format gives each a byte.
    booleans.reserve(stored);
    for (bool value : elements.getValues<bool>()) {
      if (booleans.size() == stored)
        break;
      booleans.push_back(value ? 1 : 0);
    }
    data = booleans;
  } else {
    llvm::ArrayRef<char> raw = elements.getRawData();
    data = llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(raw.data()), raw.size());
    data = data.take_front(stored * elementSize);
  }
  if (data.size() != stored * elementSize) {
    fail("the data of constant " + shortText(elements.getType()) +
         " has an unexpected size");
    return 0;
  }
  if (builder.GetSize() + data.size() > kMaxFileSize) {
    fail("the model's constants are too large for a .kfb file (the limit "
         "is 2 GiB)");
    return 0;
  }

  // FlatBuffers builds from the end of the buffer, and the finished file's
  // size is a multiple of its largest alignment, so aligning the offset
  // from the end aligns the data within the file.
  builder.PreAlign(data.size(), kModelFileBufferAlignment);
  auto vector = builder.CreateVector(data.data(), data.size());
  auto index = static_cast<uint32_t>(buffers.size());
  buffers.push_back(kfb::CreateBuffer(builder, vector));
  bufferIndices[elements] = index;
  return index;
}

} // namespace

bool writeModelFile(mlir::ModuleOp module, std::vector<uint8_t> &bytes,
                    std::string &error) {
  return ModelWriter(error).write(module, bytes);
}

} // namespace kiln
