//===- RuntimeApiTest.cpp - Tests of loading modules and calling them ------===//

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <cmath>
#include <dlfcn.h>
#include <elf.h>
#include <thread>

using namespace kiln;
using namespace kiln::test;
using format::ModuleContents;
using format::writeModule;

namespace {

ModulePtr loadContents(const ModuleContents &contents) {
  std::vector<uint8_t> bytes = writeModule(contents);
  kiln_module_t *module = nullptr;
  Outcome outcome =
      take(kiln_module_load_memory(bytes.data(), bytes.size(), &module));
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  return ModulePtr(module);
}

Outcome loadError(const ModuleContents &contents) {
  std::vector<uint8_t> bytes = writeModule(contents);
  kiln_module_t *module = nullptr;
  Outcome outcome =
      take(kiln_module_load_memory(bytes.data(), bytes.size(), &module));
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(module, nullptr);
  return outcome;
}

const kiln_function_t *lookup(const kiln_module_t *module, const char *name) {
  const kiln_function_t *function = nullptr;
  Outcome outcome = take(kiln_module_function_lookup(module, name, &function));
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  return function;
}

/// Calls add(a, b) and returns the sum.
std::vector<float> callAdd(const kiln_function_t *add, std::vector<float> a,
                           std::vector<float> b) {
  TensorPtr ta = makeTensor(KILN_DTYPE_F32, {4}, a);
  TensorPtr tb = makeTensor(KILN_DTYPE_F32, {4}, b);
  kiln_tensor_t *inputs[] = {ta.get(), tb.get()};
  kiln_tensor_t *output = nullptr;
  Outcome outcome = take(kiln_function_call(add, inputs, 2, &output, 1));
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  if (!outcome.ok())
    return {};
  TensorPtr sum(output);
  return tensorValues<float>(sum.get());
}

/// Expects a call of add with \p inputs to fail with \p message.
void expectAddCallError(const kiln_function_t *add,
                        std::vector<kiln_tensor_t *> inputs,
                        const std::string &message) {
  kiln_tensor_t *output = reinterpret_cast<kiln_tensor_t *>(0x1);
  Outcome outcome = take(
      kiln_function_call(add, inputs.data(), inputs.size(), &output, 1));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(outcome.message, message);
  EXPECT_EQ(output, nullptr);
}

//===-- Memory over many calls ---------------------------------------------===//

/// Bytes the process has allocated with malloc and not freed, or 0 where
/// the allocator does not say (a sanitizer's replaces glibc's).
size_t heapBytesInUse() { return mallinfo2().uordblks; }

// The call path (tensors in, call, outputs out) and the module's life
// (load, call, release) leave nothing behind: after a warm-up of a thousand
// rounds (caches settle), a thousand more do not grow the heap. A leak of
// even one small block per round would show as 16 KiB or more.
TEST(RuntimeApiTest, ThousandCallsDoNotGrowTheHeap) {
  if (heapBytesInUse() == 0)
    GTEST_SKIP() << "the allocator reports no heap statistics";
  ModulePtr module = loadContents(addModuleContents());
  ASSERT_TRUE(module);
  const kiln_function_t *add = lookup(module.get(), "add");
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(callAdd(add, {1, 2, 3, 4}, {1, 1, 1, 1}),
              (std::vector<float>{2, 3, 4, 5}));
  size_t before = heapBytesInUse();
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(callAdd(add, {1, 2, 3, 4}, {1, 1, 1, 1}),
              (std::vector<float>{2, 3, 4, 5}));
  size_t after = heapBytesInUse();
  EXPECT_LE(after, before + 4096) << "heap grew by " << after - before
                                  << " bytes over 1000 calls";
}

TEST(RuntimeApiTest, LoadCallReleaseCyclesDoNotGrowTheHeap) {
  if (heapBytesInUse() == 0)
    GTEST_SKIP() << "the allocator reports no heap statistics";
  std::vector<uint8_t> bytes = writeModule(addModuleContents());
  auto cycle = [&] {
    kiln_module_t *raw = nullptr;
    Outcome outcome =
        take(kiln_module_load_memory(bytes.data(), bytes.size(), &raw));
    ASSERT_TRUE(outcome.ok()) << outcome.message;
    ModulePtr module(raw);
    ASSERT_EQ(callAdd(lookup(module.get(), "add"), {1, 2, 3, 4}, {4, 3, 2, 1}),
              (std::vector<float>{5, 5, 5, 5}));
  };
  for (int i = 0; i < 1000; ++i)
    cycle();
  size_t before = heapBytesInUse();
  for (int i = 0; i < 1000; ++i)
    cycle();
  size_t after = heapBytesInUse();
  EXPECT_LE(after, before + 4096) << "heap grew by " << after - before
                                  << " bytes over 1000 load/call/release "
                                     "cycles";
}

//===-- Loading -----------------------------------------------------------===//

TEST(RuntimeApiTest, LoadsFromMemoryAndCalls) {
  ModulePtr module = loadContents(addModuleContents());
  ASSERT_TRUE(module);
  EXPECT_STREQ(kiln_module_target(module.get()), "x86_64-unknown-linux-gnu");
  ASSERT_EQ(kiln_module_function_count(module.get()), 1u);
  const kiln_function_t *add = kiln_module_function_at(module.get(), 0);
  EXPECT_STREQ(kiln_function_name(add), "add");
  EXPECT_EQ(callAdd(add, {1, 2, 3, 4}, {10, 20, 30.5f, -4}),
            (std::vector<float>{11, 22, 33.5f, 0}));
}

TEST(RuntimeApiTest, LoadsFromFile) {
  TemporaryDirectory directory;
  std::string path = directory.file("add.kmod");
  writeFile(path, writeModule(addModuleContents()));
  kiln_module_t *raw = nullptr;
  Outcome outcome = take(kiln_module_load_file(path.c_str(), &raw));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  ModulePtr module(raw);
  EXPECT_EQ(callAdd(lookup(module.get(), "add"), {1, 1, 1, 1}, {2, 3, 4, 5}),
            (std::vector<float>{3, 4, 5, 6}));
}

// A module's thread-pool dependency (here libgomp, in compiled modules
// libomp or oneDNN) keeps worker threads after the call; unloading it with
// the module crashed the process when those threads next ran.
TEST(RuntimeApiTest, KeepsThreadPoolDependenciesLoaded) {
  ASSERT_EQ(dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD), nullptr)
      << "the test binary must not load libgomp itself";
  ModuleContents contents = addModuleContents();
  contents.code = readFile(KILN_FIXTURE_THREADED);
  for (int round = 0; round < 2; ++round) {
    ModulePtr module = loadContents(contents);
    ASSERT_TRUE(module);
    EXPECT_EQ(callAdd(lookup(module.get(), "add"), {1, 2, 3, 4}, {4, 3, 2, 1}),
              (std::vector<float>{5, 5, 5, 5}));
  }
  void *pinned = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  EXPECT_NE(pinned, nullptr) << "libgomp was unloaded with the module";
  if (pinned)
    dlclose(pinned);
}

