//===- ModelFileReader.cpp - Reading .kfb model files ---------------------===//
//
// Reading proceeds from the outside in and trusts nothing it has not
// checked: the file's structure (identifier, version, FlatBuffers verifier),
// then the meaning of its contents (ModelChecks), and only then does it
// build IR, which the MLIR verifier checks last. Errors from that last step
// are reported like the others, naming the function and op by their place
// in the file.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/ModelFile.h"

#include "FileStructure.h"
#include "Locations.h"
#include "ModelBuilder.h"
#include "ModelChecks.h"

#include "kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <climits>
#include <cstring>
#include <memory>
#include <mutex>

namespace kiln {

namespace {

/// FlatBuffers reads scalars in place, so bytes that do not start at an
/// 8-byte boundary are copied to storage that does. Returns the bytes to
/// read: either \p bytes or \p storage.
const uint8_t *alignForReading(llvm::ArrayRef<uint8_t> bytes,
                               std::unique_ptr<uint64_t[]> &storage) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0)
    return bytes.data();
  storage.reset(
      new uint64_t[(bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t)]);
  std::memcpy(storage.get(), bytes.data(), bytes.size());
  return reinterpret_cast<const uint8_t *>(storage.get());
}

/// Runs the MLIR verifier on a freshly built module and reports the error
/// of the operation that comes first in the file. The verifier checks ops
/// with isolated regions in parallel and stops taking new ones after a
/// failure, but it takes them in file order and finishes those it has
/// taken, so the first failing one is always checked: picking the earliest
/// error among those reported makes the message independent of timing.
bool verifyBuiltModule(mlir::ModuleOp module,
                       const modelfile::CheckedModel &model,
                       std::string &error) {
  mlir::MLIRContext *context = module->getContext();
  std::mutex mutex;
  unsigned firstOrder = UINT_MAX;
  std::string firstError;

  // The "see current operation" note would print each failing op; only the
  // message is reported, so printing it would be wasted work.
  bool printedOpOnDiagnostic = context->shouldPrintOpOnDiagnostic();
  context->printOpOnDiagnostic(false);
  mlir::LogicalResult verified = mlir::success();
  {
    mlir::ScopedDiagnosticHandler handler(
        context, [&](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::success();
          auto found = model.locationOrder.find(
              diagnostic.getLocation().getAsOpaquePointer());
          unsigned order =
              found == model.locationOrder.end() ? UINT_MAX - 1 : found->second;
          std::lock_guard<std::mutex> lock(mutex);
          if (order < firstOrder) {
            firstOrder = order;
            firstError = modelfile::describeLocation(diagnostic.getLocation()) +
                         ": " + diagnostic.str();
          }
          return mlir::success();
        });
    verified = mlir::verify(module);
  }
  context->printOpOnDiagnostic(printedOpOnDiagnostic);

  if (mlir::succeeded(verified))
    return true;
  error = firstError.empty() ? "the model fails IR verification" : firstError;
  return false;
}

} // namespace

bool isModelFile(llvm::ArrayRef<uint8_t> bytes) {
  return bytes.size() >= sizeof(flatbuffers::uoffset_t) +
                             flatbuffers::kFileIdentifierLength &&
         kfb::ModelBufferHasIdentifier(bytes.data());
}

mlir::OwningOpRef<mlir::ModuleOp> readModelFile(llvm::ArrayRef<uint8_t> bytes,
                                                mlir::MLIRContext *context,
                                                std::string &error,
                                                llvm::StringRef fileName) {
  error.clear();
  context->getOrLoadDialect<mlir::kiln::KilnDialect>();
  context->getOrLoadDialect<mlir::func::FuncDialect>();

  std::unique_ptr<uint64_t[]> storage;
  const uint8_t *data =
      bytes.empty() ? bytes.data() : alignForReading(bytes, storage);
  const kfb::Model *model =
      modelfile::verifyFileStructure(data, bytes.size(), error);
  if (!model)
    return nullptr;

  std::optional<modelfile::CheckedModel> checked =
      modelfile::checkModel(*model, data, context, fileName, error);
  if (!checked)
    return nullptr;

  mlir::OwningOpRef<mlir::ModuleOp> module =
      modelfile::buildModule(*checked, context);
  if (!verifyBuiltModule(*module, *checked, error))
    return nullptr;
  return module;
}

} // namespace kiln
