//===- ExampleTest.cpp - Parsing tf.Example records (kiln/Example.h) ------===//
//
// Batches of tf.Example records, written with protobuf's own serializer (and
// one written by hand from the documented wire format), parsed by a spec:
// fixed-length features with and without defaults, variable-length ones,
// and every mistake a record or a spec can make.
//
//===----------------------------------------------------------------------===//

#include "kiln/Example.h"

#include "example.pb.h"

#include <gtest/gtest.h>

using namespace kiln::data;

namespace {

/// A serialized Example with the given int64, float and bytes features.
struct ExampleBuilder {
  wire::Example example;
  ExampleBuilder &ints(const std::string &name, std::vector<int64_t> values) {
    auto &list = *(*example.mutable_features()->mutable_feature())[name]
                      .mutable_int64_list();
    for (int64_t v : values)
      list.add_value(v);
    return *this;
  }
  ExampleBuilder &floats(const std::string &name, std::vector<float> values) {
    auto &list = *(*example.mutable_features()->mutable_feature())[name]
                      .mutable_float_list();
    for (float v : values)
      list.add_value(v);
    return *this;
  }
  ExampleBuilder &bytes(const std::string &name,
                        std::vector<std::string> values) {
    auto &list = *(*example.mutable_features()->mutable_feature())[name]
                      .mutable_bytes_list();
    for (const std::string &v : values)
      list.add_value(v);
    return *this;
  }
  std::string serialized() const { return example.SerializeAsString(); }
};

FeatureSpec fixed(const std::string &name, FeatureType type,
                  std::vector<int64_t> shape) {
  FeatureSpec spec;
  spec.name = name;
  spec.type = type;
  spec.shape = std::move(shape);
  return spec;
}

FeatureSpec ragged(const std::string &name, FeatureType type) {
  FeatureSpec spec;
  spec.name = name;
  spec.type = type;
  spec.variableLength = true;
  return spec;
}

std::string hexBytes(const char *hex) {
  std::string out;
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  return out;
}

} // namespace

TEST(ExampleTest, FixedAndVariableLengthFeaturesBecomeArrays) {
  std::vector<std::string> records = {
      ExampleBuilder()
          .ints("label", {1})
          .floats("dense", {0.5f, -2.0f})
          .bytes("word", {"cat"})
          .ints("ids", {7, 8, 9})
          .serialized(),
      ExampleBuilder()
          .ints("label", {0})
          .floats("dense", {1.5f, 3.0f})
          .bytes("word", {"dog"})
          .serialized(),
      ExampleBuilder()
          .ints("label", {1})
          .floats("dense", {-1.0f, 0.0f})
          .bytes("word", {""})
          .ints("ids", {4})
          .ints("unused", {1, 2, 3})
          .serialized()};
  ExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({fixed("label", FeatureType::Int64, {}),
                              fixed("dense", FeatureType::Float, {2}),
                              fixed("word", FeatureType::Bytes, {}),
                              ragged("ids", FeatureType::Int64)},
                             error))
      << error;
  std::vector<FeatureValues> out;
  ASSERT_TRUE(parser.parse(records, out, error)) << error;
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[1].floats,
            (std::vector<float>{0.5f, -2.0f, 1.5f, 3.0f, -1.0f, 0.0f}));
  EXPECT_EQ(out[2].bytes, (std::vector<std::string>{"cat", "dog", ""}));
  EXPECT_EQ(out[3].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(out[3].ints, (std::vector<int64_t>{7, 8, 9, 4}));
  EXPECT_EQ(out[3].rowLengths, (std::vector<int64_t>{3, 0, 1}));
  // An empty batch gives empty arrays of the spec's shapes.
  ASSERT_TRUE(parser.parse({}, out, error)) << error;
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(out[3].shape, (std::vector<int64_t>{0}));
}

TEST(ExampleTest, MissingFeaturesTakeTheirDefaults) {
  FeatureSpec scalar = fixed("weight", FeatureType::Float, {2, 2});
  scalar.defaultFloats = {1.0f};
  FeatureSpec whole = fixed("pair", FeatureType::Int64, {2});
  whole.defaultInts = {-1, -2};
  FeatureSpec word = fixed("word", FeatureType::Bytes, {});
  word.defaultBytes = {"<none>"};
  ExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({scalar, whole, word}, error)) << error;
  std::vector<FeatureValues> out;
  ASSERT_TRUE(parser.parse({ExampleBuilder().ints("pair", {5, 6}).serialized(),
                            ExampleBuilder().bytes("word", {"x"}).serialized()},
                           out, error))
      << error;
  EXPECT_EQ(out[0].floats, std::vector<float>(8, 1.0f));
  EXPECT_EQ(out[1].ints, (std::vector<int64_t>{5, 6, -1, -2}));
  EXPECT_EQ(out[2].bytes, (std::vector<std::string>{"<none>", "x"}));
}

