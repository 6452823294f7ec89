//===- GradientCheck.cpp - Finite-difference checks of derived gradients --===//

#include "GradientCheck.h"

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Passes/Batching.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

using namespace kiln::autodiff_test;
using kiln::HostTensor;

namespace {


/// |a - b| / max(1, |b|).
double mixedError(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0.0
                                          : std::numeric_limits<double>::infinity();
  return std::fabs(a - b) / std::max(1.0, std::fabs(b));
}

} // namespace

//===----------------------------------------------------------------------===//
// GradientSuite
//===----------------------------------------------------------------------===//

GradientSuite::GradientSuite(const std::string &source,
                             const std::vector<Derivation> &derivations) {
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      context.get(), [&](mlir::Diagnostic &diagnostic) {
        diagnostics += diagnostic.str() + "\n";
        return mlir::success();
      });
  module = mlir::parseSourceString<mlir::ModuleOp>(source, context.get());
  if (!module) {
    failure = "cannot parse the test module:\n" + diagnostics;
    return;
  }
  for (const Derivation &derivation : derivations) {
    mlir::func::FuncOp f = lookup(derivation.function);
    if (!f) {
      failure = "no function @" + derivation.function;
      return;
    }
    std::vector<std::optional<int64_t>> inAxes;
    for (int64_t axis : derivation.inAxes)
      inAxes.push_back(axis < 0 ? std::nullopt : std::optional<int64_t>(axis));
    std::vector<std::optional<int64_t>> outAxes(f.getNumResults(), 0);
    mlir::FailureOr<mlir::func::FuncOp> derived =
        derivation.batch
            ? mlir::kiln::buildVmap(f, inAxes, outAxes, derivation.batch,
                                    derivation.derived)
        : derivation.forward
            ? mlir::kiln::buildJvp(f, derivation.wrt, derivation.derived)
        : derivation.valueAndGrad
            ? mlir::kiln::buildValueAndGradient(f, derivation.wrt,
                                                derivation.derived,
                                                derivation.checkpointEvery)
            : mlir::kiln::buildGradient(f, derivation.wrt, derivation.derived,
                                        derivation.checkpointEvery);
    if (mlir::failed(derived)) {
      failure = "cannot derive @" + derivation.derived + ":\n" + diagnostics;
      return;
    }
    if (mlir::failed(mlir::verify(*derived))) {
      failure = "@" + derivation.derived + " does not verify:\n" + diagnostics;
      return;
    }
  }
  native = std::make_unique<kiln::test::NativeModule>(*module);
  if (!native->ok())
    failure = "cannot compile the module: " + native->error() + "\n" +
              diagnostics;
}

GradientSuite::~GradientSuite() = default;

mlir::func::FuncOp GradientSuite::lookup(const std::string &name) {
  return module ? module->lookupSymbol<mlir::func::FuncOp>(name)
                : mlir::func::FuncOp();
}

std::vector<HostTensor>
GradientSuite::evaluate(const std::string &name,
                        const std::vector<HostTensor> &inputs) {
  mlir::func::FuncOp func = lookup(name);
  if (!func) {
    ADD_FAILURE() << "no function @" << name;
    return {};
  }
  auto results = kiln::evaluate(func, inputs);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return std::move(*results);
}

