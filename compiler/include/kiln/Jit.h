//===- Jit.h - Compiling traced functions inside a host program -*- C++ -*-===//
//
// kiln::jit compiles traced functions for the host CPU (or a CUDA GPU,
// JitOptions::device) from inside the program that traced them and returns
// callables on host arrays:
//
//   auto step = kiln::jit("step", [](kiln::Tensor x, kiln::Tensor y) {...});
//   std::vector<kiln::Array> out = step({a, b});   // traces + compiles once
//   out = step({c, d});                            // same shapes: cached
//   step.compiled({a, b}).save("step.kmod");        // for the runtime alone
//
// A compiled function is a loaded .kmod, so what the JIT runs is exactly
// what kiln-compile would write and the runtime would load.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_JIT_H
#define KILN_JIT_H

#include "kiln/kiln.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct kiln_tensor;
struct kiln_module;
struct kiln_function;
struct kiln_comm;

namespace kiln {

/// Raised when compiling or calling a jitted function fails; the message
/// says what was wrong (e.g. which input has which wrong shape).
class JitError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A call failed because communication between ranks did
/// (KILN_STATUS_COMM_ERROR): a rank died or hangs, or the ranks disagree on
/// a collective. What an elastic run (kiln/Elastic.h) recovers from.
class CommunicationError : public JitError {
public:
  using JitError::JitError;
};

/// A dense, row-major, 64-byte aligned host array, shared by copies.
class Array {
public:
  Array() = default;
  /// A zero-filled array.
  Array(DType dtype, std::vector<int64_t> shape);

  template <typename T>
  static Array from(DType dtype, std::vector<int64_t> shape,
                    const std::vector<T> &values) {
    Array array(dtype, std::move(shape));
    array.assign(values.data(), values.size(), sizeof(T));
    return array;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t size() const;
  size_t byteSize() const;
  void *data();
  const void *data() const;
  template <typename T> T *data() { return static_cast<T *>(data()); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data());
  }
  /// Element `index` (row-major) converted to double.
  double at(int64_t index) const;

  /// Wraps a runtime tensor, taking ownership of it.
  static Array adopt(kiln_tensor *tensor);
  kiln_tensor *tensor() const { return tensor_.get(); }

private:
  void assign(const void *values, size_t count, size_t elementSize);

  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::shared_ptr<kiln_tensor> tensor_;
};

struct JitOptions {
  /// LLVM optimization level, 0 to 3.
  unsigned optLevel = 2;

  /// Where the compiled function runs: "cpu" (the host CPU) or "cuda" (a
  /// CUDA GPU: host code that launches kernels and calls cuBLASLt and
  /// cuDNN, as kiln-compile --target=cuda). A CUDA function called on host
  /// Arrays copies them to the device and its results back; the runtime's
  /// device tensors (kiln_function_call_on_device) avoid the copies.
  std::string device = "cpu";
  /// For "cuda": the GPU architecture, "sm_XX" (kiln-compile --cuda-arch).
  /// Empty: the newest kiln supports that the device calls run on can run
  /// (kiln_cuda_compute_capability; an H100 gets sm_90, a 12.0 device
  /// sm_90 too, its driver compiling the PTX on), and sm_80 on a machine
  /// without a device, where the module can be compiled and saved but not
  /// called.
  std::string cudaArch;
  /// For "cuda", as kiln-compile's flags of the same names
  /// (mlir::kiln::CudaOptions): cudaTF32 (--cuda-tf32) lets cuBLASLt and
  /// cuDNN round the inputs of f32 products and convolutions to TF32;
  /// cudaDeterministic (--cuda-deterministic) sums every result of kiln's
  /// own kernels in one order (the attention gradient as two kernels);
  /// cudaAttention3xTF32 (--cuda-attention-3xtf32) runs f32 attention and
  /// its gradient on tensor cores in 3xTF32 products; cudaCudnnAttention
  /// (on by default; false as --no-cuda-cudnn-attention) hands f16 and
  /// bf16 attention to cuDNN where it takes them. The last two take sm_80
  /// and later, and are ignored below it. cudaAttentionTuning false
  /// (--no-cuda-attention-tuning) builds attention one way where it would
  /// otherwise be a tuned call site carrying several kernels (in f32 the
  /// f32 and the 3xTF32 ones; in f16 and bf16, kiln's tensor-core kernels
  /// and cuDNN's), whose fastest the runtime keeps.
  bool cudaTF32 = false;
  bool cudaDeterministic = false;
  bool cudaAttention3xTF32 = false;
  bool cudaCudnnAttention = true;
  bool cudaAttentionTuning = true;

