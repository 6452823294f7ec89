//===- E2EHarness.h - Tests: e2e programs against the evaluator -*- C++ -*-===//
//
// The end-to-end check of one program, shared by the CPU and CUDA test
// binaries, which only instantiate it for their target: for every public
// function and several seeds, random inputs, the reference evaluator on the
// program and on its kiln-fuse result (which must agree exactly), and the
// program compiled for the target, loaded by the runtime and called, every
// output element compared with the evaluator's. test/e2e/README.md
// describes the rules the programs follow.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_SUPPORT_E2EHARNESS_H
#define KILN_TEST_SUPPORT_E2EHARNESS_H

#include <gtest/gtest.h>

#include <string>

namespace kiln::test {

/// Where the compiled programs run: the CPU, a CUDA device, or the CUDA
/// target's program with its kernels run on the host (--target=cuda-on-cpu).
enum class E2ETarget { Cpu, Cuda, CudaOnCpu };

/// A test body: checks the program in file `path` on `target`. For CUDA it
/// first checks the device (CudaAvailability.h) and skips or fails the test
/// without one.
void checkE2EProgram(const std::string &path, E2ETarget target);

/// The test name of a program: its file stem, with every character other
/// than a letter or digit replaced by '_'.
std::string e2eTestName(const ::testing::TestParamInfo<std::string> &info);

} // namespace kiln::test

#endif // KILN_TEST_SUPPORT_E2EHARNESS_H
