//===- KilnDialect.td - The kiln graph dialect -------------*- tablegen -*-===//
//
// The kiln dialect holds graph-level ops on value-semantics tensors:
// elementwise math, shape manipulation, padding, reductions, pooling,
// matmul, gather, and structured control flow (cond, while, for). Everything below it is upstream.
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
  // kiln.tied_result on a function argument (kiln/IR/TiedResults.h).
  let hasRegionArgAttrVerify = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// The integer element types: signless i8 ... i64 are signed (two's
// complement), ui8 ... ui64 unsigned. The sign lives in the type so that the
// ops whose result depends on it (div, rem, max, min, compare, cast, the
// shifts' fill) read it from their operands; the backends lower unsigned
// tensors to signless ones and pick the unsigned arith ops.
defvar Kiln_IntTypes = [I8, I16, I32, I64, UI8, UI16, UI32, UI64];
defvar Kiln_FloatTypes = [F16, BF16, F32, F64];

def Kiln_FloatElement : AnyTypeOf<Kiln_FloatTypes>;
def Kiln_IntElement : AnyTypeOf<Kiln_IntTypes>;
def Kiln_NumericElement : AnyTypeOf<!listconcat(Kiln_FloatTypes, Kiln_IntTypes)>;
def Kiln_AnyElement : AnyTypeOf<!listconcat(Kiln_FloatTypes, [I1], Kiln_IntTypes)>;

def Kiln_Tensor : StaticShapeTensorOf<!listconcat(Kiln_FloatTypes, [I1], Kiln_IntTypes)>;
def Kiln_NumericTensor : StaticShapeTensorOf<!listconcat(Kiln_FloatTypes, Kiln_IntTypes)>;
def Kiln_FloatTensor : StaticShapeTensorOf<Kiln_FloatTypes>;
def Kiln_IntTensor : StaticShapeTensorOf<Kiln_IntTypes>;
def Kiln_BoolTensor : StaticShapeTensorOf<[I1]>;
// What the bitwise ops (not, and, or, xor) take: i1 and the integers.
def Kiln_LogicTensor : StaticShapeTensorOf<!listconcat([I1], Kiln_IntTypes)>;
def Kiln_I64Tensor : StaticShapeTensorOf<[I64]>;
def Kiln_UI32Tensor : StaticShapeTensorOf<[UI32]>;
def Kiln_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Kiln_Predicate : 0DTensorOf<[I1]>;
def Kiln_I64Scalar : 0DTensorOf<[I64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}

// A stack: a buffer of rows whose number grows at run time
// (kiln.stack_reserve), written by kiln.stack_push and read by
// kiln.stack_read. Its type is a tensor whose
// leading dimension is dynamic (the capacity) and whose other dimensions
// are the static shape of one row. Only reverse-mode differentiation of
// kiln.while creates stacks; they live inside a function (never arguments
// or results) and may be carried by kiln.while and returned by kiln.cond.
def Kiln_Stack : Type<
    And<[CPred<"::llvm::isa<::mlir::RankedTensorType>($_self)">,
         CPred<"::mlir::kiln::isStackType($_self)">]>,
    "kiln stack (tensor<?x...> with a static row shape)",
    "::mlir::RankedTensorType">;

// What kiln's region ops pass around: tensors, and stacks.
def Kiln_Value : AnyTypeOf<[Kiln_Tensor, Kiln_Stack]>;

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

// What kiln.reduce_window combines each window with. The C++ names are
// capitalized (ReduceWindowKind::Max); the assembly spells them `max`, `sum`.
def Kiln_ReduceWindowKind : I32EnumAttr<"ReduceWindowKind",
    "how kiln.reduce_window combines a window", [
      I32EnumAttrCase<"Max", 0, "max">, I32EnumAttrCase<"Sum", 1, "sum">]> {
  let cppNamespace = "::mlir::kiln";
}

// Which word of Threefry-2x32's output kiln.rng_bits returns.
def Kiln_RngWord : I32EnumAttr<"RngWord",
    "the word of Threefry-2x32's output that kiln.rng_bits returns", [
      I32EnumAttrCase<"First", 0, "first">,
      I32EnumAttrCase<"Second", 1, "second">,
      I32EnumAttrCase<"Xor", 2, "xor">]> {
  let cppNamespace = "::mlir::kiln";
}

#endif // KILN_DIALECT_TD
