//===- Example.cpp - Parsing tf.Example records into arrays ---------------===//
//
// Each record is decoded in place (ExampleWire.h) into its features'
// views; the spec then picks each feature's list (the map's last entry of
// its name), checks its type and count, and appends its values to the
// batch's array (or the default, for a fixed-length feature the example
// lacks). SequenceExamples add their feature lists, step by step.
//
//===----------------------------------------------------------------------===//

#include "kiln/Example.h"

#include "ExampleWire.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
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

/// The number of default values of `spec`'s type (a FeatureSpec's
/// defaults, a SequenceFeatureSpec's padding).
template <typename Spec> size_t defaultCount(const Spec &spec) {
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

/// Each spec entry's position by its name (views of the spec's names).
template <typename Spec>
std::unordered_map<std::string_view, size_t>
indexByName(const std::vector<Spec> &spec) {
  std::unordered_map<std::string_view, size_t> index;
  for (size_t f = 0; f < spec.size(); ++f)
    index.emplace(spec[f].name, f);
  return index;
}

/// The last feature of each spec entry's name among a record's decoded
/// features (null where the record has none).
template <typename Named>
void pickByName(const std::unordered_map<std::string_view, size_t> &index,
                const std::vector<Named> &named,
                std::vector<const Named *> &picked) {
  picked.assign(index.size(), nullptr);
  for (const Named &entry : named) {
    auto found = index.find(entry.name);
    if (found != index.end())
      picked[found->second] = &entry;
  }
}

std::string typeMismatch(const std::string &where, FeatureType found,
                         FeatureType expected) {
  return where + " holds " + featureTypeName(found) + " values, the spec says " +
         featureTypeName(expected);
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

/// The checks every spec entry takes, `kind` naming it ("feature" or
/// "feature list"): a name, not used before, no negative dimension, and
/// defaults of its own type only.
template <typename Spec>
bool checkEntry(const Spec &entry, const char *kind,
                std::set<std::string> &names, std::string &error) {
  std::string where = std::string(kind) + " '" + entry.name + "'";
  if (entry.name.empty()) {
    error = std::string("a ") + kind + " of the parse spec has no name";
    return false;
  }
  if (!names.insert(entry.name).second) {
    error = where + " appears twice in the parse spec";
    return false;
  }
  for (int64_t d : entry.shape)
    if (d < 0) {
      error = where + " has a negative dimension";
      return false;
    }
  return true;
}

/// Whether `entry` has defaults of another type than its own.
template <typename Spec> bool hasForeignDefaults(const Spec &entry) {
  return defaultCount(entry) != entry.defaultInts.size() +
                                    entry.defaultFloats.size() +
                                    entry.defaultBytes.size();
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
    if (!checkEntry(feature, "feature", names, error))
      return false;
    std::string where = "feature '" + feature.name + "'";
    size_t defaults = defaultCount(feature);
    if (hasForeignDefaults(feature)) {
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

namespace {

/// Appends one record's features (`picked`, by spec entry) to the batch.
/// `where` names the record, and is only called for a message.
template <typename Where>
bool appendRecord(const std::vector<FeatureSpec> &spec,
                  const std::vector<const wire::NamedFeature *> &picked,
                  Where where, std::vector<FeatureValues> &out,
                  std::string &error) {
  for (size_t f = 0; f < spec.size(); ++f) {
    const FeatureSpec &feature = spec[f];
    const wire::FeatureView *found =
        picked[f] && picked[f]->feature.type ? &picked[f]->feature : nullptr;
    auto name = [&] { return where() + ": feature '" + feature.name + "'"; };
    if (found && *found->type != feature.type) {
      error = typeMismatch(name(), *found->type, feature.type);
      return false;
    }
    if (feature.variableLength) {
      out[f].rowLengths.push_back(found ? found->count : 0);
      if (found)
        wire::appendValues(*found, out[f]);
      continue;
    }
    int64_t count = elementCount(feature.shape);
    if (!found) {
      if (!defaultCount(feature)) {
        error = name() + " is missing and the spec gives no default";
        return false;
      }
      appendDefault(feature, count, out[f]);
      continue;
    }
    if (found->count != count) {
      error = name() + " has " + std::to_string(found->count) +
              " values, its shape holds " + std::to_string(count);
      return false;
    }
    wire::appendValues(*found, out[f]);
  }
  return true;
}

void startBatch(const std::vector<FeatureSpec> &spec, size_t records,
                std::vector<FeatureValues> &features) {
  features.assign(spec.size(), FeatureValues());
  for (size_t f = 0; f < spec.size(); ++f) {
    features[f].type = spec[f].type;
    if (spec[f].variableLength)
      features[f].rowLengths.reserve(records);
  }
}

int64_t sum(const std::vector<int64_t> &values) {
  int64_t total = 0;
  for (int64_t n : values)
    total += n;
  return total;
}

void finishBatch(const std::vector<FeatureSpec> &spec, size_t records,
                 std::vector<FeatureValues> &features) {
  for (size_t f = 0; f < spec.size(); ++f) {
    FeatureValues &out = features[f];
    if (spec[f].variableLength) {
      out.shape = {sum(out.rowLengths)};
    } else {
      out.shape = {static_cast<int64_t>(records)};
      out.shape.insert(out.shape.end(), spec[f].shape.begin(),
                       spec[f].shape.end());
    }
  }
}

std::string recordName(size_t r) { return "record " + std::to_string(r); }

} // namespace

bool ExampleParser::parse(const std::vector<std::string> &records,
                          std::vector<FeatureValues> &features,
                          std::string &error) const {
  startBatch(spec, records.size(), features);
  std::vector<wire::NamedFeature> named;
  std::vector<const wire::NamedFeature *> picked;
  auto index = indexByName(spec);
  for (size_t r = 0; r < records.size(); ++r) {
    if (!wire::decodeExample(records[r], named)) {
      error = recordName(r) + " is not a serialized tf.Example";
      return false;
    }
    pickByName(index, named, picked);
    if (!appendRecord(spec, picked, [r] { return recordName(r); }, features,
                      error))
      return false;
  }
  finishBatch(spec, records.size(), features);
  return true;
}

bool SequenceExampleParser::setSpec(std::vector<FeatureSpec> context,
                                    std::vector<SequenceFeatureSpec> sequence,
                                    std::string &error) {
  std::set<std::string> names;
  for (const SequenceFeatureSpec &list : sequence) {
    if (!checkEntry(list, "feature list", names, error))
      return false;
    std::string where = "feature list '" + list.name + "'";
    size_t defaults = defaultCount(list);
    if (hasForeignDefaults(list) || defaults > 1) {
      error = where + " takes one padding value of its " +
              featureTypeName(list.type) + " type";
      return false;
    }
    if (list.variableLength && (!list.shape.empty() || defaults)) {
      error = where + " is variable-length: it takes no shape or padding";
      return false;
    }
  }
  if (!contextParser.setSpec(std::move(context), error))
    return false;
  sequenceSpec = std::move(sequence);
  return true;
}

bool SequenceExampleParser::parse(const std::vector<std::string> &records,
                                  std::vector<FeatureValues> &context,
                                  std::vector<SequenceValues> &sequence,
                                  std::string &error) const {
  const std::vector<FeatureSpec> &contextSpec = contextParser.spec;
  startBatch(contextSpec, records.size(), context);
  sequence.assign(sequenceSpec.size(), SequenceValues());
  for (size_t f = 0; f < sequenceSpec.size(); ++f)
    sequence[f].values.type = sequenceSpec[f].type;
  // Fixed-length lists are padded to the batch's longest, so their steps
  // are kept per record until the batch is read.
  std::vector<std::vector<FeatureValues>> steps(sequenceSpec.size());
  std::vector<wire::NamedFeature> named;
  std::vector<wire::NamedFeatureList> lists;
  std::vector<const wire::NamedFeature *> picked;
  std::vector<const wire::NamedFeatureList *> pickedLists;
  auto contextIndex = indexByName(contextSpec);
  auto sequenceIndex = indexByName(sequenceSpec);
  for (size_t r = 0; r < records.size(); ++r) {
    if (!wire::decodeSequenceExample(records[r], named, lists)) {
      error = recordName(r) + " is not a serialized tf.SequenceExample";
      return false;
    }
    pickByName(contextIndex, named, picked);
    if (!appendRecord(contextSpec, picked,
                      [r] { return recordName(r) + " (context)"; }, context,
                      error))
      return false;
    pickByName(sequenceIndex, lists, pickedLists);
    for (size_t f = 0; f < sequenceSpec.size(); ++f) {
      const SequenceFeatureSpec &spec = sequenceSpec[f];
      SequenceValues &out = sequence[f];
      auto where = [&] {
        return recordName(r) + ": feature list '" + spec.name + "'";
      };
      if (!pickedLists[f] && !spec.allowMissing && !spec.variableLength) {
        error = where() + " is missing and the spec does not allow it";
        return false;
      }
      const std::vector<wire::FeatureView> none;
      const auto &recordSteps = pickedLists[f] ? pickedLists[f]->steps : none;
      out.stepCounts.push_back(static_cast<int64_t>(recordSteps.size()));
      FeatureValues fixed;
      fixed.type = spec.type;
      int64_t count = elementCount(spec.shape);
      for (size_t s = 0; s < recordSteps.size(); ++s) {
        const wire::FeatureView &step = recordSteps[s];
        auto stepName = [&] { return where() + ", step " + std::to_string(s); };
        if (step.type && *step.type != spec.type) {
          error = typeMismatch(stepName(), *step.type, spec.type);
          return false;
        }
        if (spec.variableLength) {
          out.valueCounts.push_back(step.count);
          wire::appendValues(step, out.values);
          continue;
        }
        if (step.count != count) {
          error = stepName() + " has " + std::to_string(step.count) +
                  " values, its shape holds " + std::to_string(count);
          return false;
        }
        wire::appendValues(step, fixed);
      }
      if (!spec.variableLength)
        steps[f].push_back(std::move(fixed));
    }
  }
  finishBatch(contextSpec, records.size(), context);
  for (size_t f = 0; f < sequenceSpec.size(); ++f) {
    const SequenceFeatureSpec &spec = sequenceSpec[f];
    SequenceValues &out = sequence[f];
    if (spec.variableLength) {
      out.values.shape = {sum(out.valueCounts)};
      continue;
    }
    int64_t longest = 0;
    for (int64_t n : out.stepCounts)
      longest = std::max(longest, n);
    int64_t count = elementCount(spec.shape);
    FeatureSpec padding;
    padding.type = spec.type;
    padding.defaultInts = spec.defaultInts.empty() ? std::vector<int64_t>{0}
                                                   : spec.defaultInts;
    padding.defaultFloats = spec.defaultFloats.empty()
                                ? std::vector<float>{0.0f}
                                : spec.defaultFloats;
    padding.defaultBytes = spec.defaultBytes.empty()
                               ? std::vector<std::string>{std::string()}
                               : spec.defaultBytes;
    for (size_t r = 0; r < records.size(); ++r) {
      FeatureValues &record = steps[f][r];
      out.values.ints.insert(out.values.ints.end(), record.ints.begin(),
                             record.ints.end());
      out.values.floats.insert(out.values.floats.end(), record.floats.begin(),
                               record.floats.end());
      for (std::string &value : record.bytes)
        out.values.bytes.push_back(std::move(value));
      appendDefault(padding, (longest - out.stepCounts[r]) * count, out.values);
    }
    out.values.shape = {static_cast<int64_t>(records.size()), longest};
    out.values.shape.insert(out.values.shape.end(), spec.shape.begin(),
                            spec.shape.end());
  }
  return true;
}

} // namespace data
} // namespace kiln
