//===- Dataset.h - Batches of records from TFRecord files -------*- C++ -*-===//
//
// The input pipeline between record files and a training step: the files'
// records in order, this rank's share of them, shuffled through a bounded
// buffer, grouped into batches, and prepared ahead on a background thread.
//
//   - Sharding: record i (counted over all files in order) belongs to rank
//     i % ranks, so ranks read disjoint records and together every record
//     of the epoch once.
//   - Shuffling: a buffer of `shuffleBuffer` records (tf.data's shuffle):
//     each record out is a uniformly chosen one of the buffer, replaced by
//     the next record in. The generator is seeded and kiln's own
//     (SplitMix64), so a seed gives the same order on every machine.
//   - Prefetching: with `prefetch` > 0 a thread prepares up to that many
//     batches ahead; a failure on that thread reaches next() in order.
//
// Part of the runtime's layer (KilnData), with kiln/TfRecord.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DATASET_H
#define KILN_DATASET_H

#include "kiln/TfRecord.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace data {

struct DatasetOptions {
  std::vector<std::string> files;
  /// Each file's compression from its name (compressionForPath), or
  /// `compression` for all.
  bool compressionFromName = true;
  Compression compression = Compression::None;
  /// This rank's share: records i with i % ranks == rank.
  int64_t rank = 0, ranks = 1;
  /// Records in the shuffle buffer (0 or 1: the files' order).
  int64_t shuffleBuffer = 0;
  uint64_t seed = 0;
  /// Records per batch; the last batch is shorter unless dropRemainder.
  int64_t batchSize = 1;
  bool dropRemainder = false;
  /// Batches prepared ahead on a background thread (0: none, all work in
  /// next()).
  int64_t prefetch = 0;
  /// A damaged record is skipped and counted (skipped()) instead of ending
  /// the epoch with an error: a record whose data's CRC does not match is
  /// passed over; a failure that breaks the framing (the length's CRC, a
  /// truncated record, a damaged compressed stream) loses the rest of its
  /// file, counted as one. A rank counts the damage at its own records'
  /// positions (record i's, for i % ranks == rank), so the ranks' counts
  /// add up to the files'. A file that cannot be opened is still an
  /// error.
  bool skipDamaged = false;
};

/// What a dataset skipped so far (DatasetOptions::skipDamaged).
struct SkippedRecords {
  int64_t count = 0;
  /// The reader's message for the last one (file, record, offset, why).
  std::string last;
};

class RecordDataset {
public:
  RecordDataset();
  ~RecordDataset();
  RecordDataset(const RecordDataset &) = delete;
  RecordDataset &operator=(const RecordDataset &) = delete;

  /// Checks `options` and starts reading; false with a message for bad
  /// options (no files, a rank outside [0, ranks), a batch size below 1,
  /// a negative buffer or prefetch).
  bool open(DatasetOptions options, std::string &error);

  /// Sets `batch` to the next batch and returns true; false at the end of
  /// the epoch (error empty) or on a failure (a file that cannot be read,
  /// a damaged record: the reader's message).
  bool next(std::vector<std::string> &batch, std::string &error);

  /// The damaged records skipped so far this epoch, prefetched batches'
  /// included.
  SkippedRecords skipped() const;

private:
  class Pipeline;
  std::unique_ptr<Pipeline> pipeline;
};

} // namespace data
} // namespace kiln

#endif // KILN_DATASET_H
