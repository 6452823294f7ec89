//===- ModelMutator.cpp - Random edits of a .kfb model's structure --------===//

#include "ModelMutator.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <cstring>
#include <iterator>
#include <memory>

namespace kiln {
namespace modelfile {

namespace {

/// Everything in an unpacked model that an edit can reach.
struct ModelParts {
  std::vector<kfb::OperationT *> operations;
  std::vector<kfb::BlockT *> blocks;
  std::vector<kfb::TensorTypeT *> types;
  std::vector<std::vector<std::unique_ptr<kfb::NamedAttributeT>> *>
      attributeLists;
  std::vector<kfb::PortT *> ports;

  explicit ModelParts(kfb::ModelT &model) {
    addAttributes(model.attributes);
    for (auto &function : model.functions) {
      for (auto *list : {&function->inputs, &function->outputs})
        for (auto &port : *list) {
          ports.push_back(port.get());
          if (port->type)
            types.push_back(port->type.get());
          addAttributes(port->attributes);
        }
      addAttributes(function->attributes);
      if (function->body)
        addRegion(*function->body);
    }
  }

  void addAttributes(
      std::vector<std::unique_ptr<kfb::NamedAttributeT>> &attributes) {
    attributeLists.push_back(&attributes);
    for (auto &attribute : attributes) {
      if (auto *elements = attribute->value.AsDenseElementsAttr())
        if (elements->type)
          types.push_back(elements->type.get());
      if (auto *dictionary = attribute->value.AsDictionaryAttr())
        addAttributes(dictionary->entries);
    }
  }

