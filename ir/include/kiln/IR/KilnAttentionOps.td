//===- KilnAttentionOps.td - Scaled dot-product attention --*- tablegen -*-===//
//
// Attention as one op, so that a backend can compute it without the
// Nq x Nk score matrix (FlashAttention: key tiles with an online softmax)
// and differentiate it without saving that matrix (the backward recomputes
// the scores tile by tile from the saved log-sum-exp). Front ends emit it
// directly; kiln-fuse-attention recognizes the composition
// softmax(q k^T * scale + mask) v. Backends without a fused kernel lower
// both ops to that composition (kiln-decompose-attention).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ATTENTION_OPS_TD
#define KILN_ATTENTION_OPS_TD

include "kiln/IR/KilnDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kiln_AttentionOp : Kiln_Op<"attention", [Pure, InferTypeOpAdaptor]> {
  let summary = "Scaled dot-product attention with its row log-sum-exp";
  let description = [{
    `query` is [L..., Nq, D], `key` [L..., Nk, D] and `value` [L..., Nk,
    Dv]: the same leading dims L (batch, heads, ...; possibly none), one
    floating-point element type. With the scores

      S[l, i, j] = scale * sum over d of query[l, i, d] * key[l, j, d]
                   + mask[l, i, j]

    (`mask`, optional, of rank rank(query) with each dim equal to the
    scores' [L..., Nq, Nk] or 1, broadcast; -inf masks a key out), and with
    `causal` every key j > i masked out for query row i (top-left aligned,
    also where Nq != Nk):

      result[l, i, :] = sum over j of softmax(S[l, i, :])[j] * value[l, j, :]
      lse[l, i]      = log(sum over j of exp(S[l, i, j]))

    A row whose scores are all -inf (or Nk = 0) gives NaN, as softmax's
    0 / 0. `result` is [L..., Nq, Dv] in the operands' element type; `lse`
    [L..., Nq] is f32 for f16, bf16 and f32 operands, f64 for f64 (half
    precision is computed in f32 and rounded once; CUDA's tensor-core
    kernel, as FlashAttention and cuDNN, also rounds the softmax weights to
    the operands' type before their product with `value`, which moves a
    result by up to one rounding of the largest |value|). The value of `lse` is
    what the backward pass needs; front ends use `result`.

    ```mlir
    %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64}
        : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>
    %o2, %lse2 = kiln.attention %q, %k, %v mask %m {scale = 0.125 : f64}
        : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>,
          tensor<2x8x128x64xf32>, tensor<2x1x1x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                   Kiln_FloatTensor:$value, Optional<Kiln_FloatTensor>:$mask,
                   F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Kiln_FloatTensor:$result, Kiln_FloatTensor:$lse);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:` type($query)
    `,` type($key) `,` type($value) (`,` type($mask)^)?
  }];
}

def Kiln_AttentionGradOp : Kiln_Op<"attention_grad",
    [Pure, InferTypeOpAdaptor,
     TypesMatchWith<"result_grad has the type of result", "result",
                    "result_grad", "$_self">]> {
  let summary = "The gradients of kiln.attention's result";
  let description = [{
    Given the operands and attributes of a `kiln.attention`, its `result`
    and `lse`, and the cotangent `result_grad` of its result, the
    cotangents of query, key and value:

      P  = exp(S - lse)              (the softmax, from the saved lse)
      dV = P^T result_grad
      dP = result_grad value^T
      dS = P * (dP - rowsum(result_grad * result))
      dQ = scale * dS key,   dK = scale * dS^T query

    for each leading index. The mask gets no cotangent (a mask that needs
    one is left to the composition). Results have the types of query, key
    and value.

    ```mlir
    %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do
        {causal, scale = 0.125 : f64} : tensor<8x128x64xf32>,
        tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32>,
        tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                   Kiln_FloatTensor:$value, Kiln_FloatTensor:$result,
                   Kiln_FloatTensor:$lse, Kiln_FloatTensor:$result_grad,
                   Optional<Kiln_FloatTensor>:$mask,
                   F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Kiln_FloatTensor:$query_grad,
                 Kiln_FloatTensor:$key_grad, Kiln_FloatTensor:$value_grad);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $result `,` $lse `,` $result_grad
    (`mask` $mask^)? attr-dict `:` type($query) `,` type($key) `,`
    type($value) `,` type($result) `,` type($lse) (`,` type($mask)^)?
  }];
}

#endif // KILN_ATTENTION_OPS_TD
