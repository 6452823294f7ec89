//===- ElementTypesTest.cpp - .kfb element types follow the list ----------===//
//
// Walks kiln/ElementTypes.def: the schema's DType enumerator of every row has
// the row's name and code, the format's helpers agree with the row, and a
// function whose argument, result and constant have the row's type survives
// a .kfb round trip.
//
//===----------------------------------------------------------------------===//

#include "ElementTypes.h"
#include "KfbTestSupport.h"

#include "kfb_generated.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/ModelFile.h"

namespace kiln {
namespace kfbtest {
namespace {

TEST(KfbElementTypesTest, SchemaFollowsTheList) {
#define KILN_DTYPE(NAME, CODE, ...)                                            \
  EXPECT_STREQ(kfb::EnumNameDType(static_cast<kfb::DType>(CODE)), #NAME);
#include "kiln/ElementTypes.def"
  EXPECT_EQ(static_cast<unsigned>(kfb::DType::MAX) + 1, kNumElementTypes);
  // The rows that exist today, in code order, then any added later.
  std::string expected = "0-" + std::to_string(kNumElementTypes - 1) +
                         ": f32, f64, i1, i32, i64, f16, bf16";
  EXPECT_EQ(modelfile::describeDTypes().substr(0, expected.size()), expected);
}

TEST(KfbElementTypesTest, HelpersFollowTheList) {
  mlir::MLIRContext context;
  for (const ElementTypeInfo &info : kElementTypes) {
    SCOPED_TRACE(info.name);
    auto dtype = static_cast<kfb::DType>(info.type);
    EXPECT_EQ(modelfile::findDType(dtype), &info);
    EXPECT_EQ(modelfile::dtypeName(dtype), info.name);
    EXPECT_EQ(modelfile::storageSize(dtype), info.byteSize);
    EXPECT_EQ(modelfile::isFloat(dtype),
              info.elementClass == ElementClass::Float);
    mlir::Type type = modelfile::toMlirType(dtype, &context);
    EXPECT_EQ(type, getMlirElementType(info.type, &context));
    EXPECT_EQ(modelfile::toDType(type), dtype);
  }
  auto invalid = static_cast<kfb::DType>(kNumElementTypes);
  EXPECT_EQ(modelfile::findDType(invalid), nullptr);
  EXPECT_FALSE(modelfile::toMlirType(invalid, &context));
  EXPECT_EQ(modelfile::storageSize(invalid), 0u);
  EXPECT_EQ(modelfile::dtypeName(invalid),
            "<invalid " + std::to_string(kNumElementTypes) + ">");
}

using KfbElementTypesRoundTripTest = KfbTest;

TEST_F(KfbElementTypesRoundTripTest, EveryRowRoundTrips) {
  for (const ElementTypeInfo &info : kElementTypes) {
    SCOPED_TRACE(info.name);
    std::string type = std::string("tensor<2x") + info.name + ">";
    std::string zero = info.elementClass == ElementClass::Float  ? "0.0"
                       : info.elementClass == ElementClass::Bool ? "false"
                                                                 : "0";
    std::string text = "func.func @f(%a: " + type + ") -> (" + type + ", " +
                       type + ") {\n  %c = kiln.constant dense<" + zero +
                       "> : " + type + "\n  return %a, %c : " + type + ", " +
                       type + "\n}\n";
    mlir::OwningOpRef<mlir::ModuleOp> original = parse(text);
    ASSERT_TRUE(original) << text;
    std::vector<uint8_t> bytes = write(*original);
    ASSERT_FALSE(bytes.empty());
    std::string error;
    mlir::OwningOpRef<mlir::ModuleOp> read =
        readModelFile(bytes, &context, error);
    ASSERT_TRUE(read) << error;
    EXPECT_EQ(print(*original), print(*read));
  }
}

} // namespace
} // namespace kfbtest
} // namespace kiln
