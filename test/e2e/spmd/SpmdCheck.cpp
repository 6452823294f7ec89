//===- SpmdCheck.cpp - SPMD programs on MPI against simulated ranks -------===//
//
// Run as `mpirun -n N kiln-spmd-check PROGRAM.mlir` (or `--random K SEED`;
// with KILN_TEST_COMM=gloo, under test/unit/runtime/gloo_test.sh instead),
// every rank:
//   1. draws the inputs of every rank (the same seeds on every rank, so that
//      each knows them all) and evaluates the program on N simulated ranks
//      with the reference evaluator (kiln::evaluateSpmd);
//   2. compiles the program for the CPU, loads it, and calls it on its own
//      inputs through the MPI communicator;
//   3. compares its outputs with the evaluator's for its rank, within the
//      tolerance the CPU end-to-end tests use (TensorCompare.h).
// A rank that finds a mismatch exits with status 1; mpirun then fails.
//
// `--random K SEED` checks K programs it makes itself, each one collective
// of a random kind, element type, shape, dimension and replica grouping
// (the same on every rank: they share SEED), instead of a file.
//
// `--target=cuda` first compiles for CUDA instead: each rank runs on a GPU
// of its own, its collectives on device buffers through the NCCL plug-in,
// and compares within the GPU end-to-end tolerance. Without a CUDA driver
// or device, or with fewer devices than ranks on the machine, every rank
// prints SKIP and exits with 77 (a failure under KILN_REQUIRE_CUDA=1).
//
// A program with a line `// EXPECT-ERROR: <text>` must instead fail
// on every rank with a message containing <text> (a fault the runtime must
// report rather than hang on).
//
//===----------------------------------------------------------------------===//

#include "CudaAvailability.h"
#include "NativeModule.h"
#include "TensorCompare.h"

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <random>

using namespace kiln;

namespace {

int rankOf = 0;

/// What --target chose: how programs are compiled and compared.
CompileOptions compileOptions;
const test::Tolerance *tolerance = &test::kCpuTolerance;
/// GPU math differs from the host's in the last bits (as in the CUDA
/// end-to-end tests).
const test::Tolerance kGpuTolerance = {1e-4, 1e-5, 1e-11};

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "rank %d: %s\n", rankOf, message.c_str());
  std::exit(1);
}

/// Floats in [-2, 2] in steps of 1/16 (so sums of a few are exact in f32),
/// integers in [-8, 8].
HostTensor randomInput(mlir::RankedTensorType type, std::mt19937 &rng) {
  std::uniform_int_distribution<int> dist(-32, 32);
  int64_t n = type.getNumElements();
  if (mlir::isa<mlir::FloatType>(type.getElementType())) {
    std::vector<double> values(n);
    for (double &v : values)
      v = dist(rng) / 16.0;
    return HostTensor::fromFloats(type.getElementType(), type.getShape(),
                                  values);
  }
  std::vector<int64_t> values(n);
  for (int64_t &v : values)
    v = dist(rng) / 4;
  return HostTensor::fromInts(type.getElementType(), type.getShape(), values);
}

/// Checks every public function of `source`; returns how many it checked.
int checkProgram(const std::string &source, const std::string &name,
                 kiln_comm_t *comm, int ranks, unsigned seed) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context, name);
  if (!module)
    die(name + " does not parse:\n" + source);

  std::string expectError;
  llvm::StringRef marker = "// EXPECT-ERROR: ";
  if (size_t at = source.find(marker.str()); at != std::string::npos)
    expectError = llvm::StringRef(source)
                      .drop_front(at + marker.size())
                      .split('\n')
                      .first.str();

  test::NativeModule native(*module, compileOptions);
  if (!native.ok())
    die(name + " does not compile: " + native.error());

  int checked = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    std::vector<std::vector<HostTensor>> inputs(ranks);
    for (int r = 0; r < ranks; ++r) {
      std::mt19937 rng(seed * 7919 + r);
      for (mlir::Type type : func.getArgumentTypes())
        inputs[r].push_back(
            randomInput(mlir::cast<mlir::RankedTensorType>(type), rng));
    }
    std::vector<HostTensor> outputs;
    std::string error;
    bool called = native.call(func.getName().str(), func, inputs[rankOf],
                              outputs, error, comm);
    std::string where = name + " @" + func.getName().str();
    if (!expectError.empty()) {
      if (called)
        die(where + " succeeded but should fail with '" + expectError + "'");
      if (error.find(expectError) == std::string::npos)
        die(where + " failed with '" + error + "', expected '" +
            expectError + "'");
      ++checked;
      continue;
    }
    if (!called)
      die(where + " failed: " + error);
    auto expected = evaluateSpmd(func, inputs);
    if (!expected)
      die(where + ": the evaluator failed: " +
          llvm::toString(expected.takeError()));
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::string mismatch = test::compareTensors(
          (*expected)[rankOf][k], outputs[k], "this rank", tolerance);
      if (!mismatch.empty())
        die(where + " output #" + std::to_string(k) + ": " + mismatch +
            "\n" + source);
    }
    ++checked;
  }
  return checked;
}

