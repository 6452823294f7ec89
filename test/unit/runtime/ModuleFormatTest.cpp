//===- ModuleFormatTest.cpp - Tests of the .kmod reader and writer ---------===//

#include "TestSupport.h"

#include "kmod_generated.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace kiln;
using namespace kiln::format;
using kiln::test::addModuleContents;
using kiln::test::makeEnvelope;
using kiln::test::mixedModuleContents;

namespace {

/// The body bytes of a module written by writeModule.
std::vector<uint8_t> bodyOf(const std::vector<uint8_t> &module) {
  const auto *body = kmod::GetModule(module.data())->body();
  return std::vector<uint8_t>(body->begin(), body->end());
}

std::string readError(const std::vector<uint8_t> &bytes) {
  ModuleContents contents;
  std::string error;
  EXPECT_FALSE(readModule(bytes.data(), bytes.size(), contents, error));
  return error;
}

std::string readError(const ModuleContents &contents) {
  return readError(writeModule(contents));
}

void expectEqual(const TensorSignature &a, const TensorSignature &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.tiedInput, b.tiedInput);
}

void expectEqual(const ModuleContents &a, const ModuleContents &b) {
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.deviceCode, b.deviceCode);
  EXPECT_EQ(a.constants, b.constants);
  ASSERT_EQ(a.functions.size(), b.functions.size());
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const FunctionSignature &fa = a.functions[i], &fb = b.functions[i];
    EXPECT_EQ(fa.name, fb.name);
    EXPECT_EQ(fa.entrySymbol, fb.entrySymbol);
    ASSERT_EQ(fa.inputs.size(), fb.inputs.size());
    ASSERT_EQ(fa.outputs.size(), fb.outputs.size());
    for (size_t j = 0; j < fa.inputs.size(); ++j)
      expectEqual(fa.inputs[j], fb.inputs[j]);
    for (size_t j = 0; j < fa.outputs.size(); ++j)
      expectEqual(fa.outputs[j], fb.outputs[j]);
  }
}

TEST(ModuleFormatTest, RoundTripsEveryField) {
  for (const ModuleContents &original :
       {addModuleContents(), mixedModuleContents()}) {
    std::vector<uint8_t> bytes = writeModule(original);
    ModuleContents read;
    std::string error;
    ASSERT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
    expectEqual(original, read);
  }
}

TEST(ModuleFormatTest, RoundTripsEveryDType) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].inputs.clear();
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    TensorSignature tensor;
    tensor.name = std::string("t") + dtypeName(static_cast<DType>(i));
    tensor.dtype = static_cast<DType>(i);
    tensor.shape = {static_cast<int64_t>(i), 2};
    contents.functions[0].inputs.push_back(tensor);
  }
  std::vector<uint8_t> bytes = writeModule(contents);
  ModuleContents read;
  std::string error;
  ASSERT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
  expectEqual(contents, read);
}

TEST(ModuleFormatTest, WritingIsDeterministic) {
  EXPECT_EQ(writeModule(mixedModuleContents()),
            writeModule(mixedModuleContents()));
}

TEST(ModuleFormatTest, EnvelopeCarriesIdentifierVersionAndChecksum) {
  std::vector<uint8_t> bytes = writeModule(addModuleContents());
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(std::string(bytes.begin() + 4, bytes.begin() + 8), "KMOD");
  const kmod::Module *module = kmod::GetModule(bytes.data());
  EXPECT_EQ(module->format_version(), kFormatVersion);
  EXPECT_EQ(module->checksum(), bodyChecksum(kFormatVersion,
                                             module->body()->data(),
                                             module->body()->size()));
  // The body is stored aligned so that it can be read in place, and so that
  // its constants are aligned to a cache line within the file.
  EXPECT_EQ((module->body()->data() - bytes.data()) % 64, 0);
}

