//===- MalformedFileTest.cpp - Crafted .kfb files the reader refuses ------===//
//
// Each test writes a valid model, edits it through the FlatBuffers object
// API (or builds one by hand where the object API cannot express the fault)
// and checks the reader's message: it names the place and the problem.
// test/kfb/malformed.test covers the same ground from the command line; the
// cases here are those easier to express in C++.
//
//===----------------------------------------------------------------------===//

#include "KfbTestSupport.h"

#include "kfb_generated.h"
#include "kiln/IR/ModelFile.h"

#include "llvm/Support/Regex.h"

#include <functional>
#include <memory>

namespace kiln {
namespace kfbtest {
namespace {

::testing::AssertionResult startsWith(const std::string &text,
                                      llvm::StringRef prefix) {
  if (llvm::StringRef(text).starts_with(prefix))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\" does not start with \"" << prefix.str() << "\"";
}

::testing::AssertionResult matches(const std::string &text,
                                   llvm::StringRef pattern) {
  if (llvm::Regex(pattern).match(text))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\" does not match " << pattern.str();
}

std::vector<uint8_t> finish(flatbuffers::FlatBufferBuilder &builder,
                            flatbuffers::Offset<kfb::Model> model) {
  kfb::FinishModelBuffer(builder, model);
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

std::vector<uint8_t> pack(const kfb::ModelT &model) {
  flatbuffers::FlatBufferBuilder builder;
  return finish(builder, kfb::Model::Pack(builder, &model));
}

std::unique_ptr<kfb::NamedAttributeT> named(std::string name,
                                            kfb::AttributeValueUnion value) {
  auto attribute = std::make_unique<kfb::NamedAttributeT>();
  attribute->name = std::move(name);
  attribute->value = std::move(value);
  return attribute;
}

template <typename T> kfb::AttributeValueUnion attr(T value) {
  kfb::AttributeValueUnion result;
  result.Set(std::move(value));
  return result;
}

kfb::IntegerAttrT integer(kfb::DType type, int64_t value) {
  kfb::IntegerAttrT result;
  result.type = type;
  result.value = value;
  return result;
}

class MalformedFileTest : public KfbTest {
protected:
  /// Writes \p text, lets \p edit change the model and returns the reader's
  /// error for the result.
  std::string errorAfter(llvm::StringRef text,
                         const std::function<void(kfb::ModelT &)> &edit) {
    std::vector<uint8_t> bytes = writeText(text);
    if (bytes.empty())
      return "";
    std::unique_ptr<kfb::ModelT> model(kfb::GetModel(bytes.data())->UnPack());
    edit(*model);
    return readError(pack(*model));
  }

  static kfb::FunctionT &function(kfb::ModelT &model, size_t index = 0) {
    return *model.functions.at(index);
  }
  static kfb::BlockT &entry(kfb::ModelT &model, size_t index = 0) {
    return *function(model, index).body->blocks.at(0);
  }
  static kfb::OperationT &op(kfb::ModelT &model, size_t index) {
    return *entry(model).operations.at(index);
  }
};

//===----------------------------------------------------------------------===//
// Sharing
//===----------------------------------------------------------------------===//

enum class Shared { ResultType, Name, Operands };

/// A hand-built f(x) = neg(neg(x)), or f(x) = neg(neg(x)) with one operand
/// vector for both negations, whose two negations share one table, string
/// or vector.
std::vector<uint8_t> sharingModel(Shared shared) {
  flatbuffers::FlatBufferBuilder builder;
  auto tensorType = [&] {
    return kfb::CreateTensorType(builder, kfb::DType::F32,
                                 builder.CreateVector<int64_t>({4}));
  };
  auto sharedType = tensorType();
  auto sharedName = builder.CreateString("kiln.neg");
  auto sharedOperands = builder.CreateVector<uint32_t>({0});
  auto neg = [&](uint32_t operand) {
    auto type = shared == Shared::ResultType ? sharedType : tensorType();
    auto name =
        shared == Shared::Name ? sharedName : builder.CreateString("kiln.neg");
    auto operands = shared == Shared::Operands
                        ? sharedOperands
                        : builder.CreateVector<uint32_t>({operand});
    return kfb::CreateOperation(
        builder, name, operands,
        builder.CreateVector(
            std::vector<flatbuffers::Offset<kfb::TensorType>>{type}));
  };
  auto first = neg(0);
  auto second = neg(1);
  auto ret = kfb::CreateOperation(builder, builder.CreateString("func.return"),
                                  builder.CreateVector<uint32_t>({2}));
  auto block = kfb::CreateBlock(
      builder,
      builder.CreateVector(
          std::vector<flatbuffers::Offset<kfb::TensorType>>{tensorType()}),
      builder.CreateVector(std::vector<flatbuffers::Offset<kfb::Operation>>{
          first, second, ret}));
  auto body = kfb::CreateRegion(
      builder, builder.CreateVector(
                   std::vector<flatbuffers::Offset<kfb::Block>>{block}));
  auto input = kfb::CreatePort(builder, 0, tensorType());
  auto output = kfb::CreatePort(builder, 0, tensorType());
  auto function = kfb::CreateFunction(
      builder, builder.CreateString("f"), 0,
      builder.CreateVector(std::vector<flatbuffers::Offset<kfb::Port>>{input}),
      builder.CreateVector(std::vector<flatbuffers::Offset<kfb::Port>>{output}),
      0, body);
  kfb::Version version(kModelFileVersionMajor, kModelFileVersionMinor);
  return finish(
      builder,
      kfb::CreateModel(
          builder, &version, 0, 0,
          builder.CreateVector(
              std::vector<flatbuffers::Offset<kfb::Function>>{function})));
}

TEST_F(MalformedFileTest, SharedTable) {
  EXPECT_TRUE(matches(
      readError(sharingModel(Shared::ResultType)),
      "^function 'f', op #1 \\('kiln.neg'\\), result #0: the data at byte "
      "offset [0-9]+ is also used by an earlier part of the file \\(a .kfb "
      "file may not share tables, vectors or strings\\)$"));
}

TEST_F(MalformedFileTest, SharedString) {
  EXPECT_TRUE(startsWith(readError(sharingModel(Shared::Name)),
                         "function 'f', op #1: the data at byte offset"));
}

TEST_F(MalformedFileTest, SharedVector) {
  EXPECT_TRUE(startsWith(readError(sharingModel(Shared::Operands)),
                         "function 'f', op #1 ('kiln.neg'), operands: the "
                         "data at byte offset"));
}

/// Vectors may not overlap either: here the second negation's operand list
/// starts inside the first one's (the file is patched after building).
TEST_F(MalformedFileTest, OverlappingVectors) {
  std::vector<uint8_t> bytes = sharingModel(Shared::Operands);
  const kfb::Model *model = kfb::GetModel(bytes.data());
  const auto *ops =
      model->functions()->Get(0)->body()->blocks()->Get(0)->operations();
  const kfb::Operation *second = ops->Get(1);
  // Point the second op's operand vector 4 bytes further on, where the
  // first vector's element (0) now serves as an empty vector's length.
  auto *field =
      const_cast<uint8_t *>(reinterpret_cast<const uint8_t *>(second) +
                            flatbuffers::ReadScalar<flatbuffers::voffset_t>(
                                reinterpret_cast<const uint8_t *>(second) -
                                flatbuffers::ReadScalar<flatbuffers::soffset_t>(
                                    reinterpret_cast<const uint8_t *>(second)) +
                                kfb::Operation::VT_OPERANDS));
  flatbuffers::WriteScalar<flatbuffers::uoffset_t>(
      field, flatbuffers::ReadScalar<flatbuffers::uoffset_t>(field) + 4);
  std::string error = readError(bytes);
  EXPECT_TRUE(startsWith(error, "function 'f', op #1 ('kiln.neg')")) << error;
  EXPECT_NE(error.find("is also used by an earlier part of the file"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

TEST_F(MalformedFileTest, BadBooleanByte) {
  EXPECT_EQ(errorAfter(readInput("constants.mlir"),
                       [](kfb::ModelT &model) {
                         model.buffers.at(1)->data.at(1) = 2;
                       }),
            "function 'f', op #1 ('kiln.constant'), attribute 'value', "
            "constant buffer #1: byte 1 is 2, which is not an i1 (0 or 1)");
}

TEST_F(MalformedFileTest, SplatFlagOnFullBuffer) {
  EXPECT_EQ(
      errorAfter(
          readInput("constants.mlir"),
          [](kfb::ModelT &model) {
            op(model, 0).attributes.at(0)->value.AsDenseElementsAttr()->splat =
                true;
          }),
      "function 'f', op #0 ('kiln.constant'), attribute 'value', "
      "constant buffer #0: the buffer holds 16 bytes, but a splat of "
      "tensor<4xf32> needs 4");
}

TEST_F(MalformedFileTest, EmptySplat) {
  EXPECT_EQ(
      errorAfter(
          readInput("constants.mlir"),
          [](kfb::ModelT &model) {
            auto *elements =
                op(model, 0).attributes.at(0)->value.AsDenseElementsAttr();
            elements->splat = true;
            elements->type->shape = {0};
          }),
      "function 'f', op #0 ('kiln.constant'), attribute 'value', "
      "constant buffer #0: the buffer holds 16 bytes, but a splat of "
      "tensor<0xf32> needs 4");
}

TEST_F(MalformedFileTest, BufferSharedAcrossTypes) {
  EXPECT_EQ(
      errorAfter(
          readInput("constants.mlir"),
          [](kfb::ModelT &model) {
            op(model, 1).attributes.at(0)->value.AsDenseElementsAttr()->buffer =
                0;
          }),
      "function 'f', op #1 ('kiln.constant'), attribute 'value': "
      "constant buffer #0 is also used by an earlier constant of a "
      "different type (constants may share a buffer only if their "
      "types are the same)");
}

TEST_F(MalformedFileTest, HugeShape) {
  EXPECT_EQ(errorAfter(readInput("constants.mlir"),
                       [](kfb::ModelT &model) {
                         op(model, 0).result_types.at(0)->shape = {
                             int64_t(1) << 40, int64_t(1) << 40};
                       }),
            "function 'f', op #0 ('kiln.constant'), result #0: the shape has "
            "more than 2^63-1 elements");
}

/// A splat stands for any number of elements, cheaply; the MLIR verifier
/// then finds that the constant's type differs from its result's.
TEST_F(MalformedFileTest, HugeSplatIsCheap) {
  EXPECT_EQ(errorAfter(R"mlir(
    func.func @f() -> tensor<2xf32> {
      %a = kiln.constant dense<1.0> : tensor<2xf32>
      return %a : tensor<2xf32>
    }
  )mlir",
                       [](kfb::ModelT &model) {
                         op(model, 0)
                             .attributes.at(0)
                             ->value.AsDenseElementsAttr()
                             ->type->shape = {int64_t(1) << 40};
                       }),
            "function 'f', op #0 ('kiln.constant'): 'kiln.constant' op value "
            "type 'tensor<1099511627776xf32>' does not match result type "
            "'tensor<2xf32>'");
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

TEST_F(MalformedFileTest, FloatBitsOutOfRange) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         kfb::FloatAttrT value;
                         value.type = kfb::DType::F16;
                         value.bits = 0x10000;
                         op(model, 0).attributes.push_back(
                             named("kiln.scale", attr(value)));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute 'kiln.scale': the "
            "bits 0x10000 do not fit in f16");
}

TEST_F(MalformedFileTest, FloatOfIntegerType) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         kfb::FloatAttrT value;
                         value.type = kfb::DType::I32;
                         op(model, 0).attributes.push_back(
                             named("kiln.scale", attr(value)));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute 'kiln.scale': a "
            "float attribute may not have type i32 (expected f16, bf16, f32 "
            "or f64)");
}

TEST_F(MalformedFileTest, BooleanOutOfRange) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         op(model, 0).attributes.push_back(named(
                             "kiln.flag", attr(integer(kfb::DType::I1, 2))));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute 'kiln.flag': the i1 "
            "integer holds 2 (expected 0 or 1)");
}

TEST_F(MalformedFileTest, IntegerOfFloatType) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         op(model, 0).attributes.push_back(named(
                             "kiln.n", attr(integer(kfb::DType::F32, 1))));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute 'kiln.n': an integer "
            "attribute may not have type f32 (expected i1, i32 or i64)");
}

