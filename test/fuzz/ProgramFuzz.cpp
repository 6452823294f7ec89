//===- ProgramFuzz.cpp - kiln-program-fuzz: random programs, differential -===//
//
// For each seed of a range, generates a program (ProgramGenerator.h) and
// checks it (DifferentialCheck.h) in a child process, so that a crash or a
// hang in the compiler is reported for its seed and the campaign goes on.
// With --reduce, each failing program is shrunk (ProgramReducer.h) to a
// small one that fails the same checks the same way, and written out.
//
//===----------------------------------------------------------------------===//

#include "CudaAvailability.h"
#include "DifferentialCheck.h"
#include "ProgramGenerator.h"
#include "ProgramReducer.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

const char *outcomeName(Outcome outcome) {
  switch (outcome) {
  case Mismatch:
    return "mismatch";
  case CompileFailure:
    return "compile failure";
  case Unsupported:
    return "unsupported";
  case GeneratorError:
    return "generator error";
  }
  return "?";
}

/// How one program failed: "where: kind" for every finding, a crash or a
/// timeout attributed to the check that was running. Two runs fail "the
/// same way" when their signatures are equal.
using Signature = std::set<std::string>;

struct Run {
  int outcome = 0;
  Signature signature;
  std::map<std::string, unsigned> counts;
};

struct Driver {
  DifferentialCheck checker;
  GeneratorOptions generator;
  unsigned timeout = 120;
  bool verbose = false;

  /// Checks `text` on the inputs of `inputSeed` in a child process. With
  /// `seedForReport` set, prints each finding as "seed N: where: detail".
  Run run(const std::string &text, uint64_t inputSeed,
          std::optional<uint64_t> seedForReport);
};

Run Driver::run(const std::string &text, uint64_t inputSeed,
                std::optional<uint64_t> seedForReport) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(2);
  }
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
    close(fds[0]);
    FILE *channel = fdopen(fds[1], "w");
    alarm(timeout);
    checker.onBegin = [&](const std::string &where) {
      std::fprintf(channel, "begin\t%s\n", where.c_str());
      std::fflush(channel);
    };
    checker.onFinding = [&](const Finding &f) {
      std::fprintf(channel, "finding\t%s\t%s\n", f.where.c_str(),
                   outcomeName(f.outcome));
      std::fflush(channel);
      if (seedForReport) {
        std::printf("seed %llu: %s: %s\n",
                    (unsigned long long)*seedForReport, f.where.c_str(),
                    f.detail.c_str());
        std::fflush(stdout);
      }
    };
    checker.onCount = [&](const std::string &what, unsigned n) {
      std::fprintf(channel, "count\t%s\t%u\n", what.c_str(), n);
    };
    int outcome = checker.check(text, inputSeed);
    std::fflush(stdout);
    std::fclose(channel);
    _exit(outcome);
  }
  close(fds[1]);
  Run result;
  std::string lastBegun = "check";
  {
    FILE *channel = fdopen(fds[0], "r");
    char line[4096];
    while (std::fgets(line, sizeof line, channel)) {
      std::string s(line);
      if (!s.empty() && s.back() == '\n')
        s.pop_back();
      std::vector<std::string> fields;
      std::stringstream in(s);
      for (std::string field; std::getline(in, field, '\t');)
        fields.push_back(field);
      if (fields.size() == 2 && fields[0] == "begin")
        lastBegun = fields[1];
      else if (fields.size() == 3 && fields[0] == "count")
        result.counts[fields[1]] += std::strtoul(fields[2].c_str(), nullptr, 10);
      else if (fields.size() == 3 && fields[0] == "finding")
        result.signature.insert(fields[1] + ": " + fields[2]);
    }
    std::fclose(channel);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) {
    result.outcome = WEXITSTATUS(status);
  } else {
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    const char *what = sig == SIGALRM ? "timeout" : "crash";
    if (seedForReport)
      std::printf("seed %llu: %s: %s (signal %d)\n",
                  (unsigned long long)*seedForReport, lastBegun.c_str(), what,
                  sig);
    result.signature.insert(lastBegun + ": " + what);
    result.outcome = CompileFailure;
  }
  return result;
}

