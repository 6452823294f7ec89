//===- ExampleWire.h - tf.Example's wire format, decoded in place -*- C++ -*-===//
//
// The protobuf wire format of tf.Example and tf.SequenceExample
// (example.proto), decoded without libprotobuf: the decoder validates a
// whole record as protobuf's parser does (varints, lengths, wire types,
// groups in unknown fields, the recursion limit, UTF-8 map keys) and
// keeps views into the record's bytes instead of building messages. The
// merge rules are protobuf's: a singular message seen twice is merged, a
// map's later entry for a key replaces the earlier one, a oneof member
// other than the current one clears it, repeated values accumulate.
//
// TensorFlow parses Examples the same way (its example_proto_fast_parsing)
// and for the same two reasons: a batch's records become arrays without a
// message per record, and a process may load kiln next to a TensorFlow
// whose own protobuf, of another version, exports the same symbols.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DATA_EXAMPLEWIRE_H
#define KILN_DATA_EXAMPLEWIRE_H

#include "kiln/Example.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln {
namespace data {
namespace wire {

/// A decoded Feature: the oneof's member (none for an empty Feature) and
/// the bodies of that member's list messages, in order (one unless the
/// record repeats the member, whose lists then merge).
struct FeatureView {
  std::optional<FeatureType> type;
  /// The first list inline (almost every Feature has one: no allocation
  /// per feature), the rest after it.
  std::string_view firstList;
  std::vector<std::string_view> moreLists;
  /// The number of values in all of the lists.
  int64_t count = 0;

  void clearLists() {
    firstList = std::string_view();
    moreLists.clear();
    count = 0;
  }
  void addList(std::string_view list) {
    if (firstList.data())
      moreLists.push_back(list);
    else
      firstList = list;
  }
  template <typename Fn> void forEachList(Fn fn) const {
    if (firstList.data())
      fn(firstList);
    for (std::string_view list : moreLists)
      fn(list);
  }
};

/// One entry of a Features map.
struct NamedFeature {
  std::string_view name;
  FeatureView feature;
};

/// One entry of a FeatureLists map: a sequence feature's steps.
struct NamedFeatureList {
  std::string_view name;
  std::vector<FeatureView> steps;
};

/// Decodes a serialized Example; false when protobuf would reject it. The
/// map's entries come in the record's order, repeated names included (the
/// last one is the feature).
bool decodeExample(std::string_view record, std::vector<NamedFeature> &features);

/// Decodes a serialized SequenceExample into its context's entries and its
/// feature lists' entries, as decodeExample.
bool decodeSequenceExample(std::string_view record,
                           std::vector<NamedFeature> &context,
                           std::vector<NamedFeatureList> &featureLists);

/// Appends a decoded feature's values (of its type) to `out`.
void appendValues(const FeatureView &feature, FeatureValues &out);

} // namespace wire
} // namespace data
} // namespace kiln

#endif // KILN_DATA_EXAMPLEWIRE_H
