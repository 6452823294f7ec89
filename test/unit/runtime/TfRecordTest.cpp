//===- TfRecordTest.cpp - TFRecord files (kiln/TfRecord.h) ----------------===//
//
// The CRC32C against RFC 3720's test vectors and the common check value;
// the framing of a record byte for byte; round trips of records of many
// sizes through plain, gzip and zlib files; compressed files made by gzip
// and Python's zlib (independent compressors) read, and the writer's gzip
// read back by gzip; and every kind of damage reported with the file, the
// record and the offset.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kiln/TfRecord.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace kiln::data;
using kiln::test::TemporaryDirectory;

namespace {

std::string bytesOf(const std::vector<uint8_t> &bytes) {
  return std::string(bytes.begin(), bytes.end());
}

/// Records of sizes 0, 1, ..., around the reader's 1 MiB chunk, with
/// varied contents.
std::vector<std::string> sampleRecords() {
  std::vector<std::string> records;
  for (size_t size : {size_t(0), size_t(1), size_t(7), size_t(4096),
                      size_t(1) << 20, (size_t(1) << 20) + 3}) {
    std::string record(size, '\0');
    for (size_t i = 0; i < size; ++i)
      record[i] = static_cast<char>((i * 131 + size) % 251);
    records.push_back(record);
  }
  return records;
}

std::vector<std::string> readAll(TfRecordReader &reader, std::string &error) {
  std::vector<std::string> records;
  std::string record;
  while (reader.next(record, error))
    records.push_back(record);
  return records;
}

void writeAll(const std::string &path, Compression compression,
              const std::vector<std::string> &records) {
  TfRecordWriter writer;
  std::string error;
  ASSERT_TRUE(writer.open(path, compression, error)) << error;
  for (const std::string &record : records)
    ASSERT_TRUE(writer.write(record, error)) << error;
  ASSERT_TRUE(writer.close(error)) << error;
}

bool haveCommand(const char *check) { return std::system(check) == 0; }

} // namespace

