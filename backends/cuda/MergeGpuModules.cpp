//===- MergeGpuModules.cpp - One gpu.module per compiled module -----------===//
//
// gpu-kernel-outlining gives every kernel its own gpu.module, which would
// become as many PTX modules to load. Kernel names are unique (each is its
// module's symbol name), so every gpu.func moves into one `kiln_kernels`
// module and each gpu.launch_func is pointed at it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAMERGEGPUMODULES
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCudaMergeGpuModulesPass
    : kiln::impl::KilnCudaMergeGpuModulesBase<KilnCudaMergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
      return;
    OpBuilder builder(gpuModules.front());
    auto merged = builder.create<gpu::GPUModuleOp>(module.getLoc(),
                                                   "kiln_kernels");
    SymbolTable mergedSymbols(merged);
    // Outlining names each kernel after its function, and its module
    // uniquely; the merged kernel takes the module's name.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      Block &body = gpuModule->getRegion(0).front();
      unsigned kernels = 0;
      for (auto func : body.getOps<gpu::GPUFuncOp>())
        kernels += func.isKernel();
      for (Operation &op : llvm::make_early_inc_range(body.getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        if (!symbol)
          continue;
        StringAttr original = symbol.getNameAttr();
        std::string name = kernels == 1 && isa<gpu::GPUFuncOp>(op) &&
                                   cast<gpu::GPUFuncOp>(op).isKernel()
                               ? gpuModule.getName().str()
                               : (gpuModule.getName() + "_" +
                                  original.getValue())
                                     .str();
        if (mergedSymbols.lookup(name)) {
          op.emitOpError("cannot be merged into one gpu.module: the name '")
              << name << "' is taken";
          return signalPassFailure();
        }
        op.moveBefore(merged->getRegion(0).front().getTerminator());
        symbol.setName(name);
        mergedSymbols.insert(&op);
        renamed[{gpuModule.getNameAttr(), original}] =
            StringAttr::get(&getContext(), name);
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr name = renamed.lookup(
          {launch.getKernelModuleName(), launch.getKernelName()});
      if (!name)
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(name)}));
    });
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      gpuModule.erase();
  }
};
} // namespace
