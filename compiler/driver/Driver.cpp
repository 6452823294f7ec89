//===- Driver.cpp - From kiln IR to a loadable module ---------------------===//
//
// The dialects a compilation needs, the signatures read off the public
// functions, the lowering pipelines, and compileModule: the one sequence
// from a kiln module to each EmitKind.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Cuda.h"
#include "kiln/Backends/Passes.h"
#include "kiln/Fusion/Passes.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/ModelFile.h"
#include "kiln/IR/TiedResults.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using mlir::DialectRegistry;
using mlir::LogicalResult;
using mlir::ModuleOp;
using mlir::RankedTensorType;
using mlir::StringAttr;
using mlir::StringRef;
using mlir::TimingScope;
using mlir::Type;
namespace arith = mlir::arith;
namespace bufferization = mlir::bufferization;
namespace func = mlir::func;
namespace linalg = mlir::linalg;
namespace scf = mlir::scf;
namespace tensor = mlir::tensor;
namespace format = kiln::format;

void kiln::registerCompilerPasses() {
  mlir::kiln::registerKilnBackendsPasses();
  mlir::kiln::registerKilnPasses();
  mlir::kiln::registerKilnFusionPasses();
  mlir::kiln::registerCpuPipelines();
  mlir::kiln::registerCudaPipelines();
}

void kiln::registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<mlir::kiln::KilnDialect, func::FuncDialect,
                  arith::ArithDialect, mlir::math::MathDialect,
                  tensor::TensorDialect, linalg::LinalgDialect,
                  scf::SCFDialect, mlir::memref::MemRefDialect,
                  bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::affine::AffineDialect,
                  mlir::index::IndexDialect, mlir::LLVM::LLVMDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // Which buffers an arith.select or a memref op may alias, for the
  // deallocation passes (kiln-free-after-last-use).
  arith::registerBufferViewFlowOpInterfaceExternalModels(registry);
  mlir::memref::registerBufferViewFlowOpInterfaceExternalModels(registry);
  mlir::kiln::registerCudaDialects(registry);
  mlir::kiln::registerCollectiveBufferizationModels(registry);
}

/// Maps a tensor element type to the runtime's dtype, if the backends
/// compile it.
static bool toDType(Type element, format::DType &dtype) {
  std::optional<kiln::ElementType> type = kiln::classifyElementType(element);
  if (!type || !kiln::getElementTypeInfo(*type).compiled)
    return false;
  dtype = *type;
  return true;
}

static bool describe(Type type, StringAttr nameAttr, std::string defaultName,
                     format::TensorSignature &signature, std::string &what) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape()) {
    llvm::raw_string_ostream os(what);
    os << "has type " << type
       << "; compiled functions take and return statically shaped tensors";
    return false;
  }
  if (!toDType(tensor.getElementType(), signature.dtype)) {
    llvm::raw_string_ostream os(what);
    os << "has element type " << tensor.getElementType()
       << ", which the CPU backend does not support yet ("
       << kiln::compiledElementTypeNames() << ")";
    return false;
  }
  signature.name = nameAttr ? nameAttr.getValue().str() : defaultName;
  signature.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return true;
}

bool kiln::collectSignatures(ModuleOp module,
                             std::vector<format::FunctionSignature> &signatures,
                             std::string &error) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    format::FunctionSignature signature;
    signature.name = func.getName().str();
    signature.entrySymbol = (mlir::kiln::kEntryPrefix + func.getName()).str();
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      format::TensorSignature tensor;
      std::string what;
      if (!describe(func.getArgumentTypes()[i],
                    func.getArgAttrOfType<StringAttr>(i, "kiln.name"),
                    "arg" + std::to_string(i), tensor, what)) {
        error = "function '" + signature.name + "' argument #" +
                std::to_string(i) + " " + what;
        return false;
      }
      signature.inputs.push_back(std::move(tensor));
    }
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      format::TensorSignature tensor;
      std::string what;
      if (!describe(func.getResultTypes()[i],
                    func.getResultAttrOfType<StringAttr>(i, "kiln.name"),
                    "out" + std::to_string(i), tensor, what)) {
        error = "function '" + signature.name + "' result #" +
                std::to_string(i) + " " + what;
        return false;
      }
      signature.outputs.push_back(std::move(tensor));
    }
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (std::optional<unsigned> result = mlir::kiln::tiedResult(func, i);
          result && *result < signature.outputs.size())
        signature.outputs[*result].tiedInput = i;
    signatures.push_back(std::move(signature));
  }
  if (signatures.empty()) {
    error = "the module has no public function to compile";
    return false;
  }
  return true;
}

