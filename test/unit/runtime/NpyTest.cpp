//===- NpyTest.cpp - Tests of the .npy reader and writer -------------------===//

#include "TestSupport.h"

#include "kiln/Npy.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::npy;

namespace {

/// A .npy image with the given version and header text; the header is
/// padded as numpy pads it unless \p pad is false.
std::vector<uint8_t> npyImage(const std::string &header,
                              const std::vector<uint8_t> &data,
                              unsigned major = 1, bool pad = true) {
  std::string text = header;
  size_t prefix = major == 1 ? 10 : 12;
  if (pad) {
    text.append(64 - (prefix + text.size() + 1) % 64, ' ');
    text += '\n';
  }
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y',
                                static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes.push_back(static_cast<uint8_t>(text.size() >> (8 * i)));
  bytes.insert(bytes.end(), text.begin(), text.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  Array array;
  std::string error;
  EXPECT_FALSE(parseNpy(bytes.data(), bytes.size(), array, error));
  return error;
}

std::string headerError(const std::string &header,
                        const std::vector<uint8_t> &data = {}) {
  return parseError(npyImage(header, data));
}

template <typename T> std::vector<uint8_t> bytesOf(std::vector<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(NpyTest, RoundTripsEveryTypeAndRank) {
  // Every element type numpy has: all but bf16.
  std::vector<ElementType> types;
  for (const kiln::ElementTypeInfo &info : kiln::kElementTypes)
    if (*info.npyDescriptor != '\0')
      types.push_back(info.type);
  ASSERT_EQ(types.size(), 12u);
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {5}, {2, 3}, {2, 1, 4}, {0}, {3, 0, 2}};
  for (ElementType type : types) {
    for (const auto &shape : shapes) {
      Array array;
      array.type = type;
      array.shape = shape;
      array.data.resize(array.elementCount() * elementSize(type));
      for (size_t i = 0; i < array.data.size(); ++i)
        array.data[i] = type == ElementType::I1
                            ? static_cast<uint8_t>(i % 2)
                            : static_cast<uint8_t>(i * 37 + 11);
      std::vector<uint8_t> bytes;
      std::string error;
      ASSERT_TRUE(writeNpy(array, bytes, error)) << error;
      // The data starts at a 64-byte boundary, after a newline.
      size_t dataStart = bytes.size() - array.data.size();
      EXPECT_EQ(dataStart % 64, 0u);
      EXPECT_EQ(bytes[dataStart - 1], '\n');

      Array read;
      ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), read, error))
          << descriptor(type) << ": " << error;
      EXPECT_EQ(read.type, type);
      EXPECT_EQ(read.shape, shape);
      EXPECT_EQ(read.data, array.data);
    }
  }
}

TEST(NpyTest, WritesNumpysHeader) {
  Array array;
  array.type = ElementType::F32;
  array.shape = {2, 3};
  array.data = bytesOf(std::vector<float>{1, 2, 3, 4, 5, 6});
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(writeNpy(array, bytes, error)) << error;
  std::vector<uint8_t> expected = npyImage(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", array.data);
  EXPECT_EQ(bytes, expected);

  array.shape = {6};
  ASSERT_TRUE(writeNpy(array, bytes, error));
  std::string text(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_EQ(text.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(6,), }   ",
                       0),
            0u)
      << text;
}

TEST(NpyTest, ReadsFilesAsNumpyWritesThem) {
  // Version 1.0, 2.0, double quotes, Python 2 long suffixes, no padding.
  std::vector<uint8_t> data = bytesOf(std::vector<int64_t>{7, -8});
  const std::vector<std::vector<uint8_t>> images = {
      npyImage("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
               data),
      npyImage("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
               data, 2),
      npyImage("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (2L,)}",
               data, 1, false),
      npyImage("{'shape':(2,),'fortran_order':False,'descr':'=i8'}", data),
  };
  for (const std::vector<uint8_t> &image : images) {
    Array array;
    std::string error;
    ASSERT_TRUE(parseNpy(image.data(), image.size(), array, error)) << error;
    EXPECT_EQ(array.type, ElementType::I64);
    EXPECT_EQ(array.shape, std::vector<int64_t>{2});
    EXPECT_EQ(array.data, data);
  }
}

