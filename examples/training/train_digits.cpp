//===- train_digits.cpp - An MLP trained on 8x8 digits with kiln::jit -----===//
//
// Trains a 64-128-10 perceptron (ReLU, softmax cross-entropy) on the
// scikit-learn digits (data/, see data/README.md) with plain SGD (the
// default), SGD with momentum 0.9, or Adam, from kiln/Optim.h. --hidden
// sets other hidden layers (--hidden 1024,1024); --synthetic F trains on
// 4096 rows of F standard normal features instead, labelled by a fixed
// random linear teacher (--synthetic 784 --hidden 1024,1024 --batch 256 is
// the MLP of bench/). The whole
// training step -- forward, loss, backward through kiln::value_and_grad and
// the optimizer's update -- is one function compiled by kiln::jit; the
// optimizer's state (momentum buffers, moments, step count) goes in and out
// of it as arrays.
//
// The split and the batch order are fixed: the first 1500 images train, the
// last 297 are held out (synthetic: 3584 and 512); step k uses training
// rows (k*B + j) mod 1500 (3584) for j < B. Initial weights come from a
// fixed seed and can be written out (--out), with the loss of every step, so
// that compare_torch.py can replay the same run in PyTorch.
//
// With --comm mpi, run as `mpirun -n N train_digits --comm mpi ...`, the
// ranks train together, data parallel as PyTorch's DDP does: each feeds its
// block of every batch (B/N rows), the step is traced for the whole batch
// and rewritten by kiln-data-parallel (JitOptions::batchArgs), whose
// all-reduces average the gradients, so every rank computes the updates of
// one process on the whole batch. Rank 0 prints and writes the files.
// --zero 1 also shards the optimizer state over the ranks (ZeRO stage 1:
// each rank holds and updates one block of every state tensor, kiln-zero),
// --zero 2 also reduce-scatters the gradients, --zero 3 also holds the
// parameters as blocks, gathered before each use (they are put back
// together with kiln_comm_all_gather for the accuracy and the files).
// --comm gloo does the same over Gloo, under kiln-launch --nproc N. With
// --comm gloo --elastic, under kiln-launch --nproc MIN:MAX, the workers
// train elastically (kiln/Elastic.h): the parameters, the optimizer state
// and the step are committed every --commit-every steps, a worker that dies
// sends the others back to the last commit at their new size, and workers
// that arrive join at a commit. The worker of rank 0 at the end prints the
// accuracy.
//
// Usage: train_digits [--data DIR | --synthetic F] [--hidden W1,W2,...]
//                     [--steps N] [--lr X] [--batch B]
//                     [--optimizer sgd|momentum|adam] [--dtype f32|f64]
//                     [--autocast bf16|f16] [--loss-scaling [--init-scale S]]
//                     [--comm mpi|gloo [--zero 1|2|3]] [--out DIR]
//                     [--comm gloo --elastic [--commit-every N]]
//                     [--min-accuracy A | --no-accuracy]
// --out DIR receives init_*.npy, final_*.npy (the trained parameters w1,
// b1, w2, b2, ...) and losses.npy.
// The learning rate defaults to 0.3 for sgd, 0.05 for momentum and 0.001
// for adam.
// Rank 0 prints the accuracy on the training and the held-out rows
// (--no-accuracy skips it) and exits 1 if the held-out accuracy is below
// --min-accuracy (default 0).
//
//===----------------------------------------------------------------------===//

#include "kiln/Elastic.h"
#include "kiln/Jit.h"
#include "kiln/Npy.h"
#include "kiln/Optim.h"
#include "kiln/runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace kiln;