// Large buffers are reused instead of mapped afresh on every call (each
// fresh mapping costs a page fault per page); a reused buffer handed out by
// kiln_tensor_create must still read as zeros.
TEST(RuntimeApiTest, ReusesLargeBuffersAndZeroesThem) {
  // An element count no other test uses, so the cached buffer is ours.
  const int64_t shape[] = {(int64_t(1) << 19) + 7 * 16};
  std::vector<float> ones(shape[0], 1.0f);
  kiln_tensor_t *first = nullptr;
  ASSERT_TRUE(take(kiln_tensor_create(KILN_DTYPE_F32, 1, shape, ones.data(),
                                      &first))
                  .ok());
  void *firstData = kiln_tensor_data(first);
  kiln_tensor_release(first);

  kiln_tensor_t *second = nullptr;
  ASSERT_TRUE(
      take(kiln_tensor_create(KILN_DTYPE_F32, 1, shape, nullptr, &second))
          .ok());
  TensorPtr owned(second);
  EXPECT_EQ(kiln_tensor_data(second), firstData);
  const float *values = static_cast<const float *>(kiln_tensor_data(second));
  size_t nonzero = 0;
  for (int64_t i = 0; i < shape[0]; ++i)
    nonzero += values[i] != 0.0f;
  EXPECT_EQ(nonzero, 0u);
}

TEST(RuntimeApiTest, ListsSignatures) {
  ModulePtr module = loadContents(mixedModuleContents());
  ASSERT_EQ(kiln_module_function_count(module.get()), 2u);
  const kiln_function_t *stats = kiln_module_function_at(module.get(), 0);
  const kiln_function_t *scale = kiln_module_function_at(module.get(), 1);
  EXPECT_STREQ(kiln_function_name(stats), "stats");
  EXPECT_STREQ(kiln_function_name(scale), "scale");
  ASSERT_EQ(kiln_function_input_count(stats), 2u);
  ASSERT_EQ(kiln_function_output_count(stats), 3u);

  const kiln_tensor_signature_t *x = kiln_function_input(stats, 0);
  EXPECT_STREQ(x->name, "x");
  EXPECT_EQ(x->dtype, KILN_DTYPE_F32);
  ASSERT_EQ(x->rank, 2u);
  EXPECT_EQ(x->shape[0], 2);
  EXPECT_EQ(x->shape[1], 3);
  const kiln_tensor_signature_t *threshold = kiln_function_input(stats, 1);
  EXPECT_EQ(threshold->rank, 0u);
  EXPECT_EQ(threshold->shape, nullptr);
  EXPECT_EQ(kiln_function_output(stats, 0)->dtype, KILN_DTYPE_I1);
  EXPECT_EQ(kiln_function_output(stats, 1)->dtype, KILN_DTYPE_I64);
  EXPECT_STREQ(kiln_function_output(scale, 1)->name, "");
  EXPECT_EQ(kiln_function_input(stats, 2), nullptr);
  EXPECT_EQ(kiln_function_output(stats, 3), nullptr);
  EXPECT_EQ(kiln_module_function_at(module.get(), 2), nullptr);
  EXPECT_EQ(kiln_function_output(stats, 0)->tied_input, -1);
  EXPECT_EQ(x->tied_input, -1);
}

