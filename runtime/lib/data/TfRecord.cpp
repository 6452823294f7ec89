//===- TfRecord.cpp - Reading and writing TFRecord files ------------------===//
//
// The record framing of kiln/TfRecord.h over three byte sources (a plain
// file, a gzip or zlib stream through zlib's inflate, bytes in memory) and
// two sinks (a plain file, zlib's deflate). A record's data is read in
// chunks as it arrives, so a corrupt length (which its CRC catches first
// anyway) cannot make the reader allocate more than the file holds.
//
//===----------------------------------------------------------------------===//

#include "kiln/TfRecord.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace kiln {
namespace data {
namespace {

constexpr size_t kChunk = size_t(1) << 20;
constexpr size_t kStreamBuffer = size_t(1) << 16;

uint64_t readLittle64(const unsigned char *p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

uint32_t readLittle32(const unsigned char *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

void writeLittle(uint64_t value, int bytes, std::string &out) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

} // namespace

Compression compressionForPath(std::string_view path) {
  auto endsWith = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.substr(path.size() - suffix.size()) == suffix;
  };
  if (endsWith(".gz") || endsWith(".gzip"))
    return Compression::Gzip;
  if (endsWith(".zlib") || endsWith(".zz"))
    return Compression::Zlib;
  return Compression::None;
}

std::string frameRecord(std::string_view record) {
  std::string framed;
  framed.reserve(record.size() + 16);
  writeLittle(record.size(), 8, framed);
  writeLittle(maskCrc(crc32c(framed.data(), 8)), 4, framed);
  framed.append(record);
  writeLittle(maskCrc(crc32c(record.data(), record.size())), 4, framed);
  return framed;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Bytes of the uncompressed stream, in order.
class RecordSource {
public:
  virtual ~RecordSource() = default;
  /// Up to `size` bytes; fewer only at the end of the stream or on a
  /// failure, which sets `error`.
  virtual size_t read(char *buffer, size_t size, std::string &error) = 0;
};

namespace {

class MemorySource : public RecordSource {
public:
  explicit MemorySource(std::string bytes) : bytes(std::move(bytes)) {}
  size_t read(char *buffer, size_t size, std::string &) override {
    size_t n = std::min(size, bytes.size() - position);
    std::memcpy(buffer, bytes.data() + position, n);
    position += n;
    return n;
  }

private:
  std::string bytes;
  size_t position = 0;
};

class FileSource : public RecordSource {
public:
  explicit FileSource(std::FILE *file) : file(file) {}
  ~FileSource() override { std::fclose(file); }
  size_t read(char *buffer, size_t size, std::string &error) override {
    size_t n = std::fread(buffer, 1, size, file);
    if (n < size && std::ferror(file))
      error = std::string("read error: ") + std::strerror(errno);
    return n;
  }

private:
  std::FILE *file;
};

/// A gzip or zlib stream, told apart by its header (inflate's automatic
/// detection).
class InflateSource : public RecordSource {
public:
  explicit InflateSource(std::FILE *file) : file(file), input(kStreamBuffer) {
    std::memset(&stream, 0, sizeof(stream));
    ready = inflateInit2(&stream, 15 + 32) == Z_OK;
  }
  ~InflateSource() override {
    if (ready)
      inflateEnd(&stream);
    std::fclose(file);
  }
  size_t read(char *buffer, size_t size, std::string &error) override {
    if (!ready) {
      error = "cannot start zlib's inflate";
      return 0;
    }
    stream.next_out = reinterpret_cast<Bytef *>(buffer);
    stream.avail_out = static_cast<uInt>(size);
    while (stream.avail_out && !ended) {
      if (!stream.avail_in) {
        size_t n = std::fread(input.data(), 1, input.size(), file);
        if (n == 0) {
          error = std::ferror(file)
                      ? std::string("read error: ") + std::strerror(errno)
                      : "the compressed stream is truncated";
          break;
        }
        stream.next_in = input.data();
        stream.avail_in = static_cast<uInt>(n);
      }
      int status = inflate(&stream, Z_NO_FLUSH);
      if (status == Z_STREAM_END) {
        ended = true;
      } else if (status != Z_OK) {
        error = std::string("corrupt compressed stream (zlib: ") +
                (stream.msg ? stream.msg : zError(status)) + ")";
        break;
      }
    }
    return size - stream.avail_out;
  }

private:
  std::FILE *file;
  z_stream stream;
  std::vector<Bytef> input;
  bool ready = false;
  bool ended = false;
};

/// Reads `size` bytes unless the stream ends or fails first; the count.
size_t readFully(RecordSource &source, char *buffer, size_t size,
                 std::string &error) {
  size_t got = 0;
  while (got < size && error.empty()) {
    size_t n = source.read(buffer + got, size - got, error);
    if (n == 0)
      break;
    got += n;
  }
  return got;
}

} // namespace

TfRecordReader::TfRecordReader() = default;
TfRecordReader::~TfRecordReader() = default;

bool TfRecordReader::open(const std::string &path, Compression compression,
                          std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  name = path;
  records = offset = 0;
  failure.clear();
  if (compression == Compression::None)
    source = std::make_unique<FileSource>(file);
  else
    source = std::make_unique<InflateSource>(file);
  return true;
}

void TfRecordReader::openMemory(std::string bytes, std::string sourceName) {
  source = std::make_unique<MemorySource>(std::move(bytes));
  name = std::move(sourceName);
  records = offset = 0;
  failure.clear();
}

bool TfRecordReader::skipDamagedRecord() {
  if (!damagedLength)
    return false;
  offset += 16 + *damagedLength;
  ++records;
  failure.clear();
  damagedLength.reset();
  return true;
}

bool TfRecordReader::next(std::string &record, std::string &error) {
  error.clear();
  if (!failure.empty()) {
    error = failure;
    return false;
  }
  if (!source) {
    error = "no TFRecord file is open";
    return false;
  }
  damagedLength.reset();
  auto fail = [&](const std::string &what) {
    failure = name + ": record " + std::to_string(records) + " at byte " +
              std::to_string(offset) + ": " + what;
    error = failure;
    return false;
  };
  std::string readError;
  unsigned char header[12];
  size_t got =
      readFully(*source, reinterpret_cast<char *>(header), 12, readError);
  if (!readError.empty())
    return fail(readError);
  if (got == 0)
    return false;
  if (got < 12)
    return fail("truncated record header (" + std::to_string(got) +
                " of 12 bytes)");
  uint64_t length = readLittle64(header);
  uint32_t stored = readLittle32(header + 8);
  uint32_t computed = maskCrc(crc32c(header, 8));
  if (stored != computed)
    return fail("the length's CRC does not match (stored " + hex(stored) +
                ", computed " + hex(computed) + ")");
  record.clear();
  while (record.size() < length) {
    size_t before = record.size();
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(kChunk, length - record.size()));
    record.resize(before + want);
    size_t n = readFully(*source, record.data() + before, want, readError);
    record.resize(before + n);
    if (!readError.empty())
      return fail(readError);
    if (n < want)
      return fail("truncated record: its length is " +
                  std::to_string(length) + " bytes but only " +
                  std::to_string(record.size()) + " follow");
  }
  unsigned char footer[4];
  got = readFully(*source, reinterpret_cast<char *>(footer), 4, readError);
  if (!readError.empty())
    return fail(readError);
  if (got < 4)
    return fail("truncated record: its data's CRC is missing");
  stored = readLittle32(footer);
  computed = maskCrc(crc32c(record.data(), record.size()));
  if (stored != computed) {
    damagedLength = length;
    return fail("the data's CRC does not match (stored " + hex(stored) +
                ", computed " + hex(computed) + ")");
  }
  offset += 16 + length;
  ++records;
  return true;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

class RecordSink {
public:
  RecordSink(std::FILE *file, Compression compression)
      : file(file), compression(compression), output(kStreamBuffer) {
    std::memset(&stream, 0, sizeof(stream));
    if (compression != Compression::None)
      ready = deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
                           compression == Compression::Gzip ? 15 + 16 : 15, 8,
                           Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~RecordSink() {
    if (ready)
      deflateEnd(&stream);
    if (file)
      std::fclose(file);
  }

  bool write(const char *data, size_t size, std::string &error) {
    if (compression == Compression::None) {
      if (std::fwrite(data, 1, size, file) != size) {
        error = std::string("write error: ") + std::strerror(errno);
        return false;
      }
      return true;
    }
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
    stream.avail_in = static_cast<uInt>(size);
    return pump(Z_NO_FLUSH, error);
  }

  bool finish(std::string &error) {
    bool ok = compression == Compression::None || pump(Z_FINISH, error);
    if (std::fclose(file) != 0 && ok) {
      error = std::string("write error: ") + std::strerror(errno);
      ok = false;
    }
    file = nullptr;
    return ok;
  }

private:
  /// Deflates what is pending and writes it out.
  bool pump(int flush, std::string &error) {
    if (!ready) {
      error = "cannot start zlib's deflate";
      return false;
    }
    int status;
    do {
      stream.next_out = output.data();
      stream.avail_out = static_cast<uInt>(output.size());
      status = deflate(&stream, flush);
      if (status == Z_STREAM_ERROR) {
        error = "zlib's deflate failed";
        return false;
      }
      size_t n = output.size() - stream.avail_out;
      if (std::fwrite(output.data(), 1, n, file) != n) {
        error = std::string("write error: ") + std::strerror(errno);
        return false;
      }
    } while (stream.avail_out == 0 ||
             (flush == Z_FINISH && status != Z_STREAM_END));
    return true;
  }

  std::FILE *file;
  Compression compression;
  z_stream stream;
  std::vector<Bytef> output;
  bool ready = false;
};

TfRecordWriter::TfRecordWriter() = default;
TfRecordWriter::~TfRecordWriter() = default;

bool TfRecordWriter::open(const std::string &path, Compression compression,
                          std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  name = path;
  sink = std::make_unique<RecordSink>(file, compression);
  return true;
}

bool TfRecordWriter::write(std::string_view record, std::string &error) {
  if (!sink) {
    error = "no TFRecord file is open for writing";
    return false;
  }
  std::string framed = frameRecord(record);
  if (!sink->write(framed.data(), framed.size(), error)) {
    error = name + ": " + error;
    return false;
  }
  return true;
}

bool TfRecordWriter::close(std::string &error) {
  if (!sink)
    return true;
  bool ok = sink->finish(error);
  if (!ok)
    error = name + ": " + error;
  sink.reset();
  return ok;
}

} // namespace data
} // namespace kiln
