//===- Locations.cpp - Where in a .kfb file an operation came from --------===//

#include "Locations.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {
namespace modelfile {

namespace {
/// Names longer than this are cut short in messages, so that a hostile file
/// cannot make every message about it megabytes long.
constexpr size_t kMaxQuotedNameLength = 200;

/// The module's location when the reader is not told the file's name.
constexpr llvm::StringLiteral kUnnamedModel = ".kfb model";
} // namespace

mlir::Location moduleLocation(llvm::StringRef fileName,
                              mlir::MLIRContext *context) {
  return mlir::NameLoc::get(mlir::StringAttr::get(
      context, fileName.empty() ? llvm::StringRef(kUnnamedModel) : fileName));
}

mlir::Location functionLocation(mlir::Location moduleLoc,
                                llvm::StringRef name) {
  return childLocation(moduleLoc, "function " + quoteName(name));
}

mlir::Location childLocation(mlir::Location parent, const llvm::Twine &step) {
  mlir::MLIRContext *context = parent->getContext();
  return mlir::NameLoc::get(mlir::StringAttr::get(context, step), parent);
}

std::string describeLocation(mlir::Location loc) {
  llvm::SmallVector<llvm::StringRef> steps;
  mlir::Location current = loc;
  while (auto name = llvm::dyn_cast<mlir::NameLoc>(current)) {
    steps.push_back(name.getName().getValue());
    current = name.getChildLoc();
  }
  if (steps.empty() || !llvm::isa<mlir::UnknownLoc>(current)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << loc;
    return text;
  }
  // The last step is the module's, which names the file.
  steps.pop_back();
  if (steps.empty())
    return "module";
  std::reverse(steps.begin(), steps.end());
  return llvm::join(steps, ", ");
}

std::string quoteName(llvm::StringRef name) {
  std::string text = "'";
  llvm::raw_string_ostream os(text);
  llvm::printEscapedString(name.take_front(kMaxQuotedNameLength), os);
  if (name.size() > kMaxQuotedNameLength)
    os << "...";
  os << "'";
  return text;
}

} // namespace modelfile
} // namespace kiln