// An output tied to a donated input is written into that input's memory:
// the runtime passes the input's buffer for it and returns a tensor viewing
// it, which outlives nothing (releasing it leaves the input alone).
/// The add fixture with its sum written into input `donated`.
ModulePtr loadTiedAdd(int64_t donated, const kiln_function_t *&add) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].outputs[0].tiedInput = donated;
  ModulePtr module = loadContents(contents);
  add = module ? lookup(module.get(), "add") : nullptr;
  return module;
}

TEST(RuntimeApiTest, TiedOutputIsWrittenIntoTheDonatedInput) {
  const kiln_function_t *add = nullptr;
  ModulePtr module = loadTiedAdd(0, add);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(kiln_function_output(add, 0)->tied_input, 0);
  TensorPtr a = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{1, 2, 3, 4});
  TensorPtr b =
      makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{10, 20, 30, 40});
  kiln_tensor_t *inputs[] = {a.get(), b.get()};
  kiln_tensor_t *output = nullptr;
  Outcome outcome = take(kiln_function_call(add, inputs, 2, &output, 1));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  TensorPtr sum(output);
  EXPECT_EQ(kiln_tensor_data(sum.get()), kiln_tensor_data(a.get()));
  EXPECT_EQ(tensorValues<float>(sum.get()),
            (std::vector<float>{11, 22, 33, 44}));
  sum.reset();
  EXPECT_EQ(tensorValues<float>(a.get()), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(tensorValues<float>(b.get()), (std::vector<float>{10, 20, 30, 40}));
}

