//===- Jit.cpp - Compiling traced functions inside a host program ---------===//
//
// compile(): clone the traced module, run the same driver as kiln-compile
// (kiln -> LLVM -> object -> shared object -> .kmod) and load the bytes
// with the runtime; with JitOptions::batchArgs, kiln-data-parallel rewrites
// the function for the communicator's ranks first. JitFunction: key the
// cache on the inputs' dtypes and shapes, trace (batches at their whole
// size) and compile on a miss.
//
//===----------------------------------------------------------------------===//

#include "kiln/Jit.h"
#include "kiln/Passes/DataParallel.h"
#include "kiln/Passes/Zero.h"

#include "kiln/Compiler/Driver.h"
#include "kiln/runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

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
  kiln_status_free(status);
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

/// Rewrites the traced function in `module` for data parallelism over the
/// ranks of options.comm.
static void partitionForRanks(mlir::ModuleOp module, const std::string &name,
                       const JitOptions &options) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(name);
  if (!func)
    throw JitError("'" + name + "' is not in its traced module");
  mlir::kiln::DataParallelConfig config;
  config.ranks = kiln_comm_size(options.comm);
  config.batchArgs.assign(options.batchArgs.begin(), options.batchArgs.end());
  config.bucketMb = options.bucketMb;
  config.overlap = options.overlap;
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &diagnostic) {
        diagnostics += "\n  " + diagnostic.str();
        return mlir::success();
      });
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

CompiledFunction kiln::compile(const TracedFunction &traced,
                               const JitOptions &options) {
  auto start = std::chrono::steady_clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module = traced.module().clone();
  if (options.zeroStage != 0 && options.batchArgs.empty())
    throw JitError("'" + traced.name() +
                   "': ZeRO (JitOptions::zeroStage) shards a data-parallel "
                   "step; name its batches in JitOptions::batchArgs");
  if (!options.batchArgs.empty()) {
    if (!options.comm)
      throw JitError("'" + traced.name() +
                     "': data parallelism (JitOptions::batchArgs) needs a "
                     "communicator (JitOptions::comm)");
    partitionForRanks(*module, traced.name(), options);
  }
  if (!options.autocast.empty() && options.autocast != "bf16" &&
      options.autocast != "f16")
    throw JitError("'" + traced.name() + "': unknown autocast dtype '" +
                   options.autocast + "' (supported: bf16, f16)");
  CompileOptions compileOptions;
  compileOptions.cpu.optLevel = options.optLevel;
  compileOptions.autocast = options.autocast;
  CompiledFunction compiled;
  compiled.name_ = traced.name();
  compiled.comm_ = options.comm;
  std::string error;
  if (!compileToKmod(*module, compileOptions, compiled.kmod_, error))
    throw JitError("compiling '" + traced.name() + "' failed: " + error);
  kiln_module_t *loaded = nullptr;
  if (kiln_status_t status = kiln_module_load_memory(
          compiled.kmod_.data(), compiled.kmod_.size(), &loaded))
    throwStatus("loading the compiled '" + traced.name() + "'", status);
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
  for (kiln_tensor_t *tensor : out)
    results.push_back(Array::adopt(tensor));
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
  for (size_t i = 0; i < inputs.size(); ++i)
    specs.push_back(TensorSpec{inputs[i].dtype(), inputs[i].shape(),
                               "arg" + std::to_string(i)});
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