/// One random collective on `ranks` ranks, as kiln IR.
std::string randomProgram(std::mt19937 &rng, int ranks) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char *elements[] = {"f32", "f64", "i32", "i64"};
  std::string element = elements[pick(4)];
  bool isFloat = element[0] == 'f';
  // Groups: one of all ranks, or pairs, in a shuffled order.
  std::vector<int> order(ranks);
  for (int r = 0; r < ranks; ++r)
    order[r] = r;
  std::shuffle(order.begin(), order.end(), rng);
  int groupSize = (ranks % 2 == 0 && pick(2)) ? 2 : ranks;
  std::string groups = "[";
  for (int g = 0; g < ranks / groupSize; ++g) {
    groups += g ? ", [" : "[";
    for (int k = 0; k < groupSize; ++k)
      groups += (k ? ", " : "") + std::to_string(order[g * groupSize + k]);
    groups += "]";
  }
  groups += "]";

  int rank = 1 + pick(3);
  int dim = pick(rank);
  std::vector<int64_t> shape(rank);
  for (int64_t &d : shape)
    d = 1 + pick(4);
  auto typeOf = [&](const std::vector<int64_t> &s) {
    std::string text = "tensor<";
    for (int64_t d : s)
      text += std::to_string(d) + "x";
    return text + element + ">";
  };
  std::vector<int64_t> in = shape, out = shape;
  std::string op;
  const char *kinds[] = {"sum", "max", "min", "mean"};
  std::string kind = kinds[pick(isFloat ? 4 : 3)];
  switch (pick(6)) {
  case 0:
    op = llvm::formatv("kiln.all_reduce %x, kind = {0}, groups = {1} : {2}",
                       kind, groups, typeOf(in));
    break;
  case 1:
    out[dim] *= groupSize;
    op = llvm::formatv(
        "kiln.all_gather %x, dim = {0}, groups = {1} : ({2}) -> {3}", dim,
        groups, typeOf(in), typeOf(out));
    break;
  case 2:
    in[dim] *= groupSize;
    op = llvm::formatv("kiln.reduce_scatter %x, kind = {0}, dim = {1}, "
                       "groups = {2} : ({3}) -> {4}",
                       kind, dim, groups, typeOf(in), typeOf(out));
    break;
  case 3:
    op = llvm::formatv(
        "kiln.collective_broadcast %x, root = {0}, groups = {1} : {2}",
        pick(groupSize), groups, typeOf(in));
    break;
  case 4: {
    int concat = pick(rank);
    in[dim] *= groupSize;
    out = in;
    out[dim] /= groupSize;
    out[concat] *= groupSize;
    op = llvm::formatv("kiln.all_to_all %x, split_dim = {0}, concat_dim = "
                       "{1}, groups = {2} : ({3}) -> {4}",
                       dim, concat, groups, typeOf(in), typeOf(out));
    break;
  }
  default: {
    // A random partial permutation.
    std::string pairs;
    for (int r = 0; r < ranks; ++r)
      if (pick(3))
        pairs += (pairs.empty() ? "" : ", ") + std::to_string(r) + ", " +
                 std::to_string(order[r]);
    op = llvm::formatv("kiln.collective_permute %x, pairs = [{0}] : {1}",
                       pairs, typeOf(in));
  }
  }
  return llvm::formatv("func.func @main(%x: {0}) -> {1} {{\n"
                       "  %y = {2}\n"
                       "  return %y : {1}\n"
                       "}\n",
                       typeOf(in), typeOf(out), op);
}

} // namespace

