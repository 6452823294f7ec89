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

/// The bytes the body takes at most: its code, device code, constants and
/// strings, plus FlatBuffers' tables, offsets and padding. A
/// FlatBufferBuilder grows by reallocating and copying all it holds, so it
/// starts at this size.
size_t bodySizeBound(const ModuleContents &contents, size_t constantsSize) {
  size_t bytes = contents.code.size() + contents.deviceCode.size() +
                 constantsSize + kConstantsAlignment + contents.target.size() +
                 4096;
  for (const FunctionSignature &function : contents.functions) {
    bytes += function.name.size() + function.entrySymbol.size() + 256;
    for (const auto *tensors : {&function.inputs, &function.outputs})
      for (const TensorSignature &tensor : *tensors)
        bytes += tensor.name.size() + 8 * tensor.shape.size() + 128;
  }
  return bytes;
}

/// Builds the body into `builder`, where it stays, with `constantsSize`
/// bytes reserved and left unwritten for the constants; returns how far
/// before the body's end they start (0 when there are none).
size_t writeBody(const ModuleContents &contents, size_t constantsSize,
                 flatbuffers::FlatBufferBuilder &builder) {
  // A body whose size is a multiple of 64 (the builder pads it to its
  // largest alignment) fills its aligned place in the envelope exactly, so
  // no unchecked padding follows it. The constants come first, so that the
  // builder (which writes back to front) places nothing but padding after
  // them.
  builder.TrackMinAlign(kConstantsAlignment);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> constants;
  size_t constantsFromEnd = 0;
  if (constantsSize != 0) {
    builder.ForceVectorAlignment(constantsSize, sizeof(uint8_t),
                                 kConstantsAlignment);
    uint8_t *place = nullptr;
    constants = builder.CreateUninitializedVector(constantsSize, &place);
    // The builder writes back to front and may move what it holds as it
    // grows: the place is kept as a distance from the end.
    constantsFromEnd =
        builder.GetCurrentBufferPointer() + builder.GetSize() - place;
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
  return constantsFromEnd;
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

/// The envelope around a body of `bodySize` bytes, in `builder`, with the
/// body's place reserved and left unwritten; returns that place. Every
/// field is written, defaults included, so that the layout depends on the
/// body's size alone and not on the checksum's value.
uint8_t *writeEnvelope(size_t bodySize, uint64_t checksum,
                       flatbuffers::FlatBufferBuilder &builder) {
  builder.ForceDefaults(true);
  builder.ForceVectorAlignment(bodySize, sizeof(uint8_t), kBodyAlignment);
  uint8_t *bodyPlace = nullptr;
  auto bodyVector = builder.CreateUninitializedVector(bodySize, &bodyPlace);
  kmod::FinishModuleBuffer(builder, kmod::CreateModule(builder, kFormatVersion,
                                                       checksum, bodyVector));
  return bodyPlace;
}

} // namespace

std::vector<uint8_t> writeModule(const ModuleContents &contents) {
  const ConstantBytes &constants = contents.constants;
  return writeModule(contents, constants.size(), [&](uint8_t *place) {
    std::copy(constants.begin(), constants.end(), place);
  });
}

std::vector<uint8_t>
writeModule(const ModuleContents &contents, size_t constantsSize,
            const std::function<void(uint8_t *)> &writeConstants) {
  BodyAllocator allocator;
  flatbuffers::FlatBufferBuilder bodyBuilder(
      bodySizeBound(contents, constantsSize), &allocator);
  size_t constantsFromEnd = writeBody(contents, constantsSize, bodyBuilder);
  const uint8_t *body = bodyBuilder.GetBufferPointer();
  size_t bodySize = bodyBuilder.GetSize();
  size_t constantsAt = bodySize - constantsFromEnd;

  // The result is assembled from the envelope's bytes around the body, the
  // body's bytes around its constants, and the constants, written once in
  // their final place: a transformer's weights are neither copied into the
  // builders nor out of them. The envelope records the body's checksum, so
  // it is written again, with the same layout, once the body is complete.
  flatbuffers::FlatBufferBuilder envelopeBuilder(bodySize + 1024);
  const uint8_t *bodyPlace = writeEnvelope(bodySize, 0, envelopeBuilder);
  const uint8_t *envelope = envelopeBuilder.GetBufferPointer();
  size_t size = envelopeBuilder.GetSize();
  size_t bodyAt = bodyPlace - envelope;

  std::vector<uint8_t> bytes;
  bytes.reserve(size);
  adviseHugePages(bytes.data(), size);
  bytes.resize(bodyAt); // The envelope's head, written last.
  bytes.insert(bytes.end(), body, body + constantsAt);
  bytes.resize(bodyAt + constantsAt + constantsSize);
  bytes.insert(bytes.end(), body + constantsAt + constantsSize,
               body + bodySize);
  bytes.resize(size); // The envelope's tail, written last.
  if (constantsSize != 0)
    writeConstants(bytes.data() + bodyAt + constantsAt);
  uint64_t checksum =
      bodyChecksum(kFormatVersion, bytes.data() + bodyAt, bodySize);

  flatbuffers::FlatBufferBuilder finalBuilder(bodySize + 1024);
  const uint8_t *finalBodyPlace =
      writeEnvelope(bodySize, checksum, finalBuilder);
  const uint8_t *finalEnvelope = finalBuilder.GetBufferPointer();
  std::copy(finalEnvelope, finalBodyPlace, bytes.begin());
  std::copy(finalBodyPlace + bodySize, finalEnvelope + size,
            bytes.begin() + bodyAt + bodySize);
  return bytes;
}

} // namespace format
} // namespace kiln
