//===- RoundTripTest.cpp - Lossless .kfb round trips and writer errors ----===//

#include "KfbTestSupport.h"

#include "kfb_generated.h"
#include "kiln/IR/ModelFile.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>

namespace kiln {
namespace kfbtest {
namespace {

std::string printGeneric(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, mlir::OpPrintingFlags().printGenericOpForm());
  return text;
}

class SuiteRoundTripTest : public KfbTest,
                           public ::testing::WithParamInterface<std::string> {};

/// Every program of the suite prints identically after MLIR -> .kfb -> MLIR,
/// in the custom and the generic form, and writing the result again gives
/// the same bytes.
TEST_P(SuiteRoundTripTest, PrintsIdentically) {
  mlir::OwningOpRef<mlir::ModuleOp> original = parse(readFile(GetParam()));
  ASSERT_TRUE(original);
  std::vector<uint8_t> bytes = write(*original);
  ASSERT_FALSE(bytes.empty());
  EXPECT_TRUE(isModelFile(bytes));

  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> read =
      readModelFile(bytes, &context, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(print(*original), print(*read));
  EXPECT_EQ(printGeneric(*original), printGeneric(*read));
  EXPECT_EQ(bytes, write(*read));
}

std::string programName(const ::testing::TestParamInfo<std::string> &info) {
  std::filesystem::path path(info.param);
  std::string name =
      path.parent_path().filename().string() + "_" + path.stem().string();
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Suite, SuiteRoundTripTest,
                         ::testing::ValuesIn(suitePrograms()), programName);

class SuiteStacksTest : public KfbTest,
                        public ::testing::WithParamInterface<std::string> {};

/// A program of the suite holding a gradient's stacks (made by reverse-mode
/// differentiation of a kiln.while, which runs after a model is loaded) is
/// refused with the reason, not written.
TEST_P(SuiteStacksTest, AreRefusedWithTheReason) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(readFile(GetParam()));
  ASSERT_TRUE(module);
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(writeModelFile(*module, bytes, error));
  EXPECT_NE(error.find("the operation cannot be stored (stacks are made by "
                       "reverse-mode differentiation of kiln.while"),
            std::string::npos)
      << error;
}

INSTANTIATE_TEST_SUITE_P(Suite, SuiteStacksTest,
                         ::testing::ValuesIn(suiteProgramsWithStacks()),
                         programName);

using ModelFileTest = KfbTest;

TEST_F(ModelFileTest, ReadsIntoAContextWithoutTheDialects) {
  std::vector<uint8_t> bytes = writeText(R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = kiln.exp %x : tensor<2xf32>
      return %y : tensor<2xf32>
    }
  )mlir");
  mlir::MLIRContext bare;
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      readModelFile(bytes, &bare, error, "model.kfb");
  ASSERT_TRUE(module) << error;
  EXPECT_NE(print(*module).find("kiln.exp"), std::string::npos);
}

/// An op read from a file is located by its place in the file, so that
/// later diagnostics about it can say which op they mean.
TEST_F(ModelFileTest, LocationsNameThePlaceInTheFile) {
  std::vector<uint8_t> bytes = writeText(readInput("tanh_loop.mlir"));
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      readModelFile(bytes, &context, error, "model.kfb");
  ASSERT_TRUE(module) << error;
  std::string tanh;
  module->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "kiln.tanh") {
      llvm::raw_string_ostream os(tanh);
      os << op->getLoc();
    }
  });
  EXPECT_EQ(tanh, "loc(\"region #0, op #0 ('kiln.tanh')\"(\"op #0 "
                  "('kiln.for')\"(\"function 'f'\"(\"model.kfb\"))))");
}

TEST_F(ModelFileTest, ReadsFromAnUnalignedBuffer) {
  std::vector<uint8_t> bytes = writeText(R"mlir(
    func.func @f() -> tensor<3xi64> {
      %c = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
      return %c : tensor<3xi64>
    }
  )mlir");
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = readModelFile(
      llvm::ArrayRef<uint8_t>(shifted).drop_front(), &context, error);
  ASSERT_TRUE(module) << error;
  EXPECT_NE(print(*module).find("dense<[1, 2, 3]>"), std::string::npos);
}

/// Constants are 64-byte aligned within the file, and equal constants share
/// one buffer.
TEST_F(ModelFileTest, BuffersAreAlignedAndShared) {
  std::vector<uint8_t> bytes = writeText(R"mlir(
    func.func @f() -> (tensor<3xf32>, tensor<3xf32>, tensor<2xf64>, tensor<5xi1>) {
      %a = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %b = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %c = kiln.constant dense<[4.0, 5.0]> : tensor<2xf64>
      %d = kiln.constant dense<[true, false, true, true, false]> : tensor<5xi1>
      return %a, %b, %c, %d : tensor<3xf32>, tensor<3xf32>, tensor<2xf64>, tensor<5xi1>
    }
  )mlir");
  const kfb::Model *model = kfb::GetModel(bytes.data());
  ASSERT_TRUE(model->buffers());
  ASSERT_EQ(model->buffers()->size(), 3u);
  for (const kfb::Buffer *buffer : *model->buffers()) {
    ptrdiff_t offset = buffer->data()->data() - bytes.data();
    EXPECT_EQ(offset % kModelFileBufferAlignment, 0) << offset;
  }
  EXPECT_EQ(bytes.size() % kModelFileBufferAlignment, 0u);
  // i1 elements take a byte each.
  const auto *booleans = model->buffers()->Get(2)->data();
  EXPECT_EQ(std::vector<uint8_t>(booleans->begin(), booleans->end()),
            (std::vector<uint8_t>{1, 0, 1, 1, 0}));
}

