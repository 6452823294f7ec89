//===- KilnDialect.td - The kiln graph dialect -------------*- tablegen -*-===//
//
// The kiln dialect holds graph-level ops on value-semantics tensors:
// elementwise math, shape manipulation, reductions, matmul, gather, and
// structured control flow (cond, while, for). Everything below it is upstream.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let summary = "Graph-level ops of the kiln ML compiler";
  let description = [{
    Ops on statically shaped builtin tensors with value semantics. Control
    flow is structured: `kiln.cond`, `kiln.while` (data-dependent trip count)
    and `kiln.for` (static trip count) are region ops whose regions are
    isolated from above, so every outer value a region uses arrives as an
    explicit operand.
  }];
  let cppNamespace = "::mlir::kiln";
  let hasConstantMaterializer = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kiln_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
def Kiln_IntElement : AnyTypeOf<[I32, I64]>;
def Kiln_NumericElement : AnyTypeOf<[F16, BF16, F32, F64, I32, I64]>;
def Kiln_AnyElement : AnyTypeOf<[F16, BF16, F32, F64, I1, I32, I64]>;

def Kiln_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I32, I64]>;
def Kiln_NumericTensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I32, I64]>;
def Kiln_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def Kiln_BoolTensor : StaticShapeTensorOf<[I1]>;
def Kiln_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Kiln_Predicate : 0DTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Kiln_CompareDirection : I32EnumAttr<"CompareDirection",
    "elementwise comparison", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::kiln";
}

#endif // KILN_DIALECT_TD
