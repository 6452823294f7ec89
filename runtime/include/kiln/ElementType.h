//===- ElementType.h - The element types of kiln tensors --------*- C++ -*-===//
//
// The C++ view of kiln/ElementTypes.def: one enum whose values are the stable
// codes (equal to the C API's kiln_dtype_t and to the formats' DType enums),
// and one table of per-type facts. Every other layer derives its element type
// properties and conversions from here instead of keeping its own switch.
// Header-only and free of any dependency, so the runtime, the formats and the
// compiler can all use it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ELEMENTTYPE_H
#define KILN_ELEMENTTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

/// Every element type a kiln tensor can have, numbered by its stable code.
enum class ElementType : uint8_t {
#define KILN_DTYPE(NAME, CODE, ...) NAME = CODE,
#include "kiln/ElementTypes.def"
};

/// How the bits of an element are read.
enum class ElementClass : uint8_t {
  Float,    ///< IEEE-style binary floating point
  Integer,  ///< two's complement, signless in the IR
  Unsigned, ///< unsigned binary, ui8 ... ui64 in the IR
  Bool,     ///< i1, stored as one byte holding 0 or 1
};

/// The facts of one row of ElementTypes.def.
struct ElementTypeInfo {
  ElementType type;
  /// "f32", "i1", ...: the name in messages and the MLIR spelling.
  const char *name;
  /// Storage size of one element in bytes.
  unsigned byteSize;
  /// Width of the value in bits.
  unsigned bitWidth;
  ElementClass elementClass;
  /// The numpy descriptor, or "" where numpy has no such type.
  const char *npyDescriptor;
  /// The type whose .npy data carries this one (itself when npyDescriptor is
  /// not empty).
  ElementType npyCarrier;
  /// True if the backends compile it.
  bool compiled;
  /// True if the C++ tracer offers it (as a kiln::DType).
  bool traced;
  /// Its number in ONNX's TensorProto.DataType; 0 where ONNX has none.
  int onnx;
};

/// The rows of ElementTypes.def, indexed by code.
inline constexpr ElementTypeInfo kElementTypes[] = {
#define KILN_DTYPE(NAME, CODE, SPELLING, BYTES, BITS, CLASS, NPY, NPY_AS,      \
                   MLIR, COMPILED, TRACED, ONNX)                                     \
  {ElementType::NAME,   SPELLING, BYTES, BITS, ElementClass::CLASS,            \
   NPY,                 ElementType::NPY_AS, (COMPILED) != 0,                  \
   (TRACED) != 0,       ONNX},
#include "kiln/ElementTypes.def"
};

/// Number of element types; codes at or above it are not element types.
inline constexpr unsigned kNumElementTypes =
    sizeof(kElementTypes) / sizeof(kElementTypes[0]);

namespace detail {
/// True if row i has code i, so that a code indexes kElementTypes.
constexpr bool elementTypeCodesAreDense() {
  for (unsigned i = 0; i < kNumElementTypes; ++i)
    if (static_cast<unsigned>(kElementTypes[i].type) != i)
      return false;
  return true;
}
} // namespace detail

static_assert(detail::elementTypeCodesAreDense(),
              "ElementTypes.def: rows must be in code order 0, 1, 2, ...");

/// True if \p type is one of the rows. Values read from files or passed
/// through the C API may be anything, so every consumer must ask first.
constexpr bool isValidElementType(ElementType type) {
  return static_cast<unsigned>(type) < kNumElementTypes;
}

/// The row of \p type, or nullptr for a value that is not an element type.
constexpr const ElementTypeInfo *findElementType(ElementType type) {
  return isValidElementType(type) ? &kElementTypes[static_cast<unsigned>(type)]
                                  : nullptr;
}

/// The row of \p type, which must be valid.
constexpr const ElementTypeInfo &getElementTypeInfo(ElementType type) {
  return kElementTypes[static_cast<unsigned>(type)];
}

/// "f32", "i1", ..., or "invalid" for a value that is not an element type.
constexpr const char *elementTypeName(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  return info ? info->name : "invalid";
}

/// Bytes per element, or 0 for a value that is not an element type.
constexpr size_t elementTypeSize(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  return info ? info->byteSize : 0;
}

/// True for the float types (f16, bf16, f32, f64, ...).
constexpr bool isFloatElementType(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  return info && info->elementClass == ElementClass::Float;
}

/// True for the integer types other than i1, signed or unsigned.
constexpr bool isIntegerElementType(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  return info && (info->elementClass == ElementClass::Integer ||
                  info->elementClass == ElementClass::Unsigned);
}

/// True for the unsigned integer types (ui8, ui16, ui32, ui64).
constexpr bool isUnsignedElementType(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  return info && info->elementClass == ElementClass::Unsigned;
}

/// The element type spelled \p name ("f32", ...), if any.
constexpr std::optional<ElementType> elementTypeNamed(std::string_view name) {
  for (const ElementTypeInfo &info : kElementTypes)
    if (name == info.name)
      return info.type;
  return std::nullopt;
}

/// The element type with numpy descriptor \p descriptor ("<f4", ...), if any.
constexpr std::optional<ElementType>
elementTypeForNpyDescriptor(std::string_view descriptor) {
  for (const ElementTypeInfo &info : kElementTypes)
    if (!descriptor.empty() && descriptor == info.npyDescriptor)
      return info.type;
  return std::nullopt;
}

} // namespace kiln

#endif // KILN_ELEMENTTYPE_H