// A donated input is overwritten while the others are read, so one that
// shares memory with another input is refused, whole or in part.
TEST(RuntimeApiTest, DonatedInputMustNotShareMemoryWithAnother) {
  const kiln_function_t *add = nullptr;
  ModulePtr module = loadTiedAdd(1, add);
  ASSERT_NE(add, nullptr);
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  kiln_tensor_t *first = nullptr, *shifted = nullptr;
  int64_t shape[] = {4};
  ASSERT_TRUE(take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape, memory.data(),
                                    &first)).ok());
  ASSERT_TRUE(take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape,
                                    memory.data() + 2, &shifted)).ok());
  TensorPtr a(first), b(shifted);
  std::string message =
      "function 'add': input 1 ('b') is donated (output 0 is written into "
      "it) but shares memory with input 0 ('a'); pass a copy of one of them";
  expectAddCallError(add, {a.get(), a.get()}, message);
  expectAddCallError(add, {a.get(), b.get()}, message);
  EXPECT_EQ(memory, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(RuntimeApiTest, LooksUpFunctionsByName) {
  ModulePtr module = loadContents(mixedModuleContents());
  EXPECT_STREQ(kiln_function_name(lookup(module.get(), "scale")), "scale");
  const kiln_function_t *function =
      reinterpret_cast<const kiln_function_t *>(0x1);
  Outcome outcome =
      take(kiln_module_function_lookup(module.get(), "nope", &function));
  EXPECT_EQ(outcome.code, KILN_STATUS_NOT_FOUND);
  EXPECT_EQ(outcome.message,
            "the module has no function named 'nope' (it has: stats, scale)");
  EXPECT_EQ(function, nullptr);
}

TEST(RuntimeApiTest, CallsCodeUsingLibcAndLibm) {
  ModulePtr module = loadContents(mixedModuleContents());
  std::vector<float> x = {-1, 0.5f, 2, 3, -0.25f, 1};
  TensorPtr tx = makeTensor(KILN_DTYPE_F32, {2, 3}, x);
  TensorPtr threshold = makeTensor(KILN_DTYPE_F32, {}, std::vector<float>{0.75f});
  kiln_tensor_t *inputs[] = {tx.get(), threshold.get()};
  kiln_tensor_t *outputs[3] = {};
  Outcome outcome = take(
      kiln_function_call(lookup(module.get(), "stats"), inputs, 2, outputs, 3));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  TensorPtr mask(outputs[0]), count(outputs[1]), exponentials(outputs[2]);

  EXPECT_EQ(kiln_tensor_dtype(mask.get()), KILN_DTYPE_I1);
  EXPECT_EQ(tensorValues<uint8_t>(mask.get()),
            (std::vector<uint8_t>{0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(kiln_tensor_rank(count.get()), 0u);
  EXPECT_EQ(tensorValues<int64_t>(count.get()), std::vector<int64_t>{3});
  std::vector<float> e = tensorValues<float>(exponentials.get());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_FLOAT_EQ(e[i], std::exp(x[i]));

  TensorPtr v = makeTensor(KILN_DTYPE_F64, {3}, std::vector<double>{1.5, -2, 3});
  TensorPtr k = makeTensor(KILN_DTYPE_I32, {}, std::vector<int32_t>{-3});
  kiln_tensor_t *scaleInputs[] = {v.get(), k.get()};
  kiln_tensor_t *scaleOutputs[2] = {};
  outcome = take(kiln_function_call(lookup(module.get(), "scale"), scaleInputs,
                                    2, scaleOutputs, 2));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  TensorPtr scaled(scaleOutputs[0]), squares(scaleOutputs[1]);
  EXPECT_EQ(tensorValues<double>(scaled.get()),
            (std::vector<double>{-4.5, 6, -9}));
  EXPECT_EQ(tensorValues<double>(squares.get()),
            (std::vector<double>{2.25, 4, 9}));
}

// The code of a module with a constant pool reads the module's constants,
// 64-byte aligned, through its slot; the module and its copy of the bytes
// are independent of the buffer it was loaded from.
TEST(RuntimeApiTest, CodeReadsTheModulesConstants) {
  ModulePtr module = loadContents(constantsModuleContents({2, -3, 0.5f, 10}));
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{1, 2, 3, 4});
  kiln_tensor_t *inputs[] = {x.get()};
  kiln_tensor_t *outputs[2] = {};
  Outcome outcome = take(kiln_function_call(lookup(module.get(), "scale"),
                                            inputs, 1, outputs, 2));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  TensorPtr y(outputs[0]), misalignment(outputs[1]);
  EXPECT_EQ(tensorValues<float>(y.get()),
            (std::vector<float>{2, -6, 1.5f, 40}));
  EXPECT_EQ(tensorValues<int64_t>(misalignment.get()),
            std::vector<int64_t>{0});
}

// Loaded from a file, the module reads its constants where they lie in the
// file's bytes, which it keeps; the values and their alignment are the
// same as from memory.
TEST(RuntimeApiTest, CodeReadsTheConstantsOfAFile) {
  TemporaryDirectory directory;
  std::string path = directory.file("constants.kmod");
  writeFile(path, writeModule(constantsModuleContents({4, 0.25f, -1, 8})));
  kiln_module_t *raw = nullptr;
  Outcome outcome = take(kiln_module_load_file(path.c_str(), &raw));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  ModulePtr module(raw);
  TensorPtr x = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{1, 2, 3, 4});
  kiln_tensor_t *inputs[] = {x.get()};
  kiln_tensor_t *outputs[2] = {};
  outcome = take(kiln_function_call(lookup(module.get(), "scale"), inputs, 1,
                                    outputs, 2));
  ASSERT_TRUE(outcome.ok()) << outcome.message;
  TensorPtr y(outputs[0]), misalignment(outputs[1]);
  EXPECT_EQ(tensorValues<float>(y.get()), (std::vector<float>{4, 0.5f, -3, 32}));
  EXPECT_EQ(tensorValues<int64_t>(misalignment.get()),
            std::vector<int64_t>{0});
}

// The code says how many bytes of constants it reads; a module that holds
// another number of bytes, or constants that no code reads, is refused
// before anything runs.
TEST(RuntimeApiTest, RefusesConstantsThatDoNotMatchTheCode) {
  Outcome outcome = loadError(constantsModuleContents({2, -3, 0.5f}));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message, "the module's code reads 16 bytes of constants "
                             "but the module holds 12");
  outcome = loadError(constantsModuleContents({}));
  EXPECT_EQ(outcome.message, "the module's code reads 16 bytes of constants "
                             "but the module holds 0");
  ModuleContents add = addModuleContents();
  add.constants.assign(32, 1);
  outcome = loadError(add);
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message, "the module holds 32 bytes of constants but its "
                             "code has no constant slot (kiln_constants)");
}

