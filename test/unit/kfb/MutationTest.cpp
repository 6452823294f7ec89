//===- MutationTest.cpp - The reader survives damaged files ---------------===//
//
// A deterministic fuzz loop that runs in every test run: truncations at
// every length, bit flips and random byte mutations of the suite's models,
// and random edits of their structure (through the FlatBuffers object API,
// so that the damage gets past the FlatBuffers verifier to the semantic
// checks and the MLIR verifier). Every variant must give an error with a
// message, or a module that verifies and survives another round trip; none
// may crash. (ir/fuzz has the coverage-guided libFuzzer counterpart.)
//
//===----------------------------------------------------------------------===//

#include "KfbTestSupport.h"
#include "ModelMutator.h"

#include "kiln/IR/ModelFile.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <random>

namespace kiln {
namespace kfbtest {
namespace {

class MutationTest : public KfbTest {
protected:
  void SetUp() override {
    for (const std::string &program : suitePrograms()) {
      mlir::OwningOpRef<mlir::ModuleOp> module = parse(readFile(program));
      ASSERT_TRUE(module) << program;
      seeds.push_back(write(*module));
      names.push_back(program);
    }
    ASSERT_FALSE(seeds.empty());
  }

  /// The smallest seed: cheap enough to damage at every byte and bit.
  const std::vector<uint8_t> &smallestSeed() const {
    return *std::min_element(
        seeds.begin(), seeds.end(),
        [](const auto &a, const auto &b) { return a.size() < b.size(); });
  }

  /// Reads \p bytes: an error must come with a message; an accepted module
  /// must verify and round-trip again.
  void expectErrorOrValid(const std::vector<uint8_t> &bytes,
                          const std::string &what) {
    ++reads;
    std::string error;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        readModelFile(bytes, &context, error);
    if (!module) {
      EXPECT_FALSE(error.empty()) << what;
      return;
    }
    ++accepted;
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module))) << what;
    std::vector<uint8_t> again;
    ASSERT_TRUE(writeModelFile(*module, again, error)) << what << ": " << error;
    mlir::OwningOpRef<mlir::ModuleOp> reread =
        readModelFile(again, &context, error);
    ASSERT_TRUE(reread) << what << ": " << error;
    EXPECT_EQ(print(*module), print(*reread)) << what;
  }

  void TearDown() override {
    RecordProperty("reads", reads);
    RecordProperty("accepted", accepted);
  }

  std::vector<std::vector<uint8_t>> seeds;
  std::vector<std::string> names;
  int reads = 0;
  int accepted = 0;
};

TEST_F(MutationTest, TruncationAtEveryLength) {
  for (const std::vector<uint8_t> &seed : seeds) {
    size_t step = std::max<size_t>(1, seed.size() / 512);
    for (size_t length = 0; length < seed.size(); length += step)
      expectErrorOrValid(
          std::vector<uint8_t>(seed.begin(), seed.begin() + length),
          "truncated to " + std::to_string(length));
  }
  const std::vector<uint8_t> &small = smallestSeed();
  for (size_t length = 0; length < small.size(); ++length) {
    std::vector<uint8_t> truncated(small.begin(), small.begin() + length);
    std::string error;
    EXPECT_FALSE(readModelFile(truncated, &context, error))
        << "truncated to " << length;
  }
}

TEST_F(MutationTest, EveryBitOfTheSmallestModel) {
  std::vector<uint8_t> bytes = smallestSeed();
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    bytes[bit / 8] ^= uint8_t(1) << (bit % 8);
    expectErrorOrValid(bytes, "bit " + std::to_string(bit) + " flipped");
    bytes[bit / 8] ^= uint8_t(1) << (bit % 8);
    if (HasFatalFailure())
      return;
  }
}

/// One flipped bit at each of a thousand places in every seed.
TEST_F(MutationTest, OneBitFlipsAcrossEverySeed) {
  std::mt19937 random(1234);
  for (auto [seed, name] : llvm::zip(seeds, names)) {
    std::vector<uint8_t> bytes = seed;
    for (int flip = 0; flip < 1000; ++flip) {
      size_t at = random() % bytes.size();
      uint8_t mask = uint8_t(1) << (random() % 8);
      bytes[at] ^= mask;
      expectErrorOrValid(bytes, name + ": byte " + std::to_string(at) +
                                    " ^= " + std::to_string(mask));
      bytes[at] ^= mask;
      if (HasFatalFailure())
        return;
    }
  }
}

/// Stacked random edits of the kinds that reach past the verifier: small
/// integers written over offsets, counts and enums, copied chunks, inserted
/// and deleted bytes.
TEST_F(MutationTest, RandomMutations) {
  std::mt19937 random(20240611);
  const uint32_t interesting[] = {0,   1,      2,      3,          4,
                                  7,   8,      16,     64,         255,
                                  256, 0x7fff, 0xffff, 0x7fffffff, 0xffffffff};
  for (int iteration = 0; iteration < 6000; ++iteration) {
    size_t which = random() % seeds.size();
    std::vector<uint8_t> bytes = seeds[which];
    int edits = 1 + random() % 4;
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      size_t at = random() % bytes.size();
      switch (random() % 6) {
      case 0:
        bytes[at] ^= uint8_t(1) << (random() % 8);
        break;
      case 1:
        bytes[at] = static_cast<uint8_t>(random());
        break;
      case 2: {
        uint32_t value = interesting[random() % std::size(interesting)];
        for (size_t k = 0; k < 4 && at + k < bytes.size(); ++k)
          bytes[at + k] = static_cast<uint8_t>(value >> (8 * k));
        break;
      }
      case 3: {
        size_t from = random() % bytes.size();
        size_t length = 1 + random() % 32;
        for (size_t k = 0;
             k < length && at + k < bytes.size() && from + k < bytes.size();
             ++k)
          bytes[at + k] = bytes[from + k];
        break;
      }
      case 4:
        bytes.insert(bytes.begin() + at, 1 + random() % 8,
                     static_cast<uint8_t>(random()));
        break;
      case 5:
        bytes.erase(bytes.begin() + at,
                    bytes.begin() +
                        std::min(bytes.size(), at + 1 + random() % 8));
        break;
      }
    }
    expectErrorOrValid(bytes, names[which] + ": mutation #" +
                                  std::to_string(iteration));
    if (HasFatalFailure())
      return;
  }
}

/// Random edits of the models' structure (see ir/fuzz/ModelMutator.h): each
/// variant passes the FlatBuffers verifier, so these exercise the semantic
/// checks and the MLIR verifier on damaged models.
TEST_F(MutationTest, StructuredMutations) {
  modelfile::ModelMutator mutator(context, 424242);
  std::mt19937 random(99);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    size_t which = random() % seeds.size();
    std::vector<uint8_t> bytes = seeds[which];
    ASSERT_TRUE(mutator.mutateFile(bytes, 1 + random() % 3));
    expectErrorOrValid(bytes, names[which] + ": structured mutation #" +
                                  std::to_string(iteration));
    if (HasFatalFailure())
      return;
  }
}

} // namespace
} // namespace kfbtest
} // namespace kiln
