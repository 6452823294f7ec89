//===- GradContextTest.cpp - Gradients stay in their function's context ---===//
//
// A traced function and everything derived from it live in one
// MLIRContext: the transforms of a TracedFunction, a gradient taken inside
// a traced function and a gradient of a gradient. The derived IR is cloned,
// not copied through text, so the ops keep the user's locations.
//
//===----------------------------------------------------------------------===//

#include "kiln/Grad.h"
#include "kiln/Tracer/Inline.h"
#include "kiln/kiln.h"

#include "mlir/IR/Location.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kiln;

namespace {

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

TEST(GradContext, TransformsOfATracedFunctionShareItsContext) {
  TracedFunction f =
      trace("loss", {f64({3}, "w"), f64({3}, "x")},
            [](const Tensor &w, const Tensor &x) { return sum(tanh(w * x)); });
  TracedFunction g = grad(f, {0});
  TracedFunction vg = value_and_grad(f, {0, 1});
  TracedFunction pb = vjp(f, {1});
  EXPECT_EQ(g.context(), f.context());
  EXPECT_EQ(vg.context(), f.context());
  EXPECT_EQ(pb.context(), f.context());
  // A transform of a function that itself takes a gradient; a separate
  // trace has a context of its own.
  TracedFunction h = trace("sum_grad", {f64({3}), f64({3})},
                           [](const Tensor &w, const Tensor &x) {
                             auto inner = [](const Tensor &v, const Tensor &y) {
                               return sum(v * v * y);
                             };
                             return sum(grad(inner, {0})({w, x})[0]);
                           });
  TracedFunction hg = grad(h, {0});
  EXPECT_EQ(hg.context(), h.context());
  EXPECT_NE(h.context(), f.context());
}

TEST(GradContext, NestedGradientsRecordIntoTheOuterContext) {
  // Each level of grad(grad(cube)) traces its primal while the enclosing
  // trace records; all of them see the context of the outermost trace.
  std::vector<mlir::MLIRContext *> seen;
  auto cube = [&](const Tensor &x) {
    seen.push_back(activeTraceContext("cube"));
    return sum(x * x * x);
  };
  auto second = grad([&](const Tensor &x) {
    seen.push_back(activeTraceContext("first derivative"));
    return sum(grad(cube)({x})[0]);
  });
  mlir::MLIRContext *outer = nullptr;
  TracedFunction traced = trace("second", {f64({4})}, [&](const Tensor &x) {
    outer = activeTraceContext("second");
    return second({x});
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], outer);
  EXPECT_EQ(seen[1], outer);
  EXPECT_EQ(traced.context(), outer);
}

TEST(GradContext, DerivedOpsKeepTheUsersLocations) {
  int tanhLine = 0;
  auto loss = [&](const Tensor &w, const Tensor &x) {
    tanhLine = __LINE__ + 1;
    Tensor t = tanh(w * x);
    return sum(t);
  };
  TracedFunction step = trace("step", {f64({3}), f64({3})},
                              [&](const Tensor &w, const Tensor &x) {
                                Tensors vg = value_and_grad(loss, {0})({w, x});
                                return Tensors{vg[0], w - 0.5 * vg[1]};
                              });
  // The forward tanh and the ops of its derivative all point at the line
  // of the tanh in this file.
  int tanhs = 0, atTanhLine = 0;
  step.module().walk([&](mlir::Operation *op) {
    if (op->getDialect()->getNamespace() != "kiln")
      return;
    if (op->getName().getStringRef() == "kiln.tanh")
      ++tanhs;
    auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(op->getLoc());
    if (loc && baseName(loc.getFilename().str()) == baseName(__FILE__) &&
        loc.getLine() == static_cast<unsigned>(tanhLine))
      ++atTanhLine;
  });
  EXPECT_EQ(tanhs, 1);
  EXPECT_GT(atTanhLine, 1);
}

} // namespace
