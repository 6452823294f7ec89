//===- KeyValueStore.cpp - Redis and directory stores ---------------------===//

#include "KeyValueStore.h"

#include <hiredis/hiredis.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {
namespace comm_gloo {
namespace {

/// Redis through hiredis: every operation is one command, atomic on the
/// server.
class RedisKeyValueStore final : public KeyValueStore {
public:
  RedisKeyValueStore(redisContext *context, std::string where)
      : context(context), where(std::move(where)) {}
  ~RedisKeyValueStore() override { redisFree(context); }

  bool add(const std::string &key, int64_t delta, int64_t &result,
           std::string &error) override {
    Reply reply = command(error, "INCRBY %b %lld", key.data(), key.size(),
                          static_cast<long long>(delta));
    if (!reply || !expect(reply.get(), REDIS_REPLY_INTEGER, "INCRBY", error))
      return false;
    result = reply->integer;
    return true;
  }

  bool set(const std::string &key, const std::string &value,
           std::string &error) override {
    Reply reply = command(error, "SET %b %b", key.data(), key.size(),
                          value.data(), value.size());
    return reply && expect(reply.get(), REDIS_REPLY_STATUS, "SET", error);
  }

  bool setIfAbsent(const std::string &key, const std::string &value,
                   bool &written, std::string &error) override {
    Reply reply = command(error, "SET %b %b NX", key.data(), key.size(),
                          value.data(), value.size());
    if (!reply)
      return false;
    written = reply->type != REDIS_REPLY_NIL;
    return !written || expect(reply.get(), REDIS_REPLY_STATUS, "SET NX", error);
  }

  bool get(const std::string &key, std::optional<std::string> &value,
           std::string &error) override {
    Reply reply = command(error, "GET %b", key.data(), key.size());
    if (!reply)
      return false;
    if (reply->type == REDIS_REPLY_NIL) {
      value.reset();
      return true;
    }
    if (!expect(reply.get(), REDIS_REPLY_STRING, "GET", error))
      return false;
    value = std::string(reply->str, reply->len);
    return true;
  }

private:
  struct ReplyDeleter {
    void operator()(redisReply *reply) const { freeReplyObject(reply); }
  };
  using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

  template <typename... Args>
  Reply command(std::string &error, const char *format, Args... args) {
    if (broken) {
      error = "the store " + where + " went away earlier";
      return nullptr;
    }
    auto *reply =
        static_cast<redisReply *>(redisCommand(context, format, args...));
    if (!reply) {
      // hiredis cannot use the connection again after an I/O error.
      broken = true;
      error = "the store " + where + " does not answer: " +
              (context->errstr[0] ? context->errstr : "connection lost");
    }
    return Reply(reply);
  }

  bool expect(const redisReply *reply, int type, const char *what,
              std::string &error) {
    if (reply->type == type)
      return true;
    error = std::string("the store ") + where + " refused " + what;
    if (reply->type == REDIS_REPLY_ERROR)
      error += ": " + std::string(reply->str, reply->len);
    return false;
  }

  redisContext *context;
  std::string where;
  bool broken = false;
};

/// A directory shared by every client: one file per key (its name the key
/// with every byte other than letters, digits, '-' and '.' escaped), written
/// to a temporary file and renamed into place so that readers see whole
/// values; counters are read and written under flock(2) on a lock file.
class DirectoryKeyValueStore final : public KeyValueStore {
public:
  explicit DirectoryKeyValueStore(std::string directory)
      : directory(std::move(directory)) {}

  bool add(const std::string &key, int64_t delta, int64_t &result,
           std::string &error) override {
    std::string lockPath = path(key) + ".lock";
    int lock = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0)
      return fail("cannot open", lockPath, error);
    bool ok = false;
    if (::flock(lock, LOCK_EX) == 0) {
      std::optional<std::string> value;
      if (get(key, value, error)) {
        int64_t current = value ? std::strtoll(value->c_str(), nullptr, 10)
                                : 0;
        result = current + delta;
        ok = set(key, std::to_string(result), error);
      }
      ::flock(lock, LOCK_UN);
    } else {
      fail("cannot lock", lockPath, error);
    }
    ::close(lock);
    return ok;
  }

  bool set(const std::string &key, const std::string &value,
           std::string &error) override {
    std::string temporary;
    if (!writeTemporary(key, value, temporary, error))
      return false;
    std::string target = path(key);
    if (::rename(temporary.c_str(), target.c_str()) != 0)
      return fail("cannot rename into", target, error);
    return true;
  }

  bool setIfAbsent(const std::string &key, const std::string &value,
                   bool &written, std::string &error) override {
    std::string temporary;
    if (!writeTemporary(key, value, temporary, error))
      return false;
    std::string target = path(key);
    // link(2) fails when the target exists: the first writer wins.
    int result = ::link(temporary.c_str(), target.c_str());
    int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    if (result != 0 && errno != EEXIST)
      return fail("cannot link into", target, error);
    written = result == 0;
    return true;
  }

