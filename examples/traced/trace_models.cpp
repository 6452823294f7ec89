//===- trace_models.cpp - Trace the example models and save them ----------===//
//
// trace_models OUT_DIR
//
// Traces each example model and writes OUT_DIR/<model>.kfb (the portable
// model file), <model>.mlir (the same graph as text) and its inputs as
// <model>.in<i>.npy (for kiln-run) and <model>.in<i>.bin (raw bytes, for
// the runtime-only host program). Checks that reading the .kfb back gives
// the traced IR exactly, and prints how long each trace took.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "kiln/IR/ModelFile.h"
#include "kiln/Npy.h"

#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

using namespace kiln;

static bool writeBytes(const std::string &path, const void *data, size_t size) {
  std::ofstream file(path, std::ios::binary);
  file.write(static_cast<const char *>(data), size);
  return static_cast<bool>(file);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: trace_models OUT_DIR\n";
    return 2;
  }
  std::string out = argv[1];
  for (const examples::ExampleModel &model : examples::exampleModels()) {
    auto start = std::chrono::steady_clock::now();
    TracedFunction traced = model.trace();
    double traceMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();

    std::vector<uint8_t> kfb;
    std::string error;
    if (!writeModelFile(traced.module(), kfb, error)) {
      std::cerr << model.name << ": " << error << "\n";
      return 1;
    }
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> reread =
        readModelFile(kfb, &context, error, model.name + ".kfb");
    std::string text;
    llvm::raw_string_ostream os(text);
    if (reread)
      reread->print(os);
    if (!reread || text != traced.str()) {
      std::cerr << model.name << ": the .kfb does not read back as the traced "
                << "IR" << (error.empty() ? "" : ": " + error) << "\n";
      return 1;
    }
    std::string base = out + "/" + model.name;
    if (!writeBytes(base + ".kfb", kfb.data(), kfb.size()) ||
        !writeBytes(base + ".mlir", traced.str().data(), traced.str().size())) {
      std::cerr << model.name << ": cannot write to " << out << "\n";
      return 1;
    }
    for (unsigned i = 0; i < model.inputs.size(); ++i) {
      std::vector<float> values = examples::exampleInput(model.inputs[i], i);
      npy::Array array;
      array.type = npy::ElementType::F32;
      array.shape = model.inputs[i].shape;
      array.data.resize(values.size() * sizeof(float));
      std::memcpy(array.data.data(), values.data(), array.data.size());
      std::string name = base + ".in" + std::to_string(i);
      if (!npy::writeNpyFile(name + ".npy", array, error) ||
          !writeBytes(name + ".bin", values.data(), array.data.size())) {
        std::cerr << name << ": " << error << "\n";
        return 1;
      }
    }
    std::printf("%-16s traced in %7.2f ms, %zu bytes of .kfb\n",
                model.name.c_str(), traceMs, kfb.size());
  }
  return 0;
}