/// The checks a signature names, which are all a reduction needs to run.
std::set<std::string> checksOf(const Signature &signature) {
  std::set<std::string> checks;
  for (const std::string &s : signature)
    checks.insert(s.substr(0, s.find(": ")));
  return checks;
}

/// Reduces `text`, which fails as `failure` on the inputs of `inputSeed`,
/// and writes the result to `path`.
void reduceAndWrite(Driver &driver, const std::string &text,
                    uint64_t inputSeed, const Signature &failure,
                    const std::string &origin, const std::string &path,
                    unsigned maxTries) {
  driver.checker.only = checksOf(failure);
  ReduceStats stats;
  std::string reduced = reduceProgram(
      text,
      [&](const std::string &candidate) {
        return driver.run(candidate, inputSeed, std::nullopt).signature ==
               failure;
      },
      maxTries, stats);
  driver.checker.only.clear(); // every check again for the next seed
  std::string failing;
  for (const std::string &s : failure)
    failing += (failing.empty() ? "" : "; ") + s;
  std::ofstream out(path);
  out << "// kiln-program-fuzz --reduce: " << origin << ", on the inputs of "
      << "seed " << inputSeed << " (--file " << path << " --seeds "
      << inputSeed << ":" << inputSeed + 1 << ")\n"
      << "// fails: " << failing << "\n"
      << "// " << stats.opsBefore << " ops reduced to " << stats.opsAfter
      << " (" << stats.tries << " candidates checked, " << stats.kept
      << " kept)\n"
      << reduced;
  out.close();
  if (!out)
    std::printf("reduced %s: %u ops -> %u ops, but it cannot be written to "
                "%s\n%s",
                origin.c_str(), stats.opsBefore, stats.opsAfter, path.c_str(),
                reduced.c_str());
  else
    std::printf("reduced %s: %u ops -> %u ops (%u candidates checked): %s\n",
                origin.c_str(), stats.opsBefore, stats.opsAfter, stats.tries,
                path.c_str());
  std::fflush(stdout);
}

/// Whether a signature is worth reducing: something other than the
/// generator's own errors.
bool reducible(const Signature &signature) {
  for (const std::string &s : signature)
    if (s.find("generator error") == std::string::npos &&
        s.find("unsupported") == std::string::npos)
      return true;
  return false;
}

bool parseSeeds(const char *text, uint64_t &begin, uint64_t &end) {
  const char *colon = std::strchr(text, ':');
  if (!colon)
    return false;
  char *stop = nullptr;
  begin = std::strtoull(text, &stop, 10);
  if (stop != colon)
    return false;
  end = std::strtoull(colon + 1, &stop, 10);
  return *stop == '\0' && begin <= end;
}

bool parseCount(const char *text, unsigned &value) {
  char *stop = nullptr;
  unsigned long v = std::strtoul(text, &stop, 10);
  if (!*text || *stop)
    return false;
  value = static_cast<unsigned>(v);
  return true;
}

void usage() {
  std::fprintf(
      stderr,
      "usage: kiln-program-fuzz --seeds A:B [--keep DIR] [--reduce DIR]\n"
      "                         [--grad] [--verbose] [--timeout SECONDS]\n"
      "                         [--perturb] [--large-percent P] [--max-ops N]\n"
      "                         [--reduce-tries N] [--progress N]\n"
      "                         [--cuda | --cuda-on-cpu]\n"
      "       kiln-program-fuzz --print SEED\n"
      "       kiln-program-fuzz --file PROGRAM.mlir [--seeds A:B]\n"
      "                         [--reduce DIR] [--grad]\n"
      "Generates one random kiln program per seed in [A, B), evaluates it\n"
      "with the reference evaluator and compares the CPU backend's results\n"
      "under several option sets. --grad also checks kiln-grad's gradient\n"
      "against central differences, and the compiled gradient.\n"
      "--keep writes each failing program to DIR/seed-N.mlir; --reduce\n"
      "shrinks each one to a small program that fails the same way and\n"
      "writes it to DIR/seed-N.reduced.mlir (at most --reduce-tries\n"
      "checked candidates, 400 by default). --progress N prints the counts\n"
      "so far every N programs. --print writes one program to\n"
      "stdout and exits; --file checks one program (its @main) the same\n"
      "way, on the inputs of seeds A to B (default 0:1).\n"
      "--large-percent and --max-ops change the generator's options (the\n"
      "share of programs with a shape of more than 65536 elements, 8 by\n"
      "default; the most ops per program, 24 by default).\n"
      "--perturb moves one element of each native output slightly, which\n"
      "must be reported as a mismatch (a check of the checker).\n"
      "--cuda compares the CUDA backend's results instead (fused and not,\n"
      "on this machine's GPU, with the GPU's tolerance); without a CUDA\n"
      "driver or device it exits with status 77 (a failure under\n"
      "KILN_REQUIRE_CUDA=1). --cuda-on-cpu compares the CUDA backend's\n"
      "kernels run on the host (--target=cuda-on-cpu, fused and not, with\n"
      "the GPU's tolerance), on any machine.\n"
      "Exit status 1 on any mismatch, compile failure or generator error.\n");
}

