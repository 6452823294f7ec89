//===- ElementTypes.h - kiln element types as MLIR types --------*- C++ -*-===//
//
// The one mapping between the element types of kiln/ElementTypes.def and
// MLIR's builtin types. The tracer, the .kfb reader and writer, the driver and
// the reference evaluator all go through it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_ELEMENTTYPES_H
#define KILN_IR_ELEMENTTYPES_H

#include "kiln/ElementType.h"

#include "mlir/IR/Types.h"

#include <optional>
#include <string>

namespace kiln {

/// The element type of the MLIR type \p type, or std::nullopt if kiln tensors
/// cannot hold it (signed integers must be signless, i8 ... i64; unsigned
/// ones are ui8 ... ui64).
std::optional<ElementType> classifyElementType(mlir::Type type);

/// The MLIR type of \p type, or a null type for a value that is not an
/// element type.
mlir::Type getMlirElementType(ElementType type, mlir::MLIRContext *context);

/// Whether the backends compile tensors of \p type (its row's COMPILED
/// column); false for types that are no element type at all.
bool isCompiledElementType(mlir::Type type);

/// The element types the backends compile, for messages: "f32, f64, ...".
std::string compiledElementTypeNames();

} // namespace kiln

#endif // KILN_IR_ELEMENTTYPES_H
