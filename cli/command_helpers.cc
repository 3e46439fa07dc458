#include "cli/command_helpers.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <string_view>

#include "common/text.h"

namespace mmtune::cli {

void AddProblemKindOptions(CLI::App& command, ProblemKindText& text) {
  command.add_option("--dtype", text.dtype,
                     "Element type: f32, f64, bf16 (A and B bf16, C f32) or s8 (A u8, B s8, C s32)")
      ->capture_default_str();
  command.add_option("--layout", text.layout, "Storage layout: row or col")->capture_default_str();
  command.add_option("--trans", text.trans, "Transposes of A and B: NN, NT, TN or TT")
      ->capture_default_str();
}

Result<ProblemKind> ParseProblemKind(const ProblemKindText& text) {
  auto dtype = ParseDType(text.dtype);
  if (!dtype) return dtype.error();
  auto layout = ParseLayout(text.layout);
  if (!layout) return layout.error();
  auto trans = ParseTransPair(text.trans);
  if (!trans) return Error{trans.error().code, "--trans: " + trans.error().message};
  return ProblemKind{*dtype, *layout, trans->first, trans->second};
}

Status CheckCallFormOptions(bool packed_b, std::int64_t batch) {
  if (batch < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--batch must be >= 1, got " + std::to_string(batch));
  }
  if (packed_b && batch > 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--packed-b and --batch do not go together: a batch's items bring B of "
                     "their own");
  }
  return OkStatus();
}

Result<int> ParseThreads(const std::string& text, int cores) {
  if (text == "all") return cores;
  int value = 0;
  std::size_t used = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1 || value > cores) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--threads must be 'all' or a number from 1 to " + std::to_string(cores) +
                         " (this machine's cores), not '" + text + "'");
  }
  return value;
}

Result<TuneThreads> ParseTuneThreads(const std::string& text, int runtime_threads, int cores) {
  if (text == "auto") return TuneThreads{{std::max(1, runtime_threads)}, true};
  TuneThreads parsed;
  for (std::string_view item : Split(text, ',')) {
    auto count = ParseThreads(std::string(item), cores);
    if (!count) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--threads must be 'auto' or a list of 'all' and numbers from 1 to " +
                           std::to_string(cores) + " (this machine's cores), not '" + text + "'");
    }
    if (std::find(parsed.counts.begin(), parsed.counts.end(), *count) == parsed.counts.end()) {
      parsed.counts.push_back(*count);
    }
  }
  return parsed;
}

std::string DbToReadOrNone(const std::string& db, bool db_given) {
  std::error_code error;
  return db_given || std::filesystem::exists(db, error) ? db : "";
}

void SayNoDb(const std::string& db, Context& context) {
  *context.err << "mmtune: no DB file " << db
               << ": the runtime runs the analytical default (mmtune tune writes one)\n";
}

std::optional<Machine> DetectHostMachineOrFail(Context& context) {
  auto machine = DetectHostMachine();
  if (machine) return std::move(*machine);
  const bool usage = machine.error().code == ErrorCode::kInvalidArgument;
  context.Fail(usage ? kExitUsage : kExitFailure, machine.error().message);
  return std::nullopt;
}

}  // namespace mmtune::cli
