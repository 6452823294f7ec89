//===- NcclPluginTest.cpp - The device communicator plug-in over NCCL ----===//
//
// Loads libkiln_comm_nccl.so as the runtime does and checks its table: what
// it refuses before touching a group, how a group fails to form without a
// usable GPU, and, where there is one, every kind of collective over a
// group of one rank.
//
//===----------------------------------------------------------------------===//

#include "comm/DeviceCommPlugin.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

using kiln::ElementType;

namespace {

/// The CUDA driver, reached as the plug-in reaches it, for telling whether
/// this machine has a usable GPU and for giving a group device buffers.
struct Cuda {
  using CUresult = int;
  using CUdeviceptr = unsigned long long;
  using CUcontext = void *;
  using CUstream = void *;

  CUresult (*init)(unsigned) = nullptr;
  CUresult (*deviceGetCount)(int *) = nullptr;
  CUresult (*deviceGet)(int *, int) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext *, int) = nullptr;
  CUresult (*primaryCtxRelease)(int) = nullptr;
  CUresult (*ctxPushCurrent)(CUcontext) = nullptr;
  CUresult (*ctxPopCurrent)(CUcontext *) = nullptr;
  CUresult (*memAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*memFree)(CUdeviceptr) = nullptr;
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*streamCreate)(CUstream *, unsigned) = nullptr;
  CUresult (*streamSynchronize)(CUstream) = nullptr;
  CUresult (*streamDestroy)(CUstream) = nullptr;

  /// True if the driver loads, initializes and sees at least one device.
  bool usable = false;

  Cuda() {
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return;
    bool complete = resolve(handle, init, "cuInit") &&
                    resolve(handle, deviceGetCount, "cuDeviceGetCount") &&
                    resolve(handle, deviceGet, "cuDeviceGet") &&
                    resolve(handle, primaryCtxRetain,
                            "cuDevicePrimaryCtxRetain") &&
                    resolve(handle, primaryCtxRelease,
                            "cuDevicePrimaryCtxRelease_v2") &&
                    resolve(handle, ctxPushCurrent, "cuCtxPushCurrent_v2") &&
                    resolve(handle, ctxPopCurrent, "cuCtxPopCurrent_v2") &&
                    resolve(handle, memAlloc, "cuMemAlloc_v2") &&
                    resolve(handle, memFree, "cuMemFree_v2") &&
                    resolve(handle, memcpyHtoD, "cuMemcpyHtoD_v2") &&
                    resolve(handle, memcpyDtoH, "cuMemcpyDtoH_v2") &&
                    resolve(handle, streamCreate, "cuStreamCreate") &&
                    resolve(handle, streamSynchronize,
                            "cuStreamSynchronize") &&
                    resolve(handle, streamDestroy, "cuStreamDestroy_v2");
    int devices = 0;
    usable = complete && init(0) == 0 && deviceGetCount(&devices) == 0 &&
             devices > 0;
  }

  template <typename Function>
  static bool resolve(void *handle, Function &function, const char *name) {
    function = reinterpret_cast<Function>(dlsym(handle, name));
    return function != nullptr;
  }
};

