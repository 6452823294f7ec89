//===- SplitVjpTest.cpp - A VJP run as a forward and a backward half ------===//
//
// splitVjp cuts a derived VJP into forward(x...) -> (y, r...) and
// backward(x..., r..., dy) -> (dx...). For programs with elementwise math,
// products, a kiln.cond and a kiln.for (whose per-iteration values are
// kept in a static stack), the two halves run one after the other must
// give exactly what the whole VJP gives on random inputs and cotangents,
// the forward half must hold no op of the backward pass, and the backward
// half must not run the forward computation again (no tanh, sin or exp
// where the program's derivative needs none). A kiln.while's run-time
// stack cannot leave its function: that VJP is refused with a message.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/HostTensor.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/Passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace mlir;
using ::kiln::HostTensor;

namespace {

struct Case {
  const char *name;
  const char *source;
  /// Ops the backward half must not contain (forward work done again).
  std::vector<std::string> notRecomputed;
};

const Case kCases[] = {
    {"layer", R"mlir(
func.func @layer(%w: tensor<5x4xf32>, %b: tensor<4xf32>, %x: tensor<3x5xf32>) -> tensor<3x4xf32> {
  %h = kiln.matmul %x, %w : tensor<3x5xf32>, tensor<5x4xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %s = kiln.add %h, %bb : tensor<3x4xf32>
  %t = kiln.tanh %s : tensor<3x4xf32>
  %e = kiln.exp %t : tensor<3x4xf32>
  %m = kiln.mul %e, %t : tensor<3x4xf32>
  return %m : tensor<3x4xf32>
}
)mlir",
     {"kiln.tanh", "kiln.exp"}},
    {"branches", R"mlir(
func.func @branches(%x: tensor<6xf64>, %y: tensor<6xf64>) -> tensor<f64> {
  %s = kiln.reduce_sum %x, dims = [0] : tensor<6xf64>
  %zero = kiln.constant dense<0.0> : tensor<f64>
  %p = kiln.compare gt, %s, %zero : tensor<f64>
  %r = kiln.cond %p, (%x, %y) : tensor<i1>, (tensor<6xf64>, tensor<6xf64>) -> (tensor<6xf64>) {
  ^bb0(%a: tensor<6xf64>, %b: tensor<6xf64>):
    %sa = kiln.sin %a : tensor<6xf64>
    %m = kiln.mul %sa, %b : tensor<6xf64>
    kiln.yield %m : tensor<6xf64>
  } else {
  ^bb0(%a: tensor<6xf64>, %b: tensor<6xf64>):
    %e = kiln.exp %a : tensor<6xf64>
    %m = kiln.mul %e, %b : tensor<6xf64>
    kiln.yield %m : tensor<6xf64>
  }
  %q = kiln.mul %r, %r : tensor<6xf64>
  %l = kiln.reduce_sum %q, dims = [0] : tensor<6xf64>
  return %l : tensor<f64>
}
)mlir",
     {}},
    {"rnn", R"mlir(
func.func @rnn(%h0: tensor<4xf64>, %w: tensor<4x4xf64>, %xs: tensor<5x4xf64>) -> tensor<f64> {
  %r:3 = kiln.for 5 iterations (%h0, %w, %xs) : (tensor<4xf64>, tensor<4x4xf64>, tensor<5x4xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf64>, %ww: tensor<4x4xf64>, %x: tensor<5x4xf64>):
    %xi = kiln.dynamic_slice %x[%i], size = 1 : tensor<5x4xf64>
    %hr = kiln.reshape %h : (tensor<4xf64>) -> tensor<1x4xf64>
    %m = kiln.matmul %hr, %ww : tensor<1x4xf64>, tensor<4x4xf64>
    %a = kiln.add %m, %xi : tensor<1x4xf64>
    %t = kiln.tanh %a : tensor<1x4xf64>
    %hn = kiln.reshape %t : (tensor<1x4xf64>) -> tensor<4xf64>
    kiln.yield %hn, %ww, %x : tensor<4xf64>, tensor<4x4xf64>, tensor<5x4xf64>
  }
  %s = kiln.mul %r#0, %r#0 : tensor<4xf64>
  %l = kiln.reduce_sum %s, dims = [0] : tensor<4xf64>
  return %l : tensor<f64>
}
)mlir",
     {"kiln.tanh"}},
};

