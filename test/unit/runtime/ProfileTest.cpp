//===- ProfileTest.cpp - Profiling: collection, totals and traces ---------===//

#include "TestSupport.h"

#include "profile/TraceWriter.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

using namespace kiln;
using namespace kiln::test;
using kiln::runtime::profile::TraceEvent;
using kiln::runtime::profile::writeChromeTrace;

namespace {

TEST(TraceWriterTest, WritesEnclosingEventsFirstWithEscapedNames) {
  // Recorded as regions end: the inner one before the one holding it, and
  // another thread's in between.
  std::vector<TraceEvent> events = {{1, 7, 1500, 2750},  // inner, thread 7
                                    {2, 9, 1000, 1001},  // thread 9
                                    {0, 7, 1000, 4000},  // outer, thread 7
                                    {5, 7, 5000, 5000}}; // no name
  std::ostringstream os;
  writeChromeTrace(os, events, {"outer", "in \"q\"\\\n", "other"},
                   /*originNs=*/1000, /*processId=*/42, /*droppedEvents=*/0);
  EXPECT_EQ(os.str(),
            "{\"traceEvents\":[\n"
            "{\"name\":\"outer\",\"cat\":\"kiln\",\"ph\":\"X\",\"ts\":0.000,"
            "\"dur\":3.000,\"pid\":42,\"tid\":7},\n"
            "{\"name\":\"in \\\"q\\\"\\\\\\n\",\"cat\":\"kiln\",\"ph\":\"X\","
            "\"ts\":0.500,\"dur\":1.250,\"pid\":42,\"tid\":7},\n"
            "{\"name\":\"region 5\",\"cat\":\"kiln\",\"ph\":\"X\",\"ts\":4.000,"
            "\"dur\":0.000,\"pid\":42,\"tid\":7},\n"
            "{\"name\":\"other\",\"cat\":\"kiln\",\"ph\":\"X\",\"ts\":0.000,"
            "\"dur\":0.001,\"pid\":42,\"tid\":9}\n"
            "],\"displayTimeUnit\":\"ns\"}\n");
}

TEST(TraceWriterTest, NamesDroppedEvents) {
  std::ostringstream os;
  writeChromeTrace(os, {}, {}, 0, 1, 12);
  EXPECT_EQ(os.str(), "{\"traceEvents\":[\n],\"displayTimeUnit\":\"ns\","
                      "\"otherData\":{\"dropped_events\":12}}\n");
}

/// Collection is process-wide: each test starts from nothing and leaves
/// it off.
class ProfileTest : public ::testing::Test {
protected:
  void SetUp() override {
    kiln_profile_set_enabled(0);
    kiln_profile_clear();
  }
  void TearDown() override {
    kiln_profile_set_enabled(0);
    kiln_profile_clear();
  }

  /// Calls `nested` of \p module \p times times.
  void callNested(const kiln_module_t *module, int times) {
    TensorPtr x = makeTensor<float>(KILN_DTYPE_F32, {1}, {2.0f});
    for (int i = 0; i < times; ++i) {
      std::vector<TensorPtr> outputs;
      Outcome outcome =
          callFunction(module, "nested", nullptr, {x.get()}, outputs);
      ASSERT_TRUE(outcome.ok()) << outcome.message;
      ASSERT_EQ(tensorValues<float>(outputs[0].get()), std::vector<float>{3});
    }
  }

  /// kiln_profile_regions, by name.
  std::map<std::string, kiln_profile_region_t> regionsByName() {
    std::vector<kiln_profile_region_t> rows(kiln_profile_regions(nullptr, 0));
    EXPECT_EQ(kiln_profile_regions(rows.data(), rows.size()), rows.size());
    std::map<std::string, kiln_profile_region_t> result;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i)
        EXPECT_GE(rows[i - 1].self_ns, rows[i].self_ns) << "not sorted";
      result[rows[i].name] = rows[i];
    }
    return result;
  }
};

