//===- OptimTest.cpp - SGD, Adam/AdamW and Adagrad of kiln/Optim.h --------===//
//
// Each test traces one optimizer step over two parameters ([2,3] and [4]),
// runs it several times with the reference evaluator, feeding the new
// parameters and state back in with fresh gradients, and compares every
// step with the textbook formulas evaluated here in double:
//
//   SGD:  d = g + wd p;  b = d (t = 1) or mu b + (1 - tau) d;
//         p -= lr (nesterov ? d + mu b : b)
//   Adam: m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//         p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//
// (with AdamW's p *= 1 - lr wd first, and AMSGrad's running max of v)
//
//   Adagrad: g = g + wd p;  s = s0 + g^2 (t = 1) or s + g^2;
//            p -= lr / (1 + (t - 1) decay) g / (sqrt(s) + eps).
//
// The formulas are applied to all elements at once, as one flat vector:
// the optimizers are elementwise.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include "kiln/Optim.h"

#include <cmath>
#include <functional>
#include <memory>
#include <set>

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;
namespace optim = kiln::optim;

namespace {

const kiln::Shape shape0 = {2, 3}, shape1 = {4};
constexpr size_t size0 = 6, total = 10;

/// The initial parameters, both flattened into one vector.
std::vector<double> initialParams() {
  return {0.5, -1.25, 2.0, 0.75, -0.3, 1.1, -2.5, 0.05, 1.6, -0.9};
}

/// The gradient of step `k` (0-based), element `j` of the flat vector:
/// varied magnitudes and both signs.
std::vector<double> gradientsAt(int k) {
  std::vector<double> g(total);
  for (size_t j = 0; j < total; ++j)
    g[j] = std::sin(1.3 * k + 0.7 * j + 0.2) * (0.3 + 0.15 * j);
  return g;
}

std::vector<double> head(const std::vector<double> &v) {
  return {v.begin(), v.begin() + size0};
}
std::vector<double> tail(const std::vector<double> &v) {
  return {v.begin() + size0, v.end()};
}

/// Rounds to the dtype, as the inputs of a run are.
std::vector<double> rounded(std::vector<double> v, DType dtype) {
  if (dtype == DType::F32)
    for (double &x : v)
      x = static_cast<float>(x);
  return v;
}

/// The expected parameters and slots (flat, in slotNames() order) after
/// one step, computed from the previous ones by the test's own formulas.
struct Expected {
  std::vector<double> params;
  std::vector<std::vector<double>> slots;
};
using ReferenceStep = std::function<void(
    Expected &, const std::vector<double> &grad, int t, double lr)>;

/// Runs `steps` steps of `opt` on the two parameters in `dtype` and checks
/// each against `reference`, starting from the zero state. `lrs`, when not
/// empty, gives each step's learning rate as a traced f64 input instead of
/// the optimizer's constant one.
void checkSteps(const optim::Optimizer &opt, DType dtype, int steps,
                const ReferenceStep &reference, double rtol,
                const std::vector<double> &lrs = {}) {
  const size_t numSlots = opt.slotNames().size();
  std::vector<kiln::TensorSpec> paramSpecs = {{dtype, shape0, "p0"},
                                              {dtype, shape1, "p1"}};
  std::vector<kiln::TensorSpec> stateSpecs = opt.stateSpecs(paramSpecs);
  ASSERT_EQ(stateSpecs.size(), 1 + 2 * numSlots);
  std::vector<kiln::TensorSpec> inputs = paramSpecs;
  inputs.push_back({dtype, shape0, "g0"});
  inputs.push_back({dtype, shape1, "g1"});
  inputs.insert(inputs.end(), stateSpecs.begin(), stateSpecs.end());
  const bool tracedLr = !lrs.empty();
  if (tracedLr)
    inputs.push_back({DType::F64, {}, "lr"});

  auto f = kiln::trace("step", inputs, [&](const Tensors &a) {
    Tensors params(a.begin(), a.begin() + 2),
        grads(a.begin() + 2, a.begin() + 4);
    Tensors state(a.begin() + 4, a.begin() + 4 + stateSpecs.size());
    optim::Update u =
        opt.step(params, grads, state, tracedLr ? a.back() : Tensor());
    Tensors out = u.params;
    out.insert(out.end(), u.state.begin(), u.state.end());
    return out;
  });

  Expected expected{rounded(initialParams(), dtype),
                    std::vector<std::vector<double>>(
                        numSlots, std::vector<double>(total, 0.0))};
  std::vector<double> params = expected.params;
  std::vector<std::vector<double>> slots = expected.slots;
  double count = 0;
  for (int k = 0; k < steps; ++k) {
    std::vector<double> grad = rounded(gradientsAt(k), dtype);
    std::vector<Data> data = {{dtype, shape0, head(params)},
                              {dtype, shape1, tail(params)},
                              {dtype, shape0, head(grad)},
                              {dtype, shape1, tail(grad)},
                              i64Data({}, {count})};
    // The layout is slot-major: slot k of parameter i is state[1 + 2k + i].
    for (const std::vector<double> &slot : slots) {
      data.push_back({dtype, shape0, head(slot)});
      data.push_back({dtype, shape1, tail(slot)});
    }
    if (tracedLr)
      data.push_back(f64Data({}, {lrs[k]}));
    std::vector<kiln::HostTensor> out = run(f, data);
    ASSERT_EQ(out.size(), 3 + 2 * numSlots) << "step " << k;

    reference(expected, grad, k + 1, tracedLr ? lrs[k] : opt.lr);
    SCOPED_TRACE("step " + std::to_string(k + 1));
    expectTensor(out[0], dtype, shape0, head(expected.params), rtol);
    expectTensor(out[1], dtype, shape1, tail(expected.params), rtol);
    expectTensor(out[2], DType::I64, {}, {count + 1});
    for (size_t s = 0; s < numSlots; ++s) {
      SCOPED_TRACE(opt.slotNames()[s]);
      expectTensor(out[3 + 2 * s], dtype, shape0, head(expected.slots[s]),
                   rtol);
      expectTensor(out[4 + 2 * s], dtype, shape1, tail(expected.slots[s]),
                   rtol);
    }

    // The next step starts from what kiln computed.
    params = values(out[0]);
    for (double v : values(out[1]))
      params.push_back(v);
    count = values(out[2])[0];
    for (size_t s = 0; s < numSlots; ++s) {
      slots[s] = values(out[3 + 2 * s]);
      for (double v : values(out[4 + 2 * s]))
        slots[s].push_back(v);
    }
  }
}

/// The reference SGD step.
ReferenceStep sgdReference(double momentum, double dampening, double wd,
                           bool nesterov, bool maximize) {
  return [=](Expected &e, const std::vector<double> &grad, int t, double lr) {
    for (size_t j = 0; j < total; ++j) {
      double d = (maximize ? -grad[j] : grad[j]) + wd * e.params[j];
      if (momentum != 0) {
        double &b = e.slots[0][j];
        b = t == 1 ? d : momentum * b + (1 - dampening) * d;
        d = nesterov ? d + momentum * b : b;
      }
      e.params[j] -= lr * d;
    }
  };
}

/// The reference Adam/AdamW step.
ReferenceStep adamReference(double beta1, double beta2, double eps, double wd,
                            bool decoupled, bool amsgrad) {
  return [=](Expected &e, const std::vector<double> &grad, int t, double lr) {
    for (size_t j = 0; j < total; ++j) {
      double &p = e.params[j];
      double g = grad[j];
      if (decoupled)
        p *= 1 - lr * wd;
      else
        g += wd * p;
      double &m = e.slots[0][j], &v = e.slots[1][j];
      m = beta1 * m + (1 - beta1) * g;
      v = beta2 * v + (1 - beta2) * g * g;
      double vUsed = v;
      if (amsgrad) {
        e.slots[2][j] = std::max(e.slots[2][j], v);
        vUsed = e.slots[2][j];
      }
      double mHat = m / (1 - std::pow(beta1, t));
      double vHat = vUsed / (1 - std::pow(beta2, t));
      p -= lr * mHat / (std::sqrt(vHat) + eps);
    }
  };
}

/// The reference Adagrad step (the sums start at zero in `e`; the first
/// step starts them from `initial`, as PyTorch's state_sum does).
ReferenceStep adagradReference(double lrDecay, double wd, double initial,
                               double eps, bool maximize) {
  return [=](Expected &e, const std::vector<double> &grad, int t, double lr) {
    double clr = lr / (1 + (t - 1) * lrDecay);
    for (size_t j = 0; j < total; ++j) {
      double &p = e.params[j];
      double g = (maximize ? -grad[j] : grad[j]) + wd * p;
      double &s = e.slots[0][j];
      s = (t == 1 ? initial : s) + g * g;
      p -= clr * g / (std::sqrt(s) + eps);
    }
  };
}

TEST(Optim, PlainSgd) {
  optim::Sgd sgd(0.1);
  EXPECT_TRUE(sgd.slotNames().empty());
  checkSteps(sgd, DType::F64, 4, sgdReference(0, 0, 0, false, false), 1e-13);
  checkSteps(sgd, DType::F32, 4, sgdReference(0, 0, 0, false, false), 1e-6);
}

TEST(Optim, SgdMomentumWithWeightDecay) {
  optim::Sgd sgd(0.05, /*momentum=*/0.9, /*dampening=*/0,
                 /*weightDecay=*/0.01);
  EXPECT_EQ(sgd.slotNames(), std::vector<std::string>{"momentum_buffer"});
  checkSteps(sgd, DType::F64, 5, sgdReference(0.9, 0, 0.01, false, false),
             1e-13);
}

TEST(Optim, SgdDampeningStartsFromTheFirstGradient) {
  // With dampening the first buffer is the gradient itself, not
  // (1 - dampening) times it.
  optim::Sgd sgd(0.05, 0.8, /*dampening=*/0.3);
  checkSteps(sgd, DType::F64, 5, sgdReference(0.8, 0.3, 0, false, false),
             1e-13);
  checkSteps(sgd, DType::F32, 5, sgdReference(0.8, 0.3, 0, false, false), 1e-6);
}

TEST(Optim, SgdNesterovMaximize) {
  optim::Sgd sgd(0.02, 0.9, 0, /*weightDecay=*/0.1, /*nesterov=*/true,
                 /*maximize=*/true);
  checkSteps(sgd, DType::F64, 5, sgdReference(0.9, 0, 0.1, true, true), 1e-13);
}

TEST(Optim, Adam) {
  optim::Adam adam(0.01);
  EXPECT_EQ(adam.slotNames(),
            (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
  checkSteps(adam, DType::F64, 6,
             adamReference(0.9, 0.999, 1e-8, 0, false, false), 1e-12);
  checkSteps(adam, DType::F32, 6,
             adamReference(0.9, 0.999, 1e-8, 0, false, false), 2e-6);
}

TEST(Optim, Adagrad) {
  optim::Adagrad adagrad(0.05);
  EXPECT_EQ(adagrad.slotNames(), (std::vector<std::string>{"sum"}));
  checkSteps(adagrad, DType::F64, 6,
             adagradReference(0, 0, 0, 1e-10, false), 1e-12);
  checkSteps(adagrad, DType::F32, 6,
             adagradReference(0, 0, 0, 1e-10, false), 2e-6);
}

TEST(Optim, AdagradDecayWeightDecayInitialSumMaximize) {
  optim::Adagrad adagrad(0.1, /*lrDecay=*/0.05, /*weightDecay=*/0.02,
                         /*initialAccumulatorValue=*/0.5, /*eps=*/1e-6,
                         /*maximize=*/true);
  checkSteps(adagrad, DType::F64, 6,
             adagradReference(0.05, 0.02, 0.5, 1e-6, true), 1e-12);
  checkSteps(adagrad, DType::F32, 6,
             adagradReference(0.05, 0.02, 0.5, 1e-6, true), 2e-6);
}

TEST(Optim, AdamL2WeightDecayAndOtherBetas) {
  optim::Adam adam(0.003, /*beta1=*/0.7, /*beta2=*/0.95, /*eps=*/1e-3,
                   /*weightDecay=*/0.05);
  checkSteps(adam, DType::F64, 6,
             adamReference(0.7, 0.95, 1e-3, 0.05, false, false), 1e-12);
}

TEST(Optim, AdamLerpBranchForSmallBeta1) {
  // beta1 < 0.5 makes the lerp weight >= 0.5, the other formula of lerp.
  optim::Adam adam(0.01, /*beta1=*/0.2, /*beta2=*/0.9);
  checkSteps(adam, DType::F64, 4,
             adamReference(0.2, 0.9, 1e-8, 0, false, false), 1e-12);
}

TEST(Optim, AdamWAmsgrad) {
  optim::Adam adamw = optim::Adam::adamW(0.01, 0.9, 0.99, 1e-8,
                                         /*weightDecay=*/0.1,
                                         /*amsgrad=*/true);
  EXPECT_TRUE(adamw.decoupled);
  EXPECT_EQ(adamw.slotNames(), (std::vector<std::string>{
                                   "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}));
  checkSteps(adamw, DType::F64, 8,
             adamReference(0.9, 0.99, 1e-8, 0.1, true, true), 1e-12);
  checkSteps(adamw, DType::F32, 8,
             adamReference(0.9, 0.99, 1e-8, 0.1, true, true), 2e-6);
}

TEST(Optim, TracedLearningRate) {
  // A schedule passed in as an input: one compiled step serves every lr.
  std::vector<double> lrs = {0.1, 0.05, 0.025, 0.2};
  optim::Sgd sgd(/*lr=*/1.0, 0.9);
  checkSteps(sgd, DType::F64, 4, sgdReference(0.9, 0, 0, false, false), 1e-13,
             lrs);
  optim::Adam adamw = optim::Adam::adamW(/*lr=*/1.0);
  checkSteps(adamw, DType::F64, 4,
             adamReference(0.9, 0.999, 1e-8, 0.01, true, false), 1e-12, lrs);
  checkSteps(adamw, DType::F32, 4,
             adamReference(0.9, 0.999, 1e-8, 0.01, true, false), 2e-6, lrs);
}

TEST(Optim, StateSpecsAndInit) {
  optim::Adam adam(1e-3, 0.9, 0.999, 1e-8, 0, /*amsgrad=*/true);
  std::vector<kiln::TensorSpec> specs =
      adam.stateSpecs({kiln::f32({2, 3}), kiln::f64({4})});
  ASSERT_EQ(specs.size(), 7u);
  EXPECT_EQ(adam.stateSize(2), 7u);
  EXPECT_EQ(specs[0], (kiln::TensorSpec{DType::I64, {}, "count"}));
  EXPECT_EQ(specs[1], (kiln::TensorSpec{DType::F32, {2, 3}, "exp_avg0"}));
  EXPECT_EQ(specs[2], (kiln::TensorSpec{DType::F64, {4}, "exp_avg1"}));
  EXPECT_EQ(specs[4], (kiln::TensorSpec{DType::F64, {4}, "exp_avg_sq1"}));
  EXPECT_EQ(specs[5],
            (kiln::TensorSpec{DType::F32, {2, 3}, "max_exp_avg_sq0"}));
  EXPECT_EQ(optim::Sgd(0.1).stateSize(3), 1u);

  auto f = kiln::trace("init", {kiln::f32({2, 3}), kiln::f64({4})},
                       [&](const Tensors &a) { return adam.init(a); });
  std::vector<kiln::HostTensor> out =
      run(f, {f32Data({2, 3}, {1, 2, 3, 4, 5, 6}), f64Data({4}, {1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 7u);
  expectTensor(out[0], DType::I64, {}, {0});
  for (size_t i = 1; i < 7; ++i) {
    bool first = i % 2 == 1;
    expectTensor(out[i], first ? DType::F32 : DType::F64,
                 first ? kiln::Shape{2, 3} : kiln::Shape{4},
                 std::vector<double>(first ? 6 : 4, 0.0));
  }
}

TEST(Optim, UpdatesAreElementwise) {
  // The contract the data-parallel rewrites rely on: an update is made of
  // elementwise ops, and the only broadcasts are of rank-0 step scalars.
  // An allow-list, so that a new kind of op in an update fails here.
  const std::set<std::string> elementwise = {
      "kiln.constant", "kiln.add",    "kiln.sub",  "kiln.mul",   "kiln.div",
      "kiln.neg",      "kiln.pow",    "kiln.sqrt", "kiln.max",   "kiln.cast",
      "kiln.compare",  "kiln.select", "func.func", "func.return"};
  std::vector<std::unique_ptr<optim::Optimizer>> optimizers;
  optimizers.push_back(std::make_unique<optim::Sgd>(0.1, 0.9, 0.1, 0.01));
  optimizers.push_back(
      std::make_unique<optim::Sgd>(0.1, 0.9, 0, 0.01, true, true));
  optimizers.push_back(std::make_unique<optim::Adam>(
      optim::Adam::adamW(1e-3, 0.9, 0.999, 1e-8, 0.01, true)));
  optimizers.push_back(std::make_unique<optim::Adam>(1e-3, 0.3, 0.999, 1e-8,
                                                     0.01, false, false, true));
  optimizers.push_back(
      std::make_unique<optim::Adagrad>(1e-2, 0.01, 0.01, 0.1, 1e-10, true));
  for (const auto &opt : optimizers) {
    size_t numSlots = opt->slotNames().size();
    std::vector<kiln::TensorSpec> specs = {kiln::f32({2, 3}), kiln::f32({2, 3}),
                                           kiln::i64({})};
    for (size_t s = 0; s < numSlots; ++s)
      specs.push_back(kiln::f32({2, 3}));
    specs.push_back(kiln::f32({}));
    auto f = kiln::trace("step", specs, [&](const Tensors &a) {
      Tensors state(a.begin() + 2, a.end() - 1);
      optim::Update u = opt->step({a[0]}, {a[1]}, state, a.back());
      Tensors out = u.params;
      out.insert(out.end(), u.state.begin(), u.state.end());
      return out;
    });
    expectVerifies(f);
    f.module().walk([&](mlir::Operation *op) {
      std::string name = op->getName().getStringRef().str();
      if (name == "builtin.module")
        return;
      if (name == "kiln.broadcast_in_dim") {
        auto type =
            mlir::cast<mlir::RankedTensorType>(op->getOperand(0).getType());
        EXPECT_EQ(type.getRank(), 0) << f.str();
        return;
      }
      EXPECT_TRUE(elementwise.count(name)) << name << "\n" << f.str();
    });
  }
}

TEST(Optim, Errors) {
  optim::Sgd sgd(0.1, 0.9);
  auto traceStep = [](const optim::Optimizer &opt,
                      std::vector<kiln::TensorSpec> specs, size_t numParams,
                      size_t numGrads) {
    return expectTraceError([&] {
      kiln::trace("step", specs, [&](const Tensors &a) {
        Tensors params(a.begin(), a.begin() + numParams);
        Tensors grads(a.begin() + numParams, a.begin() + numParams + numGrads);
        Tensors state(a.begin() + numParams + numGrads, a.end());
        return opt.step(params, grads, state).params;
      });
    });
  };
  EXPECT_NE(traceStep(sgd,
                      {kiln::f32({3}), kiln::f32({3}), kiln::f32({3}),
                       kiln::i64({}), kiln::f32({3})},
                      1, 2)
                .find("1 parameters but 2 gradients"),
            std::string::npos);
  EXPECT_NE(
      traceStep(sgd,
                {kiln::f32({3}), kiln::f32({2}), kiln::i64({}), kiln::f32({3})},
                1, 1)
          .find("gradient 0 is f32[2], its parameter f32[3]"),
      std::string::npos);
  EXPECT_NE(
      traceStep(sgd, {kiln::f32({3}), kiln::f32({3}), kiln::i64({})}, 1, 1)
          .find("has 2 tensors"),
      std::string::npos);
  EXPECT_NE(
      traceStep(sgd,
                {kiln::f32({3}), kiln::f32({3}), kiln::f32({}), kiln::f32({3})},
                1, 1)
          .find("the step count"),
      std::string::npos);
  EXPECT_NE(
      traceStep(sgd,
                {kiln::i32({3}), kiln::i32({3}), kiln::i64({}), kiln::i32({3})},
                1, 1)
          .find("optimizers update f32 and f64 parameters"),
      std::string::npos);
  EXPECT_NE(traceStep(optim::Sgd(0.1, 0, 0, 0, /*nesterov=*/true),
                      {kiln::f32({3}), kiln::f32({3}), kiln::i64({})}, 1, 1)
                .find("Nesterov momentum requires"),
            std::string::npos);
  EXPECT_NE(traceStep(optim::Adam(0.1, 0.9, 1.0),
                      {kiln::f32({3}), kiln::f32({3}), kiln::i64({}),
                       kiln::f32({3}), kiln::f32({3})},
                      1, 1)
                .find("beta1 and beta2 must be in [0, 1)"),
            std::string::npos);
  EXPECT_NE(traceStep(optim::Adagrad(0.1, /*lrDecay=*/-1.0),
                      {kiln::f32({3}), kiln::f32({3}), kiln::i64({}),
                       kiln::f32({3})},
                      1, 1)
                .find("lrDecay must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(traceStep(optim::Sgd(-0.1),
                      {kiln::f32({3}), kiln::f32({3}), kiln::i64({})}, 1, 1)
                .find("lr must be a finite number >= 0"),
            std::string::npos);
}

} // namespace

namespace {
/// One traced step of SGD (lr 0.5) under a LossScaler with initial scale 8
/// that grows every 2 clean steps: inputs p [3], the scaled gradient g [3],
/// the step count, the scale and the growth tracker; outputs p', count',
/// scale', tracker', skipped.
kiln::TracedFunction scaledSgdStep(const optim::LossScaler &scaler) {
  optim::Sgd sgd(0.5);
  std::vector<kiln::TensorSpec> inputs = {{DType::F32, {3}, "p"},
                                          {DType::F32, {3}, "g"}};
  for (const kiln::TensorSpec &spec : sgd.stateSpecs({{DType::F32, {3}, ""}}))
    inputs.push_back(spec);
  for (const kiln::TensorSpec &spec : scaler.stateSpecs())
    inputs.push_back(spec);
  return kiln::trace("scaled_step", inputs, [&](const Tensors &a) {
    optim::ScaledUpdate u =
        scaler.step(sgd, {a[0]}, {a[1]}, {a[2]}, {a[3], a[4]});
    return Tensors{u.params[0], u.state[0], u.scalerState[0],
                   u.scalerState[1], u.skipped};
  });
}
} // namespace

TEST(LossScaler, SkipsNonFiniteStepsAndGrowsAfterCleanOnes) {
  optim::LossScaler scaler(/*initScale=*/8, /*growthFactor=*/2,
                           /*backoffFactor=*/0.5, /*growthInterval=*/2);
  kiln::TracedFunction f = scaledSgdStep(scaler);
  const double inf = HUGE_VAL, nan = std::nan("");
  std::vector<double> p = {1, 2, 3};
  double count = 0, scale = 8, tracker = 0;
  struct Step {
    std::vector<double> scaledGrad;
    bool skipped;
    double scale, tracker;
  };
  // Clean, clean (the scale doubles and the tracker restarts), inf (the
  // update is skipped and the scale halves), NaN (again), clean.
  const Step steps[] = {{{8, -16, 4}, false, 8, 1},
                        {{16, 8, -8}, false, 16, 0},
                        {{1, inf, 1}, true, 8, 0},
                        {{nan, 0, 0}, true, 4, 0},
                        {{4, 4, -4}, false, 4, 1}};
  for (const Step &step : steps) {
    SCOPED_TRACE("step " + std::to_string(count + 1));
    std::vector<kiln::HostTensor> out =
        run(f, {f32Data({3}, p), f32Data({3}, step.scaledGrad),
                i64Data({}, {count}), f32Data({}, {scale}),
                i64Data({}, {tracker})});
    ASSERT_EQ(out.size(), 5u);
    std::vector<double> want = p;
    if (!step.skipped)
      for (size_t j = 0; j < 3; ++j)
        want[j] -= 0.5 * step.scaledGrad[j] / scale;
    expectTensor(out[0], DType::F32, {3}, want, 0);
    expectTensor(out[1], DType::I64, {}, {count + (step.skipped ? 0 : 1)});
    expectTensor(out[2], DType::F32, {}, {step.scale});
    expectTensor(out[3], DType::I64, {}, {step.tracker});
    expectTensor(out[4], DType::I1, {}, {step.skipped ? 1.0 : 0.0});
    p = values(out[0]);
    count = values(out[1])[0];
    scale = values(out[2])[0];
    tracker = values(out[3])[0];
  }
}

TEST(LossScaler, ScalesTheLossAndChecksItsArguments) {
  optim::LossScaler scaler(1024);
  auto f = kiln::trace("scaled_loss", {{DType::F32, {}, "loss"}},
                       [&](const Tensors &a) {
                         return scaler.scale(a[0], scaler.init());
                       });
  expectTensor(run(f, {f32Data({}, {0.75})})[0], DType::F32, {}, {768});
  EXPECT_NE(expectTraceError([&] {
              kiln::trace("bad_state", {{DType::F32, {}, "loss"}},
                          [&](const Tensors &a) {
                            return scaler.scale(a[0], {a[0], a[0]});
                          });
            }).find("the scaler state is {scale: f32 rank-0, "
                    "growth_tracker: i64 rank-0}"),
            std::string::npos);
  EXPECT_NE(expectTraceError([&] {
              optim::LossScaler(8, /*growthFactor=*/0.5).stateSpecs();
            }).find("growthFactor > 1"),
            std::string::npos);
}
