// State shared by the subcommands of one `mmtune` invocation: where output goes and the exit
// code the callbacks decided on. Streams are injected so tests can capture them.
#pragma once

#include <iostream>
#include <string>
#include <vector>

namespace mmtune::cli {

// Exit codes: 0 success, 1 the work failed (a file could not be read, hwloc failed), 2 the
// command line was wrong (unknown command or option, malformed value).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Context {
  std::ostream* out = &std::cout;
  std::ostream* err = &std::cerr;
  int exit_code = kExitOk;
  std::string command_line;  // "mmtune ARGS...", recorded with tuning sessions
  std::vector<std::string> args;  // the arguments after the program name, as given

  // Prints "mmtune: error: <message>" as one line and records `code` as the exit code.
  void Fail(int code, const std::string& message) {
    *err << "mmtune: error: " << message << '\n';
    exit_code = code;
  }
};

}  // namespace mmtune::cli
