//===- TfRecordFuzzer.cpp - libFuzzer entry point for the TFRecord reader -===//
//
// Any bytes must read as whole records up to the end, or up to a failure
// that has a message; either way the records read, framed again, must be
// exactly the bytes they were read from (so nothing is skipped, invented or
// read twice).
//
//===----------------------------------------------------------------------===//

#include "kiln/TfRecord.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  kiln::data::TfRecordReader reader;
  reader.openMemory(bytes, "fuzz");
  std::string record, error, reframed;
  while (reader.next(record, error))
    reframed += kiln::data::frameRecord(record);
  if (error.empty() ? reframed != bytes
                    : bytes.compare(0, reframed.size(), reframed) != 0)
    std::abort();
  if (!error.empty() && error.rfind("fuzz: record ", 0) != 0)
    std::abort();
  return 0;
}
