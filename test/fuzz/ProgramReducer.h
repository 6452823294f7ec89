//===- ProgramReducer.h - Delta debugging of kiln programs -------*- C++ -*-===//
//
// Shrinks a program that fails a check to a small one that fails it the
// same way: the reducer proposes one simplification of @main at a time,
// keeps it if the result still verifies and `stillFails` says the failure
// is still there, and stops when no simplification is kept.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_FUZZ_PROGRAMREDUCER_H
#define KILN_TEST_FUZZ_PROGRAMREDUCER_H

#include <functional>
#include <string>

namespace kiln::test {

struct ReduceStats {
  unsigned tries = 0, kept = 0;
  unsigned opsBefore = 0, opsAfter = 0;
};

/// Reduces the module `text` (with a public @main) as long as
/// `stillFails(candidate)` holds, trying at most `maxTries` candidates;
/// returns the smallest failing module found (`text` itself if none).
std::string reduceProgram(
    const std::string &text,
    const std::function<bool(const std::string &)> &stillFails,
    unsigned maxTries, ReduceStats &stats);

} // namespace kiln::test

#endif // KILN_TEST_FUZZ_PROGRAMREDUCER_H
