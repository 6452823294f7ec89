//===- RandomDraws.h - The draws shared by kiln::random's files -*- C++ -*-===//
//
// Private to the tracer: the pieces of Random.cpp that the distributions
// built from several draws per element (RandomGamma.cpp) use as well.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_RANDOMDRAWS_H
#define KILN_TRACER_RANDOMDRAWS_H

#include "kiln/IR/KilnOps.h"
#include "kiln/Tracer/Tensor.h"

#include <functional>
#include <utility>

namespace kiln {
namespace random {
namespace draws {

/// Fails at `loc` unless `key` is a ui32[2] key.
void checkKey(const Tensor &key, const char *what, SourceLoc loc);
/// Fails at `loc` unless `dtype` is a float dtype.
void checkFloat(DType dtype, const char *what, SourceLoc loc);

/// One word of Threefry-2x32 at each element: the key's words `k0`, `k1`
/// and the counter's (high, low), all ui32 tensors of one shape.
Tensor threefryWords(const Tensor &k0, const Tensor &k1,
                     const std::pair<Tensor, Tensor> &counter,
                     mlir::kiln::RngWord word, SourceLoc loc);

/// Row `i` of keys from split: a ui32[2] key.
Tensor keyRow(const Tensor &keys, int64_t i, SourceLoc loc);

/// A distribution's parameter or bound converted to `dtype`, as JAX
/// converts them before computing with them.
Tensor bound(const Operand &value, DType dtype, SourceLoc loc);

/// Floats in [0, 1) moved to [low, high) as JAX's uniform moves them:
/// floats (high - low) + low, kept at least low.
Tensor scaleUnit(const Tensor &floats, const Tensor &low, const Tensor &high,
                 SourceLoc loc);

/// Floats in [0, 1) of `dtype` as JAX's uniform makes them, from `draw`,
/// which gives a Threefry word at every element.
Tensor unitFloats(const std::function<Tensor(mlir::kiln::RngWord)> &draw,
                  DType dtype, SourceLoc loc);

/// JAX's standard normal from floats in [0, 1) (unitFloats' result).
Tensor normalFromUnit(const Tensor &floats, SourceLoc loc);

} // namespace draws
} // namespace random
} // namespace kiln

#endif // KILN_TRACER_RANDOMDRAWS_H
