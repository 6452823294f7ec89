//===- GpuRuntimeBinding.cpp - mgpu* calls through runtime-filled slots ---===//
//
// The host code that gpu-to-llvm and the gpu.launch_func translation emit
// calls the upstream GPU runtime ABI (mgpuModuleLoadJIT, mgpuLaunchKernel,
// mgpuMemAlloc, ...), which upstream implements in a library linked
// against libcuda; kiln's own host code also calls library functions of
// the runtime (kiln/CudaLibraryAbi.h). kiln's runtime must load modules on
// machines without CUDA, so no such library is linked: each declared mgpu
// or library function becomes an internal stub calling through an
// exported pointer `kiln_gpu_fn_<name>`,
// and the runtime stores its own implementation (over the dlopen'ed driver)
// in every slot before the first call.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "kiln/Backends/Cuda.h"

#include "kiln/CudaLibraryAbi.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

/// The mgpu and library functions kiln's runtime implements besides its
/// library work and the calls of graph forms (mlir::kiln::isDeviceWorkCall);
/// they must stay in step with gpuRuntimeFunctions() in
/// runtime/lib/cuda/GpuRuntimeShim.cpp.
static constexpr llvm::StringLiteral kImplementedByRuntime[] = {
    "mgpuModuleLoad",
    "mgpuModuleLoadJIT",
    "mgpuModuleUnload",
    "mgpuModuleGetFunction",
    "mgpuLaunchKernel",
    "mgpuStreamCreate",
    "mgpuStreamDestroy",
    "mgpuStreamSynchronize",
    "mgpuMemAlloc",
    "mgpuMemFree",
    "mgpuMemcpy",
    "mgpuMemset32",
    KILN_CUDA_COPY_CONSTANT_FUNCTION,
    KILN_CUDA_RESIDENT_CONSTANT_FUNCTION,
    KILN_CUDA_GRAPH_CALL_BEGIN_FUNCTION,
    KILN_CUDA_GRAPH_CALL_END_FUNCTION};

/// Replaces the embedded PTX constant by loads from the exported image
/// slot, so that the shared object does not carry a second copy of it.
static bool externalizeKernelImage(llvm::Module &module, std::string &error) {
  llvm::GlobalVariable *image = nullptr;
  for (llvm::GlobalVariable &global : module.globals()) {
    if (!global.getName().ends_with("_bin_cst"))
      continue;
    if (image) {
      error = "the host code embeds more than one kernel binary ('" +
              image->getName().str() + "', '" + global.getName().str() + "')";
      return false;
    }
    image = &global;
  }
  if (!image)
    return true;
  auto *pointer = llvm::PointerType::getUnqual(module.getContext());
  auto *slot = new llvm::GlobalVariable(
      module, pointer, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(pointer), mlir::kiln::kKernelImageSlot);
  slot->setVisibility(llvm::GlobalValue::DefaultVisibility);
  llvm::SmallVector<llvm::Use *> uses;
  for (llvm::Use &use : image->uses())
    uses.push_back(&use);
  for (llvm::Use *use : uses) {
    auto *user = llvm::dyn_cast<llvm::Instruction>(use->getUser());
    if (!user || llvm::isa<llvm::PHINode>(user)) {
      error = "the kernel binary '" + image->getName().str() +
              "' is used other than by an instruction";
      return false;
    }
    llvm::IRBuilder<> builder(user);
    use->set(builder.CreateLoad(pointer, slot, "kernel_image"));
  }
  image->eraseFromParent();
  return true;
}

/// The gpu.launch_func translation allocates each launch's parameter block
/// with an alloca where the launch is; inside a loop that alloca would grow
/// the stack every iteration. A kernel launch copies its parameters, so
/// every fixed-size alloca outside the entry block moves to it.
static void hoistStaticAllocas(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::BasicBlock &entry = function.getEntryBlock();
    llvm::SmallVector<llvm::AllocaInst *> allocas;
    for (llvm::BasicBlock &block : function) {
      if (&block == &entry)
        continue;
      for (llvm::Instruction &instruction : block)
        if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction))
          if (llvm::isa<llvm::ConstantInt>(alloca->getArraySize()))
            allocas.push_back(alloca);
    }
    for (llvm::AllocaInst *alloca : allocas)
      alloca->moveBefore(&*entry.getFirstInsertionPt());
  }
}

bool mlir::kiln::bindGpuRuntimeCalls(llvm::Module &module,
                                     std::string &error) {
  if (!externalizeKernelImage(module, error))
    return false;
  hoistStaticAllocas(module);
  llvm::SmallVector<llvm::Function *> declarations;
  for (llvm::Function &function : module) {
    if (!function.isDeclaration())
      continue;
    bool implemented =
        mlir::kiln::isDeviceWorkCall(function.getName(), kImplementedByRuntime);
    if (!implemented && !function.getName().starts_with("mgpu"))
      continue;
    if (!implemented) {
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
