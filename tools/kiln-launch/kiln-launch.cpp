//===- kiln-launch.cpp - Start a command as the ranks of one run ----------===//
//
// A thin main over runtime/lib/launch (Launcher.h): kiln-launch --nproc N
// [--store SPEC] -- COMMAND [ARGUMENTS...].
//
//===----------------------------------------------------------------------===//

#include "Launcher.h"

#include <cstdio>
#include <iostream>

int main(int argc, char **argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  kiln::launch::LaunchOptions options;
  bool help = false;
  std::string error;
  if (!kiln::launch::parseLaunchArguments(arguments, options, help, error)) {
    std::fprintf(stderr,
                 "kiln-launch: error: %s\nRun 'kiln-launch --help' for "
                 "usage.\n",
                 error.c_str());
    return 2;
  }
  if (help) {
    std::fputs(kiln::launch::launchHelpText(), stdout);
    return 0;
  }
  return kiln::launch::runRanks(options, std::cerr);
}