TEST_F(MalformedFileTest, AttributeWithoutValue) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         op(model, 0).attributes.push_back(
                             named("kiln.empty", kfb::AttributeValueUnion()));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute 'kiln.empty': the "
            "attribute has no value");
}

TEST_F(MalformedFileTest, AttributeWithEmptyName) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         op(model, 0).attributes.push_back(
                             named("", attr(kfb::UnitAttrT())));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute #0: the attribute "
            "has an empty name");
}

TEST_F(MalformedFileTest, NestedAttributeError) {
  EXPECT_EQ(
      errorAfter(readInput("neg.mlir"),
                 [](kfb::ModelT &model) {
                   kfb::ArrayAttrT array;
                   auto element = std::make_unique<kfb::AttributeT>();
                   element->value = attr(integer(kfb::DType::I32, 1));
                   array.elements.push_back(std::move(element));
                   element = std::make_unique<kfb::AttributeT>();
                   kfb::DictionaryAttrT dictionary;
                   dictionary.entries.push_back(
                       named("k", attr(integer(kfb::DType::I1, 5))));
                   element->value = attr(std::move(dictionary));
                   array.elements.push_back(std::move(element));
                   op(model, 0).attributes.push_back(
                       named("kiln.list", attr(std::move(array))));
                 }),
      "function 'f', op #0 ('kiln.neg'), attribute 'kiln.list', element #1, "
      "attribute 'k': the i1 integer holds 5 (expected 0 or 1)");
}

