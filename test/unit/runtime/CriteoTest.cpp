//===- CriteoTest.cpp - Criteo click logs (kiln/Criteo.h) -----------------===//
//
// The first line of the Kaggle challenge's train.txt (as published with
// the dataset's description), batches over a file, and malformed lines.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kiln/Criteo.h"

#include <gtest/gtest.h>

using namespace kiln::data;
using kiln::test::TemporaryDirectory;

namespace {

// The Kaggle train.txt's first line: I12 and C22 are empty.
const char *kFirstLine =
    "0\t1\t1\t5\t0\t1382\t4\t15\t2\t181\t1\t2\t\t2\t68fd1e64\t80e26c9b\t"
    "fb936136\t7b4723c4\t25c83c98\t7e0ccccf\tde7995b8\t1f89b562\ta73ee510\t"
    "a8cd5504\tb2cb9c98\t37c9c164\t2824a5f6\t1adce6ef\t8ba8b39a\t891b62e7\t"
    "e5ba7672\tf54016b9\t21ddcdc9\tb1252a9d\t07b5194c\t\t3a171ecb\tc5c50484\t"
    "e8b83407\t9727dd16";

void writeText(const std::string &path, const std::string &text) {
  kiln::test::writeFile(path, std::vector<uint8_t>(text.begin(), text.end()));
}

} // namespace

TEST(CriteoTest, ALineBecomesALabelCountsAndCategoricalValues) {
  CriteoBatch batch;
  std::string error;
  ASSERT_TRUE(CriteoReader::parseLine(kFirstLine, batch, error)) << error;
  EXPECT_EQ(batch.labels, (std::vector<int64_t>{0}));
  EXPECT_EQ(batch.dense, (std::vector<int64_t>{1, 1, 5, 0, 1382, 4, 15, 2,
                                               181, 1, 2, 0, 2}));
  ASSERT_EQ(batch.sparse.size(), 26u);
  EXPECT_EQ(batch.sparse[0], 0x68fd1e64);
  EXPECT_EQ(batch.sparse[20], 0x07b5194c);
  EXPECT_EQ(batch.sparse[21], -1); // C22 is missing
  EXPECT_EQ(batch.sparse[25], 0x9727dd16);
}

