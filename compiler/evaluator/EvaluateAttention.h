//===- EvaluateAttention.h - The evaluator's attention ----------*- C++ -*-===//
//
// kiln.attention and kiln.attention_grad in the reference evaluator.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EVALUATOR_EVALUATEATTENTION_H
#define KILN_COMPILER_EVALUATOR_EVALUATEATTENTION_H

#include "kiln/Compiler/HostTensor.h"
#include "kiln/IR/KilnOps.h"

#include <vector>

namespace kiln {
namespace evaluator {

/// result and lse of `op`; `mask` is null when the op has none.
std::vector<HostTensor> evaluateAttention(mlir::kiln::AttentionOp op,
                                          const HostTensor &query,
                                          const HostTensor &key,
                                          const HostTensor &value,
                                          const HostTensor *mask);

/// query_grad, key_grad and value_grad of `op`.
std::vector<HostTensor>
evaluateAttentionGrad(mlir::kiln::AttentionGradOp op, const HostTensor &query,
                      const HostTensor &key, const HostTensor &value,
                      const HostTensor &result, const HostTensor &lse,
                      const HostTensor &resultGrad, const HostTensor *mask);

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_EVALUATOR_EVALUATEATTENTION_H