/// Exits with 77 (SKIP) where this machine cannot run every rank of the
/// run on a CUDA device of its own, before MPI is initialized; fails
/// instead under KILN_REQUIRE_CUDA=1.
void requireCudaDevices() {
  test::CudaDecision cuda = test::checkCudaForTest();
  if (cuda.verdict == test::CudaVerdict::Fail)
    die(cuda.reason);
  std::string reason = cuda.reason;
  if (cuda.verdict == test::CudaVerdict::Run) {
    int64_t devices = 0;
    if (kiln_status_t status = kiln_device_count(KILN_DEVICE_CUDA, &devices)) {
      std::string message = kiln_status_message(status);
      kiln_status_free(status);
      die(message);
    }
    // The ranks on this machine, as OpenMPI counts them.
    const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    int64_t ranks = local ? std::atol(local) : 1;
    if (devices >= ranks)
      return;
    reason = std::to_string(ranks) + " ranks on this machine need a CUDA "
             "device each; it has " + std::to_string(devices);
    if (test::cudaRequiredByEnvironment())
      die(reason + " (KILN_REQUIRE_CUDA is set)");
  }
  std::printf("SKIP: %s\n", reason.c_str());
  std::exit(77);
}

int main(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "--target=cuda") {
    compileOptions.target = Target::Cuda;
    tolerance = &kGpuTolerance;
    requireCudaDevices();
    --argc;
    ++argv;
  }
  bool random = argc >= 4 && argc <= 5 && std::string(argv[1]) == "--random";
  if (argc != 2 && !random) {
    std::fprintf(stderr,
                 "usage: mpirun -n N kiln-spmd-check [--target=cuda] "
                 "PROGRAM.mlir\n"
                 "       mpirun -n N kiln-spmd-check [--target=cuda] --random "
                 "K SEED [FIRST]\n"
                 "(FIRST: check only programs FIRST.., e.g. to rerun a "
                 "failure)\n");
    return 2;
  }
  // KILN_TEST_COMM=gloo: ranks that meet through a store, as
  // test/unit/runtime/gloo_test.sh starts them.
  const char *engine = std::getenv("KILN_TEST_COMM");
  bool gloo = engine && std::string(engine) == "gloo";
  kiln_comm_t *comm = nullptr;
  if (kiln_status_t status = gloo ? kiln_comm_create_gloo(&comm)
                                  : kiln_comm_create_mpi(&comm)) {
    std::fprintf(stderr, "cannot open the %s communicator: %s\n",
                 gloo ? "Gloo" : "MPI", kiln_status_message(status));
    kiln_status_free(status);
    return 1;
  }
  rankOf = static_cast<int>(kiln_comm_rank(comm));
  int ranks = static_cast<int>(kiln_comm_size(comm));

  int checked = 0;
  if (argc == 2) {
    auto buffer = llvm::MemoryBuffer::getFile(argv[1]);
    if (!buffer)
      die(std::string("cannot read ") + argv[1]);
    for (unsigned seed = 1; seed <= 2; ++seed)
      checked += checkProgram((*buffer)->getBuffer().str(), argv[1], comm,
                              ranks, seed);
  } else {
    int count = std::atoi(argv[2]);
    int first = argc == 5 ? std::atoi(argv[4]) : 0;
    std::mt19937 rng(std::strtoul(argv[3], nullptr, 10));
    for (int k = 0; k < count; ++k) {
      std::string program = randomProgram(rng, ranks);
      if (k >= first && std::getenv("KILN_SPMD_PRINT") && rankOf == 0)
        std::printf("random-%d.mlir:\n%s", k, program.c_str());
      if (k >= first)
        checked += checkProgram(
            program, "random-" + std::to_string(k) + ".mlir", comm, ranks,
            k + 1);
    }
  }
  if (rankOf == 0)
    std::printf("%d ranks: %d functions match the evaluator\n", ranks,
                checked);
  kiln_comm_release(comm);
  return checked > 0 ? 0 : 1;
}
