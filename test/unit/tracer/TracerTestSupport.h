//===- TracerTestSupport.h - Helpers for the tracer tests -------*- C++ -*-===//
//
// The tracer tests all follow one pattern: trace a program, check that the
// IR verifies, run it with the reference evaluator on concrete inputs, and
// compare with values the test computes itself with plain loops. These
// helpers keep that pattern to a line or two per step.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_TRACER_TRACERTESTSUPPORT_H
#define KILN_TEST_UNIT_TRACER_TRACERTESTSUPPORT_H

#include "kiln/Compiler/HostTensor.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace tracertest {

/// Concrete input data: dtype, shape and row-major values (as doubles,
/// converted to the dtype).
struct Data {
  kiln::DType dtype;
  kiln::Shape shape;
  std::vector<double> values;
};

inline Data f32Data(kiln::Shape shape, std::vector<double> values) {
  return {kiln::DType::F32, std::move(shape), std::move(values)};
}
inline Data f64Data(kiln::Shape shape, std::vector<double> values) {
  return {kiln::DType::F64, std::move(shape), std::move(values)};
}
inline Data i32Data(kiln::Shape shape, std::vector<double> values) {
  return {kiln::DType::I32, std::move(shape), std::move(values)};
}
inline Data i64Data(kiln::Shape shape, std::vector<double> values) {
  return {kiln::DType::I64, std::move(shape), std::move(values)};
}
inline Data i1Data(kiln::Shape shape, std::vector<double> values) {
  return {kiln::DType::I1, std::move(shape), std::move(values)};
}

/// Asserts that the module of `f` verifies.
void expectVerifies(const kiln::TracedFunction &f);

/// Verifies `f`, checks its input specs against `inputs`, evaluates it and
/// returns the outputs. Failures are reported as gtest failures and give an
/// empty vector.
std::vector<kiln::HostTensor> run(const kiln::TracedFunction &f,
                                  const std::vector<Data> &inputs);

/// The elements of `t` as doubles, row-major.
std::vector<double> values(const kiln::HostTensor &t);

/// The dtype of a host tensor.
kiln::DType dtypeOf(const kiln::HostTensor &t);

/// Expects `t` to have `dtype`, `shape` and, elementwise, `expected` within
/// a relative tolerance `rtol` (exact for integers; NaNs compare equal).
void expectTensor(const kiln::HostTensor &t, kiln::DType dtype,
                  const kiln::Shape &shape,
                  const std::vector<double> &expected, double rtol = 1e-6);

/// Number of ops named `name` (e.g. "kiln.broadcast_in_dim") in `f`.
int countOps(const kiln::TracedFunction &f, const std::string &name);

/// Runs `body` and expects it to throw kiln::TraceError; returns what().
std::string expectTraceError(const std::function<void()> &body);

/// Row-major index helpers for independent reference computations.
inline int64_t idx2(int64_t i, int64_t j, int64_t cols) { return i * cols + j; }

/// The file name of the test sources, for checking error locations.
inline std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace tracertest

#endif // KILN_TEST_UNIT_TRACER_TRACERTESTSUPPORT_H