TEST(ExampleTest, BytesWrittenFromTheWireFormatByHandParse) {
  // Example{features{feature{key: "label" value{int64_list{value: 1}}}}}:
  // field 1 (Features) holding field 1 (a map entry) holding the key
  // "label" (field 1) and the value (field 2, a Feature) whose field 3
  // (Int64List) holds the value 1, packed as proto3 writes it...
  std::string packed = hexBytes("0a100a0e0a056c6162656c12051a030a0101");
  // ... and unpacked (a tag per value), which parsers accept too.
  std::string unpacked = hexBytes("0a0f0a0d0a056c6162656c12041a020801");
  ExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({fixed("label", FeatureType::Int64, {})}, error));
  std::vector<FeatureValues> out;
  ASSERT_TRUE(parser.parse({packed, unpacked}, out, error)) << error;
  EXPECT_EQ(out[0].ints, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(packed, ExampleBuilder().ints("label", {1}).serialized());
}

TEST(ExampleTest, RecordMistakesNameTheRecordAndFeature) {
  ExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({fixed("label", FeatureType::Int64, {}),
                              fixed("dense", FeatureType::Float, {2})},
                             error));
  std::string good =
      ExampleBuilder().ints("label", {1}).floats("dense", {1, 2}).serialized();
  std::vector<FeatureValues> out;
  auto failure = [&](const std::string &bad) {
    EXPECT_FALSE(parser.parse({good, bad}, out, error));
    return error;
  };
  EXPECT_EQ(failure(ExampleBuilder()
                        .floats("label", {1})
                        .floats("dense", {1, 2})
                        .serialized()),
            "record 1: feature 'label' holds float values, the spec says "
            "int64");
  EXPECT_EQ(failure(ExampleBuilder()
                        .ints("label", {1})
                        .floats("dense", {1, 2, 3})
                        .serialized()),
            "record 1: feature 'dense' has 3 values, its shape holds 2");
  EXPECT_EQ(failure(ExampleBuilder().floats("dense", {1, 2}).serialized()),
            "record 1: feature 'label' is missing and the spec gives no "
            "default");
  EXPECT_EQ(failure(std::string("\xff\xff\xff", 3)),
            "record 1 is not a serialized tf.Example");
}

TEST(ExampleTest, MalformedSpecsAreRefused) {
  ExampleParser parser;
  std::string error;
  EXPECT_FALSE(parser.setSpec({fixed("", FeatureType::Int64, {})}, error));
  EXPECT_EQ(error, "a feature of the parse spec has no name");
  EXPECT_FALSE(parser.setSpec({fixed("a", FeatureType::Int64, {}),
                               fixed("a", FeatureType::Float, {})},
                              error));
  EXPECT_EQ(error, "feature 'a' appears twice in the parse spec");
  EXPECT_FALSE(parser.setSpec({fixed("a", FeatureType::Int64, {2, -1})}, error));
  EXPECT_EQ(error, "feature 'a' has a negative dimension");
  FeatureSpec wrongType = fixed("a", FeatureType::Int64, {});
  wrongType.defaultFloats = {1.0f};
  EXPECT_FALSE(parser.setSpec({wrongType}, error));
  EXPECT_EQ(error, "feature 'a' has a default of another type than its int64 "
                   "values");
  FeatureSpec wrongCount = fixed("a", FeatureType::Int64, {3});
  wrongCount.defaultInts = {1, 2};
  EXPECT_FALSE(parser.setSpec({wrongCount}, error));
  EXPECT_EQ(error, "feature 'a' has 2 default values for a shape of 3");
  FeatureSpec raggedShape = ragged("a", FeatureType::Bytes);
  raggedShape.shape = {2};
  EXPECT_FALSE(parser.setSpec({raggedShape}, error));
  EXPECT_EQ(error,
            "feature 'a' is variable-length: it takes no shape or default");
}

namespace {

/// A serialized SequenceExample with a context label and int64 or float
/// feature lists, one vector of values per step.
std::string sequenceExample(
    int64_t label,
    const std::vector<std::pair<std::string, std::vector<std::vector<float>>>>
        &floatLists,
    const std::vector<std::pair<std::string, std::vector<std::vector<int64_t>>>>
        &intLists) {
  wire::SequenceExample example;
  (*example.mutable_context()->mutable_feature())["label"]
      .mutable_int64_list()
      ->add_value(label);
  auto &lists = *example.mutable_feature_lists()->mutable_feature_list();
  for (const auto &[name, steps] : floatLists)
    for (const auto &values : steps) {
      auto &list = *lists[name].add_feature()->mutable_float_list();
      for (float v : values)
        list.add_value(v);
    }
  for (const auto &[name, steps] : intLists)
    for (const auto &values : steps) {
      auto &list = *lists[name].add_feature()->mutable_int64_list();
      for (int64_t v : values)
        list.add_value(v);
    }
  return example.SerializeAsString();
}

SequenceFeatureSpec sequenceList(const std::string &name, FeatureType type,
                                 std::vector<int64_t> shape,
                                 bool variableLength = false) {
  SequenceFeatureSpec spec;
  spec.name = name;
  spec.type = type;
  spec.shape = std::move(shape);
  spec.variableLength = variableLength;
  return spec;
}

} // namespace

