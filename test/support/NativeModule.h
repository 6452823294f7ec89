//===- NativeModule.h - Tests: compile a module, call it natively -*- C++ -*-===//
//
// The tests that compare native code with the reference evaluator all do
// the same: compile a kiln module to a .kmod with the CPU backend, load it
// with the runtime, and call a function on HostTensors. This does that once.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_SUPPORT_NATIVEMODULE_H
#define KILN_TEST_SUPPORT_NATIVEMODULE_H

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

struct kiln_module;
struct kiln_comm;

namespace kiln::test {

/// The options the tests compile a program with for `target`: every pass
/// verified, fused or not. For Target::CudaOnCpu the host code is compiled
/// at -O0: what those tests check is the CUDA backend's kernels, and
/// LLVM's optimizations took 30 of the 32 s in which the attention
/// programs' unrolled kernels compiled.
CompileOptions testCompileOptions(Target target, bool fuse);

class NativeModule {
public:
  /// Compiles a clone of `module` (which stays as it is) and loads it.
  /// On failure `error()` says why and every call fails.
  explicit NativeModule(mlir::ModuleOp module,
                        const CompileOptions &options = {});
  ~NativeModule();
  NativeModule(const NativeModule &) = delete;
  NativeModule &operator=(const NativeModule &) = delete;

  bool ok() const { return module_ != nullptr; }
  const std::string &error() const { return error_; }

  /// Calls function `name` (result types from `signature`, the kiln-level
  /// function); returns false with `error` set on any failure, which
  /// includes a call that changed its inputs or left buffers of its own
  /// allocated (kiln_memory_stats). A module with collectives runs on
  /// `comm`. With `onDevice` (a CUDA module, no `comm`), the inputs are
  /// copied to the device first (kiln_tensor_to_device), the call leaves
  /// its outputs there (kiln_function_call_on_device) and they are copied
  /// back afterwards.
  bool call(const std::string &name, mlir::func::FuncOp signature,
            const std::vector<HostTensor> &inputs,
            std::vector<HostTensor> &outputs, std::string &error,
            kiln_comm *comm = nullptr, bool onDevice = false) const;

private:
  kiln_module *module_ = nullptr;
  std::string error_;
};

} // namespace kiln::test

#endif // KILN_TEST_SUPPORT_NATIVEMODULE_H