TEST_F(ProfileTest, NestedRegionsAddUpToTheCalls) {
  ModulePtr module = loadModule(profileModuleContents());
  // Two regions of the code and one per function.
  EXPECT_EQ(kiln_module_profile_region_count(module.get()), 3u);
  kiln_profile_set_enabled(1);
  EXPECT_EQ(kiln_profile_enabled(), 1);
  callNested(module.get(), 3);
  kiln_profile_set_enabled(0);

  auto regions = regionsByName();
  ASSERT_EQ(regions.size(), 3u);
  const kiln_profile_region_t &call = regions.at("call @nested");
  const kiln_profile_region_t &outer = regions.at("outer");
  const kiln_profile_region_t &inner = regions.at("inner \"quoted\"\\\t");
  EXPECT_EQ(call.count, 3u);
  EXPECT_EQ(outer.count, 3u);
  EXPECT_EQ(inner.count, 6u);
  // Self time is total time less the regions held.
  EXPECT_EQ(inner.self_ns, inner.total_ns);
  EXPECT_EQ(outer.self_ns, outer.total_ns - inner.total_ns);
  EXPECT_EQ(call.self_ns, call.total_ns - outer.total_ns);
  EXPECT_GT(inner.total_ns, 0u);
  EXPECT_EQ(call.self_ns + outer.self_ns + inner.self_ns, call.total_ns);
}

TEST_F(ProfileTest, TraceHoldsEveryRegionRun) {
  ModulePtr module = loadModule(profileModuleContents());
  kiln_profile_set_enabled(1);
  callNested(module.get(), 2);
  kiln_profile_set_enabled(0);
  TemporaryDirectory directory;
  std::string path = directory.file("trace.json");
  Outcome outcome = take(kiln_profile_write_trace(path.c_str()));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  std::vector<uint8_t> bytes = readFile(path);
  std::string trace(bytes.begin(), bytes.end());
  auto count = [&](const std::string &text) {
    size_t found = 0;
    for (size_t at = trace.find(text); at != std::string::npos;
         at = trace.find(text, at + 1))
      ++found;
    return found;
  };
  EXPECT_EQ(trace.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_EQ(count("\"ph\":\"X\""), 2u + 2u + 4u);
  EXPECT_EQ(count("\"name\":\"call @nested\""), 2u);
  EXPECT_EQ(count("\"name\":\"outer\""), 2u);
  EXPECT_EQ(count("\"name\":\"inner \\\"quoted\\\"\\\\\\t\""), 4u);
  // Each call comes before the regions it holds.
  EXPECT_LT(trace.find("call @nested"), trace.find("outer"));
  EXPECT_LT(trace.find("outer"), trace.find("inner"));
}

TEST_F(ProfileTest, NothingIsCollectedWhileOff) {
  ModulePtr module = loadModule(profileModuleContents());
  callNested(module.get(), 2);
  EXPECT_EQ(kiln_profile_regions(nullptr, 0), 0u);
  // Turned on, then cleared: only what ran since counts.
  kiln_profile_set_enabled(1);
  callNested(module.get(), 1);
  kiln_profile_clear();
  callNested(module.get(), 1);
  EXPECT_EQ(regionsByName().at("call @nested").count, 1u);
}

TEST_F(ProfileTest, ModulesLoadedTwiceShareTheirRegions) {
  ModulePtr first = loadModule(profileModuleContents());
  ModulePtr second = loadModule(profileModuleContents());
  kiln_profile_set_enabled(1);
  callNested(first.get(), 1);
  callNested(second.get(), 1);
  EXPECT_EQ(regionsByName().at("outer").count, 2u);
}

TEST_F(ProfileTest, ModuleCompiledWithoutProfileHasNoRegions) {
  ModulePtr module = loadModule(addModuleContents());
  EXPECT_EQ(kiln_module_profile_region_count(module.get()), 0u);
  EXPECT_EQ(kiln_module_profile_region_count(nullptr), 0u);
}

TEST_F(ProfileTest, RegionTableWithoutTheNamesItCountsIsRejected) {
  std::vector<uint8_t> bytes =
      format::writeModule(profileModuleContents(/*badTable=*/true));
  kiln_module_t *module = nullptr;
  Outcome outcome =
      take(kiln_module_load_memory(bytes.data(), bytes.size(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_NE(outcome.message.find("region 2 of 3 has no name"),
            std::string::npos)
      << outcome.message;
  EXPECT_EQ(module, nullptr);
}

TEST_F(ProfileTest, UnwritableTraceIsAnError) {
  Outcome outcome =
      take(kiln_profile_write_trace("/nonexistent-directory/trace.json"));
  EXPECT_EQ(outcome.code, KILN_STATUS_IO_ERROR);
  EXPECT_NE(outcome.message.find("/nonexistent-directory/trace.json"),
            std::string::npos);
  EXPECT_EQ(take(kiln_profile_write_trace(nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
}

} // namespace