const Cuda &cuda() {
  static const Cuda instance;
  return instance;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

class NcclPluginTest : public ::testing::Test {
protected:
  void SetUp() override {
    handle = dlopen(KILN_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    auto entry = reinterpret_cast<kiln_device_comm_plugin_entry_fn>(
        dlsym(handle, KILN_DEVICE_COMM_PLUGIN_ENTRY));
    ASSERT_NE(entry, nullptr) << "no " KILN_DEVICE_COMM_PLUGIN_ENTRY;
    plugin = entry();
    ASSERT_NE(plugin, nullptr);
  }

  /// The message of a start() on `group` that must fail.
  std::string refusal(void *group, int32_t kind, int32_t reduction,
                      int32_t dtype, int64_t count = 4) {
    kiln_device_comm_collective_t collective = {};
    collective.kind = kind;
    collective.reduction = reduction;
    collective.dtype = dtype;
    collective.count = count;
    collective.send_to = -1;
    collective.recv_from = -1;
    char error[512];
    std::memset(error, 'x', sizeof(error));
    if (plugin->start(group, &collective, error, sizeof(error)) == 0)
      return "(start succeeded)";
    EXPECT_NE(std::memchr(error, '\0', sizeof(error)), nullptr);
    return error;
  }

  void *handle = nullptr;
  const kiln_device_comm_plugin_t *plugin = nullptr;
};

TEST_F(NcclPluginTest, TableDescribesNccl) {
  EXPECT_EQ(plugin->version, unsigned(KILN_DEVICE_COMM_PLUGIN_VERSION));
  ASSERT_NE(plugin->name, nullptr);
  EXPECT_STREQ(plugin->name, "nccl");
  EXPECT_GT(plugin->id_bytes, 0);
  EXPECT_LE(plugin->id_bytes, KILN_DEVICE_COMM_MAX_ID_BYTES);
  EXPECT_NE(plugin->make_id, nullptr);
  EXPECT_NE(plugin->create, nullptr);
  EXPECT_NE(plugin->destroy, nullptr);
  EXPECT_NE(plugin->start, nullptr);
}

TEST_F(NcclPluginTest, MakeIdWritesAFreshIdOrExplains) {
  unsigned char first[KILN_DEVICE_COMM_MAX_ID_BYTES],
      second[KILN_DEVICE_COMM_MAX_ID_BYTES];
  std::memset(first, 0xab, sizeof(first));
  std::memset(second, 0xab, sizeof(second));
  char error[512] = "";
  if (plugin->make_id(first, error, sizeof(error)) != 0) {
    EXPECT_STRNE(error, "");
    return;
  }
  ASSERT_EQ(plugin->make_id(second, error, sizeof(error)), 0) << error;
  // Two groups never share an id...
  EXPECT_NE(std::memcmp(first, second, plugin->id_bytes), 0);
  // ...and nothing past id_bytes is written.
  for (size_t i = plugin->id_bytes; i < sizeof(first); ++i)
    ASSERT_EQ(first[i], 0xab) << "byte " << i;
}

TEST_F(NcclPluginTest, RefusesReductionsOf16BitIntegers) {
  std::string message =
      refusal(nullptr, KILN_COLLECTIVE_ALL_REDUCE, KILN_REDUCTION_SUM,
              int32_t(ElementType::I16));
  EXPECT_TRUE(contains(message, "i16")) << message;
  EXPECT_TRUE(contains(message, "NCCL has no 16-bit integer type")) << message;
  message = refusal(nullptr, KILN_COLLECTIVE_REDUCE_SCATTER, KILN_REDUCTION_MAX,
                    int32_t(ElementType::UI16));
  EXPECT_TRUE(contains(message, "ui16")) << message;
  EXPECT_TRUE(contains(message, "reduce-scatter")) << message;
}

TEST_F(NcclPluginTest, Moves16BitIntegersAsBytes) {
  // Past the element type check, the collective reaches the missing group.
  for (int32_t kind : {KILN_COLLECTIVE_ALL_GATHER, KILN_COLLECTIVE_BROADCAST,
                       KILN_COLLECTIVE_ALL_TO_ALL, KILN_COLLECTIVE_PERMUTE}) {
    std::string message =
        refusal(nullptr, kind, 0, int32_t(ElementType::I16));
    EXPECT_TRUE(contains(message, "without a group")) << message;
  }
}

TEST_F(NcclPluginTest, NamesWhatItDoesNotKnow) {
  EXPECT_TRUE(contains(refusal(nullptr, 42, 0, int32_t(ElementType::F32)),
                       "unknown collective kind 42"));
  EXPECT_TRUE(contains(
      refusal(nullptr, KILN_COLLECTIVE_ALL_GATHER, 0, 99),
      "unknown element type code 99"));
  EXPECT_TRUE(contains(refusal(nullptr, KILN_COLLECTIVE_ALL_GATHER, 0, -1),
                       "unknown element type code -1"));
  EXPECT_TRUE(contains(refusal(nullptr, KILN_COLLECTIVE_ALL_REDUCE, 7,
                               int32_t(ElementType::F32)),
                       "unknown reduction code 7"));
  // Kinds without a reduction ignore the field.
  EXPECT_TRUE(contains(refusal(nullptr, KILN_COLLECTIVE_BROADCAST, 7,
                               int32_t(ElementType::F32)),
                       "without a group"));
  EXPECT_TRUE(contains(refusal(nullptr, KILN_COLLECTIVE_ALL_GATHER, 0,
                               int32_t(ElementType::F32), -3),
                       "-3 elements"));
}

TEST_F(NcclPluginTest, TruncatesMessagesToTheBuffer) {
  kiln_device_comm_collective_t collective = {};
  collective.kind = 42;
  char error[8];
  std::memset(error, 'x', sizeof(error));
  EXPECT_NE(plugin->start(nullptr, &collective, error, 5), 0);
  EXPECT_STREQ(error, "nccl");
  EXPECT_EQ(error[5], 'x');
  // A zero-sized buffer is left alone.
  EXPECT_NE(plugin->start(nullptr, &collective, error, 0), 0);
  EXPECT_EQ(error[5], 'x');
}

TEST_F(NcclPluginTest, RefusesARankOutsideTheGroup) {
  unsigned char id[KILN_DEVICE_COMM_MAX_ID_BYTES] = {};
  void *group = nullptr;
  char error[512] = "";
  EXPECT_NE(plugin->create(&group, id, 1, 1, error, sizeof(error)), 0);
  EXPECT_TRUE(contains(error, "rank 1 of 1")) << error;
  EXPECT_NE(plugin->create(&group, id, 0, 0, error, sizeof(error)), 0);
  EXPECT_EQ(group, nullptr);
}

TEST_F(NcclPluginTest, CreateWithoutAGpuFailsWithNcclsReason) {
  if (cuda().usable)
    GTEST_SKIP() << "this machine has a usable GPU";
  unsigned char id[KILN_DEVICE_COMM_MAX_ID_BYTES] = {};
  char error[512] = "";
  if (plugin->make_id(id, error, sizeof(error)) != 0)
    GTEST_SKIP() << "NCCL makes no id here: " << error;
  void *group = nullptr;
  EXPECT_NE(plugin->create(&group, id, 1, 0, error, sizeof(error)), 0);
  EXPECT_EQ(group, nullptr);
  EXPECT_TRUE(contains(error, "ncclCommInitRank failed: ")) << error;
}

//===----------------------------------------------------------------------===//
// With a GPU: a group of one rank
//===----------------------------------------------------------------------===//

class NcclGpuTest : public NcclPluginTest {
protected:
  void SetUp() override {
    NcclPluginTest::SetUp();
    if (HasFatalFailure())
      return;
    if (!cuda().usable)
      GTEST_SKIP() << "no usable GPU";
    ASSERT_EQ(cuda().deviceGet(&device, 0), 0);
    ASSERT_EQ(cuda().primaryCtxRetain(&context, device), 0);
    ASSERT_EQ(cuda().ctxPushCurrent(context), 0);
    ASSERT_EQ(cuda().streamCreate(&stream, 0), 0);
    unsigned char id[KILN_DEVICE_COMM_MAX_ID_BYTES];
    char error[512] = "";
    ASSERT_EQ(plugin->make_id(id, error, sizeof(error)), 0) << error;
    ASSERT_EQ(plugin->create(&group, id, 1, 0, error, sizeof(error)), 0)
        << error;
    ASSERT_NE(group, nullptr);
  }

  void TearDown() override {
    if (group)
      plugin->destroy(group);
    if (stream)
      cuda().streamDestroy(stream);
    if (context) {
      Cuda::CUcontext popped;
      cuda().ctxPopCurrent(&popped);
      cuda().primaryCtxRelease(device);
    }
  }

  /// Runs one collective on `input` (elements of `dtype`, as bytes) into
  /// an output of `outputBytes` that starts out as 0x5a bytes, and returns
  /// the output, or the message of a failed start.
  std::vector<unsigned char> run(kiln_device_comm_collective_t collective,
                                 const std::vector<unsigned char> &input,
                                 size_t outputBytes, std::string &message) {
    Cuda::CUdeviceptr in = 0, out = 0;
    std::vector<unsigned char> output(outputBytes, 0x5a);
    EXPECT_EQ(cuda().memAlloc(&in, input.size()), 0);
    EXPECT_EQ(cuda().memAlloc(&out, outputBytes), 0);
    EXPECT_EQ(cuda().memcpyHtoD(in, input.data(), input.size()), 0);
    EXPECT_EQ(cuda().memcpyHtoD(out, output.data(), outputBytes), 0);
    collective.input = reinterpret_cast<const void *>(in);
    collective.output = reinterpret_cast<void *>(out);
    collective.stream = stream;
    char error[512] = "";
    if (plugin->start(group, &collective, error, sizeof(error)) != 0)
      message = error;
    EXPECT_EQ(cuda().streamSynchronize(stream), 0);
    EXPECT_EQ(cuda().memcpyDtoH(output.data(), out, outputBytes), 0);
    cuda().memFree(in);
    cuda().memFree(out);
    return output;
  }

  static kiln_device_comm_collective_t collective(int32_t kind, ElementType type,
                                                  int64_t count) {
    kiln_device_comm_collective_t result = {};
    result.kind = kind;
    result.dtype = int32_t(type);
    result.count = count;
    result.send_to = -1;
    result.recv_from = -1;
    return result;
  }

  int device = 0;
  Cuda::CUcontext context = nullptr;
  Cuda::CUstream stream = nullptr;
  void *group = nullptr;
};

std::vector<unsigned char> bytesOf(const void *data, size_t size) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  return std::vector<unsigned char>(bytes, bytes + size);
}

TEST_F(NcclGpuTest, EveryKindOverOneRankCopiesItsInput) {
  const float floats[4] = {1.5f, -2.0f, 3.25f, 0.0f};
  const int16_t shorts[4] = {-1, 2, -300, 4000};
  const uint8_t bools[4] = {1, 0, 0, 1};
  struct Case {
    int32_t kind;
    ElementType type;
    const void *data;
  } cases[] = {
      {KILN_COLLECTIVE_ALL_REDUCE, ElementType::F32, floats},
      {KILN_COLLECTIVE_ALL_REDUCE, ElementType::I1, bools},
      {KILN_COLLECTIVE_REDUCE_SCATTER, ElementType::F32, floats},
      {KILN_COLLECTIVE_ALL_GATHER, ElementType::I16, shorts},
      {KILN_COLLECTIVE_BROADCAST, ElementType::UI16, shorts},
      {KILN_COLLECTIVE_ALL_TO_ALL, ElementType::I16, shorts},
      {KILN_COLLECTIVE_PERMUTE, ElementType::F32, floats},
  };
  for (const Case &test : cases) {
    SCOPED_TRACE(std::string("kind ") + std::to_string(test.kind) + " of " +
                 kiln::elementTypeName(test.type));
    auto input = bytesOf(test.data, 4 * kiln::elementTypeSize(test.type));
    auto call = collective(test.kind, test.type, 4);
    call.send_to = call.recv_from = 0;
    std::string message;
    EXPECT_EQ(run(call, input, input.size(), message), input);
    EXPECT_EQ(message, "");
  }
}

TEST_F(NcclGpuTest, PermuteWithoutASourceZeroesTheOutput) {
  const int32_t values[3] = {7, 8, 9};
  auto call = collective(KILN_COLLECTIVE_PERMUTE, ElementType::I32, 3);
  std::string message;
  EXPECT_EQ(run(call, bytesOf(values, sizeof(values)), sizeof(values), message),
            std::vector<unsigned char>(sizeof(values), 0));
  EXPECT_EQ(message, "");
}

TEST_F(NcclGpuTest, RefusesARootOutsideTheGroup) {
  const float values[2] = {1, 2};
  auto call = collective(KILN_COLLECTIVE_BROADCAST, ElementType::F32, 2);
  call.root = 1;
  std::string message;
  run(call, bytesOf(values, sizeof(values)), sizeof(values), message);
  EXPECT_TRUE(contains(message, "broadcast from rank 1 of a group of 1"))
      << message;
}

} // namespace