/// A scope nested in the caller's timing scope, or one that times nothing.
static TimingScope phase(const kiln::CompileOptions &options, StringRef name) {
  return options.timing ? options.timing->nest(name) : TimingScope();
}

LogicalResult kiln::lowerToLLVMDialect(ModuleOp module,
                                       const CompileOptions &options) {
  // The module may come from a context that only knows the kiln dialect
  // (e.g. a tracer's); the lowering needs the others and their
  // bufferization models.
  DialectRegistry registry;
  registerCompilerDialects(registry);
  module.getContext()->appendDialectRegistry(registry);
  mlir::PassManager pm(module.getContext());
  if (options.configurePassManager)
    options.configurePassManager(pm);
  pm.enableVerifier(options.verifyEachPass);
  TimingScope lowering = phase(options, "lowering");
  if (options.timing)
    pm.enableTiming(lowering);
  if (!options.autocast.empty()) {
    if (options.target == Target::Cpu && options.autocast == "bf16" &&
        !mlir::kiln::cpuHasBf16DotProducts(options.cpu))
      mlir::emitWarning(module.getLoc())
          << "--autocast=bf16: the target CPU ('" << options.cpu.cpu
          << "') has no bf16 dot-product instructions (AVX512-BF16 or "
             "AMX-BF16); oneDNN emulates them (below AVX-512 they run as "
             "f32 on widened copies), and bf16 products and convolutions "
             "run slower than f32 there";
    // Attention written as ops is recognized before the products it is
    // made of are cast, so that it stays one op, which both targets run as
    // their fused kernels, where its cast products would be a composition
    // whose scores go through memory. On the CPU, whose attention kernel is
    // f32, it stays f32; the CUDA targets from sm_80 on run it in half
    // precision on tensor cores (or cuDNN), as PyTorch's autocast runs
    // scaled_dot_product_attention (--target=cuda-on-cpu emulates those
    // kernels).
    bool cuda =
        options.target == Target::Cuda || options.target == Target::CudaOnCpu;
    if (cuda ? options.cuda.fuse : options.cpu.fuse) {
      pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
      pm.addPass(mlir::kiln::createFuseAttention());
    }
    mlir::kiln::AutocastOptions autocast;
    autocast.dtype = options.autocast;
    llvm::StringRef arch = options.cuda.arch;
    unsigned sm = 0;
    autocast.attention =
        options.target == Target::CudaOnCpu ||
        (options.target == Target::Cuda && arch.consume_front("sm_") &&
         !arch.getAsInteger(10, sm) && sm >= 80);
    pm.addPass(mlir::kiln::createAutocast(autocast));
  }
  if (options.target == Target::Cuda || options.target == Target::CudaOnCpu) {
    if (!mlir::kiln::hasCudaBackend())
      return module.emitError(mlir::kiln::kNoCudaBackendMessage)
             << "; compile for the CPU (--target=cpu)";
    if (options.cpu.profile)
      return module.emitError(
          "profiling (--profile) is not supported for the CUDA target; "
          "compile for the CPU (--target=cpu) to profile");
    std::string ptxFeature;
    if (!mlir::kiln::isSupportedCudaArch(options.cuda.arch, ptxFeature))
      return module.emitError("unsupported CUDA architecture '")
             << options.cuda.arch
             << "' (supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90)";
    mlir::kiln::CudaOptions cuda = options.cuda;
    cuda.onCpu = options.target == Target::CudaOnCpu;
    mlir::kiln::buildCudaLoweringPipeline(pm, cuda);
  } else {
    mlir::kiln::buildCpuLoweringPipeline(pm, options.cpu);
  }
  if (mlir::failed(pm.run(module)))
    return mlir::failure();
  if (!options.verifyEachPass && mlir::failed(mlir::verify(module)))
    return module.emitError("the lowering produced invalid IR; compile with "
                            "--verify-each to find the pass that did");
  return mlir::success();
}

std::unique_ptr<llvm::Module>
kiln::translateHostCode(ModuleOp module, llvm::LLVMContext &context,
                        const CompileOptions &options, std::string &error) {
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::kiln::translateAndOptimize(module, context, options.cpu, error);
  if (llvmModule && options.target == Target::Cuda &&
      !mlir::kiln::bindGpuRuntimeCalls(*llvmModule, error))
    return nullptr;
  return llvmModule;
}