  /// The arguments whose buffers the caller gives up, as JAX's
  /// donate_argnums: each is tied to the first result of its dtype and
  /// shape (on this rank, after any rewrite for ranks) that no earlier one
  /// took, and the compiled code writes that result into the argument's
  /// buffer (updating it in place where it can) instead of a new array.
  /// The call returns the argument's Array as that result; the argument
  /// holds the result afterwards. CompiledFunction::unusedDonations lists
  /// the ones no result matched. Honoured on the CPU; on CUDA every result
  /// gets a buffer of its own and every donated argument is listed unused.
  std::vector<int> donateArgs;

  /// Mixed precision (kiln-autocast): "bf16" or "f16" runs the f32 matrix
  /// products and convolutions, forward and backward, with operands in that
  /// type and f32 accumulation; everything else, the parameters included,
  /// stays f32.
  /// Empty: the traced types as they are.
  std::string autocast;

  /// Time each fused loop nest, oneDNN call and loop at run time, as
  /// kiln-compile --profile does. The runtime collects the regions while
  /// its profiler is on (kiln_profile_set_enabled; kiln_profile_regions,
  /// kiln_profile_write_trace and kiln::profile::formatSummary read them).
  /// Off, the code is exactly what it is without.
  bool profile = false;

  /// Where compiled modules are kept across processes (a directory, made
  /// if missing): a program compiled before with the same options, on this
  /// host, by this same compiler binary, is loaded instead of compiled.
  /// Empty: $KILN_CACHE_DIR, and no cache when that is unset too.
  std::string cacheDir;

  /// The communicator every call runs on (from kiln_comm_create_mpi; not
  /// owned, and it must outlive the functions): needed by programs with
  /// collectives and by data parallelism. NULL: a run of one process.
  kiln_comm *comm = nullptr;

  /// Data parallelism over `comm`'s ranks, as PyTorch's DDP does it: the
  /// arguments at these positions are batches, split along their leading
  /// dimension. Each call passes this rank's block of each batch; the
  /// function is traced for the whole batch (the block's leading dimension
  /// times the number of ranks), so it is written as for one process, and
  /// kiln-data-parallel rewrites it into the program every rank runs: the
  /// gradients are averaged with bucketed all-reduces that overlap the
  /// backward pass, and every rank returns what the function returns on the
  /// whole batch. Empty: no rewrite.
  std::vector<int> batchArgs;
  /// The most MiB one all-reduce bucket carries (DDP's bucket_cap_mb).
  double bucketMb = 25.0;
  /// Start each bucket's all-reduce as soon as its gradients are computed.
  bool overlap = true;

  /// ZeRO on top of data parallelism (kiln-zero, passes/parallel/README.md):
  /// 1 shards the optimizer state, 2 also reduce-scatters the gradients,
  /// 3 also shards the parameters (gathered before each use); 0: none.
  int zeroStage = 0;
  /// An argument held as a block: the whole tensor has `shape` (the
  /// function is traced with it), and each call passes this rank's block,
  /// a 1-D array of ceil(numel / N) elements (the flattened tensor padded
  /// with zeros to N blocks; shardBlock makes it).
  struct ShardedArg {
    int position;
    std::vector<int64_t> shape;
  };
  /// The optimizer state's arguments (and with stage 3 the parameters').
  std::vector<ShardedArg> shardedArgs;
  /// The results returned as blocks: the new state (and parameters).
  std::vector<int> shardedResults;

