//===- GradientApiTest.cpp - buildGradient's contract and the rules table -===//
//
// The signature of derived functions (argument and result order, names,
// integer results), value_and_grad, zero gradients for arguments no
// gradient reaches, errors that leave the module unchanged, and the
// completeness of the VJP rules table.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Passes/Batching.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <set>

using kiln::HostTensor;

namespace {

class GradientApi : public ::testing::Test {
protected:
  GradientApi() {
    kiln::registerCompilerDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
        context.get(), [this](mlir::Diagnostic &diagnostic) {
          diagnostics += diagnostic.str() + "\n";
          return mlir::success();
        });
  }

  mlir::OwningOpRef<mlir::ModuleOp> parse(const char *source) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, context.get());
    EXPECT_TRUE(module) << diagnostics;
    return module;
  }

  /// Parses a program that several tests share, from
  /// test/unit/autodiff/Inputs.
  mlir::OwningOpRef<mlir::ModuleOp> parseInput(llvm::StringRef name) {
    std::string path = (llvm::Twine(KILN_TEST_INPUTS_DIR) + "/" + name).str();
    auto module = mlir::parseSourceFile<mlir::ModuleOp>(path, context.get());
    EXPECT_TRUE(module) << "cannot parse " << path << "\n" << diagnostics;
    return module;
  }

  /// A derivation that failed with `message` among the diagnostics and
  /// left `module` as printed in `before`.
  void expectFailure(mlir::FailureOr<mlir::func::FuncOp> result,
                     const char *message, mlir::ModuleOp module,
                     const std::string &before) {
    EXPECT_TRUE(mlir::failed(result));
    EXPECT_NE(diagnostics.find(message), std::string::npos)
        << "missing \"" << message << "\" in:\n"
        << diagnostics;
    EXPECT_EQ(print(module), before);
    diagnostics.clear();
  }

  static std::string print(mlir::Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }

  /// The kiln ops for which `has` is false, but kiln.fused and
  /// kiln.fused_kernel: fusion forms them after every transform (and the
  /// second exists only inside the backends' lowering).
  std::set<std::string>
  kilnOpsWithout(llvm::function_ref<bool(mlir::OperationName)> has) {
    std::set<std::string> missing;
    for (mlir::RegisteredOperationName name :
         context->getRegisteredOperations())
      if (name.getDialectNamespace() == "kiln" && !has(name))
        missing.insert(name.getStringRef().str());
    missing.erase("kiln.fused");
    missing.erase("kiln.fused_kernel");
    return missing;
  }

  static std::string nameOf(mlir::DictionaryAttr attrs) {
    auto name = attrs ? attrs.getAs<mlir::StringAttr>("kiln.name")
                      : mlir::StringAttr();
    return name ? name.getValue().str() : "";
  }

  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  std::string diagnostics;
};