/// Whether --cuda can run: the device is checked in a child process, as
/// every program is, since a CUDA context does not survive fork(). Returns
/// the exit status to stop with (77 without a device, so that a suite
/// reports a skip; 2 for a device that fails), or -1 to go on.
int checkCudaInChild() {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    return 2;
  }
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 2;
  }
  if (pid == 0) {
    close(fds[0]);
    CudaDecision decision = checkCudaForTest();
    ssize_t written =
        write(fds[1], decision.reason.data(), decision.reason.size());
    (void)written;
    close(fds[1]);
    _exit(static_cast<int>(decision.verdict));
  }
  close(fds[1]);
  std::string reason;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;)
    reason.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) {
    std::fprintf(stderr, "kiln-program-fuzz: --cuda: the device check "
                         "crashed\n");
    return 2;
  }
  switch (static_cast<CudaVerdict>(WEXITSTATUS(status))) {
  case CudaVerdict::Run:
    return -1;
  case CudaVerdict::Skip:
    std::printf("kiln-program-fuzz: --cuda: skipped: %s\n", reason.c_str());
    return 77;
  case CudaVerdict::Fail:
    break;
  }
  std::fprintf(stderr, "kiln-program-fuzz: --cuda: %s\n", reason.c_str());
  return 2;
}

std::string readFile(const char *path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

} // namespace

