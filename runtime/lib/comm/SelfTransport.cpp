//===- SelfTransport.cpp - A run of one rank ------------------------------===//
//
// With one rank every replica group is {0}: each collective hands this
// rank's input back, and a permutation either pairs the rank with itself
// (a copy) or not at all (zeros). CollectiveCall has checked the groups,
// the root and the pairs against a size of 1 before start is called.
//
//===----------------------------------------------------------------------===//

#include "Transport.h"

#include "kiln/CollectiveAbi.h"

#include <cstring>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

class SelfTransport final : public Transport {
public:
  int64_t rank() const override { return 0; }
  int64_t size() const override { return 1; }

  bool minAll(int64_t *, int64_t, std::string &) override { return true; }

  bool gatherAll(const int64_t *values, int64_t count, int64_t *all,
                 std::string &) override {
    std::memcpy(all, values, size_t(count) * sizeof(int64_t));
    return true;
  }

  bool exchangeGroup(const std::vector<int64_t> &, const int64_t *values,
                     int64_t count, int64_t *all, int64_t,
                     std::string &) override {
    // The only group of one rank is this rank.
    std::memcpy(all, values, size_t(count) * sizeof(int64_t));
    return true;
  }

  bool start(const kiln_comm_plugin_collective_t &collective, int64_t &handle,
             std::string &) override {
    size_t bytes = size_t(collective.count) *
                   kiln_dtype_size(kiln_dtype_t(collective.dtype));
    bool received = collective.kind != KILN_COLLECTIVE_PERMUTE ||
                    collective.pair_count == 1;
    if (bytes == 0) {
      // Nothing to move; the buffers may be NULL.
    } else if (received) {
      std::memmove(collective.output, collective.input, bytes);
    } else {
      std::memset(collective.output, 0, bytes);
    }
    // Handles in flight must differ; the copy is done already.
    handle = nextHandle++;
    return true;
  }

  bool wait(int64_t, std::string &) override { return true; }

  std::mutex &callLock() override { return lock; }

private:
  std::mutex lock;
  int64_t nextHandle = 0;
};

} // namespace

std::unique_ptr<Transport> makeSelfTransport() {
  return std::make_unique<SelfTransport>();
}

} // namespace comm
} // namespace runtime
} // namespace kiln
