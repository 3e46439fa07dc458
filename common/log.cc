#include "common/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mmtune {
namespace {

LogLevel LevelFromEnvironment() {
  const char* value = std::getenv("MMTUNE_LOG");
  if (value == nullptr) return LogLevel::kWarning;
  std::string_view text(value);
  if (text == "error") return LogLevel::kError;
  if (text == "info") return LogLevel::kInfo;
  if (text == "debug") return LogLevel::kDebug;
  return LogLevel::kWarning;
}

std::atomic<int>& Threshold() {
  static std::atomic<int> threshold{static_cast<int>(LevelFromEnvironment())};
  return threshold;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "?";
}

}  // namespace

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(Threshold().load()); }

void SetLogLevel(LogLevel level) { Threshold().store(static_cast<int>(level)); }

void Log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) > Threshold().load()) return;
  std::string line = "mmtune: ";
  line += LevelName(level);
  line += ": ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace mmtune