TEST(NpyTest, NormalizesBooleans) {
  std::vector<uint8_t> image = npyImage(
      "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", {0, 7, 1});
  Array array;
  std::string error;
  ASSERT_TRUE(parseNpy(image.data(), image.size(), array, error)) << error;
  EXPECT_EQ(array.data, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(NpyTest, RejectsBadMagicAndVersions) {
  EXPECT_EQ(parseError({}), "not a .npy file (bad magic)");
  std::vector<uint8_t> image = npyImage(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", {0, 0, 0, 0});
  std::vector<uint8_t> damaged = image;
  damaged[1] = 'n';
  EXPECT_EQ(parseError(damaged), "not a .npy file (bad magic)");
  damaged = image;
  damaged[6] = 3;
  EXPECT_EQ(parseError(damaged),
            "unsupported .npy format version 3.0 (supported: 1.0, 2.0)");
  damaged = image;
  damaged[7] = 1;
  EXPECT_EQ(parseError(damaged),
            "unsupported .npy format version 1.1 (supported: 1.0, 2.0)");
}

TEST(NpyTest, RejectsTruncation) {
  std::vector<uint8_t> image = npyImage(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
      bytesOf(std::vector<float>{1, 2}));
  EXPECT_EQ(parseError(std::vector<uint8_t>(image.begin(), image.begin() + 9)),
            "truncated .npy file: it ends inside the header length");
  EXPECT_EQ(parseError(std::vector<uint8_t>(image.begin(), image.begin() + 40)),
            "truncated .npy file: the header is 118 bytes but only 30 follow");
  EXPECT_EQ(
      parseError(std::vector<uint8_t>(image.begin(), image.end() - 1)),
      "truncated .npy file: the data is 7 bytes but the shape needs 8");
  for (size_t length = 0; length < image.size(); ++length)
    EXPECT_FALSE(
        parseError(std::vector<uint8_t>(image.begin(), image.begin() + length))
            .empty());
  std::vector<uint8_t> longer = image;
  longer.push_back(0);
  EXPECT_EQ(parseError(longer),
            ".npy file has 1 unexpected bytes after the array data");
}

TEST(NpyTest, RejectsUnsupportedArrays) {
  EXPECT_EQ(headerError("{'descr': '<f4', 'fortran_order': True, 'shape': "
                        "(1,), }",
                        {0, 0, 0, 0}),
            "Fortran-order arrays (fortran_order: True) are not supported");
  EXPECT_EQ(headerError("{'descr': '>f4', 'fortran_order': False, 'shape': "
                        "(1,), }",
                        {0, 0, 0, 0}),
            "big-endian data ('>f4') is not supported");
  EXPECT_EQ(headerError("{'descr': '<c8', 'fortran_order': False, 'shape': "
                        "(1,), }",
                        {0, 0, 0, 0, 0, 0, 0, 0}),
            "unsupported dtype '<c8' (supported: <f4, <f8, |b1, <i4, <i8, "
            "<f2, |i1, <i2, |u1, <u2, <u4, <u8)");
  EXPECT_EQ(headerError("{'descr': '|f4', 'fortran_order': False, 'shape': "
                        "(1,), }",
                        {0, 0, 0, 0}),
            "unsupported dtype '|f4' (supported: <f4, <f8, |b1, <i4, <i8, "
            "<f2, |i1, <i2, |u1, <u2, <u4, <u8)");
  EXPECT_EQ(
      headerError("{'descr': [('a', '<f4')], 'fortran_order': False, "
                  "'shape': (1,), }"),
      "bad header: 'descr' must be a quoted string (structured dtypes are not "
      "supported) (at offset 10 of the header dict)");
}

TEST(NpyTest, ReadsUntypedBytesOnlyAsTheTypeTheCallerNames) {
  // numpy's own header for an ml_dtypes.bfloat16 array of [0.5, -2, 1/3].
  std::vector<uint8_t> bits = bytesOf<uint16_t>({0x3F00, 0xC000, 0x3EAB});
  for (const char *descr : {"<V2", "|V2", "=V2"}) {
    std::vector<uint8_t> image =
        npyImage(std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (3,), }",
                 bits);
    EXPECT_EQ(parseError(image),
              std::string("untyped dtype '") + descr +
                  "' (how numpy saves a dtype it does not define, such as "
                  "ml_dtypes.bfloat16) is not supported here");
    ReadOptions options;
    options.untypedAs = ElementType::BF16;
    Array array;
    std::string error;
    ASSERT_TRUE(parseNpy(image.data(), image.size(), array, error, options))
        << error;
    EXPECT_EQ(array.type, ElementType::BF16);
    EXPECT_EQ(array.shape, std::vector<int64_t>{3});
    EXPECT_EQ(array.data, bits);
  }
  ReadOptions options;
  options.untypedAs = ElementType::BF16;
  for (const char *descr : {"<V4", "<V02", "<V", ">V2", "<V2x"}) {
    std::vector<uint8_t> image =
        npyImage(std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (1,), }",
                 {0, 0, 0, 0});
    Array array;
    std::string error;
    EXPECT_FALSE(parseNpy(image.data(), image.size(), array, error, options))
        << descr;
    EXPECT_FALSE(error.empty());
  }
  std::vector<uint8_t> wide = npyImage(
      "{'descr': '<V4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0});
  Array array;
  std::string error;
  EXPECT_FALSE(parseNpy(wide.data(), wide.size(), array, error, options));
  EXPECT_EQ(error, "untyped dtype '<V4' has 4-byte elements, but bf16 has 2");
  // Typed files read as before with the option given.
  std::vector<uint8_t> typed = npyImage(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0});
  ASSERT_TRUE(parseNpy(typed.data(), typed.size(), array, error, options));
  EXPECT_EQ(array.type, ElementType::F32);
}

TEST(NpyTest, RejectsMalformedHeaders) {
  struct Case {
    const char *header;
    const char *problem;
  } cases[] = {
      {"[1, 2]", "the header is not a dict literal"},
      {"{'descr': '<f4', 'shape': (1,), }", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (1,), }", "missing key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': (1,)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
       "'fortran_order' must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",
       "'shape' must be a tuple; a one-element tuple needs a trailing comma"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       "'shape' has a negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}",
       "expected ',' or ')' in 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
       "'shape' must be a tuple of non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "a dimension of 'shape' is too large"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
       "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
       "unexpected text after the dict"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}",
       "'descr' must be a quoted string (structured dtypes are not "
       "supported)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
       "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 7: 1}",
       "expected a quoted key"},
  };
  for (const Case &c : cases) {
    std::string error = headerError(c.header, {0, 0, 0, 0});
    EXPECT_EQ(error.rfind(std::string("bad header: ") + c.problem, 0), 0u)
        << c.header << " -> " << error;
  }
}