  /// Tensor parallelism (kiln-partition, passes/parallel/README.md):
  /// `comm`'s ranks as a device mesh of these axes, laid out row-major
  /// (rank = dp * 2 + tp for dp=2, tp=2; the sizes multiply to the number
  /// of ranks). Empty: no mesh. Excludes batchArgs and zeroStage (a mesh
  /// axis splitting the batch is data parallelism).
  std::vector<std::string> meshAxes;
  std::vector<int64_t> meshShape;
  /// How each argument and result is split: per dimension the mesh axis it
  /// is split over ("" for none); an empty list (or a missing entry) for a
  /// tensor that is whole. The function is traced with whole shapes; each
  /// call passes this rank's block of every split argument (block
  /// (rank / stride) % n along each split dimension, meshBlock cuts it) and
  /// gets its block of every split result.
  std::vector<std::vector<std::string>> argumentShardings;
  std::vector<std::vector<std::string>> resultShardings;
  /// The mesh axis (its first) whose gradient all-reduces are bucketed and
  /// overlapped, with bucketMb and overlap above; "" for none.
  std::string bucketAxis;
};

/// This rank's block of `whole` for JitOptions::argumentShardings:
/// `sharding` names per dimension the axis of the mesh (`axes`, `shape`)
/// it is split over.
Array meshBlock(const Array &whole, const std::vector<std::string> &sharding,
                const std::vector<std::string> &axes,
                const std::vector<int64_t> &shape, int64_t rank);

/// This rank's block of `whole` for JitOptions::shardedArgs: elements
/// [rank * c, (rank + 1) * c) of the flattened array padded with zeros to
/// ranks * c, c = ceil(size / ranks).
Array shardBlock(const Array &whole, int64_t rank, int64_t ranks);

/// One function compiled for one signature, loaded through the runtime.
class CompiledFunction {
public:
  /// Calls the function; shapes and dtypes must match the signature.
  std::vector<Array> operator()(const std::vector<Array> &inputs) const;
  /// Writes the module so a host linking only the runtime can load it.
  void save(const std::string &path) const;
  const std::vector<uint8_t> &moduleBytes() const { return kmod_; }
  const std::string &name() const { return name_; }
  /// Wall time of lowering, code generation, linking and loading (of
  /// reading the module, when it came from JitOptions::cacheDir).
  double compileSeconds() const { return compileSeconds_; }
  /// Whether the module was read from JitOptions::cacheDir.
  bool fromCache() const { return fromCache_; }
  /// The JitOptions::donateArgs that no result matched (left as they are
  /// by calls).
  const std::vector<int> &unusedDonations() const { return unusedDonations_; }
  /// The compiler's warnings (e.g. bf16 autocast on a CPU without bf16 dot
  /// products); empty when the module came from the cache.
  const std::vector<std::string> &warnings() const { return warnings_; }
  /// The loaded function, for callers that drive the runtime's C API
  /// themselves (the Python bindings). Valid while this object lives.
  const kiln_function *function() const { return function_; }
  /// The loaded module, shared: keeps function() valid.
  const std::shared_ptr<kiln_module> &module() const { return module_; }
  /// The communicator calls run on (JitOptions::comm); NULL for one process.
  kiln_comm *comm() const { return comm_; }

private:
  friend CompiledFunction compile(const TracedFunction &, const JitOptions &);
  std::string name_;
  std::vector<uint8_t> kmod_;
  std::shared_ptr<kiln_module> module_;
  const kiln_function *function_ = nullptr;
  kiln_comm *comm_ = nullptr;
  double compileSeconds_ = 0;
  bool fromCache_ = false;
  std::vector<int> unusedDonations_;
  std::vector<std::string> warnings_;
};

/// Compiles a traced function in this process, for the host CPU or a CUDA
/// GPU (JitOptions::device).
CompiledFunction compile(const TracedFunction &traced,
                         const JitOptions &options = {});

/// The kiln IR, as MLIR text, of the program one rank runs: the traced
/// function rewritten as `options` ask (data parallelism, ZeRO, a mesh),
/// before compilation. Its collectives are what a call communicates.
std::string spmdText(const TracedFunction &traced,
                     const JitOptions &options);

/// A function traced and compiled on first use for each distinct input
/// signature (dtypes and shapes), then served from a cache.
class JitFunction {
public:
  JitFunction(std::string name, detail::RegionFn body, JitOptions options);

  std::vector<Array> operator()(const std::vector<Array> &inputs);
  /// The compiled function for these inputs' signature (compiling it if
  /// needed), e.g. to save it.
  const CompiledFunction &compiled(const std::vector<Array> &inputs);

  /// How many signatures have been traced and compiled so far.
  size_t compileCount() const { return cache_.size(); }
  /// Trace time and compile time of the most recent compilation.
  double lastTraceSeconds() const { return lastTraceSeconds_; }
  double lastCompileSeconds() const { return lastCompileSeconds_; }

private:
  std::string name_;
  detail::RegionFn body_;
  JitOptions options_;
  std::map<std::string, CompiledFunction> cache_;
  double lastTraceSeconds_ = 0, lastCompileSeconds_ = 0;
};

/// Wraps `fn` for jitting; `fn` is anything kiln::trace accepts (a
/// callable taking `const kiln::Tensors &` or up to four Tensors).
template <typename F>
JitFunction jit(std::string name, F &&fn, JitOptions options = {},
                SourceLoc loc = SourceLoc::current()) {
  return JitFunction(std::move(name),
                     detail::makeTracedFn(std::forward<F>(fn), loc), options);
}

} // namespace kiln

#endif // KILN_JIT_H
