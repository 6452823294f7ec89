//===- ObjectEmitter.cpp - LLVM dialect to host object code ---------------===//
//
// Translates the lowered module to LLVM IR, configures it for the target
// CPU (the compiling host by default, so AVX-512 is used where present),
// runs LLVM's optimization pipeline and emits position-independent object
// code, ready to be linked into a shared object.
//
// On x86 CPUs with AVX-512F, LLVM still prefers 256-bit vectors for most
// CPUs (to avoid the frequency drop of 512-bit instructions on older
// cores), so the loop vectorizer would use half the register width. The
// generated code spends its time in long vectorizable loops, where 512-bit
// vectors halve the instruction count, so every function gets
// "prefer-vector-width"="512" there (at -O1 and above: -O0 does not
// vectorize). Other CPUs keep LLVM's default.
//
// Identical functions are merged before LLVM optimizes anything: the OpenMP
// translation makes each parallel loop a function, and a model's repeated
// blocks repeat those functions (BERT-base's 12 layers: 223 functions, most
// of them in 12 copies), which LLVM would otherwise optimize and compile
// once per copy.
//
// Functions with vector forms for the loop vectorizer (kiln-cpu-sin-cos's
// kiln_sinf/kiln_cosf) name them in "vector-function-abi-variant". Nothing
// calls a vector form before the vectorizer does, so each is added to
// llvm.compiler.used: otherwise the optimizer would delete it as an unused
// internal function first (or change its calling convention).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace mlir;

namespace {
/// Creates the TargetMachine for `cpu` ("host" = this machine), PIC.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const kiln::CpuOptions &options, std::string &error) {
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpu = options.cpu;
  std::string features;
  if (cpu == "host") {
    cpu = llvm::sys::getHostCPUName().str();
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      features += (feature.second ? "+" : "-") + feature.first().str() + ",";
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu)) {
    error = "unknown target CPU '" + cpu + "' for " + triple;
    return nullptr;
  }
  static const llvm::CodeGenOptLevel levels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, levels[std::min(options.optLevel, 3u)]));
  if (!machine)
    error = "cannot create a target machine for " + triple + " (cpu " + cpu +
            ")";
  return machine;
}

/// Whether `machine` generates code for an x86 CPU with AVX-512F.
bool hasAvx512(const llvm::TargetMachine &machine) {
  if (!machine.getTargetTriple().isX86())
    return false;
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  return subtarget && subtarget->checkFeatures("+avx512f");
}

} // namespace

/// Whether the x86 CPU that `options` compiles for has one of `features`
/// (LLVM's names, "+avx512bf16").
static bool cpuHasAnyOf(const kiln::CpuOptions &options,
                        ArrayRef<llvm::StringRef> features) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine || !machine->getTargetTriple().isX86())
    return false;
  const llvm::MCSubtargetInfo *subtarget = machine->getMCSubtargetInfo();
  return subtarget && llvm::any_of(features, [&](llvm::StringRef feature) {
           return subtarget->checkFeatures(feature);
         });
}

bool kiln::cpuHasBf16DotProducts(const kiln::CpuOptions &options) {
  return cpuHasAnyOf(options, {"+avx512bf16", "+amx-bf16"});
}

bool kiln::cpuHasByteShuffles(const kiln::CpuOptions &options) {
  return cpuHasAnyOf(options, {"+avx512vbmi"});
}

namespace {
/// Merges the functions of `module` that are identical, before anything
/// optimizes them. Each parallel loop becomes a function of its own when
/// the OpenMP dialect is translated, and a model's repeated blocks (the 12
/// layers of BERT-base) give the same loop bodies over and over: LLVM would
/// optimize and compile each copy. A merged function is replaced at its
/// uses or becomes a call of the one kept.
void mergeIdenticalFunctions(llvm::Module &module,
                             llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager passes;
  passes.addPass(llvm::MergeFunctionsPass());
  passes.run(module, modules);
}

/// Adds the vector forms that functions of `module` name in their
/// "vector-function-abi-variant" attribute to llvm.compiler.used. Each
/// entry of the comma-separated list ends in "(vector form's name)".
void keepVectorForms(llvm::Module &module) {
  SmallVector<llvm::GlobalValue *> forms;
  for (llvm::Function &function : module) {
    llvm::Attribute variants =
        function.getFnAttribute("vector-function-abi-variant");
    if (!variants.isValid())
      continue;
    SmallVector<StringRef> entries;
    variants.getValueAsString().split(entries, ',');
    for (StringRef entry : entries) {
      StringRef name = entry.rsplit('(').second.rtrim(')');
      if (llvm::Function *form = module.getFunction(name))
        forms.push_back(form);
    }
  }
  if (!forms.empty())
    llvm::appendToCompilerUsed(module, forms);
}
} // namespace

std::unique_ptr<llvm::Module>
kiln::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                           const CpuOptions &options, std::string &error) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerOpenMPDialectTranslation(*module.getContext());
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return nullptr;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "kiln");
  if (!llvmModule) {
    error = "translation of the lowered module to LLVM IR failed";
    return nullptr;
  }
  // Export only the entry wrappers; helpers that passes added after the
  // wrappers were made (e.g. the deallocation helper) become internal too.
  for (llvm::Function &function : *llvmModule)
    if (!function.isDeclaration() &&
        !function.getName().starts_with(kEntryPrefix))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  keepVectorForms(*llvmModule);
  if (options.optLevel > 0 && hasAvx512(*machine))
    for (llvm::Function &function : *llvmModule)
      if (!function.isDeclaration())
        function.addFnAttr("prefer-vector-width", "512");
  llvmModule->setTargetTriple(machine->getTargetTriple().str());
  llvmModule->setDataLayout(machine->createDataLayout());
  if (options.optLevel > 0)
    mergeIdenticalFunctions(*llvmModule, *machine);
  auto optimize = makeOptimizingTransformer(std::min(options.optLevel, 3u),
                                            /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get())) {
    error = "LLVM optimization failed: " + llvm::toString(std::move(err));
    return nullptr;
  }
  return llvmModule;
}

bool kiln::emitObject(llvm::Module &module, const CpuOptions &options,
                      llvm::SmallVectorImpl<char> &object, std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return false;
  // The object holds the module's constants (a transformer's weights:
  // hundreds of megabytes); growing the buffer by doubling would copy them
  // about twice more, so it starts at their size.
  uint64_t constantBytes = 0;
  const llvm::DataLayout &layout = module.getDataLayout();
  for (const llvm::GlobalVariable &global : module.globals())
    if (global.hasInitializer())
      constantBytes += layout.getTypeAllocSize(global.getValueType());
  object.reserve(object.size() + constantBytes + (1 << 20));
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  passes.run(module);
  return true;
}