TEST(ModuleFormatTest, ReadsFromUnalignedBuffers) {
  std::vector<uint8_t> bytes = writeModule(addModuleContents());
  for (size_t offset = 1; offset < 8; ++offset) {
    std::vector<uint8_t> shifted(offset, 0xaa);
    shifted.insert(shifted.end(), bytes.begin(), bytes.end());
    ModuleContents read;
    std::string error;
    ASSERT_TRUE(
        readModule(shifted.data() + offset, bytes.size(), read, error))
        << "offset " << offset << ": " << error;
    expectEqual(addModuleContents(), read);
  }
}

TEST(ModuleFormatTest, FailureLeavesOutputUntouched) {
  ModuleContents out = mixedModuleContents();
  std::vector<uint8_t> bytes = writeModule(addModuleContents());
  bytes.back() ^= 1;
  std::string error;
  EXPECT_FALSE(readModule(bytes.data(), bytes.size(), out, error));
  expectEqual(mixedModuleContents(), out);
}

TEST(ModuleFormatTest, Fnv1aMatchesReferenceValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

TEST(ModuleFormatTest, DTypeProperties) {
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::UI8), "ui8");
  EXPECT_STREQ(dtypeName(static_cast<DType>(13)), "invalid");
  EXPECT_EQ(dtypeSize(DType::I1), 1u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::I8), 1u);
  EXPECT_EQ(dtypeSize(DType::UI16), 2u);
  EXPECT_EQ(dtypeSize(DType::UI64), 8u);
  EXPECT_EQ(dtypeSize(static_cast<DType>(200)), 0u);
  EXPECT_TRUE(isValidDType(DType::BF16));
  EXPECT_TRUE(isValidDType(DType::UI64));
  EXPECT_FALSE(isValidDType(static_cast<DType>(13)));
}

//===-- Envelope errors ---------------------------------------------------===//

TEST(ModuleFormatTest, RejectsTinyBuffers) {
  EXPECT_EQ(readError(std::vector<uint8_t>()),
            "not a .kmod module: 0 bytes is too small to hold one");
  EXPECT_NE(readError(std::vector<uint8_t>(7, 0)).find("too small"),
            std::string::npos);
  ModuleContents contents;
  std::string error;
  EXPECT_FALSE(readModule(nullptr, 0, contents, error));
}

TEST(ModuleFormatTest, RejectsWrongIdentifier) {
  std::vector<uint8_t> bytes = writeModule(addModuleContents());
  bytes[4] = 'X';
  EXPECT_EQ(readError(bytes),
            "not a .kmod module (missing the 'KMOD' file identifier)");
}

TEST(ModuleFormatTest, RejectsGarbageWithIdentifier) {
  std::mt19937 random(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> bytes(8 + random() % 512);
    for (uint8_t &byte : bytes)
      byte = static_cast<uint8_t>(random());
    std::memcpy(bytes.data() + 4, "KMOD", 4);
    std::string error = readError(bytes);
    EXPECT_FALSE(error.empty());
  }
}

TEST(ModuleFormatTest, RejectsOtherVersions) {
  std::vector<uint8_t> body = bodyOf(writeModule(addModuleContents()));
  uint64_t checksum = bodyChecksum(2, body.data(), body.size());
  EXPECT_EQ(readError(makeEnvelope(3, checksum, &body)),
            "unsupported .kmod format version 3 (this runtime reads versions "
            "1 to 2)");
  EXPECT_EQ(readError(makeEnvelope(0, checksum, &body)),
            "unsupported .kmod format version 0 (this runtime reads versions "
            "1 to 2)");
  // A later version may change the body completely; the version is still
  // what gets reported.
  std::vector<uint8_t> alien = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(readError(makeEnvelope(7, 0, &alien)),
            "unsupported .kmod format version 7 (this runtime reads versions "
            "1 to 2)");
}

