//===- CriteoFuzzer.cpp - libFuzzer entry point for Criteo log lines ------===//
//
// Any line must either be refused with a message (the batch unchanged) or
// become one example of 1 + 13 + 26 values within their ranges.
//
//===----------------------------------------------------------------------===//

#include "kiln/Criteo.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string line(reinterpret_cast<const char *>(data), size);
  kiln::data::CriteoBatch batch;
  std::string error;
  if (!kiln::data::CriteoReader::parseLine(line, batch, error)) {
    if (error.empty() || batch.size() != 0 || !batch.dense.empty() ||
        !batch.sparse.empty())
      std::abort();
    return 0;
  }
  if (batch.size() != 1 || batch.dense.size() != 13 ||
      batch.sparse.size() != 26 || (batch.labels[0] != 0 && batch.labels[0] != 1))
    std::abort();
  for (int64_t value : batch.sparse)
    if (value < -1 || value > 0xffffffffll)
      std::abort();
  return 0;
}
