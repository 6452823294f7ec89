//===- KeyValueStore.h - The store an elastic run agrees through -*- C++ -*-===//
//
// The few operations an elastic run's rendezvous needs from its store, with
// the atomicity it needs: an atomic counter (who arrived in which order),
// plain writes and reads. Gloo's own Store has no atomic counter (its
// RedisStore writes with SETNX and throws when a key exists), so the
// rendezvous speaks to the same servers itself: Redis through hiredis
// (INCRBY, SET [NX], GET), and a shared directory with one file per key,
// flock(2) around the counters and link(2) for a first writer.
//
// Every operation reports a store that cannot be reached in its error
// rather than throwing, so that a store going away ends a run with a
// message.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_GLOO_KEYVALUESTORE_H
#define KILN_RUNTIME_LIB_COMM_GLOO_KEYVALUESTORE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kiln {
namespace comm_gloo {

/// Where a store is: KILN_STORE's file:DIRECTORY or redis://HOST[:PORT].
struct StoreAddress {
  enum Kind { Directory, Redis } kind = Directory;
  std::string directory;
  std::string host;
  int port = 6379;

  /// False, with what is wrong with \p spec in \p error.
  static bool parse(const std::string &spec, StoreAddress &out,
                    std::string &error);
  /// A directory store's directory, made when missing (its parent must
  /// exist); false with the reason in \p error. True for Redis.
  bool prepare(std::string &error) const;
};

class KeyValueStore {
public:
  virtual ~KeyValueStore() = default;

  /// Opens the store at \p address; null with \p error set when it cannot
  /// be reached (a Redis server not answering within \p connectSeconds).
  static std::unique_ptr<KeyValueStore> open(const StoreAddress &address,
                                             double connectSeconds,
                                             std::string &error);

  /// Adds \p delta to the integer at \p key (0 when absent) and returns the
  /// sum in \p result, atomically among all clients of the store.
  virtual bool add(const std::string &key, int64_t delta, int64_t &result,
                   std::string &error) = 0;
  /// Writes \p value at \p key, replacing what was there.
  virtual bool set(const std::string &key, const std::string &value,
                   std::string &error) = 0;
  /// Writes \p value at \p key unless the key exists; \p written says
  /// which, atomically among all clients (the first writer wins).
  virtual bool setIfAbsent(const std::string &key, const std::string &value,
                           bool &written, std::string &error) = 0;
  /// The value at \p key; nullopt when the key is absent.
  virtual bool get(const std::string &key, std::optional<std::string> &value,
                   std::string &error) = 0;
};

} // namespace comm_gloo
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_GLOO_KEYVALUESTORE_H
