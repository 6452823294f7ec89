//===- KilnOps.td - kiln dialect operations ----------------*- tablegen -*-===//
//
// Every op works on statically shaped tensors. Result types are inferred
// (InferTypeOpInterface) wherever the operands determine them, so the
// verifier reports shape and dtype mismatches at the op that caused them.
//
// Each op's description states its exact semantics, edge cases included
// (NaN, overflow, out-of-range indices). The folders (KilnFolds.cpp), the
// lowering to linalg (backends/common) and the reference evaluator
// (compiler/lib/ReferenceEvaluator.cpp) all implement these descriptions;
// where a result is undefined, the description says so.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "kiln/IR/KilnDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant",
    [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A tensor literal";
  let description = [{
    The tensor held by `value`: a `dense<...>` literal (splat or not) or a
    `dense_resource<...>` blob. The result type is the literal's type.

    ```mlir
    %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_IotaOp : Kiln_Op<"iota", [Pure]> {
  let summary = "Indices along one dimension, broadcast to the result shape";
  let description = [{
    result[i0, ..., in] = i<dim>, converted to the result's element type
    like `kiln.cast` from i64. The result has rank >= 1 and `dim` is one of
    its dimensions.

    ```mlir
    // [[0, 1, 2], [0, 1, 2]]
    %i = kiln.iota dim = 1 : tensor<2x3xi32>
    ```
  }];
  let arguments = (ins I64Attr:$dimension);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        SameOperandsAndResultType, DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let arguments = (ins operandType:$operand);
  let results = (outs operandType:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasFolder = 1;
}

class Kiln_BinaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        SameOperandsAndResultType, DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_AddOp : Kiln_BinaryOp<"add", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise addition";
  let description = [{
    `lhs`, `rhs` and the result have one type; there is no implicit
    broadcasting (use `kiln.broadcast_in_dim`). Floats add as IEEE 754
    does, rounded to nearest even; integers (signed or unsigned) wrap around
    modulo 2^width.

    ```mlir
    %s = kiln.add %a, %b : tensor<4xf32>
    ```
  }];
}
def Kiln_SubOp : Kiln_BinaryOp<"sub", Kiln_NumericTensor> {
  let summary = "Elementwise subtraction";
  let description = [{
    `lhs - rhs`; operands and result have one type, no implicit
    broadcasting. Floats follow IEEE 754 (inf - inf is NaN); integers wrap
    around in two's complement.
  }];
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise multiplication";
  let description = [{
    Operands and result have one type, no implicit broadcasting. Floats
    follow IEEE 754 (0 * inf and NaN * 0 are NaN); integers wrap around in
    two's complement.
  }];
}
def Kiln_DivOp : Kiln_BinaryOp<"div", Kiln_NumericTensor> {
  let summary = "Elementwise division (integers round toward zero)";
  let description = [{
    `lhs / rhs`; operands and result have one type, no implicit
    broadcasting.

    Floats follow IEEE 754: x / 0 is +-inf for x != 0 (the sign is the
    product of the signs, -0.0 included), 0 / 0 and NaN / y are NaN.

    Signed integers (i8 ... i64) divide rounding toward zero (-7 / 2 is
    -3), like C. The one overflowing quotient, the most negative value
    divided by -1, wraps around to the most negative value (it is
    `0 - lhs`). Unsigned integers (ui8 ... ui64) divide as unsigned
    (200 / 3 is 66 in ui8, where the same bits as i8 give -18).
    Integer division by zero is defined, as XLA defines it, so that no
    program can trap and kill its host process: x / 0 is -1 for the signed
    types and all ones (the largest value) for the unsigned ones, whatever
    x is. The folder, the lowering and the reference evaluator all give
    this value.
  }];
}
def Kiln_MaxOp : Kiln_BinaryOp<"max", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise maximum (NaN-propagating for floats)";
  let description = [{
    Operands and result have one type. For floats this is IEEE 754-2019
    `maximum` (`arith.maximumf`): if either operand is NaN the result is
    NaN, and +0.0 is greater than -0.0. Signless integers compare signed,
    ui8 ... ui64 unsigned.
  }];
}
def Kiln_MinOp : Kiln_BinaryOp<"min", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise minimum (NaN-propagating for floats)";
  let description = [{
    Operands and result have one type. For floats this is IEEE 754-2019
    `minimum` (`arith.minimumf`): if either operand is NaN the result is
    NaN, and -0.0 is less than +0.0. Signless integers compare signed,
    ui8 ... ui64 unsigned.
  }];
}
def Kiln_PowOp : Kiln_BinaryOp<"pow", Kiln_FloatTensor> {
  let summary = "Elementwise power";
  let description = [{
    `lhs` raised to `rhs`, floats only, with C's `pow` special cases: a
    negative base with a non-integer exponent gives NaN, x^0 is 1 for every
    x (NaN included), (+0)^y is +inf for y < 0. The folder and the reference
    evaluator compute `pow` in double and round; compiled code calls libm's
    and may differ by an ulp.
  }];
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor> {
  let summary = "Elementwise negation";
  let description = [{
    The result has the operand's type.
    Floats flip the sign bit (neg of NaN is NaN, neg of 0.0 is -0.0);
    integers wrap around, so the most negative value is its own negation.
  }];
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor> {
  let summary = "Elementwise absolute value";
  let description = [{
    The result has the operand's type.
    Floats clear the sign bit (abs of -0.0 is 0.0, of NaN is NaN);
    integers wrap around, so the most negative value is its own absolute
    value.
  }];
}
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor> {
  let summary = "Elementwise max(x, 0)";
  let description = [{
    The result has the operand's type.
    `kiln.max` of x and zero: NaN stays NaN, -0.0 becomes 0.0; integers
    below zero become 0.

    ```mlir
    %r = kiln.relu %x : tensor<8xf32>
    ```
  }];
}
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor> {
  let summary = "Elementwise e^x";
  let description = [{
    The result has the operand's type.
    Floats only. Overflows to +inf; exp(-inf) is 0, exp(NaN) is NaN.

    The folder and the reference evaluator compute C's `<math.h>` function
    in double and round to the element type. Compiled code calls libm or,
    for f32 exp, log and tanh on the CPU, a polynomial approximation, and
    may differ from that by a few ulps.
  }];
}
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor> {
  let summary = "Elementwise natural logarithm";
  let description = [{
    The result has the operand's type.
    Floats only. log(0) is -inf, log of a negative number is NaN,
    log(+inf) is +inf.

    The folder and the reference evaluator compute C's `<math.h>` function
    in double and round to the element type. Compiled code calls libm or,
    for f32 exp, log and tanh on the CPU, a polynomial approximation, and
    may differ from that by a few ulps.
  }];
}
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor> {
  let summary = "Elementwise square root";
  let description = [{
    The result has the operand's type.
    Floats only, correctly rounded (IEEE 754). sqrt(-0.0) is -0.0, the
    square root of a negative number is NaN.
  }];
}
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", Kiln_FloatTensor> {
  let summary = "Elementwise 1/sqrt(x)";
  let description = [{
    The result has the operand's type.
    Floats only, computed as 1 / sqrt(x) with two roundings (each
    correctly rounded, so compiled code, folder and evaluator agree
    exactly): rsqrt(0) is +inf, rsqrt(-0.0) is -inf, a negative x gives
    NaN.
  }];
}
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor> {
  let summary = "Elementwise hyperbolic tangent";
  let description = [{
    The result has the operand's type.
    Floats only; tends to +-1 for large |x|, tanh(NaN) is NaN.

    The folder and the reference evaluator compute C's `<math.h>` function
    in double and round to the element type. Compiled code calls libm or,
    for f32 exp, log and tanh on the CPU, a polynomial approximation, and
    may differ from that by a few ulps.
  }];
}
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", Kiln_FloatTensor> {
  let summary = "Elementwise 1/(1+e^-x)";
  let description = [{
    The result has the operand's type.
    Floats only, computed as 1 / (1 + exp(-x)): 0 for x = -inf (and once
    exp(-x) overflows), 1 for x = +inf, NaN for NaN.

    The folder and the reference evaluator compute C's `<math.h>` function
    in double and round to the element type. Compiled code calls libm or,
    for f32 exp, log and tanh on the CPU, a polynomial approximation, and
    may differ from that by a few ulps.
  }];
}
def Kiln_SinOp : Kiln_UnaryOp<"sin", Kiln_FloatTensor> {
  let summary = "Elementwise sine";
  let description = [{
    The result has the operand's type.
    Floats only, x in radians; sin(+-inf) is NaN.

    The folder and the reference evaluator compute C's `<math.h>` function
    in double and round to the element type. Compiled code calls libm or,
    for f32 exp, log and tanh on the CPU, a polynomial approximation, and
    may differ from that by a few ulps.
  }];
}
def Kiln_CosOp : Kiln_UnaryOp<"cos", Kiln_FloatTensor> {
  let summary = "Elementwise cosine";
  let description = [{
    The result has the operand's type.
    Floats only, x in radians; cos(+-inf) is NaN.

    The folder and the reference evaluator compute C's `<math.h>` function
    in double and round to the element type. Compiled code calls libm or,
    for f32 exp, log and tanh on the CPU, a polynomial approximation, and
    may differ from that by a few ulps.
  }];
}

// The float functions below are all evaluated the same way: the folder and
// the reference evaluator compute C's `<math.h>` function in double and
// round to the element type; compiled code calls libm (libdevice on CUDA)
// or, for f32 erf and atan on the CPU, upstream's polynomial
// approximations, and may differ from that by a few ulps. floor, ceil and
// round are exact everywhere.

def Kiln_ErfOp : Kiln_UnaryOp<"erf", Kiln_FloatTensor> {
  let summary = "Elementwise error function";
  let description = [{
    erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt. The result
    has the operand's type. erf(+-0) is +-0, erf(+-inf) is +-1, erf(NaN)
    is NaN. C's `erf` in double, rounded (see above).

    ```mlir
    %e = kiln.erf %x : tensor<4xf32>
    ```
  }];
}
def Kiln_FloorOp : Kiln_UnaryOp<"floor", Kiln_FloatTensor> {
  let summary = "Elementwise round toward -inf";
  let description = [{
    The largest integral value not above x, in the operand's type (exact).
    Zeros, infinities and NaN are returned unchanged (floor(-0.0) is -0.0);
    floor(-0.5) is -1.0.
  }];
}
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", Kiln_FloatTensor> {
  let summary = "Elementwise round toward +inf";
  let description = [{
    The smallest integral value not below x, in the operand's type (exact).
    Zeros, infinities and NaN are returned unchanged; ceil(-0.5) is -0.0.
  }];
}
def Kiln_RoundOp : Kiln_UnaryOp<"round", Kiln_FloatTensor> {
  let summary = "Elementwise round to nearest, ties to even";
  let description = [{
    The integral value nearest to x; halfway cases go to the even one
    (round(0.5) is 0.0, round(1.5) and round(2.5) are 2.0, round(-2.5) is
    -2.0), as ONNX Round, numpy.round and C's `nearbyint` in the default
    rounding mode (`math.roundeven`). Exact; the sign of a zero result is
    the sign of x (round(-0.4) is -0.0); infinities and NaN are unchanged.
  }];
}
def Kiln_TanOp : Kiln_UnaryOp<"tan", Kiln_FloatTensor> {
  let summary = "Elementwise tangent";
  let description = [{
    x in radians; tan(+-inf) and tan(NaN) are NaN, tan(+-0) is +-0. C's
    `tan` in double, rounded (see above).
  }];
}
def Kiln_AsinOp : Kiln_UnaryOp<"asin", Kiln_FloatTensor> {
  let summary = "Elementwise arcsine";
  let description = [{
    In [-pi/2, pi/2]; NaN for |x| > 1 and for NaN; asin(+-0) is +-0. C's
    `asin` in double, rounded (see above).
  }];
}
def Kiln_AcosOp : Kiln_UnaryOp<"acos", Kiln_FloatTensor> {
  let summary = "Elementwise arccosine";
  let description = [{
    In [0, pi]; NaN for |x| > 1 and for NaN; acos(1) is +0. C's `acos` in
    double, rounded (see above).
  }];
}
def Kiln_AtanOp : Kiln_UnaryOp<"atan", Kiln_FloatTensor> {
  let summary = "Elementwise arctangent";
  let description = [{
    In [-pi/2, pi/2]; atan(+-inf) is +-pi/2, atan(+-0) is +-0, atan(NaN) is
    NaN. C's `atan` in double, rounded (see above).
  }];
}
def Kiln_SinhOp : Kiln_UnaryOp<"sinh", Kiln_FloatTensor> {
  let summary = "Elementwise hyperbolic sine";
  let description = [{
    Overflows to +-inf for large |x|; sinh(+-0) is +-0, sinh(NaN) is NaN.
    C's `sinh` in double, rounded (see above).
  }];
}
def Kiln_CoshOp : Kiln_UnaryOp<"cosh", Kiln_FloatTensor> {
  let summary = "Elementwise hyperbolic cosine";
  let description = [{
    At least 1; overflows to +inf for large |x|, cosh(NaN) is NaN. C's
    `cosh` in double, rounded (see above).
  }];
}
def Kiln_AsinhOp : Kiln_UnaryOp<"asinh", Kiln_FloatTensor> {
  let summary = "Elementwise inverse hyperbolic sine";
  let description = [{
    Defined everywhere; asinh(+-inf) is +-inf, asinh(+-0) is +-0,
    asinh(NaN) is NaN. C's `asinh` in double, rounded (see above).
  }];
}
def Kiln_AcoshOp : Kiln_UnaryOp<"acosh", Kiln_FloatTensor> {
  let summary = "Elementwise inverse hyperbolic cosine";
  let description = [{
    For x >= 1: acosh(1) is +0, acosh(+inf) is +inf; NaN for x < 1 and for
    NaN. C's `acosh` in double, rounded (see above).
  }];
}
def Kiln_AtanhOp : Kiln_UnaryOp<"atanh", Kiln_FloatTensor> {
  let summary = "Elementwise inverse hyperbolic tangent";
  let description = [{
    For |x| <= 1: atanh(+-1) is +-inf, atanh(+-0) is +-0; NaN for |x| > 1
    and for NaN. C's `atanh` in double, rounded (see above).
  }];
}
def Kiln_SignOp : Kiln_UnaryOp<"sign", Kiln_NumericTensor> {
  let summary = "Elementwise sign: -1, 0 or 1";
  let description = [{
    The result has the operand's type: 1 where x > 0, -1 where x < 0, and
    x itself elsewhere. For integers that is 0 at 0. For floats, zeros keep
    their sign (sign(-0.0) is -0.0, sign(+0.0) is +0.0, which compare
    equal to 0) and NaN stays NaN; infinities give +-1.

    ```mlir
    %s = kiln.sign %x : tensor<4xi32>
    ```
  }];
}

def Kiln_RemOp : Kiln_BinaryOp<"rem", Kiln_NumericTensor> {
  let summary = "Elementwise truncated remainder (sign of the dividend)";
  let description = [{
    `lhs - trunc(lhs / rhs) * rhs`, which has the sign of `lhs` (or is
    zero); operands and result have one type, no implicit broadcasting.

    Floats: C's `fmod`, exact: rem(x, 0), rem(+-inf, y) and anything with a
    NaN are NaN; rem(x, +-inf) is x for finite x; a zero result has the
    sign of `lhs`.

    Unsigned integers (ui8 ... ui64): the unsigned remainder, and rem(x, 0)
    is x as below.

    Signed integers (i8 ... i64): C's `%`, with every case defined and
    never trapping. rem(x, -1) is 0, including for the most negative value
    (its quotient wraps in `kiln.div`, and the remainder is 0 either way).
    rem(x, 0) is x: whatever `kiln.div` leaves undefined for a zero divisor,
    `x == div(x, 0) * 0 + rem(x, 0)` holds only for that value, so the
    identity between the two ops is kept. The folder folds it, the
    reference evaluator computes it, and compiled code selects it without
    dividing.

    ```mlir
    // [1, -1, 1, -1, 5]
    %r = kiln.rem %a, %b : tensor<5xi32>  // %a = [7, -7, 7, -7, 5], %b = [3, 3, -3, -3, 0]
    ```
  }];
}

def Kiln_NotOp : Kiln_UnaryOp<"not", Kiln_LogicTensor> {
  let summary = "Elementwise bitwise complement (logical not on i1)";
  let description = [{
    Flips every bit: on i1 it is logical negation, on the other integers
    `~x` (`-x - 1` in two's complement, `2^width - 1 - x` unsigned). The
    result has the operand's type.

    ```mlir
    %n = kiln.not %p : tensor<4xi1>
    ```
  }];
}
def Kiln_AndOp : Kiln_BinaryOp<"and", Kiln_LogicTensor, [Commutative]> {
  let summary = "Elementwise bitwise and (logical and on i1)";
  let description = [{
    `lhs & rhs` bit by bit, on i1 or any integer type; operands and result have one
    type and there is no implicit broadcasting (use
    `kiln.broadcast_in_dim`), as for `kiln.add`.
  }];
}
def Kiln_OrOp : Kiln_BinaryOp<"or", Kiln_LogicTensor, [Commutative]> {
  let summary = "Elementwise bitwise or (logical or on i1)";
  let description = [{
    `lhs | rhs` bit by bit, on i1 or any integer type; operands and result have one
    type, no implicit broadcasting.
  }];
}
def Kiln_XorOp : Kiln_BinaryOp<"xor", Kiln_LogicTensor, [Commutative]> {
  let summary = "Elementwise bitwise exclusive or (inequality on i1)";
  let description = [{
    `lhs ^ rhs` bit by bit, on i1 or any integer type; operands and result have one
    type, no implicit broadcasting.
  }];
}

def Kiln_ShiftLeftOp : Kiln_BinaryOp<"shift_left", Kiln_IntTensor> {
  let summary = "Elementwise left shift";
  let description = [{
    `lhs << rhs` on the integer types; operands and result have one type,
    no implicit broadcasting. Bits shifted out are lost and zeros come in.
    The shift amount `rhs` is read as unsigned: an amount of at least the
    bit width (a negative amount of a signed type included) gives 0, where
    C and LLVM leave the result undefined.

    ```mlir
    // [2, 64, 0]
    %s = kiln.shift_left %x, %n : tensor<3xui8>  // %x = [1, 16, 1], %n = [1, 2, 8]
    ```
  }];
}
def Kiln_ShiftRightOp : Kiln_BinaryOp<"shift_right", Kiln_IntTensor> {
  let summary = "Elementwise right shift (logical on unsigned, arithmetic on signed)";
  let description = [{
    `lhs >> rhs` on the integer types; operands and result have one type,
    no implicit broadcasting. The sign of the type decides what comes in
    from the left: zeros for ui8 ... ui64 (a logical shift), copies of the
    sign bit for i8 ... i64 (an arithmetic shift, rounding toward -inf).
    The shift amount `rhs` is read as unsigned: an amount of at least the
    bit width (a negative amount of a signed type included) shifts every
    bit out, giving 0, or -1 for a negative signed `lhs`.

    ```mlir
    // [8, 1, 0]
    %s = kiln.shift_right %x, %n : tensor<3xui8>  // %x = [16, 255, 255], %n = [1, 7, 8]
    ```
  }];
}

def Kiln_RngBitsOp : Kiln_Op<"rng_bits",
    [Pure, Elementwise, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Counter-based random bits: Threefry-2x32 of a counter under a key";
  let description = [{
    Each element is Threefry-2x32 with 20 rounds (Salmon et al., SC 2011)
    of the 64-bit counter (`counter_hi`, `counter_lo`) under the key
    (`key0`, `key1`): the cipher's two output words, and `word` picks the
    `first`, the `second`, or their `xor`. All operands and the result are
    ui32 tensors of one shape; a key shared by a whole tensor is broadcast
    first. The result depends on nothing else, so the same key and counter
    give the same bits on every backend, thread count and partitioning.

    This is JAX's `threefry2x32` primitive, and the random streams are
    JAX's: a key is a pair of ui32, the 32 random bits of the element at
    flat index n of a tensor are `xor` at the counter (n >> 32, n & 0xffffffff),
    splitting a key into k keys takes the `first` and `second` words at
    the counters (0, 0) ... (0, k - 1), and folding data d into a key takes
    them at the counter (0, d).

    ```mlir
    // [1797259609, 928981903] for the key (0, 0), %hi = [0, 0], %lo = [0, 1]
    %b = kiln.rng_bits first, %k0, %k1, %hi, %lo : tensor<2xui32>
    ```
  }];
  let arguments = (ins Kiln_RngWord:$word, Kiln_UI32Tensor:$key0,
                       Kiln_UI32Tensor:$key1, Kiln_UI32Tensor:$counter_hi,
                       Kiln_UI32Tensor:$counter_lo);
  let results = (outs Kiln_UI32Tensor:$result);
  let assemblyFormat = [{
    $word `,` $key0 `,` $key1 `,` $counter_hi `,` $counter_lo attr-dict `:`
    type($result)
  }];
  let hasFolder = 1;
}

def Kiln_CompareOp : Kiln_Op<"compare",
    [Pure, Elementwise, AllTypesMatch<["lhs", "rhs"]>, InferTypeOpAdaptor]> {
  let summary = "Elementwise comparison producing i1";
  let description = [{
    `lhs` and `rhs` have one type; the result is an i1 tensor of their
    shape, true where `lhs <direction> rhs`. Directions: `eq`, `ne`, `lt`,
    `le`, `gt`, `ge`.

    Floats compare as IEEE 754 and C do: every comparison involving NaN is
    false except `ne`, which is true; -0.0 equals +0.0. The signless
    integers (i8 ... i64) compare signed, ui8 ... ui64 unsigned; i1
    compares unsigned (false < true).

    ```mlir
    %m = kiln.compare lt, %a, %b : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_CompareDirection:$direction,
                       Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def Kiln_SelectOp : Kiln_Op<"select",
    [Pure, AllTypesMatch<["on_true", "on_false", "result"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Elementwise pred ? on_true : on_false";
  let description = [{
    result[i] = pred[i] ? on_true[i] : on_false[i]. `on_true`, `on_false`
    and the result have one type. `pred` is an i1 tensor of the values'
    shape, or a rank-0 i1 tensor that selects one of the two operands
    whole. Only the chosen element is read: a NaN in the other operand
    does not reach the result.

    ```mlir
    %r = kiln.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
    %w = kiln.select %q, %a, %b : tensor<i1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$pred, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure]> {
  let summary = "Elementwise dtype conversion";
  let description = [{
    Converts every element to the result's element type; the shapes are
    equal. Between any two element types (f16, bf16, f32, f64, i1, i8 ...
    i64, ui8 ... ui64):

    - float to float: rounds to nearest even; values beyond the target's
      range become +-inf; NaN stays NaN; widening is exact.
    - float to a signed integer: rounds toward zero and saturates: values
      at or above 2^(w-1) (+inf included) give the largest integer, values
      below -2^(w-1) (-inf included) the smallest, NaN gives 0. This is
      Rust's `as` and LLVM's `llvm.fptosi.sat`; the result is defined for
      every input. To an unsigned integer likewise, with the range [0,
      2^w): negative values give 0 (`llvm.fptoui.sat`).
    - integer to float: rounds to nearest even, once (i64 above 2^24 to
      f32 rounds); unsigned sources and i1 are read unsigned. The CPU code
      converts a 64-bit integer to bf16 through f64, which can round twice
      in halfway cases.
    - integer to integer: widening sign-extends a signed source and
      zero-extends an unsigned one; narrowing keeps the low bits (wraps
      around); between the same width the bits are kept (-1 as i8 is 255
      as ui8); i1 is unsigned and gives 0 or 1.
    - anything to i1: `x != 0`, so NaN gives true and -0.0 false.

    ```mlir
    // [2147483647, -2147483648, 0, -2]
    %i = kiln.cast %x : tensor<4xf32> to tensor<4xi32>  // %x = [3e9, -inf, nan, -2.7]
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_BitcastOp : Kiln_Op<"bitcast", [Pure]> {
  let summary = "Elementwise reinterpretation of the bits";
  let description = [{
    Every element's bits, read as the result's element type: no value is
    converted. The element types have one bit width (i1 is not allowed:
    its storage width is not its bit width), the shapes are equal. Floats
    keep their bits whatever they hold: a NaN's payload and sign, -0.0,
    subnormals.

    ```mlir
    // [1065353216, -1082130432, 2143289344]
    %i = kiln.bitcast %x : tensor<3xf32> to tensor<3xi32>  // %x = [1, -1, nan]
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Kiln_BroadcastInDimOp : Kiln_Op<"broadcast_in_dim", [Pure]> {
  let summary = "Broadcast an operand to a larger shape";
  let description = [{
    Operand dimension `i` maps to result dimension `dims[i]`; it must either
    equal that result dimension or be 1 (numpy broadcasting, made explicit).
    `dims` is strictly increasing, has one entry per operand dimension,
    and the element type is unchanged. Result dimensions not in `dims`
    repeat the operand; a size-1 operand dimension repeats along its result
    dimension.

    ```mlir
    // A bias of 4 added to each of 8 rows.
    %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dims attr-dict `:` functional-type($operand, $result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "Reinterpret the elements (row-major) in a new shape";
  let description = [{
    The elements in row-major order, unchanged, in the result's shape; the
    element type and the number of elements are the operand's.

    ```mlir
    %r = kiln.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type($operand, $result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute dimensions: result dim i is operand dim perm[i]";
  let description = [{
    result[i0, ..., in] = operand[j0, ..., jn] with j<perm[k]> = i<k>;
    `permutation` is a permutation of 0 .. rank-1 and result dimension k
    has the size of operand dimension perm[k].

    ```mlir
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `permutation` `=` $permutation attr-dict `:` type($operand)
  }];
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "Strided static slice [start, limit) with step stride";
  let description = [{
    result[i...] = operand[start + i * stride ...], with one entry of
    `start`, `limit` and `stride` per dimension, 0 <= start <= limit <= size
    and stride >= 1. Each result dimension has
    ceil((limit - start) / stride) elements (possibly 0).

    ```mlir
    // Every other element of the first row: tensor<1x2xf32>.
    %s = kiln.slice %x, start = [0, 0], limit = [1, 4], stride = [1, 2] : tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `limit` `=` $limit `,` `stride` `=` $stride
    attr-dict `:` type($operand)
  }];
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Concatenate tensors along one dimension";
  let description = [{
    The inputs, in order, joined along `dim`. There is at least one input;
    all have the same element type and rank and the same sizes in every
    other dimension. The result's size along `dim` is the sum of theirs.

    ```mlir
    %c = kiln.concat %a, %b dim = 0 : tensor<2x4xf32>, tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$dimension);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dimension attr-dict `:` type($inputs)
  }];
  let hasFolder = 1;
}

def Kiln_ReverseOp : Kiln_Op<"reverse", [Pure, InferTypeOpAdaptor]> {
  let summary = "Reverse the order of elements along the listed dimensions";
  let description = [{
    result[i0, ..., in] = operand[j0, ..., jn] with jd = size(d) - 1 - id
    for every d in `dims` and jd = id otherwise. `dims` lists distinct
    operand dimensions in any order (empty: the operand unchanged); the
    result has the operand's type. The gradient of `kiln.conv` with
    respect to its input convolves with the kernel reversed in its spatial
    dimensions.

    ```mlir
    // [[3, 2, 1], [6, 5, 4]] for %x = [[1, 2, 3], [4, 5, 6]]
    %r = kiln.reverse %x, dims = [1] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dims attr-dict `:` type($operand)
  }];
  let hasFolder = 1;
}

def Kiln_PadOp : Kiln_Op<"pad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Pad with a value before, after and between the elements";
  let description = [{
    Places the operand's elements in a larger tensor filled with
    `padding_value`: element `i...` of the operand lands at
    `low[d] + i[d] * (interior[d] + 1)` in each dimension `d`, so `low[d]`
    copies of the value come before the first element, `high[d]` after the
    last, and `interior[d]` between each two neighbours. `padding_value` is
    a rank-0 tensor of the operand's element type (any kiln element type,
    i1 included). `low`, `high` and `interior` have one entry per operand
    dimension, all >= 0. Result dimension d has

        size[d] + low[d] + high[d] + max(size[d] - 1, 0) * interior[d]

    elements, so an empty dimension gets `low + high` copies of the value
    and no interior ones. Padding a rank-0 tensor returns it.

    ```mlir
    // [[0, 0, 0, 0, 0], [1, 0, 2, 0, 3], [4, 0, 5, 0, 6]]: tensor<3x5xf32>
    %p = kiln.pad %x, %zero, low = [1, 0], high = [0, 0], interior = [0, 1]
        : tensor<2x3xf32>, tensor<f32>
    ```

    Gradient (`kiln-grad`): the operand gets the strided slice of the
    cotangent it was copied to; `padding_value` gets the sum of the
    cotangent over all padded positions.
  }];
  let arguments = (ins Kiln_Tensor:$operand, Kiln_Tensor:$padding_value,
                       DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
                       DenseI64ArrayAttr:$interior);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` $padding_value `,` `low` `=` $low `,` `high` `=` $high `,`
    `interior` `=` $interior attr-dict `:` type($operand) `,`
    type($padding_value)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, gathers
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, Type operandType>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let arguments = (ins operandType:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs operandType:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $dims attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", Kiln_NumericTensor> {
  let summary = "Sum over the listed dimensions, which are removed";
  let description = [{
    `dims` lists distinct operand dimensions, in any order; the result has
    the remaining dimensions, in order, and the operand's element type.
    Empty `dims` returns the operand. A sum over zero elements is 0.

    Integers wrap around in two's complement, so their sum does not depend
    on the order. Floats are summed in the element type, but the order is
    not fixed: compiled code may split a long sum into partial sums (in
    vector lanes or threads), so the result may differ from a sequential
    sum by rounding.

    ```mlir
    // Row sums: tensor<8xf32>.
    %s = kiln.reduce_sum %x, dims = [1] : tensor<8x16xf32>
    ```
  }];
}
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", Kiln_NumericTensor> {
  let summary = "Maximum over the listed dimensions, which are removed";
  let description = [{
    Dimensions as for `kiln.reduce_sum`. Floats combine with `kiln.max`,
    so a NaN anywhere in a reduced slice makes its result NaN, and +0.0
    beats -0.0; signless integers compare signed, ui8 ... ui64 unsigned.
    The maximum of zero elements is -inf for floats and the smallest value
    of the type (0 for unsigned ones) for integers.

    ```mlir
    %m = kiln.reduce_max %x, dims = [0, 1] : tensor<8x16xf32>
    ```
  }];
}
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", Kiln_FloatTensor> {
  let summary = "Mean over the listed dimensions, which are removed";
  let description = [{
    Floats only (cast integers first): the `kiln.reduce_sum` over `dims`
    divided by the number of elements reduced, in the element type. The
    mean of zero elements is 0 / 0, NaN.

    ```mlir
    %m = kiln.reduce_mean %x, dims = [1] : tensor<8x16xf32>
    ```
  }];
}

class Kiln_ArgReduceOp<string mnemonic>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let arguments = (ins Kiln_NumericTensor:$operand, I64Attr:$dim,
                       UnitAttr:$select_last_index);
  let results = (outs Kiln_I64Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dim (`select_last_index` $select_last_index^)?
    attr-dict `:` type($operand)
  }];
  // ODS's builders include (operand, uint64_t dim, bool select_last_index =
  // false) with the result type inferred, so
  // `create<ArgMaxOp>(loc, x, dim, selectLastIndex)` takes plain values
  // (a negative dim arrives as itself and fails verification).
  let hasVerifier = 1;
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"argmax"> {
  let summary = "Index of the largest element along one dimension";
  let description = [{
    result[i...] = the index k along `dim` of the largest operand element
    of the slice at i..., as i64; the result has the operand's shape with
    `dim` removed. `dim` is an operand dimension and its size is not 0
    (there is no index of an empty slice; the verifier rejects it).

    Ties give the first index, or the last one with `select_last_index`
    (ONNX ArgMax). Signless integers compare signed, ui8 ... ui64
    unsigned. For floats NaN counts as the largest value: a slice holding NaN gives the index of its first NaN
    (the last with `select_last_index`), as numpy.argmax does; -0.0 and
    +0.0 tie.

    ```mlir
    // tensor<8xi64>: the column of each row's maximum.
    %i = kiln.argmax %x, dim = 1 : tensor<8x16xf32>
    %j = kiln.argmax %x, dim = 1 select_last_index : tensor<8x16xf32>
    ```
  }];
}
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"argmin"> {
  let summary = "Index of the smallest element along one dimension";
  let description = [{
    As `kiln.argmax` with the smallest element: ties give the first index
    (the last with `select_last_index`), integers compare signed, and NaN
    counts as the smallest value, so a slice holding NaN gives the index of
    its first (last) NaN, as numpy.argmin does; -0.0 and +0.0 tie.

    ```mlir
    %i = kiln.argmin %x, dim = 0 : tensor<8x16xi32>
    ```
  }];
}

def Kiln_SortOp : Kiln_Op<"sort", [Pure, InferTypeOpAdaptor]> {
  let summary = "Stable sort along one dimension, with the permutation";
  let description = [{
    Sorts every slice along `dim` into ascending order (descending with
    `descending`) and returns the sorted values and, as i64, the index
    along `dim` each came from. The sort is stable: equal elements keep
    their order, so ties give the lower index first in both directions.
    Floats order NaN above +inf (as kiln.argmax counts it the largest, and
    numpy.sort puts it last) and -0.0 equal to +0.0; ui8 ... ui64 compare
    unsigned. The results have the operand's shape (values with its type);
    `dim` is an operand dimension.

    Backends run it as a bitonic sorting network of kiln ops
    (`kiln-decompose-sort`): O(n log^2 n) compare-exchanges per slice, no
    data-dependent control flow. Gradient (`kiln-grad`): the values'
    cotangent goes back to the positions the indices name; the indices
    carry none.

    ```mlir
    // values [3, 2, 2, 1], indices [2, 1, 3, 0]
    %v, %i = kiln.sort %x, dim = 0 descending : tensor<4xf32>  // %x = [1, 2, 3, 2]
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$operand, I64Attr:$dim,
                       UnitAttr:$descending);
  let results = (outs Kiln_NumericTensor:$values, Kiln_I64Tensor:$indices);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dim (`descending` $descending^)? attr-dict `:`
    type($operand)
  }];
  let hasVerifier = 1;
}

def Kiln_CumsumOp : Kiln_Op<"cumsum", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Running sum along one dimension";
  let description = [{
    ONNX CumSum along `dim`, an operand dimension; the result has the
    operand's type. With n = size of `dim`, for each position k along it:

    - default: result[k] = x[0] + ... + x[k];
    - `exclusive`: result[k] = x[0] + ... + x[k-1] (0 at k = 0);
    - `reverse`: result[k] = x[k] + ... + x[n-1];
    - both: result[k] = x[k+1] + ... + x[n-1] (0 at k = n-1).

    Sums are accumulated in the element type in that order (from the
    first element, or from the last with `reverse`), so floats round as a
    sequential loop does; integers wrap around. A dimension of size 0 gives
    an empty result.

    ```mlir
    // [1, 3, 6, 10] for %x = [1, 2, 3, 4]; exclusive: [0, 1, 3, 6];
    // reverse: [10, 9, 7, 4]
    %c = kiln.cumsum %x, dim = 0 : tensor<4xf32>
    %e = kiln.cumsum %x, dim = 0 exclusive reverse : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$operand, I64Attr:$dim,
                       UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dim (`exclusive` $exclusive^)? (`reverse` $reverse^)?
    attr-dict `:` type($result)
  }];
  // As for argmax: ODS's (operand, uint64_t dim, bool exclusive = false,
  // bool reverse = false) builder infers the result type.
  let hasVerifier = 1;
}

def Kiln_MatmulOp : Kiln_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product [M,K]x[K,N] or batched [B,M,K]x[B,K,N]";
  let description = [{
    result[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n]. Both
    operands have rank 2, or both rank 3 with equal batch sizes, and one
    element type (8-bit integers aside, below), which the result keeps
    unless `result_element_type` says otherwise. Integers wrap around; f32
    and f64 accumulate in the element type in an order that is not fixed
    (a GEMM library may block the sum), so results may differ by rounding.

    f16 and bf16 operands are multiplied exactly and accumulated in f32,
    as GEMM libraries and tensor cores do; the f32 sum is rounded once to
    the result. With `result_element_type = f32` that rounding is skipped
    and the result is the f32 sum: the product that mixed precision wants
    (half-precision operands, an f32 result to add, normalize and
    differentiate in f32).

    With `result_element_type = i32`, 8-bit integer operands (i8 or ui8,
    which may differ: a quantized activation times quantized weights) are
    each widened to i32 by their own signedness and the products summed in
    i32, wrapping around (no 8-bit product overflows; sums of more than
    about 2^16 of them may): the product that int8 GEMM libraries compute.
    Operands of two 8-bit types need it.

    ```mlir
    %y = kiln.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32>
    %z = kiln.matmul %a, %b : tensor<8x16xbf16>, tensor<16x4xbf16> -> f32
    %q = kiln.matmul %u, %s : tensor<8x16xui8>, tensor<16x4xi8> -> i32
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                   OptionalAttr<TypeAttr>:$result_element_type);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
    (`->` $result_element_type^)?
  }];
  let builders = [
    OpBuilder<(ins "Value":$lhs, "Value":$rhs),
      [{ build($_builder, $_state, lhs, rhs, TypeAttr()); }]>,
    OpBuilder<(ins "Type":$result, "Value":$lhs, "Value":$rhs),
      [{ build($_builder, $_state, result, lhs, rhs, TypeAttr()); }]>
  ];
}

def Kiln_ConvOp : Kiln_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d convolution (cross-correlation), ONNX layouts";
  let description = [{
    `input` is [N, C, D1, ..., Dk], `weight` is [O, C / groups, K1, ...,
    Kk] (k >= 1 spatial dimensions, so both have rank k + 2), and the
    result is [N, O, E1, ..., Ek] with the operands' element type (f32 or
    f64 in compiled code). Every attribute has one entry per spatial
    dimension, except `groups`.

    Let x^ be the input with `lhs_dilation[i] - 1` zeros inserted between
    neighbouring elements of spatial dimension i (so it has
    (Di - 1) * lhs_dilation[i] + 1 elements there, 0 where Di is 0), then
    `padding_low[i]` zeros before and `padding_high[i]` zeros after it.
    With G = groups, Cg = C / G and Og = O / G:

      result[n, o, e1..ek] = sum over c < Cg and 0 <= ji < Ki of
          x^[n, (o / Og) * Cg + c, e1 * strides[1] + j1 * rhs_dilation[1], ...]
          * weight[o, c, j1, ..., jk]

    and each output size is

      Ei = floor((P_i - ((Ki - 1) * rhs_dilation[i] + 1)) / strides[i]) + 1

    with P_i = (Di - 1) * lhs_dilation[i] + 1 + padding_low[i] +
    padding_high[i] the padded, dilated input size; Ei is 0 when the
    dilated kernel does not fit (or Di or Ki is 0). A result element with
    an empty sum (Cg = 0) is 0. The inserted and padding zeros of x^ may
    be skipped rather than multiplied (the reference evaluator and oneDNN
    skip them), so whether such a zero against an infinite or NaN weight
    gives NaN is not fixed.

    `rhs_dilation` dilates the kernel (ONNX `dilations`); `lhs_dilation`
    dilates the input, which expresses a transposed convolution (ONNX
    ConvTranspose) and the gradient with respect to the input. Constraints:
    `strides`, `lhs_dilation`, `rhs_dilation` >= 1, paddings >= 0,
    `groups` >= 1 dividing C and O, `weight` dim 1 equal to C / groups.
    Floats accumulate in the element type in an order that is not fixed
    (a convolution library may block the sum), so results may differ by
    rounding.

    ```mlir
    // A 3x3 convolution with stride 2 and padding 1, 3 -> 8 channels:
    // [1, 3, 32, 32] -> [1, 8, 16, 16].
    %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1],
           padding_high = [1, 1], lhs_dilation = [1, 1],
           rhs_dilation = [1, 1], groups = 1
           : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding_low,
                       DenseI64ArrayAttr:$padding_high,
                       DenseI64ArrayAttr:$lhs_dilation,
                       DenseI64ArrayAttr:$rhs_dilation, I64Attr:$groups);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` `strides` `=` $strides `,` `padding_low` `=`
    $padding_low `,` `padding_high` `=` $padding_high `,` `lhs_dilation` `=`
    $lhs_dilation `,` `rhs_dilation` `=` $rhs_dilation `,` `groups` `=`
    $groups attr-dict `:` type($input) `,` type($weight)
  }];
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "Rows of `table` picked along axis 0 (embedding lookup)";
  let description = [{
    result[i..., j...] = table[clamp(indices[i...], 0, table.dim(0) - 1), j...].
    Out-of-range indices are clamped, so a bad index never reads outside the
    table: -1 reads row 0 and a too large index the last row. `indices`
    is an i32 or i64 tensor of any shape; the table has rank >= 1 and at
    least one row. The result's shape is the indices' shape followed by
    the table's shape past dimension 0.

    ```mlir
    // Rows of a [100, 16] embedding table: tensor<4x16xf32>.
    %e = kiln.gather %table, %ids : tensor<100x16xf32>, tensor<4xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$table, Kiln_IndexTensor:$indices);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices)
  }];
  let hasCanonicalizer = 1;
}

def Kiln_ScatterAddOp : Kiln_Op<"scatter_add", [Pure, InferTypeOpAdaptor]> {
  let summary = "Rows of `updates` added into `table` at `indices` (the "
                "transpose of gather)";
  let description = [{
    The result is `table` with each row of `updates` added into the row its
    index names, the transpose of `kiln.gather`:

        result = table
        for i... in row-major order of indices:
          result[clamp(indices[i...], 0, table.dim(0) - 1), j...] += updates[i..., j...]

    Indices are clamped as `kiln.gather` clamps them. A row named by several
    indices receives their updates added one after the other in the
    indices' row-major order, so float results do not depend on the
    backend. `updates` has the indices' shape followed by the table's shape
    past dimension 0, and the table's element type. The cost is that of the
    updates (n rows of m elements), not of the table: this is an embedding
    table's gradient (`scatter_add` of the output's cotangent into zeros)
    and its sparse SGD update (into the table itself, `kiln-sparse-updates`).

    ```mlir
    // Adds 4 rows of 16 into a [100, 16] table: tensor<100x16xf32>.
    %t = kiln.scatter_add %table, %ids, %rows : tensor<100x16xf32>, tensor<4xi32>, tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$table, Kiln_IndexTensor:$indices,
                       Kiln_NumericTensor:$updates);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices `,` $updates attr-dict `:` type($table) `,`
    type($indices) `,` type($updates)
  }];
}

//===----------------------------------------------------------------------===//
// Windowed reductions (pooling)
//===----------------------------------------------------------------------===//

def Kiln_ReduceWindowOp : Kiln_Op<"reduce_window", [Pure, InferTypeOpAdaptor]> {
  let summary = "Max or sum over sliding windows (pooling)";
  let description = [{
    Slides a window over the operand and reduces each placement to one
    result element: max pooling (`kind = max`) and sum pooling
    (`kind = sum`; average pooling is a sum divided by the count).
    `window`, `strides`, `padding_low`, `padding_high` and `dilations` have
    one entry per operand dimension (an NCHW 2-D pool has window and stride
    1 on N and C). In dimension d the operand is first padded with
    `padding_low[d]` and `padding_high[d]` (>= 0) elements that hold the
    kind's identity (-inf for a float max, the smallest value of the type
    for an integer max, 0 for sum). The window has `window[d]` (>= 1) elements
    `dilations[d]` (>= 1) apart, so it spans
    S = (window[d] - 1) * dilations[d] + 1 elements, and moves by
    `strides[d]` (>= 1). With P = size[d] + padding_low[d] +
    padding_high[d], result dimension d has floor((P - S) / strides[d]) + 1
    elements; a window that spans more than a non-empty padded dimension
    (S > P > 0) is an error, and an empty one (P = 0) gives an empty
    result dimension.

        result[o...] = combine over w... (row-major) of
                       operand[o[d] * strides[d] - padding_low[d] + w[d] * dilations[d] ...]

    where a position outside the operand reads the identity, so a window
    entirely in padding gives the identity. `max` combines like
    `kiln.reduce_max`: a NaN anywhere in a window makes its result NaN,
    +0.0 beats -0.0, integers compare signed. `sum` adds like
    `kiln.reduce_sum`: integers wrap around; floats are added in the
    element type in row-major window order. The result has the operand's
    element type.

    ```mlir
    // 3x3 max pooling with stride 2 and padding 1 on NCHW: tensor<1x8x4x4xf32>.
    %y = kiln.reduce_window %x, kind = max, window = [1, 1, 3, 3],
        strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1],
        padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1]
        : tensor<1x8x8x8xf32>
    ```

    Gradient (`kiln-grad`): for `sum`, each operand element gets the sum
    of the cotangent over every window that covers it, computed as a
    `kiln.reduce_window` sum over the cotangent spread out by the strides
    (`kiln.pad` with interior = stride - 1); for `max`, see
    `kiln.reduce_window_max_grad`.
  }];
  let arguments = (ins Kiln_NumericTensor:$operand,
                       Kiln_ReduceWindowKind:$kind,
                       DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding_low,
                       DenseI64ArrayAttr:$padding_high,
                       DenseI64ArrayAttr:$dilations);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` `kind` `=` $kind `,` `window` `=` $window `,`
    `strides` `=` $strides `,` `padding_low` `=` $padding_low `,`
    `padding_high` `=` $padding_high `,` `dilations` `=` $dilations
    attr-dict `:` type($operand)
  }];
}

def Kiln_ReduceWindowMaxGradOp : Kiln_Op<"reduce_window_max_grad",
    [Pure, AllTypesMatch<["operand", "result"]>]> {
  let summary = "Route each window's cotangent to its maximum (max pooling's gradient)";
  let description = [{
    The gradient of `kiln.reduce_window` with `kind = max` and the same
    window attributes (XLA's select-and-scatter): `cotangent` has the type
    of that reduce_window's result, and the result has the operand's type.
    For each window placement o, the selected element is the first
    (row-major within the window) in-bounds element that is a NaN or, if
    the window holds no NaN, the first in-bounds element that none of the
    window's in-bounds elements exceeds (IEEE `>`, so -0.0 and +0.0 tie
    and the first wins). Then

        result[i...] = sum over the placements o whose selected element is i
                       of cotangent[o...]

    summed in row-major order of o, in the element type (integers wrap
    around), and 0 where no window selects the element. Padding is never
    selected: the cotangent of a window entirely in padding is dropped.
    This is the operand's gradient when the maximum of each window is
    unique; where several elements tie, the first gets all of it.

    ```mlir
    %dx = kiln.reduce_window_max_grad %x, %dy, window = [2, 2],
        strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0],
        dilations = [1, 1] : tensor<4x4xf32>, tensor<2x2xf32>
    ```

    `kiln-grad` cannot differentiate this op itself (there is no rule for
    it, so second derivatives of max pooling are reported as unsupported).
  }];
  let arguments = (ins Kiln_NumericTensor:$operand,
                       Kiln_NumericTensor:$cotangent,
                       DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding_low,
                       DenseI64ArrayAttr:$padding_high,
                       DenseI64ArrayAttr:$dilations);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` $cotangent `,` `window` `=` $window `,`
    `strides` `=` $strides `,` `padding_low` `=` $padding_low `,`
    `padding_high` `=` $padding_high `,` `dilations` `=` $dilations
    attr-dict `:` type($operand) `,` type($cotangent)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$operand, "::mlir::Value":$cotangent,
                   "::llvm::ArrayRef<int64_t>":$window,
                   "::llvm::ArrayRef<int64_t>":$strides,
                   "::llvm::ArrayRef<int64_t>":$padding_low,
                   "::llvm::ArrayRef<int64_t>":$padding_high,
                   "::llvm::ArrayRef<int64_t>":$dilations), [{
      build($_builder, $_state, operand.getType(), operand, cotangent,
            window, strides, padding_low, padding_high, dilations);
    }]>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Slicing at a run-time row index
//===----------------------------------------------------------------------===//

/// A rank-0 i64 tensor; buildable, so assembly formats need not spell it.
def Kiln_RowIndex : 0DTensorOf<[I64]> {
  let builderCall =
      "::mlir::RankedTensorType::get({}, $_builder.getIntegerType(64))";
}

def Kiln_DynamicSliceOp : Kiln_Op<"dynamic_slice",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "`size` rows of the operand starting at a run-time row index";
  let description = [{
    result[r, j...] = operand[s + r, j...] for r < size, where
    s = clamp(index, 0, operand.dim(0) - size): like gather, a bad index is
    clamped, never read out of bounds, and every row of the result is a
    row of the operand. The operand has rank >= 1, 0 <= size <=
    operand.dim(0), and the result is the operand's type with `size` rows. Reverse-mode differentiation of
    `kiln.for` reads what the forward loop stored per iteration with it.

    ```mlir
    %row = kiln.dynamic_slice %buffer[%i], size = 1 : tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, Kiln_RowIndex:$index,
                       I64Attr:$size);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $index `]` `,` `size` `=` $size attr-dict `:` type($operand)
  }];
}

