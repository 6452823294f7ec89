//===- ModuleReader.cpp - Parsing and verifying modules --------------------===//
//
// Reading proceeds from the outside in, trusting nothing before it has been
// checked: the envelope's structure, its version, the body's checksum, the
// body's structure, and finally the meaning of the body's fields. Only then
// are the fields copied out.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

#include "kmod_generated.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace kiln {
namespace format {

namespace {

/// FlatBuffers reads scalars in place, so a buffer that does not start at an
/// 8-byte boundary (a slice of a larger file, say) is copied to one that
/// does. Returns the bytes to read, which are either \p data or \p storage.
const uint8_t *alignForReading(const void *data, size_t size,
                               std::unique_ptr<uint64_t[]> &storage) {
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0)
    return static_cast<const uint8_t *>(data);
  storage.reset(new uint64_t[(size + sizeof(uint64_t) - 1) / sizeof(uint64_t)]);
  std::memcpy(storage.get(), data, size);
  return reinterpret_cast<const uint8_t *>(storage.get());
}

flatbuffers::Verifier::Options verifierOptions() {
  flatbuffers::Verifier::Options options;
  // The body is verified separately, after its checksum, so that a damaged
  // body is reported as such rather than as a malformed envelope.
  options.check_nested_flatbuffers = false;
  return options;
}

std::string toString(const flatbuffers::String *string) {
  return string ? std::string(string->c_str(), string->size()) : std::string();
}

std::vector<TensorSignature> toTensors(
    const flatbuffers::Vector<flatbuffers::Offset<kmod::TensorSig>> *tensors) {
  std::vector<TensorSignature> result;
  if (!tensors)
    return result;
  result.reserve(tensors->size());
  for (const kmod::TensorSig *tensor : *tensors) {
    TensorSignature signature;
    signature.name = toString(tensor->name());
    signature.dtype =
        static_cast<DType>(static_cast<uint8_t>(tensor->dtype()));
    if (const auto *shape = tensor->shape())
      signature.shape.assign(shape->begin(), shape->end());
    signature.tiedInput = tensor->tied_input();
    result.push_back(std::move(signature));
  }
  return result;
}

/// The module's contents; the constants stay where they are when
/// `inBuffer` allows it and they lie aligned to KILN_CONSTANTS_ALIGNMENT.
ModuleContents toContents(const kmod::Body &body, bool inBuffer) {
  ModuleContents contents;
  contents.target = toString(body.target());
  if (const auto *functions = body.functions()) {
    contents.functions.reserve(functions->size());
    for (const kmod::Function *function : *functions) {
      FunctionSignature signature;
      signature.name = toString(function->name());
      signature.entrySymbol = toString(function->entry_symbol());
      signature.inputs = toTensors(function->inputs());
      signature.outputs = toTensors(function->outputs());
      contents.functions.push_back(std::move(signature));
    }
  }
  if (const auto *code = body.code())
    contents.code.assign(code->begin(), code->end());
  if (const auto *deviceCode = body.device_code())
    contents.deviceCode.assign(deviceCode->begin(), deviceCode->end());
  if (const auto *constants = body.constants()) {
    if (inBuffer && constants->size() != 0 &&
        reinterpret_cast<uintptr_t>(constants->data()) %
                            KILN_CONSTANTS_ALIGNMENT ==
                        0) {
      contents.constantsInBuffer = constants->data();
      contents.constantsInBufferSize = constants->size();
    } else {
      contents.constants.assign(constants->begin(), constants->end());
    }
  }
  return contents;
}

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

} // namespace

bool readModule(const void *data, size_t size, ModuleContents &out,
                std::string &error, ConstantsPlacement placement) {
  if (!data && size != 0) {
    error = "module buffer is NULL";
    return false;
  }
  if (size < 2 * sizeof(flatbuffers::uoffset_t)) {
    error = "not a .kmod module: " + std::to_string(size) +
            " bytes is too small to hold one";
    return false;
  }
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    error = "module is too large (" + std::to_string(size) +
            " bytes; the limit is " +
            std::to_string(FLATBUFFERS_MAX_BUFFER_SIZE - 1) + ")";
    return false;
  }
  if (!kmod::ModuleBufferHasIdentifier(data)) {
    error = "not a .kmod module (missing the 'KMOD' file identifier)";
    return false;
  }

  std::unique_ptr<uint64_t[]> envelopeStorage;
  const uint8_t *bytes = alignForReading(data, size, envelopeStorage);
  flatbuffers::Verifier verifier(bytes, size, verifierOptions());
  if (!kmod::VerifyModuleBuffer(verifier)) {
    error = "malformed .kmod module: the envelope fails structural "
            "verification (the file is truncated or corrupted)";
    return false;
  }
  const kmod::Module *module = kmod::GetModule(bytes);
  uint32_t version = module->format_version();
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    error = "unsupported .kmod format version " + std::to_string(version) +
            " (this runtime reads versions " +
            std::to_string(kOldestFormatVersion) + " to " +
            std::to_string(kFormatVersion) + ")";
    return false;
  }

  const flatbuffers::Vector<uint8_t> *bodyBytes = module->body();
  if (!bodyBytes || bodyBytes->size() == 0) {
    error = "malformed .kmod module: it has no body";
    return false;
  }
  uint64_t checksum =
      bodyChecksum(version, bodyBytes->data(), bodyBytes->size());
  if (checksum != module->checksum()) {
    error = "corrupted .kmod module: the body checksum is " + hex(checksum) +
            " but the module records " + hex(module->checksum());
    return false;
  }

  std::unique_ptr<uint64_t[]> bodyStorage;
  const uint8_t *body =
      alignForReading(bodyBytes->data(), bodyBytes->size(), bodyStorage);
  flatbuffers::Verifier bodyVerifier(body, bodyBytes->size(),
                                     verifierOptions());
  if (!bodyVerifier.VerifyBuffer<kmod::Body>(nullptr)) {
    error = "malformed .kmod module: the body fails structural verification "
            "although its checksum matches (the module was written "
            "incorrectly)";
    return false;
  }

  const kmod::Body *root = flatbuffers::GetRoot<kmod::Body>(body);
  if (version < 2 && root->constants()) {
    error = "malformed .kmod module: a format version " +
            std::to_string(version) +
            " body has constants, which version 2 introduced";
    return false;
  }
  // Constants left in place must lie in the caller's bytes, not in a copy
  // alignForReading made (which goes when this function returns).
  bool inBuffer = placement == ConstantsPlacement::InBufferIfAligned &&
                  !envelopeStorage && !bodyStorage;
  ModuleContents contents = toContents(*root, inBuffer);
  if (!validateModule(contents, error)) {
    error = "invalid .kmod module: " + error;
    return false;
  }
  out = std::move(contents);
  return true;
}

} // namespace format
} // namespace kiln
