//===- KilnFusionEnums.td - Enums of kiln.fused ------------*- tablegen -*-===//
//
// Kept apart from KilnFusionOps.td so that -gen-enum-decls on this file emits
// only the fusion enums (KilnDialect.td's enums are generated with KilnOps).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUSION_ENUMS_TD
#define KILN_FUSION_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Kiln_FusionKind : I32EnumAttr<"FusionKind",
    "what the ops of a kiln.fused region compute", [
      I32EnumAttrCase<"elementwise", 0>,
      I32EnumAttrCase<"reduction", 1>,
      I32EnumAttrCase<"matmul_epilogue", 2>]> {
  let cppNamespace = "::mlir::kiln";
}

#endif // KILN_FUSION_ENUMS_TD
