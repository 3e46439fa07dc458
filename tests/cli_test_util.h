// Runs the real `mmtune` binary for tests: exit code, stdout and stderr of one invocation.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace mmtune::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `mmtune <args>` through the shell with `env` prepended (e.g. "MMTUNE_ISA=generic").
inline RunResult RunMmtune(const std::string& args, const std::string& env = "") {
  // ctest runs tests in parallel processes: every call gets files of its own.
  static int calls = 0;
  const std::string stem = ::testing::TempDir() + "/mmtune_cli_" + std::to_string(::getpid()) +
                           "_" + std::to_string(++calls);
  const std::string out = stem + ".out";
  const std::string err = stem + ".err";
  const std::string command = "env -u MMTUNE_ISA " + env + " '" + MMTUNE_BINARY + "' " + args +
                              " >'" + out + "' 2>'" + err + "' </dev/null";
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = Slurp(out);
  result.err = Slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return result;
}

inline int Lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

// A fresh, empty directory per test and process (ctest runs tests in parallel processes).
inline std::string FreshTestDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/mmtune_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The CLI's error contract: one line "mmtune: error: ..." on stderr and the given exit code.
inline void ExpectOneLineError(const RunResult& r, int exit_code) {
  EXPECT_EQ(r.exit_code, exit_code) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("mmtune: error: ", 0), 0u) << r.err;
}

}  // namespace mmtune::testing