class SplitVjpTest : public ::testing::Test {
protected:
  SplitVjpTest() {
    context.loadDialect<mlir::kiln::KilnDialect, func::FuncDialect>();
  }

  HostTensor random(Type type) {
    auto tensor = cast<RankedTensorType>(type);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> values(tensor.getNumElements());
    for (double &v : values)
      v = dist(rng);
    return HostTensor::fromFloats(tensor.getElementType(), tensor.getShape(),
                                  values);
  }

  static int count(func::FuncOp f, StringRef name) {
    int n = 0;
    f.walk([&](Operation *op) { n += op->getName().getStringRef() == name; });
    return n;
  }

  MLIRContext context;
  std::mt19937 rng{20261123};
};

TEST_F(SplitVjpTest, HalvesComputeTheVjp) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(c.source, ParserConfig(&context));
    ASSERT_TRUE(module);
    auto f = module->lookupSymbol<func::FuncOp>(c.name);
    FailureOr<func::FuncOp> vjp = mlir::kiln::buildGradient(f);
    ASSERT_TRUE(succeeded(vjp));
    FailureOr<mlir::kiln::SplitVjp> split =
        mlir::kiln::splitVjp(*vjp, 1, 1, "fwd", "bwd");
    ASSERT_TRUE(succeeded(split));
    ASSERT_TRUE(succeeded(verify(*module)));
    func::FuncOp fwd = split->forward, bwd = split->backward;
    unsigned numArgs = f.getNumArguments();
    EXPECT_EQ(fwd.getNumArguments(), numArgs);
    EXPECT_EQ(fwd.getNumResults(), 1 + split->numResiduals);
    EXPECT_EQ(bwd.getNumArguments(), numArgs + split->numResiduals + 1);
    EXPECT_EQ(bwd.getNumResults(), numArgs);
    EXPECT_GT(split->numResiduals, 0u);
    for (const std::string &op : c.notRecomputed) {
      EXPECT_GT(count(fwd, op), 0) << op;
      EXPECT_EQ(count(bwd, op), 0) << op << " computed again";
    }
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<HostTensor> inputs;
      for (Type type : f.getArgumentTypes())
        inputs.push_back(random(type));
      HostTensor dy = random(f.getResultTypes()[0]);
      std::vector<HostTensor> whole = inputs;
      whole.push_back(dy);
      auto want = ::kiln::evaluate(*vjp, whole);
      ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
      auto forward = ::kiln::evaluate(fwd, inputs);
      ASSERT_TRUE(static_cast<bool>(forward))
          << llvm::toString(forward.takeError());
      std::vector<HostTensor> backwardInputs = inputs;
      backwardInputs.insert(backwardInputs.end(), forward->begin() + 1,
                            forward->end());
      backwardInputs.push_back(dy);
      auto backward = ::kiln::evaluate(bwd, backwardInputs);
      ASSERT_TRUE(static_cast<bool>(backward))
          << llvm::toString(backward.takeError());
      EXPECT_EQ((*forward)[0].f, (*want)[0].f) << "primal result";
      for (unsigned i = 0; i < numArgs; ++i)
        EXPECT_EQ((*backward)[i].f, (*want)[1 + i].f)
            << "cotangent of argument #" << i;
    }
  }
}

TEST_F(SplitVjpTest, RefusesAWhileLoopsStack) {
  const char *source = R"mlir(
func.func @grow(%x: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%zero, %x, %n) : (tensor<i64>, tensor<3xf64>, tensor<i64>) cond {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>, %m: tensor<i64>):
    %c = kiln.compare lt, %i, %m : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>, %m: tensor<i64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.add %i, %one : tensor<i64>
    %t = kiln.tanh %h : tensor<3xf64>
    kiln.yield %j, %t, %m : tensor<i64>, tensor<3xf64>, tensor<i64>
  }
  return %r#1 : tensor<3xf64>
}
)mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("grow");
  FailureOr<func::FuncOp> vjp = mlir::kiln::buildGradient(f, {0});
  ASSERT_TRUE(succeeded(vjp));
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::kiln::splitVjp(*vjp, 1, 1, "fwd", "bwd")));
  EXPECT_NE(message.find("cannot split @grow_grad: its backward pass reads a "
                         "value of type 'tensor<?x3xf64>' (a kiln.while's stack)"),
            std::string::npos)
      << message;
  EXPECT_FALSE(module->lookupSymbol("fwd"));
}

} // namespace