TEST_F(MalformedFileTest, UnknownAttributeKind) {
  // The object API cannot hold an unknown kind, so the model is built by
  // hand: a module whose only attribute has kind 200.
  flatbuffers::FlatBufferBuilder builder;
  auto value = kfb::CreateUnitAttr(builder);
  auto attribute = kfb::CreateNamedAttribute(
      builder, builder.CreateString("kiln.strange"),
      static_cast<kfb::AttributeValue>(200), value.Union());
  kfb::Version version(kModelFileVersionMajor, kModelFileVersionMinor);
  std::vector<uint8_t> bytes = finish(
      builder, kfb::CreateModel(
                   builder, &version, 0,
                   builder.CreateVector(
                       std::vector<flatbuffers::Offset<kfb::NamedAttribute>>{
                           attribute})));
  EXPECT_EQ(readError(bytes),
            "module, attribute 'kiln.strange': unknown attribute kind 200");
}

TEST_F(MalformedFileTest, SymbolRefEmpty) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         op(model, 0).attributes.push_back(named(
                             "kiln.ref", attr(kfb::FlatSymbolRefAttrT())));
                       }),
            "function 'f', op #0 ('kiln.neg'), attribute 'kiln.ref': the "
            "symbol reference is empty");
}

//===----------------------------------------------------------------------===//
// Functions and the module
//===----------------------------------------------------------------------===//

