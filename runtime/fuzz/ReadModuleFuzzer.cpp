//===- ReadModuleFuzzer.cpp - libFuzzer entry point for readModule ---------===//
//
// readModule is the first code to touch a .kmod file, so it must survive any
// bytes at all. When a module is accepted, writing it back and reading it
// again must give the same contents.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::format::ModuleContents contents;
  std::string error;
  if (!kiln::format::readModule(data, size, contents, error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  std::vector<uint8_t> rewritten = kiln::format::writeModule(contents);
  kiln::format::ModuleContents again;
  if (!kiln::format::readModule(rewritten.data(), rewritten.size(), again,
                                error) ||
      again.code != contents.code || again.constants != contents.constants ||
      again.functions.size() != contents.functions.size() ||
      again.target != contents.target)
    std::abort();
  return 0;
}
