//===- TestSupport.h - Shared helpers for the runtime tests -----*- C++ -*-===//

#ifndef KILN_TEST_UNIT_RUNTIME_TESTSUPPORT_H
#define KILN_TEST_UNIT_RUNTIME_TESTSUPPORT_H

#include "kiln/ModuleFormat.h"
#include "kiln/runtime.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {
namespace test {

struct ModuleDeleter {
  void operator()(kiln_module_t *module) const { kiln_module_release(module); }
};
struct TensorDeleter {
  void operator()(kiln_tensor_t *tensor) const { kiln_tensor_release(tensor); }
};
struct CommDeleter {
  void operator()(kiln_comm_t *comm) const { kiln_comm_release(comm); }
};
using ModulePtr = std::unique_ptr<kiln_module_t, ModuleDeleter>;
using TensorPtr = std::unique_ptr<kiln_tensor_t, TensorDeleter>;
using CommPtr = std::unique_ptr<kiln_comm_t, CommDeleter>;

/// The outcome of a fallible call, with the status already freed.
struct Outcome {
  kiln_status_code_t code = KILN_STATUS_OK;
  std::string message;
  bool ok() const { return code == KILN_STATUS_OK; }
};

/// Records and frees \p status.
Outcome take(kiln_status_t status);

/// Loads a module from \p contents; throws if that fails.
ModulePtr loadModule(const format::ModuleContents &contents);

/// Calls function \p name of \p module with \p comm (kiln_function_call
/// when NULL). On success \p outputs holds the outputs.
Outcome callFunction(const kiln_module_t *module, const std::string &name,
                     kiln_comm_t *comm,
                     const std::vector<kiln_tensor_t *> &inputs,
                     std::vector<TensorPtr> &outputs);

/// Whether a shared object whose path contains \p part is loaded.
bool isLoaded(const char *part);

/// What a shell command did: its exit status (-1 if it did not exit), its
/// stdout and stderr interleaved, and how long it ran.
struct CommandResult {
  int exitCode = -1;
  std::string output;
  double seconds = 0;
};

/// Runs `command` through the shell, its stderr joined to its stdout.
CommandResult runCommand(const std::string &command);

std::vector<uint8_t> readFile(const std::string &path);
void writeFile(const std::string &path, const std::vector<uint8_t> &bytes);

/// The bytes of the fixture shared objects built from fixtures/*.c.
std::vector<uint8_t> addFixtureCode();
std::vector<uint8_t> mixedFixtureCode();

/// A module over add.c: add(a: f32[4], b: f32[4]) -> (sum: f32[4]).
format::ModuleContents addModuleContents();
/// A module over mixed.c with the functions "stats" and "scale".
format::ModuleContents mixedModuleContents();

/// A module over constants.c, whose code reads 16 bytes of constants:
/// scale(x: f32[4]) -> (y: f32[4], misalignment: i64[1]), with
/// \p constants as the module's constants.
format::ModuleContents constantsModuleContents(
    const std::vector<float> &constants);

/// A module over profile.c, code compiled with --profile:
/// nested(x: f32[1]) -> (y: f32[1]); with \p badTable, over the build of it
/// whose region table lacks a name.
format::ModuleContents profileModuleContents(bool badTable = false);

/// A module over collectives.c (SPMD code reaching the communicator through
/// the slots of kiln/CollectiveAbi.h), with signatures for a run of
/// \p ranks ranks: rank_size, all_reduce_<dtype> for every dtype, sum6,
/// sum6_2d, strided_groups, all_gather, reduce_scatter, broadcast,
/// all_to_all, permute, for_two_ranks, mismatched_count, mismatched_kind,
/// mismatched_dtype, mismatched_groups,
/// returns_early, dies_on_rank_1 and wrong_wait_buffers (see the fixture
/// for each).
format::ModuleContents collectivesModuleContents(int64_t ranks);

/// A module envelope with any version, checksum and body (none if NULL), for
/// tests that need modules writeModule would never produce.
std::vector<uint8_t> makeEnvelope(uint32_t version, uint64_t checksum,
                                  const std::vector<uint8_t> *body);

/// A tensor built from \p values, whose type must match the dtype's size.
template <typename T>
TensorPtr makeTensor(kiln_dtype_t dtype, const std::vector<int64_t> &shape,
                     const std::vector<T> &values) {
  if (kiln_dtype_size(dtype) != sizeof(T))
    throw std::logic_error("makeTensor: element size does not match dtype");
  kiln_tensor_t *tensor = nullptr;
  Outcome outcome = take(kiln_tensor_create(
      dtype, shape.size(), shape.data(), values.data(), &tensor));
  if (!outcome.ok())
    throw std::runtime_error(outcome.message);
  TensorPtr result(tensor);
  if (kiln_tensor_element_count(tensor) != values.size())
    throw std::logic_error("makeTensor: value count does not match shape");
  return result;
}

/// The elements of \p tensor as T.
template <typename T> std::vector<T> tensorValues(kiln_tensor_t *tensor) {
  std::vector<T> values(kiln_tensor_element_count(tensor));
  std::memcpy(values.data(), kiln_tensor_data(tensor),
              values.size() * sizeof(T));
  return values;
}

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TemporaryDirectory {
public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  const std::string &path() const { return directory; }
  std::string file(const std::string &name) const {
    return directory + "/" + name;
  }

private:
  std::string directory;
};

/// Sets (or, with nullptr, unsets) an environment variable for the extent
/// of a scope.
class ScopedVariable {
public:
  ScopedVariable(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old, hadValue = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedVariable() {
    if (hadValue)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }
  ScopedVariable(const ScopedVariable &) = delete;
  ScopedVariable &operator=(const ScopedVariable &) = delete;

private:
  const char *name;
  std::string saved;
  bool hadValue = false;
};

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_RUNTIME_TESTSUPPORT_H
