//===- KfbTestSupport.h - Shared helpers of the .kfb tests ------*- C++ -*-===//
#ifndef KILN_TEST_UNIT_KFB_KFBTESTSUPPORT_H
#define KILN_TEST_UNIT_KFB_KFBTESTSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace kfbtest {

/// The kiln programs of the test suite: every test/e2e/*.mlir, every
/// examples/models/*.mlir and test/kfb/roundtrip.mlir, sorted; but those
/// holding a gradient's stacks, which a model file never holds.
std::vector<std::string> suitePrograms();

/// The programs of test/e2e and examples/models that hold a gradient's
/// stacks (kiln.stack_*), sorted.
std::vector<std::string> suiteProgramsWithStacks();

/// The contents of \p path; fails the test if it cannot be read.
std::string readFile(const std::string &path);

/// The contents of the fixture \p name in test/unit/kfb/Inputs, the
/// programs that several tests share.
std::string readInput(const std::string &name);

/// A context with the kiln and func dialects, and helpers around it.
class KfbTest : public ::testing::Test {
protected:
  KfbTest();

  /// Parses \p text; fails the test (and returns null) if it does not parse.
  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef text);
  /// Writes \p module; fails the test if writing fails.
  std::vector<uint8_t> write(mlir::ModuleOp module);
  /// Parses and writes \p text.
  std::vector<uint8_t> writeText(llvm::StringRef text);
  /// Reads \p bytes, expecting failure; returns the error.
  std::string readError(const std::vector<uint8_t> &bytes);
  /// Prints \p module as kiln-opt would (without the final newline).
  static std::string print(mlir::ModuleOp module);

  mlir::MLIRContext context;
};

} // namespace kfbtest
} // namespace kiln

#endif // KILN_TEST_UNIT_KFB_KFBTESTSUPPORT_H
