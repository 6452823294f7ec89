//===- jit_host.cpp - A C++ host built against the installed kiln::jit ----===//
//
// Traces a softmax over the rows of a matrix, compiles it
// in-process with kiln::jit and checks the result against values computed
// here with <cmath>. Exits 0 when they agree.
//
//===----------------------------------------------------------------------===//

#include <kiln/Jit.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int rows = 3, cols = 5;
  std::vector<float> x(rows * cols);
  for (int i = 0; i < rows * cols; ++i)
    x[i] = 0.37f * static_cast<float>(i % 7) - 1.0f;

  auto softmax = kiln::jit("softmax", [](const kiln::Tensor &t) {
    return kiln::softmax(t, -1);
  });
  kiln::Array input =
      kiln::Array::from(kiln::DType::F32, {rows, cols}, x);
  std::vector<kiln::Array> out = softmax({input});

  int bad = 0;
  for (int r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c)
      max = std::fmax(max, x[r * cols + c]);
    for (int c = 0; c < cols; ++c)
      sum += std::exp(x[r * cols + c] - max);
    for (int c = 0; c < cols; ++c) {
      double expected = std::exp(x[r * cols + c] - max) / sum;
      double got = out[0].at(r * cols + c);
      if (!(std::fabs(got - expected) <= 1e-6))
        bad = 1;
    }
  }
  std::printf("softmax: %s\n", bad ? "MISMATCH" : "ok");
  return bad;
}
