//===- ElasticWorker.cpp - An elastic training run through kiln/Elastic.h -===//
//
// The C++ twin of test/python/workers/elastic_worker.py, for
// test_elastic.py: linear regression with momentum SGD in f64, each step on
// its global batch of 12 rows of X.npy / Y.npy split over the current
// generation's workers, committed every 2 steps.
//
//   kiln-launch --nproc MIN:MAX -- kiln-elastic-worker X.npy Y.npy OUT_DIR \
//       STEPS [KILL_RANK KILL_STEP MARKER]
//
// The worker of rank KILL_RANK dies by SIGKILL before step KILL_STEP (once:
// the marker file). The worker that finishes with rank 0 writes
// OUT_DIR/result.json (w, v, step, position and the run size of each step).
//
//===----------------------------------------------------------------------===//

#include "kiln/Elastic.h"
#include "kiln/Npy.h"
#include "kiln/kiln.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

using namespace kiln;

namespace {

constexpr int64_t kBatch = 12;
constexpr double kLr = 0.05, kMomentum = 0.9;

Array load(const char *path) {
  npy::Array array;
  std::string error;
  if (!npy::readNpyFile(path, array, error) ||
      array.type != npy::ElementType::F64) {
    std::fprintf(stderr, "kiln-elastic-worker: %s\n",
                 error.empty() ? "expected f64 arrays" : error.c_str());
    std::exit(2);
  }
  Array out(DType::F64, array.shape);
  std::memcpy(out.data(), array.data.data(), array.data.size());
  return out;
}

/// Rows [first, first + count) of a row-major f64 array.
Array rows(const Array &array, int64_t first, int64_t count) {
  std::vector<int64_t> shape = array.shape();
  int64_t width = array.size() / shape[0];
  shape[0] = count;
  Array out(DType::F64, shape);
  std::memcpy(out.data(), array.data<double>() + first * width,
              size_t(count * width) * sizeof(double));
  return out;
}

std::string list(const Array &array) {
  std::string text = "[";
  for (int64_t i = 0; i < array.size(); ++i) {
    char number[32];
    std::snprintf(number, sizeof(number), "%.17g", array.data<double>()[i]);
    text += (i ? ", " : "") + std::string(number);
  }
  return text + "]";
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5 && argc != 8) {
    std::fprintf(stderr, "usage: kiln-elastic-worker X.npy Y.npy OUT_DIR "
                         "STEPS [KILL_RANK KILL_STEP MARKER]\n");
    return 2;
  }
  Array x = load(argv[1]), y = load(argv[2]);
  std::string out = argv[3];
  int64_t steps = std::atoll(argv[4]);
  int64_t killRank = argc == 8 ? std::atoll(argv[5]) : -1;
  int64_t killStep = argc == 8 ? std::atoll(argv[6]) : -1;
  std::string marker = argc == 8 ? argv[7] : "";
  try {
    elastic::Worker worker;
    elastic::Jit step(worker, [](kiln_comm *comm) {
      JitOptions options;
      options.comm = comm;
      options.batchArgs = {2, 3};
      return jit(
          "step",
          [](const Tensors &a) {
            Tensors lossArgs = {a[0], a[2], a[3]};
            Tensors vg = value_and_grad(
                [](const Tensors &p) {
                  Tensor r = matmul(p[1], p[0]) - p[2];
                  return mean(r * r);
                },
                {0})(lossArgs);
            Tensor v = vg[1] + a[1] * kMomentum;
            return Tensors{a[0] - v * kLr, v};
          },
          options);
    });
    int64_t dim = x.shape()[1];
    elastic::State state;
    state.arrays["w"] = Array(DType::F64, {dim});
    state.arrays["v"] = Array(DType::F64, {dim});
    state.counters["step"] = 0;
    std::vector<int64_t> sizes;
    bool finished = elastic::run(worker, state, [&](elastic::State &s) {
      while (s.counters["step"] < steps) {
        int64_t k = s.counters["step"];
        if (worker.rank() == killRank && k == killStep &&
            ::open(marker.c_str(), O_CREAT | O_EXCL, 0600) >= 0)
          ::kill(::getpid(), SIGKILL);
        int64_t block = kBatch / worker.size();
        int64_t first = k * kBatch + worker.rank() * block;
        std::vector<Array> next =
            step({s.arrays["w"], s.arrays["v"], rows(x, first, block),
                  rows(y, first, block)});
        s.arrays["w"] = next[0];
        s.arrays["v"] = next[1];
        s.counters["size" + std::to_string(k)] = worker.size();
        s.counters["step"] = k + 1;
        if ((k + 1) % 2 == 0)
          s.commit(worker);
      }
    });
    if (!finished || worker.rank() != 0)
      return 0;
    std::string sizesText;
    for (int64_t k = 0; k < steps; ++k)
      sizesText += (k ? ", " : "") +
                   std::to_string(state.counters["size" + std::to_string(k)]);
    std::ofstream result(out + "/result.json");
    result << "{\"w\": " << list(state.arrays["w"])
           << ", \"v\": " << list(state.arrays["v"])
           << ", \"step\": " << state.counters["step"]
           << ", \"position\": " << state.counters["step"] * kBatch
           << ", \"sizes\": [" << sizesText << "]}\n";
    return result ? 0 : 1;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "kiln-elastic-worker: %s\n", error.what());
    return 1;
  }
}