int main(int argc, char **argv) {
  Driver driver;
  uint64_t begin = 0, end = 0;
  bool haveSeeds = false;
  std::vector<uint64_t> printSeeds;
  std::string file, filePath, keepDir, reduceDir;
  unsigned reduceTries = 400, progress = 0;
  bool cuda = false, cudaOnCpu = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    unsigned count = 0;
    if (arg == "--seeds" && hasValue) {
      if (!parseSeeds(argv[++i], begin, end)) {
        std::fprintf(stderr, "kiln-program-fuzz: --seeds takes A:B, A <= B\n");
        return 2;
      }
      haveSeeds = true;
    } else if (arg == "--keep" && hasValue) {
      keepDir = argv[++i];
    } else if (arg == "--reduce" && hasValue) {
      reduceDir = argv[++i];
    } else if ((arg == "--timeout" || arg == "--print" ||
                arg == "--large-percent" || arg == "--max-ops" ||
                arg == "--reduce-tries" || arg == "--progress") &&
               hasValue) {
      if (!parseCount(argv[++i], count)) {
        std::fprintf(stderr, "kiln-program-fuzz: %s takes a number, not '%s'\n",
                     arg.c_str(), argv[i]);
        return 2;
      }
      if (arg == "--timeout")
        driver.timeout = count;
      else if (arg == "--print")
        printSeeds.push_back(count);
      else if (arg == "--large-percent")
        driver.generator.largeShapePercent = count;
      else if (arg == "--reduce-tries")
        reduceTries = count;
      else if (arg == "--progress")
        progress = count;
      else {
        driver.generator.maxOps = count;
        driver.generator.minOps =
            std::min(driver.generator.minOps, driver.generator.maxOps);
      }
    } else if (arg == "--file" && hasValue) {
      filePath = argv[++i];
      file = readFile(argv[i]);
      if (file.empty()) {
        std::fprintf(stderr, "kiln-program-fuzz: cannot read %s\n", argv[i]);
        return 2;
      }
    } else if (arg == "--cuda") {
      cuda = true;
    } else if (arg == "--cuda-on-cpu") {
      cudaOnCpu = true;
    } else if (arg == "--grad") {
      driver.checker.gradients = true;
    } else if (arg == "--perturb") {
      driver.checker.perturb = true;
    } else if (arg == "--verbose") {
      driver.verbose = true;
    } else {
      usage();
      return 2;
    }
  }
  for (uint64_t seed : printSeeds)
    std::fputs(generateProgram(seed, driver.generator).c_str(), stdout);
  if (!printSeeds.empty())
    return 0;
  if (file.empty() && !haveSeeds) {
    usage();
    return 2;
  }
  if (!file.empty() && !haveSeeds)
    end = 1;
  if (cuda && cudaOnCpu) {
    usage();
    return 2;
  }
  if (cuda) {
    if (int status = checkCudaInChild(); status >= 0)
      return status;
    driver.checker.configs = cudaCheckConfigurations();
  }
  if (cudaOnCpu)
    driver.checker.configs = cudaOnCpuCheckConfigurations();
  // The directories failing programs go to, made now rather than found
  // missing after a long run.
  for (const std::string &dir : {keepDir, reduceDir})
    if (!dir.empty())
      if (std::error_code error = llvm::sys::fs::create_directories(dir)) {
        std::fprintf(stderr, "kiln-program-fuzz: cannot create %s: %s\n",
                     dir.c_str(), error.message().c_str());
        return 2;
      }

  unsigned programs = 0, mismatches = 0, compileFailures = 0,
           unsupported = 0, generatorErrors = 0;
  bool reducedFile = false;
  std::map<std::string, unsigned> counts;
  for (uint64_t seed = begin; seed < end; ++seed) {
    std::string text =
        file.empty() ? generateProgram(seed, driver.generator) : file;
    if (driver.verbose)
      std::printf("--- seed %llu\n%s", (unsigned long long)seed, text.c_str());
    Run result = driver.run(text, seed, seed);
    for (const auto &[what, n] : result.counts)
      counts[what] += n;
    ++programs;
    mismatches += (result.outcome & Mismatch) != 0;
    compileFailures += (result.outcome & CompileFailure) != 0;
    unsupported += (result.outcome & Unsupported) != 0;
    generatorErrors += (result.outcome & GeneratorError) != 0;
    // A long campaign says how far it got, in case it is stopped.
    if (progress && programs % progress == 0) {
      std::printf("checked %u programs (seeds %llu:%llu): %u mismatches, %u "
                  "compile failures, %u generator errors\n",
                  programs, (unsigned long long)begin,
                  (unsigned long long)seed + 1, mismatches, compileFailures,
                  generatorErrors);
      std::fflush(stdout);
    }
    if (!result.outcome)
      continue;
    if (!keepDir.empty() && file.empty())
      std::ofstream(keepDir + "/seed-" + std::to_string(seed) + ".mlir")
          << text;
    // A file is reduced once, on the first inputs it fails on.
    if (!reduceDir.empty() && reducible(result.signature) && !reducedFile) {
      std::string name = file.empty() ? "seed-" + std::to_string(seed)
                                      : "file";
      reduceAndWrite(driver, text, seed, result.signature,
                     file.empty() ? "seed " + std::to_string(seed)
                                  : filePath,
                     reduceDir + "/" + name + ".reduced.mlir", reduceTries);
      reducedFile = !file.empty();
    }
  }
  std::printf("programs %u, mismatches %u, compile failures %u, "
              "unsupported %u, generator errors %u\n",
              programs, mismatches, compileFailures, unsupported,
              generatorErrors);
  if (driver.checker.gradients)
    std::printf("gradients of %u programs: %u elements against central "
                "differences, %u skipped at kinks\n",
                counts["programs"], counts["elements"], counts["kinks"]);
  return mismatches + compileFailures + generatorErrors > 0 ? 1 : 0;
}
