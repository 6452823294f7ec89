//===- Locations.h - Where in a .kfb file an op came from -------*- C++ -*-===//
//
// A .kfb file has no source locations, so the reader gives every operation
// one that says where in the file it was: the function, then the index of
// the op in its block, then region and op indices down through nested
// control flow. Each location is a NameLoc holding one step whose child is
// the location of the enclosing op (the outermost being the module's, named
// after the file), so a location costs the same however deep the op is.
// describeLocation joins the steps into the text used in error messages:
//
//   function 'f', op #3 ('kiln.while'), region #1, op #0 ('kiln.add')
//
// MLIR prints the same location, in later diagnostics, as the chain
//
//   loc("region #1, op #0 ('kiln.add')"("op #3 ('kiln.while')"(
//       "function 'f'"("model.kfb"))))
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_KFB_LOCATIONS_H
#define KILN_LIB_KFB_LOCATIONS_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace kiln {
namespace modelfile {

/// The location of the module read from \p fileName (which may be empty).
mlir::Location moduleLocation(llvm::StringRef fileName,
                              mlir::MLIRContext *context);

/// The location of the function \p name in a module at \p moduleLoc.
mlir::Location functionLocation(mlir::Location moduleLoc, llvm::StringRef name);

/// A location one \p step below \p parent, e.g. "op #3 ('kiln.add')".
mlir::Location childLocation(mlir::Location parent, const llvm::Twine &step);

/// Renders a location made by the functions above as a path, without the
/// file name; any other location as MLIR prints it. The module's own
/// location renders as "module".
std::string describeLocation(mlir::Location loc);

/// \p name in single quotes, with non-printable characters escaped and very
/// long names shortened, for error messages about names read from a file.
std::string quoteName(llvm::StringRef name);

} // namespace modelfile
} // namespace kiln

#endif // KILN_LIB_KFB_LOCATIONS_H
