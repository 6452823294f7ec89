//===- FeatureHashTest.cpp - Categorical features' ids (kiln/FeatureHash.h) ===//
//
// The expected values were printed by TensorFlow 2.21 (tf.fingerprint,
// tf.strings.to_hash_bucket_fast, tf.keras.layers.Hashing and
// tf.sparse.cross_hashed on the same inputs); test_data_tensorflow.py
// compares against TensorFlow itself on random inputs where it is
// installed.
//
//===----------------------------------------------------------------------===//

#include "kiln/FeatureHash.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace kiln::data;

TEST(FeatureHashTest, BucketsAreTensorFlows) {
  EXPECT_EQ(fingerprint64("hello"), 13009744463427800296ull);
  EXPECT_EQ(fingerprint64(""), 11160318154034397263ull);
  EXPECT_EQ(fingerprint64("kiln"), 6052204168370577327ull);
  EXPECT_EQ(hashBucket(std::string_view("hello"), 1000), 296);
  EXPECT_EQ(hashBucket(std::string_view(""), 1000), 263);
  EXPECT_EQ(hashBucket(std::string_view("kiln"), 1000), 327);
  // Integers hash as their decimal text.
  EXPECT_EQ(hashBucket(int64_t{0}, 1000), 735);
  EXPECT_EQ(hashBucket(int64_t{-5}, 1000), 816);
  EXPECT_EQ(hashBucket(int64_t{12345678901234}, 1000), 794);
}

TEST(FeatureHashTest, CrossesAreTensorFlows) {
  // cross_hashed([["a"]], [[7]]): the string by its fingerprint, the int64
  // as it is.
  std::vector<uint64_t> hashes = {fingerprint64("a"), 7};
  EXPECT_EQ(crossHashed(hashes, 0), 3509787333349122856);
  EXPECT_EQ(crossHashed(hashes, 100, 12345), 80);
}

TEST(FeatureHashTest, RaggedCrossesTakeEveryCombination) {
  // Row 0: ["a"] x [7, 8]; row 1: no strings, so no ids; row 2: ["b"] x [9].
  std::vector<uint64_t> strings = {fingerprint64("a"), fingerprint64("b")};
  std::vector<uint64_t> ints = {7, 8, 9};
  std::vector<int64_t> stringRows = {1, 0, 1}, intRows = {2, 0, 1};
  std::vector<CrossedColumn> columns = {{strings.data(), 2, stringRows.data()},
                                        {ints.data(), 3, intRows.data()}};
  std::vector<int64_t> ids, rowLengths;
  std::string error;
  ASSERT_TRUE(crossHashedRows(columns, 3, 0, kDefaultCrossHashKey, ids,
                              rowLengths, error))
      << error;
  EXPECT_EQ(rowLengths, (std::vector<int64_t>{2, 0, 1}));
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], 3509787333349122856);
  EXPECT_EQ(ids[1], crossHashed({fingerprint64("a"), 8}, 0));
  EXPECT_EQ(ids[2], crossHashed({fingerprint64("b"), 9}, 0));

  // Row lengths that would read outside the values are refused.
  std::vector<int64_t> negative = {-1, 0, 3};
  columns[1].rowLengths = negative.data();
  EXPECT_FALSE(crossHashedRows(columns, 3, 0, kDefaultCrossHashKey, ids,
                               rowLengths, error));
  EXPECT_EQ(error, "crossed column 1 has a negative row length (-1 in row 0)");
  std::vector<int64_t> tooFew = {1, 0, 1};
  columns[1].rowLengths = tooFew.data();
  EXPECT_FALSE(crossHashedRows(columns, 3, 0, kDefaultCrossHashKey, ids,
                               rowLengths, error));
  EXPECT_EQ(error, "crossed column 1's row lengths add up to 2, not its 3 "
                   "values");
  EXPECT_FALSE(crossHashedRows({}, 3, 0, kDefaultCrossHashKey, ids,
                               rowLengths, error));
}

TEST(FeatureHashTest, VocabulariesGiveIdsOrBuckets) {
  Vocabulary vocabulary;
  std::string error;
  ASSERT_TRUE(vocabulary.assign({"red", "green", "blue"}, 0, -1, error));
  EXPECT_EQ(vocabulary.lookup("green"), 1);
  EXPECT_EQ(vocabulary.lookup("mauve"), -1);
  EXPECT_EQ(vocabulary.idCount(), 3);
  ASSERT_TRUE(vocabulary.assign({"red", "green", "blue"}, 5, -1, error));
  EXPECT_EQ(vocabulary.lookup("hello"), 3 + 13009744463427800296ull % 5);
  EXPECT_EQ(vocabulary.idCount(), 8);
  EXPECT_FALSE(vocabulary.assign({"a", "b", "a"}, 0, -1, error));
  EXPECT_EQ(error, "the vocabulary repeats 'a' (entries 0 and 2)");
  EXPECT_FALSE(vocabulary.assign({"a"}, -1, -1, error));
}

TEST(FeatureHashTest, VocabularyFilesNameTheirMistakes) {
  std::string path = ::testing::TempDir() + "/kiln-vocabulary.txt";
  {
    std::ofstream out(path);
    out << "red\ngreen\nblue\ngreen\n";
  }
  Vocabulary vocabulary;
  std::string error;
  ASSERT_TRUE(vocabulary.load(path, 3, 0, -1, error)) << error;
  EXPECT_EQ(vocabulary.lookup("blue"), 2);
  EXPECT_FALSE(vocabulary.load(path, -1, 0, -1, error));
  EXPECT_EQ(error, path + ": the vocabulary repeats 'green' (entries 1 and 3) "
                          "(lines are entries + 1)");
  EXPECT_FALSE(vocabulary.load(path, 9, 0, -1, error));
  EXPECT_EQ(error, path + ": the vocabulary file has 4 lines, fewer than the "
                          "9 asked for");
  {
    std::ofstream out(path);
    out << "red\n\nblue\n";
  }
  EXPECT_FALSE(vocabulary.load(path, -1, 0, -1, error));
  EXPECT_EQ(error, path + ": line 2 of the vocabulary file is empty");
  std::remove(path.c_str());
  EXPECT_FALSE(vocabulary.load(path, -1, 0, -1, error));
  EXPECT_EQ(error, path + ": cannot open the vocabulary file");
}
