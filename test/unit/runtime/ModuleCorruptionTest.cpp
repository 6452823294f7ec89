//===- ModuleCorruptionTest.cpp - Damaged modules never crash the loader ---===//
//
// Every truncation and every single-bit flip of a valid module must give
// either an error status or a module that loads and computes the right
// result. Flips inside the body must always be caught by the checksum.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kmod_generated.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Loads \p bytes; if that succeeds, checks that add() still adds. Returns
/// true if the module loaded.
bool loadsAndAddsCorrectly(const std::vector<uint8_t> &bytes,
                           const std::string &what) {
  kiln_module_t *raw = nullptr;
  kiln_status_t status = kiln_module_load_memory(bytes.data(), bytes.size(), &raw);
  if (status) {
    EXPECT_EQ(raw, nullptr) << what;
    EXPECT_NE(*kiln_status_message(status), '\0') << what;
    kiln_status_free(status);
    return false;
  }
  ModulePtr module(raw);
  const kiln_function_t *add = nullptr;
  Outcome outcome = take(kiln_module_function_lookup(raw, "add", &add));
  EXPECT_TRUE(outcome.ok()) << what << ": " << outcome.message;
  if (!outcome.ok())
    return true;
  TensorPtr a = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{1, 2, 3, 4});
  TensorPtr b = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{4, 3, 2, 1});
  kiln_tensor_t *inputs[] = {a.get(), b.get()};
  kiln_tensor_t *output = nullptr;
  outcome = take(kiln_function_call(add, inputs, 2, &output, 1));
  EXPECT_TRUE(outcome.ok()) << what << ": " << outcome.message;
  if (outcome.ok()) {
    TensorPtr sum(output);
    EXPECT_EQ(tensorValues<float>(sum.get()), std::vector<float>(4, 5.0f))
        << what;
  }
  return true;
}

class ModuleCorruptionTest : public ::testing::Test {
protected:
  std::vector<uint8_t> module = format::writeModule(addModuleContents());
};

TEST_F(ModuleCorruptionTest, EveryTruncationIsRejected) {
  ASSERT_TRUE(loadsAndAddsCorrectly(module, "intact module"));
  for (size_t length = 0; length < module.size(); ++length) {
    std::vector<uint8_t> truncated(module.begin(), module.begin() + length);
    EXPECT_FALSE(loadsAndAddsCorrectly(
        truncated, "truncated to " + std::to_string(length) + " bytes"));
  }
}

TEST_F(ModuleCorruptionTest, EveryByteSurvivesBitFlips) {
  const auto *body = kmod::GetModule(module.data())->body();
  const size_t bodyStart = body->data() - module.data();
  const size_t bodyEnd = bodyStart + body->size();
  // All eight bits of every byte of the envelope and of the head of the
  // body (its root offset, vtable and first tables), where the structure
  // lives; one pseudo-randomly chosen bit of every other byte, which are all
  // guarded by the same checksum. This keeps the test to a few seconds even
  // under sanitizers.
  const size_t structuredEnd = std::min(bodyEnd, bodyStart + 256);
  std::mt19937 random(20240601);
  size_t loaded = 0, trials = 0;
  std::vector<uint8_t> damaged = module;
  for (size_t byte = 0; byte < module.size(); ++byte) {
    bool everyBit = byte < structuredEnd || byte >= bodyEnd;
    unsigned chosen = random() % 8;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if (!everyBit && bit != chosen)
        continue;
      damaged[byte] ^= static_cast<uint8_t>(1u << bit);
      std::string what =
          "bit " + std::to_string(bit) + " of byte " + std::to_string(byte);
      bool loads = loadsAndAddsCorrectly(damaged, what);
      if (byte >= bodyStart && byte < bodyEnd)
        EXPECT_FALSE(loads) << what << " lies in the body";
      loaded += loads;
      ++trials;
      damaged[byte] = module[byte];
      if (HasFailure())
        return;
    }
  }
  EXPECT_GE(trials, module.size());
  // Only padding outside the body can be flipped harmlessly.
  EXPECT_LT(loaded, 8 * (module.size() - body->size()));
}

} // namespace
