//===- Elastic.cpp - Training that goes on when workers die or arrive -----===//

#include "kiln/Elastic.h"

#include "kiln/runtime.h"

#include <cstdlib>
#include <cstring>

using namespace kiln;
using namespace kiln::elastic;

namespace {

/// Throws the failure of \p status as a CommunicationError (an elastic
/// run's failures are all communication's).
void check(const char *what, kiln_status_t status) {
  if (!status)
    return;
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  throw CommunicationError(std::string(what) + ": " + message);
}

Array copyOf(const Array &array) {
  if (!array.tensor())
    return Array();
  Array copy(array.dtype(), array.shape());
  std::memcpy(copy.data(), array.data(), array.byteSize());
  return copy;
}

/// The bytes of a commit, as the root sends it to the others.
class Writer {
public:
  void integer(int64_t value) { bytes(&value, sizeof(value)); }
  void text(const std::string &value) {
    integer(int64_t(value.size()));
    bytes(value.data(), value.size());
  }
  void bytes(const void *data, size_t size) {
    const auto *begin = static_cast<const uint8_t *>(data);
    buffer.insert(buffer.end(), begin, begin + size);
  }
  std::vector<uint8_t> buffer;
};

class Reader {
public:
  explicit Reader(const std::vector<uint8_t> &buffer) : buffer(buffer) {}
  int64_t integer() {
    int64_t value = 0;
    bytes(&value, sizeof(value));
    return value;
  }
  std::string text() {
    std::string value(size_t(integer()), '\0');
    bytes(value.data(), value.size());
    return value;
  }
  void bytes(void *data, size_t size) {
    if (size > buffer.size() - at)
      throw CommunicationError("kiln elastic: the commit received is "
                               "truncated");
    std::memcpy(data, buffer.data() + at, size);
    at += size;
  }

private:
  const std::vector<uint8_t> &buffer;
  size_t at = 0;
};

} // namespace

int64_t kiln::elastic::retryLimit() {
  const char *text = std::getenv("KILN_ELASTIC_RETRIES");
  if (!text || !*text)
    return 3;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 0)
    throw JitError(std::string("KILN_ELASTIC_RETRIES is '") + text +
                   "', not a count");
  return value;
}

Worker::Worker() {
  check("kiln_elastic_open", kiln_elastic_open(&elastic_));
}

Worker::~Worker() { kiln_elastic_release(elastic_); }

kiln_comm *Worker::comm() const { return kiln_elastic_comm(elastic_); }
int64_t Worker::rank() const { return kiln_comm_rank(comm()); }
int64_t Worker::size() const { return kiln_comm_size(comm()); }

bool Worker::rendezvous(int64_t commitSerial, int64_t &root) {
  int64_t generation = -1;
  check("kiln_elastic_rendezvous",
        kiln_elastic_rendezvous(elastic_, commitSerial, &generation, &root));
  if (generation < 0)
    return false;
  generation_ = generation;
  return true;
}

bool Worker::membersWaiting() {
  int waiting = 0;
  check("kiln_elastic_members_waiting",
        kiln_elastic_members_waiting(elastic_, &waiting));
  return waiting != 0;
}

void Worker::finish() {
  check("kiln_elastic_finish", kiln_elastic_finish(elastic_));
}

void State::keep() {
  savedArrays.clear();
  for (const auto &[name, array] : arrays)
    savedArrays[name] = copyOf(array);
  savedCounters = counters;
}

void State::save() {
  keep();
  ++serial_;
}

void State::commit(Worker &worker) {
  save();
  if (worker.membersWaiting())
    throw MembersWaiting();
}

void State::restore() {
  arrays.clear();
  for (const auto &[name, array] : savedArrays)
    arrays[name] = copyOf(array);
  counters = savedCounters;
}

void State::sync(Worker &worker, int64_t root) {
  kiln_comm *comm = worker.comm();
  // Nothing committed yet: the values as the program set them are the
  // start of the run.
  if (serial_ < 0)
    keep();
  std::vector<uint8_t> payload;
  if (worker.rank() == root) {
    Writer writer;
    writer.integer(serial_);
    writer.integer(int64_t(savedCounters.size()));
    for (const auto &[name, value] : savedCounters) {
      writer.text(name);
      writer.integer(value);
    }
    writer.integer(int64_t(savedArrays.size()));
    for (const auto &[name, array] : savedArrays) {
      writer.text(name);
      writer.integer(static_cast<int64_t>(array.dtype()));
      writer.integer(int64_t(array.shape().size()));
      for (int64_t dim : array.shape())
        writer.integer(dim);
      writer.integer(int64_t(array.byteSize()));
      if (array.byteSize())
        writer.bytes(array.data(), array.byteSize());
    }
    payload = std::move(writer.buffer);
  }
  int64_t size = int64_t(payload.size());
  check("kiln_comm_broadcast",
        kiln_comm_broadcast(comm, &size, sizeof(size), root));
  payload.resize(size_t(size));
  check("kiln_comm_broadcast",
        kiln_comm_broadcast(comm, payload.data(), payload.size(), root));
  Reader reader(payload);
  serial_ = reader.integer();
  savedCounters.clear();
  for (int64_t n = reader.integer(); n > 0; --n) {
    std::string name = reader.text();
    savedCounters[name] = reader.integer();
  }
  savedArrays.clear();
  for (int64_t n = reader.integer(); n > 0; --n) {
    std::string name = reader.text();
    auto dtype = static_cast<DType>(reader.integer());
    std::vector<int64_t> shape(size_t(reader.integer()));
    for (int64_t &dim : shape)
      dim = reader.integer();
    Array array(dtype, shape);
    size_t bytes = size_t(reader.integer());
    if (bytes != array.byteSize())
      throw CommunicationError("kiln elastic: the commit received holds " +
                               std::to_string(bytes) + " bytes for '" + name +
                               "', which needs " +
                               std::to_string(array.byteSize()));
    if (bytes)
      reader.bytes(array.data(), bytes);
    savedArrays[name] = array;
  }
  restore();
}

std::vector<Array> Jit::operator()(const std::vector<Array> &inputs) {
  std::unique_ptr<JitFunction> &function = bySize[worker.size()];
  if (!function)
    function = std::make_unique<JitFunction>(factory(worker.comm()));
  return (*function)(inputs);
}

std::vector<int64_t> Jit::sizes() const {
  std::vector<int64_t> result;
  for (const auto &[size, function] : bySize)
    result.push_back(size);
  return result;
}
