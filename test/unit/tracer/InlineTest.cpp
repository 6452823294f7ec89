//===- InlineTest.cpp - One context per trace session, inlineIntoTrace ----===//
//
// A trace started inside another records into the outer trace's
// MLIRContext, traceImpl records into a given context, and
// kiln::inlineIntoTrace clones a function of that context into the trace
// (capturing its arguments into open regions, keeping the ops' locations)
// or says why it cannot.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include "kiln/IR/KilnOps.h"
#include "kiln/Tracer/Inline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

TEST(Inline, NestedTracesShareOneContext) {
  mlir::MLIRContext *outerContext = nullptr, *innerContext = nullptr;
  mlir::MLIRContext *innerFunctionContext = nullptr;
  auto outer = kiln::trace("outer", {kiln::f32({2})}, [&](const Tensor &x) {
    outerContext = kiln::activeTraceContext("test");
    auto inner = kiln::trace("inner", {kiln::f32({2})}, [&](const Tensor &y) {
      innerContext = kiln::activeTraceContext("test");
      return y * y;
    });
    innerFunctionContext = inner.context();
    return x + 1;
  });
  ASSERT_NE(outerContext, nullptr);
  EXPECT_EQ(innerContext, outerContext);
  EXPECT_EQ(innerFunctionContext, outerContext);
  EXPECT_EQ(outer.context(), outerContext);

  // Traces that do not nest get contexts of their own.
  auto separate = kiln::trace("separate", {kiln::f32({2})},
                              [](const Tensor &x) { return x; });
  EXPECT_NE(separate.context(), outer.context());
}

TEST(Inline, TraceIntoAGivenContext) {
  auto f =
      kiln::trace("f", {kiln::f32({2})}, [](const Tensor &x) { return x * 2; });
  kiln::TracedFunction g = kiln::detail::traceImpl(
      "g", {kiln::f32({2})},
      [](const Tensors &args) { return Tensors{args[0] + 1}; },
      kiln::SourceLoc::current(), f.sharedContext());
  EXPECT_EQ(g.context(), f.context());
  // Each keeps its own module and a share of the context: destroying one
  // leaves the other usable.
  { kiln::TracedFunction dropped = std::move(f); }
  auto out = run(g, {f32Data({2}, {1, 2})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {2}, {2, 3});
}

TEST(Inline, ClonesTheBodyWithCapturesAndLocations) {
  int mulLine = 0;
  auto f = kiln::trace("host", {kiln::f32({2}, "x")}, [&](const Tensor &x) {
    auto square = kiln::trace("square", {kiln::f32({2})}, [&](const Tensor &y) {
      mulLine = __LINE__ + 1;
      return y * y + 1;
    });
    // Inlined inside a cond branch: x is captured into the region.
    return kiln::cond(
        kiln::sum(x) > 0,
        [&] { return kiln::inlineIntoTrace(square.function(), {x}); },
        [&] { return Tensors{-x}; })[0];
  });
  expectVerifies(f);
  auto pos = run(f, {f32Data({2}, {1, 2})});
  ASSERT_EQ(pos.size(), 1u);
  expectTensor(pos[0], DType::F32, {2}, {2, 5});
  auto neg = run(f, {f32Data({2}, {-3, 1})});
  ASSERT_EQ(neg.size(), 1u);
  expectTensor(neg[0], DType::F32, {2}, {3, -1});
  EXPECT_EQ(countOps(f, "kiln.mul"), 1);
  EXPECT_EQ(countOps(f, "func.func"), 1);

  int muls = 0;
  f.module().walk([&](mlir::kiln::MulOp op) {
    ++muls;
    auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(op->getLoc());
    ASSERT_TRUE(loc);
    EXPECT_EQ(baseName(loc.getFilename().str()), baseName(__FILE__));
    EXPECT_EQ(loc.getLine(), static_cast<unsigned>(mulLine));
  });
  EXPECT_EQ(muls, 1);
}

TEST(Inline, OutsideATrace) {
  auto f =
      kiln::trace("f", {kiln::f32({2})}, [](const Tensor &x) { return x; });
  std::string m =
      expectTraceError([&] { kiln::inlineIntoTrace(f.function(), {}); });
  EXPECT_NE(m.find("kiln::inlineIntoTrace was called outside kiln::trace"),
            std::string::npos)
      << m;
  m = expectTraceError([] { kiln::activeTraceContext("my transform"); });
  EXPECT_NE(m.find("my transform was called outside kiln::trace"),
            std::string::npos)
      << m;
}

TEST(Inline, FunctionOfAnotherContext) {
  auto foreign = kiln::trace("foreign", {kiln::f32({2})},
                             [](const Tensor &x) { return x; });
  std::string m = expectTraceError([&] {
    kiln::trace("host", {kiln::f32({2})}, [&](const Tensor &x) {
      return kiln::inlineIntoTrace(foreign.function(), {x});
    });
  });
  EXPECT_NE(m.find("function 'foreign' belongs to another MLIRContext"),
            std::string::npos)
      << m;
}

TEST(Inline, ArgumentsMustMatch) {
  std::string m = expectTraceError([] {
    kiln::trace("host", {kiln::f32({2}), kiln::f32({3})},
                [](const Tensor &x, const Tensor &y) {
                  auto id = kiln::trace("id", {kiln::f32({2})},
                                        [](const Tensor &v) { return v; });
                  return kiln::inlineIntoTrace(id.function(), {x, y});
                });
  });
  EXPECT_NE(m.find("function 'id' takes 1 arguments, got 2"), std::string::npos)
      << m;
  m = expectTraceError([] {
    kiln::trace("host", {kiln::f32({3})}, [](const Tensor &x) {
      auto id = kiln::trace("id", {kiln::f32({2})},
                            [](const Tensor &v) { return v; });
      return kiln::inlineIntoTrace(id.function(), {x});
    });
  });
  EXPECT_NE(m.find("function 'id' takes tensor<2xf32> as argument #0, got "
                   "tensor<3xf32>"),
            std::string::npos)
      << m;
}

TEST(Inline, NoSymbolReferences) {
  // @caller calls @callee: its body cannot stand alone in the trace.
  std::string m = expectTraceError([] {
    kiln::trace("host", {kiln::f32({2})}, [](const Tensor &x) {
      mlir::MLIRContext *context = kiln::activeTraceContext("test");
      mlir::OpBuilder b(context);
      mlir::Location loc = b.getUnknownLoc();
      auto type = mlir::RankedTensorType::get({2}, b.getF32Type());
      mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
      b.setInsertionPointToEnd(module->getBody());
      auto callee = b.create<mlir::func::FuncOp>(
          loc, "callee", b.getFunctionType({type}, {type}));
      b.setInsertionPointToEnd(callee.addEntryBlock());
      b.create<mlir::func::ReturnOp>(loc, callee.getArgument(0));
      b.setInsertionPointToEnd(module->getBody());
      auto caller = b.create<mlir::func::FuncOp>(
          loc, "caller", b.getFunctionType({type}, {type}));
      b.setInsertionPointToEnd(caller.addEntryBlock());
      auto call =
          b.create<mlir::func::CallOp>(loc, callee, caller.getArguments());
      b.create<mlir::func::ReturnOp>(loc, call.getResults());
      return kiln::inlineIntoTrace(caller, {x});
    });
  });
  EXPECT_NE(m.find("function 'caller' refers to other symbols"),
            std::string::npos)
      << m;
}

} // namespace
