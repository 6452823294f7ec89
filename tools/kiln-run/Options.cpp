//===- Options.cpp - kiln-run command line ---------------------------------===//

#include "Options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace run {

namespace {

bool parseCount(const std::string &text, unsigned long &out) {
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long value = std::strtoul(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value == 0)
    return false;
  out = value;
  return true;
}

} // namespace

bool parseOptions(int argc, char **argv, Options &options,
                  std::string &error) {
  std::vector<std::string> positional;
  bool optionsEnded = false;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (optionsEnded || argument.size() < 2 || argument[0] != '-') {
      positional.push_back(argument);
      continue;
    }
    if (argument == "--") {
      optionsEnded = true;
      continue;
    }
    if (argument == "--help" || argument == "-h") {
      options.help = true;
      continue;
    }
    if (argument == "--list") {
      options.list = true;
      continue;
    }
    if (argument == "--stats") {
      options.stats = true;
      continue;
    }

    // The remaining options take a value, as "--opt VALUE" or "--opt=VALUE".
    std::string name = argument, value;
    size_t equals = argument.find('=');
    bool inlineValue = equals != std::string::npos;
    if (inlineValue) {
      name = argument.substr(0, equals);
      value = argument.substr(equals + 1);
    }
    if (name != "--function" && name != "--input" && name != "--output-dir" &&
        name != "--repeat" && name != "--device") {
      error = "unknown option '" + argument + "'";
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        error = "option '" + name + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (name == "--function") {
      if (value.empty()) {
        error = "--function needs a non-empty name";
        return false;
      }
      options.functionName = value;
    } else if (name == "--input") {
      options.inputs.push_back(value);
    } else if (name == "--output-dir") {
      if (value.empty()) {
        error = "--output-dir needs a non-empty path";
        return false;
      }
      options.outputDir = value;
    } else if (name == "--device") {
      if (value != "cpu" && value != "cuda") {
        error = "--device must be 'cpu' or 'cuda', not '" + value + "'";
        return false;
      }
      options.device = value;
    } else if (!parseCount(value, options.repeat)) {
      error = "--repeat needs a positive integer, not '" + value + "'";
      return false;
    }
  }
  if (options.help)
    return true;
  if (positional.size() != 1) {
    error = positional.empty()
                ? "no module given"
                : "expected one module, got " +
                      std::to_string(positional.size()) + " arguments ('" +
                      positional[0] + "', '" + positional[1] + "', ...)";
    return false;
  }
  options.modulePath = positional[0];
  return true;
}

const char *helpText() {
  return R"HELP(USAGE: kiln-run MODULE.kmod [options]

Loads a module compiled by kiln-compile, calls one of its functions once with
the given inputs, and prints the outputs.

OPTIONS:
  --function NAME   The function to call. May be omitted when the module has
                    exactly one function.
  --input VALUE     The next input of the function, in signature order; give
                    one per input. VALUE is either
                      - a .npy file (format 1.0 or 2.0, C order, dtype <f2,
                        <f4, <f8, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8 or
                        |b1) whose dtype and shape match the input exactly;
                        a bf16 input is read from a <f4 file, rounding to
                        nearest even; or
                      - for a rank-0 input, a literal of its dtype: a
                        decimal integer, a number such as -2.5, 1e-3, inf or
                        nan for floats, or true, false, 1 or 0 for i1. An
                        argument that reads as a number, true or false is
                        taken as a literal rather than as a file name.
  --output-dir DIR  Save each output to DIR/NAME.npy instead of printing its
                    values, where NAME is the output's name in the signature,
                    or out<i> (i = output index) when it is unnamed, is not a
                    plain file name, or repeats an earlier one. DIR is created
                    if it does not exist. bf16 outputs are saved as <f4, which
                    holds them exactly.
  --repeat N        After the first call, call the function N more times and
                    print "time per call: median X us (min Y us, N runs)". The
                    time of a call includes allocating its outputs. The outputs
                    shown are those of the first call.
  --device DEVICE   cpu or cuda: require the module to be compiled for that
                    device (kiln-compile --target) and, for cuda, a working
                    CUDA driver and device before anything runs. Without it
                    the module runs where it was compiled for; a CUDA module
                    then needs the driver (libcuda.so.1) at its first call.
  --stats           For a CUDA module, after the calls print the device's
                    counters over all of them: calls, kernel launches,
                    stream waits, device-to-host copies made by the
                    compiled code (loop predicates) and their bytes, driver
                    allocations, memory held and the largest device buffer
                    (a function's arena). Ignored for CPU modules.
  --list            Print the module's target and the signature of each
                    function, then exit without calling anything.
  --help, -h        Print this help and exit.

  Options taking a value also accept the form --option=VALUE.

OUTPUT:
  One line per output, in signature order:
    NAME: DTYPE[SHAPE] = VALUES
  where VALUES are nested in brackets as numpy does (a bare value for rank 0),
  floats are printed with enough digits to read back the same value (9 for
  f32, 17 for f64, 5 for f16, 4 for bf16) and i1 values as true/false.
  With --output-dir, one line per saved file instead:
    NAME: DTYPE[SHAPE] saved to PATH

EXIT STATUS:
  0 on success; 1 if the module cannot be loaded, the function or an input is
  wrong, or an output cannot be saved; 2 for a malformed command line.
)HELP";
}

} // namespace run
} // namespace kiln
