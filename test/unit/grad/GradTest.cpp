//===- GradTest.cpp - kiln::grad against finite differences ---------------===//
//
// Every derived function is compiled to native code with kiln::jit and
// checked on random f64 inputs against central finite differences of the
// primal, itself compiled with kiln::jit (an independent path: no autodiff).
//
//===----------------------------------------------------------------------===//

#include "kiln/Jit.h"
#include "kiln/Vmap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kiln;

namespace {

Array randomF64(const Shape &shape, unsigned seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<double> values(n);
  for (double &v : values)
    v = dist(rng);
  return Array::from(DType::F64, shape, values);
}

Array copyOf(const Array &a) {
  Array b(a.dtype(), a.shape());
  std::memcpy(b.data(), a.data(), a.byteSize());
  return b;
}

/// Central differences of sum(cotangent * f(inputs)[output]) with respect
/// to input `argnum`, f evaluated by `primal`.
std::vector<double> finiteDifference(JitFunction &primal,
                                     const std::vector<Array> &inputs,
                                     unsigned argnum,
                                     const std::vector<Array> &cotangents) {
  const double h = 1e-6;
  std::vector<double> result(inputs[argnum].size());
  auto objective = [&](const std::vector<Array> &in) {
    std::vector<Array> out = primal(in);
    double total = 0;
    for (size_t k = 0; k < cotangents.size(); ++k)
      for (int64_t j = 0; j < out[k].size(); ++j)
        total += cotangents[k].at(j) * out[k].at(j);
    return total;
  };
  for (int64_t i = 0; i < inputs[argnum].size(); ++i) {
    std::vector<Array> plus = inputs, minus = inputs;
    plus[argnum] = copyOf(inputs[argnum]);
    minus[argnum] = copyOf(inputs[argnum]);
    plus[argnum].data<double>()[i] += h;
    minus[argnum].data<double>()[i] -= h;
    result[i] = (objective(plus) - objective(minus)) / (2 * h);
  }
  return result;
}

void expectClose(const Array &derived, const std::vector<double> &expected,
                 const char *what) {
  ASSERT_EQ(derived.size(), static_cast<int64_t>(expected.size())) << what;
  double scale = 1e-3;
  for (double e : expected)
    scale = std::max(scale, std::abs(e));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(derived.at(i), expected[i], 1e-6 * scale)
        << what << " element " << i;
}

Array ones(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return Array::from(DType::F64, shape, std::vector<double>(n, 1.0));
}

/// A two-layer perceptron's mean squared error; arguments w1, w2, x, y.
Tensor mlpLoss(const Tensors &a) {
  Tensor hidden = tanh(matmul(a[2], a[0]));
  Tensor err = matmul(hidden, a[1]) - a[3];
  return mean(err * err);
}

/// An Elman RNN over the rows of xs (a fori_loop), then a squared norm;
/// arguments wx, wh, xs, h0.
Tensor rnnLoss(const Tensors &a) {
  const Tensor &wx = a[0], &wh = a[1], &xs = a[2];
  Tensors h = fori_loop(
      0, xs.shape()[0],
      [&](const Tensor &t, const Tensors &carry) {
        return Tensors{tanh(matmul(gather(xs, t), wx) + matmul(carry[0], wh))};
      },
      {a[3]});
  return sum(h[0] * h[0]);
}

/// A loss with a data-dependent branch; arguments x, w.
Tensor condLoss(const Tensors &a) {
  Tensor s = sum(a[0] * a[1]);
  Tensors r = cond(
      s > 0.0, [&]() { return Tensors{sum(exp(a[0]) * a[1])}; },
      [&]() { return Tensors{sum(sin(a[1] * a[1]))}; });
  return r[0];
}

void checkGrad(const char *name, Tensor (*loss)(const Tensors &),
               const std::vector<Array> &inputs, std::vector<int> argnums) {
  JitFunction primal = jit(std::string(name) + "_primal", loss);
  JitFunction g = jit(std::string(name) + "_grad", grad(loss, argnums));
  JitFunction vg =
      jit(std::string(name) + "_vg", value_and_grad(loss, argnums));
  std::vector<Array> grads = g(inputs);
  std::vector<Array> valueAndGrads = vg(inputs);
  ASSERT_EQ(grads.size(), argnums.size());
  ASSERT_EQ(valueAndGrads.size(), argnums.size() + 1);
  EXPECT_NEAR(valueAndGrads[0].at(0), primal(inputs)[0].at(0), 1e-12);
  for (size_t k = 0; k < argnums.size(); ++k) {
    EXPECT_EQ(grads[k].shape(), inputs[argnums[k]].shape());
    std::vector<double> fd =
        finiteDifference(primal, inputs, argnums[k], {ones({})});
    expectClose(grads[k], fd, "grad");
    expectClose(valueAndGrads[k + 1], fd, "value_and_grad");
  }
}

TEST(Grad, MlpMatchesFiniteDifferences) {
  checkGrad("mlp", mlpLoss,
            {randomF64({5, 7}, 1), randomF64({7, 3}, 2), randomF64({4, 5}, 3),
             randomF64({4, 3}, 4)},
            {0, 1});
}

TEST(Grad, ArgnumsSelectAndOrderTheGradients) {
  // Gradients come back in argnums order, also for inputs that are data.
  checkGrad("mlp_x", mlpLoss,
            {randomF64({5, 7}, 5), randomF64({7, 3}, 6), randomF64({4, 5}, 7),
             randomF64({4, 3}, 8)},
            {2, 0});
}

TEST(Grad, RnnThroughForiLoopMatchesFiniteDifferences) {
  checkGrad("rnn", rnnLoss,
            {randomF64({3, 6}, 11, 0.5), randomF64({6, 6}, 12, 0.5),
             randomF64({5, 2, 3}, 13), randomF64({2, 6}, 14)},
            {0, 1, 3});
}

TEST(Grad, CondTakesBothBranches) {
  // Seeds whose sum(x * w) have opposite signs cover both branches.
  int positive = 0, negative = 0;
  for (unsigned seed = 20; seed < 40 && (!positive || !negative); seed += 2) {
    std::vector<Array> inputs = {randomF64({6}, seed),
                                 randomF64({6}, 1000 + 37 * seed)};
    double s = 0;
    for (int i = 0; i < 6; ++i)
      s += inputs[0].at(i) * inputs[1].at(i);
    if ((s > 0 && positive) || (s <= 0 && negative))
      continue;
    (s > 0 ? positive : negative)++;
    checkGrad("cond", condLoss, inputs, {0, 1});
  }
  EXPECT_TRUE(positive && negative);
}

TEST(Grad, VjpWithCotangentMatchesFiniteDifferences) {
  // f(w, x) = (tanh(x w), sum(x)) with random cotangents for both outputs.
  auto f = [](const Tensor &w, const Tensor &x) {
    return Tensors{tanh(matmul(x, w)), sum(x * x, 1)};
  };
  std::vector<Array> inputs = {randomF64({4, 3}, 31), randomF64({2, 4}, 32)};
  std::vector<Array> dys = {randomF64({2, 3}, 33), randomF64({2}, 34)};
  JitFunction primal = jit("vjp_primal", f);
  JitFunction pullback = jit("vjp", [&](const Tensors &a) {
    return vjp(f, {0, 1})({a[0], a[1]}, {a[2], a[3]});
  });
  std::vector<Array> args = inputs;
  args.insert(args.end(), dys.begin(), dys.end());
  std::vector<Array> out = pullback(args);
  ASSERT_EQ(out.size(), 4u);
  std::vector<Array> y = primal(inputs);
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < y[k].size(); ++i)
      EXPECT_NEAR(out[k].at(i), y[k].at(i), 1e-12);
  expectClose(out[2], finiteDifference(primal, inputs, 0, dys), "dw");
  expectClose(out[3], finiteDifference(primal, inputs, 1, dys), "dx");
}

