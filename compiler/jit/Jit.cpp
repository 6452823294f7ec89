//===- Jit.cpp - Compiling traced functions inside a host program ---------===//
//
// compile(): clone the traced module, run the same driver as kiln-compile
// (kiln -> LLVM -> object -> shared object -> .kmod, for the CPU or CUDA)
// and load the bytes with the runtime; with JitOptions::batchArgs,
// kiln-data-parallel rewrites the function for the communicator's ranks first.
// JitFunction: key the cache on the inputs' dtypes and shapes, trace (batches
// at their whole size) and compile on a miss.
//
//===----------------------------------------------------------------------===//

#include "ModuleCache.h"

#include "kiln/Jit.h"
#include "kiln/Passes/DataParallel.h"
#include "kiln/Passes/Partition.h"
#include "kiln/Passes/Zero.h"
#include "kiln/IR/TiedResults.h"

#include "kiln/Compiler/Driver.h"
#include "kiln/runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <fstream>

using namespace kiln;

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

[[noreturn]] void throwStatus(const std::string &what, kiln_status_t status) {
  std::string message = kiln_status_message(status);
  kiln_status_code_t code = kiln_status_code(status);
  kiln_status_free(status);
  if (code == KILN_STATUS_COMM_ERROR)
    throw CommunicationError(what + ": " + message);
  throw JitError(what + ": " + message);
}

std::string signatureKey(const std::vector<Array> &inputs) {
  std::string key;
  for (const Array &input : inputs) {
    key += std::to_string(static_cast<int>(input.dtype())) + "[";
    for (int64_t dim : input.shape())
      key += std::to_string(dim) + ",";
    key += "]";
  }
  return key;
}
} // namespace

/// Rewrites the traced function `func` for data parallelism over the ranks
/// of options.comm; `diagnostics` holds what the passes reported.
static void partitionForRanks(mlir::func::FuncOp func, const std::string &name,
                              const JitOptions &options,
                              const std::string &diagnostics) {
  mlir::kiln::DataParallelConfig config;
  config.ranks = kiln_comm_size(options.comm);
  config.batchArgs.assign(options.batchArgs.begin(), options.batchArgs.end());
  config.bucketMb = options.bucketMb;
  config.overlap = options.overlap;
  if (mlir::failed(mlir::kiln::partitionDataParallel(func, config)))
    throw JitError("data parallelism over " + std::to_string(config.ranks) +
                   " ranks cannot rewrite '" + name + "':" + diagnostics);
  if (options.zeroStage == 0)
    return;
  mlir::kiln::ZeroConfig zero;
  zero.stage = options.zeroStage;
  for (const JitOptions::ShardedArg &arg : options.shardedArgs)
    zero.shardedArgs.push_back(arg.position);
  zero.shardedResults.assign(options.shardedResults.begin(),
                             options.shardedResults.end());
  zero.bucketMb = options.bucketMb;
  zero.overlap = options.overlap;
  if (mlir::failed(mlir::kiln::shardOptimizerUpdate(func, zero)))
    throw JitError("ZeRO stage " + std::to_string(options.zeroStage) +
                   " cannot shard '" + name + "':" + diagnostics);
}

