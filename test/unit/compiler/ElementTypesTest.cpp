//===- ElementTypesTest.cpp - The element type list on the compiler side --===//
//
// Walks kiln/ElementTypes.def and checks that every row reaches MLIR and the
// reference evaluator's HostTensor consistently, so that a row added to the
// list but missed on the compiler side fails here.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/ElementTypes.h"
#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

std::string printed(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

TEST(ElementTypesTest, EveryRowHasItsMlirType) {
  mlir::MLIRContext context;
  for (const ElementTypeInfo &info : kElementTypes) {
    SCOPED_TRACE(info.name);
    mlir::Type type = getMlirElementType(info.type, &context);
    ASSERT_TRUE(type);
    // The list's spelling is MLIR's.
    EXPECT_EQ(printed(type), info.name);
    EXPECT_EQ(classifyElementType(type), info.type);
    EXPECT_EQ(type.getIntOrFloatBitWidth(), info.bitWidth);
    EXPECT_EQ(llvm::isa<mlir::FloatType>(type),
              info.elementClass == ElementClass::Float);
    if (info.elementClass == ElementClass::Unsigned) {
      EXPECT_TRUE(type.isUnsignedInteger());
    } else if (info.elementClass != ElementClass::Float) {
      EXPECT_TRUE(type.isSignlessInteger());
    }
  }
  EXPECT_FALSE(
      getMlirElementType(static_cast<ElementType>(kNumElementTypes), &context));
}

TEST(ElementTypesTest, OtherMlirTypesAreNotElementTypes) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  EXPECT_FALSE(classifyElementType(mlir::Type()));
  EXPECT_FALSE(classifyElementType(b.getIntegerType(4)));
  // Signed integers are signless in kiln; there is no ui1.
  EXPECT_FALSE(classifyElementType(b.getIntegerType(32, /*isSigned=*/true)));
  EXPECT_FALSE(classifyElementType(b.getIntegerType(1, /*isSigned=*/false)));
  EXPECT_FALSE(classifyElementType(b.getIntegerType(24, /*isSigned=*/false)));
  EXPECT_FALSE(classifyElementType(b.getIndexType()));
  EXPECT_FALSE(classifyElementType(b.getF80Type()));
  EXPECT_FALSE(
      classifyElementType(mlir::RankedTensorType::get({2}, b.getF32Type())));
}

TEST(ElementTypesTest, HostTensorsHoldEveryRow) {
  mlir::MLIRContext context;
  for (const ElementTypeInfo &info : kElementTypes) {
    SCOPED_TRACE(info.name);
    HostTensor tensor(getMlirElementType(info.type, &context), {3});
    EXPECT_EQ(tensor.kind(), info.type);
    EXPECT_EQ(tensor.isFloat(), info.elementClass == ElementClass::Float);
    EXPECT_EQ(isFloatKind(info.type), tensor.isFloat());
    EXPECT_EQ(elementByteSize(info.type), int64_t{info.byteSize});
    EXPECT_EQ(tensor.byteSize(), 3 * int64_t{info.byteSize});
    // The native layout has BYTES per element: a value survives the trip.
    HostTensor one =
        tensor.isFloat()
            ? HostTensor::fromFloats(tensor.elementType, {3}, {1.0, 0.0, 1.0})
            : HostTensor::fromInts(tensor.elementType, {3}, {1, 0, 1});
    std::vector<uint8_t> bytes(one.byteSize());
    one.toBytes(bytes.data());
    HostTensor back = HostTensor::fromBytes(one.elementType, {3}, bytes.data());
    EXPECT_EQ(back.getAsDouble(0), 1.0);
    EXPECT_EQ(back.getAsDouble(1), 0.0);
    EXPECT_EQ(back.getAsDouble(2), 1.0);
  }
}

} // namespace
