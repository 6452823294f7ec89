//===- export_gradients.cpp - kiln gradients of two models, as .npy -------===//
//
// Writes, for an MLP and an Elman RNN (tanh cell, fori_loop), random inputs
// and weights and the loss and gradients kiln computes for them, each
// derived with kiln::value_and_grad and compiled natively with kiln::jit.
// compare_torch.py recomputes the gradients with torch autograd from the
// same files.
//
// Usage: export_gradients --dtype f32|f64 --out DIR
// Files: <model>_<input>.npy for every input, <model>_loss.npy and
// <model>_grad_<input>.npy for every differentiated input.
//
//===----------------------------------------------------------------------===//

#include "kiln/Jit.h"
#include "kiln/Npy.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace kiln;

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "export_gradients: %s\n", message.c_str());
  std::exit(2);
}

void writeNpy(const std::string &path, const Array &array) {
  npy::Array a;
  a.type = array.dtype() == DType::F32 ? npy::ElementType::F32
                                       : npy::ElementType::F64;
  a.shape = array.shape();
  const auto *bytes = static_cast<const uint8_t *>(array.data());
  a.data.assign(bytes, bytes + array.byteSize());
  std::string error;
  if (!npy::writeNpyFile(path, a, error))
    die(error);
}

Array randomArray(DType dtype, Shape shape, std::mt19937 &rng, double scale) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(rng);
  if (dtype == DType::F64)
    return Array::from(dtype, std::move(shape), v);
  return Array::from(dtype, std::move(shape),
                     std::vector<float>(v.begin(), v.end()));
}

/// Softmax cross-entropy of a tanh MLP; inputs w1, b1, w2, b2, x, onehot.
Tensor mlpLoss(const Tensors &a) {
  Tensor hidden = tanh(matmul(a[4], a[0]) + a[1]);
  Tensor z = matmul(hidden, a[2]) + a[3];
  return -mean(sum(a[5] * log_softmax(z, -1), 1));
}

/// An Elman RNN over xs [T, B, I] from h0, then a linear readout and the
/// mean squared error against targets; inputs wx, wh, b, wo, xs, h0,
/// targets.
Tensor rnnLoss(const Tensors &a) {
  const Tensor &wx = a[0], &wh = a[1], &b = a[2], &xs = a[4];
  Tensors h = fori_loop(
      0, xs.shape()[0],
      [&](const Tensor &t, const Tensors &carry) {
        return Tensors{
            tanh(matmul(gather(xs, t), wx) + matmul(carry[0], wh) + b)};
      },
      {a[5]});
  Tensor err = matmul(h[0], a[3]) - a[6];
  return mean(err * err);
}

struct Model {
  const char *name;
  Tensor (*loss)(const Tensors &);
  std::vector<std::pair<std::string, Shape>> inputs;
  std::vector<int> argnums;
};

} // namespace

int main(int argc, char **argv) {
  std::string out, dtypeName;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "--out")
      out = argv[i + 1];
    else if (arg == "--dtype")
      dtypeName = argv[i + 1];
    else
      die("unknown argument '" + arg + "'");
  }
  if (out.empty() || (dtypeName != "f32" && dtypeName != "f64"))
    die("usage: export_gradients --dtype f32|f64 --out DIR");
  DType dtype = dtypeName == "f32" ? DType::F32 : DType::F64;

  const std::vector<Model> models = {
      {"mlp",
       mlpLoss,
       {{"w1", {20, 32}},
        {"b1", {32}},
        {"w2", {32, 10}},
        {"b2", {10}},
        {"x", {16, 20}},
        {"onehot", {16, 10}}},
       {0, 1, 2, 3, 4}},
      {"rnn",
       rnnLoss,
       {{"wx", {8, 24}},
        {"wh", {24, 24}},
        {"b", {24}},
        {"wo", {24, 3}},
        {"xs", {12, 4, 8}},
        {"h0", {4, 24}},
        {"targets", {4, 3}}},
       {0, 1, 2, 3, 5}},
  };

  std::mt19937 rng(7);
  for (const Model &model : models) {
    std::vector<Array> inputs;
    for (const auto &[name, shape] : model.inputs) {
      Array a;
      if (name == "onehot") {
        std::vector<double> v(shape[0] * shape[1], 0.0);
        for (int64_t r = 0; r < shape[0]; ++r)
          v[r * shape[1] + rng() % shape[1]] = 1.0;
        a = dtype == DType::F64
                ? Array::from(dtype, shape, v)
                : Array::from(dtype, shape,
                              std::vector<float>(v.begin(), v.end()));
      } else {
        a = randomArray(dtype, shape, rng, 0.5);
      }
      writeNpy(out + "/" + model.name + "_" + name + ".npy", a);
      inputs.push_back(a);
    }
    JitFunction vg = jit(std::string(model.name) + "_value_and_grad",
                         value_and_grad(model.loss, model.argnums));
    std::vector<Array> results = vg(inputs);
    writeNpy(out + "/" + model.name + "_loss.npy", results[0]);
    for (size_t k = 0; k < model.argnums.size(); ++k)
      writeNpy(out + "/" + model.name + "_grad_" +
                   model.inputs[model.argnums[k]].first + ".npy",
               results[k + 1]);
    std::printf("%s (%s): loss %.8g, %zu gradients\n", model.name,
                dtypeName.c_str(), results[0].at(0), model.argnums.size());
  }
  return 0;
}
