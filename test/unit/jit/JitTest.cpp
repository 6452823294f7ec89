//===- JitTest.cpp - kiln::jit: compile, cache, call, save ----------------===//

#include "kiln/Jit.h"
#include "kiln/ProfileSummary.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace kiln;

namespace {

/// y = tanh(x) * 2 + 1, elementwise, with values checked against libm.
Tensor affineTanh(const Tensor &x) { return tanh(x) * 2.0 + 1.0; }

Array ramp(int64_t n) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = 0.25f * static_cast<float>(i) - 1.0f;
  return Array::from(DType::F32, {n}, values);
}

void expectAffineTanh(const Array &input, const Array &output) {
  ASSERT_EQ(output.shape(), input.shape());
  for (int64_t i = 0; i < input.size(); ++i)
    EXPECT_NEAR(output.at(i), std::tanh(input.at(i)) * 2.0 + 1.0, 1e-6) << i;
}

TEST(Jit, CompilesOncePerSignature) {
  JitFunction fn = jit("affine_tanh", affineTanh);
  Array a = ramp(3), b = ramp(3), c = ramp(17);
  expectAffineTanh(a, fn({a})[0]);
  EXPECT_EQ(fn.compileCount(), 1u);
  EXPECT_GT(fn.lastCompileSeconds(), 0.0);
  expectAffineTanh(b, fn({b})[0]);
  EXPECT_EQ(fn.compileCount(), 1u) << "same shape and dtype must not recompile";
  expectAffineTanh(c, fn({c})[0]);
  EXPECT_EQ(fn.compileCount(), 2u) << "a new shape needs its own compilation";
}

TEST(Jit, DTypeIsPartOfTheSignature) {
  JitFunction fn = jit("twice", [](const Tensor &x) { return x + x; });
  Array f = Array::from(DType::F32, {2}, std::vector<float>{1.5f, -2.0f});
  Array i = Array::from(DType::I32, {2}, std::vector<int32_t>{7, -3});
  Array doubledF = fn({f})[0], doubledI = fn({i})[0];
  EXPECT_EQ(fn.compileCount(), 2u);
  EXPECT_EQ(doubledF.dtype(), DType::F32);
  EXPECT_EQ(doubledI.dtype(), DType::I32);
  EXPECT_EQ(doubledF.at(0), 3.0);
  EXPECT_EQ(doubledI.at(1), -6.0);
}

