//===- train_dlrm.cpp - DLRM on Criteo-format logs with the C++ API -------===//
//
// The model of examples/python/dlrm/dlrm.py written with kiln's C++ tracer:
// a bottom MLP 13-64-32-16 on log(1 + count), 26 embedding tables of 16
// columns (each hashed value modulo the table's size), the dot products of
// every pair among the bottom MLP's output and the 26 embeddings, a top MLP
// 367-64-1 on those and the bottom output, binary cross-entropy. The whole
// training step (forward, kiln::value_and_grad, the optimizer from
// kiln/Optim.h) is one function compiled by kiln::jit; the tables' updates
// touch only the rows a batch read (kiln-sparse-updates), for SGD and
// Adagrad alike. The data comes through kiln::data::CriteoReader.
//
// Write the logs with examples/python/dlrm/criteo_synthetic.py (the test
// file's best possible AUC goes to <test>.json), then:
//
//   train_dlrm TRAIN.txt TEST.txt [--epochs N] [--batch B] [--table-size T]
//              [--optimizer sgd|adagrad] [--lr X] [--min-auc-of-bayes F]
//
// Prints the loss every 100 steps, the samples per second and the
// held-out AUC (against the Bayes AUC of <TEST>.json where it exists);
// exits 1 when the AUC is below F times the Bayes AUC.
//
//===----------------------------------------------------------------------===//

#include "kiln/Criteo.h"
#include "kiln/Jit.h"
#include "kiln/Optim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace kiln;

namespace {

constexpr int64_t kDense = data::CriteoBatch::kDense;
constexpr int64_t kSparse = data::CriteoBatch::kSparse;
constexpr int64_t kDim = 16;
/// The interaction's pairs: the 27 vectors' dot products below the diagonal.
constexpr int64_t kVectors = kSparse + 1, kPairs = kVectors * kSparse / 2;

struct Options {
  std::string train, test;
  int epochs = 1;
  int64_t batch = 256;
  int64_t tableSize = 4096;
  std::string optimizer = "sgd";
  double lr = 0;
  double minAucOfBayes = 0;
};

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "train_dlrm: %s\n", message.c_str());
  std::exit(2);
}

double number(const std::string &option, const std::string &text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    die(option + " needs a number, not '" + text + "'");
  return value;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--epochs")
      o.epochs = static_cast<int>(number(arg, value()));
    else if (arg == "--batch")
      o.batch = static_cast<int64_t>(number(arg, value()));
    else if (arg == "--table-size")
      o.tableSize = static_cast<int64_t>(number(arg, value()));
    else if (arg == "--optimizer")
      o.optimizer = value();
    else if (arg == "--lr")
      o.lr = number(arg, value());
    else if (arg == "--min-auc-of-bayes")
      o.minAucOfBayes = number(arg, value());
    else if (arg == "--help" || arg == "-h") {
      std::printf("usage: train_dlrm TRAIN TEST [--epochs N] [--batch B] "
                  "[--table-size T] [--optimizer sgd|adagrad] [--lr X] "
                  "[--min-auc-of-bayes F]\n");
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-')
      die("unknown argument '" + arg + "' (see --help)");
    else
      files.push_back(arg);
  }
  if (files.size() != 2)
    die("takes a training file and a test file (see --help)");
  o.train = files[0];
  o.test = files[1];
  if (o.epochs < 0 || o.batch < 1 || o.tableSize < 2)
    die("--epochs must be >= 0, --batch >= 1 and --table-size >= 2");
  if (o.optimizer != "sgd" && o.optimizer != "adagrad")
    die("--optimizer must be sgd or adagrad");
  if (o.lr == 0)
    o.lr = o.optimizer == "sgd" ? 0.2 : 0.03;
  return o;
}

/// The model's inputs of a batch: log(1 + count) [n, 13] f32, ids [n, 26]
/// (a missing value id 0, the others their hash modulo T - 1, plus 1) and
/// the labels [n] f32.
std::vector<Array> features(const data::CriteoBatch &batch, int64_t tableSize) {
  int64_t n = batch.size();
  std::vector<float> dense(n * kDense), labels(n);
  std::vector<int64_t> ids(n * kSparse);
  for (int64_t k = 0; k < n * kDense; ++k)
    dense[k] = std::log1p(static_cast<float>(std::max<int64_t>(
        batch.dense[k], 0)));
  for (int64_t k = 0; k < n * kSparse; ++k)
    ids[k] = batch.sparse[k] < 0 ? 0 : batch.sparse[k] % (tableSize - 1) + 1;
  for (int64_t r = 0; r < n; ++r)
    labels[r] = static_cast<float>(batch.labels[r]);
  return {Array::from(DType::F32, {n, kDense}, dense),
          Array::from(DType::I64, {n, kSparse}, ids),
          Array::from(DType::F32, {n}, labels)};
}