TEST(ExampleTest, SequenceExamplesArePaddedAndRagged) {
  std::vector<std::string> records = {
      sequenceExample(1, {{"xy", {{1, 2}, {3, 4}}}}, {{"ids", {{7}, {}, {8, 9}}}}),
      sequenceExample(0, {{"xy", {{5, 6}}}}, {})};
  SequenceFeatureSpec xy = sequenceList("xy", FeatureType::Float, {2});
  xy.defaultFloats = {-1.0f};
  SequenceExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({fixed("label", FeatureType::Int64, {})},
                             {xy, sequenceList("ids", FeatureType::Int64, {},
                                               /*variableLength=*/true)},
                             error))
      << error;
  std::vector<FeatureValues> context;
  std::vector<SequenceValues> lists;
  ASSERT_TRUE(parser.parse(records, context, lists, error)) << error;
  EXPECT_EQ(context[0].ints, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(lists[0].values.shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(lists[0].values.floats,
            (std::vector<float>{1, 2, 3, 4, 5, 6, -1, -1}));
  EXPECT_EQ(lists[0].stepCounts, (std::vector<int64_t>{2, 1}));
  // A variable-length list may be missing: no steps.
  EXPECT_EQ(lists[1].values.ints, (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(lists[1].stepCounts, (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(lists[1].valueCounts, (std::vector<int64_t>{1, 0, 2}));
}

TEST(ExampleTest, SequenceExampleMistakesNameTheStep) {
  SequenceExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({}, {sequenceList("xy", FeatureType::Float, {2})},
                             error));
  auto failure = [&](const std::string &record) {
    std::vector<FeatureValues> context;
    std::vector<SequenceValues> lists;
    EXPECT_FALSE(parser.parse({sequenceExample(0, {{"xy", {{1, 2}}}}, {}), record},
                              context, lists, error));
    return error;
  };
  EXPECT_EQ(failure(sequenceExample(0, {{"xy", {{1, 2}, {3}}}}, {})),
            "record 1: feature list 'xy', step 1 has 1 values, its shape "
            "holds 2");
  EXPECT_EQ(failure(sequenceExample(0, {}, {{"xy", {{1, 2}}}})),
            "record 1: feature list 'xy', step 0 holds int64 values, the "
            "spec says float");
  EXPECT_EQ(failure(sequenceExample(0, {}, {})),
            "record 1: feature list 'xy' is missing and the spec does not "
            "allow it");
  EXPECT_EQ(failure(std::string("\x12\x05", 2)),
            "record 1 is not a serialized tf.SequenceExample");
  SequenceFeatureSpec twoPads = sequenceList("xy", FeatureType::Float, {2});
  twoPads.defaultFloats = {0.0f, 1.0f};
  EXPECT_FALSE(parser.setSpec({}, {twoPads}, error));
  EXPECT_EQ(error, "feature list 'xy' takes one padding value of its float type");
}

TEST(ExampleTest, RepeatedFieldsMergeAsProtobufMergesThem) {
  // Two Features messages (merged); the second repeats "a" (its entry
  // wins) and holds a Feature whose int64 list comes in two pieces (they
  // concatenate).
  wire::Example first;
  (*first.mutable_features()->mutable_feature())["a"]
      .mutable_float_list()
      ->add_value(1.0f);
  (*first.mutable_features()->mutable_feature())["b"]
      .mutable_int64_list()
      ->add_value(5);
  wire::Feature piece1, piece2;
  piece1.mutable_int64_list()->add_value(2);
  piece2.mutable_int64_list()->add_value(3);
  piece2.mutable_int64_list()->add_value(-4);
  auto lengthDelimited = [](int field, const std::string &payload) {
    return std::string(1, static_cast<char>(field << 3 | 2)) +
           static_cast<char>(payload.size()) + payload;
  };
  std::string feature = piece1.SerializeAsString() + piece2.SerializeAsString();
  std::string entry = lengthDelimited(1, "a") + lengthDelimited(2, feature);
  std::string record = first.SerializeAsString() +
                       lengthDelimited(1, lengthDelimited(1, entry));
  wire::Example expected;
  ASSERT_TRUE(expected.ParseFromString(record));
  ASSERT_EQ(expected.features().feature().at("a").int64_list().value_size(), 3);

  ExampleParser parser;
  std::string error;
  ASSERT_TRUE(parser.setSpec({ragged("a", FeatureType::Int64),
                              ragged("b", FeatureType::Int64)},
                             error));
  std::vector<FeatureValues> features;
  ASSERT_TRUE(parser.parse({record}, features, error)) << error;
  EXPECT_EQ(features[0].ints, (std::vector<int64_t>{2, 3, -4}));
  EXPECT_EQ(features[1].ints, (std::vector<int64_t>{5}));
}