TEST(Jit, CompiledFunctionChecksItsSignature) {
  JitFunction fn = jit("affine_tanh", affineTanh);
  const CompiledFunction &compiled = fn.compiled({ramp(4)});
  try {
    compiled({ramp(5)});
    FAIL() << "a wrong shape must be rejected";
  } catch (const JitError &error) {
    EXPECT_NE(std::string(error.what()).find("shape"), std::string::npos)
        << error.what();
  }
  try {
    compiled({Array::from(DType::F64, {4}, std::vector<double>(4, 0.0))});
    FAIL() << "a wrong dtype must be rejected";
  } catch (const JitError &error) {
    EXPECT_NE(std::string(error.what()).find("f64"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(compiled({}), JitError);
}

TEST(Jit, ModulesComeFromTheCacheDirectoryTheSecondTime) {
  char pattern[] = "/tmp/kiln-jit-cache-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  std::string root = pattern;
  JitOptions options;
  options.cacheDir = root + "/modules/nested"; // made when missing
  Array a = ramp(5);
  JitFunction first = jit("affine_tanh", affineTanh, options);
  expectAffineTanh(a, first({a})[0]);
  EXPECT_FALSE(first.compiled({a}).fromCache());
  // Another process would find it too: a new function, compiled afresh.
  JitFunction second = jit("affine_tanh", affineTanh, options);
  expectAffineTanh(a, second({a})[0]);
  EXPECT_TRUE(second.compiled({a}).fromCache());
  EXPECT_EQ(second.compiled({a}).moduleBytes(),
            first.compiled({a}).moduleBytes());
  // Other options or another program: other keys.
  JitOptions optimized = options;
  optimized.optLevel = options.optLevel == 3 ? 2 : 3;
  JitFunction third = jit("affine_tanh", affineTanh, optimized);
  expectAffineTanh(a, third({a})[0]);
  EXPECT_FALSE(third.compiled({a}).fromCache());
  JitFunction other =
      jit("affine_tanh", [](const Tensor &x) { return tanh(x) * 3.0; },
          options);
  EXPECT_NEAR(other({a})[0].at(0), std::tanh(a.at(0)) * 3.0, 1e-6);
  EXPECT_FALSE(other.compiled({a}).fromCache());
  // A damaged file is compiled again and replaced.
  for (const auto &entry :
       std::filesystem::directory_iterator(options.cacheDir))
    std::filesystem::resize_file(entry.path(), 10);
  JitFunction fourth = jit("affine_tanh", affineTanh, options);
  expectAffineTanh(a, fourth({a})[0]);
  EXPECT_FALSE(fourth.compiled({a}).fromCache());
  JitFunction fifth = jit("affine_tanh", affineTanh, options);
  expectAffineTanh(a, fifth({a})[0]);
  EXPECT_TRUE(fifth.compiled({a}).fromCache());
  std::filesystem::remove_all(root);
}

TEST(Jit, AnEmptyArrayIsRefusedBeforeTracing) {
  // A default-constructed Array has no dtype or shape: it used to be traced
  // as an f32 scalar, which failed inside the function's body.
  JitFunction fn = jit("affine_tanh", affineTanh);
  try {
    fn({Array()});
    FAIL() << "an empty array must be rejected";
  } catch (const JitError &error) {
    EXPECT_NE(std::string(error.what()).find("input #0 is an empty array"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(fn.compileCount(), 0u);
}

TEST(Jit, TraceErrorsReachTheCaller) {
  JitFunction fn = jit("bad", [](const Tensor &x) {
    return matmul(x, x); // [2,3] x [2,3]: the contracting sizes differ
  });
  EXPECT_THROW(fn({Array::from(DType::F32, {2, 3}, std::vector<float>(6))}),
               TraceError);
  EXPECT_EQ(fn.compileCount(), 0u);
}

TEST(Jit, AutocastRoundsTheProductsOperands) {
  // 1 + 2^-10 needs 11 significant bits; bf16 keeps 8 and f16 11, so the
  // bf16 product sees 1 and the f16 and f32 ones see the value itself. The
  // result is f32 either way.
  auto product = [](const Tensor &x, const Tensor &y) { return matmul(x, y); };
  Array x = Array::from(DType::F32, {1, 1}, std::vector<float>{1.0009765625f});
  Array one = Array::from(DType::F32, {1, 1}, std::vector<float>{1.0f});
  JitOptions bf16, f16, bad;
  bf16.autocast = "bf16";
  f16.autocast = "f16";
  bad.autocast = "fp8";
  Array plain = jit("plain", product)({x, one})[0];
  Array narrow = jit("narrow", product, bf16)({x, one})[0];
  Array half = jit("half", product, f16)({x, one})[0];
  EXPECT_EQ(plain.dtype(), DType::F32);
  EXPECT_EQ(narrow.dtype(), DType::F32);
  EXPECT_EQ(plain.at(0), 1.0009765625);
  EXPECT_EQ(narrow.at(0), 1.0);
  EXPECT_EQ(half.at(0), 1.0009765625);
  try {
    jit("bad", product, bad)({x, one});
    FAIL() << "an unknown autocast dtype must be rejected";
  } catch (const JitError &error) {
    EXPECT_NE(std::string(error.what()).find("unknown autocast dtype 'fp8'"),
              std::string::npos)
        << error.what();
  }
}

TEST(Jit, ProfiledFunctionTimesItsRegionsWhileTheProfilerIsOn) {
  auto product = [](const Tensor &x, const Tensor &y) {
    return tanh(matmul(x, y));
  };
  Array x = Array::from(DType::F32, {64, 64}, std::vector<float>(4096, 0.5f));
  JitOptions options;
  options.profile = true;
  JitFunction profiled = jit("profiled", product, options);
  JitFunction plain = jit("unprofiled", product);
  // Off: nothing is collected, profiled or not.
  kiln_profile_clear();
  profiled({x, x});
  plain({x, x});
  EXPECT_TRUE(profile::collectedRegions().empty());
  kiln_profile_set_enabled(1);
  for (int i = 0; i < 3; ++i) {
    profiled({x, x});
    plain({x, x});
  }
  kiln_profile_set_enabled(0);
  std::vector<kiln_profile_region_t> regions = profile::collectedRegions();
  std::vector<std::string> names;
  for (const kiln_profile_region_t &region : regions) {
    names.push_back(region.name);
    // Every region ran once per call of the profiled function.
    EXPECT_EQ(region.count, 3u) << region.name;
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "call @profiled"),
            names.end());
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string &n) {
    return n.rfind("dnnl_sgemm 64x64x64", 0) == 0;
  })) << ::testing::PrintToString(names);
  EXPECT_EQ(profile::formatSummary(regions, 10).rfind("profile: ", 0), 0u);
  kiln_profile_clear();
}

TEST(Jit, SavedModuleLoadsThroughTheRuntimeAlone) {
  JitFunction fn = jit("affine_tanh", affineTanh);
  Array input = ramp(8);
  std::string path = ::testing::TempDir() + "/affine_tanh.kmod";
  fn.compiled({input}).save(path);

  kiln_module_t *module = nullptr;
  const kiln_function_t *function = nullptr;
  ASSERT_EQ(kiln_module_load_file(path.c_str(), &module), nullptr);
  ASSERT_EQ(kiln_module_function_lookup(module, "affine_tanh", &function),
            nullptr);
  kiln_tensor_t *in = input.tensor();
  kiln_tensor_t *out = nullptr;
  ASSERT_EQ(kiln_function_call(function, &in, 1, &out, 1), nullptr);
  expectAffineTanh(input, Array::adopt(out));
  kiln_module_release(module);
  std::remove(path.c_str());
}

} // namespace

namespace {

/// x[i][j] = cols i + j as f32, for the block tests.
Array grid(int64_t rows, int64_t cols) {
  std::vector<float> values(rows * cols);
  for (int64_t k = 0; k < rows * cols; ++k)
    values[k] = static_cast<float>(k);
  return Array::from(DType::F32, {rows, cols}, values);
}

TEST(Jit, MeshBlockCutsRowMajorBlocks) {
  Array x = grid(4, 6);
  std::vector<std::string> axes = {"dp", "tp"};
  std::vector<int64_t> shape = {2, 3};
  // Rank 4 is (dp, tp) = (1, 1): rows 2-3, columns 2-3.
  Array b = meshBlock(x, {"dp", "tp"}, axes, shape, 4);
  ASSERT_EQ(b.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(b.at(0), 14.0);
  EXPECT_EQ(b.at(1), 15.0);
  EXPECT_EQ(b.at(2), 20.0);
  EXPECT_EQ(b.at(3), 21.0);
  // Rank 5 is (1, 2): all rows, columns 4-5 when only tp splits.
  Array c = meshBlock(x, {"", "tp"}, axes, shape, 5);
  ASSERT_EQ(c.shape(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(c.at(0), 4.0);
  EXPECT_EQ(c.at(7), 23.0);
  EXPECT_EQ(meshBlock(x, {}, axes, shape, 3).size(), 24);
  EXPECT_THROW(meshBlock(x, {"tp", ""}, axes, shape, 0), JitError);
  EXPECT_THROW(meshBlock(x, {"model", ""}, axes, shape, 0), JitError);
  EXPECT_THROW(meshBlock(x, {"dp"}, axes, shape, 0), JitError);
}

TEST(Jit, MeshOfOneRankMatchesTheUnsplitFunction) {
  kiln_comm_t *comm = nullptr;
  ASSERT_EQ(kiln_comm_create_self(&comm), nullptr);
  TracedFunction traced =
      trace("mm", {{DType::F32, {3, 4}}, {DType::F32, {4, 6}}},
            [](const Tensors &a) { return Tensors{tanh(matmul(a[0], a[1]))}; });
  JitOptions options;
  options.comm = comm;
  options.meshAxes = {"tp"};
  options.meshShape = {1};
  options.argumentShardings = {{}, {"", "tp"}};
  options.resultShardings = {{"", "tp"}};
  CompiledFunction split = compile(traced, options);
  CompiledFunction plain = compile(traced, JitOptions());
  Array x = grid(3, 4), w = grid(4, 6);
  Array a = split({x, w})[0], b = plain({x, w})[0];
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t k = 0; k < a.size(); ++k)
    EXPECT_EQ(a.at(k), b.at(k));
  // A mesh of the wrong size, and a mesh beside data parallelism.
  options.meshShape = {2};
  EXPECT_THROW(compile(traced, options), JitError);
  options.meshShape = {1};
  options.batchArgs = {0};
  EXPECT_THROW(compile(traced, options), JitError);
  kiln_comm_release(comm);
}

// A donated argument (JitOptions::donateArgs) is written with the result
// of its type: a scatter_add updates the table in place, the sum of the old
// table is still read before, and the call returns the argument's Array
// as that result. The values are those of the same function without
// donation; an argument no result matches is reported and left alone.
TEST(Jit, DonatedTableIsUpdatedInPlace) {
  TracedFunction traced = trace(
      "update",
      {{DType::F32, {6, 3}}, {DType::I32, {4}}, {DType::F32, {4, 3}}},
      [](const Tensors &a) {
        return Tensors{sum(a[0]), scatter_add(a[0], a[1], a[2])};
      });
  JitOptions options;
  options.donateArgs = {0, 1};
  CompiledFunction donated = compile(traced, options);
  CompiledFunction plain = compile(traced, JitOptions());
  EXPECT_EQ(donated.unusedDonations(), std::vector<int>{1});
  EXPECT_EQ(kiln_function_output(donated.function(), 1)->tied_input, 0);
  EXPECT_EQ(kiln_function_output(plain.function(), 1)->tied_input, -1);

  Array ids = Array::from(DType::I32, {4}, std::vector<int32_t>{5, 0, 5, 2});
  Array rows = grid(4, 3);
  Array table = grid(6, 3);
  std::vector<Array> expected = plain({table, ids, rows});
  void *before = table.data();
  std::vector<Array> got = donated({table, ids, rows});
  EXPECT_EQ(got[0].at(0), expected[0].at(0)) << "the old table's sum";
  EXPECT_EQ(got[1].data(), before) << "written into the donated table";
  EXPECT_EQ(table.data(), before);
  ASSERT_EQ(got[1].shape(), expected[1].shape());
  for (int64_t k = 0; k < expected[1].size(); ++k) {
    EXPECT_EQ(got[1].at(k), expected[1].at(k)) << k;
    EXPECT_EQ(table.at(k), expected[1].at(k)) << k;
  }
  // A second step from the updated table, as a training loop does.
  std::vector<Array> again = plain({expected[1], ids, rows});
  std::vector<Array> step2 = donated({got[1], ids, rows});
  for (int64_t k = 0; k < again[1].size(); ++k)
    EXPECT_EQ(step2[1].at(k), again[1].at(k)) << k;
}

} // namespace
