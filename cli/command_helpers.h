// Small pieces several subcommands share, so they answer the same input the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune::cli {

// --dtype, --layout and --trans as typed, and what they mean once parsed.
struct ProblemKindText {
  std::string dtype = "f32";
  std::string layout = "row";
  std::string trans = "NN";
};
struct ProblemKind {
  DType dtype = DType::kF32;
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
};
void AddProblemKindOptions(CLI::App& command, ProblemKindText& text);
Result<ProblemKind> ParseProblemKind(const ProblemKindText& text);

// --packed-b and --batch B as given to `tune` and `lookup`: B >= 1, and not both.
Status CheckCallFormOptions(bool packed_b, std::int64_t batch);

// "all" or a number from 1 to `cores`.
Result<int> ParseThreads(const std::string& text, int cores);

// What `tune --threads` asks for: one problem per count in `counts`; with `search`, each
// problem's thread count is the most a config may use and the search picks how many it does.
struct TuneThreads {
  std::vector<int> counts;
  bool search = false;
};
// "auto" (one problem at `runtime_threads`, what the runtime runs by default, with the count
// searched), or a comma-separated list of numbers from 1 to `cores` and "all" (= `cores`), each
// tuned as given.
Result<TuneThreads> ParseTuneThreads(const std::string& text, int runtime_threads, int cores);

// The DB that `lookup` and `bench` read: `db` itself, or "" (no DB: the analytical default) when
// --db was not given and the default file does not exist, a new user's first run. A --db given
// and missing stays an error of the DB's opening.
std::string DbToReadOrNone(const std::string& db, bool db_given);
// The one line that says so.
void SayNoDb(const std::string& db, Context& context);

// The host machine, or nullopt after reporting why on `context`: a bad MMTUNE_ISA is the user's
// mistake (exit 2), a failing hwloc is not (exit 1).
std::optional<Machine> DetectHostMachineOrFail(Context& context);

}  // namespace mmtune::cli