TEST(ModuleFormatTest, ReadsVersion1) {
  // Modules written before version 2: the same body, checksummed with
  // FNV-1a.
  std::vector<uint8_t> body = bodyOf(writeModule(addModuleContents()));
  std::vector<uint8_t> bytes =
      makeEnvelope(1, fnv1a64(body.data(), body.size()), &body);
  ModuleContents read;
  std::string error;
  ASSERT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
  expectEqual(addModuleContents(), read);
  // Its CRC32C is not its checksum.
  std::vector<uint8_t> crc = makeEnvelope(1, bodyChecksum(2, body.data(),
                                                          body.size()),
                                          &body);
  EXPECT_EQ(readError(crc).rfind("corrupted .kmod module", 0), 0u);
  // Constants came with version 2.
  ModuleContents pooled = addModuleContents();
  pooled.constants.assign(100, 7);
  std::vector<uint8_t> pooledBody = bodyOf(writeModule(pooled));
  EXPECT_EQ(readError(makeEnvelope(
                1, fnv1a64(pooledBody.data(), pooledBody.size()),
                &pooledBody)),
            "malformed .kmod module: a format version 1 body has constants, "
            "which version 2 introduced");
}

TEST(ModuleFormatTest, ConstantsRoundTripAligned) {
  ModuleContents contents = addModuleContents();
  for (size_t i = 0; i < 1000; ++i)
    contents.constants.push_back(static_cast<uint8_t>(i * 37 + 11));
  std::vector<uint8_t> bytes = writeModule(contents);
  const kmod::Module *module = kmod::GetModule(bytes.data());
  const kmod::Body *body =
      flatbuffers::GetRoot<kmod::Body>(module->body()->data());
  ASSERT_NE(body->constants(), nullptr);
  EXPECT_EQ(body->constants()->size(), 1000u);
  EXPECT_EQ((body->constants()->data() - bytes.data()) % 64, 0);
  ModuleContents read;
  std::string error;
  ASSERT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
  EXPECT_EQ(read.constants, contents.constants);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(read.constants.data()) % 64, 0u);
}

// Constants written by the caller into their place give the same bytes as
// constants handed over in the contents, whose own field is then ignored;
// the place is zeroed, so a writer may leave gaps. Sizes that are not a
// multiple of the alignment leave padding after the constants.
TEST(ModuleFormatTest, ConstantsWrittenInPlace) {
  for (size_t size : {1u, 63u, 64u, 1000u, 4097u}) {
    ModuleContents contents = addModuleContents();
    for (size_t i = 0; i < size; ++i)
      contents.constants.push_back(
          i % 7 == 3 ? 0 : static_cast<uint8_t>(i * 37 + 11));
    std::vector<uint8_t> expected = writeModule(contents);

    ModuleContents withoutConstants = addModuleContents();
    withoutConstants.constants.assign(5, 0xAB); // ignored
    size_t calls = 0;
    std::vector<uint8_t> bytes =
        writeModule(withoutConstants, size, [&](uint8_t *place) {
          ++calls;
          for (size_t i = 0; i < size; ++i) {
            EXPECT_EQ(place[i], 0) << "byte " << i << " of " << size;
            if (i % 7 != 3)
              place[i] = contents.constants[i];
          }
        });
    EXPECT_EQ(calls, 1u);
    EXPECT_EQ(bytes, expected) << size << " bytes of constants";
    ModuleContents read;
    std::string error;
    ASSERT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
    EXPECT_EQ(read.constants, contents.constants);
  }

  // No constants: the callback is never called and no constants are
  // written.
  ModuleContents contents = addModuleContents();
  std::vector<uint8_t> bytes = writeModule(
      contents, 0, [](uint8_t *) { ADD_FAILURE() << "called for nothing"; });
  EXPECT_EQ(bytes, writeModule(contents));
}