TEST_F(GradientApi, SignatureOfTheGradientFunction) {
  auto module = parseInput("signature.mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  mlir::FailureOr<mlir::func::FuncOp> grad = mlir::kiln::buildGradient(f);
  ASSERT_TRUE(mlir::succeeded(grad)) << diagnostics;
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  EXPECT_EQ(grad->getName(), "f_grad");
  // Placed right after f.
  EXPECT_EQ(f->getNextNode(), grad->getOperation());
  // (x, n, w, d_loss) -> (loss, count, d_x, d_w): the integer result takes
  // no cotangent and the integer argument gets no gradient.
  ASSERT_EQ(grad->getNumArguments(), 4u);
  ASSERT_EQ(grad->getNumResults(), 4u);
  EXPECT_EQ(grad->getArgumentTypes()[3], f.getResultTypes()[0]);
  EXPECT_EQ(nameOf(grad->getArgAttrDict(3)), "d_loss");
  EXPECT_EQ(nameOf(grad->getResultAttrDict(0)), "loss");
  EXPECT_EQ(nameOf(grad->getResultAttrDict(1)), "count");
  EXPECT_EQ(nameOf(grad->getResultAttrDict(2)), "d_x");
  EXPECT_EQ(nameOf(grad->getResultAttrDict(3)), "d_w");
}

TEST_F(GradientApi, WrtOrderAndCustomName) {
  auto module = parseInput("signature.mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  auto grad = mlir::kiln::buildGradient(f, {2, 0}, "backward");
  ASSERT_TRUE(mlir::succeeded(grad)) << diagnostics;
  EXPECT_EQ(grad->getName(), "backward");
  ASSERT_EQ(grad->getNumResults(), 4u);
  EXPECT_EQ(nameOf(grad->getResultAttrDict(2)), "d_w");
  EXPECT_EQ(nameOf(grad->getResultAttrDict(3)), "d_x");

  // d(sum(x * w))/dw = x and /dx = w.
  std::vector<HostTensor> inputs = {
      HostTensor::fromFloats(mlir::Float32Type::get(context.get()), {4},
                             {1, 2, 3, 4}),
      HostTensor::fromInts(mlir::IntegerType::get(context.get(), 32), {}, {5}),
      HostTensor::fromFloats(mlir::Float32Type::get(context.get()), {4},
                             {-1, 0.5, 2, 0}),
      HostTensor::fromFloats(mlir::Float32Type::get(context.get()), {}, {2})};
  auto results = kiln::evaluate(*grad, inputs);
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  EXPECT_EQ((*results)[2].f, (std::vector<double>{2, 4, 6, 8}));
  EXPECT_EQ((*results)[3].f, (std::vector<double>{-2, 1, 4, 0}));
}

TEST_F(GradientApi, ValueAndGradSeedsOne) {
  auto module = parse(R"(
func.func @loss(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<f64> {
  %m = kiln.mul %x, %w : tensor<3xf64>
  %t = kiln.tanh %m : tensor<3xf64>
  %s = kiln.reduce_sum %t, dims = [0] : tensor<3xf64>
  return %s : tensor<f64>
}
)");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("loss");
  auto vg = mlir::kiln::buildValueAndGradient(f, {1});
  auto grad = mlir::kiln::buildGradient(f, {1});
  ASSERT_TRUE(mlir::succeeded(vg) && mlir::succeeded(grad)) << diagnostics;
  EXPECT_EQ(vg->getName(), "loss_value_and_grad");
  EXPECT_EQ(vg->getNumArguments(), 2u);
  ASSERT_EQ(vg->getNumResults(), 2u);
  mlir::Type f64 = mlir::Float64Type::get(context.get());
  std::vector<HostTensor> x = {
      HostTensor::fromFloats(f64, {3}, {0.5, -1, 2}),
      HostTensor::fromFloats(f64, {3}, {1.5, 0.25, -0.75})};
  std::vector<HostTensor> xAndOne = x;
  xAndOne.push_back(HostTensor::fromFloats(f64, {}, {1.0}));
  auto fromVg = kiln::evaluate(*vg, x);
  auto fromGrad = kiln::evaluate(*grad, xAndOne);
  ASSERT_TRUE(fromVg && fromGrad);
  EXPECT_EQ((*fromVg)[0].f, (*fromGrad)[0].f);
  EXPECT_EQ((*fromVg)[1].f, (*fromGrad)[1].f);
}

TEST_F(GradientApi, UnreachedArgumentsGetZeros) {
  auto module = parse(R"(
func.func @f(%x: tensor<3xf64>, %unused: tensor<2xf64>, %through_int: tensor<3xf64>) -> tensor<3xf64> {
  %i = kiln.cast %through_int : tensor<3xf64> to tensor<3xi64>
  %f = kiln.cast %i : tensor<3xi64> to tensor<3xf64>
  %r = kiln.mul %x, %f : tensor<3xf64>
  return %r : tensor<3xf64>
}
)");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  auto grad = mlir::kiln::buildGradient(f);
  ASSERT_TRUE(mlir::succeeded(grad)) << diagnostics;
  mlir::Type f64 = mlir::Float64Type::get(context.get());
  auto results = kiln::evaluate(
      *grad, {HostTensor::fromFloats(f64, {3}, {1, 2, 3}),
              HostTensor::fromFloats(f64, {2}, {4, 5}),
              HostTensor::fromFloats(f64, {3}, {1.5, -2.5, 3.5}),
              HostTensor::fromFloats(f64, {3}, {1, 1, 1})});
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  EXPECT_EQ((*results)[1].f, (std::vector<double>{1, -2, 3}));
  EXPECT_EQ((*results)[2].f, (std::vector<double>{0, 0}));
  EXPECT_EQ((*results)[3].f, (std::vector<double>{0, 0, 0}));
}

/// Ties split the gradient evenly, for max and for reduce_max.
TEST_F(GradientApi, TiesSplitEvenly) {
  auto module = parse(R"(
func.func @f(%x: tensor<4xf64>, %y: tensor<4xf64>) -> (tensor<4xf64>, tensor<f64>) {
  %m = kiln.max %x, %y : tensor<4xf64>
  %r = kiln.reduce_max %x, dims = [0] : tensor<4xf64>
  return %m, %r : tensor<4xf64>, tensor<f64>
}
)");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  auto grad = mlir::kiln::buildGradient(f);
  ASSERT_TRUE(mlir::succeeded(grad)) << diagnostics;
  mlir::Type f64 = mlir::Float64Type::get(context.get());
  auto results = kiln::evaluate(
      *grad, {HostTensor::fromFloats(f64, {4}, {3, 1, 3, 2}),
              HostTensor::fromFloats(f64, {4}, {3, 2, 0, 2}),
              HostTensor::fromFloats(f64, {4}, {0, 0, 0, 0}),
              HostTensor::fromFloats(f64, {}, {1})});
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  // Only reduce_max has a cotangent: x[0] and x[2] tie for the maximum.
  EXPECT_EQ((*results)[2].f, (std::vector<double>{0.5, 0, 0.5, 0}));
  EXPECT_EQ((*results)[3].f, (std::vector<double>{0, 0, 0, 0}));

  results = kiln::evaluate(
      *grad, {HostTensor::fromFloats(f64, {4}, {3, 1, 3, 2}),
              HostTensor::fromFloats(f64, {4}, {3, 2, 0, 2}),
              HostTensor::fromFloats(f64, {4}, {1, 1, 1, 1}),
              HostTensor::fromFloats(f64, {}, {0})});
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  // Only max has a cotangent: ties at positions 0 and 3.
  EXPECT_EQ((*results)[2].f, (std::vector<double>{0.5, 0, 1, 0.5}));
  EXPECT_EQ((*results)[3].f, (std::vector<double>{0.5, 1, 0, 0.5}));
}

/// Every rejected request names the problem and leaves the module as it was.
TEST_F(GradientApi, ErrorsLeaveTheModuleUnchanged) {
  auto module = parse(R"(
func.func private @helper(tensor<3xf64>) -> tensor<3xf64>
func.func @f(%x: tensor<3xf64>, %n: tensor<3xi32>) -> tensor<3xf64> {
  %r = func.call @helper(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %r : tensor<3xf64>
}
func.func @g(%x: tensor<3xf64>) -> tensor<3xf64> {
  %e = kiln.exp %x : tensor<3xf64>
  return %e : tensor<3xf64>
}
func.func @g_grad() {
  return
}
)");
  ASSERT_TRUE(module);
  std::string before = print(*module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  auto g = module->lookupSymbol<mlir::func::FuncOp>("g");
  auto expectError = [&](mlir::FailureOr<mlir::func::FuncOp> result,
                         const char *message) {
    expectFailure(result, message, *module, before);
  };
  expectError(mlir::kiln::buildGradient(f, {1}),
              "with respect to argument #1 of type 'tensor<3xi32>': only "
              "float tensors have gradients");
  expectError(mlir::kiln::buildGradient(f, {2}),
              "with respect to argument #2: it has 2 arguments");
  expectError(mlir::kiln::buildGradient(g, {0, 0}, "g_twice"),
              "argument #0 is listed twice in wrt");
  expectError(mlir::kiln::buildGradient(g), "cannot derive @g_grad from @g: "
                                            "the name is taken");
  expectError(mlir::kiln::buildValueAndGradient(g),
              "value-and-grad needs @g to return one rank-0 float tensor");
  // A call of a declaration: no body to differentiate through.
  expectError(mlir::kiln::buildGradient(f, {0}),
              "'func.call' op cannot be differentiated: there is no VJP rule "
              "for it");
}

/// Every kiln op has an entry in the rules table, except the region
/// terminator and the stack ops, which only derived gradients of kiln.while
/// contain (second derivatives through a while are not supported), and
/// the gradient ops of max pooling and attention (second derivatives of
/// either are not supported). A new op without a rule fails this test.
TEST_F(GradientApi, EveryKilnOpHasARule) {
  std::set<std::string> missing = kilnOpsWithout(mlir::kiln::hasVjpRule);
  EXPECT_EQ(missing,
            (std::set<std::string>{"kiln.attention_grad",
                                   "kiln.reduce_window_max_grad",
                                   "kiln.stack_empty", "kiln.stack_push",
                                   "kiln.stack_read", "kiln.stack_reserve",
                                   "kiln.yield"}));
}

/// Forward mode covers what reverse mode covers: an op with an entry in
/// the VJP table (a derivative or an explicit "none") has one in the JVP
/// table. Max pooling's gradient has a JVP rule although it has no VJP
/// rule, for Hessian-vector products of CNNs (forward over reverse).
TEST_F(GradientApi, EveryOpWithAVjpRuleHasAJvpRule) {
  std::set<std::string> missing, extra;
  for (mlir::RegisteredOperationName name :
       context->getRegisteredOperations()) {
    if (name.getDialectNamespace() != "kiln")
      continue;
    bool vjp = mlir::kiln::hasVjpRule(name);
    bool jvp = mlir::kiln::hasJvpRule(name);
    if (vjp && !jvp)
      missing.insert(name.getStringRef().str());
    if (jvp && !vjp)
      extra.insert(name.getStringRef().str());
  }
  EXPECT_EQ(missing, std::set<std::string>{});
  EXPECT_EQ(extra, std::set<std::string>{"kiln.reduce_window_max_grad"});
}

/// buildJvp's signature: one tangent per wrt argument after the
/// arguments, one per float result after the results, named after them.
TEST_F(GradientApi, SignatureOfTheJvpFunction) {
  auto module = parse(R"(
func.func @f(%x: tensor<4xf32> {kiln.name = "x"}, %n: tensor<4xi32>,
             %w: tensor<2xf64>) -> (tensor<4xf32> {kiln.name = "y"}, tensor<4xi32>) {
  %0 = kiln.cast %n : tensor<4xi32> to tensor<4xf32>
  %1 = kiln.mul %x, %0 : tensor<4xf32>
  return %1, %n : tensor<4xf32>, tensor<4xi32>
}
)");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  mlir::FailureOr<mlir::func::FuncOp> jvp = mlir::kiln::buildJvp(f);
  ASSERT_TRUE(mlir::succeeded(jvp));
  EXPECT_EQ(jvp->getName(), "f_jvp");
  std::string type;
  llvm::raw_string_ostream os(type);
  os << jvp->getFunctionType();
  EXPECT_EQ(type,
            "(tensor<4xf32>, tensor<4xi32>, tensor<2xf64>, tensor<4xf32>, "
            "tensor<2xf64>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>)");
  EXPECT_EQ(nameOf(jvp->getArgAttrDict(3)), "t_x");
  EXPECT_EQ(nameOf(jvp->getResultAttrDict(2)), "t_y");
  mlir::FailureOr<mlir::func::FuncOp> named =
      mlir::kiln::buildJvp(f, {2}, "f_dw");
  ASSERT_TRUE(mlir::succeeded(named));
  EXPECT_EQ(named->getNumArguments(), 4u);
}

/// Every kiln op that takes operands has a batching rule; ops without
/// operands (constants, iota, rank, an empty stack) are never batched, and
/// the region terminator is rewritten by its op's rule. A new op without a
/// rule fails this test.
TEST_F(GradientApi, EveryKilnOpHasABatchingRule) {
  std::set<std::string> missing = kilnOpsWithout(mlir::kiln::hasBatchingRule);
  EXPECT_EQ(missing,
            (std::set<std::string>{"kiln.constant", "kiln.iota", "kiln.rank",
                                   "kiln.stack_empty", "kiln.yield"}));
}

/// buildVmap's request checks, each leaving the module as it was.
TEST_F(GradientApi, VmapErrorsLeaveTheModuleUnchanged) {
  auto module = parse(R"(
func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %e = kiln.exp %x : tensor<3xf64>
  return %e, %w : tensor<3xf64>, tensor<3xf64>
}
)");
  ASSERT_TRUE(module);
  std::string before = print(*module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  using Axes = std::vector<std::optional<int64_t>>;
  auto expectError = [&](mlir::FailureOr<mlir::func::FuncOp> result,
                         const char *message) {
    expectFailure(result, message, *module, before);
  };
  expectError(mlir::kiln::buildVmap(f, Axes{2, std::nullopt}, Axes{0, 0}, 4),
              "argument #0 of rank 1 has batch axis 2, outside [0, 1]");
  expectError(mlir::kiln::buildVmap(f, Axes{0, 0}, Axes{0, -1}, 4),
              "result #1 of rank 1 has batch axis -1, outside [0, 1]");
  expectError(
      mlir::kiln::buildVmap(f, Axes{std::nullopt, std::nullopt}, Axes{0, 0},
                            4),
      "no argument is mapped");
  expectError(mlir::kiln::buildVmap(f, Axes{0, 0}, Axes{0, 0}, 0),
              "the batch size must be at least 1, got 0");
  expectError(mlir::kiln::buildVmap(f, Axes{0, std::nullopt},
                                    Axes{std::nullopt, std::nullopt}, 4),
              "result #0 depends on the mapped arguments, but its out axis "
              "is None");
  // An unmapped result that does not depend on the batch is fine, and so
  // is broadcasting one to a mapped out axis.
  mlir::FailureOr<mlir::func::FuncOp> vmap = mlir::kiln::buildVmap(
      f, Axes{0, std::nullopt}, Axes{1, std::nullopt}, 4);
  ASSERT_TRUE(mlir::succeeded(vmap));
  std::string type;
  llvm::raw_string_ostream os(type);
  os << vmap->getFunctionType();
  EXPECT_EQ(type, "(tensor<4x3xf64>, tensor<3xf64>) -> (tensor<3x4xf64>, "
                  "tensor<3xf64>)");
}

} // namespace