/// Calls `use` with the inputs of every batch of `path` (the last one
/// shorter unless `fullOnly`).
template <typename F>
void forEachBatch(const std::string &path, int64_t size, int64_t tableSize,
                  bool fullOnly, F use) {
  data::CriteoReader reader;
  data::CriteoBatch batch;
  std::string error;
  if (!reader.open(path, error))
    die(error);
  while (reader.next(size, batch, error)) {
    if (fullOnly && batch.size() < size)
      break;
    use(features(batch, tableSize));
  }
  if (!error.empty())
    die(error);
}

/// The parameters, in the order the traced functions take them: the
/// bottom MLP's (w, b) pairs, the 26 tables, the top MLP's pairs.
struct Layout {
  std::vector<int64_t> bottom = {kDense, 64, 32, kDim};
  std::vector<int64_t> top = {kDim + kPairs, 64, 1};
  size_t bottomParams() const { return 2 * (bottom.size() - 1); }
  size_t topParams() const { return 2 * (top.size() - 1); }
  size_t count() const { return bottomParams() + kSparse + topParams(); }
};

/// DLRM's initialization: weights normal with std sqrt(2 / (fan_in +
/// fan_out)), biases with std sqrt(1 / fan_out), tables uniform in
/// +-sqrt(1 / rows).
std::vector<Array> initParams(const Layout &layout, int64_t tableSize,
                              unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Array> params;
  auto normal = [&](Shape shape, double stddev) {
    std::normal_distribution<float> dist(0.0f, static_cast<float>(stddev));
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::vector<float> v(count);
    for (float &x : v)
      x = dist(rng);
    return Array::from(DType::F32, std::move(shape), v);
  };
  auto mlp = [&](const std::vector<int64_t> &sizes) {
    for (size_t l = 0; l + 1 < sizes.size(); ++l) {
      params.push_back(normal({sizes[l], sizes[l + 1]},
                              std::sqrt(2.0 / (sizes[l] + sizes[l + 1]))));
      params.push_back(normal({sizes[l + 1]}, std::sqrt(1.0 / sizes[l + 1])));
    }
  };
  mlp(layout.bottom);
  float bound = static_cast<float>(std::sqrt(1.0 / tableSize));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  for (int64_t t = 0; t < kSparse; ++t) {
    std::vector<float> v(tableSize * kDim);
    for (float &x : v)
      x = uniform(rng);
    params.push_back(Array::from(DType::F32, {tableSize, kDim}, v));
  }
  mlp(layout.top);
  return params;
}

/// The MLP of the (w, b) pairs a[first..first + 2 L), ReLU between layers
/// (and after the last with `lastRelu`).
Tensor mlp(const Tensors &a, size_t first, size_t layers, Tensor x,
           bool lastRelu) {
  for (size_t l = 0; l < layers; ++l) {
    x = matmul(x, a[first + 2 * l]) + a[first + 2 * l + 1];
    if (l + 1 < layers || lastRelu)
      x = relu(x);
  }
  return x;
}

/// The click logits [n] of (params..., dense, ids).
Tensor logits(const Tensors &a, const Layout &layout, int64_t n) {
  size_t p = layout.count();
  const Tensor &dense = a[p], &ids = a[p + 1];
  Tensor x = mlp(a, 0, layout.bottom.size() - 1, dense, /*lastRelu=*/true);
  Tensors vectors = {reshape(x, {n, 1, kDim})};
  for (int64_t t = 0; t < kSparse; ++t) {
    Tensor column = reshape(slice(ids, {0, t}, {n, t + 1}), {n});
    vectors.push_back(
        reshape(gather(a[layout.bottomParams() + t], column), {n, 1, kDim}));
  }
  Tensor z = concat(vectors, 1);                          // [n, 27, 16]
  Tensor dots = matmul(z, transpose(z, {0, 2, 1}));       // [n, 27, 27]
  std::vector<int64_t> pairs;
  for (int64_t i = 0; i < kVectors; ++i)
    for (int64_t j = 0; j < i; ++j)
      pairs.push_back(i * kVectors + j);
  Tensor flat = transpose(reshape(dots, {n, kVectors * kVectors}));
  Tensor picked = transpose(gather(flat, constant(pairs)));  // [n, 351]
  Tensor out = mlp(a, layout.bottomParams() + kSparse, layout.top.size() - 1,
                   concat({x, picked}, 1), /*lastRelu=*/false);
  return reshape(out, {n});
}

/// Mean binary cross-entropy of logits z and labels y (the stable form).
Tensor loss(const Tensor &z, const Tensor &y) {
  return mean(maximum(z, 0.0f) - z * y + log(exp(-abs(z)) + 1.0f));
}

/// The area under the ROC curve: the probability that a positive scores
/// above a negative (ties count half).
double auc(const std::vector<float> &labels, const std::vector<float> &scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double rankSum = 0, positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]])
      ++j;
    double rank = (i + j + 1) / 2.0; // ranks from 1, ties averaged
    for (size_t k = i; k < j; ++k)
      if (labels[order[k]] > 0.5) {
        rankSum += rank;
        ++positives;
      }
    i = j;
  }
  double negatives = static_cast<double>(scores.size()) - positives;
  if (positives == 0 || negatives == 0)
    die("the test file needs positive and negative examples for an AUC");
  return (rankSum - positives * (positives + 1) / 2) / (positives * negatives);
}

