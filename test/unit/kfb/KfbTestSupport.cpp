//===- KfbTestSupport.cpp - Shared helpers of the .kfb tests --------------===//

#include "KfbTestSupport.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/ModelFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln {
namespace kfbtest {

namespace {
mlir::DialectRegistry kilnRegistry() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  return registry;
}

/// Whether the program at `path` holds a gradient's run-time stacks
/// (kiln.stack_*), which only reverse-mode differentiation of a kiln.while
/// makes, after a model has been loaded: the format refuses them.
bool holdsStacks(const std::filesystem::path &path) {
  return readFile(path.string()).find("kiln.stack_") != std::string::npos;
}

/// The .mlir programs in `directory`: those with stacks or those without.
void addPrograms(const std::filesystem::path &directory, bool withStacks,
                 std::vector<std::string> &programs) {
  std::error_code error;
  for (const auto &entry :
       std::filesystem::directory_iterator(directory, error))
    if (entry.path().extension() == ".mlir" &&
        holdsStacks(entry.path()) == withStacks)
      programs.push_back(entry.path().string());
}

std::vector<std::string> programs(bool withStacks) {
  std::filesystem::path root(KILN_SOURCE_DIR);
  std::vector<std::string> programs;
  addPrograms(root / "test" / "e2e", withStacks, programs);
  addPrograms(root / "examples" / "models", withStacks, programs);
  if (!withStacks)
    programs.push_back((root / "test" / "kfb" / "roundtrip.mlir").string());
  std::sort(programs.begin(), programs.end());
  return programs;
}
} // namespace

std::vector<std::string> suitePrograms() { return programs(false); }

std::vector<std::string> suiteProgramsWithStacks() { return programs(true); }

std::string readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot read " << path;
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::string readInput(const std::string &name) {
  return readFile(std::string(KILN_TEST_INPUTS_DIR) + "/" + name);
}

KfbTest::KfbTest() : context(kilnRegistry()) {
  context.loadAllAvailableDialects();
}

mlir::OwningOpRef<mlir::ModuleOp> KfbTest::parse(llvm::StringRef text) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << "does not parse:\n" << text.str();
  return module;
}

std::vector<uint8_t> KfbTest::write(mlir::ModuleOp module) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(writeModelFile(module, bytes, error)) << error;
  return bytes;
}

std::vector<uint8_t> KfbTest::writeText(llvm::StringRef text) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(text);
  if (!module)
    return {};
  return write(*module);
}

std::string KfbTest::readError(const std::vector<uint8_t> &bytes) {
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      readModelFile(bytes, &context, error);
  EXPECT_FALSE(module) << "expected an error, read:\n"
                       << (module ? print(*module) : "");
  EXPECT_FALSE(error.empty());
  return error;
}

std::string KfbTest::print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

} // namespace kfbtest
} // namespace kiln
