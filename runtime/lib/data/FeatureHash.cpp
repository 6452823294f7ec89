//===- FeatureHash.cpp - Categorical features as TensorFlow's ids ---------===//

#include "kiln/FeatureHash.h"

#include <farmhash.h>

#include <algorithm>
#include <fstream>
#include <limits>

namespace kiln {
namespace data {

uint64_t fingerprint64(std::string_view bytes) {
  return util::Fingerprint64(bytes.data(), bytes.size());
}

int64_t hashBucket(std::string_view bytes, int64_t buckets) {
  return static_cast<int64_t>(fingerprint64(bytes) %
                              static_cast<uint64_t>(buckets));
}

int64_t hashBucket(int64_t value, int64_t buckets) {
  return hashBucket(std::to_string(value), buckets);
}

uint64_t fingerprintCat64(uint64_t running, uint64_t next) {
  // tensorflow/core/platform/fingerprint.h: a Murmur-style mix.
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ull;
  auto shiftMix = [](uint64_t v) { return v ^ (v >> 47); };
  uint64_t result = running ^ kMul;
  result ^= shiftMix(next * kMul) * kMul;
  result *= kMul;
  result = shiftMix(result) * kMul;
  return shiftMix(result);
}

int64_t crossHashed(const std::vector<uint64_t> &hashes, int64_t buckets,
                    uint64_t hashKey) {
  uint64_t hash = hashKey;
  for (uint64_t next : hashes)
    hash = fingerprintCat64(hash, next);
  uint64_t modulus = buckets > 0
                         ? static_cast<uint64_t>(buckets)
                         : static_cast<uint64_t>(
                               std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(hash % modulus);
}

bool crossHashedRows(const std::vector<CrossedColumn> &columns, int64_t rows,
                     int64_t buckets, uint64_t hashKey,
                     std::vector<int64_t> &ids,
                     std::vector<int64_t> &idRowLengths, std::string &error) {
  if (columns.empty()) {
    error = "a cross needs at least one column";
    return false;
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    int64_t total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (columns[c].rowLengths[r] < 0) {
        error = "crossed column " + std::to_string(c) + " has a negative "
                "row length (" + std::to_string(columns[c].rowLengths[r]) +
                " in row " + std::to_string(r) + ")";
        return false;
      }
      total += columns[c].rowLengths[r];
    }
    if (total != columns[c].values) {
      error = "crossed column " + std::to_string(c) + "'s row lengths add up "
              "to " + std::to_string(total) + ", not its " +
              std::to_string(columns[c].values) + " values";
      return false;
    }
  }
  std::vector<int64_t> starts(columns.size(), 0), at(columns.size());
  std::vector<uint64_t> combination(columns.size());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t count = 1;
    for (const CrossedColumn &column : columns)
      count *= column.rowLengths[r];
    idRowLengths.push_back(count);
    std::fill(at.begin(), at.end(), 0);
    for (int64_t k = 0; k < count; ++k) {
      for (size_t c = 0; c < columns.size(); ++c)
        combination[c] = columns[c].hashes[starts[c] + at[c]];
      ids.push_back(crossHashed(combination, buckets, hashKey));
      // The next combination: the last column's index advances first.
      for (size_t c = columns.size(); c-- > 0;) {
        if (++at[c] < columns[c].rowLengths[r])
          break;
        at[c] = 0;
      }
    }
    for (size_t c = 0; c < columns.size(); ++c)
      starts[c] += columns[c].rowLengths[r];
  }
  return true;
}

bool Vocabulary::assign(std::vector<std::string> newTokens,
                        int64_t newOovBuckets, int64_t newDefault,
                        std::string &error) {
  if (newOovBuckets < 0) {
    error = "a vocabulary's out-of-vocabulary bucket count must not be "
            "negative";
    return false;
  }
  tokens = std::move(newTokens);
  ids.clear();
  ids.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i)
    if (!ids.emplace(tokens[i], static_cast<int64_t>(i)).second) {
      error = "the vocabulary repeats '" + tokens[i] + "' (entries " +
              std::to_string(ids[tokens[i]]) + " and " + std::to_string(i) +
              ")";
      tokens.clear();
      ids.clear();
      return false;
    }
  oovBuckets = newOovBuckets;
  defaultValue = newDefault;
  return true;
}

bool Vocabulary::load(const std::string &path, int64_t size,
                      int64_t newOovBuckets, int64_t newDefault,
                      std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open the vocabulary file";
    return false;
  }
  std::vector<std::string> lines;
  std::string line;
  while ((size < 0 || static_cast<int64_t>(lines.size()) < size) &&
         std::getline(in, line)) {
    // TensorFlow refuses an empty line in a vocabulary file too.
    if (line.empty()) {
      error = path + ": line " + std::to_string(lines.size() + 1) +
              " of the vocabulary file is empty";
      return false;
    }
    lines.push_back(line);
  }
  if (in.bad()) {
    error = path + ": reading the vocabulary file failed";
    return false;
  }
  if (size >= 0 && static_cast<int64_t>(lines.size()) < size) {
    error = path + ": the vocabulary file has " + std::to_string(lines.size()) +
            " lines, fewer than the " + std::to_string(size) + " asked for";
    return false;
  }
  if (!assign(std::move(lines), newOovBuckets, newDefault, error)) {
    // Entries count from 0; lines from 1.
    error = path + ": " + error + " (lines are entries + 1)";
    return false;
  }
  return true;
}

int64_t Vocabulary::lookup(std::string_view token) const {
  auto found = ids.find(token);
  if (found != ids.end())
    return found->second;
  if (!oovBuckets)
    return defaultValue;
  return static_cast<int64_t>(tokens.size()) + hashBucket(token, oovBuckets);
}

int64_t Vocabulary::idCount() const {
  return static_cast<int64_t>(tokens.size()) + oovBuckets;
}

} // namespace data
} // namespace kiln
