//===- E2ETest.cpp - CPU code against the reference evaluator -------------===//
//
// Every test/e2e/*.mlir program compiled for the host CPU, checked by the
// shared harness (test/support/E2EHarness.h). One test per file, so a
// failure names the program.
//
//===----------------------------------------------------------------------===//

#include "E2EHarness.h"
#include "E2EInputs.h"

#include <gtest/gtest.h>

namespace {

class EndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(EndToEnd, NativeMatchesReferenceEvaluator) {
  kiln::test::checkE2EProgram(GetParam(), kiln::test::E2ETarget::Cpu);
}

INSTANTIATE_TEST_SUITE_P(
    Programs, EndToEnd,
    ::testing::ValuesIn(kiln::test::e2eProgramFiles(KILN_E2E_DIR)),
    kiln::test::e2eTestName);

} // namespace