TEST_F(ModelFileTest, SplatsStoreOneElement) {
  std::vector<uint8_t> bytes = writeText(R"mlir(
    func.func @f() -> tensor<1000x1000xf64> {
      %c = kiln.constant dense<0.5> : tensor<1000x1000xf64>
      return %c : tensor<1000x1000xf64>
    }
  )mlir");
  EXPECT_LT(bytes.size(), 1024u);
  const kfb::Model *model = kfb::GetModel(bytes.data());
  ASSERT_EQ(model->buffers()->size(), 1u);
  EXPECT_EQ(model->buffers()->Get(0)->data()->size(), 8u);
}

TEST_F(ModelFileTest, IsModelFileLooksAtTheIdentifier) {
  std::vector<uint8_t> bytes = writeText("module {}");
  EXPECT_TRUE(isModelFile(bytes));
  EXPECT_FALSE(isModelFile(llvm::ArrayRef<uint8_t>(bytes).take_front(7)));
  std::string text = "module {}";
  EXPECT_FALSE(isModelFile(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(text.data()), text.size())));
  EXPECT_FALSE(isModelFile({}));
}

/// The writer refuses what the format cannot hold, naming where it is.
class WriterErrorTest : public KfbTest {
protected:
  std::string writeError(llvm::StringRef text) {
    context.allowUnregisteredDialects();
    mlir::OwningOpRef<mlir::ModuleOp> module = parse(text);
    if (!module)
      return "";
    std::vector<uint8_t> bytes;
    std::string error;
    EXPECT_FALSE(writeModelFile(*module, bytes, error));
    EXPECT_TRUE(bytes.empty());
    return error;
  }
};

TEST_F(WriterErrorTest, ForeignOperation) {
  EXPECT_EQ(writeError(R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = "test.op"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    }
  )mlir"),
            "function 'f', op #0 ('test.op'): the operation cannot be stored "
            "(a .kfb file may hold only kiln ops, func.return and func.call)");
}

TEST_F(WriterErrorTest, NestedForeignOperation) {
  EXPECT_EQ(writeError(R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = kiln.for 2 iterations (%x) : (tensor<2xf32>) {
      ^bb0(%i: tensor<i64>, %h: tensor<2xf32>):
        %z = "test.op"(%h) : (tensor<2xf32>) -> tensor<2xf32>
        kiln.yield %z : tensor<2xf32>
      }
      return %y : tensor<2xf32>
    }
  )mlir"),
            "function 'f', op #0 ('kiln.for'), region #0, op #0 ('test.op'): "
            "the operation cannot be stored (a .kfb file may hold only kiln "
            "ops, func.return and func.call)");
}

TEST_F(WriterErrorTest, ScalarType) {
  EXPECT_EQ(writeError(R"mlir(
    func.func @f(%x: i32) -> i32 {
      return %x : i32
    }
  )mlir"),
            "function 'f', input #0: type i32 cannot be stored (the format "
            "holds statically shaped tensors)");
}

TEST_F(WriterErrorTest, DynamicShape) {
  EXPECT_EQ(writeError(R"mlir(
    func.func private @f(tensor<?xf32>)
  )mlir"),
            "function 'f', input #0: type tensor<?xf32> cannot be stored (the "
            "format holds statically shaped tensors)");
}

TEST_F(WriterErrorTest, ElementType) {
  EXPECT_EQ(writeError(R"mlir(
    func.func private @f() -> tensor<2xi4>
  )mlir"),
            "function 'f', output #0: type tensor<2xi4> cannot be stored "
            "(element types are f32, f64, i1, i32, i64, f16, bf16, i8, i16, "
            "ui8, ui16, ui32, ui64)");
}

TEST_F(WriterErrorTest, AttributeKind) {
  EXPECT_EQ(writeError(R"mlir(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = kiln.exp %x {kiln.map = affine_map<(d0) -> (d0)>} : tensor<2xf32>
      return %y : tensor<2xf32>
    }
  )mlir"),
            "function 'f', op #0 ('kiln.exp'), attribute 'kiln.map': "
            "attribute affine_map<(d0) -> (d0)> is of a kind the format "
            "cannot hold");
}

TEST_F(WriterErrorTest, TopLevelOperation) {
  EXPECT_EQ(writeError(R"mlir(
    module {
      module @inner {}
    }
  )mlir"),
            "module: operation #0 ('builtin.module') is not a func.func; a "
            ".kfb file holds only functions");
}

} // namespace
} // namespace kfbtest
} // namespace kiln
