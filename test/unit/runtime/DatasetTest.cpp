//===- DatasetTest.cpp - Batches of records (kiln/Dataset.h) --------------===//
//
// Over files of numbered records: order and batching, sharding (disjoint
// and complete over ranks), shuffling (a permutation fixed by its seed,
// local to the buffer), prefetching (the same batches), and failures.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kiln/Dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace kiln::data;
using kiln::test::TemporaryDirectory;

namespace {

/// Files "a.tfrecord" (records 0..19, plain) and "b.tfrecord.gz" (20..34,
/// gzip) of records "r<number>".
std::vector<std::string> writeFiles(const TemporaryDirectory &dir) {
  std::vector<std::string> files = {dir.file("a.tfrecord"),
                                    dir.file("b.tfrecord.gz")};
  int number = 0;
  for (auto [file, count] : {std::pair<std::string, int>{files[0], 20},
                             {files[1], 15}}) {
    TfRecordWriter writer;
    std::string error;
    EXPECT_TRUE(writer.open(file, compressionForPath(file), error)) << error;
    for (int i = 0; i < count; ++i, ++number)
      EXPECT_TRUE(writer.write("r" + std::to_string(number), error));
    EXPECT_TRUE(writer.close(error)) << error;
  }
  return files;
}

std::vector<std::vector<std::string>> allBatches(DatasetOptions options,
                                                 std::string *failure = nullptr) {
  RecordDataset dataset;
  std::string error;
  EXPECT_TRUE(dataset.open(options, error)) << error;
  std::vector<std::vector<std::string>> batches;
  std::vector<std::string> batch;
  while (dataset.next(batch, error))
    batches.push_back(batch);
  if (failure)
    *failure = error;
  else
    EXPECT_EQ(error, "");
  return batches;
}

std::vector<std::string> flat(const std::vector<std::vector<std::string>> &b) {
  std::vector<std::string> out;
  for (const auto &batch : b)
    out.insert(out.end(), batch.begin(), batch.end());
  return out;
}

std::vector<std::string> numbered(int from, int to, int step = 1) {
  std::vector<std::string> out;
  for (int i = from; i < to; i += step)
    out.push_back("r" + std::to_string(i));
  return out;
}

} // namespace

TEST(DatasetTest, BatchesFollowTheFilesInOrder) {
  TemporaryDirectory dir;
  DatasetOptions options;
  options.files = writeFiles(dir);
  options.batchSize = 8;
  auto batches = allBatches(options);
  ASSERT_EQ(batches.size(), 5u);
  EXPECT_EQ(batches[4].size(), 3u); // 35 = 4 * 8 + 3
  EXPECT_EQ(flat(batches), numbered(0, 35));
  options.dropRemainder = true;
  EXPECT_EQ(allBatches(options).size(), 4u);
}

TEST(DatasetTest, RanksReadDisjointRecordsThatCoverTheEpoch) {
  TemporaryDirectory dir;
  DatasetOptions options;
  options.files = writeFiles(dir);
  options.ranks = 3;
  std::multiset<std::string> seen;
  for (int64_t rank = 0; rank < 3; ++rank) {
    options.rank = rank;
    std::vector<std::string> mine = flat(allBatches(options));
    EXPECT_EQ(mine, numbered(static_cast<int>(rank), 35, 3));
    seen.insert(mine.begin(), mine.end());
  }
  std::vector<std::string> all = numbered(0, 35);
  EXPECT_EQ(seen, std::multiset<std::string>(all.begin(), all.end()));
}

TEST(DatasetTest, ShufflingIsAPermutationFixedByTheSeed) {
  TemporaryDirectory dir;
  DatasetOptions options;
  options.files = writeFiles(dir);
  options.shuffleBuffer = 64; // holds the whole epoch
  options.seed = 7;
  std::vector<std::string> first = flat(allBatches(options));
  EXPECT_EQ(flat(allBatches(options)), first);
  std::vector<std::string> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> all = numbered(0, 35);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(sorted, all);
  EXPECT_NE(first, numbered(0, 35));
  options.seed = 8;
  EXPECT_NE(flat(allBatches(options)), first);
  // With a buffer of 4, record i is read only once i - 3 records have
  // come out, so it comes out at a position of at least i - 3.
  options.shuffleBuffer = 4;
  std::vector<std::string> local = flat(allBatches(options));
  for (size_t position = 0; position < local.size(); ++position) {
    int number = std::stoi(local[position].substr(1));
    EXPECT_LE(number, static_cast<int>(position) + 3) << position;
  }
}

