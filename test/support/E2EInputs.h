//===- E2EInputs.h - Tests: the end-to-end programs and their inputs -*- C++ -*-===//
//
// The end-to-end harness (E2EHarness.h) runs the same programs on the same
// random inputs on every target, so that a program failing on one target
// and not on the other points at the target.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_SUPPORT_E2EINPUTS_H
#define KILN_TEST_SUPPORT_E2EINPUTS_H

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"

#include <random>
#include <string>
#include <vector>

namespace kiln::test {

/// The `*.mlir` files of `directory`, sorted.
std::vector<std::string> e2eProgramFiles(const std::string &directory);

/// Random values of the tensor's dtype: floats in [-2, 2] (rounded to the
/// type), integers in [-8, 8] wrapped to the type (so unsigned ones are 0
/// ... 8 or among their eight largest values), booleans fair.
HostTensor randomE2EInput(mlir::RankedTensorType type, std::mt19937 &rng);

/// One randomE2EInput per input of `type`, all drawn from one generator
/// seeded by `seed`: the inputs of a function for one seed of a test.
std::vector<HostTensor> randomE2EInputs(mlir::FunctionType type,
                                        unsigned seed);

} // namespace kiln::test

#endif // KILN_TEST_SUPPORT_E2EINPUTS_H