// Asked to leave the constants in the buffer, the reader points at them
// there when the buffer is aligned as the writer assumes; from a buffer
// one byte off (or with the default placement) it copies them.
TEST(ModuleFormatTest, ConstantsLeftInTheBuffer) {
  ModuleContents contents = addModuleContents();
  for (size_t i = 0; i < 1000; ++i)
    contents.constants.push_back(static_cast<uint8_t>(i * 29 + 3));
  std::vector<uint8_t> written = writeModule(contents);
  ConstantBytes aligned(written.begin(), written.end());
  ModuleContents read;
  std::string error;
  ASSERT_TRUE(readModule(aligned.data(), aligned.size(), read, error,
                         ConstantsPlacement::InBufferIfAligned))
      << error;
  EXPECT_TRUE(read.constants.empty());
  ASSERT_NE(read.constantsInBuffer, nullptr);
  EXPECT_GE(read.constantsInBuffer, aligned.data());
  EXPECT_LE(read.constantsInBuffer + read.constantsInBufferSize,
            aligned.data() + aligned.size());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(read.constantsInBuffer) % 64, 0u);
  EXPECT_EQ(std::vector<uint8_t>(read.constantsInBuffer,
                                 read.constantsInBuffer +
                                     read.constantsInBufferSize),
            std::vector<uint8_t>(contents.constants.begin(),
                                 contents.constants.end()));
  EXPECT_EQ(read.code, contents.code);

  // One byte off: the reader works on an aligned copy, which it does not
  // keep, so the constants are copied.
  ConstantBytes shifted(written.size() + 1);
  std::memcpy(shifted.data() + 1, written.data(), written.size());
  ModuleContents copied;
  ASSERT_TRUE(readModule(shifted.data() + 1, written.size(), copied, error,
                         ConstantsPlacement::InBufferIfAligned))
      << error;
  EXPECT_EQ(copied.constantsInBuffer, nullptr);
  EXPECT_EQ(copied.constants, contents.constants);

  ModuleContents byDefault;
  ASSERT_TRUE(readModule(aligned.data(), aligned.size(), byDefault, error))
      << error;
  EXPECT_EQ(byDefault.constantsInBuffer, nullptr);
  EXPECT_EQ(byDefault.constants, contents.constants);
}

TEST(ModuleFormatTest, AcceptsHandBuiltEnvelope) {
  std::vector<uint8_t> body = bodyOf(writeModule(addModuleContents()));
  std::vector<uint8_t> bytes =
      makeEnvelope(kFormatVersion,
                   bodyChecksum(kFormatVersion, body.data(), body.size()),
                   &body);
  ModuleContents read;
  std::string error;
  EXPECT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
}

TEST(ModuleFormatTest, RejectsMissingBody) {
  EXPECT_EQ(readError(makeEnvelope(kFormatVersion, 0, nullptr)),
            "malformed .kmod module: it has no body");
  std::vector<uint8_t> empty;
  EXPECT_EQ(readError(makeEnvelope(kFormatVersion, 0, &empty)),
            "malformed .kmod module: it has no body");
}

TEST(ModuleFormatTest, RejectsChecksumMismatch) {
  std::vector<uint8_t> body = bodyOf(writeModule(addModuleContents()));
  uint64_t checksum = bodyChecksum(kFormatVersion, body.data(), body.size());
  std::string error = readError(makeEnvelope(kFormatVersion, checksum + 1, &body));
  EXPECT_EQ(error.rfind("corrupted .kmod module: the body checksum is", 0), 0u)
      << error;
}

TEST(ModuleFormatTest, RejectsMalformedBodyWithValidChecksum) {
  std::vector<uint8_t> body = {0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 1, 2, 3, 4};
  std::string error = readError(makeEnvelope(
      kFormatVersion, bodyChecksum(kFormatVersion, body.data(), body.size()),
      &body));
  EXPECT_NE(error.find("the body fails structural verification"),
            std::string::npos)
      << error;
}

//===-- Semantic errors ---------------------------------------------------===//

TEST(ModuleFormatTest, RejectsModuleWithoutFunctions) {
  ModuleContents contents = addModuleContents();
  contents.functions.clear();
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: module defines no functions");
}

TEST(ModuleFormatTest, RejectsBadFunctionNames) {
  ModuleContents contents = mixedModuleContents();
  contents.functions[1].name = "";
  EXPECT_EQ(readError(contents), "invalid .kmod module: function #1: empty name");

  contents = mixedModuleContents();
  contents.functions[1].name = std::string("sc\0ale", 6);
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function #1: name contains a NUL character");

  contents = mixedModuleContents();
  contents.functions[1].name = "stats";
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'stats': duplicate function name");
}