TEST(Grad, VjpIntegerOutputsTakeNoCotangent) {
  // f(x) = (count of positives: i32, 3 * x): one cotangent, for 3 * x.
  auto f = [](const Tensor &x) {
    return Tensors{sum(cast(x > 0.0, DType::I32)), x * 3.0};
  };
  JitFunction pullback = jit("vjp_int", [&](const Tensor &x, const Tensor &dy) {
    return vjp(f)({x}, {dy});
  });
  Array x = randomF64({5}, 81), dy = randomF64({5}, 82);
  std::vector<Array> out = pullback({x, dy});
  ASSERT_EQ(out.size(), 3u);
  int positives = 0;
  for (int i = 0; i < 5; ++i)
    positives += x.at(i) > 0;
  EXPECT_EQ(out[0].dtype(), DType::I32);
  EXPECT_EQ(out[0].at(0), positives);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(out[1].at(i), 3 * x.at(i));
    EXPECT_NEAR(out[2].at(i), 3 * dy.at(i), 1e-15);
  }
}

TEST(Grad, TransformsOfATracedFunction) {
  TracedFunction f = trace("loss", {f64({5, 7}, "w1"), f64({7, 3}, "w2"),
                                    f64({4, 5}, "x"), f64({4, 3}, "y")},
                           mlpLoss);
  TracedFunction g = grad(f, {1});
  EXPECT_EQ(g.name(), "loss_grad");
  ASSERT_EQ(g.outputSpecs().size(), 1u);
  EXPECT_EQ(g.outputSpecs()[0].name, "dw2");
  TracedFunction vg = value_and_grad(f, {0, 1});
  EXPECT_EQ(vg.outputSpecs()[0].name, f.outputSpecs()[0].name);
  TracedFunction pb = vjp(f, {0});
  ASSERT_EQ(pb.inputSpecs().size(), 5u);
  EXPECT_EQ(pb.inputSpecs()[4].shape, Shape{});

  std::vector<Array> inputs = {randomF64({5, 7}, 41), randomF64({7, 3}, 42),
                               randomF64({4, 5}, 43), randomF64({4, 3}, 44)};
  JitFunction primal = jit("loss", mlpLoss);
  std::vector<Array> dw2 = compile(g)(inputs);
  expectClose(dw2[0], finiteDifference(primal, inputs, 1, {ones({})}), "dw2");
  std::vector<Array> withDy = inputs;
  withDy.push_back(Array::from(DType::F64, {}, std::vector<double>{-2.5}));
  std::vector<Array> pulled = compile(pb)(withDy);
  expectClose(pulled[1],
              finiteDifference(primal, inputs, 0, {withDy[4]}), "vjp dw1");
}

