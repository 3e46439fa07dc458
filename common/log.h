// Diagnostics for people, on stderr. Library code logs warnings it can recover from (a DB entry
// skipped, a peer library missing); anything the caller must act on is returned as an `Error`
// instead. The threshold comes from `MMTUNE_LOG` (error|warning|info|debug; default warning).
#pragma once

#include <string_view>

namespace mmtune {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// The active threshold: `MMTUNE_LOG` read once, or what `SetLogLevel` set.
LogLevel CurrentLogLevel();
void SetLogLevel(LogLevel level);

// Writes "mmtune: <level>: <message>\n" to stderr when `level` passes the threshold. Thread-safe:
// one line is written with one call, so lines from concurrent threads do not interleave.
void Log(LogLevel level, std::string_view message);

}  // namespace mmtune
