//===- OnnxBackendTests.cpp - ONNX's backend test suite through kiln ------===//
//
// kiln-onnx-backend-tests [--data DIR] [--expected-failures FILE]
//                         [--jobs N] [--timeout SECONDS] [--filter TEXT]
//                         [--list-failures] [--verbose]
//
// Every test of ONNX's backend test data (DIR/{node,simple,pytorch-converted,
// pytorch-operator}/<test>/: model.onnx and test_data_set_*/input_N.pb,
// output_N.pb) is imported, compiled for the CPU, loaded with the runtime,
// called on each data set, and its outputs compared with the expected ones
// as ONNX's backend runner compares them (|actual - expected| <= 1e-7 +
// 1e-3 * |expected|, 2^-6 for bf16, NaN equal to NaN; integers and bools
// exactly).
//
// Each test runs in its own process (a crash or a hang fails that test
// alone), up to --jobs at a time. The expected-failures file lists, one per
// line, `<dir>/<test>  <reason>`: a listed test that fails is expected, a
// listed test that passes is reported as such and fails the run, as does
// any unlisted test that fails; so the list cannot go stale. The summary
// gives `N passed, M failed` and the pass rate per directory.
//
// Exit status: 0 when every test did what the list says, 1 otherwise, 2 for
// a malformed command line.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/Onnx/Import.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <poll.h>
#include <set>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct Options {
  std::string dataDir = "/usr/include/onnx/backend/test/data";
  std::string expectedFailures;
  std::string filter;
  unsigned jobs = 2;
  unsigned timeoutSeconds = 120;
  bool listFailures = false;
  bool verbose = false;
};

const char *const kSuites[] = {"node", "simple", "pytorch-converted",
                               "pytorch-operator"};

std::string readFile(const std::string &path, bool &ok) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  ok = static_cast<bool>(buffer);
  return ok ? (*buffer)->getBuffer().str() : std::string();
}