TEST(Grad, TrainingStepIsOneFunction) {
  // value_and_grad inside a traced step: loss, backward and the SGD update
  // are one function, and its update equals w - lr * grad.
  auto step = [](const Tensors &a) {
    Tensors vg = value_and_grad(mlpLoss, {0, 1})(a);
    return Tensors{vg[0], a[0] - 0.5 * vg[1], a[1] - 0.5 * vg[2]};
  };
  TracedFunction traced = trace("step", {f64({5, 7}), f64({7, 3}),
                                         f64({4, 5}), f64({4, 3})},
                                step);
  int functions = 0, calls = 0;
  traced.module().walk([&](mlir::Operation *op) {
    functions += llvm::isa<mlir::func::FuncOp>(op);
    calls += op->getName().getStringRef() == "func.call";
  });
  EXPECT_EQ(functions, 1);
  EXPECT_EQ(calls, 0);

  std::vector<Array> inputs = {randomF64({5, 7}, 51), randomF64({7, 3}, 52),
                               randomF64({4, 5}, 53), randomF64({4, 3}, 54)};
  std::vector<Array> out = compile(traced)(inputs);
  std::vector<Array> grads = jit("g", grad(mlpLoss, {0, 1}))(inputs);
  JitFunction primal = jit("loss", mlpLoss);
  EXPECT_NEAR(out[0].at(0), primal(inputs)[0].at(0), 1e-12);
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < inputs[k].size(); ++i)
      EXPECT_NEAR(out[k + 1].at(i), inputs[k].at(i) - 0.5 * grads[k].at(i),
                  1e-12);
  // And the loss goes down.
  EXPECT_LT(primal({out[1], out[2], inputs[2], inputs[3]})[0].at(0),
            out[0].at(0));
}

