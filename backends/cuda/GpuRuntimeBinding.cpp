//===- GpuRuntimeBinding.cpp - mgpu* calls through runtime-filled slots ---===//
//
// The host code that gpu-to-llvm and the gpu.launch_func translation emit
// calls the upstream GPU runtime ABI (mgpuModuleLoadJIT, mgpuLaunchKernel,
// mgpuMemAlloc, ...), which upstream implements in a library linked
// against libcuda. kiln's runtime must load modules on machines without
// CUDA, so no such library is linked: each declared mgpu function becomes
// an internal stub calling through an exported pointer `kiln_gpu_fn_<name>`,
// and the runtime stores its own implementation (over the dlopen'ed driver)
// in every slot before the first call.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cuda.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

/// The mgpu functions kiln's runtime implements; it must stay in step with
/// gpuRuntimeFunctions() in runtime/lib/cuda/GpuRuntimeShim.cpp.
static const char *const kImplementedByRuntime[] = {
    "mgpuModuleLoad",      "mgpuModuleLoadJIT",     "mgpuModuleUnload",
    "mgpuModuleGetFunction", "mgpuLaunchKernel",    "mgpuStreamCreate",
    "mgpuStreamDestroy",   "mgpuStreamSynchronize", "mgpuMemAlloc",
    "mgpuMemFree",         "mgpuMemcpy",            "mgpuMemset32"};

bool mlir::kiln::bindGpuRuntimeCalls(llvm::Module &module,
                                     std::string &error) {
  llvm::SmallVector<llvm::Function *> declarations;
  for (llvm::Function &function : module) {
    if (!function.isDeclaration() || !function.getName().starts_with("mgpu"))
      continue;
    if (!llvm::is_contained(kImplementedByRuntime, function.getName())) {
      error = "the host code calls GPU runtime function '" +
              function.getName().str() +
              "', which the kiln runtime does not provide";
      return false;
    }
    declarations.push_back(&function);
  }
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  for (llvm::Function *function : declarations) {
    auto *slot = new llvm::GlobalVariable(
        module, pointer, /*isConstant=*/false,
        llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantPointerNull::get(pointer),
        (kGpuRuntimeSlotPrefix + function->getName()).str());
    slot->setVisibility(llvm::GlobalValue::DefaultVisibility);
    function->setLinkage(llvm::GlobalValue::InternalLinkage);
    auto *entry = llvm::BasicBlock::Create(context, "entry", function);
    llvm::IRBuilder<> builder(entry);
    llvm::Value *target = builder.CreateLoad(pointer, slot);
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &arg : function->args())
      args.push_back(&arg);
    llvm::CallInst *call =
        builder.CreateCall(function->getFunctionType(), target, args);
    if (function->getReturnType()->isVoidTy())
      builder.CreateRetVoid();
    else
      builder.CreateRet(call);
  }
  return true;
}
