//===- TraceTest.cpp - kiln::trace and TracedFunction ---------------------===//
//
// The traced function's signature (names, specs, attributes), the calling
// conventions trace accepts, ownership of the module, and the source
// locations attached to the recorded ops.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

TEST(Trace, SignatureNamesAndSpecs) {
  auto f = kiln::trace(
      "affine", {kiln::f32({2, 3}, "x"), kiln::f32({3}), kiln::i64({}, "n")},
      [](const Tensors &in) {
        Tensor y = in[0] * in[1];
        return std::make_tuple(y.named("scaled"), kiln::sum(y) + 0 * in[2]);
      });
  EXPECT_EQ(f.name(), "affine");
  ASSERT_EQ(f.inputSpecs().size(), 3u);
  EXPECT_EQ(f.inputSpecs()[0], kiln::f32({2, 3}, "x"));
  EXPECT_EQ(f.inputSpecs()[1], kiln::f32({3}, "arg1"));
  EXPECT_EQ(f.inputSpecs()[2], kiln::i64({}, "n"));
  ASSERT_EQ(f.outputSpecs().size(), 2u);
  EXPECT_EQ(f.outputSpecs()[0], kiln::f32({2, 3}, "scaled"));
  EXPECT_EQ(f.outputSpecs()[1], kiln::f32({}, "out1"));
  EXPECT_EQ(f.outputSpecs()[1].str(), "out1: f32[]");

  mlir::func::FuncOp func = f.function();
  ASSERT_TRUE(func);
  EXPECT_TRUE(func.isPublic());
  EXPECT_EQ(func.getName(), "affine");
  EXPECT_EQ(func.getArgAttrOfType<mlir::StringAttr>(0, "kiln.name").getValue(),
            "x");
  EXPECT_EQ(func.getArgAttrOfType<mlir::StringAttr>(1, "kiln.name").getValue(),
            "arg1");
  EXPECT_EQ(
      func.getResultAttrOfType<mlir::StringAttr>(0, "kiln.name").getValue(),
      "scaled");
  EXPECT_EQ(
      func.getResultAttrOfType<mlir::StringAttr>(1, "kiln.name").getValue(),
      "out1");
  std::string text = f.str();
  EXPECT_NE(text.find("func.func @affine"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.name = \"scaled\""), std::string::npos) << text;
  expectVerifies(f);
}

TEST(Trace, CallingConventions) {
  // No inputs, a vector of inputs, and up to four Tensor parameters.
  auto none = kiln::trace("none", {}, [] { return kiln::iota({3}); });
  auto vec = kiln::trace("vec", {kiln::i32({2})},
                         [](Tensors in) { return in; });
  auto four = kiln::trace(
      "four", {kiln::i32({}), kiln::i32({}), kiln::i32({}), kiln::i32({})},
      [](const Tensor &a, const Tensor &b, const Tensor &c, const Tensor &d) {
        return std::make_pair(a + b, c * d);
      });
  auto o0 = run(none, {});
  ASSERT_EQ(o0.size(), 1u);
  expectTensor(o0[0], DType::I64, {3}, {0, 1, 2});
  auto o1 = run(vec, {i32Data({2}, {4, 5})});
  ASSERT_EQ(o1.size(), 1u);
  expectTensor(o1[0], DType::I32, {2}, {4, 5});
  auto o4 = run(four, {i32Data({}, {1}), i32Data({}, {2}), i32Data({}, {3}),
                       i32Data({}, {4})});
  ASSERT_EQ(o4.size(), 2u);
  expectTensor(o4[0], DType::I32, {}, {3});
  expectTensor(o4[1], DType::I32, {}, {12});
}

TEST(Trace, TensorMetadata) {
  auto f = kiln::trace("meta", {kiln::f64({2, 5, 3})}, [](const Tensor &x) {
    EXPECT_TRUE(x.defined());
    EXPECT_EQ(x.shape(), kiln::Shape({2, 5, 3}));
    EXPECT_EQ(x.dtype(), DType::F64);
    EXPECT_EQ(x.rank(), 3);
    EXPECT_EQ(x.numel(), 30);
    EXPECT_TRUE(x.value());
    Tensor m = kiln::sum(x, {0, 2}) > 1;
    EXPECT_EQ(m.shape(), kiln::Shape({5}));
    EXPECT_EQ(m.dtype(), DType::I1);
    EXPECT_FALSE(Tensor().defined());
    return x;
  });
  expectVerifies(f);
}

