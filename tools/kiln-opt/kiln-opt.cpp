//===- kiln-opt.cpp - mlir-opt for the kiln dialect -----------------------===//
//
// Parses kiln (and upstream) IR, runs the passes named on the command line
// and prints the result; the driver of the lit tests.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Cuda.h"
#include "kiln/Backends/Passes.h"
#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/Passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::kiln::registerKilnBackendsPasses();
  mlir::kiln::registerKilnPasses();
  mlir::kiln::registerKilnFusionPasses();
  mlir::kiln::registerCpuPipelines();
  mlir::kiln::registerCudaPipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::kiln::KilnDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
