//===- NoCudaBackend.cpp - kiln/Backends/Cuda.h without the backend -------===//
//
// Built into KilnBackends in place of the library KilnBackendsCuda when kiln
// is configured with -DKILN_CUDA_BACKEND=OFF, so that nothing links the gpu
// and nvvm dialects or LLVM's NVPTX code generator. The driver asks
// hasCudaBackend() before it builds a CUDA pipeline and refuses
// --target=cuda with an error naming the option; the other functions fail
// the same way should anything reach them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cuda.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {
using mlir::kiln::kNoCudaBackendMessage;

/// What buildCudaLoweringPipeline() adds: a pass that fails, saying why.
struct NoCudaBackendPass
    : public PassWrapper<NoCudaBackendPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NoCudaBackendPass)
  void runOnOperation() override {
    getOperation().emitError(kNoCudaBackendMessage);
    signalPassFailure();
  }
};
} // namespace

bool kiln::hasCudaBackend() { return false; }

bool kiln::isSupportedCudaArch(llvm::StringRef, std::string &) {
  return false;
}

void kiln::registerCudaDialects(DialectRegistry &) {}

void kiln::buildCudaLoweringPipeline(OpPassManager &pm, const CudaOptions &) {
  pm.addPass(std::make_unique<NoCudaBackendPass>());
}

void kiln::registerCudaPipelines() {}

bool kiln::extractPtx(ModuleOp, std::string &, std::string &error) {
  error = kNoCudaBackendMessage;
  return false;
}

bool kiln::bindGpuRuntimeCalls(llvm::Module &, std::string &error) {
  error = kNoCudaBackendMessage;
  return false;
}