TEST_F(MalformedFileTest, NestedFunction) {
  EXPECT_EQ(
      errorAfter(readInput("neg.mlir"),
                 [](kfb::ModelT &model) { op(model, 0).name = "func.func"; }),
      "function 'f', op #0 ('func.func'): functions cannot be nested "
      "(func.func may only appear as a function of the model)");
}

TEST_F(MalformedFileTest, EmptyFunctionName) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) { function(model).name = ""; }),
            "module, function #0: the function has an empty name");
}

TEST_F(MalformedFileTest, BadVisibility) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         function(model).visibility = "protected";
                       }),
            "function 'f': unknown visibility 'protected' (expected 'public', "
            "'private' or 'nested')");
}

TEST_F(MalformedFileTest, ReservedFunctionAttribute) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         kfb::StringAttrT name;
                         name.value = "g";
                         function(model).attributes.push_back(
                             named("sym_name", attr(name)));
                       }),
            "function 'f', attribute 'sym_name': this attribute has its own "
            "field in a function and may not appear among the function's "
            "attributes");
}

TEST_F(MalformedFileTest, ModuleNameAttribute) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         kfb::StringAttrT name;
                         name.value = "m";
                         model.attributes.push_back(
                             named("sym_name", attr(name)));
                       }),
            "module, attribute 'sym_name': the module's name has its own "
            "field and may not appear among its attributes");
}

TEST_F(MalformedFileTest, ModuleVisibilityOfWrongKind) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         model.attributes.push_back(
                             named("sym_visibility",
                                   attr(integer(kfb::DType::I64, 1))));
                       }),
            "module: attribute 'sym_visibility' failed to satisfy "
            "constraint: string attribute");
}

TEST_F(MalformedFileTest, PortNameTwice) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         kfb::StringAttrT name;
                         name.value = "z";
                         function(model).inputs.at(0)->attributes.push_back(
                             named("kiln.name", attr(name)));
                       }),
            "function 'f', input #0 ('x'): it has both a name and a "
            "'kiln.name' attribute");
}

//===----------------------------------------------------------------------===//
// What the MLIR verifier finds, reported by place in the file
//===----------------------------------------------------------------------===//

TEST_F(MalformedFileTest, EntryBlockDoesNotMatchSignature) {
  EXPECT_EQ(errorAfter(readInput("neg.mlir"),
                       [](kfb::ModelT &model) {
                         entry(model).argument_types.clear();
                         // %0 is now the negation's own result.
                         op(model, 0).operands = {};
                         op(model, 0).name = "kiln.iota";
                         op(model, 0).attributes.push_back(named(
                             "dimension", attr(integer(kfb::DType::I64, 0))));
                         op(model, 1).operands = {0};
                       }),
            "function 'f': 'func.func' op entry block must have 1 arguments "
            "to match function signature");
}

