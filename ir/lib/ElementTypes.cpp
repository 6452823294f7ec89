//===- ElementTypes.cpp - kiln element types as MLIR types ----------------===//
//
// Both directions are expanded from the MLIR column of kiln/ElementTypes.def:
// a float row names its builtin type class, an integer or bool row names
// IntegerType, whose width is the row's BITS: signless for Integer and Bool
// rows, unsigned for Unsigned ones, so the sign of ui8 ... ui64 lives in the
// IR until the backends lower it to signless integers and unsigned ops.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace kiln;

namespace {

template <typename MlirType>
mlir::Type build(mlir::MLIRContext *context, unsigned, ElementClass) {
  return MlirType::get(context);
}
template <>
mlir::Type build<mlir::IntegerType>(mlir::MLIRContext *context, unsigned bits,
                                    ElementClass elementClass) {
  return mlir::IntegerType::get(context, bits,
                                elementClass == ElementClass::Unsigned
                                    ? mlir::IntegerType::Unsigned
                                    : mlir::IntegerType::Signless);
}

template <typename MlirType>
bool matches(mlir::Type type, unsigned, ElementClass) {
  return llvm::isa<MlirType>(type);
}
template <>
bool matches<mlir::IntegerType>(mlir::Type type, unsigned bits,
                                ElementClass elementClass) {
  return elementClass == ElementClass::Unsigned ? type.isUnsignedInteger(bits)
                                                : type.isSignlessInteger(bits);
}

} // namespace

std::optional<ElementType> kiln::classifyElementType(mlir::Type type) {
  if (!type)
    return std::nullopt;
#define KILN_DTYPE(NAME, CODE, SPELLING, BYTES, BITS, CLASS, NPY, NPY_AS,      \
                   MLIR, COMPILED, TRACED, ONNX)                                     \
  if (matches<mlir::MLIR>(type, BITS, ElementClass::CLASS))                    \
    return ElementType::NAME;
#include "kiln/ElementTypes.def"
  return std::nullopt;
}

mlir::Type kiln::getMlirElementType(ElementType type,
                                    mlir::MLIRContext *context) {
  switch (type) {
#define KILN_DTYPE(NAME, CODE, SPELLING, BYTES, BITS, CLASS, NPY, NPY_AS,      \
                   MLIR, COMPILED, TRACED, ONNX)                                     \
  case ElementType::NAME:                                                      \
    return build<mlir::MLIR>(context, BITS, ElementClass::CLASS);
#include "kiln/ElementTypes.def"
  }
  return mlir::Type();
}

bool kiln::isCompiledElementType(mlir::Type type) {
  std::optional<ElementType> element = classifyElementType(type);
  return element && getElementTypeInfo(*element).compiled;
}

std::string kiln::compiledElementTypeNames() {
  std::string names;
  for (const ElementTypeInfo &info : kElementTypes)
    if (info.compiled)
      names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}
