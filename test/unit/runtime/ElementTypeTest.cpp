//===- ElementTypeTest.cpp - The element type list and its derivations ----===//
//
// Walks kiln/ElementTypes.def and checks that every row reaches each runtime
// layer the same way: the C API, the .kmod schema and module files, and the
// .npy library. A row added to the list but missed by a layer fails here.
//
//===----------------------------------------------------------------------===//

#include "kiln/ElementType.h"
#include "kiln/ModuleFormat.h"
#include "kiln/Npy.h"
#include "kiln/runtime.h"

#include "kmod_generated.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

using namespace kiln;

namespace {

/// The codes are stored in files and used by C hosts: they must never move.
TEST(ElementTypeTest, CodesAreStable) {
  EXPECT_EQ(KILN_DTYPE_F32, 0);
  EXPECT_EQ(KILN_DTYPE_F64, 1);
  EXPECT_EQ(KILN_DTYPE_I1, 2);
  EXPECT_EQ(KILN_DTYPE_I32, 3);
  EXPECT_EQ(KILN_DTYPE_I64, 4);
  EXPECT_EQ(KILN_DTYPE_F16, 5);
  EXPECT_EQ(KILN_DTYPE_BF16, 6);
  EXPECT_GE(kNumElementTypes, 7u);
}

TEST(ElementTypeTest, RowsAreConsistent) {
  std::set<std::string> names, descriptors;
  for (unsigned code = 0; code < kNumElementTypes; ++code) {
    const ElementTypeInfo &info = kElementTypes[code];
    SCOPED_TRACE(info.name);
    EXPECT_EQ(static_cast<unsigned>(info.type), code);
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name";
    EXPECT_GE(info.byteSize * 8, info.bitWidth);
    EXPECT_EQ(info.bitWidth == 1, info.elementClass == ElementClass::Bool);
    EXPECT_EQ(isFloatElementType(info.type),
              info.elementClass == ElementClass::Float);
    EXPECT_EQ(isIntegerElementType(info.type),
              info.elementClass == ElementClass::Integer ||
                  info.elementClass == ElementClass::Unsigned);
    EXPECT_EQ(isUnsignedElementType(info.type),
              info.elementClass == ElementClass::Unsigned);
    // The tracer offers only types the backends compile.
    EXPECT_TRUE(!info.traced || info.compiled);
    EXPECT_EQ(elementTypeNamed(info.name), info.type);
    // Every type reaches .npy, through itself or through a carrier that
    // numpy has.
    std::string descriptor = info.npyDescriptor;
    if (!descriptor.empty()) {
      EXPECT_TRUE(descriptors.insert(descriptor).second)
          << "duplicate descriptor";
      EXPECT_EQ(info.npyCarrier, info.type);
      EXPECT_EQ(elementTypeForNpyDescriptor(descriptor), info.type);
    } else {
      EXPECT_NE(info.npyCarrier, info.type);
      EXPECT_NE(*getElementTypeInfo(info.npyCarrier).npyDescriptor, '\0');
    }
  }
  EXPECT_FALSE(isValidElementType(static_cast<ElementType>(kNumElementTypes)));
  EXPECT_EQ(findElementType(static_cast<ElementType>(kNumElementTypes)),
            nullptr);
  EXPECT_FALSE(elementTypeNamed("u8"));
  EXPECT_FALSE(elementTypeForNpyDescriptor(""));
}

TEST(ElementTypeTest, CApiFollowsTheList) {
  // The enumerators as a C host sees them, against the rows.
#define KILN_DTYPE(NAME, CODE, SPELLING, BYTES, ...)                           \
  EXPECT_EQ(KILN_DTYPE_##NAME, static_cast<int>(ElementType::NAME));           \
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_##NAME), SPELLING);                  \
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_##NAME), size_t{BYTES});
#include "kiln/ElementTypes.def"
  for (const ElementTypeInfo &info : kElementTypes) {
    kiln_dtype_t dtype = static_cast<kiln_dtype_t>(info.type);
    kiln_tensor_t *tensor = nullptr;
    int64_t shape[] = {3};
    ASSERT_EQ(kiln_tensor_create(dtype, 1, shape, nullptr, &tensor), nullptr)
        << info.name;
    EXPECT_EQ(kiln_tensor_dtype(tensor), dtype);
    EXPECT_EQ(kiln_tensor_byte_size(tensor), 3 * info.byteSize);
    kiln_tensor_release(tensor);
  }
  // Values past the list, including ones that would truncate to a valid
  // 8-bit code, are not dtypes.
  for (int value : {static_cast<int>(kNumElementTypes), 256, -1}) {
    kiln_dtype_t dtype = static_cast<kiln_dtype_t>(value);
    EXPECT_STREQ(kiln_dtype_name(dtype), "invalid") << value;
    EXPECT_EQ(kiln_dtype_size(dtype), 0u) << value;
  }
}

TEST(ElementTypeTest, KmodSchemaFollowsTheList) {
#define KILN_DTYPE(NAME, CODE, ...)                                            \
  EXPECT_STREQ(kmod::EnumNameDType(static_cast<kmod::DType>(CODE)), #NAME);
#include "kiln/ElementTypes.def"
  EXPECT_EQ(static_cast<unsigned>(kmod::DType::MAX) + 1, kNumElementTypes);
  for (const ElementTypeInfo &info : kElementTypes) {
    EXPECT_TRUE(format::isValidDType(info.type));
    EXPECT_STREQ(format::dtypeName(info.type), info.name);
    EXPECT_EQ(format::dtypeSize(info.type), info.byteSize);
  }
}

TEST(ElementTypeTest, NpyFollowsTheList) {
  for (const ElementTypeInfo &info : kElementTypes) {
    SCOPED_TRACE(info.name);
    npy::Array array;
    array.type = info.type;
    array.shape = {2};
    array.data.assign(2 * info.byteSize, 1);
    std::vector<uint8_t> bytes;
    std::string error;
    bool written = npy::writeNpy(array, bytes, error);
    EXPECT_EQ(written, *info.npyDescriptor != '\0') << error;
    if (!written)
      continue;
    EXPECT_STREQ(npy::descriptor(info.type), info.npyDescriptor);
    EXPECT_EQ(npy::elementSize(info.type), info.byteSize);
    npy::Array read;
    ASSERT_TRUE(npy::parseNpy(bytes.data(), bytes.size(), read, error))
        << error;
    EXPECT_EQ(read.type, info.type);
    EXPECT_EQ(read.data, array.data);
  }
}

} // namespace
