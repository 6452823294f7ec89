//===- TestSupport.cpp - Shared helpers for the runtime tests --------------===//

#include "TestSupport.h"

#include "kmod_generated.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ftw.h>
#include <link.h>
#include <stdexcept>
#include <sys/wait.h>

namespace kiln {
namespace test {

Outcome take(kiln_status_t status) {
  Outcome outcome;
  outcome.code = kiln_status_code(status);
  outcome.message = kiln_status_message(status);
  kiln_status_free(status);
  return outcome;
}

ModulePtr loadModule(const format::ModuleContents &contents) {
  std::vector<uint8_t> bytes = format::writeModule(contents);
  kiln_module_t *module = nullptr;
  Outcome outcome =
      take(kiln_module_load_memory(bytes.data(), bytes.size(), &module));
  if (!outcome.ok())
    throw std::runtime_error("cannot load a test module: " + outcome.message);
  return ModulePtr(module);
}

Outcome callFunction(const kiln_module_t *module, const std::string &name,
                     kiln_comm_t *comm,
                     const std::vector<kiln_tensor_t *> &inputs,
                     std::vector<TensorPtr> &outputs) {
  outputs.clear();
  const kiln_function_t *function = nullptr;
  Outcome outcome =
      take(kiln_module_function_lookup(module, name.c_str(), &function));
  if (!outcome.ok())
    return outcome;
  std::vector<kiln_tensor_t *> results(kiln_function_output_count(function));
  kiln_status_t status =
      comm ? kiln_function_call_with_comm(function, comm, inputs.data(),
                                          inputs.size(), results.data(),
                                          results.size())
           : kiln_function_call(function, inputs.data(), inputs.size(),
                                results.data(), results.size());
  outcome = take(status);
  for (kiln_tensor_t *result : results)
    outputs.emplace_back(result);
  return outcome;
}

bool isLoaded(const char *part) {
  struct Search {
    const char *part;
    bool found = false;
  } search{part};
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        auto *search = static_cast<Search *>(data);
        if (info->dlpi_name && std::strstr(info->dlpi_name, search->part))
          search->found = true;
        return 0;
      },
      &search);
  return search.found;
}

std::vector<uint8_t> readFile(const std::string &path) {
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> bytes;
  uint8_t chunk[4096];
  size_t count;
  while ((count = std::fread(chunk, 1, sizeof(chunk), file)) != 0)
    bytes.insert(bytes.end(), chunk, chunk + count);
  std::fclose(file);
  return bytes;
}

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw std::runtime_error("cannot create " + path);
  bool ok = bytes.empty() ||
            std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    throw std::runtime_error("cannot write " + path);
}

std::vector<uint8_t> addFixtureCode() { return readFile(KILN_FIXTURE_ADD); }
std::vector<uint8_t> mixedFixtureCode() {
  return readFile(KILN_FIXTURE_MIXED);
}

namespace {

format::TensorSignature tensor(const std::string &name, format::DType dtype,
                               std::vector<int64_t> shape) {
  format::TensorSignature signature;
  signature.name = name;
  signature.dtype = dtype;
  signature.shape = std::move(shape);
  return signature;
}

} // namespace

format::ModuleContents addModuleContents() {
  using format::DType;
  format::ModuleContents contents;
  contents.target = "x86_64-unknown-linux-gnu";
  format::FunctionSignature add;
  add.name = "add";
  add.entrySymbol = "kiln_entry_add";
  add.inputs = {tensor("a", DType::F32, {4}), tensor("b", DType::F32, {4})};
  add.outputs = {tensor("sum", DType::F32, {4})};
  contents.functions.push_back(add);
  contents.code = addFixtureCode();
  return contents;
}

format::ModuleContents constantsModuleContents(
    const std::vector<float> &constants) {
  format::ModuleContents contents;
  contents.target = "x86_64-unknown-linux-gnu";
  format::FunctionSignature scale;
  scale.name = "scale";
  scale.entrySymbol = "kiln_entry_scale";
  scale.inputs = {tensor("x", format::DType::F32, {4})};
  scale.outputs = {tensor("y", format::DType::F32, {4}),
                   tensor("misalignment", format::DType::I64, {1})};
  contents.functions.push_back(scale);
  contents.code = readFile(KILN_FIXTURE_CONSTANTS);
  const auto *bytes = reinterpret_cast<const uint8_t *>(constants.data());
  contents.constants.assign(bytes, bytes + constants.size() * sizeof(float));
  return contents;
}

format::ModuleContents profileModuleContents(bool badTable) {
  format::ModuleContents contents;
  contents.target = "x86_64-unknown-linux-gnu";
  format::FunctionSignature nested;
  nested.name = "nested";
  nested.entrySymbol = "kiln_entry_nested";
  nested.inputs = {tensor("x", format::DType::F32, {1})};
  nested.outputs = {tensor("y", format::DType::F32, {1})};
  contents.functions.push_back(nested);
  contents.code =
      readFile(badTable ? KILN_FIXTURE_PROFILE_BAD : KILN_FIXTURE_PROFILE);
  return contents;
}

