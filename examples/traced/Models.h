//===- Models.h - Example models traced from C++ ----------------*- C++ -*-===//
//
// Three small models written against kiln's C++ tracing API:
//   mlp              a two-layer perceptron with softmax (straight-line code)
//   rnn              an Elman RNN over a sequence, a static-count fori_loop
//   power_iteration  the dominant eigenvalue of M M^T by power iteration, a
//                    while_loop that stops when the vector stops moving
// Weights are deterministic pseudo-random constants of the graph.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_EXAMPLES_TRACED_MODELS_H
#define KILN_EXAMPLES_TRACED_MODELS_H

#include "kiln/kiln.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::examples {

struct ExampleModel {
  std::string name;
  std::vector<TensorSpec> inputs;
  /// The model as a C++ function of symbolic tensors.
  std::function<Tensors(const Tensors &)> body;

  TracedFunction trace() const { return kiln::trace(name, inputs, body); }
};

/// The three example models, in a fixed order.
const std::vector<ExampleModel> &exampleModels();

/// Deterministic f32 values for input `index` of a model, the same in every
/// program that uses them (sin of a scaled position, in [-1, 1]).
std::vector<float> exampleInput(const TensorSpec &spec, unsigned index);

} // namespace kiln::examples

#endif // KILN_EXAMPLES_TRACED_MODELS_H
