//===- Prefetcher.h - Batches prepared ahead on a thread --------*- C++ -*-===//
//
// What the pipelines' prefetching shares (Dataset.cpp, Criteo.cpp): a
// producer thread calls `make` into a bounded queue of `depth` batches;
// next() takes them in order. A failure (make returning false with an
// error) or the end (false, no error) reaches next() after the batches
// made before it. The destructor stops the producer and joins it, so the
// state `make` reads must outlive the Prefetcher. At depth 0 there is no
// thread: next() calls `make` itself.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_DATA_PREFETCHER_H
#define KILN_RUNTIME_LIB_DATA_PREFETCHER_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace kiln {
namespace data {

template <typename Batch> class Prefetcher {
public:
  /// Fills a batch; false at the end (error empty) or on a failure.
  using Make = std::function<bool(Batch &, std::string &)>;

  Prefetcher(int64_t depth, Make make) : depth(depth), make(std::move(make)) {
    if (depth > 0)
      producer = std::thread([this] { produce(); });
  }

  ~Prefetcher() {
    if (!producer.joinable())
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    producer.join();
  }

  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  /// The next batch, waiting for it; false at the end or with the
  /// producer's failure (every later call gives the same).
  bool next(Batch &batch, std::string &error) {
    if (depth <= 0)
      return make(batch, error);
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return !queue.empty() || finished; });
    if (queue.empty()) {
      error = failure;
      return false;
    }
    batch = std::move(queue.front());
    queue.pop_front();
    changed.notify_all();
    return true;
  }

private:
  void produce() {
    for (;;) {
      Batch batch;
      std::string error;
      bool more = make(batch, error);
      std::unique_lock<std::mutex> lock(mutex);
      if (!more) {
        failure = std::move(error);
        finished = true;
        changed.notify_all();
        return;
      }
      changed.wait(lock, [&] {
        return stopping || static_cast<int64_t>(queue.size()) < depth;
      });
      if (stopping)
        return;
      queue.push_back(std::move(batch));
      changed.notify_all();
    }
  }

  int64_t depth;
  Make make;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Batch> queue;
  std::string failure;
  bool finished = false, stopping = false;
  // Last: started once everything it reads is constructed.
  std::thread producer;
};

} // namespace data
} // namespace kiln

#endif // KILN_RUNTIME_LIB_DATA_PREFETCHER_H
