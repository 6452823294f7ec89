//===- DeviceComm.cpp - Collectives on device buffers ---------------------===//

#include "DeviceComm.h"

#include "Transport.h"

#include "kiln/CollectiveAbi.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

std::string describeRow(const std::vector<int64_t> &row) {
  std::string text = "{";
  for (size_t i = 0; i < row.size(); ++i)
    text += (i ? ", " : "") + std::to_string(row[i]);
  return text + "}";
}

/// The row of \p collective's groups that holds \p rank; all ranks in
/// order for a permutation.
std::vector<int64_t> rowOf(const kiln_comm_plugin_collective_t &collective,
                           int64_t rank, int64_t size) {
  std::vector<int64_t> row;
  if (collective.kind == KILN_COLLECTIVE_PERMUTE) {
    row.resize(size_t(size));
    std::iota(row.begin(), row.end(), 0);
    return row;
  }
  int64_t members = collective.group_count * collective.group_size;
  for (int64_t i = 0; i < members; ++i)
    if (collective.groups[i] == rank) {
      const int64_t *first = collective.groups + i / collective.group_size *
                                                     collective.group_size;
      row.assign(first, first + collective.group_size);
      break;
    }
  return row;
}

} // namespace

DeviceComm::~DeviceComm() {
  for (auto &[row, group] : groups)
    table.destroy(group);
}

std::string DeviceComm::fromPlugin(const char *message) const {
  return std::string(table.name) + ": " + message;
}

bool DeviceComm::groupFor(const std::vector<int64_t> &row, int64_t timeoutMs,
                          void *&group, std::string &error) {
  auto found = groups.find(row);
  if (found != groups.end()) {
    group = found->second;
    return true;
  }
  int64_t rank = control.rank();
  int64_t groupRank =
      std::find(row.begin(), row.end(), rank) - row.begin();
  // One word saying whether the first member made the id, then the id.
  const int64_t idWords = (table.id_bytes + 7) / 8;
  const int64_t words = 1 + idWords;
  std::vector<int64_t> mine(size_t(words), 0);
  char message[1024] = {};
  if (groupRank == 0 &&
      table.make_id(&mine[1], message, sizeof(message)) == 0)
    mine[0] = 1;
  else if (groupRank == 0)
    mine[0] = 0;

  std::vector<int64_t> members = row;
  std::sort(members.begin(), members.end());
  std::vector<int64_t> all(members.size() * size_t(words));
  bool everyRank = int64_t(row.size()) == control.size();
  std::string reason;
  if (!(everyRank ? control.gatherAll(mine.data(), words, all.data(), reason)
                  : control.exchangeGroup(members, mine.data(), words,
                                          all.data(), timeoutMs, reason))) {
    error = "sharing the " + std::string(table.name) +
            " id of replica group " + describeRow(row) + " failed: " + reason;
    return false;
  }
  // A group of every rank gathers in the run's rank order, a smaller one
  // in its members' order.
  int64_t first = everyRank ? row[0]
                            : std::find(members.begin(), members.end(),
                                        row[0]) -
                                  members.begin();
  const int64_t *theirs = all.data() + first * words;
  if (theirs[0] != 1) {
    message[sizeof(message) - 1] = '\0';
    error = groupRank == 0
                ? "making the id of replica group " + describeRow(row) +
                      " failed: " + fromPlugin(message)
                : "rank " + std::to_string(row[0]) +
                      ", the first member of replica group " +
                      describeRow(row) + ", could not make its " +
                      table.name + " id (its own error says why)";
    return false;
  }
  std::vector<char> id(size_t(idWords) * 8);
  std::memcpy(id.data(), theirs + 1, id.size());
  if (table.create(&group, id.data(), int64_t(row.size()), groupRank,
                   message, sizeof(message)) != 0) {
    message[sizeof(message) - 1] = '\0';
    error = "joining replica group " + describeRow(row) + " failed: " +
            fromPlugin(message);
    return false;
  }
  groups.emplace(row, group);
  return true;
}

bool DeviceComm::start(const kiln_comm_plugin_collective_t &collective,
                       void *stream, int64_t timeoutMs, std::string &error) {
  int64_t rank = control.rank();
  std::vector<int64_t> row = rowOf(collective, rank, control.size());
  if (row.empty()) {
    // CollectiveCall checked that every rank is in one group.
    error = "rank " + std::to_string(rank) + " is in none of its groups";
    return false;
  }
  void *group = nullptr;
  if (!groupFor(row, timeoutMs, group, error))
    return false;
  kiln_device_comm_collective_t device = {};
  device.kind = collective.kind;
  device.reduction = collective.reduction;
  device.dtype = collective.dtype;
  device.input = collective.input;
  device.output = collective.output;
  device.count = collective.count;
  device.root = collective.root;
  device.send_to = -1;
  device.recv_from = -1;
  device.stream = stream;
  if (collective.kind == KILN_COLLECTIVE_PERMUTE)
    for (int64_t i = 0; i < collective.pair_count; ++i) {
      // The group of a permutation is all ranks: group ranks are the run's.
      if (collective.pairs[2 * i] == rank)
        device.send_to = collective.pairs[2 * i + 1];
      if (collective.pairs[2 * i + 1] == rank)
        device.recv_from = collective.pairs[2 * i];
    }
  char message[1024] = {};
  if (table.start(group, &device, message, sizeof(message)) != 0) {
    message[sizeof(message) - 1] = '\0';
    error = fromPlugin(message);
    return false;
  }
  return true;
}

} // namespace comm
} // namespace runtime
} // namespace kiln