TEST(CriteoTest, FilesReadInBatches) {
  TemporaryDirectory dir;
  std::string line = kFirstLine, text;
  for (int i = 0; i < 5; ++i) {
    std::string copy = line;
    copy[0] = i % 2 ? '1' : '0';
    text += copy + (i == 2 ? "\r\n" : "\n");
  }
  text += "\n"; // a trailing blank line
  writeText(dir.file("day_0"), text);
  CriteoReader reader;
  std::string error;
  ASSERT_TRUE(reader.open(dir.file("day_0"), error)) << error;
  CriteoBatch batch;
  ASSERT_TRUE(reader.next(3, batch, error)) << error;
  EXPECT_EQ(batch.labels, (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(batch.dense.size(), 3u * 13);
  EXPECT_EQ(batch.sparse.size(), 3u * 26);
  ASSERT_TRUE(reader.next(3, batch, error)) << error;
  EXPECT_EQ(batch.labels, (std::vector<int64_t>{1, 0}));
  EXPECT_FALSE(reader.next(3, batch, error));
  EXPECT_EQ(error, "");
}

TEST(CriteoTest, MalformedLinesNameTheLineAndField) {
  auto failure = [](const std::string &line) {
    CriteoBatch batch;
    std::string error;
    EXPECT_FALSE(CriteoReader::parseLine(line, batch, error));
    EXPECT_EQ(batch.size(), 0);
    return error;
  };
  std::string line = kFirstLine;
  EXPECT_EQ(failure("2" + line.substr(1)), "field 0 ('2') is not a 0/1 label");
  EXPECT_EQ(failure(line.substr(0, 2) + "x" + line.substr(3)),
            "field 1 ('x') is not an integer");
  EXPECT_EQ(failure(line.substr(0, line.size() - 8) + "fffffffff"),
            "field 39 ('fffffffff') is not a hexadecimal value of at most 8 "
            "digits");
  EXPECT_EQ(failure(line + "\textra"), "more than 40 fields");
  EXPECT_EQ(failure("1\t2\t3"),
            "3 fields, not 40 (a label, 13 counts and 26 categorical values)");

  TemporaryDirectory dir;
  writeText(dir.file("bad"), line + "\n" + line + "\n1\t2\n");
  CriteoReader reader;
  std::string error;
  ASSERT_TRUE(reader.open(dir.file("bad"), error));
  CriteoBatch batch;
  EXPECT_FALSE(reader.next(10, batch, error));
  EXPECT_EQ(error, dir.file("bad") + ": line 3: 2 fields, not 40 (a label, "
                                     "13 counts and 26 categorical values)");
  EXPECT_FALSE(reader.open(dir.file("missing"), error));
  EXPECT_NE(error.find("cannot open '"), std::string::npos);
}

TEST(CriteoTest, ShardsNumberExamplesOverFilesAndSkipBlankLines) {
  TemporaryDirectory dir;
  // Labels 0 1 1 | 0 1 over two files; rank 1 of 2 reads examples 1 and 3.
  std::string first = kFirstLine, second = first;
  second[0] = '1';
  writeText(dir.file("a"), first + "\n\n" + second + "\n" + second + "\n");
  writeText(dir.file("b"), first + "\n" + second + "\n");
  CriteoReader reader;
  std::string error;
  ASSERT_TRUE(reader.shard(1, 2, error)) << error;
  CriteoBatch batch, all;
  for (const char *name : {"a", "b"}) {
    ASSERT_TRUE(reader.open(dir.file(name), error)) << error;
    while (reader.next(8, batch, error))
      all.labels.insert(all.labels.end(), batch.labels.begin(),
                        batch.labels.end());
    EXPECT_EQ(error, "");
  }
  EXPECT_EQ(all.labels, (std::vector<int64_t>{1, 0}));
  EXPECT_FALSE(reader.shard(2, 2, error));
  EXPECT_EQ(error, "rank 2 is not one of 2 ranks");
}

// A CriteoDataset reads its files in order, a file's last batch shorter,
// and gives the same batches whether a thread parses them ahead or not; a
// malformed line in a later file comes after the batches before it, and
// every call after it repeats it.
TEST(CriteoTest, DatasetPrefetchesTheBatchesOfItsFilesInOrder) {
  TemporaryDirectory dir;
  auto lineWithLabel = [](int i) {
    std::string copy = kFirstLine;
    copy.replace(2, 1, std::to_string(i % 10)); // I1, the example's number
    copy[0] = i % 2 ? '1' : '0';
    return copy + "\n";
  };
  std::string first, second;
  for (int i = 0; i < 5; ++i)
    first += lineWithLabel(i);
  for (int i = 5; i < 9; ++i)
    second += lineWithLabel(i);
  writeText(dir.file("day_0"), first);
  writeText(dir.file("day_1"), second + "1\t2\n");
  for (int64_t prefetch : {0, 1, 3}) {
    CriteoDataset dataset;
    CriteoOptions options;
    options.files = {dir.file("day_0"), dir.file("day_1")};
    options.batchSize = 2;
    options.prefetch = prefetch;
    std::string error;
    ASSERT_TRUE(dataset.open(options, error)) << error;
    std::vector<int64_t> sizes, counts;
    CriteoBatch batch;
    while (dataset.next(batch, error)) {
      sizes.push_back(batch.size());
      for (int64_t row = 0; row < batch.size(); ++row)
        counts.push_back(batch.dense[row * CriteoBatch::kDense]);
    }
    EXPECT_EQ(sizes, (std::vector<int64_t>{2, 2, 1, 2, 2})) << prefetch;
    EXPECT_EQ(counts, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_NE(error.find("day_1: line 5: 2 fields, not 40"), std::string::npos)
        << error;
    std::string again;
    EXPECT_FALSE(dataset.next(batch, again));
    EXPECT_EQ(again, error);
  }
}

// Mistakes are refused when the dataset opens; a dataset dropped with
// batches still queued stops its thread.
TEST(CriteoTest, DatasetRefusesBadOptionsAndStopsWhenDropped) {
  TemporaryDirectory dir;
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += std::string(kFirstLine) + "\n";
  writeText(dir.file("day_0"), text);
  std::string error;
  CriteoDataset dataset;
  CriteoOptions options;
  EXPECT_FALSE(dataset.open(options, error));
  EXPECT_EQ(error, "a Criteo dataset needs at least one file");
  options.files = {dir.file("day_0"), dir.file("missing")};
  EXPECT_FALSE(dataset.open(options, error));
  EXPECT_NE(error.find("cannot open '" + dir.file("missing") + "'"),
            std::string::npos)
      << error;
  options.files = {dir.file("day_0")};
  options.batchSize = 0;
  EXPECT_FALSE(dataset.open(options, error));
  EXPECT_EQ(error, "the batch size must be at least 1, not 0");
  options.batchSize = 1;
  options.ranks = 2;
  options.rank = 2;
  EXPECT_FALSE(dataset.open(options, error));
  EXPECT_EQ(error, "rank 2 is not one of 2 ranks");
  options.rank = 0;
  options.prefetch = -1;
  EXPECT_FALSE(dataset.open(options, error));
  options.prefetch = 4;
  ASSERT_TRUE(dataset.open(options, error)) << error;
  CriteoBatch batch;
  ASSERT_TRUE(dataset.next(batch, error)) << error;
  EXPECT_EQ(batch.size(), 1);
  // Dropped here with the queue full: the destructor joins the thread.
}