TEST(TfRecordTest, Crc32cMatchesTheStandardVectors) {
  // RFC 3720, B.4.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62a8ab43u);
  EXPECT_EQ(crc32c(up.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32c(down.data(), 32), 0x113fdb5cu);
  // The CRC-32C catalogue's check value, and continuing a CRC.
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xe3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
  // The table gives what the instruction gives, on every length and
  // alignment.
  EXPECT_EQ(crc32cPortable(up.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32cPortable("6789", 4, crc32cPortable("12345", 5)),
            0xe3069283u);
  std::string text(1000, '\0');
  for (size_t i = 0; i < text.size(); ++i)
    text[i] = static_cast<char>(i * 7 + 3);
  for (size_t start : {0, 1, 3, 7})
    for (size_t size : {0, 1, 5, 8, 9, 63, 64, 65, 500})
      EXPECT_EQ(crc32c(text.data() + start, size),
                crc32cPortable(text.data() + start, size));
}

TEST(TfRecordTest, ARecordIsFramedAsTensorFlowFramesIt) {
  // length 5, little endian; the masked CRCs: rotate right by 15, add
  // 0xa282ead8.
  std::string framed = frameRecord("hello");
  ASSERT_EQ(framed.size(), 21u);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x05\0\0\0\0\0\0\0", 8));
  auto little = [&](size_t at) {
    return uint32_t(uint8_t(framed[at])) | uint32_t(uint8_t(framed[at + 1])) << 8 |
           uint32_t(uint8_t(framed[at + 2])) << 16 |
           uint32_t(uint8_t(framed[at + 3])) << 24;
  };
  uint32_t lengthCrc = crc32c(framed.data(), 8);
  EXPECT_EQ(little(8), ((lengthCrc >> 15) | (lengthCrc << 17)) + 0xa282ead8u);
  EXPECT_EQ(framed.substr(12, 5), "hello");
  uint32_t dataCrc = crc32c("hello", 5);
  EXPECT_EQ(little(17), ((dataCrc >> 15) | (dataCrc << 17)) + 0xa282ead8u);
  EXPECT_EQ(maskCrc(0), 0xa282ead8u);
}

TEST(TfRecordTest, RecordsRoundTripPlainGzipAndZlib) {
  TemporaryDirectory dir;
  std::vector<std::string> records = sampleRecords();
  for (auto [name, compression] :
       {std::pair<const char *, Compression>{"plain.tfrecord",
                                             Compression::None},
        {"records.tfrecord.gz", Compression::Gzip},
        {"records.tfrecord.zlib", Compression::Zlib}}) {
    std::string path = dir.file(name);
    writeAll(path, compression, records);
    EXPECT_EQ(compressionForPath(path), compression);
    TfRecordReader reader;
    std::string error;
    ASSERT_TRUE(reader.open(path, compression, error)) << error;
    EXPECT_EQ(readAll(reader, error), records) << name;
    EXPECT_EQ(error, "") << name;
    EXPECT_EQ(reader.recordsRead(), records.size());
    // At the end it stays at the end.
    std::string record;
    EXPECT_FALSE(reader.next(record, error));
    EXPECT_EQ(error, "");
  }
  // The plain file is the records framed one after another.
  std::string expected;
  for (const std::string &record : records)
    expected += frameRecord(record);
  EXPECT_EQ(bytesOf(kiln::test::readFile(dir.file("plain.tfrecord"))),
            expected);
}

TEST(TfRecordTest, FilesCompressedByOtherToolsAreRead) {
  if (!haveCommand("gzip --version >/dev/null 2>&1") ||
      !haveCommand("python3 -c 'import zlib' >/dev/null 2>&1"))
    GTEST_SKIP() << "needs gzip and python3 on PATH";
  TemporaryDirectory dir;
  std::vector<std::string> records = sampleRecords();
  std::string plain = dir.file("plain.tfrecord");
  writeAll(plain, Compression::None, records);
  ASSERT_EQ(std::system(("gzip -c '" + plain + "' > '" + plain + ".gz'").c_str()),
            0);
  ASSERT_EQ(std::system(("python3 -c 'import sys, zlib; "
                         "open(sys.argv[2], \"wb\").write(zlib.compress("
                         "open(sys.argv[1], \"rb\").read(), 9))' '" +
                         plain + "' '" + plain + ".zlib'")
                            .c_str()),
            0);
  for (auto [suffix, compression] :
       {std::pair<const char *, Compression>{".gz", Compression::Gzip},
        {".zlib", Compression::Zlib}}) {
    TfRecordReader reader;
    std::string error;
    ASSERT_TRUE(reader.open(plain + suffix, compression, error)) << error;
    EXPECT_EQ(readAll(reader, error), records) << suffix;
    EXPECT_EQ(error, "") << suffix;
  }
  // And the writer's gzip is gzip's.
  std::string ours = dir.file("ours.tfrecord.gz");
  writeAll(ours, Compression::Gzip, records);
  ASSERT_EQ(std::system(("gzip -dc '" + ours + "' > '" + ours + ".out'").c_str()),
            0);
  EXPECT_EQ(kiln::test::readFile(ours + ".out"), kiln::test::readFile(plain));
}

/// The error of reading `bytes` as a TFRecord file named "damaged", after
/// the records before the damage.
std::string damageError(const std::string &bytes, size_t expectRecords) {
  TfRecordReader reader;
  reader.openMemory(bytes, "damaged");
  std::string error;
  std::vector<std::string> records = readAll(reader, error);
  EXPECT_EQ(records.size(), expectRecords);
  // The reader stays at the failure.
  std::string record, again;
  EXPECT_FALSE(reader.next(record, again));
  EXPECT_EQ(again, error);
  return error;
}

TEST(TfRecordTest, DamageIsReportedWithTheFileRecordAndOffset) {
  std::string good = frameRecord("first") + frameRecord("second");
  size_t at = good.size(); // where the third record starts
  std::string third = frameRecord("third!");

  std::string flippedLength = good + third;
  flippedLength[at + 1] ^= 1;
  EXPECT_EQ(damageError(flippedLength, 2).rfind(
                "damaged: record 2 at byte " + std::to_string(at) +
                    ": the length's CRC does not match (stored 0x",
                0),
            0u);

  std::string flippedData = good + third;
  flippedData[at + 14] ^= 0x40;
  EXPECT_NE(damageError(flippedData, 2).find(
                "record 2 at byte " + std::to_string(at) +
                ": the data's CRC does not match"),
            std::string::npos);

  EXPECT_NE(damageError(good + third.substr(0, 5), 2)
                .find("record 2 at byte " + std::to_string(at) +
                      ": truncated record header (5 of 12 bytes)"),
            std::string::npos);
  EXPECT_NE(damageError(good + third.substr(0, 15), 2)
                .find("truncated record: its length is 6 bytes but only 3 "
                      "follow"),
            std::string::npos);
  EXPECT_NE(damageError(good + third.substr(0, third.size() - 2), 2)
                .find("truncated record: its data's CRC is missing"),
            std::string::npos);

  // A length whose CRC matches but that the file does not hold: read as
  // it arrives, never allocated up front.
  std::string huge(8, '\0');
  huge[7] = 0x10; // 2^60 bytes
  uint32_t crc = maskCrc(crc32c(huge.data(), 8));
  for (int i = 0; i < 4; ++i)
    huge.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  huge += "abc";
  EXPECT_NE(damageError(huge, 0).find("its length is 1152921504606846976 "
                                      "bytes but only 3 follow"),
            std::string::npos);
}

TEST(TfRecordTest, BadFilesAndStreamsAreClearErrors) {
  TemporaryDirectory dir;
  TfRecordReader reader;
  std::string error;
  EXPECT_FALSE(reader.open(dir.file("missing.tfrecord"), Compression::None,
                           error));
  EXPECT_NE(error.find("cannot open '" + dir.file("missing.tfrecord") + "'"),
            std::string::npos)
      << error;

  // Not a gzip stream at all, and one cut short.
  std::string notGzip = dir.file("plain-named.gz");
  writeAll(notGzip, Compression::None, {"abc"});
  ASSERT_TRUE(reader.open(notGzip, Compression::Gzip, error)) << error;
  std::string record;
  EXPECT_FALSE(reader.next(record, error));
  EXPECT_NE(error.find(notGzip + ": record 0 at byte 0: corrupt compressed "
                       "stream (zlib: "),
            std::string::npos)
      << error;

  std::string cut = dir.file("cut.tfrecord.gz");
  writeAll(cut, Compression::Gzip, sampleRecords());
  std::vector<uint8_t> bytes = kiln::test::readFile(cut);
  bytes.resize(bytes.size() / 2);
  kiln::test::writeFile(cut, bytes);
  ASSERT_TRUE(reader.open(cut, Compression::Gzip, error)) << error;
  readAll(reader, error);
  EXPECT_NE(error.find("the compressed stream is truncated"),
            std::string::npos)
      << error;

  TfRecordWriter writer;
  EXPECT_FALSE(writer.open(dir.file("no/such/dir/x.tfrecord"),
                           Compression::None, error));
  EXPECT_NE(error.find("cannot create '"), std::string::npos) << error;
  EXPECT_FALSE(writer.write("x", error));
  EXPECT_EQ(error, "no TFRecord file is open for writing");
}
