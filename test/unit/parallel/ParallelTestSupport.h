//===- ParallelTestSupport.h - What the parallel pass tests share -*- C++ -*-===//
//
// Helpers of DataParallelTest.cpp, ZeroTest.cpp and PartitionTest.cpp:
// random inputs, cutting a batch into the ranks' rows (a tensor into
// blocks), comparing a rank's results with the original's, counting ops,
// and the loss the traced training steps minimize.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_PARALLEL_PARALLELTESTSUPPORT_H
#define KILN_TEST_UNIT_PARALLEL_PARALLELTESTSUPPORT_H

#include "kiln/Compiler/HostTensor.h"
#include "kiln/kiln.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kiln::parallel_test {

/// max |actual - expected| / max |expected| over the elements (the
/// difference itself when `expected` is all zeros).
inline double relativeDifference(const HostTensor &actual,
                                 const HostTensor &expected) {
  double difference = 0, scale = 0;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    difference = std::max(
        difference, std::fabs(actual.getAsDouble(i) - expected.getAsDouble(i)));
    scale = std::max(scale, std::fabs(expected.getAsDouble(i)));
  }
  return scale == 0 ? difference : difference / scale;
}

/// The rows of `t` that rank `rank` of `ranks` holds.
inline HostTensor rowsOf(const HostTensor &t, int64_t rank, int64_t ranks) {
  std::vector<int64_t> shape = t.shape;
  int64_t rows = shape[0] / ranks;
  shape[0] = rows;
  int64_t rowSize = t.numElements() / t.shape[0];
  HostTensor piece(t.elementType, shape);
  int64_t begin = rank * rows * rowSize, end = begin + rows * rowSize;
  if (t.isFloat())
    piece.f.assign(t.f.begin() + begin, t.f.begin() + end);
  else
    piece.i.assign(t.i.begin() + begin, t.i.begin() + end);
  return piece;
}

/// A random tensor of `type`: floats uniform in [-1, 1], integers in
/// [0, intBound).
inline HostTensor randomTensor(mlir::Type type, std::mt19937 &rng,
                               int64_t intBound = 4) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  std::vector<int64_t> shape(tensor.getShape());
  int64_t count = tensor.getNumElements();
  if (mlir::isa<mlir::FloatType>(tensor.getElementType())) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> values(count);
    for (double &v : values)
      v = dist(rng);
    return HostTensor::fromFloats(tensor.getElementType(), shape, values);
  }
  std::uniform_int_distribution<int64_t> dist(0, intBound - 1);
  std::vector<int64_t> values(count);
  for (int64_t &v : values)
    v = dist(rng);
  return HostTensor::fromInts(tensor.getElementType(), shape, values);
}

/// A random tensor of each of `types`.
inline std::vector<HostTensor> randomInputs(llvm::ArrayRef<mlir::Type> types,
                                            std::mt19937 &rng) {
  std::vector<HostTensor> inputs;
  for (mlir::Type type : types)
    inputs.push_back(randomTensor(type, rng));
  return inputs;
}

/// One-hot rows for random labels, of the float matrix type `type`.
inline HostTensor randomOneHot(mlir::Type type, std::mt19937 &rng) {
  auto matrix = mlir::cast<mlir::RankedTensorType>(type);
  int64_t rows = matrix.getDimSize(0), classes = matrix.getDimSize(1);
  std::uniform_int_distribution<int64_t> label(0, classes - 1);
  std::vector<double> values(rows * classes, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    values[r * classes + label(rng)] = 1.0;
  return HostTensor::fromFloats(matrix.getElementType(), {rows, classes},
                                values);
}

/// Seeded random data for the parallel tests' fixtures.
class RandomData {
protected:
  explicit RandomData(unsigned seed) : rng(seed) {}

  HostTensor random(mlir::Type type, int64_t intBound = 4) {
    return randomTensor(type, rng, intBound);
  }
  std::vector<HostTensor> randomInputs(mlir::func::FuncOp f) {
    return ::kiln::parallel_test::randomInputs(f.getArgumentTypes(), rng);
  }
  HostTensor randomOneHot(mlir::Type type) {
    return ::kiln::parallel_test::randomOneHot(type, rng);
  }

  std::mt19937 rng;
};

/// Block `index` of `parts` equal blocks of `t` along dimension `dim`.
inline HostTensor blockOf(const HostTensor &t, int64_t dim, int64_t index,
                          int64_t parts) {
  std::vector<int64_t> shape = t.shape;
  int64_t size = shape[dim] / parts;
  shape[dim] = size;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= t.shape[d];
  for (size_t d = dim + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d];
  HostTensor piece(t.elementType, shape);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t from = (o * t.shape[dim] + index * size) * inner;
    int64_t to = o * size * inner;
    for (int64_t k = 0; k < size * inner; ++k) {
      if (t.isFloat())
        piece.f[to + k] = t.f[from + k];
      else
        piece.i[to + k] = t.i[from + k];
    }
  }
  return piece;
}

/// How many ops named `name` `root` holds, itself included.
inline int countOps(mlir::Operation *root, llvm::StringRef name) {
  int count = 0;
  root->walk([&](mlir::Operation *op) {
    count += op->getName().getStringRef() == name;
  });
  return count;
}

/// Mean softmax cross-entropy of `logits` against one-hot rows.
inline Tensor crossEntropy(const Tensor &logits, const Tensor &onehot) {
  return -mean(sum(onehot * log_softmax(logits, -1), 1));
}

} // namespace kiln::parallel_test

#endif // KILN_TEST_UNIT_PARALLEL_PARALLELTESTSUPPORT_H