TEST(NpyTest, RejectsOverflowingShapes) {
  std::string error = headerError(
      "{'descr': '<f8', 'fortran_order': False, 'shape': "
      "(4294967296, 4294967296, 4294967296)}");
  EXPECT_EQ(error, "bad header: the size of shape overflows");
}

TEST(NpyTest, RejectsNulInHeader) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': ()}";
  header[1] = '\0';
  EXPECT_EQ(headerError(header), "bad header: it contains a NUL character");
}

TEST(NpyTest, WriterRejectsInconsistentArrays) {
  Array array;
  array.type = ElementType::I32;
  array.shape = {3};
  array.data.resize(8);
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(writeNpy(array, bytes, error));
  EXPECT_EQ(error, "cannot write .npy: the data is 8 bytes but the shape "
                   "needs 12");
  array.shape = {-3};
  EXPECT_FALSE(writeNpy(array, bytes, error));
  EXPECT_EQ(error, "cannot write .npy: negative dimension -3 (axis 0)");
  // numpy has no bf16; a writer must not invent a descriptor for it.
  array.type = ElementType::BF16;
  array.shape = {2};
  array.data.resize(4);
  EXPECT_FALSE(writeNpy(array, bytes, error));
  EXPECT_EQ(error, "cannot write .npy: numpy has no element type bf16");
}

TEST(NpyTest, FilesRoundTripAndReportPaths) {
  test::TemporaryDirectory directory;
  Array array;
  array.type = ElementType::F64;
  array.shape = {2};
  array.data = bytesOf(std::vector<double>{0.1, -2.5});
  std::string path = directory.file("a.npy"), error;
  ASSERT_TRUE(writeNpyFile(path, array, error)) << error;
  Array read;
  ASSERT_TRUE(readNpyFile(path, read, error)) << error;
  EXPECT_EQ(read.data, array.data);

  std::string missing = directory.file("missing.npy");
  EXPECT_FALSE(readNpyFile(missing, read, error));
  EXPECT_EQ(error,
            "cannot open '" + missing + "': No such file or directory");
  test::writeFile(path, {1, 2, 3});
  EXPECT_FALSE(readNpyFile(path, read, error));
  EXPECT_EQ(error, "'" + path + "': not a .npy file (bad magic)");
  EXPECT_FALSE(writeNpyFile(directory.file("no/such/dir.npy"), array, error));
  EXPECT_NE(error.find("cannot create"), std::string::npos);
}

} // namespace