/// Annotates the traced function `func` with options' mesh and shardings
/// and partitions it (kiln-partition) over the ranks of options.comm;
/// `diagnostics` holds what the pass reported.
static void partitionOverMesh(mlir::func::FuncOp func, const std::string &name,
                              const JitOptions &options,
                              const std::string &diagnostics) {
  if (!options.comm)
    throw JitError("'" + name +
                   "': tensor parallelism (JitOptions::meshAxes) needs a "
                   "communicator (JitOptions::comm)");
  if (!options.batchArgs.empty() || options.zeroStage != 0)
    throw JitError("'" + name +
                   "': a mesh (JitOptions::meshAxes) cannot be combined with "
                   "batchArgs or zeroStage; split the batch over a mesh axis "
                   "instead");
  if (options.meshAxes.size() != options.meshShape.size())
    throw JitError("'" + name + "': JitOptions::meshAxes names " +
                   std::to_string(options.meshAxes.size()) +
                   " axes but meshShape has " +
                   std::to_string(options.meshShape.size()) + " sizes");
  int64_t ranks = 1;
  for (int64_t size : options.meshShape)
    ranks *= size;
  if (ranks != kiln_comm_size(options.comm))
    throw JitError("'" + name + "': the mesh has " + std::to_string(ranks) +
                   " ranks but the communicator " +
                   std::to_string(kiln_comm_size(options.comm)));
  if (options.argumentShardings.size() > func.getNumArguments() ||
      options.resultShardings.size() > func.getNumResults())
    throw JitError("'" + name + "' has " +
                   std::to_string(func.getNumArguments()) + " arguments and " +
                   std::to_string(func.getNumResults()) +
                   " results, fewer than the shardings given");
  mlir::kiln::Mesh mesh;
  mesh.axes.assign(options.meshAxes.begin(), options.meshAxes.end());
  mesh.shape.assign(options.meshShape.begin(), options.meshShape.end());
  mlir::kiln::setMesh(func, mesh);
  for (auto [i, sharding] : llvm::enumerate(options.argumentShardings))
    if (!sharding.empty())
      mlir::kiln::setArgumentSharding(func, i, sharding);
  for (auto [i, sharding] : llvm::enumerate(options.resultShardings))
    if (!sharding.empty())
      mlir::kiln::setResultSharding(func, i, sharding);
  mlir::kiln::PartitionConfig config;
  config.bucketAxis = options.bucketAxis;
  config.bucketMb = options.bucketMb;
  config.overlap = options.overlap;
  if (mlir::failed(mlir::kiln::partitionFunction(func, config)))
    throw JitError("tensor parallelism cannot partition '" + name + "':" +
                   diagnostics);
}

/// A copy of the traced module with the rewrites `options` ask for: data
/// parallelism and ZeRO, or a mesh.
static mlir::OwningOpRef<mlir::ModuleOp>
rewriteForRanks(const TracedFunction &traced, const JitOptions &options) {
  mlir::OwningOpRef<mlir::ModuleOp> module = traced.module().clone();
  const std::string &name = traced.name();
  if (options.zeroStage != 0 && options.batchArgs.empty())
    throw JitError("'" + name +
                   "': ZeRO (JitOptions::zeroStage) shards a data-parallel "
                   "step; name its batches in JitOptions::batchArgs");
  if (options.batchArgs.empty() && options.meshAxes.empty())
    return module;
  auto func = module->lookupSymbol<mlir::func::FuncOp>(name);
  if (!func)
    throw JitError("'" + name + "' is not in its traced module");
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      module->getContext(), [&](mlir::Diagnostic &diagnostic) {
        diagnostics += "\n  " + diagnostic.str();
        return mlir::success();
      });
  if (!options.batchArgs.empty()) {
    if (!options.comm)
      throw JitError("'" + name +
                     "': data parallelism (JitOptions::batchArgs) needs a "
                     "communicator (JitOptions::comm)");
    partitionForRanks(func, name, options, diagnostics);
  }
  if (!options.meshAxes.empty())
    partitionOverMesh(func, name, options, diagnostics);
  return module;
}

/// The program `compile` compiles: rewriteForRanks's, with the donated
/// arguments tied to results (kiln/IR/TiedResults.h); `unused` receives
/// the donated arguments no result matched.
static mlir::OwningOpRef<mlir::ModuleOp>
prepareProgram(const TracedFunction &traced, const JitOptions &options,
               std::vector<int> &unused) {
  mlir::OwningOpRef<mlir::ModuleOp> module = rewriteForRanks(traced, options);
  unused.clear();
  if (options.donateArgs.empty())
    return module;
  auto func = module->lookupSymbol<mlir::func::FuncOp>(traced.name());
  llvm::SmallVector<unsigned> donated;
  for (int index : options.donateArgs) {
    if (index < 0 || index >= static_cast<int>(func.getNumArguments()))
      throw JitError("'" + traced.name() + "': donated argument #" +
                     std::to_string(index) + " is not an argument (it has " +
                     std::to_string(func.getNumArguments()) + ")");
    donated.push_back(index);
  }
  llvm::sort(donated);
  donated.erase(std::unique(donated.begin(), donated.end()), donated.end());
  for (unsigned index : mlir::kiln::tieDonatedArguments(func, donated))
    unused.push_back(static_cast<int>(index));
  return module;
}

