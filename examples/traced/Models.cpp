//===- Models.cpp - Example models traced from C++ ------------------------===//

#include "Models.h"

#include <cmath>
#include <random>

using namespace kiln;

namespace {

/// A weight matrix with entries uniform in [-scale, scale].
Tensor weights(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  float scale = 1.0f / std::sqrt(static_cast<float>(rows));
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> values(rows * cols);
  for (float &v : values)
    v = dist(rng);
  return constant(values, {rows, cols});
}

Tensors mlp(const Tensors &inputs) {
  const Tensor &x = inputs[0];
  {
    Tensor hidden = relu(matmul(x, weights(64, 128, 1)) +
                         reshape(weights(1, 128, 2), {128}));
    Tensor logits =
        matmul(hidden, weights(128, 10, 3)) + reshape(weights(1, 10, 4), {10});
    return {softmax(logits, -1).named("probabilities")};
  }
}

Tensors rnn(const Tensors &inputs) {
  const Tensor &xs = inputs[0], &h0 = inputs[1];
  {
        Tensor wx = weights(8, 32, 5), wh = weights(32, 32, 6);
        Tensor bias = reshape(weights(1, 32, 7), {32});
        // wx, wh and bias are captured by the loop body; the tracer makes
        // them explicit operands of the kiln.for.
        Tensors final = fori_loop(
            0, 16,
            [&](const Tensor &t, const Tensors &carry) {
              Tensor xt = gather(xs, t); // xs[t]: [4, 8]
              return Tensors{tanh(matmul(xt, wx) + matmul(carry[0], wh) + bias)};
            },
            {h0});
        return {final[0].named("h")};
  }
}

Tensors powerIteration(const Tensors &inputs) {
  const Tensor &m = inputs[0];
  {
    Tensor a = matmul(m, transpose(m)); // symmetric positive semi-definite
    Tensor v0 = full({16, 1}, 0.25f);   // unit length
    Tensor delta0 = constant(1.0f);
    Tensor steps0 = constant(int64_t(0));
    Tensors result = while_loop(
        [](const Tensors &s) {
          return logical_and(greater(s[1], 1e-6f), less(s[2], int64_t(500)));
        },
        [&](const Tensors &s) {
          Tensor w = matmul(a, s[0]);
          Tensor next = w / sqrt(sum(w * w));
          Tensor delta = max(abs(next - s[0]));
          return Tensors{next, delta, s[2] + int64_t(1)};
        },
        {v0, delta0, steps0});
    Tensor v = result[0];
    Tensor eigenvalue = sum(v * matmul(a, v));
    return Tensors{eigenvalue.named("eigenvalue"), result[2].named("steps")};
  }
}

} // namespace

const std::vector<examples::ExampleModel> &examples::exampleModels() {
  static const std::vector<ExampleModel> models = {
      {"mlp", {f32({8, 64}, "x")}, mlp},
      {"rnn", {f32({16, 4, 8}, "xs"), f32({4, 32}, "h0")}, rnn},
      {"power_iteration", {f32({16, 16}, "m")}, powerIteration},
  };
  return models;
}

std::vector<float> examples::exampleInput(const TensorSpec &spec,
                                          unsigned index) {
  int64_t count = 1;
  for (int64_t dim : spec.shape)
    count *= dim;
  std::vector<float> values(count);
  for (int64_t k = 0; k < count; ++k)
    values[k] = std::sin(0.37f * static_cast<float>(k) + 1.3f * index);
  return values;
}
