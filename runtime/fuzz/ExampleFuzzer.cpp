//===- ExampleFuzzer.cpp - libFuzzer entry point for the tf.Example parser ===//
//
// The input is split into records at each "\n--\n"; a fixed spec (an int64
// scalar, a float vector of 3 with a default, a bytes scalar with a
// default, a variable-length int64 and a variable-length float feature)
// parses them. The parse must either fail with a message naming a record,
// or give every feature exactly the values its shape (or row lengths)
// says.
//
//===----------------------------------------------------------------------===//

#include "kiln/Example.h"

#include <cstdlib>
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
