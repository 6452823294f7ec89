//===- ElementTypes.h - .kfb element types and MLIR types -------*- C++ -*-===//
//
// The format's DType enum seen through kiln/ElementTypes.def, shared by the
// writer and the reader. The schema's values are the list's codes (checked
// when this library compiles), so conversions are casts; the facts come from
// the list and the MLIR types from kiln/IR/ElementTypes.h. Values read from a
// file may be any byte, so every function here accepts invalid enumerators
// and says so.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_KFB_ELEMENTTYPES_H
#define KILN_LIB_KFB_ELEMENTTYPES_H

#include "kfb_generated.h"

#include "kiln/ElementType.h"

#include "mlir/IR/Types.h"

#include <cstddef>
#include <optional>
#include <string>

namespace kiln {
namespace modelfile {

/// The row of \p dtype, or nullptr for an invalid enumerator.
const ElementTypeInfo *findDType(kfb::DType dtype);

/// Returns the DType of \p type if it is one of the element types the format
/// stores (the rows of kiln/ElementTypes.def: f16, bf16, f32, f64, signless
/// i1, i8 ... i64 and unsigned ui8 ... ui64).
std::optional<kfb::DType> toDType(mlir::Type type);

/// Returns the MLIR type of \p dtype, or a null type if \p dtype is not one
/// of the enumerators.
mlir::Type toMlirType(kfb::DType dtype, mlir::MLIRContext *context);

/// Returns the number of bytes one element of \p dtype occupies in a
/// constant buffer (i1 takes a whole byte), or 0 for an invalid enumerator.
size_t storageSize(kfb::DType dtype);

/// Returns true for the float types (f16, bf16, f32 and f64).
bool isFloat(kfb::DType dtype);

/// Returns "f32", "i1", ... or, for an invalid enumerator, "<invalid N>".
std::string dtypeName(kfb::DType dtype);

/// The valid enumerators for messages: "0-6: f32, f64, i1, ...".
std::string describeDTypes();

} // namespace modelfile
} // namespace kiln

#endif // KILN_LIB_KFB_ELEMENTTYPES_H
