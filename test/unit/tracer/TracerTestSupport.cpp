//===- TracerTestSupport.cpp - Helpers for the tracer tests ---------------===//

#include "TracerTestSupport.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Error.h"

#include <cmath>

namespace tracertest {

void expectVerifies(const kiln::TracedFunction &f) {
  ASSERT_TRUE(f.module());
  EXPECT_TRUE(mlir::succeeded(mlir::verify(f.module()))) << f.str();
}

std::vector<kiln::HostTensor> run(const kiln::TracedFunction &f,
                                  const std::vector<Data> &inputs) {
  expectVerifies(f);
  const std::vector<kiln::TensorSpec> &specs = f.inputSpecs();
  EXPECT_EQ(specs.size(), inputs.size());
  if (specs.size() != inputs.size())
    return {};
  std::vector<kiln::HostTensor> hostInputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Data &data = inputs[i];
    EXPECT_EQ(specs[i].dtype, data.dtype) << "input " << i;
    EXPECT_EQ(specs[i].shape, data.shape) << "input " << i;
    mlir::Type type =
        kiln::getMlirElementType(kiln::toElementType(data.dtype), f.context());
    if (kiln::isFloat(data.dtype)) {
      hostInputs.push_back(
          kiln::HostTensor::fromFloats(type, data.shape, data.values));
    } else {
      std::vector<int64_t> ints(data.values.begin(), data.values.end());
      hostInputs.push_back(kiln::HostTensor::fromInts(type, data.shape, ints));
    }
  }
  llvm::Expected<std::vector<kiln::HostTensor>> outputs =
      kiln::evaluate(f.function(), hostInputs);
  if (!outputs) {
    ADD_FAILURE() << "evaluation failed: "
                  << llvm::toString(outputs.takeError()) << "\n"
                  << f.str();
    return {};
  }
  EXPECT_EQ(outputs->size(), f.outputSpecs().size());
  return std::move(*outputs);
}

std::vector<double> values(const kiln::HostTensor &t) {
  std::vector<double> result;
  for (int64_t n = 0; n < t.numElements(); ++n)
    result.push_back(t.getAsDouble(n));
  return result;
}

kiln::DType dtypeOf(const kiln::HostTensor &t) {
  return kiln::tracedDType(t.kind()).value_or(kiln::DType::F32);
}

void expectTensor(const kiln::HostTensor &t, kiln::DType dtype,
                  const kiln::Shape &shape,
                  const std::vector<double> &expected, double rtol) {
  EXPECT_EQ(kiln::elementTypeName(t.kind()),
            std::string(kiln::dtypeName(dtype)))
      << t.toString();
  EXPECT_EQ(t.shape, shape) << t.toString();
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size()) << t.toString();
  for (size_t n = 0; n < got.size(); ++n) {
    if (std::isnan(expected[n])) {
      EXPECT_TRUE(std::isnan(got[n])) << "element " << n << " of "
                                      << t.toString();
      continue;
    }
    double tolerance = kiln::isFloat(dtype)
                           ? rtol * std::max(1.0, std::fabs(expected[n]))
                           : 0.0;
    EXPECT_NEAR(got[n], expected[n], tolerance)
        << "element " << n << " of " << t.toString();
  }
}

int countOps(const kiln::TracedFunction &f, const std::string &name) {
  int count = 0;
  f.module().walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == name)
      ++count;
  });
  return count;
}

std::string expectTraceError(const std::function<void()> &body) {
  try {
    body();
  } catch (const kiln::TraceError &error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a kiln::TraceError";
  return "";
}

} // namespace tracertest