namespace {

constexpr int64_t kDigitsFeatures = 64, kClasses = 10;
constexpr int64_t kDigitsTrainRows = 1500;
constexpr int64_t kSyntheticRows = 4096, kSyntheticTrainRows = 3584;

struct Options {
  std::string data = KILN_DIGITS_DIR;
  int64_t synthetic = 0; // features of the synthetic data; 0: the digits
  std::vector<int64_t> hidden = {128};
  int steps = 1000;
  std::string optimizer = "sgd";
  double lr = 0; // 0: the optimizer's default
  int64_t batch = 64;
  DType dtype = DType::F32;
  std::string out;
  double minAccuracy = 0;
  bool accuracy = true;
  bool mpi = false;
  bool gloo = false;
  bool elastic = false;  // a worker of kiln-launch --nproc MIN:MAX
  int commitEvery = 50;  // elastic: steps between commits
  int zero = 0;
  std::string autocast; // "bf16" or "f16": mixed precision; empty: off
  bool lossScaling = false; // dynamic loss scaling (optim::LossScaler)
  double initScale = 65536;  // its first scale
};

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "train_digits: %s\n", message.c_str());
  std::exit(2);
}

/// `text` as a whole number (or, with `real`, any number); dies naming
/// `option` otherwise.
double number(const std::string &option, const std::string &text,
              bool real = false) {
  size_t used = 0;
  double value = 0;
  try {
    value = real ? std::stod(text, &used) : std::stoll(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    die(option + " needs " + (real ? "a number" : "a whole number") +
        ", not '" + text + "'");
  return value;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--data")
      o.data = value();
    else if (arg == "--synthetic")
      o.synthetic = number(arg, value());
    else if (arg == "--hidden") {
      o.hidden.clear();
      std::string list = value();
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        o.hidden.push_back(number(arg, list.substr(at, comma - at)));
        at = comma + 1;
      }
    }
    else if (arg == "--steps")
      o.steps = number(arg, value());
    else if (arg == "--lr")
      o.lr = number(arg, value(), /*real=*/true);
    else if (arg == "--optimizer")
      o.optimizer = value();
    else if (arg == "--batch")
      o.batch = number(arg, value());
    else if (arg == "--out")
      o.out = value();
    else if (arg == "--min-accuracy")
      o.minAccuracy = number(arg, value(), /*real=*/true);
    else if (arg == "--no-accuracy")
      o.accuracy = false;
    else if (arg == "--zero")
      o.zero = number(arg, value());
    else if (arg == "--comm") {
      std::string comm = value();
      if (comm != "mpi" && comm != "gloo" && comm != "none")
        die("--comm must be mpi, gloo or none");
      o.mpi = comm == "mpi";
      o.gloo = comm == "gloo";
    } else if (arg == "--elastic")
      o.elastic = true;
    else if (arg == "--commit-every")
      o.commitEvery = number(arg, value());
    else if (arg == "--loss-scaling")
      o.lossScaling = true;
    else if (arg == "--init-scale")
      o.initScale = number(arg, value(), /*real=*/true);
    else if (arg == "--autocast") {
      o.autocast = value();
      if (o.autocast != "bf16" && o.autocast != "f16")
        die("--autocast must be bf16 or f16");
    } else if (arg == "--dtype") {
      std::string d = value();
      if (d != "f32" && d != "f64")
        die("--dtype must be f32 or f64");
      o.dtype = d == "f32" ? DType::F32 : DType::F64;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: train_digits [--data DIR | --synthetic F] "
                  "[--hidden W1,W2,...] [--steps N] [--lr X] "
                  "[--batch B] [--optimizer sgd|momentum|adam] "
                  "[--dtype f32|f64] [--autocast bf16|f16] "
                  "[--loss-scaling [--init-scale S]] "
                  "[--comm mpi|gloo [--zero 1|2|3]] "
                  "[--comm gloo --elastic [--commit-every N]] [--out DIR] "
                  "[--min-accuracy A | --no-accuracy]\n");
      std::exit(0);
    } else
      die("unknown argument '" + arg + "' (see --help)");
  }
  int64_t trainRows = o.synthetic ? kSyntheticTrainRows : kDigitsTrainRows;
  if (o.steps < 0 || o.batch <= 0 || o.batch > trainRows)
    die("--steps must be >= 0 and --batch in 1.." +
        std::to_string(trainRows));
  if (o.synthetic < 0 || o.hidden.empty() ||
      std::any_of(o.hidden.begin(), o.hidden.end(),
                  [](int64_t w) { return w <= 0; }))
    die("--synthetic takes a number of features and --hidden a list of "
        "positive widths");
  if (o.optimizer != "sgd" && o.optimizer != "momentum" &&
      o.optimizer != "adam")
    die("--optimizer must be sgd, momentum or adam");
  if (o.elastic && (!o.gloo || o.zero || o.lossScaling || !o.out.empty() ||
                    o.commitEvery < 1))
    die("--elastic trains as a worker of kiln-launch --nproc MIN:MAX with "
        "--comm gloo, --commit-every N >= 1, and without --zero, "
        "--loss-scaling or --out");
  if (o.zero != 0 &&
      ((!o.mpi && !o.gloo) || o.zero < 1 || o.zero > 3 ||
       (o.zero < 3 && o.optimizer == "sgd")))
    die("--zero 1|2|3 shards over the ranks of --comm mpi|gloo the optimizer "
        "state of --optimizer momentum or adam (1, 2) and the parameters "
        "(3)");
  if (!o.accuracy && o.minAccuracy > 0)
    die("--min-accuracy needs the accuracy that --no-accuracy skips");
  if (o.lossScaling && o.zero >= 2)
    die("--loss-scaling checks whole gradients for inf/NaN; --zero 2 and 3 "
        "leave each rank a shard of them (use --zero 1 or none)");
  if (!o.autocast.empty() && o.dtype != DType::F32)
    die("--autocast runs an f32 model's matrix products and convolutions "
        "in half precision; "
        "it does not apply to --dtype f64");
  if (o.lr == 0)
    o.lr = o.optimizer == "sgd"        ? 0.3
           : o.optimizer == "momentum" ? 0.05
                                       : 1e-3;
  return o;
}