TEST(RuntimeApiTest, OutputsAreFreshAlignedTensors) {
  ModulePtr module = loadContents(addModuleContents());
  const kiln_function_t *add = lookup(module.get(), "add");
  TensorPtr a = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>{1, 2, 3, 4});
  kiln_tensor_t *inputs[] = {a.get(), a.get()};
  kiln_tensor_t *first = nullptr, *second = nullptr;
  ASSERT_TRUE(take(kiln_function_call(add, inputs, 2, &first, 1)).ok());
  ASSERT_TRUE(take(kiln_function_call(add, inputs, 2, &second, 1)).ok());
  TensorPtr one(first), two(second);
  EXPECT_NE(kiln_tensor_data(one.get()), kiln_tensor_data(two.get()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(kiln_tensor_data(one.get())) % 64, 0u);
  EXPECT_EQ(tensorValues<float>(one.get()), (std::vector<float>{2, 4, 6, 8}));
}

TEST(RuntimeApiTest, ModulesAreIndependent) {
  // Two modules at once, then a third after one is released (which may
  // reuse the released module's file descriptor number).
  ModulePtr add = loadContents(addModuleContents());
  ModulePtr mixed = loadContents(mixedModuleContents());
  ModulePtr addAgain = loadContents(addModuleContents());
  EXPECT_EQ(callAdd(lookup(add.get(), "add"), {1, 2, 3, 4}, {1, 1, 1, 1}),
            (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(kiln_module_function_count(mixed.get()), 2u);
  add.reset();
  ModulePtr mixedAgain = loadContents(mixedModuleContents());
  EXPECT_NE(lookup(mixedAgain.get(), "stats"), nullptr);
  add = loadContents(addModuleContents());
  EXPECT_EQ(callAdd(lookup(add.get(), "add"), {0, 0, 0, 1}, {0, 0, 0, 1}),
            (std::vector<float>{0, 0, 0, 2}));
  EXPECT_EQ(callAdd(lookup(addAgain.get(), "add"), {5, 0, 0, 0}, {1, 0, 0, 0}),
            (std::vector<float>{6, 0, 0, 0}));
}

TEST(RuntimeApiTest, ConcurrentCalls) {
  ModulePtr module = loadContents(addModuleContents());
  const kiln_function_t *add = lookup(module.get(), "add");
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        float base = static_cast<float>(t * 1000 + i);
        std::vector<float> sum =
            callAdd(add, {base, 1, 2, 3}, {1, base, base, base});
        if (sum != std::vector<float>{base + 1, base + 1, base + 2, base + 3})
          ++failures[t];
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

//===-- Load errors -------------------------------------------------------===//

TEST(RuntimeApiTest, MissingEntrySymbol) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].entrySymbol = "kiln_entry_missing";
  Outcome outcome = loadError(contents);
  EXPECT_EQ(outcome.code, KILN_STATUS_NOT_FOUND);
  EXPECT_EQ(outcome.message.rfind("function 'add': entry symbol "
                                  "'kiln_entry_missing' cannot be resolved: ",
                                  0),
            0u)
      << outcome.message;
  EXPECT_NE(outcome.message.find("undefined symbol: kiln_entry_missing"),
            std::string::npos)
      << outcome.message;
}

TEST(RuntimeApiTest, EntrySymbolMustBeAFunctionOfTheModule) {
  ModuleContents contents = addModuleContents();
  contents.functions[0].entrySymbol = "kiln_fixture_not_a_function";
  Outcome outcome = loadError(contents);
  EXPECT_EQ(outcome.code, KILN_STATUS_NOT_FOUND);
  EXPECT_NE(outcome.message.find("the symbol is not a function"),
            std::string::npos)
      << outcome.message;

  // malloc is visible through the code object's dependency on libc, but it
  // is not the module's code.
  contents = mixedModuleContents();
  contents.functions[1].entrySymbol = "malloc";
  outcome = loadError(contents);
  EXPECT_EQ(outcome.code, KILN_STATUS_NOT_FOUND);
  EXPECT_NE(outcome.message.find("not defined by the module's code"),
            std::string::npos)
      << outcome.message;
}

TEST(RuntimeApiTest, RejectsCodeForAnotherMachine) {
  ModuleContents contents = addModuleContents();
#if defined(__aarch64__)
  uint16_t machine = EM_X86_64;
#else
  uint16_t machine = EM_AARCH64;
#endif
  std::memcpy(contents.code.data() + offsetof(Elf64_Ehdr, e_machine), &machine,
              sizeof(machine));
  Outcome outcome = loadError(contents);
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_NE(outcome.message.find("module code is for ELF machine"),
            std::string::npos)
      << outcome.message;

  contents = addModuleContents();
  uint16_t type = ET_EXEC;
  std::memcpy(contents.code.data() + offsetof(Elf64_Ehdr, e_type), &type,
              sizeof(type));
  outcome = loadError(contents);
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message,
            "module code is not an ELF shared object (e_type 2)");
}

TEST(RuntimeApiTest, ReportsDynamicLoaderErrors) {
  ModuleContents contents = addModuleContents();
  // A valid ELF header followed by nothing the loader can map.
  contents.code.resize(sizeof(Elf64_Ehdr));
  Outcome outcome = loadError(contents);
  EXPECT_EQ(outcome.code, KILN_STATUS_LOAD_FAILED);
  EXPECT_EQ(outcome.message.rfind("cannot load the module's code: ", 0), 0u)
      << outcome.message;
}

