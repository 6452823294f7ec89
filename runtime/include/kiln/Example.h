//===- Example.h - Parsing tf.Example records into arrays -------*- C++ -*-===//
//
// The records of a TFRecord file (kiln/TfRecord.h) are usually serialized
// tf.Example messages: a map from feature names to lists of int64s,
// floats or byte strings. An ExampleParser turns a batch of them into one
// array per feature of a parse spec, as tf.io.parse_example does:
//
//   - a fixed-length feature has `shape` per example (its list must hold
//     exactly their product of values, or be absent when the spec has a
//     default); the batch's array is [batch, shape...];
//   - a variable-length feature has any number of values per example
//     (absent: none); the batch's values are concatenated and each
//     example's count is given, the ragged form of tf.io.VarLenFeature.
//
// A record that is not an Example, a feature of another type than its
// spec's, a count that does not match the shape, or a missing feature
// without a default is an error that names the record (its index in the
// batch) and the feature. Part of the runtime's layer, with no LLVM and no
// protobuf library: the wire format is decoded in place
// (lib/data/ExampleWire.h says why).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_EXAMPLE_H
#define KILN_EXAMPLE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace data {

/// The three kinds of lists a tf.Example feature holds.
enum class FeatureType { Int64, Float, Bytes };

/// "int64", "float" or "bytes".
const char *featureTypeName(FeatureType type);

/// One feature of a parse spec.
struct FeatureSpec {
  std::string name;
  FeatureType type = FeatureType::Float;
  /// Variable length (ragged) instead of fixed length.
  bool variableLength = false;
  /// A fixed-length feature's shape per example ({} for one value).
  std::vector<int64_t> shape;
  /// A fixed-length feature's value where an example lacks it: one value
  /// (repeated over the shape) or the shape's number of them, of the
  /// spec's type. Empty: the feature is required.
  std::vector<int64_t> defaultInts;
  std::vector<float> defaultFloats;
  std::vector<std::string> defaultBytes;
};

/// One feature of a parsed batch: the values of its type, row-major.
struct FeatureValues {
  FeatureType type = FeatureType::Float;
  /// Fixed length: [batch, shape...]; variable length: [total values].
  std::vector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> bytes;
  /// Variable length only: each example's number of values.
  std::vector<int64_t> rowLengths;
};

/// Parses batches of serialized tf.Example records by a spec.
class ExampleParser {
public:
  ExampleParser();
  ~ExampleParser();

  /// Checks and keeps `spec`; false with a message when it is malformed
  /// (a duplicate or empty name, a negative dimension, a default of the
  /// wrong type or count, a shape or default on a variable-length
  /// feature).
  bool setSpec(std::vector<FeatureSpec> spec, std::string &error);

  /// Parses `records` into one FeatureValues per spec entry, in the
  /// spec's order; false with a message naming the record and feature.
  bool parse(const std::vector<std::string> &records,
             std::vector<FeatureValues> &features, std::string &error) const;

private:
  friend class SequenceExampleParser;
  std::vector<FeatureSpec> spec;
};

/// One feature list of a tf.SequenceExample spec: a value list per step.
struct SequenceFeatureSpec {
  std::string name;
  FeatureType type = FeatureType::Float;
  /// Any number of values per step (tf.io.VarLenFeature among the sequence
  /// features) instead of `shape`'s (tf.io.FixedLenSequenceFeature).
  bool variableLength = false;
  /// A fixed-length list's shape per step ({} for one value).
  std::vector<int64_t> shape;
  /// A record without the list has no steps; without this it is an error.
  bool allowMissing = false;
  /// A fixed-length list pads records with fewer steps than the batch's
  /// longest with this value (one, of the spec's type), or with zeros
  /// (empty strings) when there is none.
  std::vector<int64_t> defaultInts;
  std::vector<float> defaultFloats;
  std::vector<std::string> defaultBytes;
};

/// One feature list of a parsed batch of SequenceExamples.
struct SequenceValues {
  /// Fixed length: [batch, longest, shape...] with the padding; variable
  /// length: all values of all steps, [total].
  FeatureValues values;
  /// Each record's number of steps (tf's feature_list_lengths).
  std::vector<int64_t> stepCounts;
  /// Variable length only: each step's number of values, the steps of all
  /// records in order.
  std::vector<int64_t> valueCounts;
};

/// Parses batches of serialized tf.SequenceExample records as
/// tf.io.parse_sequence_example does: the context's features by a
/// FeatureSpec list (as ExampleParser), the feature lists by a
/// SequenceFeatureSpec list. A step of another type, with a count its
/// shape does not hold, or a list that is missing without allowMissing is
/// an error naming the record, the feature list and the step.
class SequenceExampleParser {
public:
  bool setSpec(std::vector<FeatureSpec> context,
               std::vector<SequenceFeatureSpec> sequence, std::string &error);
  bool parse(const std::vector<std::string> &records,
             std::vector<FeatureValues> &context,
             std::vector<SequenceValues> &sequence, std::string &error) const;

private:
  ExampleParser contextParser;
  std::vector<SequenceFeatureSpec> sequenceSpec;
};

} // namespace data
} // namespace kiln

#endif // KILN_EXAMPLE_H