std::vector<std::string> listDir(const std::string &dir, bool dirs) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    bool isDir = llvm::sys::fs::is_directory(it->path());
    if (isDir == dirs)
      names.push_back(llvm::sys::path::filename(it->path()).str());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The runtime dtype of an element type the importer produced (every one
/// of them is a kiln element type).
kiln_dtype_t dtypeOf(mlir::Type type) {
  return static_cast<kiln_dtype_t>(*kiln::classifyElementType(type));
}

/// ONNX 1.12's test data holds bfloat16 tensors as uint16 ones with the same
/// bits (its numpy had no bfloat16). Such data is read as bfloat16 when the
/// model declares bfloat16 where the data has uint16.
mlir::DenseElementsAttr asDeclared(mlir::DenseElementsAttr data,
                                   mlir::Type declaredElement) {
  if (!declaredElement.isBF16() || !data.getElementType().isUnsignedInteger(16))
    return data;
  return data.bitcast(declaredElement);
}

/// The elements of a literal in the runtime's byte layout.
std::vector<uint8_t> toBytes(mlir::DenseElementsAttr attr) {
  mlir::Type element = attr.getElementType();
  std::vector<uint8_t> bytes;
  auto append = [&](const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  if (element.isInteger(1)) {
    for (bool v : attr.getValues<bool>())
      bytes.push_back(v ? 1 : 0);
  } else if (auto intType = mlir::dyn_cast<mlir::IntegerType>(element)) {
    // Little-endian: the low bytes of the value are the element.
    for (const llvm::APInt &v : attr.getValues<llvm::APInt>()) {
      uint64_t x = v.getZExtValue();
      append(&x, intType.getWidth() / 8);
    }
  } else {
    for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>()) {
      llvm::APInt bits = v.bitcastToAPInt();
      uint64_t raw = bits.getZExtValue();
      append(&raw, bits.getBitWidth() / 8);
    }
  }
  return bytes;
}

/// Compares one output; returns an empty string when it matches.
std::string compareOutput(kiln_tensor_t *actual, mlir::DenseElementsAttr expected,
                          const std::string &name) {
  auto type = mlir::cast<mlir::RankedTensorType>(expected.getType());
  size_t rank = kiln_tensor_rank(actual);
  const int64_t *shape = kiln_tensor_shape(actual);
  std::vector<int64_t> got(shape, shape + rank);
  if (got != std::vector<int64_t>(type.getShape().begin(),
                                  type.getShape().end()))
    return "output '" + name + "' has the wrong shape";
  if (kiln_tensor_dtype(actual) != dtypeOf(type.getElementType()))
    return "output '" + name + "' has the wrong element type";
  std::vector<uint8_t> want = toBytes(expected);
  const uint8_t *have = static_cast<const uint8_t *>(kiln_tensor_data(actual));
  mlir::Type element = type.getElementType();
  int64_t n = type.getNumElements();
  // f16 and bf16 widened to double and compared like the others, as
  // ONNX's runner compares them (bf16 within two of its ulps, 2^-6).
  double rtol = element.isBF16() ? 0x1p-6 : 1e-3;
  auto widen = [&](const uint8_t *bytes) {
    uint16_t raw;
    std::memcpy(&raw, bytes, 2);
    llvm::APFloat x(element.isBF16() ? llvm::APFloat::BFloat()
                                     : llvm::APFloat::IEEEhalf(),
                    llvm::APInt(16, raw));
    bool losesInfo;
    x.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return x.convertToDouble();
  };
  for (int64_t i = 0; i < n; ++i) {
    double a, e;
    if (element.isF16() || element.isBF16()) {
      a = widen(have + 2 * i);
      e = widen(want.data() + 2 * i);
    } else if (element.isF32()) {
      float x, y;
      std::memcpy(&x, have + 4 * i, 4);
      std::memcpy(&y, want.data() + 4 * i, 4);
      a = x, e = y;
    } else if (element.isF64()) {
      std::memcpy(&a, have + 8 * i, 8);
      std::memcpy(&e, want.data() + 8 * i, 8);
    } else {
      size_t width = kiln_dtype_size(kiln_tensor_dtype(actual));
      if (std::memcmp(have + width * i, want.data() + width * i, width))
        return "output '" + name + "' differs at element " + std::to_string(i);
      continue;
    }
    bool close = (std::isnan(a) && std::isnan(e)) || a == e ||
                 std::fabs(a - e) <= 1e-7 + rtol * std::fabs(e);
    if (!close)
      return "output '" + name + "' differs at element " + std::to_string(i) +
             ": " + std::to_string(a) + " instead of " + std::to_string(e);
  }
  return "";
}

/// One input of a data set: its name, its serialized TensorProto and the
/// literal.
struct DataInput {
  std::string name;
  std::string bytes;
  mlir::DenseElementsAttr value;
};

/// The test_data_set_* directories of a test, each with its inputs.
bool readDataSets(mlir::MLIRContext &context, const std::string &dir,
                  std::vector<std::pair<std::string, std::vector<DataInput>>> &sets,
                  std::string &error) {
  for (const std::string &set : listDir(dir, true)) {
    if (!llvm::StringRef(set).starts_with("test_data_set"))
      continue;
    std::vector<DataInput> inputs;
    for (unsigned i = 0;; ++i) {
      std::string path =
          dir + "/" + set + "/input_" + std::to_string(i) + ".pb";
      if (!llvm::sys::fs::exists(path))
        break;
      bool ok;
      DataInput input;
      input.bytes = readFile(path, ok);
      input.value = ok ? kiln::readOnnxTensor(input.bytes, context, input.name,
                                              error)
                       : nullptr;
      if (!input.value) {
        error = set + "/input_" + std::to_string(i) + ": " +
                (ok ? error : std::string("cannot be read"));
        return false;
      }
      inputs.push_back(std::move(input));
    }
    sets.emplace_back(set, std::move(inputs));
  }
  return true;
}

/// Runs one test; returns an empty string on success, else the reason.
/// When the model does not import as it is (it computes shapes, scales or
/// trip counts from its inputs), the inputs the importer names, or else all
/// integer and bool inputs, are bound to the values of the first data set (kiln::OnnxImportOptions::
/// boundInputs), provided every data set gives them the same values; a
/// pass then reports `bound: NAMES` on `note`.
std::string runTest(const std::string &dir, std::string &note) {
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (diagnostics.empty())
      diagnostics = d.str();
    return mlir::success();
  });
  std::string error;
  std::vector<std::pair<std::string, std::vector<DataInput>>> sets;
  std::string dataError;
  bool dataOk = readDataSets(context, dir, sets, dataError);
  kiln::OnnxImportOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::importOnnxFile(dir + "/model.onnx", context, options, error);
  // Data that is not tensors (sequences, optionals) goes with models the
  // importer rejects; their error says more.
  if (!dataOk)
    return module ? "data: " + dataError : "import: " + error;
  // Bind what the importer asks for: the input a "computed at run time"
  // error names, or, for other errors, every integer and bool input.
  bool boundIntegers = false;
  for (int attempt = 0; !module && !sets.empty() && attempt < 8; ++attempt) {
    std::vector<const DataInput *> chosen;
    size_t at = error.find("') is computed at run time");
    if (at != std::string::npos) {
      size_t open = error.rfind("('", at);
      std::string name = error.substr(open + 2, at - open - 2);
      for (const DataInput &input : sets.front().second)
        if (input.name == name && !options.boundInputs.count(name))
          chosen.push_back(&input);
    }
    if (chosen.empty() && !boundIntegers) {
      boundIntegers = true;
      for (const DataInput &input : sets.front().second)
        if (!mlir::isa<mlir::FloatType>(input.value.getElementType()) &&
            !options.boundInputs.count(input.name))
          chosen.push_back(&input);
    }
    if (chosen.empty())
      break;
    for (const DataInput *input : chosen) {
      for (const auto &set : sets)
        for (const DataInput &other : set.second)
          if (other.name == input->name && other.bytes != input->bytes)
            return "import: " + error +
                   " (and the data sets give it different values)";
      options.boundInputs[input->name] = input->bytes;
      note += (note.empty() ? "bound: " : ", ") + input->name;
    }
    error.clear();
    module = kiln::importOnnxFile(dir + "/model.onnx", context, options, error);
  }
  if (!module)
    return "import: " + error;
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  mlir::FunctionType fnType = func.getFunctionType();
  std::vector<std::string> argNames, resultNames;
  for (unsigned i = 0; i < fnType.getNumInputs(); ++i)
    argNames.push_back(
        func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name").str());
  std::vector<uint8_t> kmod;
  kiln::CompileOptions compileOptions;
  compileOptions.verifyEachPass = true;
  if (!kiln::compileToKmod(*module, compileOptions, kmod, error))
    return "compile: " + error + (diagnostics.empty() ? "" : ": " + diagnostics);
  kiln_module_t *loaded = nullptr;
  kiln_status_t status = kiln_module_load_memory(kmod.data(), kmod.size(),
                                                 &loaded);
  if (status)
    return std::string("load: ") + kiln_status_message(status);
  const kiln_function_t *function = kiln_module_function_at(loaded, 0);
  std::string failure;
  for (const auto &[set, data] : sets) {
    std::string setDir = dir + "/" + set;
    std::vector<kiln_tensor_t *> inputs;
    for (unsigned i = 0; i < fnType.getNumInputs(); ++i) {
      const DataInput *input = nullptr;
      for (const DataInput &d : data)
        if (d.name == argNames[i])
          input = &d;
      if (!input && i < data.size() && data[i].name.empty())
        input = &data[i];
      if (!input) {
        failure = "no data for input '" + argNames[i] + "'";
        break;
      }
      mlir::DenseElementsAttr value = asDeclared(
          input->value, mlir::cast<mlir::RankedTensorType>(fnType.getInput(i))
                            .getElementType());
      auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
      if (type != fnType.getInput(i)) {
        failure = "input '" + argNames[i] +
                  "' does not have the type the model declares";
        break;
      }
      std::vector<uint8_t> bytes = toBytes(value);
      kiln_tensor_t *t = nullptr;
      kiln_tensor_create(dtypeOf(type.getElementType()), type.getRank(),
                         type.getShape().data(), bytes.data(), &t);
      inputs.push_back(t);
    }
    std::vector<kiln_tensor_t *> outputs(fnType.getNumResults(), nullptr);
    if (failure.empty()) {
      status = kiln_function_call(function, inputs.data(), inputs.size(),
                                  outputs.data(), outputs.size());
      if (status)
        failure = std::string("call: ") + kiln_status_message(status);
    }
    for (unsigned i = 0; failure.empty() && i < outputs.size(); ++i) {
      bool ok;
      std::string bytes =
          readFile(setDir + "/output_" + std::to_string(i) + ".pb", ok);
      std::string name;
      mlir::DenseElementsAttr attr =
          ok ? kiln::readOnnxTensor(bytes, context, name, error) : nullptr;
      if (!attr)
        failure = "expected output " + std::to_string(i) + ": " +
                  (ok ? error : std::string("missing"));
      else
        failure = compareOutput(
            outputs[i],
            asDeclared(attr,
                       mlir::cast<mlir::RankedTensorType>(fnType.getResult(i))
                           .getElementType()),
            name);
    }
    for (kiln_tensor_t *t : inputs)
      kiln_tensor_release(t);
    for (kiln_tensor_t *t : outputs)
      if (t)
        kiln_tensor_release(t);
    if (!failure.empty()) {
      failure = set + ": " + failure;
      break;
    }
  }
  kiln_module_release(loaded);
  return failure;
}