bool kiln::isTextEmitKind(EmitKind kind) {
  return kind == EmitKind::Mlir || kind == EmitKind::Llvm ||
         kind == EmitKind::Ptx;
}

/// Copies text or bytes into `output`.
static void assign(llvm::StringRef bytes, std::vector<uint8_t> &output) {
  output.assign(bytes.bytes_begin(), bytes.bytes_end());
}

bool kiln::compileModule(ModuleOp module, const CompileOptions &options,
                         EmitKind emit, std::vector<uint8_t> &output,
                         std::string &error) {
  if (emit == EmitKind::Kfb)
    return writeModelFile(module, output, error);
  if (emit == EmitKind::Ptx && options.target != Target::Cuda) {
    error = "PTX is only produced for the CUDA target";
    return false;
  }

  // A function that names a device mesh (kiln.mesh) is compiled as the
  // program of one of its ranks: kiln-partition first, so that the
  // signatures are the ranks' local shapes.
  bool annotated = false;
  module.walk([&](func::FuncOp f) {
    annotated |= f->hasAttr(mlir::kiln::kMeshAttrName);
  });
  if (annotated) {
    mlir::PassManager pm(module.getContext());
    pm.addPass(mlir::kiln::createPartition());
    if (mlir::failed(pm.run(module))) {
      error = "partitioning over the kiln.mesh annotation failed";
      return false;
    }
  }

  // Only the CPU backend writes results into donated arguments
  // (kiln/IR/TiedResults.h); elsewhere every result gets a buffer of its
  // own and the arguments are left alone.
  if (options.target != Target::Cpu)
    module.walk([](func::FuncOp func) {
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.removeArgAttr(i, mlir::kiln::kTiedResultAttrName);
    });

  format::ModuleContents contents;
  contents.target = options.target == Target::Cuda
                        ? "cuda-" + options.cuda.arch
                        : std::string("cpu-x86_64");
  if (!collectSignatures(module, contents.functions, error))
    return false;
  if (mlir::failed(lowerToLLVMDialect(module, options))) {
    error = "lowering to the LLVM dialect failed";
    return false;
  }
  if (emit == EmitKind::Mlir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os);
    assign(text, output);
    return true;
  }
  if (options.target == Target::Cuda &&
      (emit == EmitKind::Ptx || emit == EmitKind::Kmod)) {
    std::string ptx;
    if (!mlir::kiln::extractPtx(module, ptx, error))
      return false;
    if (emit == EmitKind::Ptx) {
      assign(ptx, output);
      return true;
    }
    contents.deviceCode.assign(ptx.begin(), ptx.end());
  }

  // The constant pool's bytes go into the module, not through LLVM
  // (kiln-cpu-pool-constants); --emit=llvm and obj show the code alone.
  TimingScope pooling = phase(options, "constant pool");
  mlir::kiln::ConstantPool pool;
  if (!mlir::kiln::extractConstantPool(module, pool, error))
    return false;
  pooling.stop();

  llvm::LLVMContext context;
  TimingScope translation = phase(options, "LLVM translation and optimization");
  std::unique_ptr<llvm::Module> llvmModule =
      translateHostCode(module, context, options, error);
  translation.stop();
  if (!llvmModule)
    return false;
  if (emit == EmitKind::Llvm) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    assign(text, output);
    return true;
  }
  llvm::SmallVector<char, 0> object;
  TimingScope codegen = phase(options, "code generation");
  if (!mlir::kiln::emitObject(*llvmModule, options.cpu, object, error))
    return false;
  codegen.stop();
  if (emit == EmitKind::Obj) {
    output.assign(object.begin(), object.end());
    return true;
  }
  TimingScope link = phase(options, "linking");
  if (!mlir::kiln::linkSharedObject(object, contents.code, error))
    return false;
  link.stop();
  TimingScope pack = phase(options, "packing the module");
  if (!format::validateModule(contents, error))
    return false;
  output = format::writeModule(contents, pool.size,
                               [&](uint8_t *place) { pool.write(place); });
  return true;
}

bool kiln::compileToKmod(ModuleOp module, const CompileOptions &options,
                         std::vector<uint8_t> &kmod, std::string &error) {
  return compileModule(module, options, EmitKind::Kmod, kmod, error);
}