std::string kiln::spmdText(const TracedFunction &traced,
                           const JitOptions &options) {
  std::vector<int> unused;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      prepareProgram(traced, options, unused);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

/// The architecture kiln compiles for when JitOptions::cudaArch is empty:
/// the device's (kiln::deviceCudaArch), or the backend's default where
/// there is no device to ask.
static std::string jitCudaArch(const std::string &name) {
  DeviceCudaArch found = deviceCudaArch();
  if (!found.arch.empty())
    return found.arch;
  if (!found.deviceFound)
    return mlir::kiln::CudaOptions().arch;
  throw JitError("'" + name + "': " + found.error);
}

/// The compile options of `options`, checked.
static CompileOptions compileOptionsFor(const std::string &name,
                                        const JitOptions &options) {
  if (!options.autocast.empty() && options.autocast != "bf16" &&
      options.autocast != "f16")
    throw JitError("'" + name + "': unknown autocast dtype '" +
                   options.autocast + "' (supported: bf16, f16)");
  CompileOptions compileOptions;
  compileOptions.cpu.optLevel = options.optLevel;
  compileOptions.cpu.profile = options.profile;
  compileOptions.autocast = options.autocast;
  bool cudaOnly = options.cudaTF32 || options.cudaDeterministic ||
                  options.cudaAttention3xTF32 || !options.cudaCudnnAttention ||
                  !options.cudaAttentionTuning;
  if (options.device == "cpu" && cudaOnly)
    throw JitError("'" + name +
                   "': the CUDA options (TF32 products, deterministic sums, "
                   "3xTF32 attention, attention without cuDNN or without "
                   "tuning) need device 'cuda'");
  if (options.device == "cpu")
    return compileOptions;
  if (options.device != "cuda")
    throw JitError("'" + name + "': unknown device '" + options.device +
                   "' (supported: cpu, cuda)");
  compileOptions.cuda.tf32 = options.cudaTF32;
  compileOptions.cuda.deterministic = options.cudaDeterministic;
  compileOptions.cuda.attention3xTF32 = options.cudaAttention3xTF32;
  compileOptions.cuda.cudnnAttention = options.cudaCudnnAttention;
  compileOptions.cuda.attentionTuning = options.cudaAttentionTuning;
  if (options.profile)
    throw JitError("'" + name +
                   "': profiling (JitOptions::profile) times the CPU's "
                   "code; it is not supported on CUDA");
  compileOptions.target = Target::Cuda;
  compileOptions.cuda.arch =
      options.cudaArch.empty() ? jitCudaArch(name) : options.cudaArch;
  std::string ptxFeature;
  if (!mlir::kiln::isSupportedCudaArch(compileOptions.cuda.arch, ptxFeature))
    throw JitError("'" + name + "': unsupported CUDA architecture '" +
                   compileOptions.cuda.arch +
                   "' (supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90)");
  return compileOptions;
}

CompiledFunction kiln::compile(const TracedFunction &traced,
                               const JitOptions &options) {
  auto start = std::chrono::steady_clock::now();
  CompileOptions compileOptions = compileOptionsFor(traced.name(), options);
  bool onCuda = compileOptions.target == Target::Cuda;
  std::vector<int> unused;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (onCuda && !options.donateArgs.empty()) {
    // The CUDA code gives every result a buffer of its own: no donation is
    // used.
    JitOptions undonated = options;
    undonated.donateArgs.clear();
    module = prepareProgram(traced, undonated, unused);
    unused = options.donateArgs;
    llvm::sort(unused);
    unused.erase(std::unique(unused.begin(), unused.end()), unused.end());
  } else {
    module = prepareProgram(traced, options, unused);
  }
  CompiledFunction compiled;
  compiled.name_ = traced.name();
  compiled.comm_ = options.comm;
  compiled.unusedDonations_ = std::move(unused);
  kiln_module_t *loaded = nullptr;
  // A module compiled before, by any process, for this program (rewritten
  // for its ranks already) and these options.
  std::string cacheDir = jit_cache::moduleCacheDirectory(options.cacheDir), key;
  if (!cacheDir.empty()) {
    std::string program;
    llvm::raw_string_ostream os(program);
    module->print(os);
    os.flush();
    key = jit_cache::moduleCacheKey(
        program,
        "O" + std::to_string(options.optLevel) + " profile=" +
            std::to_string(options.profile) + " autocast=" + options.autocast +
            (onCuda
                 ? " cuda=" + compileOptions.cuda.arch + " tf32=" +
                       std::to_string(options.cudaTF32) + " deterministic=" +
                       std::to_string(options.cudaDeterministic) + " 3xtf32=" +
                       std::to_string(options.cudaAttention3xTF32) +
                       " cudnn-attention=" +
                       std::to_string(options.cudaCudnnAttention) +
                       " attention-tuning=" +
                       std::to_string(options.cudaAttentionTuning)
                 : ""));
    if (jit_cache::loadCachedModule(cacheDir, key, compiled.kmod_)) {
      // A file that does not load (truncated, another format) is
      // compiled again and replaced.
      if (kiln_status_t status = kiln_module_load_memory(
              compiled.kmod_.data(), compiled.kmod_.size(), &loaded))
        kiln_status_free(status);
      else
        compiled.fromCache_ = true;
    }
  }
  if (!loaded) {
    std::string error;
    // Warnings go to the caller (Python turns them into warnings.warn);
    // errors go on to the handlers before this one.
    mlir::ScopedDiagnosticHandler warnings(
        module->getContext(), [&](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() != mlir::DiagnosticSeverity::Warning)
            return mlir::failure();
          compiled.warnings_.push_back(diagnostic.str());
          return mlir::success();
        });
    if (!compileToKmod(*module, compileOptions, compiled.kmod_, error))
      throw JitError("compiling '" + traced.name() + "' failed: " + error);
    if (kiln_status_t status = kiln_module_load_memory(
            compiled.kmod_.data(), compiled.kmod_.size(), &loaded))
      throwStatus("loading the compiled '" + traced.name() + "'", status);
    if (!cacheDir.empty())
      jit_cache::storeCachedModule(cacheDir, key, compiled.kmod_);
  }
  compiled.module_ =
      std::shared_ptr<kiln_module>(loaded, kiln_module_release);
  if (kiln_status_t status = kiln_module_function_lookup(
          loaded, traced.name().c_str(), &compiled.function_))
    throwStatus("finding '" + traced.name() + "' in its module", status);
  compiled.compileSeconds_ = secondsSince(start);
  return compiled;
}

