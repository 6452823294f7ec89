//===- NativeModule.cpp - Tests: compile a module, call it natively -------===//

#include "NativeModule.h"

#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

#include <cstring>

using namespace kiln;

CompileOptions kiln::test::testCompileOptions(Target target, bool fuse) {
  CompileOptions options;
  options.verifyEachPass = true;
  options.target = target;
  if (target == Target::Cpu) {
    options.cpu.fuse = fuse;
    return options;
  }
  options.cuda.fuse = fuse;
  if (target == Target::CudaOnCpu)
    options.cpu.optLevel = 0;
  return options;
}

namespace {
/// ElementKind and kiln_dtype_t are both valued by the element type codes.
kiln_dtype_t runtimeDType(const HostTensor &tensor) {
  return static_cast<kiln_dtype_t>(tensor.kind());
}

/// Takes the message out of a failed status.
std::string consume(kiln_status_t status) {
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  return message;
}
} // namespace

test::NativeModule::NativeModule(mlir::ModuleOp module,
                                 const CompileOptions &options) {
  mlir::OwningOpRef<mlir::ModuleOp> lowered = module.clone();
  std::vector<uint8_t> kmod;
  if (!compileToKmod(*lowered, options, kmod, error_))
    return;
  if (kiln_status_t status =
          kiln_module_load_memory(kmod.data(), kmod.size(), &module_)) {
    error_ = consume(status);
    module_ = nullptr;
  }
}

test::NativeModule::~NativeModule() { kiln_module_release(module_); }

bool test::NativeModule::call(const std::string &name,
                              mlir::func::FuncOp signature,
                              const std::vector<HostTensor> &inputs,
                              std::vector<HostTensor> &outputs,
                              std::string &error, kiln_comm *comm,
                              bool onDevice) const {
  if (!module_) {
    error = "the module did not compile: " + error_;
    return false;
  }
  const kiln_function_t *function = nullptr;
  if (kiln_status_t status =
          kiln_module_function_lookup(module_, name.c_str(), &function)) {
    error = consume(status);
    return false;
  }
  std::vector<kiln_tensor_t *> in, out(signature.getNumResults(), nullptr);
  auto releaseAll = [&] {
    for (kiln_tensor_t *tensor : llvm::concat<kiln_tensor_t *>(in, out))
      kiln_tensor_release(tensor);
  };
  // Each input's bytes, to check after the call that it left them alone:
  // the inputs are the caller's buffers (kiln-read-only-arguments).
  std::vector<std::vector<uint8_t>> inputBytes;
  for (const HostTensor &input : inputs) {
    std::vector<uint8_t> &bytes = inputBytes.emplace_back(input.byteSize());
    input.toBytes(bytes.data());
    kiln_tensor_t *tensor = nullptr;
    if (kiln_status_t status =
            kiln_tensor_create(runtimeDType(input), input.shape.size(),
                               input.shape.data(), bytes.data(), &tensor)) {
      error = consume(status);
      releaseAll();
      return false;
    }
    if (onDevice) {
      kiln_tensor_t *host = tensor;
      kiln_status_t status = kiln_tensor_to_device(module_, host, &tensor);
      kiln_tensor_release(host);
      if (status) {
        error = consume(status);
        releaseAll();
        return false;
      }
    }
    in.push_back(tensor);
  }
  // What the process's compiled code holds now, to check that the call
  // freed every buffer it allocated.
  kiln_memory_stats_t before;
  kiln_memory_stats(&before);
  kiln_status_t status =
      comm       ? kiln_function_call_with_comm(function, comm, in.data(),
                                                in.size(), out.data(),
                                                out.size())
      : onDevice ? kiln_function_call_on_device(function, in.data(), in.size(),
                                                out.data(), out.size())
                 : kiln_function_call(function, in.data(), in.size(),
                                      out.data(), out.size());
  if (status) {
    error = consume(status);
    releaseAll();
    return false;
  }
  // Device tensors come back to the host for the checks below.
  for (kiln_tensor_t *&tensor : llvm::concat<kiln_tensor_t *>(in, out)) {
    if (kiln_tensor_memory(tensor) != KILN_MEMORY_CUDA)
      continue;
    kiln_tensor_t *host = nullptr;
    status = kiln_tensor_to_host(tensor, &host);
    kiln_tensor_release(tensor);
    tensor = host;
    if (status) {
      error = consume(status);
      releaseAll();
      return false;
    }
  }
  kiln_memory_stats_t after;
  kiln_memory_stats(&after);
  if (after.held_bytes != before.held_bytes) {
    error = "the call left " +
            std::to_string(int64_t(after.held_bytes - before.held_bytes)) +
            " bytes of its buffers allocated";
    releaseAll();
    return false;
  }
  for (auto [index, tensor] : llvm::enumerate(in)) {
    const std::vector<uint8_t> &bytes = inputBytes[index];
    if (!bytes.empty() &&
        std::memcmp(kiln_tensor_data(tensor), bytes.data(), bytes.size())) {
      error = "the call wrote into its input #" + std::to_string(index);
      releaseAll();
      return false;
    }
  }
  outputs.clear();
  for (auto [tensor, type] : llvm::zip(out, signature.getResultTypes())) {
    auto tensorType = mlir::cast<mlir::RankedTensorType>(type);
    outputs.push_back(HostTensor::fromBytes(tensorType.getElementType(),
                                            tensorType.getShape(),
                                            kiln_tensor_data(tensor)));
  }
  releaseAll();
  return true;
}