def Kiln_DynamicUpdateSliceOp : Kiln_Op<"dynamic_update_slice",
    [Pure, AllTypesMatch<["operand", "result"]>]> {
  let summary = "The operand with rows from a run-time row index replaced";
  let description = [{
    The operand with rows s .. s + update.dim(0) - 1 replaced by `update`,
    where s = clamp(index, 0, operand.dim(0) - update.dim(0)), so every
    row of `update` is written and nothing outside the operand is. `update`
    has the operand's element type, rank and, past dimension 0, shape, and
    at most the operand's rows. The result has the operand's type.
    Reverse-mode differentiation of `kiln.for` stores per-iteration values
    with it.

    ```mlir
    %next = kiln.dynamic_update_slice %buffer[%i], %row : tensor<8x4xf32>, tensor<1x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, Kiln_Tensor:$update,
                       Kiln_RowIndex:$index);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $index `]` `,` $update attr-dict `:` type($operand) `,`
    type($update)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Structured control flow
//===----------------------------------------------------------------------===//

// Checks each region's block arguments and kiln.yield operands against the
// op's operands and results (the op's verifyRegionSignatures). A trait
// rather than the op's region verifier, and listed before
// RegionBranchOpInterface, so that it runs before the interface's generic
// check of the same control-flow edges and reports a mismatch in terms of
// the op's own regions and values.
def Kiln_RegionSignatures : NativeOpTrait<"RegionSignatures", [],
    [{ ::llvm::LogicalResult verifyRegionSignatures(); }]> {
  let cppNamespace = "::mlir::kiln";
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["CondOp", "WhileOp", "ForOp", "FusedOp",
                 "FusedKernelOp"]>]> {
  let summary = "Values leaving a kiln control-flow region";
  let description = [{
    Ends every region of `kiln.cond`, `kiln.while`, `kiln.for` and
    `kiln.fused`. Its operands become the parent's results or the next
    iteration's carried values (see each op); in the `cond` region of
    `kiln.while` it yields the rank-0 i1 predicate.

    ```mlir
    kiln.yield %a, %b : tensor<4xf32>, tensor<i64>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Value>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ValueRange()); }]>];
}