std::vector<Array>
CompiledFunction::operator()(const std::vector<Array> &inputs) const {
  std::vector<kiln_tensor_t *> in;
  for (const Array &input : inputs) {
    if (!input.tensor())
      throw JitError("'" + name_ + "': input #" +
                     std::to_string(in.size()) + " is an empty array");
    in.push_back(input.tensor());
  }
  std::vector<kiln_tensor_t *> out(kiln_function_output_count(function_),
                                   nullptr);
  kiln_status_t status =
      comm_ ? kiln_function_call_with_comm(function_, comm_, in.data(),
                                           in.size(), out.data(), out.size())
            : kiln_function_call(function_, in.data(), in.size(), out.data(),
                                 out.size());
  if (status)
    throwStatus("calling '" + name_ + "'", status);
  std::vector<Array> results;
  for (size_t k = 0; k < out.size(); ++k) {
    // An output written into a donated input is that input's Array (the
    // runtime's tensor only views its memory).
    int64_t donated = kiln_function_output(function_, k)->tied_input;
    if (donated >= 0) {
      kiln_tensor_release(out[k]);
      results.push_back(inputs[donated]);
      continue;
    }
    results.push_back(Array::adopt(out[k]));
  }
  return results;
}

void CompiledFunction::save(const std::string &path) const {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char *>(kmod_.data()), kmod_.size());
  file.close();
  if (!file)
    throw JitError("cannot write '" + path + "'");
}

JitFunction::JitFunction(std::string name, detail::RegionFn body,
                         JitOptions options)
    : name_(std::move(name)), body_(std::move(body)), options_(options) {}

