//===- KeyValueStoreTest.cpp - The elastic rendezvous's store ------------===//
//
// What the rendezvous relies on (lib/comm/gloo/KeyValueStore.h), on a
// shared directory and on a redis-server started here: values read back as
// written, a counter that loses no increment when processes add at once,
// and exactly one first writer. Without redis-server the Redis cases skip.
//
//===----------------------------------------------------------------------===//

#include "comm/gloo/KeyValueStore.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kiln::comm_gloo;

namespace {

/// A fresh directory store, removed with this object.
class DirectoryStore {
public:
  DirectoryStore() {
    char pattern[] = "/tmp/kiln-kv-XXXXXX";
    EXPECT_NE(::mkdtemp(pattern), nullptr);
    root = pattern;
  }
  ~DirectoryStore() {
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
  }
  std::string spec() const { return "file:" + root + "/store"; }

private:
  std::string root;
};

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

/// A redis-server of the test's own, stopped at the end.
class RedisServer {
public:
  RedisServer() {
    if (std::system("command -v redis-server >/dev/null 2>&1") != 0)
      return;
    port = freePort();
    pid = ::fork();
    if (pid == 0) {
      std::string portText = std::to_string(port);
      ::execlp("redis-server", "redis-server", "--port", portText.c_str(),
               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", "/tmp", static_cast<char *>(nullptr));
      ::_exit(127);
    }
    // Until it answers.
    for (int tries = 0; tries < 100; ++tries) {
      std::string error;
      StoreAddress address;
      StoreAddress::parse(spec(), address, error);
      if (KeyValueStore::open(address, 1.0, error))
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~RedisServer() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  bool running() const { return pid > 0; }
  std::string spec() const {
    return "redis://127.0.0.1:" + std::to_string(port);
  }
  void stop() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }

private:
  pid_t pid = -1;
  int port = 0;
};

std::unique_ptr<KeyValueStore> open(const std::string &spec) {
  StoreAddress address;
  std::string error;
  EXPECT_TRUE(StoreAddress::parse(spec, address, error)) << error;
  std::unique_ptr<KeyValueStore> store =
      KeyValueStore::open(address, 2.0, error);
  EXPECT_TRUE(store) << error;
  return store;
}

/// The semantics every store must have.
void checkSemantics(const std::string &spec) {
  std::unique_ptr<KeyValueStore> store = open(spec);
  ASSERT_TRUE(store);
  std::string error;
  std::optional<std::string> value = "stale";
  ASSERT_TRUE(store->get("run/absent", value, error)) << error;
  EXPECT_FALSE(value);
  // Keys with separators and bytes a file name cannot hold.
  std::string key = "run/elastic/g1/arrival/2 x\x01";
  ASSERT_TRUE(store->set(key, std::string("7 host:12\0z", 11), error));
  ASSERT_TRUE(store->get(key, value, error));
  EXPECT_EQ(value, std::string("7 host:12\0z", 11));
  ASSERT_TRUE(store->set(key, "8", error));
  ASSERT_TRUE(store->get(key, value, error));
  EXPECT_EQ(value, "8");
  int64_t sum = 0;
  ASSERT_TRUE(store->add("run/counter", 0, sum, error));
  EXPECT_EQ(sum, 0);
  ASSERT_TRUE(store->add("run/counter", 5, sum, error));
  ASSERT_TRUE(store->add("run/counter", -2, sum, error));
  EXPECT_EQ(sum, 3);
  bool written = false;
  ASSERT_TRUE(store->setIfAbsent("run/size", "3", written, error));
  EXPECT_TRUE(written);
  ASSERT_TRUE(store->setIfAbsent("run/size", "2", written, error));
  EXPECT_FALSE(written);
  ASSERT_TRUE(store->get("run/size", value, error));
  EXPECT_EQ(value, "3");
}

/// Processes adding at once lose no increment, and of processes writing
/// one key first exactly one wins.
void checkAtomicity(const std::string &spec) {
  constexpr int kProcesses = 4, kAdds = 100;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string error;
      StoreAddress address;
      StoreAddress::parse(spec, address, error);
      std::unique_ptr<KeyValueStore> store =
          KeyValueStore::open(address, 2.0, error);
      int64_t sum = 0;
      bool written = false;
      bool ok = store != nullptr;
      for (int i = 0; ok && i < kAdds; ++i)
        ok = store->add("race/counter", 1, sum, error);
      ok = ok && store->setIfAbsent("race/first", std::to_string(p), written,
                                    error);
      int64_t winners = 0;
      ok = ok && store->add("race/winners", written ? 1 : 0, winners, error);
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::unique_ptr<KeyValueStore> store = open(spec);
  ASSERT_TRUE(store);
  std::string error;
  int64_t sum = 0, winners = 0;
  ASSERT_TRUE(store->add("race/counter", 0, sum, error));
  EXPECT_EQ(sum, kProcesses * kAdds);
  ASSERT_TRUE(store->add("race/winners", 0, winners, error));
  EXPECT_EQ(winners, 1);
}

TEST(KeyValueStore, DirectoryReadsBackWhatWasWritten) {
  DirectoryStore store;
  checkSemantics(store.spec());
}

TEST(KeyValueStore, DirectoryCounterAndFirstWriterAreAtomic) {
  DirectoryStore store;
  checkAtomicity(store.spec());
}

TEST(KeyValueStore, RedisReadsBackWhatWasWritten) {
  RedisServer server;
  if (!server.running())
    GTEST_SKIP() << "redis-server not found (apt-get install redis-server)";
  checkSemantics(server.spec());
}

TEST(KeyValueStore, RedisCounterAndFirstWriterAreAtomic) {
  RedisServer server;
  if (!server.running())
    GTEST_SKIP() << "redis-server not found (apt-get install redis-server)";
  checkAtomicity(server.spec());
}

TEST(KeyValueStore, ARedisServerGoingAwayIsAnError) {
  RedisServer server;
  if (!server.running())
    GTEST_SKIP() << "redis-server not found (apt-get install redis-server)";
  std::unique_ptr<KeyValueStore> store = open(server.spec());
  ASSERT_TRUE(store);
  server.stop();
  std::string error;
  std::optional<std::string> value;
  EXPECT_FALSE(store->get("key", value, error));
  EXPECT_NE(error.find("does not answer"), std::string::npos) << error;
  error.clear();
  int64_t sum = 0;
  EXPECT_FALSE(store->add("key", 1, sum, error));
  EXPECT_NE(error.find("went away"), std::string::npos) << error;
}

TEST(KeyValueStore, AddressesAreCheckedAndUnreachableStoresNamed) {
  StoreAddress address;
  std::string error;
  for (const char *bad : {"file:", "redis://", "redis://host:0",
                          "redis://host:70000", "redis://host:x", "etcd://h",
                          ""}) {
    error.clear();
    EXPECT_FALSE(StoreAddress::parse(bad, address, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  ASSERT_TRUE(StoreAddress::parse("redis://127.0.0.1:" +
                                      std::to_string(freePort()),
                                  address, error));
  EXPECT_FALSE(KeyValueStore::open(address, 1.0, error));
  EXPECT_NE(error.find("cannot reach the store redis://127.0.0.1:"),
            std::string::npos)
      << error;
  ASSERT_TRUE(StoreAddress::parse("file:/proc/no/such/dir", address, error));
  EXPECT_FALSE(KeyValueStore::open(address, 1.0, error));
  EXPECT_NE(error.find("cannot create the store directory"),
            std::string::npos)
      << error;
}

} // namespace
