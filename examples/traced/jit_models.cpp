//===- jit_models.cpp - Run the example models with kiln::jit -------------===//
//
// jit_models OUT_DIR               (after trace_models and kiln-run)
// jit_models --check-saved OUT_DIR (after run_saved)
//
// For each example model: evaluate it with the reference evaluator on the
// inputs trace_models wrote; compile it in-process with kiln::jit, run it,
// run it again (the second call must hit the cache) and compare; compare
// what kiln-compile + kiln-run produced (OUT_DIR/<model>.aot/*.npy); save
// the compiled module as OUT_DIR/<model>.kmod for the runtime-only host.
// With --check-saved, compare that host's outputs (<model>.saved.out<i>.bin).
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/HalfFloat.h"
#include "kiln/Jit.h"
#include "kiln/Npy.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

using namespace kiln;

namespace {

int failures = 0;

void fail(const std::string &message) {
  std::cerr << "FAIL: " << message << "\n";
  ++failures;
}

/// Compares `count` values read through `get` with the evaluator's output.
template <typename Get>
void compare(const std::string &what, const HostTensor &expected, int64_t count,
             Get get) {
  if (count != expected.numElements())
    return fail(what + ": " + std::to_string(count) + " elements, expected " +
                std::to_string(expected.numElements()));
  for (int64_t k = 0; k < count; ++k) {
    double want = expected.getAsDouble(k), got = get(k);
    if (std::fabs(want - got) > 1e-6 + 1e-5 * std::fabs(want))
      return fail(what + ": element " + std::to_string(k) + " is " +
                  std::to_string(got) + ", the reference evaluator gives " +
                  std::to_string(want));
  }
}

double elementOf(const Array &array, int64_t k) { return array.at(k); }

std::vector<char> readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(file), {});
}

size_t dtypeBytes(DType dtype) {
  return kiln::elementTypeSize(kiln::toElementType(dtype));
}

/// Reads the element at `k` of raw bytes holding `dtype` values.
double rawElement(const std::vector<char> &bytes, DType dtype, int64_t k) {
  auto read = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, bytes.data() + k * sizeof(value), sizeof(value));
    return static_cast<double>(value);
  };
  switch (dtype) {
  case DType::F32: return read(float());
  case DType::F64: return read(double());
  case DType::I1: return read(uint8_t());
  case DType::I32: return read(int32_t());
  case DType::I64: return read(int64_t());
  case DType::UI32: return read(uint32_t());
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + k * sizeof(bits), sizeof(bits));
    return dtype == DType::F16 ? kiln::halfToFloat(bits)
                               : kiln::bfloat16ToFloat(bits);
  }
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  bool checkSaved = argc == 3 && std::string(argv[1]) == "--check-saved";
  if (argc != 2 && !checkSaved) {
    std::cerr << "usage: jit_models [--check-saved] OUT_DIR\n";
    return 2;
  }
  std::string out = argv[argc - 1];
  for (const examples::ExampleModel &model : examples::exampleModels()) {
    std::string base = out + "/" + model.name;
    TracedFunction traced = model.trace();
    std::vector<HostTensor> inputs;
    std::vector<Array> arrays;
    for (unsigned i = 0; i < model.inputs.size(); ++i) {
      std::vector<float> values = examples::exampleInput(model.inputs[i], i);
      mlir::Type f32 = mlir::Float32Type::get(traced.context());
      inputs.push_back(HostTensor::fromFloats(
          f32, model.inputs[i].shape,
          std::vector<double>(values.begin(), values.end())));
      arrays.push_back(Array::from(DType::F32, model.inputs[i].shape, values));
    }
    auto expected = evaluate(traced.function(), inputs);
    if (!expected) {
      fail(model.name + ": " + llvm::toString(expected.takeError()));
      continue;
    }
    const std::vector<TensorSpec> &outputs = traced.outputSpecs();

    if (checkSaved) {
      for (size_t r = 0; r < outputs.size(); ++r) {
        std::string path = base + ".saved.out" + std::to_string(r) + ".bin";
        std::vector<char> bytes = readFile(path);
        compare(path, (*expected)[r],
                static_cast<int64_t>(bytes.size() / dtypeBytes(outputs[r].dtype)),
                [&](int64_t k) { return rawElement(bytes, outputs[r].dtype, k); });
      }
      std::printf("%-16s runtime-only host matches the reference evaluator\n",
                  model.name.c_str());
      continue;
    }

    JitFunction fn = jit(model.name, model.body);
    std::vector<Array> first = fn(arrays);
    std::vector<Array> second = fn(arrays);
    if (fn.compileCount() != 1)
      fail(model.name + ": the second call compiled again");
    for (size_t r = 0; r < outputs.size(); ++r) {
      for (const auto *result : {&first, &second})
        compare(model.name + " jit output " + outputs[r].name, (*expected)[r],
                (*result)[r].size(),
                [&](int64_t k) { return elementOf((*result)[r], k); });
      std::string aot = base + ".aot/" + outputs[r].name + ".npy";
      npy::Array array;
      std::string error;
      if (!npy::readNpyFile(aot, array, error)) {
        fail(aot + ": " + error);
        continue;
      }
      std::vector<char> bytes(array.data.begin(), array.data.end());
      compare(aot, (*expected)[r],
              static_cast<int64_t>(bytes.size() / npy::elementSize(array.type)),
              [&](int64_t k) { return rawElement(bytes, outputs[r].dtype, k); });
    }
    fn.compiled(arrays).save(base + ".kmod");
    std::printf("%-16s trace %7.2f ms, jit compile %7.1f ms; jit, cached call "
                "and kiln-run agree with the reference evaluator\n",
                model.name.c_str(), fn.lastTraceSeconds() * 1e3,
                fn.lastCompileSeconds() * 1e3);
  }
  if (failures)
    std::fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