TEST_F(MalformedFileTest, YieldOutsideControlFlow) {
  EXPECT_TRUE(startsWith(
      errorAfter(readInput("neg.mlir"),
                 [](kfb::ModelT &model) { op(model, 1).name = "kiln.yield"; }),
      "function 'f', op #1 ('kiln.yield'): 'kiln.yield' "
      "op expects parent op to be one of"));
}

TEST_F(MalformedFileTest, ValueCapturedAcrossIsolation) {
  // The loop body uses the function's argument instead of its own: the
  // checks let it through (it is visible), the verifier does not (kiln
  // regions are isolated from above).
  EXPECT_TRUE(startsWith(errorAfter(readInput("tanh_loop.mlir"),
                                    [](kfb::ModelT &model) {
                                      // %0 = x, %1 = y, %2 = i, %3 = h.
                                      op(model, 0)
                                          .regions.at(0)
                                          ->blocks.at(0)
                                          ->operations.at(0)
                                          ->operands = {0};
                                    }),
                         "function 'f', op #0 ('kiln.for'), region #0, op #0 "
                         "('kiln.tanh'): 'kiln.tanh' op using value defined "
                         "outside the region"));
}

TEST_F(MalformedFileTest, UnknownCallee) {
  EXPECT_EQ(
      errorAfter(R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
    func.func private @g(tensor<4xf32>) -> tensor<4xf32>
  )mlir",
                 [](kfb::ModelT &model) { function(model, 1).name = "h"; }),
      "function 'f', op #0 ('func.call'): 'func.call' op 'g' does not "
      "reference a valid function");
}

/// When several functions fail verification (which may run in parallel),
/// the first in the file is reported, whatever the order the errors came in.
TEST_F(MalformedFileTest, FirstVerifierErrorInFileOrder) {
  const char *text = R"mlir(
    func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = kiln.neg %x : tensor<4xf32>
      return %y : tensor<4xf32>
    }
    func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = kiln.neg %x : tensor<4xf32>
      return %y : tensor<4xf32>
    }
    func.func @c(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = kiln.neg %x : tensor<4xf32>
      return %y : tensor<4xf32>
    }
  )mlir";
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::string error = errorAfter(text, [](kfb::ModelT &model) {
      for (auto &function : model.functions)
        function->body->blocks.at(0)
            ->operations.at(0)
            ->result_types.at(0)
            ->dtype = kfb::DType::F64;
    });
    EXPECT_EQ(error, "function 'a', op #0 ('kiln.neg'): 'kiln.neg' op "
                     "requires the same type for all operands and results");
  }
}

//===----------------------------------------------------------------------===//
// Nesting
//===----------------------------------------------------------------------===//

/// kiln.for loops nested \p depth deep around a tanh.
std::string nestedLoops(int depth) {
  std::string text = "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n";
  std::string carried = "%x";
  for (int i = 0; i < depth; ++i) {
    std::string n = std::to_string(i);
    text += "%r" + n + " = kiln.for 1 iterations (" + carried +
            ") : (tensor<2xf32>) {\n^bb0(%i" + n + ": tensor<i64>, %h" + n +
            ": tensor<2xf32>):\n";
    carried = "%h" + n;
  }
  text += "%t = kiln.tanh " + carried + " : tensor<2xf32>\n";
  std::string yielded = "%t";
  for (int i = depth - 1; i >= 0; --i) {
    text += "kiln.yield " + yielded + " : tensor<2xf32>\n}\n";
    yielded = "%r" + std::to_string(i);
  }
  text += "return %r0 : tensor<2xf32>\n}\n";
  return text;
}

TEST_F(MalformedFileTest, DeepNestingRoundTrips) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(nestedLoops(40));
  ASSERT_TRUE(module);
  std::vector<uint8_t> bytes = write(*module);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> read =
      readModelFile(bytes, &context, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(print(*module), print(*read));
}

TEST_F(MalformedFileTest, TooDeepNestingIsRefusedByTheWriter) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(nestedLoops(100));
  ASSERT_TRUE(module);
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(writeModelFile(*module, bytes, error));
  EXPECT_TRUE(startsWith(error, "module: the model cannot be stored: "
                                "malformed .kfb file: it fails structural "
                                "verification"));
}

} // namespace
} // namespace kfbtest
} // namespace kiln
