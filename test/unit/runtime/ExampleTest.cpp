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