  void addRegion(kfb::RegionT &region) {
    for (auto &block : region.blocks) {
      blocks.push_back(block.get());
      for (auto &type : block->argument_types)
        types.push_back(type.get());
      for (auto &op : block->operations) {
        operations.push_back(op.get());
        for (auto &type : op->result_types)
          types.push_back(type.get());
        addAttributes(op->attributes);
        for (auto &nested : op->regions)
          addRegion(*nested);
      }
    }
  }
};

/// Unpacking turns an attribute whose kind is unknown, or whose value is
/// missing, into a union with a kind but no value, which packing would
/// dereference; such attributes become valueless ones (which the reader
/// refuses just the same).
void clearEmptyUnion(kfb::AttributeValueUnion &value) {
  if (!value.value) {
    value.Reset();
    return;
  }
  if (auto *array = value.AsArrayAttr())
    for (auto &element : array->elements)
      clearEmptyUnion(element->value);
  if (auto *dictionary = value.AsDictionaryAttr())
    for (auto &entry : dictionary->entries)
      clearEmptyUnion(entry->value);
}

template <typename T>
T *any(std::mt19937 &random, const std::vector<T *> &items) {
  return items.empty() ? nullptr : items[random() % items.size()];
}

} // namespace

ModelMutator::ModelMutator(mlir::MLIRContext &context, uint32_t seed)
    : random(seed) {
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations())
    if (name.getDialectNamespace() == "kiln")
      opNames.push_back(name.getStringRef().str());
  for (const char *name : {"func.return", "func.call", "func.func",
                           "builtin.module", "kiln.unknown"})
    opNames.push_back(name);
}

void ModelMutator::mutate(kfb::ModelT &model) {
  ModelParts parts(model);
  switch (pick(12)) {
  case 0: // Another op name.
    if (auto *op = any(random, parts.operations))
      op->name = opNames[pick(opNames.size())];
    break;
  case 1: // An operand refers elsewhere, or is added or dropped.
    if (auto *op = any(random, parts.operations)) {
      if (!op->operands.empty() && pick(2))
        op->operands[pick(op->operands.size())] = pick(64);
      else if (pick(2))
        op->operands.push_back(pick(64));
      else if (!op->operands.empty())
        op->operands.pop_back();
    }
    break;
  case 2: // A result is added or dropped.
    if (auto *op = any(random, parts.operations)) {
      if (pick(2) && !parts.types.empty())
        op->result_types.push_back(
            std::make_unique<kfb::TensorTypeT>(*any(random, parts.types)));
      else if (!op->result_types.empty())
        op->result_types.erase(op->result_types.begin() +
                               pick(op->result_types.size()));
    }
    break;
  case 3: // Another dtype, possibly not one.
    if (auto *type = any(random, parts.types))
      type->dtype = static_cast<kfb::DType>(pick(9));
    break;
  case 4: // A dimension changes, appears or goes.
    if (auto *type = any(random, parts.types)) {
      const int64_t dims[] = {-1, 0, 1, 2, 3, 4, 5, 17, int64_t(1) << 33};
      if (!type->shape.empty() && pick(2))
        type->shape[pick(type->shape.size())] = dims[pick(std::size(dims))];
      else if (pick(2))
        type->shape.push_back(dims[pick(std::size(dims))]);
      else if (!type->shape.empty())
        type->shape.pop_back();
    }
    break;
  case 5: // An attribute gets another value, or an attribute is added.
    if (auto *list = any(random, parts.attributeLists)) {
      const char *names[] = {"dims",       "permutation", "start",
                             "limit",      "stride",      "dimension",
                             "trip_count", "direction",   "value",
                             "callee",     "kiln.extra",  "sym_visibility"};
      kfb::AttributeValueUnion value = randomValue(model, parts.types);
      if (!list->empty() && pick(2)) {
        (*list)[pick(list->size())]->value = std::move(value);
      } else {
        auto attribute = std::make_unique<kfb::NamedAttributeT>();
        attribute->name = names[pick(std::size(names))];
        attribute->value = std::move(value);
        list->push_back(std::move(attribute));
      }
    }
    break;
  case 6: // An attribute is dropped.
    if (auto *list = any(random, parts.attributeLists))
      if (!list->empty())
        list->erase(list->begin() + pick(list->size()));
    break;
  case 7: // Ops are swapped or dropped.
    if (auto *block = any(random, parts.blocks)) {
      auto &ops = block->operations;
      if (ops.size() >= 2 && pick(2))
        std::swap(ops[pick(ops.size())], ops[pick(ops.size())]);
      else if (!ops.empty())
        ops.erase(ops.begin() + pick(ops.size()));
    }
    break;
  case 8: // A block argument is added or dropped.
    if (auto *block = any(random, parts.blocks)) {
      if (!block->argument_types.empty() && pick(2))
        block->argument_types.pop_back();
      else if (!parts.types.empty())
        block->argument_types.push_back(
            std::make_unique<kfb::TensorTypeT>(*any(random, parts.types)));
    }
    break;
  case 9: // A region is dropped, or one is copied from another op.
    if (auto *op = any(random, parts.operations)) {
      if (!op->regions.empty() && pick(2)) {
        op->regions.pop_back();
      } else if (auto *other = any(random, parts.operations)) {
        if (other != op && !other->regions.empty())
          op->regions.push_back(std::make_unique<kfb::RegionT>(
              *other->regions[pick(other->regions.size())]));
      }
    }
    break;
  case 10: // A constant's bytes change, or its buffer grows or shrinks.
    if (!model.buffers.empty()) {
      auto &data = model.buffers[pick(model.buffers.size())]->data;
      if (!data.empty() && pick(2))
        data[pick(data.size())] = static_cast<uint8_t>(random());
      else if (!data.empty() && pick(2))
        data.pop_back();
      else
        data.push_back(static_cast<uint8_t>(pick(3)));
    }
    break;
  case 11: // A function's input or output is renamed or retyped.
    if (auto *port = any(random, parts.ports)) {
      if (pick(2))
        port->name = pick(2) ? "" : "renamed";
      else if (!parts.types.empty())
        port->type =
            std::make_unique<kfb::TensorTypeT>(*any(random, parts.types));
    }
    break;
  }
}

kfb::AttributeValueUnion
ModelMutator::randomValue(const kfb::ModelT &model,
                          const std::vector<kfb::TensorTypeT *> &types) {
  kfb::AttributeValueUnion value;
  switch (pick(6)) {
  case 0: {
    kfb::IntegerAttrT integer;
    const kfb::DType dtypes[] = {kfb::DType::I1, kfb::DType::I32,
                                 kfb::DType::I64, kfb::DType::F32};
    integer.type = dtypes[pick(std::size(dtypes))];
    integer.value = static_cast<int64_t>(pick(8)) - 2;
    value.Set(std::move(integer));
    break;
  }
  case 1: {
    kfb::DenseI64ArrayAttrT array;
    for (size_t i = 0, e = pick(4); i < e; ++i)
      array.values.push_back(static_cast<int64_t>(pick(6)) - 1);
    value.Set(std::move(array));
    break;
  }
  case 2:
    value.Set(kfb::UnitAttrT());
    break;
  case 3: {
    kfb::StringAttrT string;
    string.value = pick(2) ? "private" : "";
    value.Set(std::move(string));
    break;
  }
  case 4: {
    kfb::DenseElementsAttrT elements;
    elements.type =
        types.empty()
            ? std::make_unique<kfb::TensorTypeT>()
            : std::make_unique<kfb::TensorTypeT>(*types[pick(types.size())]);
    elements.buffer = static_cast<uint32_t>(pick(model.buffers.size() + 2));
    elements.splat = pick(2);
    value.Set(std::move(elements));
    break;
  }
  case 5: {
    kfb::FloatAttrT floating;
    floating.type = pick(2) ? kfb::DType::F32 : kfb::DType::BF16;
    floating.bits = pick(2) ? 0x3f800000 : 0x3f80;
    value.Set(std::move(floating));
    break;
  }
  }
  return value;
}

bool ModelMutator::mutateFile(std::vector<uint8_t> &bytes, unsigned edits) {
  if (bytes.size() < 8 || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE ||
      !kfb::ModelBufferHasIdentifier(bytes.data()))
    return false;
  // The verifier wants the buffer 8-byte aligned; a vector's data is.
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  const auto *data = reinterpret_cast<const uint8_t *>(aligned.data());
  flatbuffers::Verifier verifier(data, bytes.size());
  if (!kfb::VerifyModelBuffer(verifier))
    return false;
  std::unique_ptr<kfb::ModelT> model(kfb::GetModel(data)->UnPack());
  for (auto *list : ModelParts(*model).attributeLists)
    for (auto &attribute : *list)
      clearEmptyUnion(attribute->value);
  for (unsigned i = 0; i < edits; ++i)
    mutate(*model);
  bytes = packModel(*model);
  return true;
}

std::vector<uint8_t> packModel(const kfb::ModelT &model) {
  flatbuffers::FlatBufferBuilder builder;
  kfb::FinishModelBuffer(builder, kfb::Model::Pack(builder, &model));
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

} // namespace modelfile
} // namespace kiln
