//===- FeatureHash.h - Categorical features as TensorFlow's ids -*- C++ -*-===//
//
// The input pipeline's side of feature columns: strings become int64 ids
// before a batch reaches a compiled step, and they must be the ids that
// TensorFlow gives the same values, so that a model trained there keeps
// its embedding rows here.
//
//   - hashBucket: tf.strings.to_hash_bucket_fast, the hash of
//     categorical_column_with_hash_bucket and Keras's Hashing layer:
//     FarmHash's Fingerprint64 of the bytes, modulo the bucket count. An
//     int64 value is hashed as its decimal text, as TensorFlow's column
//     does (as_string first).
//   - Vocabulary: categorical_column_with_vocabulary_list/_file and
//     StringLookup/IntegerLookup without their reserved ids: a token's
//     position in the list (or the file's line), or for a token outside
//     it, the vocabulary's size plus its hash bucket among `oovBuckets`, or
//     `defaultValue` when there are none.
//   - crossHashed: the id of one combination of a crossed column
//     (tf.sparse.cross_hashed): FingerprintCat64 over the features' hashes
//     (a string's Fingerprint64, an int64 as it is), seeded with the
//     column's hash key, modulo the bucket count.
//
// Part of the runtime's layer (KilnData): FarmHash (Debian's libfarmhash),
// no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FEATUREHASH_H
#define KILN_FEATUREHASH_H

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln {
namespace data {

/// FarmHash's Fingerprint64, TensorFlow's string fingerprint.
uint64_t fingerprint64(std::string_view bytes);

/// Fingerprint64(bytes) % buckets; buckets >= 1.
int64_t hashBucket(std::string_view bytes, int64_t buckets);

/// hashBucket of an int64's decimal text.
int64_t hashBucket(int64_t value, int64_t buckets);

/// TensorFlow's FingerprintCat64: combines a running hash with the next.
uint64_t fingerprintCat64(uint64_t running, uint64_t next);

/// The hash key of tf.sparse.cross_hashed and crossed_column by default.
constexpr uint64_t kDefaultCrossHashKey = 0xDECAFCAFFEull;

/// One crossed id from the hashes of its features (a string's
/// fingerprint64, an int64 value as it is), in the column's order;
/// buckets 0 means modulo the largest int64.
int64_t crossHashed(const std::vector<uint64_t> &hashes, int64_t buckets,
                    uint64_t hashKey = kDefaultCrossHashKey);

/// One column of a crossed batch: its values' hashes (as crossHashed
/// takes them), and each of the batch's rows' count of values.
struct CrossedColumn {
  const uint64_t *hashes = nullptr;
  int64_t values = 0;
  const int64_t *rowLengths = nullptr;
};

/// tf.sparse.cross_hashed over a batch of `rows` rows: for each row, every
/// combination of one value of each column, the last column's varying
/// fastest, hashed by crossHashed. Appends the ids to `ids` and each row's
/// count to `idRowLengths`; false with a message for no columns, a
/// negative row length, or row lengths that do not add up to a column's
/// values.
bool crossHashedRows(const std::vector<CrossedColumn> &columns, int64_t rows,
                     int64_t buckets, uint64_t hashKey,
                     std::vector<int64_t> &ids,
                     std::vector<int64_t> &idRowLengths, std::string &error);

/// A vocabulary of string tokens.
class Vocabulary {
public:
  /// `tokens` in id order; false with a message for a repeated token or
  /// negative oovBuckets.
  bool assign(std::vector<std::string> tokens, int64_t oovBuckets,
              int64_t defaultValue, std::string &error);

  /// The lines of `path` (without their line ends) as the tokens, at most
  /// `size` of them when size >= 0; the message names the file and, for an
  /// empty line or a repeated token, its line.
  bool load(const std::string &path, int64_t size, int64_t oovBuckets,
            int64_t defaultValue, std::string &error);

  int64_t lookup(std::string_view token) const;

  /// The number of ids: the tokens and the out-of-vocabulary buckets.
  int64_t idCount() const;

private:
  std::vector<std::string> tokens;
  std::unordered_map<std::string_view, int64_t> ids;
  int64_t oovBuckets = 0;
  int64_t defaultValue = -1;
};

} // namespace data
} // namespace kiln

#endif // KILN_FEATUREHASH_H
