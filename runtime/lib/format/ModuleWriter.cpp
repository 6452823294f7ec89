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
/// an address suitable for its widest scalar (the int64 dimensions); and at
/// a cache line, so that its constants (aligned so within the body) are
/// aligned so within the file as well.
constexpr size_t kConstantsAlignment = KILN_CONSTANTS_ALIGNMENT;
constexpr size_t kBodyAlignment = kConstantsAlignment;

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
                 contents.constants.size() + kConstantsAlignment +
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
  // A body whose size is a multiple of 64 (the builder pads it to its
  // largest alignment) fills its aligned place in the envelope exactly, so
  // no unchecked padding follows it. The constants come first, so that the
  // builder (which writes back to front) places nothing but padding after
  // them.
  builder.TrackMinAlign(kConstantsAlignment);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> constants;
  if (!contents.constants.empty()) {
    builder.ForceVectorAlignment(contents.constants.size(), sizeof(uint8_t),
                                 kConstantsAlignment);
    constants = builder.CreateVector(contents.constants.data(),
                                     contents.constants.size());
  }
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
  builder.Finish(kmod::CreateBody(builder, target, functionVector, code,
                                  deviceCode, constants));
}

/// The body builder's storage: huge pages for a large body (HugePages.cpp).
class BodyAllocator : public flatbuffers::Allocator {
public:
  uint8_t *allocate(size_t size) override {
    auto *block = static_cast<uint8_t *>(::operator new(size));
    adviseHugePages(block, size);
    return block;
  }
  void deallocate(uint8_t *block, size_t) override { ::operator delete(block); }
};

} // namespace

std::vector<uint8_t> writeModule(const ModuleContents &contents) {
  BodyAllocator allocator;
  flatbuffers::FlatBufferBuilder bodyBuilder(bodySizeBound(contents),
                                             &allocator);
  writeBody(contents, bodyBuilder);
  const uint8_t *body = bodyBuilder.GetBufferPointer();
  size_t bodySize = bodyBuilder.GetSize();

  // The envelope reserves the body's place without filling it, and the
  // result is assembled from the envelope's other bytes and the body: the
  // body (with the weights) is copied once more, not twice.
  flatbuffers::FlatBufferBuilder builder(bodySize + 1024);
  builder.ForceVectorAlignment(bodySize, sizeof(uint8_t), kBodyAlignment);
  uint8_t *bodyPlace = nullptr;
  auto bodyVector = builder.CreateUninitializedVector(bodySize, &bodyPlace);
  auto module = kmod::CreateModule(builder, kFormatVersion,
                                   bodyChecksum(kFormatVersion, body, bodySize),
                                   bodyVector);
  kmod::FinishModuleBuffer(builder, module);
  const uint8_t *envelope = builder.GetBufferPointer();
  size_t size = builder.GetSize();
  std::vector<uint8_t> bytes;
  bytes.reserve(size);
  adviseHugePages(bytes.data(), size);
  const uint8_t *place = bodyPlace;
  bytes.insert(bytes.end(), envelope, place);
  bytes.insert(bytes.end(), body, body + bodySize);
  bytes.insert(bytes.end(), place + bodySize, envelope + size);
  return bytes;
}

} // namespace format
} // namespace kiln