format::ModuleContents mixedModuleContents() {
  using format::DType;
  format::ModuleContents contents;
  contents.target = "x86_64-unknown-linux-gnu";
  format::FunctionSignature stats;
  stats.name = "stats";
  stats.entrySymbol = "kiln_entry_stats";
  stats.inputs = {tensor("x", DType::F32, {2, 3}),
                  tensor("threshold", DType::F32, {})};
  stats.outputs = {tensor("mask", DType::I1, {2, 3}),
                   tensor("count", DType::I64, {}),
                   tensor("exp", DType::F32, {2, 3})};
  format::FunctionSignature scale;
  scale.name = "scale";
  scale.entrySymbol = "kiln_entry_scale";
  scale.inputs = {tensor("v", DType::F64, {3}), tensor("k", DType::I32, {})};
  scale.outputs = {tensor("scaled", DType::F64, {3}),
                   tensor("", DType::F64, {3})};
  contents.functions = {stats, scale};
  contents.code = mixedFixtureCode();
  return contents;
}

format::ModuleContents collectivesModuleContents(int64_t ranks) {
  using format::DType;
  format::ModuleContents contents;
  contents.target = "x86_64-unknown-linux-gnu";
  auto add = [&](const std::string &name, const std::string &entry,
                 std::vector<format::TensorSignature> inputs,
                 std::vector<format::TensorSignature> outputs) {
    format::FunctionSignature function;
    function.name = name;
    function.entrySymbol = "kiln_entry_" + entry;
    function.inputs = std::move(inputs);
    function.outputs = std::move(outputs);
    contents.functions.push_back(std::move(function));
  };
  add("rank_size", "rank_size", {},
      {tensor("rank", DType::I64, {}), tensor("size", DType::I64, {})});
  for (const ElementTypeInfo &info : kElementTypes)
    add(std::string("all_reduce_") + info.name,
        std::string("all_reduce_") + info.name, {tensor("x", info.type, {6})},
        {tensor("sum", info.type, {6}), tensor("max", info.type, {6}),
         tensor("min", info.type, {6})});
  add("sum6", "sum6", {tensor("x", DType::F32, {6})},
      {tensor("y", DType::F32, {6})});
  add("sum6_2d", "sum6", {tensor("x", DType::F32, {2, 3})},
      {tensor("y", DType::F32, {2, 3})});
  add("strided_groups", "strided_groups", {tensor("x", DType::F32, {4})},
      {tensor("sum", DType::F32, {4}), tensor("gathered", DType::F32, {8})});
  add("all_gather", "all_gather", {tensor("x", DType::I32, {3})},
      {tensor("y", DType::I32, {3 * ranks})});
  add("reduce_scatter", "reduce_scatter",
      {tensor("x", DType::F32, {2 * ranks})}, {tensor("y", DType::F32, {2})});
  add("broadcast", "broadcast", {tensor("x", DType::I64, {5})},
      {tensor("y", DType::I64, {5})});
  add("all_to_all", "all_to_all", {tensor("x", DType::I32, {2 * ranks})},
      {tensor("y", DType::I32, {2 * ranks})});
  add("permute", "permute", {tensor("x", DType::F32, {3})},
      {tensor("shifted", DType::F32, {3}), tensor("rotated", DType::F32, {3})});
  add("pair_stages", "pair_stages", {tensor("x", DType::F32, {4})},
      {tensor("y", DType::F32, {4}), tensor("w", DType::F32, {4})});
  for (const char *name : {"for_two_ranks", "returns_early", "dies_on_rank_1",
                           "wrong_wait_buffers", "pair_member_returns_early",
                           "pair_member_waits_elsewhere"})
    add(name, name, {tensor("x", DType::F32, {4})},
        {tensor("y", DType::F32, {4})});
  for (const char *name : {"mismatched_count", "mismatched_kind",
                           "mismatched_dtype", "mismatched_groups"})
    add(name, name, {tensor("x", DType::F32, {8})},
        {tensor("y", DType::F32, {8})});
  contents.code = readFile(KILN_FIXTURE_COLLECTIVES);
  return contents;
}

std::vector<uint8_t> makeEnvelope(uint32_t version, uint64_t checksum,
                                  const std::vector<uint8_t> *body) {
  flatbuffers::FlatBufferBuilder builder;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> bodyVector;
  if (body) {
    builder.ForceVectorAlignment(body->size(), 1, 8);
    bodyVector = builder.CreateVector(*body);
  }
  kmod::FinishModuleBuffer(
      builder, kmod::CreateModule(builder, version, checksum, bodyVector));
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

TemporaryDirectory::TemporaryDirectory() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/kiln-test-XXXXXX";
  if (!mkdtemp(&pattern[0]))
    throw std::runtime_error("mkdtemp failed");
  directory = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  nftw(
      directory.c_str(),
      [](const char *path, const struct stat *, int, struct FTW *) {
        return std::remove(path);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

CommandResult runCommand(const std::string &command) {
  CommandResult result;
  auto start = std::chrono::steady_clock::now();
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return result;
  char chunk[4096];
  size_t count;
  while ((count = std::fread(chunk, 1, sizeof(chunk), pipe)) != 0)
    result.output.append(chunk, count);
  int status = pclose(pipe);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

} // namespace test
} // namespace kiln