npy::Array readNpy(const std::string &path) {
  npy::Array a;
  std::string error;
  if (!npy::readNpyFile(path, a, error))
    die(error);
  return a;
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

/// An array of `dtype` holding `values`.
Array makeArray(DType dtype, Shape shape, const std::vector<double> &values) {
  if (dtype == DType::F64)
    return Array::from(dtype, std::move(shape), values);
  return Array::from(dtype, std::move(shape),
                     std::vector<float>(values.begin(), values.end()));
}

/// The model: logits of a batch `x`. `a` starts with the parameters w1,
/// b1, ..., wL, bL (w1 [features, hidden[0]], ..., bL [10]); ReLU between
/// the layers.
Tensor logits(const Tensors &a, size_t layers, const Tensor &x) {
  Tensor h = x;
  for (size_t l = 0; l < layers; ++l) {
    h = matmul(h, a[2 * l]) + a[2 * l + 1];
    if (l + 1 < layers)
      h = relu(h);
  }
  return h;
}

/// Mean softmax cross-entropy of (parameters..., x, onehot); `onehot` holds
/// the labels as one-hot rows.
Tensor loss(const Tensors &a, size_t layers) {
  Tensor z = logits(a, layers, a[2 * layers]);
  return -mean(sum(a[2 * layers + 1] * log_softmax(z, -1), 1));
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  // Data parallelism: this process's rank among `ranks`.
  kiln_comm_t *comm = nullptr;
  int64_t rank = 0, ranks = 1;
  if ((o.mpi || o.gloo) && !o.elastic) {
    if (kiln_status_t status = o.mpi ? kiln_comm_create_mpi(&comm)
                                     : kiln_comm_create_gloo(&comm)) {
      std::string message = kiln_status_message(status);
      kiln_status_free(status);
      die(std::string("cannot open the ") + (o.mpi ? "MPI" : "Gloo") +
          " communicator: " + message);
    }
    rank = kiln_comm_rank(comm);
    ranks = kiln_comm_size(comm);
    if (o.batch % ranks != 0)
      die("--batch " + std::to_string(o.batch) +
          " does not split evenly over " + std::to_string(ranks) + " ranks");
  }
  bool leader = rank == 0;
  // The data: `features` inputs per row and a label.
  int64_t rows, features, trainRows;
  std::vector<double> inputs;
  std::vector<int64_t> label;
  if (o.synthetic) {
    rows = kSyntheticRows, features = o.synthetic,
    trainRows = kSyntheticTrainRows;
    std::mt19937 data(7);
    std::normal_distribution<double> normal;
    inputs.resize(rows * features);
    for (double &v : inputs)
      v = static_cast<float>(normal(data));
    std::vector<double> teacher(features * kClasses);
    for (double &v : teacher)
      v = normal(data);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      double bestScore = -HUGE_VAL;
      for (int64_t c = 0; c < kClasses; ++c) {
        double score = 0;
        for (int64_t f = 0; f < features; ++f)
          score += inputs[r * features + f] * teacher[f * kClasses + c];
        if (score > bestScore)
          best = c, bestScore = score;
      }
      label.push_back(best);
    }
  } else {
    npy::Array images = readNpy(o.data + "/digits_images.npy");
    npy::Array labels = readNpy(o.data + "/digits_labels.npy");
    if (images.type != npy::ElementType::F32 || images.shape.size() != 2 ||
        images.shape[1] != kDigitsFeatures ||
        labels.type != npy::ElementType::I64 ||
        labels.shape != std::vector<int64_t>{images.shape[0]} ||
        images.shape[0] <= kDigitsTrainRows)
      die("expected digits_images.npy f32 [N, 64] and digits_labels.npy "
          "i64 [N] with N > 1500");
    rows = images.shape[0], features = kDigitsFeatures,
    trainRows = kDigitsTrainRows;
    // Pixels are counts 0..16; scale them to [0, 1].
    const auto *pixels = reinterpret_cast<const float *>(images.data.data());
    for (int64_t k = 0; k < rows * features; ++k)
      inputs.push_back(pixels[k] / 16.0);
    const auto *labelData =
        reinterpret_cast<const int64_t *>(labels.data.data());
    label.assign(labelData, labelData + rows);
  }

  auto inputsOf = [&](const std::vector<int64_t> &rowIds) {
    std::vector<double> x(rowIds.size() * features);
    for (size_t r = 0; r < rowIds.size(); ++r)
      for (int64_t c = 0; c < features; ++c)
        x[r * features + c] = inputs[rowIds[r] * features + c];
    return makeArray(o.dtype, {static_cast<int64_t>(rowIds.size()), features},
                     x);
  };
  auto onehotOf = [&](const std::vector<int64_t> &rowIds) {
    std::vector<double> y(rowIds.size() * kClasses, 0.0);
    for (size_t r = 0; r < rowIds.size(); ++r)
      y[r * kClasses + label[rowIds[r]]] = 1.0;
    return makeArray(o.dtype, {static_cast<int64_t>(rowIds.size()), kClasses},
                     y);
  };

  // PyTorch's nn.Linear initialization: uniform in +-1/sqrt(fan_in).
  std::mt19937 rng(2024);
  auto uniform = [&](int64_t count, int64_t fanIn) {
    std::uniform_real_distribution<double> dist(-1.0 / std::sqrt(fanIn),
                                                1.0 / std::sqrt(fanIn));
    std::vector<double> v(count);
    for (double &x : v)
      x = static_cast<float>(dist(rng)); // identical in f32 and f64 runs
    return v;
  };
  std::vector<int64_t> widths = {features};
  widths.insert(widths.end(), o.hidden.begin(), o.hidden.end());
  widths.push_back(kClasses);
  const size_t layers = widths.size() - 1;
  const int numParams = static_cast<int>(2 * layers);
  std::vector<Array> params;
  std::vector<std::string> paramNames;
  for (size_t l = 0; l < layers; ++l) {
    int64_t in = widths[l], out = widths[l + 1];
    params.push_back(makeArray(o.dtype, {in, out}, uniform(in * out, in)));
    params.push_back(makeArray(o.dtype, {out}, uniform(out, in)));
    paramNames.push_back("w" + std::to_string(l + 1));
    paramNames.push_back("b" + std::to_string(l + 1));
  }
  if (!o.out.empty() && leader)
    for (int k = 0; k < numParams; ++k)
      writeNpy(o.out + "/init_" + paramNames[k] + ".npy", params[k]);

  // The optimizer and its initial state: one zero array per state spec.
  std::unique_ptr<optim::Optimizer> optimizer;
  if (o.optimizer == "adam")
    optimizer = std::make_unique<optim::Adam>(o.lr);
  else
    optimizer = std::make_unique<optim::Sgd>(
        o.lr, /*momentum=*/o.optimizer == "momentum" ? 0.9 : 0.0);
  std::vector<TensorSpec> paramSpecs;
  for (const Array &p : params)
    paramSpecs.push_back({p.dtype(), p.shape(), ""});
  std::vector<Array> state;
  std::vector<TensorSpec> stateSpecs = optimizer->stateSpecs(paramSpecs);
  for (const TensorSpec &spec : stateSpecs)
    state.emplace_back(spec.dtype, spec.shape);

  // One compiled function: (w1, b1, ..., wL, bL, x, onehot, state...) ->
  // (loss, w1', b1', ..., state'...). With --comm mpi, x and onehot are
  // this rank's block of the batch.
  const int xArg = numParams, firstStateArg = numParams + 2,
            firstStateResult = numParams + 1;
  JitOptions stepOptions;
  stepOptions.autocast = o.autocast;
  if (comm) {
    stepOptions.comm = comm;
    stepOptions.batchArgs = {xArg, xArg + 1};
  }
  if (o.zero) {
    // state[0] is the step count; every slot after it is held as this
    // rank's block.
    stepOptions.zeroStage = o.zero;
    for (size_t k = 1; k < stateSpecs.size(); ++k) {
      stepOptions.shardedArgs.push_back(
          {static_cast<int>(firstStateArg + k), stateSpecs[k].shape});
      stepOptions.shardedResults.push_back(
          static_cast<int>(firstStateResult + k));
      state[k] = shardBlock(state[k], rank, ranks);
    }
    if (o.zero == 3)
      for (int k = 0; k < numParams; ++k) {
        stepOptions.shardedArgs.push_back({k, params[k].shape()});
        stepOptions.shardedResults.push_back(1 + k);
      }
  }
  // With ZeRO-3 the parameters live as blocks; `whole` puts them back.
  std::vector<std::vector<int64_t>> paramShapes;
  for (const Array &p : params)
    paramShapes.push_back(p.shape());
  auto whole = [&](const std::vector<Array> &blocks) {
    if (o.zero != 3)
      return blocks;
    std::vector<Array> result;
    for (int k = 0; k < numParams; ++k) {
      std::vector<uint8_t> all(blocks[k].byteSize() * ranks);
      if (kiln_status_t status = kiln_comm_all_gather(
              comm, blocks[k].data(), blocks[k].byteSize(), all.data())) {
        std::string message = kiln_status_message(status);
        kiln_status_free(status);
        die(message);
      }
      Array full(o.dtype, paramShapes[k]);
      std::memcpy(full.data(), all.data(), full.byteSize());
      result.push_back(full);
    }
    return result;
  };
  if (o.zero == 3)
    for (int k = 0; k < numParams; ++k)
      params[k] = shardBlock(params[k], rank, ranks);
  std::vector<int> wrt(numParams);
  std::iota(wrt.begin(), wrt.end(), 0);
  // With --loss-scaling the step also takes and returns the scaler's state
  // (scale, growth tracker) after the optimizer's, and returns whether it
  // skipped the update last.
  optim::LossScaler scaler(o.initScale);
  const size_t numState = state.size();
  std::vector<Array> scalerState;
  if (o.lossScaling) {
    scalerState.push_back(Array::from(
        DType::F32, {}, std::vector<float>{float(scaler.initScale)}));
    scalerState.emplace_back(DType::I64, std::vector<int64_t>{});
  }
  auto stepBody = [&](const Tensors &a) {
    const int firstScalerArg = firstStateArg + static_cast<int>(numState);
    Tensors scalerArgs(a.begin() + firstScalerArg, a.end());
    Tensors vg = value_and_grad(
        [&](const Tensors &args) {
          Tensor l = loss(args, layers);
          if (!o.lossScaling)
            return l;
          return scaler.scale(l, Tensors(args.begin() + firstScalerArg,
                                         args.end()));
        },
        wrt)(a);
    Tensors params(a.begin(), a.begin() + numParams),
        grads(vg.begin() + 1, vg.end()),
        state(a.begin() + firstStateArg, a.begin() + firstScalerArg);
    Tensors out;
    if (o.lossScaling) {
      optim::ScaledUpdate update =
          scaler.step(*optimizer, params, grads, state, scalerArgs);
      out = {div(vg[0], scalerArgs[0]).named("loss")};
      out.insert(out.end(), update.params.begin(), update.params.end());
      out.insert(out.end(), update.state.begin(), update.state.end());
      out.insert(out.end(), update.scalerState.begin(),
                 update.scalerState.end());
      out.push_back(update.skipped);
      return out;
    }
    optim::Update update = optimizer->step(params, grads, state);
    out = {vg[0].named("loss")};
    out.insert(out.end(), update.params.begin(), update.params.end());
    out.insert(out.end(), update.state.begin(), update.state.end());
    return out;
  };
  JitFunction step = jit("train_step", stepBody, stepOptions);
  JitFunction predict = jit("predict", [&](const Tensors &a) {
    return logits(a, layers, a[numParams]);
  });

  if (o.elastic) {
    // A worker of an elastic run: the parameters, the optimizer state and
    // the step survive members dying or arriving (kiln/Elastic.h); each
    // generation's workers split every batch, and the step is compiled once
    // per size of the run.
    try {
      elastic::Worker worker;
      elastic::Jit elasticStep(worker, [&](kiln_comm *elasticComm) {
        JitOptions options = stepOptions;
        options.comm = elasticComm;
        options.batchArgs = {xArg, xArg + 1};
        return jit("train_step", stepBody, options);
      });
      elastic::State saved;
      for (int k = 0; k < numParams; ++k)
        saved.arrays["param" + std::to_string(k)] = params[k];
      for (size_t k = 0; k < numState; ++k)
        saved.arrays["state" + std::to_string(k)] = state[k];
      saved.counters["step"] = 0;
      bool joined = elastic::run(worker, saved, [&](elastic::State &s) {
        int64_t workers = worker.size(), me = worker.rank();
        if (o.batch % workers != 0)
          throw JitError("--batch " + std::to_string(o.batch) +
                         " does not split evenly over " +
                         std::to_string(workers) + " workers");
        const int64_t block = o.batch / workers;
        std::vector<int64_t> batchRows(block);
        while (s.counters["step"] < o.steps) {
          int64_t k = s.counters["step"];
          for (int64_t j = 0; j < block; ++j)
            batchRows[j] = (k * o.batch + me * block + j) % trainRows;
          std::vector<Array> args;
          for (int p = 0; p < numParams; ++p)
            args.push_back(s.arrays["param" + std::to_string(p)]);
          args.push_back(inputsOf(batchRows));
          args.push_back(onehotOf(batchRows));
          for (size_t p = 0; p < numState; ++p)
            args.push_back(s.arrays["state" + std::to_string(p)]);
          std::vector<Array> out = elasticStep(args);
          for (int p = 0; p < numParams; ++p)
            s.arrays["param" + std::to_string(p)] = out[1 + p];
          for (size_t p = 0; p < numState; ++p)
            s.arrays["state" + std::to_string(p)] = out[1 + numParams + p];
          s.counters["step"] = k + 1;
          if (me == 0 && (k % 100 == 0 || k + 1 == o.steps))
            std::printf("step %4lld  loss %.6f  (%lld workers)\n",
                        (long long)k, out[0].at(0), (long long)workers);
          if ((k + 1) % o.commitEvery == 0)
            s.commit(worker);
        }
      });
      if (!joined)
        return 0;
      rank = worker.rank();
      ranks = worker.size();
      leader = rank == 0;
      for (int k = 0; k < numParams; ++k)
        params[k] = saved.arrays["param" + std::to_string(k)];
      o.steps = 0; // trained
    } catch (const std::exception &error) {
      std::fprintf(stderr, "train_digits: %s\n", error.what());
      return 1;
    }
  }

  std::vector<double> losses;
  std::vector<double> stepSeconds;
  int skippedSteps = 0;
  const int64_t block = o.batch / ranks;
  std::vector<int64_t> batchRows(block);
  for (int k = 0; k < o.steps; ++k) {
    for (int64_t j = 0; j < block; ++j)
      batchRows[j] =
          (static_cast<int64_t>(k) * o.batch + rank * block + j) % trainRows;
    std::vector<Array> args = params;
    args.push_back(inputsOf(batchRows));
    args.push_back(onehotOf(batchRows));
    args.insert(args.end(), state.begin(), state.end());
    args.insert(args.end(), scalerState.begin(), scalerState.end());
    auto start = std::chrono::steady_clock::now();
    std::vector<Array> out = step(args);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (k > 0) // the first call traces and compiles
      stepSeconds.push_back(seconds);
    losses.push_back(out[0].at(0));
    params.assign(out.begin() + 1, out.begin() + 1 + numParams);
    state.assign(out.begin() + 1 + numParams,
                 out.begin() + 1 + numParams + numState);
    if (o.lossScaling) {
      scalerState.assign(out.begin() + 1 + numParams + numState,
                         out.begin() + 3 + numParams + numState);
      skippedSteps += out.back().at(0) != 0;
    }
    if (leader && (k % 100 == 0 || k + 1 == o.steps))
      std::printf("step %4d  loss %.6f\n", k, losses.back());
  }
  if (!stepSeconds.empty() && leader) {
    // The median is robust to other load on the machine; the mean is not.
    double total = 0;
    for (double s : stepSeconds)
      total += s;
    std::sort(stepSeconds.begin(), stepSeconds.end());
    std::printf("compile: %.3f s (trace %.3f s); train step (call of the "
                "compiled function): median %.1f us, mean %.1f us\n",
                step.lastCompileSeconds(), step.lastTraceSeconds(),
                1e6 * stepSeconds[stepSeconds.size() / 2],
                1e6 * total / stepSeconds.size());
  }

  if (o.lossScaling && leader)
    std::printf("loss scaling: %d of %d updates skipped (inf/NaN "
                "gradients), final scale %g\n",
                skippedSteps, o.steps, scalerState[0].at(0));
  params = whole(params);
  auto accuracy = [&](int64_t first, int64_t last) {
    std::vector<int64_t> ids;
    for (int64_t r = first; r < last; ++r)
      ids.push_back(r);
    std::vector<Array> args = params;
    args.push_back(inputsOf(ids));
    Array z = predict(args)[0];
    int64_t correct = 0;
    for (size_t r = 0; r < ids.size(); ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < kClasses; ++c)
        if (z.at(r * kClasses + c) > z.at(r * kClasses + best))
          best = c;
      correct += best == label[ids[r]];
    }
    return static_cast<double>(correct) / ids.size();
  };
  // Rank 0 alone evaluates (the parameters are the same on every rank).
  double heldOut = 0;
  if (leader && o.accuracy) {
    double trainAccuracy = accuracy(0, trainRows);
    heldOut = accuracy(trainRows, rows);
    std::printf(
        "train accuracy %.4f, held-out accuracy %.4f (%lld rows)%s\n",
        trainAccuracy, heldOut, static_cast<long long>(rows - trainRows),
        ranks > 1 ? (" on " + std::to_string(ranks) + " ranks" +
                     (o.zero ? ", ZeRO stage " + std::to_string(o.zero) : ""))
                        .c_str()
                  : "");
  }

  if (!o.out.empty() && leader) {
    writeNpy(o.out + "/losses.npy",
             Array::from(DType::F64, {static_cast<int64_t>(losses.size())},
                         losses));
    for (int k = 0; k < numParams; ++k)
      writeNpy(o.out + "/final_" + paramNames[k] + ".npy", params[k]);
  }
  kiln_comm_release(comm);
  if (leader && o.accuracy && heldOut < o.minAccuracy) {
    std::fprintf(stderr,
                 "train_digits: held-out accuracy %.4f is below %.4f\n",
                 heldOut, o.minAccuracy);
    return 1;
  }
  return 0;
}