struct Child {
  pid_t pid;
  int fd;
  std::string test;
  std::string output;
  std::chrono::steady_clock::time_point start;
};

/// One line: newlines become spaces, the test data's path goes, long
/// messages are cut.
std::string oneLine(std::string s) {
  for (size_t at; (at = s.find("/model.onnx: ")) != std::string::npos;) {
    size_t begin = s.rfind(' ', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    s.erase(begin, at + std::strlen("/model.onnx: ") - begin);
  }
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  if (s.size() > 300)
    s = s.substr(0, 297) + "...";
  return s;
}

int usage(const std::string &message) {
  llvm::errs() << "kiln-onnx-backend-tests: " << message << "\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--data" && value(v))
      options.dataDir = v;
    else if (arg == "--expected-failures" && value(v))
      options.expectedFailures = v;
    else if (arg == "--filter" && value(v))
      options.filter = v;
    else if (arg == "--jobs" && value(v) && llvm::to_integer(v, options.jobs) &&
             options.jobs > 0)
      continue;
    else if (arg == "--timeout" && value(v) &&
             llvm::to_integer(v, options.timeoutSeconds))
      continue;
    else if (arg == "--list-failures")
      options.listFailures = true;
    else if (arg == "--verbose")
      options.verbose = true;
    else if (arg == "--run-one" && value(v)) {
      std::string note;
      std::string failure = runTest(v, note);
      if (!failure.empty()) {
        llvm::outs() << failure << "\n";
        return 1;
      }
      return 0;
    } else
      return usage("bad argument '" + arg + "' (see the file header for usage)");
  }

  std::map<std::string, std::string> expected;
  if (!options.expectedFailures.empty()) {
    bool ok;
    std::string text = readFile(options.expectedFailures, ok);
    if (!ok)
      return usage("cannot read " + options.expectedFailures);
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(text).split(lines, '\n');
    for (llvm::StringRef line : lines) {
      line = line.trim();
      if (line.empty() || line.starts_with("#"))
        continue;
      auto [test, reason] = line.split(' ');
      expected[test.str()] = reason.trim().str();
    }
  }

  std::vector<std::string> tests;
  for (const char *suite : kSuites)
    for (const std::string &name :
         listDir(options.dataDir + "/" + suite, true)) {
      std::string test = std::string(suite) + "/" + name;
      if (options.filter.empty() ||
          test.find(options.filter) != std::string::npos)
        tests.push_back(test);
    }
  if (tests.empty())
    return usage("no tests found under " + options.dataDir);

  std::map<std::string, std::string> results; // test -> failure ("" = pass)
  std::set<std::string> bound; // passed with inputs bound to constants
  std::vector<Child> running;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && running.size() < options.jobs) {
      int fds[2];
      if (pipe(fds))
        return usage("pipe failed");
      const std::string &test = tests[next++];
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        std::string note;
        std::string failure = runTest(options.dataDir + "/" + test, note);
        std::string message = failure.empty() ? note : failure;
        ssize_t ignored = write(fds[1], message.data(), message.size());
        (void)ignored;
        _exit(failure.empty() ? 0 : 1);
      }
      close(fds[1]);
      running.push_back(
          {pid, fds[0], test, "", std::chrono::steady_clock::now()});
    }
    std::vector<pollfd> polls;
    for (Child &c : running)
      polls.push_back({c.fd, POLLIN, 0});
    poll(polls.data(), polls.size(), 200);
    for (size_t i = 0; i < running.size();) {
      Child &c = running[i];
      char buffer[4096];
      bool done = false;
      if (polls[i].revents & (POLLIN | POLLHUP)) {
        ssize_t n = read(c.fd, buffer, sizeof buffer);
        if (n > 0)
          c.output.append(buffer, n);
        else
          done = true;
      }
      auto elapsed = std::chrono::steady_clock::now() - c.start;
      bool timedOut = elapsed > std::chrono::seconds(options.timeoutSeconds);
      if (!done && !timedOut) {
        ++i;
        continue;
      }
      if (timedOut && !done)
        kill(c.pid, SIGKILL);
      int status = 0;
      waitpid(c.pid, &status, 0);
      close(c.fd);
      std::string failure;
      if (timedOut && !done)
        failure = "timed out after " + std::to_string(options.timeoutSeconds) +
                  " s";
      else if (WIFSIGNALED(status))
        failure = std::string("crashed: ") + strsignal(WTERMSIG(status));
      else if (WEXITSTATUS(status) != 0)
        failure = c.output.empty() ? "failed" : c.output;
      results[c.test] = oneLine(failure);
      if (failure.empty() && !c.output.empty())
        bound.insert(c.test);
      if (options.verbose)
        llvm::outs() << (failure.empty() ? "PASS " : "FAIL ") << c.test << "  "
                     << oneLine(failure.empty() ? c.output : failure) << "\n";
      running.erase(running.begin() + i);
      polls.erase(polls.begin() + i);
    }
  }

  std::map<std::string, std::pair<int, int>> perSuite; // passed, total
  int passed = 0, failed = 0, unexpected = 0;
  for (const auto &[test, failure] : results) {
    std::string suite = test.substr(0, test.find('/'));
    perSuite[suite].second++;
    bool listed = expected.count(test);
    if (failure.empty()) {
      ++passed;
      perSuite[suite].first++;
      if (listed) {
        ++unexpected;
        llvm::outs() << "UNEXPECTED PASS " << test
                     << " (remove it from the expected failures)\n";
      }
    } else {
      ++failed;
      if (options.listFailures)
        llvm::outs() << test << "  " << failure << "\n";
      else if (!listed) {
        ++unexpected;
        llvm::outs() << "UNEXPECTED FAIL " << test << "  " << failure << "\n";
      }
    }
  }
  if (options.listFailures)
    return 0;
  for (const auto &[suite, counts] : perSuite)
    llvm::outs() << llvm::formatv("{0,-18} {1,4} / {2,4} passed ({3:f1}%)\n",
                                  suite, counts.first, counts.second,
                                  100.0 * counts.first / counts.second);
  llvm::outs() << passed << " passed (" << bound.size()
               << " of them with shape inputs bound to constants), " << failed
               << " failed";
  if (unexpected)
    llvm::outs() << "; " << unexpected << " not as expected";
  llvm::outs() << "\n";
  return unexpected ? 1 : 0;
}