/// The "bayes_auc" of criteo_synthetic's <path>.json, or a negative value
/// when there is none.
double bayesAuc(const std::string &path) {
  std::ifstream in(path + ".json");
  if (!in)
    return -1;
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  size_t key = json.find("\"bayes_auc\"");
  size_t colon = key == std::string::npos ? key : json.find(':', key);
  if (colon == std::string::npos)
    die(path + ".json has no \"bayes_auc\"");
  try {
    return std::stod(json.substr(colon + 1));
  } catch (const std::exception &) {
    die(path + ".json: \"bayes_auc\" is not a number");
  }
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  Layout layout;
  std::vector<Array> params = initParams(layout, o.tableSize, 0);
  std::unique_ptr<optim::Optimizer> optimizer;
  if (o.optimizer == "sgd")
    optimizer = std::make_unique<optim::Sgd>(o.lr);
  else
    optimizer = std::make_unique<optim::Adagrad>(o.lr);
  std::vector<TensorSpec> paramSpecs;
  for (const Array &p : params)
    paramSpecs.push_back({p.dtype(), p.shape(), ""});
  std::vector<Array> state;
  for (const TensorSpec &spec : optimizer->stateSpecs(paramSpecs))
    state.emplace_back(spec.dtype, spec.shape);

  // (params..., dense, ids, labels, state...) -> (loss, params'...,
  // state'...).
  const size_t numParams = layout.count();
  std::vector<int> wrt(numParams);
  std::iota(wrt.begin(), wrt.end(), 0);
  JitFunction step = jit("train_step", [&](const Tensors &a) {
    int64_t n = a[numParams].shape()[0];
    Tensors vg = value_and_grad(
        [&](const Tensors &args) {
          return loss(logits(args, layout, n), args[numParams + 2]);
        },
        wrt)(a);
    Tensors ps(a.begin(), a.begin() + numParams),
        grads(vg.begin() + 1, vg.end()), st(a.begin() + numParams + 3, a.end());
    optim::Update update = optimizer->step(ps, grads, st);
    Tensors out = {vg[0].named("loss")};
    out.insert(out.end(), update.params.begin(), update.params.end());
    out.insert(out.end(), update.state.begin(), update.state.end());
    return out;
  });
  JitFunction predict = jit("predict", [&](const Tensors &a) {
    return logits(a, layout, a[numParams].shape()[0]);
  });

  int64_t steps = 0;
  auto started = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < o.epochs; ++epoch)
    // One signature: a short last batch is dropped.
    forEachBatch(o.train, o.batch, o.tableSize, /*fullOnly=*/true,
                 [&](std::vector<Array> batch) {
                   std::vector<Array> in = params;
                   in.insert(in.end(), batch.begin(), batch.end());
                   in.insert(in.end(), state.begin(), state.end());
                   std::vector<Array> out = step(in);
                   std::copy(out.begin() + 1, out.begin() + 1 + numParams,
                             params.begin());
                   std::copy(out.begin() + 1 + numParams, out.end(),
                             state.begin());
                   if (++steps % 100 == 0)
                     std::printf("step %lld: loss %.4f\n",
                                 static_cast<long long>(steps),
                                 static_cast<const float *>(out[0].data())[0]);
                 });
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  std::printf("%lld steps, %.0f samples/s (compile included)\n",
              static_cast<long long>(steps),
              static_cast<double>(steps * o.batch) / std::max(seconds, 1e-9));

  std::vector<float> scores, labels;
  forEachBatch(o.test, o.batch, o.tableSize, /*fullOnly=*/false,
               [&](std::vector<Array> batch) {
                 std::vector<Array> in = params;
                 in.push_back(batch[0]);
                 in.push_back(batch[1]);
                 Array z = predict(in)[0];
                 const auto *zs = static_cast<const float *>(z.data());
                 const auto *ys = static_cast<const float *>(batch[2].data());
                 int64_t n = batch[2].shape()[0];
                 scores.insert(scores.end(), zs, zs + n);
                 labels.insert(labels.end(), ys, ys + n);
               });
  double heldOut = auc(labels, scores);
  double bayes = bayesAuc(o.test);
  if (bayes > 0)
    std::printf("held-out AUC %.4f, Bayes AUC %.4f (%.3f of it)\n", heldOut,
                bayes, heldOut / bayes);
  else
    std::printf("held-out AUC %.4f\n", heldOut);
  if (bayes > 0 && heldOut < o.minAucOfBayes * bayes) {
    std::printf("FAIL: below %g of the Bayes AUC\n", o.minAucOfBayes);
    return 1;
  }
  return 0;
}