TEST(Grad, GradInsideControlFlow) {
  // A gradient taken inside a fori_loop body: plain gradient descent on
  // sum((w - t)^2) for 3 steps of rate 0.25 gives t + (w - t) * 0.5^3.
  auto sq = [](const Tensor &w, const Tensor &t) {
    Tensor d = w - t;
    return sum(d * d);
  };
  JitFunction descend = jit("descend", [&](const Tensor &w, const Tensor &t) {
    return fori_loop(
        0, 3,
        [&](const Tensor &, const Tensor &cur) {
          return cur - 0.25 * grad(sq)({cur, t})[0];
        },
        {w});
  });
  Array w = randomF64({4}, 61), t = randomF64({4}, 62);
  Array out = descend({w, t})[0];
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(out.at(i), t.at(i) + (w.at(i) - t.at(i)) * 0.125, 1e-12);
}

TEST(Grad, ClosuresOverTheEnclosingTrace) {
  // The loss uses x and t of the enclosing trace without taking them as
  // arguments: d/dw sum(w * x - t) = x, also from inside a loop body.
  JitFunction f = jit("closure", [](const Tensor &w, const Tensor &x,
                                    const Tensor &t) {
    Tensors direct = grad([&](const Tensor &v) { return sum(v * x - t); })({w});
    Tensors looped = fori_loop(
        0, 2,
        [&](const Tensor &, const Tensor &acc) {
          return acc + grad([&](const Tensor &v) { return sum(v * x); })({w})[0];
        },
        {zeros({4}, DType::F64)});
    return Tensors{direct[0], looped[0]};
  });
  Array w = randomF64({4}, 81), x = randomF64({4}, 82), t = randomF64({4}, 83);
  std::vector<Array> out = f({w, x, t});
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(out[0].at(i), x.at(i), 1e-12);
    EXPECT_NEAR(out[1].at(i), 2 * x.at(i), 1e-12);
  }
}

TEST(Grad, NestedClosuresAreDifferentiated) {
  // d/dx [d/dy sum(x * y^2) at y = x] = d/dx sum(2 x^2) = 4 x: the inner
  // gradient captures x, and the outer one differentiates through it.
  JitFunction f = jit("nested", grad([](const Tensor &x) {
                        return sum(grad([&](const Tensor &y) {
                          return sum(x * y * y);
                        })({x})[0]);
                      }));
  Array x = randomF64({3}, 91);
  Array out = f({x})[0];
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(out.at(i), 4 * x.at(i), 1e-12);
}

TEST(Grad, SecondDerivative) {
  // d/dx of (d/dx sum(x^3)) summed = 6 x.
  auto cube = [](const Tensor &x) { return sum(x * x * x); };
  JitFunction second = jit("second", grad([&](const Tensor &x) {
                             return sum(grad(cube)({x})[0]);
                           }));
  Array x = randomF64({5}, 71);
  Array out = second({x})[0];
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(out.at(i), 6 * x.at(i), 1e-12);
}

