//===- ConcurrentCalls.h - one call site on two threads at once -*- C++ -*-===//
//
// For the tests of the support library's cached call sites: a site called
// from two threads at once runs its cached primitive concurrently.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_BACKENDS_CONCURRENTCALLS_H
#define KILN_TEST_UNIT_BACKENDS_CONCURRENTCALLS_H

#include <atomic>
#include <thread>

/// Makes `call` once on this thread (the site's first call, which creates
/// it), then `times` times on each of two threads at once; `call` returns
/// whether its result was right. Returns how many concurrent calls were
/// wrong.
template <typename Call> int wrongConcurrentCalls(Call call, int times = 40) {
  call();
  std::atomic<int> wrong{0};
  auto calls = [&] {
    for (int i = 0; i < times; ++i)
      if (!call())
        ++wrong;
  };
  std::thread a(calls), b(calls);
  a.join();
  b.join();
  return wrong.load();
}

#endif // KILN_TEST_UNIT_BACKENDS_CONCURRENTCALLS_H