  /// \p value in a new file beside \p key's, named in \p temporary.
  bool writeTemporary(const std::string &key, const std::string &value,
                      std::string &temporary, std::string &error) {
    std::string target = path(key);
    temporary = target + ".tmp" + std::to_string(::getpid()) + "." +
                std::to_string(serial++);
    int file = ::open(temporary.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0)
      return fail("cannot create", temporary, error);
    size_t written = 0;
    while (written < value.size()) {
      ssize_t n = ::write(file, value.data() + written, value.size() - written);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        int saved = errno;
        ::close(file);
        ::unlink(temporary.c_str());
        errno = saved;
        return fail("cannot write", temporary, error);
      }
      written += size_t(n);
    }
    ::close(file);
    return true;
  }

  bool get(const std::string &key, std::optional<std::string> &value,
           std::string &error) override {
    std::string source = path(key);
    int file = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (file < 0) {
      if (errno == ENOENT) {
        value.reset();
        return true;
      }
      return fail("cannot open", source, error);
    }
    std::string text;
    char buffer[4096];
    for (;;) {
      ssize_t n = ::read(file, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        int saved = errno;
        ::close(file);
        errno = saved;
        return fail("cannot read", source, error);
      }
      if (n == 0)
        break;
      text.append(buffer, size_t(n));
    }
    ::close(file);
    value = std::move(text);
    return true;
  }

private:
  std::string path(const std::string &key) const {
    static const char *hex = "0123456789abcdef";
    std::string name = directory + "/kv.";
    for (unsigned char c : key) {
      if (std::isalnum(c) || c == '-' || c == '.') {
        name += char(c);
      } else {
        name += '_';
        name += hex[c >> 4];
        name += hex[c & 15];
      }
    }
    return name;
  }

  static bool fail(const char *what, const std::string &file,
                   std::string &error) {
    error = std::string("the store ") + what + " '" + file +
            "': " + std::strerror(errno);
    return false;
  }

  std::string directory;
  /// Tells apart this process's temporary files.
  uint64_t serial = 0;
};

} // namespace

bool StoreAddress::parse(const std::string &spec, StoreAddress &out,
                         std::string &error) {
  if (spec.rfind("file:", 0) == 0) {
    out = StoreAddress();
    out.kind = Directory;
    out.directory = spec.substr(5);
    if (out.directory.empty()) {
      error = "KILN_STORE is 'file:' without a directory";
      return false;
    }
    return true;
  }
  if (spec.rfind("redis://", 0) == 0) {
    out = StoreAddress();
    out.kind = Redis;
    std::string address = spec.substr(8);
    out.host = address;
    if (size_t colon = address.rfind(':'); colon != std::string::npos) {
      out.host = address.substr(0, colon);
      char *end = nullptr;
      long parsed = std::strtol(address.c_str() + colon + 1, &end, 10);
      if (end == address.c_str() + colon + 1 || *end != '\0' || parsed < 1 ||
          parsed > 65535) {
        error = "KILN_STORE is '" + spec +
                "': the port is not a number from 1 to 65535";
        return false;
      }
      out.port = int(parsed);
    }
    if (out.host.empty()) {
      error = "KILN_STORE is '" + spec + "' without a host";
      return false;
    }
    return true;
  }
  error = "KILN_STORE is '" + spec +
          "'; expected file:DIRECTORY (shared by the ranks) or "
          "redis://HOST[:PORT]";
  return false;
}

bool StoreAddress::prepare(std::string &error) const {
  if (kind == Redis || ::mkdir(directory.c_str(), 0700) == 0 ||
      errno == EEXIST)
    return true;
  error = "cannot create the store directory '" + directory +
          "': " + std::strerror(errno);
  return false;
}

std::unique_ptr<KeyValueStore> KeyValueStore::open(const StoreAddress &address,
                                                   double connectSeconds,
                                                   std::string &error) {
  if (!address.prepare(error))
    return nullptr;
  if (address.kind == StoreAddress::Directory)
    return std::make_unique<DirectoryKeyValueStore>(address.directory);
  std::string where =
      "redis://" + address.host + ":" + std::to_string(address.port);
  timeval limit;
  limit.tv_sec = time_t(connectSeconds);
  limit.tv_usec = suseconds_t((connectSeconds - double(limit.tv_sec)) * 1e6);
  redisContext *context =
      redisConnectWithTimeout(address.host.c_str(), address.port, limit);
  if (!context || context->err) {
    error = "cannot reach the store " + where + ": " +
            (context ? context->errstr : "out of memory") +
            " (is redis-server running there?)";
    if (context)
      redisFree(context);
    return nullptr;
  }
  // A server that stops answering fails the operation instead of hanging it.
  redisSetTimeout(context, limit);
  return std::make_unique<RedisKeyValueStore>(context, where);
}

} // namespace comm_gloo
} // namespace kiln
