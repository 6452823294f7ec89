//===- ModuleWriter.cpp - Serializing modules ------------------------------===//
//
// Builds the body FlatBuffer first, then wraps its bytes in the envelope
// together with the format version and the body's checksum.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

#include "kmod_generated.h"

namespace kiln {
namespace format {

namespace {

/// The body is read in place from inside the envelope, so it must start at
/// an address suitable for its widest scalar (the int64 dimensions).
constexpr size_t kBodyAlignment = 8;

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<kmod::TensorSig>>>
writeTensors(flatbuffers::FlatBufferBuilder &builder,
             const std::vector<TensorSignature> &tensors) {
  std::vector<flatbuffers::Offset<kmod::TensorSig>> offsets;
  offsets.reserve(tensors.size());
  for (const TensorSignature &tensor : tensors) {
    auto name = builder.CreateString(tensor.name);
    auto shape = builder.CreateVector(tensor.shape);
    offsets.push_back(kmod::CreateTensorSig(
        builder, name, static_cast<kmod::DType>(tensor.dtype), shape,
        tensor.tiedInput));
  }
  return builder.CreateVector(offsets);
}

/// The bytes the body takes at most: its code, device code and strings,
/// plus FlatBuffers' tables, offsets and padding. A FlatBufferBuilder grows
/// by reallocating and copying all it holds, so a module's code (with its
/// constants: hundreds of megabytes for a transformer) is copied once only
/// if the builder starts at this size.
size_t bodySizeBound(const ModuleContents &contents) {
  size_t bytes = contents.code.size() + contents.deviceCode.size() +
                 contents.target.size() + 4096;
  for (const FunctionSignature &function : contents.functions) {
    bytes += function.name.size() + function.entrySymbol.size() + 256;
    for (const auto *tensors : {&function.inputs, &function.outputs})
      for (const TensorSignature &tensor : *tensors)
        bytes += tensor.name.size() + 8 * tensor.shape.size() + 128;
  }
  return bytes;
}

/// Builds the body into `builder`, where it stays.
void writeBody(const ModuleContents &contents,
               flatbuffers::FlatBufferBuilder &builder) {
  std::vector<flatbuffers::Offset<kmod::Function>> functions;
  functions.reserve(contents.functions.size());
  for (const FunctionSignature &function : contents.functions) {
    auto inputs = writeTensors(builder, function.inputs);
    auto outputs = writeTensors(builder, function.outputs);
    auto name = builder.CreateString(function.name);
    auto entrySymbol = builder.CreateString(function.entrySymbol);
    functions.push_back(
        kmod::CreateFunction(builder, name, entrySymbol, inputs, outputs));
  }
  auto functionVector = builder.CreateVector(functions);
  auto target = builder.CreateString(contents.target);
  auto code = builder.CreateVector(contents.code);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> deviceCode;
  if (!contents.deviceCode.empty())
    deviceCode = builder.CreateVector(contents.deviceCode);
  builder.Finish(
      kmod::CreateBody(builder, target, functionVector, code, deviceCode));
}

} // namespace

std::vector<uint8_t> writeModule(const ModuleContents &contents) {
  flatbuffers::FlatBufferBuilder bodyBuilder(bodySizeBound(contents));
  writeBody(contents, bodyBuilder);
  const uint8_t *body = bodyBuilder.GetBufferPointer();
  size_t bodySize = bodyBuilder.GetSize();

  flatbuffers::FlatBufferBuilder builder(bodySize + 256);
  builder.ForceVectorAlignment(bodySize, sizeof(uint8_t), kBodyAlignment);
  auto bodyVector = builder.CreateVector(body, bodySize);
  auto module = kmod::CreateModule(builder, kFormatVersion,
                                   fnv1a64(body, bodySize), bodyVector);
  kmod::FinishModuleBuffer(builder, module);
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

} // namespace format
} // namespace kiln
