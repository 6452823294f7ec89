//===- Criteo.h - Reading Criteo-format click logs ---------------*- C++ -*-===//
//
// The Criteo display-advertising logs (the Kaggle challenge's train.txt,
// the Terabyte dataset's day_N files) are the benchmark input of
// recommendation models (DLRM, DCN, Wide&Deep): one example per line, 40
// tab-separated fields
//
//   label  I1 ... I13  C1 ... C26
//
// a 0/1 click label, 13 integer counts, and 26 categorical values hashed
// to 32-bit hex strings; any feature field may be empty (missing). A
// CriteoReader parses batches of lines into
//
//   labels   int64 [batch]
//   dense    int64 [batch, 13]  (a missing count is 0)
//   sparse   int64 [batch, 26]  (the hex value, 0 .. 2^32 - 1; missing -1)
//
// as DLRM's data loaders do before their transforms (log(1 + x) of the
// counts, each categorical modulo its table's size), which stay with the
// model. A line that is not 40 fields of those forms is an error naming
// the file, the line number and the field. Part of the runtime's layer
// (KilnData).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CRITEO_H
#define KILN_CRITEO_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {
namespace data {

/// A batch of Criteo examples, row-major.
struct CriteoBatch {
  static constexpr int kDense = 13, kSparse = 26;
  std::vector<int64_t> labels;
  std::vector<int64_t> dense;
  std::vector<int64_t> sparse;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

class CriteoReader {
public:
  CriteoReader();
  ~CriteoReader();
  CriteoReader(const CriteoReader &) = delete;
  CriteoReader &operator=(const CriteoReader &) = delete;

  /// Opens `path`; false with a message naming it. The examples of a file
  /// opened after another are numbered on from the other's (for shard).
  bool open(const std::string &path, std::string &error);

  /// Reads only this rank's examples: example i (counted from 0 over the
  /// files opened, blank lines not counted) goes to rank i % ranks, so
  /// that ranks read disjoint examples and together every one once, as
  /// RecordDataset shards records. The other ranks' lines are skipped
  /// unparsed: a malformed line is reported by the rank that owns it.
  /// False with a message when rank is not in [0, ranks).
  bool shard(int64_t rank, int64_t ranks, std::string &error);

  /// Reads up to `size` of this rank's examples into `batch` (cleared
  /// first); false at the end of the file with nothing read (error
  /// empty), or on a malformed line (error names the file, the line from
  /// 1 and the field from 0).
  bool next(int64_t size, CriteoBatch &batch, std::string &error);

  /// Parses one line (without its newline) into `batch`, appending; false
  /// with a message saying what is wrong with it.
  static bool parseLine(std::string_view line, CriteoBatch &batch,
                        std::string &error);

private:
  std::FILE *file = nullptr;
  std::string name;
  int64_t line = 0;
  /// Examples seen over every file opened, this rank's and the others'.
  int64_t examples = 0;
  int64_t rank = 0, ranks = 1;
};

/// How a CriteoDataset reads.
struct CriteoOptions {
  std::vector<std::string> files;
  /// Examples per batch; a file's last batch may be shorter (batches do
  /// not span files).
  int64_t batchSize = 1;
  /// This rank's share, as CriteoReader::shard.
  int64_t rank = 0, ranks = 1;
  /// Batches parsed ahead on a background thread (0: none, all work in
  /// next()), so that a training step does not wait for the parser.
  int64_t prefetch = 0;
};

/// Criteo logs as the input pipeline reads them: a CriteoReader over the
/// files in order, its batches prepared ahead on a thread. A malformed
/// line reaches next() after the batches before it.
class CriteoDataset {
public:
  CriteoDataset();
  ~CriteoDataset();
  CriteoDataset(const CriteoDataset &) = delete;
  CriteoDataset &operator=(const CriteoDataset &) = delete;

  /// Starts reading; false with a message for no files, a file that
  /// cannot be opened (each is tried now), a batch size below 1, a rank
  /// outside [0, ranks) or a negative prefetch depth.
  bool open(CriteoOptions options, std::string &error);

  /// The next batch; false at the end (error empty) or on a malformed line
  /// (error as CriteoReader::next says it).
  bool next(CriteoBatch &batch, std::string &error);

private:
  class Pipeline;
  std::unique_ptr<Pipeline> pipeline;
};

} // namespace data
} // namespace kiln

#endif // KILN_CRITEO_H
