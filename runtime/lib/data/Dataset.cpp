//===- Dataset.cpp - Batches of records from TFRecord files ---------------===//
//
// Three stages pulled in turn (kiln/Dataset.h): the sharded record stream
// over the files, the shuffle buffer, the batcher; and, with prefetching,
// a producer thread that runs them into a bounded queue of batches.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dataset.h"

#include "Prefetcher.h"

namespace kiln {
namespace data {
namespace {

/// SplitMix64: a small generator whose output is fixed by its seed.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound), by rejection (no modulo bias).
  uint64_t below(uint64_t bound) {
    uint64_t limit = ~uint64_t(0) - ~uint64_t(0) % bound;
    uint64_t value;
    do
      value = next();
    while (value >= limit);
    return value % bound;
  }

private:
  uint64_t state;
};

/// This rank's records of the files, in order.
class ShardedRecords {
public:
  explicit ShardedRecords(const DatasetOptions &options) : options(options) {}

  bool next(std::string &record, std::string &error) {
    for (;;) {
      if (!open) {
        if (file >= options.files.size())
          return false;
        const std::string &path = options.files[file];
        Compression compression = options.compressionFromName
                                      ? compressionForPath(path)
                                      : options.compression;
        if (!reader.open(path, compression, error))
          return false;
        open = true;
      }
      if (!reader.next(record, error)) {
        if (error.empty()) {
          open = false;
          ++file;
          continue;
        }
        if (!options.skipDamaged)
          return false;
        // The damage takes record `index`'s place; its owner counts it.
        if (index++ % options.ranks == options.rank)
          count(error);
        error.clear();
        if (!reader.skipDamagedRecord()) {
          open = false;
          ++file;
        }
        continue;
      }
      if (index++ % options.ranks == options.rank)
        return true;
    }
  }

  SkippedRecords skipped() const {
    std::lock_guard<std::mutex> lock(skippedMutex);
    return skippedSoFar;
  }

private:
  void count(const std::string &why) {
    std::lock_guard<std::mutex> lock(skippedMutex);
    ++skippedSoFar.count;
    skippedSoFar.last = why;
  }

  const DatasetOptions &options;
  TfRecordReader reader;
  size_t file = 0;
  bool open = false;
  uint64_t index = 0;
  /// Updated on the prefetching thread, read by skipped() on any.
  mutable std::mutex skippedMutex;
  SkippedRecords skippedSoFar;
};

/// The records through the shuffle buffer.
class ShuffledRecords {
public:
  explicit ShuffledRecords(const DatasetOptions &options)
      : options(options), records(options), random(options.seed) {}

  bool next(std::string &record, std::string &error) {
    if (options.shuffleBuffer <= 1)
      return records.next(record, error);
    while (!drained &&
           static_cast<int64_t>(buffer.size()) < options.shuffleBuffer) {
      std::string incoming;
      if (!records.next(incoming, error)) {
        if (!error.empty())
          return false;
        drained = true;
        break;
      }
      buffer.push_back(std::move(incoming));
    }
    if (buffer.empty())
      return false;
    size_t chosen = random.below(buffer.size());
    record = std::move(buffer[chosen]);
    buffer[chosen] = std::move(buffer.back());
    buffer.pop_back();
    return true;
  }

  SkippedRecords skipped() const { return records.skipped(); }

private:
  const DatasetOptions &options;
  ShardedRecords records;
  SplitMix64 random;
  std::vector<std::string> buffer;
  bool drained = false;
};

} // namespace

class RecordDataset::Pipeline {
public:
  explicit Pipeline(DatasetOptions opts)
      : options(std::move(opts)), records(options),
        batches(options.prefetch,
                [this](std::vector<std::string> &batch, std::string &error) {
                  return makeBatch(batch, error);
                }) {}

  bool next(std::vector<std::string> &batch, std::string &error) {
    return batches.next(batch, error);
  }

  SkippedRecords skipped() const { return records.skipped(); }

private:
  /// The next batch straight from the stages.
  bool makeBatch(std::vector<std::string> &batch, std::string &error) {
    error.clear();
    batch.clear();
    if (ended) {
      error = failure;
      return false;
    }
    std::string record;
    while (static_cast<int64_t>(batch.size()) < options.batchSize) {
      if (!records.next(record, error))
        break;
      batch.push_back(std::move(record));
    }
    if (!error.empty() ||
        static_cast<int64_t>(batch.size()) < options.batchSize) {
      ended = true;
      failure = error;
      if (!error.empty() || batch.empty() || options.dropRemainder) {
        batch.clear();
        return false;
      }
    }
    return true;
  }

  DatasetOptions options;
  ShuffledRecords records;
  bool ended = false;
  std::string failure;
  /// Last: destroyed (its thread joined) before the stages it runs.
  Prefetcher<std::vector<std::string>> batches;
};

RecordDataset::RecordDataset() = default;
RecordDataset::~RecordDataset() = default;

bool RecordDataset::open(DatasetOptions options, std::string &error) {
  if (options.files.empty())
    error = "a dataset needs at least one file";
  else if (options.ranks < 1 || options.rank < 0 ||
           options.rank >= options.ranks)
    error = "rank " + std::to_string(options.rank) + " is not one of " +
            std::to_string(options.ranks) + " ranks";
  else if (options.batchSize < 1)
    error = "the batch size must be at least 1, not " +
            std::to_string(options.batchSize);
  else if (options.shuffleBuffer < 0 || options.prefetch < 0)
    error = "the shuffle buffer and the prefetch depth cannot be negative";
  if (!error.empty())
    return false;
  pipeline.reset();
  pipeline = std::make_unique<Pipeline>(std::move(options));
  return true;
}

SkippedRecords RecordDataset::skipped() const {
  return pipeline ? pipeline->skipped() : SkippedRecords();
}

bool RecordDataset::next(std::vector<std::string> &batch, std::string &error) {
  if (!pipeline) {
    error = "the dataset is not open";
    return false;
  }
  return pipeline->next(batch, error);
}

} // namespace data
} // namespace kiln
