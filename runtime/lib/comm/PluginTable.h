//===- PluginTable.h - A plug-in's table over a communicator class -*- C++
//-*-===//
//
// The C functions of a communicator plug-in's table (CommPlugin.h) that
// only forward to its communicator class and turn a false return with a
// message into the table's error convention. Each plug-in writes create and
// destroy itself (what its engine needs around them) and takes the rest
// from here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_PLUGINTABLE_H
#define KILN_RUNTIME_LIB_COMM_PLUGINTABLE_H

#include "comm/CommPlugin.h"

#include <cstdio>
#include <string>

namespace kiln {
namespace comm_plugin {

/// Writes \p message into the caller's buffer and returns the failure code.
inline int report(const std::string &message, char *error, size_t errorSize) {
  if (errorSize > 0)
    std::snprintf(error, errorSize, "%s", message.c_str());
  return 1;
}

/// The forwarding functions for communicators of class Comm, which has
/// rank(), size(), minAll, gatherAll, exchangeGroup, start and wait with the
/// plug-in's arguments and a trailing std::string &error.
template <typename Comm> struct Forward {
  static Comm &self(void *comm) { return *static_cast<Comm *>(comm); }

  static int64_t rank(void *comm) { return self(comm).rank(); }
  static int64_t size(void *comm) { return self(comm).size(); }

  static int minAll(void *comm, int64_t *values, int64_t count, char *error,
                    size_t errorSize) {
    std::string message;
    return self(comm).minAll(values, count, message)
               ? 0
               : report(message, error, errorSize);
  }
  static int gatherAll(void *comm, const int64_t *values, int64_t count,
                       int64_t *all, char *error, size_t errorSize) {
    std::string message;
    return self(comm).gatherAll(values, count, all, message)
               ? 0
               : report(message, error, errorSize);
  }
  static int start(void *comm, const kiln_comm_plugin_collective_t *collective,
                   int64_t *handle, char *error, size_t errorSize) {
    std::string message;
    return self(comm).start(*collective, *handle, message)
               ? 0
               : report(message, error, errorSize);
  }
  static int wait(void *comm, int64_t handle, char *error, size_t errorSize) {
    std::string message;
    return self(comm).wait(handle, message) ? 0
                                            : report(message, error, errorSize);
  }
  static int exchangeGroup(void *comm, const int64_t *members,
                           int64_t memberCount, const int64_t *values,
                           int64_t count, int64_t *all, int64_t timeoutMs,
                           char *error, size_t errorSize) {
    std::string message;
    return self(comm).exchangeGroup(members, memberCount, values, count, all,
                                    timeoutMs, message)
               ? 0
               : report(message, error, errorSize);
  }

  /// The table, with the plug-in's own name, create and destroy.
  static constexpr kiln_comm_plugin_t
  table(const char *name, int (*create)(void **, char *, size_t),
        void (*destroy)(void *)) {
    return {KILN_COMM_PLUGIN_VERSION,
            name,
            create,
            destroy,
            rank,
            size,
            minAll,
            gatherAll,
            start,
            wait,
            exchangeGroup};
  }
};

} // namespace comm_plugin
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_PLUGINTABLE_H