TEST(DatasetTest, PrefetchingGivesTheSameBatches) {
  TemporaryDirectory dir;
  DatasetOptions options;
  options.files = writeFiles(dir);
  options.batchSize = 4;
  options.shuffleBuffer = 10;
  options.seed = 3;
  auto expected = allBatches(options);
  for (int64_t depth : {1, 2, 16}) {
    options.prefetch = depth;
    EXPECT_EQ(allBatches(options), expected) << depth;
  }
  // A dataset dropped while its thread is ahead stops cleanly.
  RecordDataset dataset;
  std::string error;
  ASSERT_TRUE(dataset.open(options, error));
  std::vector<std::string> batch;
  ASSERT_TRUE(dataset.next(batch, error));
}

TEST(DatasetTest, FailuresAndBadOptionsAreReported) {
  TemporaryDirectory dir;
  DatasetOptions options;
  options.files = writeFiles(dir);
  std::vector<uint8_t> bytes = kiln::test::readFile(options.files[0]);
  // Records 0-9 take 18 bytes each ("rN" framed); record 5's data
  // starts 12 bytes into it.
  bytes[5 * 18 + 12] ^= 1;
  kiln::test::writeFile(options.files[0], bytes);
  for (int64_t depth : {0, 2}) {
    options.prefetch = depth;
    options.batchSize = 2;
    std::string failure;
    auto batches = allBatches(options, &failure);
    EXPECT_EQ(batches.size(), 2u) << depth; // records 0-3
    EXPECT_NE(failure.find("a.tfrecord: record 5 at byte 90: the data's CRC "
                           "does not match"),
              std::string::npos)
        << failure;
  }
  options.files.push_back(dir.file("missing.tfrecord"));
  RecordDataset dataset;
  std::string error;
  DatasetOptions bad = options;
  bad.files.clear();
  EXPECT_FALSE(dataset.open(bad, error));
  EXPECT_EQ(error, "a dataset needs at least one file");
  bad = options;
  bad.rank = 2;
  bad.ranks = 2;
  EXPECT_FALSE(dataset.open(bad, error));
  EXPECT_EQ(error, "rank 2 is not one of 2 ranks");
  bad = options;
  bad.batchSize = 0;
  EXPECT_FALSE(dataset.open(bad, error));
  EXPECT_EQ(error, "the batch size must be at least 1, not 0");
}

/// With skipDamaged, a record whose data's CRC fails is passed over and a
/// broken framing loses the rest of its file; each is counted once, by the
/// rank at whose position it falls, and the other records still arrive.
TEST(DatasetTest, DamagedRecordsAreSkippedAndCounted) {
  TemporaryDirectory dir;
  std::vector<std::string> files = writeFiles(dir);
  std::vector<uint8_t> bytes = kiln::test::readFile(files[0]);
  // Records 0-9 take 18 bytes each, 10-19 19: record 5's data damaged,
  // record 12's length CRC damaged (records 12-19 lost).
  bytes[5 * 18 + 12] ^= 1;
  bytes[10 * 18 + 2 * 19 + 9] ^= 1;
  kiln::test::writeFile(files[0], bytes);
  std::vector<std::string> want = numbered(0, 5);
  for (const std::string &r : numbered(6, 12))
    want.push_back(r);
  for (const std::string &r : numbered(20, 35))
    want.push_back(r);
  for (int64_t ranks : {1, 2, 3}) {
    std::vector<std::string> got;
    int64_t skipped = 0;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      for (int64_t depth : {0, 2}) {
        DatasetOptions options;
        options.files = files;
        options.batchSize = 4;
        options.skipDamaged = true;
        options.prefetch = depth;
        options.rank = rank;
        options.ranks = ranks;
        RecordDataset dataset;
        std::string error;
        ASSERT_TRUE(dataset.open(options, error)) << error;
        std::vector<std::string> batch, records;
        while (dataset.next(batch, error))
          records.insert(records.end(), batch.begin(), batch.end());
        EXPECT_EQ(error, "");
        SkippedRecords counted = dataset.skipped();
        if (depth == 0) {
          got.insert(got.end(), records.begin(), records.end());
          skipped += counted.count;
        }
        // Record 5 is rank 5 % ranks's, the lost tail record 12's.
        int64_t mine = (5 % ranks == rank) + (12 % ranks == rank);
        EXPECT_EQ(counted.count, mine) << ranks << " " << rank;
        if (12 % ranks == rank)
          EXPECT_NE(counted.last.find("a.tfrecord: record 12 at byte 218: "
                                      "the length's CRC does not match"),
                    std::string::npos)
              << counted.last;
        else if (5 % ranks == rank)
          EXPECT_NE(counted.last.find("record 5 at byte 90: the data's CRC"),
                    std::string::npos)
              << counted.last;
      }
    }
    std::sort(got.begin(), got.end());
    std::vector<std::string> sorted = want;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(got, sorted) << ranks;
    EXPECT_EQ(skipped, 2) << ranks;
  }
}
