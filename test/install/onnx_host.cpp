//===- onnx_host.cpp - The installed ONNX importer, from outside -----------===//
//
// Imports the ONNX model given on the command line with kiln::onnx
// (find_package(kiln COMPONENTS onnx)), giving its input x the shape 2x4,
// and checks that the module has a function taking a 2x4 f32 tensor. Exits
// 0 when it does.
//
//===----------------------------------------------------------------------===//

#include <kiln/IR/KilnDialect.h>
#include <kiln/Onnx/Import.h>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: onnx_host MODEL.onnx\n");
    return 2;
  }
  mlir::MLIRContext context;
  context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  kiln::OnnxImportOptions options;
  options.inputShapes["x"] = {2, 4};
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::importOnnxFile(argv[1], context, options, error);
  if (!module) {
    std::fprintf(stderr, "onnx_host: %s\n", error.c_str());
    return 1;
  }
  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(
        func.getFunctionType().getInput(0));
    if (type && type.getShape() == llvm::ArrayRef<int64_t>{2, 4} &&
        type.getElementType().isF32()) {
      std::printf("onnx_host: imported @%s\n", func.getName().str().c_str());
      return 0;
    }
  }
  std::fprintf(stderr, "onnx_host: no function takes a 2x4 f32 input\n");
  return 1;
}