TEST(Trace, MoveOnlyOwnershipOfTheModule) {
  auto f = kiln::trace("owned", {kiln::f32({2})},
                       [](const Tensor &x) { return x + 1; });
  mlir::ModuleOp module = f.module();
  kiln::TracedFunction g = std::move(f);
  EXPECT_EQ(g.module(), module);
  EXPECT_FALSE(f.module());
  EXPECT_EQ(g.name(), "owned");
  kiln::TracedFunction h = kiln::trace("other", {kiln::f32({1})},
                                       [](const Tensor &x) { return x; });
  h = std::move(g);
  EXPECT_EQ(h.name(), "owned");
  auto out = run(h, {f32Data({2}, {1, 2})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {2}, {2, 3});
}

TEST(Trace, NestedIndependentTrace) {
  // A trace may be started while another is being recorded; each keeps its
  // own tensors.
  std::string innerText;
  auto outer = kiln::trace("outer", {kiln::f32({2})}, [&](const Tensor &x) {
    auto inner = kiln::trace("inner", {kiln::f32({2})},
                             [](const Tensor &y) { return y * y; });
    expectVerifies(inner);
    innerText = inner.str();
    return x + 1;
  });
  EXPECT_NE(innerText.find("kiln.mul"), std::string::npos);
  EXPECT_EQ(countOps(outer, "kiln.mul"), 0);
  expectVerifies(outer);
}

TEST(Trace, OpsCarryTheUsersSourceLocation) {
  int mulLine = 0, condLine = 0;
  auto f = kiln::trace("located", {kiln::f32({2})}, [&](const Tensor &x) {
    mulLine = __LINE__ + 1;
    Tensor y = x * 3;
    condLine = __LINE__ + 1;
    return kiln::cond(kiln::sum(y) > 0, [&] { return y; }, [&] { return -y; })[0];
  });
  std::string file = baseName(__FILE__);
  int kilnOps = 0;
  f.module().walk([&](mlir::Operation *op) {
    if (op->getDialect()->getNamespace() != "kiln")
      return;
    ++kilnOps;
    auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(op->getLoc());
    ASSERT_TRUE(loc) << op->getName().getStringRef().str();
    EXPECT_EQ(baseName(loc.getFilename().str()), file);
    if (llvm::isa<mlir::kiln::MulOp>(op)) {
      EXPECT_EQ(loc.getLine(), static_cast<unsigned>(mulLine));
    }
    if (llvm::isa<mlir::kiln::CondOp>(op)) {
      EXPECT_EQ(loc.getLine(), static_cast<unsigned>(condLine));
    }
  });
  EXPECT_GT(kilnOps, 4);
  std::string text = f.str(/*withLocations=*/true);
  EXPECT_NE(text.find(file + "\":" + std::to_string(mulLine)),
            std::string::npos)
      << text;
}

/// DType is the traced rows of kiln/ElementTypes.def: each converts both
/// ways, keeps the row's name and class, and traces to the row's MLIR type.
TEST(Trace, DTypesFollowTheElementTypeList) {
  int traced = 0;
  for (const kiln::ElementTypeInfo &info : kiln::kElementTypes) {
    SCOPED_TRACE(info.name);
    std::optional<DType> dtype = kiln::tracedDType(info.type);
    EXPECT_EQ(dtype.has_value(), info.traced);
    EXPECT_TRUE(!info.traced || info.compiled);
    if (!dtype)
      continue;
    ++traced;
    EXPECT_EQ(kiln::toElementType(*dtype), info.type);
    EXPECT_STREQ(kiln::dtypeName(*dtype), info.name);
    EXPECT_EQ(kiln::isFloat(*dtype),
              info.elementClass == kiln::ElementClass::Float);
    EXPECT_EQ(kiln::isInteger(*dtype),
              info.elementClass == kiln::ElementClass::Integer ||
                  info.elementClass == kiln::ElementClass::Unsigned);
    auto f = kiln::trace("identity", {kiln::TensorSpec{*dtype, {2}, "x"}},
                         [](const Tensors &in) { return in[0]; });
    EXPECT_EQ(f.outputSpecs().at(0).dtype, *dtype);
    EXPECT_EQ(f.function().getArgumentTypes()[0],
              mlir::RankedTensorType::get(
                  {2}, kiln::getMlirElementType(info.type, f.context())));
  }
  // f32, f64, i1, i32 and i64 at least.
  EXPECT_GE(traced, 5);
}

} // namespace
