//===- Criteo.cpp - Reading Criteo-format click logs ----------------------===//
//
// Lines are read with POSIX getline and split at tabs by hand; numbers are
// parsed without locale (std::from_chars), so a field like "1e3", " 7" or
// "0x1f" is an error rather than a guess.
//
//===----------------------------------------------------------------------===//

#include "kiln/Criteo.h"

#include "Prefetcher.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace data {

CriteoReader::CriteoReader() = default;

CriteoReader::~CriteoReader() {
  if (file)
    std::fclose(file);
}

bool CriteoReader::open(const std::string &path, std::string &error) {
  if (file)
    std::fclose(file);
  file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  name = path;
  line = 0;
  return true;
}

bool CriteoReader::shard(int64_t shardRank, int64_t shardRanks,
                         std::string &error) {
  if (shardRanks < 1 || shardRank < 0 || shardRank >= shardRanks) {
    error = "rank " + std::to_string(shardRank) + " is not one of " +
            std::to_string(shardRanks) + " ranks";
    return false;
  }
  rank = shardRank;
  ranks = shardRanks;
  return true;
}

bool CriteoReader::parseLine(std::string_view text, CriteoBatch &batch,
                             std::string &error) {
  constexpr int kFields = 1 + CriteoBatch::kDense + CriteoBatch::kSparse;
  const char *begin = text.data(), *end = text.data() + text.size();
  if (begin != end && end[-1] == '\r')
    --end;
  int64_t values[kFields];
  int field = 0;
  for (const char *start = begin;; ++field) {
    const char *stop = static_cast<const char *>(
        std::memchr(start, '\t', static_cast<size_t>(end - start)));
    if (!stop)
      stop = end;
    if (field >= kFields) {
      error = "more than " + std::to_string(kFields) + " fields";
      return false;
    }
    std::string_view value(start, static_cast<size_t>(stop - start));
    auto bad = [&](const char *what) {
      error = "field " + std::to_string(field) + " ('" + std::string(value) +
              "') is not " + what;
      return false;
    };
    if (field == 0) {
      if (value != "0" && value != "1")
        return bad("a 0/1 label");
      values[field] = value == "1";
    } else if (value.empty()) {
      values[field] = field <= CriteoBatch::kDense ? 0 : -1;
    } else if (field <= CriteoBatch::kDense) {
      int64_t count;
      auto [ptr, ec] = std::from_chars(value.data(),
                                       value.data() + value.size(), count);
      if (ec != std::errc() || ptr != value.data() + value.size())
        return bad("an integer");
      values[field] = count;
    } else {
      uint64_t hash;
      auto [ptr, ec] = std::from_chars(
          value.data(), value.data() + value.size(), hash, 16);
      if (ec != std::errc() || ptr != value.data() + value.size() ||
          value.size() > 8)
        return bad("a hexadecimal value of at most 8 digits");
      values[field] = static_cast<int64_t>(hash);
    }
    if (stop == end)
      break;
    start = stop + 1;
  }
  if (field + 1 != kFields) {
    error = std::to_string(field + 1) + " fields, not " +
            std::to_string(kFields) +
            " (a label, 13 counts and 26 categorical values)";
    return false;
  }
  batch.labels.push_back(values[0]);
  batch.dense.insert(batch.dense.end(), values + 1,
                     values + 1 + CriteoBatch::kDense);
  batch.sparse.insert(batch.sparse.end(), values + 1 + CriteoBatch::kDense,
                      values + kFields);
  return true;
}

bool CriteoReader::next(int64_t size, CriteoBatch &batch, std::string &error) {
  error.clear();
  batch = CriteoBatch();
  if (!file) {
    error = "no Criteo file is open";
    return false;
  }
  char *buffer = nullptr;
  size_t capacity = 0;
  while (batch.size() < size) {
    errno = 0;
    ssize_t length = getline(&buffer, &capacity, file);
    if (length < 0) {
      if (std::ferror(file)) {
        error = name + ": read error: " + std::strerror(errno);
        std::free(buffer);
        return false;
      }
      break;
    }
    ++line;
    std::string_view text(buffer, static_cast<size_t>(length));
    if (!text.empty() && text.back() == '\n')
      text.remove_suffix(1);
    if (text.empty() || text == "\r")
      continue; // blank lines, as a trailing one
    if (examples++ % ranks != rank)
      continue;
    std::string what;
    if (!parseLine(text, batch, what)) {
      error = name + ": line " + std::to_string(line) + ": " + what;
      std::free(buffer);
      return false;
    }
  }
  std::free(buffer);
  return batch.size() > 0;
}

/// The reader over the files in order, behind a Prefetcher when asked.
class CriteoDataset::Pipeline {
public:
  /// `options` were checked by CriteoDataset::open.
  explicit Pipeline(CriteoOptions opts)
      : options(std::move(opts)),
        batches(options.prefetch,
                [this](CriteoBatch &batch, std::string &error) {
                  return makeBatch(batch, error);
                }) {}

  bool next(CriteoBatch &batch, std::string &error) {
    return batches.next(batch, error);
  }

private:
  bool makeBatch(CriteoBatch &batch, std::string &error) {
    error.clear();
    while (!ended) {
      if (!opened) {
        if (nextFile == options.files.size()) {
          ended = true;
          break;
        }
        if (!reader.open(options.files[nextFile++], error)) {
          ended = true;
          failure = error;
          return false;
        }
        opened = true;
      }
      if (reader.next(options.batchSize, batch, error))
        return true;
      if (!error.empty()) {
        ended = true;
        failure = error;
        return false;
      }
      opened = false;
    }
    batch = CriteoBatch();
    error = failure;
    return false;
  }

  CriteoOptions options;
  CriteoReader reader;
  /// The reader reads this rank's share from the first batch on, before
  /// the prefetching thread starts (`batches`, below).
  bool shardSet = [this] {
    std::string unused;
    return reader.shard(options.rank, options.ranks, unused);
  }();
  size_t nextFile = 0;
  bool opened = false, ended = false;
  std::string failure;
  /// Last: destroyed (its thread joined) before the reader it runs.
  Prefetcher<CriteoBatch> batches;
};

CriteoDataset::CriteoDataset() = default;
CriteoDataset::~CriteoDataset() = default;

bool CriteoDataset::open(CriteoOptions options, std::string &error) {
  pipeline.reset();
  if (options.files.empty()) {
    error = "a Criteo dataset needs at least one file";
    return false;
  }
  if (options.batchSize < 1) {
    error = "the batch size must be at least 1, not " +
            std::to_string(options.batchSize);
    return false;
  }
  if (options.prefetch < 0) {
    error = "the prefetch depth cannot be negative";
    return false;
  }
  CriteoReader check;
  if (!check.shard(options.rank, options.ranks, error))
    return false;
  for (const std::string &path : options.files)
    if (!check.open(path, error))
      return false;
  pipeline = std::make_unique<Pipeline>(std::move(options));
  return true;
}

bool CriteoDataset::next(CriteoBatch &batch, std::string &error) {
  if (!pipeline) {
    error = "the dataset is not open";
    return false;
  }
  return pipeline->next(batch, error);
}

} // namespace data
} // namespace kiln
