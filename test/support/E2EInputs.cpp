//===- E2EInputs.cpp - Tests: the end-to-end programs and their inputs ----===//

#include "E2EInputs.h"

#include <algorithm>
#include <filesystem>

std::vector<std::string>
kiln::test::e2eProgramFiles(const std::string &directory) {
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(directory))
    if (entry.path().extension() == ".mlir")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

kiln::HostTensor kiln::test::randomE2EInput(mlir::RankedTensorType type,
                                            std::mt19937 &rng) {
  HostTensor tensor(type.getElementType(), type.getShape());
  int64_t n = tensor.numElements();
  if (tensor.isFloat()) {
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (int64_t k = 0; k < n; ++k)
      tensor.f[k] = roundToFloat(tensor.kind(), dist(rng));
  } else if (type.getElementType().isInteger(1)) {
    std::uniform_int_distribution<int64_t> dist(0, 1);
    for (int64_t k = 0; k < n; ++k)
      tensor.i[k] = dist(rng);
  } else {
    // Wrapped to the type: an unsigned type sees [0, 8] and its eight
    // largest values.
    std::uniform_int_distribution<int64_t> dist(-8, 8);
    for (int64_t k = 0; k < n; ++k)
      tensor.i[k] = wrapToInt(tensor.kind(), dist(rng));
  }
  return tensor;
}

std::vector<kiln::HostTensor>
kiln::test::randomE2EInputs(mlir::FunctionType type, unsigned seed) {
  std::mt19937 rng(seed * 7919 + 17);
  std::vector<HostTensor> inputs;
  for (mlir::Type input : type.getInputs())
    inputs.push_back(
        randomE2EInput(mlir::cast<mlir::RankedTensorType>(input), rng));
  return inputs;
}
