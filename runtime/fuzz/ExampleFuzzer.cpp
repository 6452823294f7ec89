//===- ExampleFuzzer.cpp - libFuzzer entry point for the tf.Example parser ===//
//
// The input is split into records at each "\n--\n".
//
// Each record is decoded as an Example and as a SequenceExample both by
// kiln's in-place decoder (ExampleWire.h) and by libprotobuf's generated
// classes of example.proto: the two must accept the same records and, for
// every feature name, find the same type and values (the differential
// check that holds the decoder to protobuf's rules).
//
// A fixed spec (an int64 scalar, a float vector of 3 with a default, a
// bytes scalar with a default, a variable-length int64 and a
// variable-length float feature) then parses the batch. The parse must
// either fail with a message naming a record, or give every feature
// exactly the values its shape (or row lengths) says.
//
//===----------------------------------------------------------------------===//

#include "kiln/Example.h"

#include "ExampleWire.h"
#include "example.pb.h"

#include <map>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

kiln::data::ExampleParser makeParser() {
  using kiln::data::FeatureType;
  std::vector<kiln::data::FeatureSpec> spec(5);
  spec[0].name = "label";
  spec[0].type = FeatureType::Int64;
  spec[1].name = "dense";
  spec[1].shape = {3};
  spec[1].defaultFloats = {0.0f};
  spec[2].name = "word";
  spec[2].type = FeatureType::Bytes;
  spec[2].defaultBytes = {""};
  spec[3].name = "ids";
  spec[3].type = FeatureType::Int64;
  spec[3].variableLength = true;
  spec[4].name = "weights";
  spec[4].variableLength = true;
  kiln::data::ExampleParser parser;
  std::string error;
  if (!parser.setSpec(spec, error))
    std::abort();
  return parser;
}

using kiln::data::FeatureType;
using kiln::data::FeatureValues;
namespace wire = kiln::data::wire;

/// A feature's type and values as protobuf's classes hold them.
FeatureValues valuesOf(const wire::Feature &feature,
                       std::optional<FeatureType> &type) {
  FeatureValues values;
  type.reset();
  switch (feature.kind_case()) {
  case wire::Feature::kInt64List:
    type = FeatureType::Int64;
    values.ints.assign(feature.int64_list().value().begin(),
                       feature.int64_list().value().end());
    break;
  case wire::Feature::kFloatList:
    type = FeatureType::Float;
    values.floats.assign(feature.float_list().value().begin(),
                         feature.float_list().value().end());
    break;
  case wire::Feature::kBytesList:
    type = FeatureType::Bytes;
    values.bytes.assign(feature.bytes_list().value().begin(),
                        feature.bytes_list().value().end());
    break;
  default:
    break;
  }
  return values;
}

/// Aborts unless the in-place view holds what protobuf's message does.
void expectSame(const wire::Feature &expected, const wire::FeatureView &view) {
  std::optional<FeatureType> type;
  FeatureValues want = valuesOf(expected, type);
  FeatureValues got;
  if (view.type)
    wire::appendValues(view, got);
  size_t count = got.ints.size() + got.floats.size() + got.bytes.size();
  bool sameFloats = got.floats.size() == want.floats.size() &&
                    std::equal(got.floats.begin(), got.floats.end(),
                               want.floats.begin(), [](float a, float b) {
                                 return std::memcmp(&a, &b, 4) == 0;
                               });
  if (type != view.type || got.ints != want.ints || !sameFloats ||
      got.bytes != want.bytes || static_cast<int64_t>(count) != view.count)
    std::abort();
}

/// The last entry of each name, as a map's parse keeps it.
template <typename Named>
std::map<std::string, const Named *> lastByName(const std::vector<Named> &all) {
  std::map<std::string, const Named *> last;
  for (const Named &entry : all)
    last[std::string(entry.name)] = &entry;
  return last;
}

template <typename Map>
void expectSameFeatures(const Map &expected,
                        const std::vector<wire::NamedFeature> &decoded) {
  auto last = lastByName(decoded);
  if (last.size() != static_cast<size_t>(expected.size()))
    std::abort();
  for (const auto &[name, feature] : expected) {
    auto found = last.find(name);
    if (found == last.end())
      std::abort();
    expectSame(feature, found->second->feature);
  }
}

void checkAgainstProtobuf(const std::string &record) {
  std::vector<wire::NamedFeature> features, context;
  std::vector<wire::NamedFeatureList> lists;
  wire::Example example;
  bool ours = wire::decodeExample(record, features);
  if (ours != example.ParseFromString(record))
    std::abort();
  if (ours)
    expectSameFeatures(example.features().feature(), features);

  wire::SequenceExample sequence;
  ours = wire::decodeSequenceExample(record, context, lists);
  if (ours != sequence.ParseFromString(record))
    std::abort();
  if (!ours)
    return;
  expectSameFeatures(sequence.context().feature(), context);
  auto last = lastByName(lists);
  const auto &expected = sequence.feature_lists().feature_list();
  if (last.size() != static_cast<size_t>(expected.size()))
    std::abort();
  for (const auto &[name, list] : expected) {
    auto found = last.find(name);
    if (found == last.end() ||
        found->second->steps.size() != static_cast<size_t>(list.feature_size()))
      std::abort();
    for (int s = 0; s < list.feature_size(); ++s)
      expectSame(list.feature(s), found->second->steps[s]);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const kiln::data::ExampleParser parser = makeParser();
  std::string input(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> records;
  size_t start = 0;
  for (size_t at; (at = input.find("\n--\n", start)) != std::string::npos;
       start = at + 4)
    records.push_back(input.substr(start, at - start));
  records.push_back(input.substr(start));
  for (const std::string &record : records)
    checkAgainstProtobuf(record);

  std::vector<kiln::data::FeatureValues> features;
  std::string error;
  if (!parser.parse(records, features, error)) {
    if (error.rfind("record ", 0) != 0)
      std::abort();
    return 0;
  }
  int64_t batch = static_cast<int64_t>(records.size());
  auto count = [](const kiln::data::FeatureValues &f) {
    return static_cast<int64_t>(f.ints.size() + f.floats.size() +
                                f.bytes.size());
  };
  if (features.size() != 5 || count(features[0]) != batch ||
      count(features[1]) != 3 * batch || count(features[2]) != batch)
    std::abort();
  for (int f = 3; f < 5; ++f) {
    int64_t total = 0;
    for (int64_t n : features[f].rowLengths)
      total += n;
    if (static_cast<int64_t>(features[f].rowLengths.size()) != batch ||
        total != count(features[f]) || features[f].shape[0] != total)
      std::abort();
  }
  return 0;
}