TEST(ModuleFormatTest, RejectsBadEntrySymbols) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].entrySymbol = "";
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'add': empty entry symbol");
  contents.functions[0].entrySymbol = std::string("kiln\0x", 6);
  EXPECT_EQ(readError(contents), "invalid .kmod module: function 'add': entry "
                                 "symbol contains a NUL character");
}

TEST(ModuleFormatTest, RejectsBadTensorSignatures) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].inputs[1].dtype = static_cast<DType>(13);
  EXPECT_EQ(readError(contents), "invalid .kmod module: function 'add' input 1 "
                                 "('b'): unknown dtype 13");

  contents = addModuleContents();
  contents.functions[0].inputs[1].shape = {2, -3};
  EXPECT_EQ(readError(contents), "invalid .kmod module: function 'add' input 1 "
                                 "('b'): negative dimension -3 (axis 1)");

  contents = addModuleContents();
  contents.functions[0].outputs[0].name = "";
  contents.functions[0].outputs[0].shape = {-1};
  EXPECT_EQ(readError(contents), "invalid .kmod module: function 'add' output "
                                 "0: negative dimension -1 (axis 0)");

  contents = addModuleContents();
  contents.functions[0].outputs[0].shape = {1 << 30, 1 << 30, 1 << 30};
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'add' output 0 ('sum'): size of "
            "the shape overflows (axis 2 has dimension 1073741824)");

  contents = addModuleContents();
  contents.functions[0].inputs[0].name = std::string("a\0b", 3);
  EXPECT_EQ(readError(contents), "invalid .kmod module: function 'add' input 0: "
                                 "name contains a NUL character");
}

TEST(ModuleFormatTest, AcceptsZeroSizedAndScalarTensors) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].inputs[0].shape = {0, int64_t(1) << 62};
  contents.functions[0].inputs[1].shape = {};
  std::string error;
  EXPECT_TRUE(validateModule(contents, error)) << error;
}

TEST(ModuleFormatTest, RejectsMissingOrForeignCode) {
  ModuleContents contents = addModuleContents();
  contents.code.clear();
  EXPECT_EQ(readError(contents), "invalid .kmod module: module has no code");
  contents.code = {'M', 'Z', 0x90, 0};
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: module code is not an ELF object (bad "
            "magic)");
}

// An output written into a donated input (tied_input) round-trips, and a
// tie that could not be honoured is refused with what is wrong.
TEST(ModuleFormatTest, TiedOutputsRoundTripAndAreChecked) {
  ModuleContents tied = addModuleContents();
  EXPECT_EQ(tied.functions[0].outputs[0].tiedInput, -1);
  tied.functions[0].outputs[0].tiedInput = 1;
  ModuleContents read;
  std::string error;
  std::vector<uint8_t> bytes = writeModule(tied);
  ASSERT_TRUE(readModule(bytes.data(), bytes.size(), read, error)) << error;
  expectEqual(tied, read);

  ModuleContents contents = tied;
  contents.functions[0].outputs[0].tiedInput = 2;
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'add' output 0 ('sum'): tied to "
            "input 2 but the function has 2 inputs");
  contents = tied;
  contents.functions[0].inputs[1].shape = {5};
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'add' output 0 ('sum'): tied to "
            "input 1, whose dtype or shape differs");
  contents = tied;
  contents.functions[0].inputs[0].tiedInput = 1;
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'add' input 0 ('a'): an input "
            "cannot be tied to an input (tied_input 1)");
  contents = tied;
  contents.functions[0].outputs.push_back(contents.functions[0].outputs[0]);
  EXPECT_EQ(readError(contents),
            "invalid .kmod module: function 'add' output 1 ('sum'): input 1 "
            "is tied to two outputs");
}

TEST(ModuleFormatTest, ValidateAcceptsFixtures) {
  std::string error;
  EXPECT_TRUE(validateModule(addModuleContents(), error)) << error;
  EXPECT_TRUE(validateModule(mixedModuleContents(), error)) << error;
}

} // namespace