const CompiledFunction &
JitFunction::compiled(const std::vector<Array> &inputs) {
  std::string key = signatureKey(inputs);
  auto found = cache_.find(key);
  if (found != cache_.end())
    return found->second;
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // An empty array has no dtype or shape to trace with.
    if (!inputs[i].tensor())
      throw JitError("'" + name_ + "': input #" + std::to_string(i) +
                     " is an empty array");
    specs.push_back(TensorSpec{inputs[i].dtype(), inputs[i].shape(),
                               "arg" + std::to_string(i)});
  }
  // With data parallelism the function is traced for the whole batch: the
  // blocks of all ranks.
  for (int index : options_.batchArgs) {
    if (index < 0 || index >= static_cast<int>(specs.size()) ||
        specs[index].shape.empty())
      throw JitError("'" + name_ + "': batch argument #" +
                     std::to_string(index) +
                     " is not an argument with a leading dimension (the "
                     "call has " + std::to_string(specs.size()) +
                     " arguments)");
    if (options_.comm)
      specs[index].shape[0] *= kiln_comm_size(options_.comm);
  }
  // Arguments held as blocks are traced whole.
  for (const JitOptions::ShardedArg &arg : options_.shardedArgs) {
    if (arg.position < 0 || arg.position >= static_cast<int>(specs.size()))
      throw JitError("'" + name_ + "': sharded argument #" +
                     std::to_string(arg.position) + " is not an argument");
    specs[arg.position].shape = arg.shape;
  }
  auto start = std::chrono::steady_clock::now();
  TracedFunction traced = trace(name_, specs, body_);
  lastTraceSeconds_ = secondsSince(start);
  CompiledFunction function = compile(traced, options_);
  lastCompileSeconds_ = function.compileSeconds();
  return cache_.emplace(key, std::move(function)).first->second;
}

std::vector<Array> JitFunction::operator()(const std::vector<Array> &inputs) {
  return compiled(inputs)(inputs);
}

Array kiln::meshBlock(const Array &whole,
                      const std::vector<std::string> &sharding,
                      const std::vector<std::string> &axes,
                      const std::vector<int64_t> &shape, int64_t rank) {
  const std::vector<int64_t> &dims = whole.shape();
  if (!sharding.empty() && sharding.size() != dims.size())
    throw JitError("meshBlock: the sharding has " +
                   std::to_string(sharding.size()) +
                   " entries but the array has rank " +
                   std::to_string(dims.size()));
  mlir::kiln::Mesh mesh;
  mesh.axes.assign(axes.begin(), axes.end());
  mesh.shape.assign(shape.begin(), shape.end());
  // The block as [begin, end) along each dimension.
  std::vector<int64_t> begin(dims.size(), 0), extent = dims;
  for (size_t d = 0; d < sharding.size(); ++d) {
    if (sharding[d].empty())
      continue;
    std::optional<size_t> a = mesh.axisIndex(sharding[d]);
    if (!a)
      throw JitError("meshBlock: the mesh has no axis '" + sharding[d] + "'");
    int64_t parts = shape[*a];
    if (dims[d] % parts != 0)
      throw JitError("meshBlock: dimension " + std::to_string(d) +
                     " of size " + std::to_string(dims[d]) +
                     " does not split into " + std::to_string(parts) +
                     " blocks");
    extent[d] = dims[d] / parts;
    begin[d] = mesh.position(*a, rank) * extent[d];
  }
  Array block(whole.dtype(), extent);
  size_t bytes = whole.byteSize() / std::max<int64_t>(whole.size(), 1);
  int64_t count = block.size();
  // Walk the block's elements in order, mapping each to the whole's.
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d)
      offset = offset * dims[d] + begin[d] + index[d];
    std::memcpy(static_cast<char *>(block.data()) + k * bytes,
                static_cast<const char *>(whole.data()) + offset * bytes,
                bytes);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < extent[d])
        break;
      index[d] = 0;
    }
  }
  return block;
}

Array kiln::shardBlock(const Array &whole, int64_t rank, int64_t ranks) {
  if (ranks <= 0 || rank < 0 || rank >= ranks)
    throw JitError("shardBlock: rank " + std::to_string(rank) +
                   " is not one of " + std::to_string(ranks) + " ranks");
  int64_t size = whole.size();
  int64_t block = (size + ranks - 1) / ranks;
  Array result(whole.dtype(), {block});
  size_t bytes = whole.byteSize() / std::max<int64_t>(size, 1);
  int64_t first = std::min(size, rank * block);
  int64_t count = std::min(size, first + block) - first;
  if (count > 0)
    std::memcpy(result.data(),
                static_cast<const char *>(whole.data()) + first * bytes,
                count * bytes);
  return result;
}
