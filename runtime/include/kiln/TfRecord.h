//===- TfRecord.h - Reading and writing TFRecord files ----------*- C++ -*-===//
//
// TFRecord is the record file of TensorFlow's input pipelines (tf.data,
// tf.io.TFRecordWriter) and of the tools around them: a sequence of records,
// each framed as
//
//   uint64 length (little endian)
//   uint32 masked CRC32C of the 8 length bytes
//   length bytes of data
//   uint32 masked CRC32C of the data
//
// where masking rotates the CRC right by 15 bits and adds 0xa282ead8. A
// file may be compressed as a whole, as a gzip or a zlib stream (TF's
// "GZIP" and "ZLIB" options). The reader checks both CRCs of every record
// and names the file, the record's number and its byte offset in the
// uncompressed stream when something is wrong. Part of the runtime's
// layer: no LLVM, only zlib.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TFRECORD_H
#define KILN_TFRECORD_H

#include "kiln/Crc32c.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {
namespace data {

using kiln::crc32c;
using kiln::crc32cPortable;

/// TFRecord's masking of a CRC stored next to the data it covers.
inline uint32_t maskCrc(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// How a whole TFRecord file is compressed.
enum class Compression {
  None,
  /// A gzip stream (TF's "GZIP").
  Gzip,
  /// A zlib stream (TF's "ZLIB").
  Zlib,
};

/// The compression a file name's extension suggests: ".gz" and ".gzip"
/// Gzip, ".zlib" and ".zz" Zlib, anything else None.
Compression compressionForPath(std::string_view path);

/// Where a reader's bytes come from and a writer's go (TfRecord.cpp).
class RecordSource;
class RecordSink;

/// Reads the records of one TFRecord file in order.
class TfRecordReader {
public:
  TfRecordReader();
  ~TfRecordReader();
  TfRecordReader(const TfRecordReader &) = delete;
  TfRecordReader &operator=(const TfRecordReader &) = delete;

  /// Opens `path`; false with a message naming it. A Gzip or Zlib reader
  /// takes either stream (the header tells them apart).
  bool open(const std::string &path, Compression compression,
            std::string &error);
  /// Reads uncompressed records from `bytes`, named `name` in messages.
  void openMemory(std::string bytes, std::string name);

  /// Sets `record` to the next record and returns true; returns false at
  /// the end of the file (with `error` empty) or on a malformed record or
  /// stream (with `error` naming the file, the record's number from 0 and
  /// its offset). The reader stays at the failure after an error.
  bool next(std::string &record, std::string &error);

  /// The records read so far.
  uint64_t recordsRead() const { return records; }

  /// After next() failed on a record whose framing was intact (its data's
  /// CRC did not match), moves past that record, so that next() reads the
  /// one after it, and returns true. False after a failure that broke the
  /// framing (the length's CRC, a truncated record, a damaged stream):
  /// nothing more of the file can be read.
  bool skipDamagedRecord();

private:
  std::unique_ptr<RecordSource> source;
  std::string name;
  uint64_t records = 0;
  uint64_t offset = 0;
  std::string failure;
  /// The length of the record whose data's CRC failed, while next() stays
  /// at that failure.
  std::optional<uint64_t> damagedLength;
};

/// Writes records to a TFRecord file.
class TfRecordWriter {
public:
  TfRecordWriter();
  ~TfRecordWriter();
  TfRecordWriter(const TfRecordWriter &) = delete;
  TfRecordWriter &operator=(const TfRecordWriter &) = delete;

  /// Creates (or truncates) `path`; false with a message naming it.
  bool open(const std::string &path, Compression compression,
            std::string &error);
  /// Appends one record.
  bool write(std::string_view record, std::string &error);
  /// Finishes the stream and closes the file; the destructor closes an
  /// open file too, ignoring failures.
  bool close(std::string &error);

private:
  std::unique_ptr<RecordSink> sink;
  std::string name;
};

/// The framed bytes of `record` (length, masked CRCs) as a TFRecord file
/// holds them uncompressed.
std::string frameRecord(std::string_view record);

} // namespace data
} // namespace kiln

#endif // KILN_TFRECORD_H
