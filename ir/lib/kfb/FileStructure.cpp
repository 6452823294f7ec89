//===- FileStructure.cpp - The outer checks of a .kfb file ----------------===//
//
// The version is read before the whole file is verified: a file written in a
// newer major version may be laid out differently, and must be refused as
// newer, not as corrupt. Only the root table and its first field are checked
// for that; the schema promises the version stays there.
//
//===----------------------------------------------------------------------===//

#include "FileStructure.h"

#include "kiln/IR/ModelFile.h"

#include <string>

namespace kiln {
namespace modelfile {

namespace {

flatbuffers::Verifier::Options verifierOptions(size_t size) {
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxTableDepth;
  // Every table takes at least four bytes and no table may be referenced
  // twice (the checks enforce that later), so a valid file never has more
  // tables than this. The bound keeps verification linear in the size even
  // for files that do share tables.
  options.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 16);
  options.check_alignment = true;
  return options;
}

std::string versionText(const kfb::Version &version) {
  return std::to_string(version.major()) + "." +
         std::to_string(version.minor());
}

} // namespace

const kfb::Model *verifyFileStructure(const uint8_t *bytes, size_t size,
                                      std::string &error) {
  constexpr size_t kHeaderSize =
      sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;
  if (size < kHeaderSize) {
    error = "not a .kfb model file: " + std::to_string(size) +
            " bytes is too small to hold one";
    return nullptr;
  }
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    error = "the .kfb file is too large (" + std::to_string(size) +
            " bytes; the limit is " +
            std::to_string(FLATBUFFERS_MAX_BUFFER_SIZE - 1) + ")";
    return nullptr;
  }
  if (!kfb::ModelBufferHasIdentifier(bytes)) {
    error = "not a .kfb model file (missing the '" +
            kModelFileIdentifier.str() + "' file identifier)";
    return nullptr;
  }

  flatbuffers::Verifier::Options options = verifierOptions(size);
  {
    flatbuffers::Verifier verifier(bytes, size, options);
    flatbuffers::uoffset_t rootOffset = verifier.VerifyOffset(0);
    if (!rootOffset) {
      error = "malformed .kfb file: the offset of its root table is out of "
              "bounds (the file is truncated or corrupted)";
      return nullptr;
    }
    const auto *root =
        reinterpret_cast<const flatbuffers::Table *>(bytes + rootOffset);
    if (!verifier.VerifyTableStart(bytes + rootOffset) ||
        !root->VerifyField<kfb::Version>(verifier, kfb::Model::VT_VERSION,
                                         alignof(kfb::Version))) {
      error = "malformed .kfb file: its root table is truncated or corrupted";
      return nullptr;
    }
    const kfb::Version *version = kfb::GetModel(bytes)->version();
    if (!version) {
      error = "malformed .kfb file: it records no format version";
      return nullptr;
    }
    if (version->major() != kModelFileVersionMajor) {
      error = "unsupported .kfb format version " + versionText(*version) +
              ": this reader reads major version " +
              std::to_string(kModelFileVersionMajor) + " (" +
              std::to_string(kModelFileVersionMajor) + ".x)";
      if (version->major() > kModelFileVersionMajor)
        error += "; the file was written by a newer kiln";
      return nullptr;
    }
  }

  flatbuffers::Verifier verifier(bytes, size, options);
  if (!kfb::VerifyModelBuffer(verifier)) {
    error = "malformed .kfb file: it fails structural verification (the "
            "file is truncated or corrupted, or nests tables more than " +
            std::to_string(kMaxTableDepth) + " deep)";
    return nullptr;
  }
  return kfb::GetModel(bytes);
}

} // namespace modelfile
} // namespace kiln