TEST(Grad, JvpOfATracedLambdaAndOfATracedFunction) {
  // f(w, x) = (tanh(w * x), sum(w)): along (tw, 0),
  // J t = ((1 - tanh^2(w x)) x tw, sum(tw)).
  auto f = [](const Tensor &w, const Tensor &x) {
    return Tensors{tanh(w * x), sum(w)};
  };
  JitFunction forward = jit("forward", [&](const Tensors &a) {
    return jvp(f, {0})({a[0], a[1]}, {a[2]});
  });
  Array w = randomF64({4}, 11), x = randomF64({4}, 12), t = randomF64({4}, 13);
  std::vector<Array> out = forward({w, x, t});
  ASSERT_EQ(out.size(), 4u);
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    double y = std::tanh(w.at(i) * x.at(i));
    EXPECT_NEAR(out[0].at(i), y, 1e-12);
    EXPECT_NEAR(out[2].at(i), (1 - y * y) * x.at(i) * t.at(i), 1e-12);
    total += t.at(i);
  }
  EXPECT_NEAR(out[3].at(0), total, 1e-12);

  // The same on a TracedFunction: tangent inputs and outputs are named.
  TracedFunction traced =
      trace("f", {f64({4}, "w"), f64({4}, "x")}, [&](const Tensors &a) {
        Tensors r = f(a[0], a[1]);
        return Tensors{r[0].named("y"), r[1].named("s")};
      });
  TracedFunction derived = jvp(traced, {0});
  ASSERT_EQ(derived.inputSpecs().size(), 3u);
  EXPECT_EQ(derived.inputSpecs()[2].name, "tw");
  ASSERT_EQ(derived.outputSpecs().size(), 4u);
  EXPECT_EQ(derived.outputSpecs()[2].name, "ty");
  EXPECT_EQ(derived.outputSpecs()[3].name, "ts");
  std::vector<Array> compiled = compile(derived)({w, x, t});
  ASSERT_EQ(compiled.size(), 4u);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(compiled[2].at(i), out[2].at(i), 1e-12);
}

TEST(Grad, HessianVectorProductIsForwardOverReverse) {
  // loss(w) = sum(w^4): H v = 12 w^2 v.
  auto loss = [](const Tensor &w) { return sum(w * w * w * w); };
  JitFunction hvp = jit("hvp", [&](const Tensors &a) {
    return jvp(grad(loss), {0})({a[0]}, {a[1]});
  });
  Array w = randomF64({5}, 21), v = randomF64({5}, 22);
  std::vector<Array> out = hvp({w, v});
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(out[0].at(i), 4 * std::pow(w.at(i), 3), 1e-12);
    EXPECT_NEAR(out[1].at(i), 12 * w.at(i) * w.at(i) * v.at(i), 1e-12);
  }
}

TEST(Grad, PerExampleGradientsWithVmap) {
  // d/dw sum(tanh(x w)) for each row x of xs: (1 - tanh^2(x w)) x, one
  // row per example, from one batched function.
  auto loss = [](const Tensor &w, const Tensor &x) {
    return sum(tanh(matmul(x, w)));
  };
  JitFunction perExample = jit("per_example", [&](const Tensors &a) {
    return vmap(grad(loss, {0}), {std::nullopt, 0})({a[0], a[1]});
  });
  Array w = randomF64({3, 1}, 31), xs = randomF64({4, 1, 3}, 32);
  std::vector<Array> out = perExample({w, xs});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (Shape{4, 3, 1}));
  for (int b = 0; b < 4; ++b) {
    double z = 0;
    for (int k = 0; k < 3; ++k)
      z += xs.at(b * 3 + k) * w.at(k);
    double slope = 1 - std::tanh(z) * std::tanh(z);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(out[0].at(b * 3 + k), slope * xs.at(b * 3 + k), 1e-12);
  }
}

TEST(Grad, CheckpointRecomputesInTheBackwardPass) {
  // d/dx sum(sin(x)^2) = 2 sin(x) cos(x), with sin recomputed.
  auto f = [](const Tensor &x) { return sin(x) * sin(x); };
  TracedFunction traced = trace("loss", {f64({5}, "x")}, [&](const Tensors &a) {
    return Tensors{sum(checkpoint(f)({a[0]})[0])};
  });
  TracedFunction derived = grad(traced, {0});
  std::string text = derived.str();
  EXPECT_NE(text.find("kiln.recompute"), std::string::npos) << text;
  Array x = randomF64({5}, 51);
  std::vector<Array> out = compile(derived)({x});
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(out[0].at(i), 2 * std::sin(x.at(i)) * std::cos(x.at(i)),
                1e-12);
}

} // namespace