def Kiln_CondOp : Kiln_Op<"cond", [IsolatedFromAbove, RecursiveMemoryEffects,
    Kiln_RegionSignatures,
    DeclareOpInterfaceMethods<RegionBranchOpInterface, [
        "getEntrySuccessorOperands", "getEntrySuccessorRegions",
        "getRegionInvocationBounds"]>]> {
  let summary = "Run one of two regions on a rank-0 i1 predicate";
  let description = [{
    Runs `then_region` if `pred` is true, `else_region` otherwise; the
    other region does not run. Both regions receive `inputs` (not `pred`)
    as block arguments, of the same types, and end with `kiln.yield` of
    values of the result types, which become the results. The regions are
    isolated from above: every outer value they use is an input. Inputs and
    results may be tensors or stacks.

    For upstream analyses (RegionBranchOpInterface) the op branches to
    both regions, or only to the one a constant `pred` selects, and each
    region branches back to the results.

    ```mlir
    %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
    ^bb0(%a: tensor<4xf32>):
      kiln.yield %a : tensor<4xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      %n = kiln.neg %a : tensor<4xf32>
      kiln.yield %n : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_Predicate:$pred, Variadic<Kiln_Value>:$inputs);
  let results = (outs Variadic<Kiln_Value>:$results);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $pred `,` `(` $inputs `)` `:` type($pred) `,` functional-type($inputs, $results)
    $then_region `else` $else_region attr-dict
  }];
}

def Kiln_WhileOp : Kiln_Op<"while", [IsolatedFromAbove, RecursiveMemoryEffects,
    InferTypeOpAdaptor, Kiln_RegionSignatures,
    DeclareOpInterfaceMethods<RegionBranchOpInterface, [
        "getEntrySuccessorOperands"]>]> {
  let summary = "Loop with a data-dependent trip count";
  let description = [{
    The loop-carried values start as `inits` (at least one; tensors or
    stacks). The `cond` region receives the carried values and yields a
    rank-0 i1; while it is true the `body` region receives them and yields
    the next ones. The results are the carried values when `cond` yields
    false, so a loop whose `cond` is false at once returns `inits`. Both
    regions take block arguments of the init types and are isolated from
    above. The reference evaluator stops a loop that runs past its
    iteration limit with an error.

    ```mlir
    %r:2 = kiln.while (%x, %n) : (tensor<f32>, tensor<i64>) cond {
    ^bb0(%a: tensor<f32>, %i: tensor<i64>):
      %ten = kiln.constant dense<10> : tensor<i64>
      %p = kiln.compare lt, %i, %ten : tensor<i64>
      kiln.yield %p : tensor<i1>
    } do {
    ^bb0(%a: tensor<f32>, %i: tensor<i64>):
      %one = kiln.constant dense<1> : tensor<i64>
      %j = kiln.add %i, %one : tensor<i64>
      %b = kiln.mul %a, %a : tensor<f32>
      kiln.yield %b, %j : tensor<f32>, tensor<i64>
    }
    ```

    For upstream analyses (RegionBranchOpInterface): the `cond` region's
    `kiln.yield` carries only the predicate, and the carried values reach
    the body and the results unchanged from whatever entered `cond`. So the
    interface lists those edges directly: the op and the body each branch
    to `cond`, to the body and to the results (with `inits` or the body's
    yielded values), and `cond` itself branches nowhere. Every block
    argument and result receives exactly the values it receives at run
    time; only the path through `cond` is not spelled out.
  }];
  let arguments = (ins Variadic<Kiln_Value>:$inits);
  let results = (outs Variadic<Kiln_Value>:$results);
  let regions = (region SizedRegion<1>:$cond_region, SizedRegion<1>:$body_region);
  let assemblyFormat = [{
    `(` $inits `)` `:` `(` type($inits) `)` `cond` $cond_region `do` $body_region
    attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kiln_ForOp : Kiln_Op<"for", [IsolatedFromAbove, RecursiveMemoryEffects,
    InferTypeOpAdaptor, Kiln_RegionSignatures,
    DeclareOpInterfaceMethods<RegionBranchOpInterface, [
        "getEntrySuccessorOperands", "getRegionInvocationBounds"]>]> {
  let summary = "Loop with a static trip count";
  let description = [{
    The body runs `trip_count` (>= 0) times. Its first block argument is
    the iteration index as a rank-0 i64 tensor (0, 1, ...), the others are
    the loop-carried values (at least one tensor), which start as `inits`;
    the body yields the next carried values, and the results are the last
    ones (`inits` when `trip_count` is 0). The body is isolated from above.
    A static count lets reverse mode preallocate what the backward loop
    needs.

    ```mlir
    %r = kiln.for 4 iterations (%x) : (tensor<f32>) {
    ^bb0(%i: tensor<i64>, %a: tensor<f32>):
      %fi = kiln.cast %i : tensor<i64> to tensor<f32>
      %b = kiln.add %a, %fi : tensor<f32>
      kiln.yield %b : tensor<f32>
    }
    ```

    For upstream analyses (RegionBranchOpInterface) the op branches to the
    body, or to the results when `trip_count` is 0, with `inits`; the body
    branches to itself (when `trip_count` > 1) and to the results with its
    yielded values. The iteration index is fed by no edge: analyses see it
    as unknown.
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inits, I64Attr:$trip_count);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body_region);
  let assemblyFormat = [{
    $trip_count `iterations` `(` $inits `)` `:` `(` type($inits) `)` $body_region
    attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Stacks (what reverse mode stores across the iterations of a kiln.while)
//===----------------------------------------------------------------------===//

def Kiln_StackEmptyOp : Kiln_Op<"stack_empty", [Pure]> {
  let summary = "A stack with no rows";
  let description = [{
    A stack of capacity 0 (its leading dimension). `kiln.stack_reserve`
    grows the capacity at run time; `kiln.stack_push` writes rows below it.

    ```mlir
    %s = kiln.stack_empty : tensor<?x4xf32>
    ```
  }];
  let results = (outs Kiln_Stack:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Kiln_StackReserveOp : Kiln_Op<"stack_reserve", [Pure,
    AllTypesMatch<["stack", "result"]>]> {
  let summary = "Grow a stack's capacity, keeping its rows";
  let description = [{
    Returns `stack` with a capacity of max(`rows`, its capacity); the rows
    below the old capacity are kept, the new ones are undefined. Compiled
    code copies the rows into a new buffer, so callers grow geometrically
    (reverse mode doubles the capacity) to keep the total copying linear in
    the number of rows.

    ```mlir
    %t = kiln.stack_reserve %s, %n : tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Stack:$stack, Kiln_I64Scalar:$rows);
  let results = (outs Kiln_Stack:$result);
  let assemblyFormat = "$stack `,` $rows attr-dict `:` type($stack)";
}

def Kiln_StackPushOp : Kiln_Op<"stack_push", [Pure,
    AllTypesMatch<["stack", "result"]>]> {
  let summary = "Write one row of a stack";
  let description = [{
    Returns `stack` with row `index` set to `value`; `index` must be below
    the capacity (`kiln.stack_reserve`). Writing in place keeps a stack
    carried by a loop in one buffer.

    ```mlir
    %t = kiln.stack_push %s[%i], %v : tensor<?x4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Stack:$stack, Kiln_I64Scalar:$index,
                       Kiln_Tensor:$value);
  let results = (outs Kiln_Stack:$result);
  let assemblyFormat = [{
    $stack `[` $index `]` `,` $value attr-dict `:` type($stack) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Kiln_StackReadOp : Kiln_Op<"stack_read", [Pure]> {
  let summary = "Read one row of a stack";
  let description = [{
    Row `index` of `stack` (below its capacity), which a `kiln.stack_push`
    must have written.

    ```mlir
    %v = kiln.stack_read %s[%i] : tensor<?x4xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Stack:$stack, Kiln_I64Scalar:$index);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $stack `[` $index `]` attr-dict `:` type($stack) `->` type($result)
  }];
  let hasVerifier = 1;
}

include "kiln/IR/KilnCollectiveOps.td"
include "kiln/IR/KilnAttentionOps.td"

#endif // KILN_OPS_TD
