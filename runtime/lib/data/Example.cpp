//===- Example.cpp - Parsing tf.Example records into arrays ---------------===//
//
// Each record is decoded by protobuf into the wire messages of
// example.proto; the spec then picks each feature's list, checks its type
// and count, and appends its values to the batch's array (or the default,
// for a fixed-length feature the example lacks).
//
//===----------------------------------------------------------------------===//

#include "kiln/Example.h"

#include "example.pb.h"

#include <set>

namespace kiln {
namespace data {
namespace {

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

/// The number of default values of `spec`'s type.
size_t defaultCount(const FeatureSpec &spec) {
  switch (spec.type) {
  case FeatureType::Int64:
    return spec.defaultInts.size();
  case FeatureType::Float:
    return spec.defaultFloats.size();
  case FeatureType::Bytes:
    return spec.defaultBytes.size();
  }
  return 0;
}

/// The type of a feature's list, or nullopt for a feature with none.
std::optional<FeatureType> typeOf(const wire::Feature &feature) {
  switch (feature.kind_case()) {
  case wire::Feature::kInt64List:
    return FeatureType::Int64;
  case wire::Feature::kFloatList:
    return FeatureType::Float;
  case wire::Feature::kBytesList:
    return FeatureType::Bytes;
  default:
    return std::nullopt;
  }
}

int64_t valueCount(const wire::Feature &feature) {
  switch (feature.kind_case()) {
  case wire::Feature::kInt64List:
    return feature.int64_list().value_size();
  case wire::Feature::kFloatList:
    return feature.float_list().value_size();
  case wire::Feature::kBytesList:
    return feature.bytes_list().value_size();
  default:
    return 0;
  }
}

void appendValues(const wire::Feature &feature, FeatureValues &out) {
  switch (feature.kind_case()) {
  case wire::Feature::kInt64List:
    out.ints.insert(out.ints.end(), feature.int64_list().value().begin(),
                    feature.int64_list().value().end());
    break;
  case wire::Feature::kFloatList:
    out.floats.insert(out.floats.end(), feature.float_list().value().begin(),
                      feature.float_list().value().end());
    break;
  case wire::Feature::kBytesList:
    for (const std::string &value : feature.bytes_list().value())
      out.bytes.push_back(value);
    break;
  default:
    break;
  }
}

/// Appends `count` values of `spec`'s default (one value repeated, or the
/// whole shape's).
void appendDefault(const FeatureSpec &spec, int64_t count,
                   FeatureValues &out) {
  auto append = [&](const auto &values, auto &to) {
    for (int64_t i = 0; i < count; ++i)
      to.push_back(values[values.size() == 1 ? 0 : i]);
  };
  switch (spec.type) {
  case FeatureType::Int64:
    append(spec.defaultInts, out.ints);
    break;
  case FeatureType::Float:
    append(spec.defaultFloats, out.floats);
    break;
  case FeatureType::Bytes:
    append(spec.defaultBytes, out.bytes);
    break;
  }
}

} // namespace

const char *featureTypeName(FeatureType type) {
  switch (type) {
  case FeatureType::Int64:
    return "int64";
  case FeatureType::Float:
    return "float";
  case FeatureType::Bytes:
    return "bytes";
  }
  return "?";
}

ExampleParser::ExampleParser() = default;
ExampleParser::~ExampleParser() = default;

bool ExampleParser::setSpec(std::vector<FeatureSpec> features,
                            std::string &error) {
  std::set<std::string> names;
  for (const FeatureSpec &feature : features) {
    std::string where = "feature '" + feature.name + "'";
    if (feature.name.empty()) {
      error = "a feature of the parse spec has no name";
      return false;
    }
    if (!names.insert(feature.name).second) {
      error = where + " appears twice in the parse spec";
      return false;
    }
    for (int64_t d : feature.shape)
      if (d < 0) {
        error = where + " has a negative dimension";
        return false;
      }
    size_t defaults = defaultCount(feature);
    if (defaults != feature.defaultInts.size() + feature.defaultFloats.size() +
                        feature.defaultBytes.size()) {
      error = where + " has a default of another type than its " +
              featureTypeName(feature.type) + " values";
      return false;
    }
    if (feature.variableLength) {
      if (!feature.shape.empty() || defaults) {
        error = where + " is variable-length: it takes no shape or default";
        return false;
      }
      continue;
    }
    int64_t count = elementCount(feature.shape);
    if (defaults && defaults != 1 && static_cast<int64_t>(defaults) != count) {
      error = where + " has " + std::to_string(defaults) +
              " default values for a shape of " + std::to_string(count);
      return false;
    }
  }
  spec = std::move(features);
  return true;
}

bool ExampleParser::parse(const std::vector<std::string> &records,
                          std::vector<FeatureValues> &features,
                          std::string &error) const {
  features.assign(spec.size(), FeatureValues());
  for (size_t f = 0; f < spec.size(); ++f) {
    features[f].type = spec[f].type;
    if (spec[f].variableLength)
      features[f].rowLengths.reserve(records.size());
  }
  wire::Example example;
  for (size_t r = 0; r < records.size(); ++r) {
    std::string where = "record " + std::to_string(r);
    if (!example.ParseFromString(records[r])) {
      error = where + " is not a serialized tf.Example";
      return false;
    }
    const auto &map = example.features().feature();
    for (size_t f = 0; f < spec.size(); ++f) {
      const FeatureSpec &feature = spec[f];
      FeatureValues &out = features[f];
      auto found = map.find(feature.name);
      bool present = found != map.end() && typeOf(found->second);
      if (present && *typeOf(found->second) != feature.type) {
        error = where + ": feature '" + feature.name + "' holds " +
                featureTypeName(*typeOf(found->second)) +
                " values, the spec says " + featureTypeName(feature.type);
        return false;
      }
      if (feature.variableLength) {
        int64_t count = present ? valueCount(found->second) : 0;
        out.rowLengths.push_back(count);
        if (present)
          appendValues(found->second, out);
        continue;
      }
      int64_t count = elementCount(feature.shape);
      if (!present) {
        if (!defaultCount(feature)) {
          error = where + ": feature '" + feature.name +
                  "' is missing and the spec gives no default";
          return false;
        }
        appendDefault(feature, count, out);
        continue;
      }
      if (valueCount(found->second) != count) {
        error = where + ": feature '" + feature.name + "' has " +
                std::to_string(valueCount(found->second)) +
                " values, its shape holds " + std::to_string(count);
        return false;
      }
      appendValues(found->second, out);
    }
  }
  for (size_t f = 0; f < spec.size(); ++f) {
    FeatureValues &out = features[f];
    if (spec[f].variableLength) {
      int64_t total = 0;
      for (int64_t n : out.rowLengths)
        total += n;
      out.shape = {total};
    } else {
      out.shape = {static_cast<int64_t>(records.size())};
      out.shape.insert(out.shape.end(), spec[f].shape.begin(),
                       spec[f].shape.end());
    }
  }
  return true;
}

} // namespace data
} // namespace kiln