TEST(RuntimeApiTest, RejectsWrongVersionAndIdentifier) {
  std::vector<uint8_t> bytes = writeModule(addModuleContents());
  std::vector<uint8_t> wrongIdentifier = bytes;
  wrongIdentifier[4] = 'Q';
  kiln_module_t *module = nullptr;
  Outcome outcome = take(kiln_module_load_memory(
      wrongIdentifier.data(), wrongIdentifier.size(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message,
            "not a .kmod module (missing the 'KMOD' file identifier)");

  // A version-3 envelope is refused before its body is looked at.
  std::vector<uint8_t> body = addFixtureCode();
  std::vector<uint8_t> future =
      makeEnvelope(3, format::bodyChecksum(2, body.data(), body.size()), &body);
  outcome = take(kiln_module_load_memory(future.data(), future.size(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message, "unsupported .kmod format version 3 (this "
                             "runtime reads versions 1 to 2)");
  EXPECT_EQ(module, nullptr);
}

TEST(RuntimeApiTest, FileErrors) {
  TemporaryDirectory directory;
  kiln_module_t *module = nullptr;

  std::string missing = directory.file("missing.kmod");
  Outcome outcome = take(kiln_module_load_file(missing.c_str(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_NOT_FOUND);
  EXPECT_EQ(outcome.message,
            "cannot open '" + missing + "': No such file or directory");

  std::string empty = directory.file("empty.kmod");
  writeFile(empty, {});
  outcome = take(kiln_module_load_file(empty.c_str(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message, "'" + empty +
                                 "': not a .kmod module: 0 bytes is too small "
                                 "to hold one");

  std::string garbage = directory.file("garbage.kmod");
  writeFile(garbage, std::vector<uint8_t>(1000, 0x5a));
  outcome = take(kiln_module_load_file(garbage.c_str(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(outcome.message,
            "'" + garbage +
                "': not a .kmod module (missing the 'KMOD' file identifier)");

  outcome = take(kiln_module_load_file(directory.path().c_str(), &module));
  EXPECT_EQ(outcome.code, KILN_STATUS_IO_ERROR);
  EXPECT_NE(outcome.message.find("Is a directory"), std::string::npos)
      << outcome.message;
  EXPECT_EQ(module, nullptr);
}

TEST(RuntimeApiTest, NullArguments) {
  kiln_module_t *module = nullptr;
  EXPECT_EQ(take(kiln_module_load_file(nullptr, &module)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_module_load_file("x", nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_module_load_memory(nullptr, 0, nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_module_load_memory(nullptr, 16, &module)).code,
            KILN_STATUS_INVALID_MODULE);
  EXPECT_EQ(take(kiln_function_call(nullptr, nullptr, 0, nullptr, 0)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  const kiln_function_t *function = nullptr;
  EXPECT_EQ(take(kiln_module_function_lookup(nullptr, "f", &function)).code,
            KILN_STATUS_INVALID_ARGUMENT);

  EXPECT_EQ(kiln_module_function_count(nullptr), 0u);
  EXPECT_EQ(kiln_module_function_at(nullptr, 0), nullptr);
  EXPECT_EQ(kiln_module_target(nullptr), nullptr);
  EXPECT_EQ(kiln_function_name(nullptr), nullptr);
  EXPECT_EQ(kiln_function_input_count(nullptr), 0u);
  EXPECT_EQ(kiln_function_input(nullptr, 0), nullptr);
  kiln_module_release(nullptr);
  kiln_tensor_release(nullptr);
  kiln_status_free(nullptr);
  EXPECT_EQ(kiln_status_code(nullptr), KILN_STATUS_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "OK");
}

//===-- Call errors -------------------------------------------------------===//

class CallErrorTest : public ::testing::Test {
protected:
  void SetUp() override {
    module = loadContents(addModuleContents());
    add = lookup(module.get(), "add");
  }
  ModulePtr module;
  const kiln_function_t *add = nullptr;
  TensorPtr good = makeTensor(KILN_DTYPE_F32, {4}, std::vector<float>(4, 1));
};

TEST_F(CallErrorTest, WrongInputCount) {
  expectAddCallError(add, {good.get()},
                     "function 'add' expects 2 inputs but got 1");
  expectAddCallError(add, {good.get(), good.get(), good.get()},
                     "function 'add' expects 2 inputs but got 3");
}

TEST_F(CallErrorTest, WrongDType) {
  TensorPtr ints = makeTensor(KILN_DTYPE_I32, {4}, std::vector<int32_t>(4, 1));
  expectAddCallError(add, {good.get(), ints.get()},
                     "function 'add': input 1 ('b') has dtype i32 but the "
                     "signature expects f32");
}

TEST_F(CallErrorTest, WrongShape) {
  TensorPtr matrix =
      makeTensor(KILN_DTYPE_F32, {3, 4}, std::vector<float>(12, 1));
  expectAddCallError(add, {matrix.get(), good.get()},
                     "function 'add': input 0 ('a') has shape [3,4] but the "
                     "signature expects [4]");
  TensorPtr longer = makeTensor(KILN_DTYPE_F32, {5}, std::vector<float>(5, 1));
  expectAddCallError(add, {good.get(), longer.get()},
                     "function 'add': input 1 ('b') has shape [5] but the "
                     "signature expects [4]");
  TensorPtr scalar = makeTensor(KILN_DTYPE_F32, {}, std::vector<float>(1, 1));
  expectAddCallError(add, {good.get(), scalar.get()},
                     "function 'add': input 1 ('b') has shape [] but the "
                     "signature expects [4]");
}

TEST_F(CallErrorTest, NullInputs) {
  expectAddCallError(add, {good.get(), nullptr},
                     "function 'add': input 1 ('b') is NULL");
  kiln_tensor_t *output = nullptr;
  Outcome outcome = take(kiln_function_call(add, nullptr, 2, &output, 1));
  EXPECT_EQ(outcome.message, "function 'add': the inputs array is NULL");
}

TEST_F(CallErrorTest, WrongOutputCount) {
  kiln_tensor_t *inputs[] = {good.get(), good.get()};
  kiln_tensor_t *outputs[2] = {reinterpret_cast<kiln_tensor_t *>(0x1),
                               reinterpret_cast<kiln_tensor_t *>(0x1)};
  Outcome outcome = take(kiln_function_call(add, inputs, 2, outputs, 2));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(outcome.message,
            "function 'add' produces 1 output but the outputs array holds 2");
  EXPECT_EQ(outputs[0], nullptr);
  EXPECT_EQ(outputs[1], nullptr);
  outcome = take(kiln_function_call(add, inputs, 2, nullptr, 1));
  EXPECT_EQ(outcome.message, "function 'add': the outputs array is NULL");
}

//===-- Tensors -----------------------------------------------------------===//

TEST(TensorTest, CreatesCopiesAndZeroFills) {
  int64_t shape[] = {2, 3};
  std::vector<int32_t> values = {1, 2, 3, 4, 5, 6};
  kiln_tensor_t *raw = nullptr;
  ASSERT_TRUE(take(kiln_tensor_create(KILN_DTYPE_I32, 2, shape, values.data(),
                                      &raw))
                  .ok());
  TensorPtr tensor(raw);
  EXPECT_EQ(kiln_tensor_dtype(raw), KILN_DTYPE_I32);
  EXPECT_EQ(kiln_tensor_rank(raw), 2u);
  EXPECT_EQ(kiln_tensor_shape(raw)[0], 2);
  EXPECT_EQ(kiln_tensor_shape(raw)[1], 3);
  EXPECT_EQ(kiln_tensor_element_count(raw), 6u);
  EXPECT_EQ(kiln_tensor_byte_size(raw), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(kiln_tensor_data(raw)) % 64, 0u);
  EXPECT_EQ(tensorValues<int32_t>(raw), values);

  ASSERT_TRUE(
      take(kiln_tensor_create(KILN_DTYPE_F64, 2, shape, nullptr, &raw)).ok());
  TensorPtr zeros(raw);
  EXPECT_EQ(tensorValues<double>(raw), std::vector<double>(6, 0.0));
}

TEST(TensorTest, ScalarsAndEmptyTensors) {
  kiln_tensor_t *raw = nullptr;
  uint16_t half = 0x3c00;
  ASSERT_TRUE(
      take(kiln_tensor_create(KILN_DTYPE_F16, 0, nullptr, &half, &raw)).ok());
  TensorPtr scalar(raw);
  EXPECT_EQ(kiln_tensor_rank(raw), 0u);
  EXPECT_EQ(kiln_tensor_shape(raw), nullptr);
  EXPECT_EQ(kiln_tensor_element_count(raw), 1u);
  EXPECT_EQ(kiln_tensor_byte_size(raw), 2u);
  EXPECT_EQ(tensorValues<uint16_t>(raw), std::vector<uint16_t>{0x3c00});

  int64_t shape[] = {3, 0};
  ASSERT_TRUE(
      take(kiln_tensor_create(KILN_DTYPE_BF16, 2, shape, nullptr, &raw)).ok());
  TensorPtr empty(raw);
  EXPECT_EQ(kiln_tensor_element_count(raw), 0u);
  EXPECT_EQ(kiln_tensor_byte_size(raw), 0u);
  EXPECT_NE(kiln_tensor_data(raw), nullptr);
}

TEST(TensorTest, RejectsBadArguments) {
  kiln_tensor_t *raw = reinterpret_cast<kiln_tensor_t *>(0x1);
  int64_t negative[] = {2, -1};
  Outcome outcome =
      take(kiln_tensor_create(KILN_DTYPE_F32, 2, negative, nullptr, &raw));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(outcome.message,
            "kiln_tensor_create: negative dimension -1 (axis 1)");
  EXPECT_EQ(raw, nullptr);

  outcome = take(kiln_tensor_create(static_cast<kiln_dtype_t>(42), 0, nullptr,
                                    nullptr, &raw));
  EXPECT_EQ(outcome.message, "kiln_tensor_create: unknown dtype 42");

  outcome = take(kiln_tensor_create(KILN_DTYPE_F32, 1, nullptr, nullptr, &raw));
  EXPECT_EQ(outcome.message, "kiln_tensor_create: shape is NULL but rank is 1");

  int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 40};
  outcome = take(kiln_tensor_create(KILN_DTYPE_I64, 2, huge, nullptr, &raw));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outcome.message.find("overflows"), std::string::npos);

  outcome = take(kiln_tensor_create(KILN_DTYPE_F32, 0, nullptr, nullptr, nullptr));
  EXPECT_EQ(outcome.message, "kiln_tensor_create: out_tensor is NULL");
}

// A wrapped tensor reads the caller's memory in place, at any element
// alignment, and releasing it leaves that memory alone; compiled code reads
// a wrapped input without copying it or writing it.
TEST(TensorTest, WrapsCallerMemoryWithoutCopying) {
  ModulePtr module = loadContents(addModuleContents());
  const kiln_function_t *add = lookup(module.get(), "add");
  // Offset by one float so the buffers are 4- but not 8-byte aligned.
  alignas(64) float storage[2][9] = {{0, 1, 2, 3, 4}, {0, 10, 20, 30, 40}};
  const int64_t shape[] = {4};
  kiln_tensor_t *a = nullptr, *b = nullptr;
  ASSERT_TRUE(
      take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape, &storage[0][1], &a)).ok());
  TensorPtr ownedA(a);
  ASSERT_TRUE(
      take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape, &storage[1][1], &b)).ok());
  TensorPtr ownedB(b);
  EXPECT_EQ(kiln_tensor_data(a), &storage[0][1]);
  EXPECT_EQ(kiln_tensor_byte_size(a), 16u);

  kiln_tensor_t *inputs[] = {a, b};
  kiln_tensor_t *output = nullptr;
  ASSERT_TRUE(take(kiln_function_call(add, inputs, 2, &output, 1)).ok());
  TensorPtr sum(output);
  EXPECT_EQ(tensorValues<float>(sum.get()),
            (std::vector<float>{11, 22, 33, 44}));
  ownedA.reset();
  ownedB.reset();
  EXPECT_EQ(storage[0][1], 1.0f);
  EXPECT_EQ(storage[1][4], 40.0f);
}

TEST(TensorTest, WrapRejectsBadArguments) {
  kiln_tensor_t *raw = reinterpret_cast<kiln_tensor_t *>(0x1);
  const int64_t shape[] = {2};
  alignas(8) char bytes[16] = {};
  Outcome outcome =
      take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape, bytes + 2, &raw));
  EXPECT_EQ(outcome.code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(outcome.message, "kiln_tensor_wrap: data is not aligned to the "
                             "4-byte elements of f32");
  EXPECT_EQ(raw, nullptr);
  outcome = take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape, nullptr, &raw));
  EXPECT_EQ(outcome.message, "kiln_tensor_wrap: data is NULL");
  const int64_t negative[] = {-3};
  outcome = take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, negative, bytes, &raw));
  EXPECT_EQ(outcome.message,
            "kiln_tensor_wrap: negative dimension -3 (axis 0)");
  outcome = take(kiln_tensor_wrap(KILN_DTYPE_F32, 1, shape, bytes, nullptr));
  EXPECT_EQ(outcome.message, "kiln_tensor_wrap: out_tensor is NULL");
}

TEST(TensorTest, DTypeProperties) {
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_F32), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_F64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_I1), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_I32), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_I64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_F16), 2u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_BF16), 2u);
  EXPECT_EQ(kiln_dtype_size(static_cast<kiln_dtype_t>(-1)), 0u);
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_I1), "i1");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_BF16), "bf16");
  EXPECT_STREQ(kiln_dtype_name(static_cast<kiln_dtype_t>(99)), "invalid");
}

//===-- The header is C ---------------------------------------------------===//

extern "C" int kilnCApiCheck(void);

TEST(RuntimeApiTest, HeaderCompilesAsC) { EXPECT_EQ(kilnCApiCheck(), 0); }

} // namespace
