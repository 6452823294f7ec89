//===- ElementTypes.cpp - .kfb element types and MLIR types ---------------===//

#include "ElementTypes.h"

#include "kiln/IR/ElementTypes.h"

// ir/schema/kfb.fbs cannot include kiln/ElementTypes.def, so its DType enum
// repeats the codes; the build fails as soon as the two disagree.
#define KILN_DTYPE(NAME, CODE, ...)                                            \
  static_assert(static_cast<int>(kiln::kfb::DType::NAME) == (CODE),            \
                "kfb.fbs: DType " #NAME " differs from ElementTypes.def");
#include "kiln/ElementTypes.def"
static_assert(static_cast<int>(kiln::kfb::DType::MIN) == 0 &&
                  static_cast<unsigned>(kiln::kfb::DType::MAX) + 1 ==
                      kiln::kNumElementTypes,
              "kfb.fbs: DType has values that ElementTypes.def lacks");

namespace kiln {
namespace modelfile {

const ElementTypeInfo *findDType(kfb::DType dtype) {
  unsigned code = static_cast<unsigned>(dtype);
  return code < kNumElementTypes ? &kElementTypes[code] : nullptr;
}

std::optional<kfb::DType> toDType(mlir::Type type) {
  if (std::optional<ElementType> elementType = classifyElementType(type))
    return static_cast<kfb::DType>(*elementType);
  return std::nullopt;
}

mlir::Type toMlirType(kfb::DType dtype, mlir::MLIRContext *context) {
  const ElementTypeInfo *info = findDType(dtype);
  return info ? getMlirElementType(info->type, context) : mlir::Type();
}

size_t storageSize(kfb::DType dtype) {
  const ElementTypeInfo *info = findDType(dtype);
  return info ? info->byteSize : 0;
}

bool isFloat(kfb::DType dtype) {
  const ElementTypeInfo *info = findDType(dtype);
  return info && info->elementClass == ElementClass::Float;
}

std::string dtypeName(kfb::DType dtype) {
  if (const ElementTypeInfo *info = findDType(dtype))
    return info->name;
  return "<invalid " + std::to_string(static_cast<unsigned>(dtype)) + ">";
}

std::string describeDTypes() {
  std::string text = "0-" + std::to_string(kNumElementTypes - 1) + ":";
  for (const ElementTypeInfo &info : kElementTypes)
    text += std::string(info.type == kElementTypes[0].type ? " " : ", ") +
            info.name;
  return text;
}

} // namespace modelfile
} // namespace kiln