std::vector<HostTensor>
GradientSuite::runNative(const std::string &name,
                         const std::vector<HostTensor> &inputs) {
  mlir::func::FuncOp func = lookup(name);
  std::vector<HostTensor> results;
  std::string error;
  if (!func) {
    ADD_FAILURE() << "no function @" << name;
    return {};
  }
  if (!native || !native->call(name, func, inputs, results, error)) {
    ADD_FAILURE() << "native @" << name << ": " << error;
    return {};
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

HostTensor kiln::autodiff_test::randomTensor(mlir::RankedTensorType type,
                                             const Domain &domain,
                                             unsigned seed, unsigned salt) {
  std::mt19937 rng(seed * 7919u + salt * 104729u + 17u);
  HostTensor tensor(type.getElementType(), type.getShape());
  int64_t n = tensor.numElements();
  if (tensor.isFloat()) {
    std::uniform_real_distribution<double> dist(domain.low, domain.high);
    for (int64_t k = 0; k < n; ++k)
      tensor.f[k] = kiln::roundToFloat(tensor.kind(), dist(rng));
  } else if (type.getElementType().isInteger(1)) {
    std::uniform_int_distribution<int64_t> dist(0, 1);
    for (int64_t k = 0; k < n; ++k)
      tensor.i[k] = type.getRank() == 0 ? seed % 2 : dist(rng);
  } else {
    std::uniform_int_distribution<int64_t> dist(
        static_cast<int64_t>(domain.low), static_cast<int64_t>(domain.high));
    for (int64_t k = 0; k < n; ++k)
      tensor.i[k] = dist(rng);
  }
  return tensor;
}

/// The random inputs of seed `seed` for `f`'s arguments.
static std::vector<HostTensor>
randomInputs(mlir::func::FuncOp f, const std::map<unsigned, Domain> &domains,
             unsigned seed) {
  std::vector<HostTensor> inputs;
  for (auto [index, type] : llvm::enumerate(f.getArgumentTypes())) {
    auto domain = domains.find(index);
    inputs.push_back(randomTensor(
        mlir::cast<mlir::RankedTensorType>(type),
        domain == domains.end() ? Domain() : domain->second, seed, index));
  }
  return inputs;
}

/// Checks one run of a derived function: its native results against the
/// reference evaluator's (every float result), and its first `numResults`
/// results, the primal ones, against `function` itself on `inputs`.
/// Returns the largest native-vs-reference error.
static double checkDerivedRun(GradientSuite &suite,
                              const std::string &function,
                              const std::vector<HostTensor> &inputs,
                              unsigned numResults,
                              const std::vector<HostTensor> &reference,
                              const std::vector<HostTensor> &native) {
  double largest = 0.0;
  for (size_t r = 0; r < reference.size(); ++r) {
    if (!reference[r].isFloat())
      continue;
    bool isF32 = reference[r].kind() == kiln::ElementKind::F32;
    double limit = isF32 ? 1e-4 : 1e-9;
    for (int64_t k = 0; k < reference[r].numElements(); ++k) {
      double error = mixedError(native[r].f[k], reference[r].f[k]);
      largest = std::max(largest, error);
      EXPECT_LE(error, limit)
          << "result #" << r << " element " << k << ": native "
          << native[r].f[k] << ", reference " << reference[r].f[k];
    }
  }
  std::vector<HostTensor> primal = suite.evaluate(function, inputs);
  for (unsigned r = 0; r < numResults && r < primal.size(); ++r)
    for (int64_t k = 0; k < primal[r].numElements(); ++k)
      EXPECT_EQ(primal[r].getAsDouble(k), reference[r].getAsDouble(k))
          << "primal result #" << r << " element " << k;
  return largest;
}

/// One random cotangent, in [-1, 1], per float result of `f`.
static std::vector<HostTensor> randomCotangents(mlir::func::FuncOp f,
                                                unsigned seed) {
  std::vector<HostTensor> cotangents;
  for (auto [index, type] : llvm::enumerate(f.getResultTypes())) {
    auto tensorType = mlir::cast<mlir::RankedTensorType>(type);
    if (mlir::isa<mlir::FloatType>(tensorType.getElementType()))
      cotangents.push_back(
          randomTensor(tensorType, Domain{-1.0, 1.0}, seed, 1000 + index));
  }
  return cotangents;
}

/// <f(x), dy> over the float results, accumulated in double.
static double pairing(const std::vector<HostTensor> &results,
                      const std::vector<HostTensor> &cotangents) {
  double sum = 0.0;
  size_t next = 0;
  for (const HostTensor &result : results) {
    if (!result.isFloat())
      continue;
    const HostTensor &dy = cotangents[next++];
    for (int64_t k = 0; k < result.numElements(); ++k)
      sum += result.f[k] * dy.f[k];
  }
  return sum;
}

GradientErrors kiln::autodiff_test::checkGradient(GradientSuite &suite,
                                                  const GradientCheck &check) {
  GradientErrors errors;
  mlir::func::FuncOp f = suite.lookup(check.function);
  mlir::func::FuncOp g = suite.lookup(check.gradient);
  if (!f || !g) {
    ADD_FAILURE() << "missing @" << check.function << " or @" << check.gradient;
    return errors;
  }
  unsigned numResults = f.getNumResults();
  for (unsigned seed = 0; seed < check.seeds; ++seed) {
    SCOPED_TRACE("@" + check.gradient + ", seed " + std::to_string(seed));
    std::vector<HostTensor> inputs = randomInputs(f, check.domains, seed);
    std::vector<HostTensor> cotangents = randomCotangents(f, seed);
    std::vector<HostTensor> gradInputs = inputs;
    gradInputs.insert(gradInputs.end(), cotangents.begin(), cotangents.end());

    std::vector<HostTensor> reference = suite.evaluate(check.gradient, gradInputs);
    std::vector<HostTensor> native = suite.runNative(check.gradient, gradInputs);
    if (reference.size() != numResults + check.wrt.size() ||
        native.size() != reference.size()) {
      ADD_FAILURE() << "@" << check.gradient << " returned "
                    << reference.size() << " (reference) and " << native.size()
                    << " (native) values";
      return errors;
    }
    errors.nativeVsReference = std::max(
        errors.nativeVsReference,
        checkDerivedRun(suite, check.function, inputs, numResults, reference,
                        native));

    // Each derivative against its central difference.
    for (auto [position, argument] : llvm::enumerate(check.wrt)) {
      const HostTensor &dxReference = reference[numResults + position];
      const HostTensor &dxNative = native[numResults + position];
      for (int64_t k = 0; k < inputs[argument].numElements(); ++k) {
        std::vector<HostTensor> plus = inputs, minus = inputs;
        double x = inputs[argument].f[k];
        kiln::ElementKind kind = inputs[argument].kind();
        double up = kiln::roundToFloat(kind, x + check.step);
        double down = kiln::roundToFloat(kind, x - check.step);
        plus[argument].f[k] = up;
        minus[argument].f[k] = down;
        double fd = (pairing(suite.evaluate(check.function, plus), cotangents) -
                     pairing(suite.evaluate(check.function, minus), cotangents)) /
                    (up - down);
        double referenceError = mixedError(dxReference.f[k], fd);
        double nativeError = mixedError(dxNative.f[k], fd);
        errors.reference = std::max(errors.reference, referenceError);
        errors.native = std::max(errors.native, nativeError);
        EXPECT_LE(referenceError, check.tolerance)
            << "d/d(arg " << argument << ")[" << k << "]: derived "
            << dxReference.f[k] << ", finite difference " << fd;
        EXPECT_LE(nativeError, check.tolerance)
            << "d/d(arg " << argument << ")[" << k << "] (native): derived "
            << dxNative.f[k] << ", finite difference " << fd;
      }
    }
  }
  return errors;
}

JvpErrors kiln::autodiff_test::checkJvp(GradientSuite &suite,
                                        const JvpCheck &check) {
  JvpErrors errors;
  mlir::func::FuncOp f = suite.lookup(check.function);
  mlir::func::FuncOp jvp = suite.lookup(check.jvp);
  if (!f || !jvp) {
    ADD_FAILURE() << "missing @" << check.function << " or @" << check.jvp;
    return errors;
  }
  unsigned numResults = f.getNumResults();
  std::vector<unsigned> floatResults;
  for (auto [index, type] : llvm::enumerate(f.getResultTypes()))
    if (mlir::isa<mlir::FloatType>(
            mlir::cast<mlir::RankedTensorType>(type).getElementType()))
      floatResults.push_back(index);
  for (unsigned seed = 0; seed < check.seeds; ++seed) {
    SCOPED_TRACE("@" + check.jvp + ", seed " + std::to_string(seed));
    std::vector<HostTensor> inputs = randomInputs(f, check.domains, seed);
    std::vector<HostTensor> tangents;
    for (unsigned argument : check.wrt)
      tangents.push_back(randomTensor(
          mlir::cast<mlir::RankedTensorType>(f.getArgumentTypes()[argument]),
          Domain{-1.0, 1.0}, seed, 2000 + argument));
    // The points of the central difference along t. Rounded to the
    // arguments' precision they are not exactly x +- h t: the tangent is
    // taken as the step actually made, (x+ - x-) / 2h, so that the
    // difference measures J at the tangent handed to the JVP.
    std::vector<HostTensor> plus = inputs, minus = inputs;
    for (auto [position, argument] : llvm::enumerate(check.wrt))
      for (int64_t k = 0; k < inputs[argument].numElements(); ++k) {
        double x = inputs[argument].f[k], t = tangents[position].f[k];
        kiln::ElementKind kind = inputs[argument].kind();
        plus[argument].f[k] = kiln::roundToFloat(kind, x + check.step * t);
        minus[argument].f[k] = kiln::roundToFloat(kind, x - check.step * t);
        tangents[position].f[k] = kiln::roundToFloat(
            kind, (plus[argument].f[k] - minus[argument].f[k]) /
                      (2 * check.step));
      }
    std::vector<HostTensor> jvpInputs = inputs;
    jvpInputs.insert(jvpInputs.end(), tangents.begin(), tangents.end());

    std::vector<HostTensor> reference = suite.evaluate(check.jvp, jvpInputs);
    std::vector<HostTensor> native = suite.runNative(check.jvp, jvpInputs);
    if (reference.size() != numResults + floatResults.size() ||
        native.size() != reference.size()) {
      ADD_FAILURE() << "@" << check.jvp << " returned " << reference.size()
                    << " (reference) and " << native.size()
                    << " (native) values";
      return errors;
    }
    errors.nativeVsReference = std::max(
        errors.nativeVsReference,
        checkDerivedRun(suite, check.function, inputs, numResults, reference,
                        native));

    // J t against the central difference along t.
    std::vector<HostTensor> up = suite.evaluate(check.function, plus);
    std::vector<HostTensor> down = suite.evaluate(check.function, minus);
    if (up.size() != numResults || down.size() != numResults)
      return errors;
    for (auto [position, r] : llvm::enumerate(floatResults)) {
      const HostTensor &ty = reference[numResults + position];
      for (int64_t k = 0; k < ty.numElements(); ++k) {
        double fd = (up[r].f[k] - down[r].f[k]) / (2 * check.step);
        double error = mixedError(ty.f[k], fd);
        errors.finiteDifference = std::max(errors.finiteDifference, error);
        EXPECT_LE(error, check.tolerance)
            << "tangent of result #" << r << "[" << k << "]: derived "
            << ty.f[k] << ", finite difference " << fd;
      }
    }

    // <J t, w> against <t, J^T w>.
    if (check.gradient.empty())
      continue;
    std::vector<HostTensor> cotangents = randomCotangents(f, seed);
    std::vector<HostTensor> gradInputs = inputs;
    gradInputs.insert(gradInputs.end(), cotangents.begin(), cotangents.end());
    std::vector<HostTensor> gradient =
        suite.evaluate(check.gradient, gradInputs);
    if (gradient.size() != numResults + check.wrt.size()) {
      ADD_FAILURE() << "@" << check.gradient << " returned "
                    << gradient.size() << " values";
      return errors;
    }
    double forwardSide = pairing(
        {reference.begin() + numResults, reference.end()}, cotangents);
    double reverseSide = pairing(
        {gradient.begin() + numResults, gradient.end()}, tangents);
    double error = mixedError(forwardSide, reverseSide);
    errors.adjoint = std::max(errors.adjoint, error);
    EXPECT_LE(error, check.tolerance)
        << "<J t, w> = " << forwardSide << " but <t, J^T w> = "
        << reverseSide;
  }
  return errors;
}

/// Lane `lane` of a batched tensor (batch at dim 0).
static HostTensor laneOf(const HostTensor &batched, int64_t lane) {
  std::vector<int64_t> shape(batched.shape.begin() + 1, batched.shape.end());
  HostTensor one(batched.elementType, shape);
  int64_t n = one.numElements();
  for (int64_t k = 0; k < n; ++k) {
    if (one.isFloat())
      one.f[k] = batched.f[lane * n + k];
    else
      one.i[k] = batched.i[lane * n + k];
  }
  return one;
}

VmapErrors kiln::autodiff_test::checkVmap(GradientSuite &suite,
                                          const VmapCheck &check) {
  VmapErrors errors;
  mlir::func::FuncOp f = suite.lookup(check.function);
  mlir::func::FuncOp g = suite.lookup(check.vmap);
  if (!f || !g) {
    ADD_FAILURE() << "missing @" << check.function << " or @" << check.vmap;
    return errors;
  }
  for (unsigned seed = 0; seed < check.seeds; ++seed) {
    SCOPED_TRACE("@" + check.vmap + ", seed " + std::to_string(seed));
    std::vector<HostTensor> inputs =
        randomInputs(g, check.domains, seed + 11);
    std::vector<HostTensor> reference = suite.evaluate(check.vmap, inputs);
    std::vector<HostTensor> native = suite.runNative(check.vmap, inputs);
    if (reference.size() != f.getNumResults() ||
        native.size() != reference.size())
      return errors;
    for (int64_t lane = 0; lane < check.batch; ++lane) {
      std::vector<HostTensor> laneInputs;
      for (auto [index, input] : llvm::enumerate(inputs))
        laneInputs.push_back(check.mapped[index] ? laneOf(input, lane)
                                                 : input);
      std::vector<HostTensor> want = suite.evaluate(check.function,
                                                    laneInputs);
      for (size_t r = 0; r < want.size(); ++r) {
        HostTensor fromReference = laneOf(reference[r], lane);
        HostTensor fromNative = laneOf(native[r], lane);
        bool isF32 = want[r].kind() == kiln::ElementKind::F32;
        for (int64_t k = 0; k < want[r].numElements(); ++k) {
          double expected = want[r].getAsDouble(k);
          double referenceError =
              mixedError(fromReference.getAsDouble(k), expected);
          double nativeError = mixedError(fromNative.getAsDouble(k), expected);
          errors.reference = std::max(errors.reference, referenceError);
          errors.native = std::max(errors.native, nativeError);
          EXPECT_LE(referenceError, 1e-12)
              << "lane " << lane << ", result #" << r << " element " << k
              << ": batched " << fromReference.getAsDouble(k)
              << ", per lane " << expected;
          EXPECT_LE(nativeError, isF32 ? 1e-4 : 1e-9)
              << "lane " << lane << ", result #" << r << " element " << k
              << " (native): batched " << fromNative.getAsDouble(k)
              << ", per lane " << expected;
        }
      }
    }
  }
  return errors;
}

void kiln::autodiff_test::reportErrors(const std::string &what,
                                       const JvpErrors &errors) {
  std::printf("[ JVP-ERR  ] %-28s finite-difference %.3e  adjoint %.3e  "
              "native-vs-reference %.3e\n",
              what.c_str(), errors.finiteDifference, errors.adjoint,
              errors.nativeVsReference);
}

void kiln::autodiff_test::reportErrors(const std::string &what,
                                       const GradientErrors &errors) {
  std::printf("[ FD-ERR   ] %-28s reference %.3e  native %.3e  "
              "native-vs-reference %.3e\n",
              what.c_str(), errors.reference, errors.native,
              errors.nativeVsReference);
  std::ostringstream os;
  os.precision(3);
  os << std::scientific << errors.reference;
  ::testing::Test::RecordProperty("fd_error_reference", os.str());
  os.str("");
  os << errors.native;
  ::testing::Test::RecordProperty("fd_error_native", os.str());
}

std::vector<unsigned>
kiln::autodiff_test::floatArguments(mlir::func::FuncOp f) {
  std::vector<unsigned> indices;
  for (auto [index, type] : llvm::enumerate(f.getArgumentTypes()))
    if (mlir::isa<mlir::FloatType>(
            mlir::cast<mlir::RankedTensorType>(type).getElementType()))
      indices.push_back(index);
  return indices;
}

void kiln::autodiff_test::PrintTo(const FunctionCase &c, std::ostream *os) {
  *os << c.name;
}

std::unique_ptr<GradientSuite>
kiln::autodiff_test::buildCaseSuite(const std::vector<FunctionCase> &cases) {
  std::string source;
  std::vector<Derivation> derivations;
  for (const FunctionCase &c : cases) {
    source += c.source;
    derivations.push_back({c.name, c.name + "_grad", {}, false});
    Derivation jvp{c.name, c.name + "_jvp"};
    jvp.forward = true;
    derivations.push_back(jvp);
    // The argument count, from the signature's text: the module is not
    // parsed yet.
    size_t open = c.source.find('('), close = c.source.find(')', open);
    std::string params = c.source.substr(open, close - open);
    size_t count = std::count(params.begin(), params.end(), '%');
    Derivation all{c.name, c.name + "_vmap"};
    all.batch = 3;
    all.inAxes.assign(count, 0);
    derivations.push_back(all);
    if (count > 1) {
      Derivation first = all;
      first.derived = c.name + "_vmap_first";
      first.inAxes.assign(count, -1);
      first.inAxes[0] = 0;
      derivations.push_back(first);
    }
  }
  return std::make_unique<GradientSuite>(source, derivations);
}

/// A GradientCheck or JvpCheck of case `c`: its function, every float
/// argument, and the case's domains, step, tolerance and seeds.
template <typename Check>
static Check fromCase(GradientSuite &suite, const FunctionCase &c) {
  Check check;
  check.function = c.name;
  check.wrt = floatArguments(suite.lookup(c.name));
  check.domains = c.domains;
  check.step = c.step;
  check.tolerance = c.tolerance;
  check.seeds = c.seeds;
  return check;
}

void kiln::autodiff_test::checkCase(GradientSuite &suite,
                                    const FunctionCase &c) {
  ASSERT_EQ(suite.error(), "");
  GradientCheck check = fromCase<GradientCheck>(suite, c);
  check.gradient = c.name + "_grad";
  reportErrors(c.name, checkGradient(suite, check));
}

void kiln::autodiff_test::checkVmapCase(GradientSuite &suite,
                                        const FunctionCase &c) {
  ASSERT_EQ(suite.error(), "");
  mlir::func::FuncOp f = suite.lookup(c.name);
  unsigned count = f.getNumArguments();
  for (bool firstOnly : {false, true}) {
    if (firstOnly && count < 2)
      continue;
    VmapCheck check;
    check.function = c.name;
    check.vmap = c.name + (firstOnly ? "_vmap_first" : "_vmap");
    for (unsigned i = 0; i < count; ++i)
      check.mapped.push_back(!firstOnly || i == 0);
    check.domains = c.domains;
    VmapErrors errors = checkVmap(suite, check);
    std::printf("[ VMAP-ERR ] %-28s reference %.3e  native %.3e\n",
                check.vmap.c_str(), errors.reference, errors.native);
  }
}

std::unique_ptr<GradientSuite> kiln::autodiff_test::buildGradientVmapSuite(
    const std::vector<FunctionCase> &cases,
    const std::vector<int64_t> &gradientInAxes) {
  std::string source;
  std::vector<Derivation> derivations;
  for (const FunctionCase &c : cases) {
    source += c.source;
    derivations.push_back({c.name, c.name + "_grad", {}, false});
    Derivation vmap{c.name + "_grad", c.name + "_grad_vmap"};
    vmap.batch = 3;
    vmap.inAxes = gradientInAxes;
    derivations.push_back(vmap);
  }
  return std::make_unique<GradientSuite>(source, derivations);
}

void kiln::autodiff_test::checkGradientVmapCase(
    GradientSuite &suite, const FunctionCase &c,
    const std::vector<int64_t> &gradientInAxes) {
  ASSERT_EQ(suite.error(), "");
  VmapCheck check;
  check.function = c.name + "_grad";
  check.vmap = c.name + "_grad_vmap";
  for (int64_t axis : gradientInAxes)
    check.mapped.push_back(axis >= 0);
  check.domains = c.domains;
  VmapErrors errors = checkVmap(suite, check);
  std::printf("[ VMAP-ERR ] %-28s reference %.3e  native %.3e\n",
              check.vmap.c_str(), errors.reference, errors.native);
}

void kiln::autodiff_test::checkJvpCase(GradientSuite &suite,
                                       const FunctionCase &c) {
  ASSERT_EQ(suite.error(), "");
  JvpCheck check = fromCase<JvpCheck>(suite, c);
  check.jvp = c.name + "_jvp";
  check.gradient = c.name + "_grad";
  reportErrors(c.name, checkJvp(suite, check));
}
