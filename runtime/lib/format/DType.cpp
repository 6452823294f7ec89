//===- DType.cpp - The schema's element types match the list --------------===//
//
// runtime/schema/kmod.fbs cannot include kiln/ElementTypes.def, so its DType
// enum repeats the codes. These checks make the build fail as soon as the two
// disagree, in either direction: a row missing from the schema, a schema
// value missing from the list, or a renumbering.
//
//===----------------------------------------------------------------------===//

#include "kmod_generated.h"

#include "kiln/ElementType.h"

#define KILN_DTYPE(NAME, CODE, ...)                                            \
  static_assert(static_cast<int>(kiln::kmod::DType::NAME) == (CODE),           \
                "kmod.fbs: DType " #NAME " differs from ElementTypes.def");
#include "kiln/ElementTypes.def"

static_assert(static_cast<int>(kiln::kmod::DType::MIN) == 0 &&
                  static_cast<unsigned>(kiln::kmod::DType::MAX) + 1 ==
                      kiln::kNumElementTypes,
              "kmod.fbs: DType has values that ElementTypes.def lacks");
