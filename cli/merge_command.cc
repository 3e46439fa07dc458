#include "cli/merge_command.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/deploy.h"

namespace mmtune::cli {
namespace {

struct MergeCommandOptions {
  std::string out;
  std::vector<std::string> inputs;
};

std::string Count(std::int64_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

void RunMerge(const MergeCommandOptions& options, Context& context) {
  auto summary = MergeStores(options.out, options.inputs);
  if (!summary) {
    // kInvalidArgument: the command line must change (an input that is the output itself).
    const bool usage = summary.error().code == ErrorCode::kInvalidArgument;
    return context.Fail(usage ? kExitUsage : kExitFailure, summary.error().message);
  }
  const ImportCounts& changes = summary->changes;
  *context.out << "merged " << Count(summary->inputs, "DB") << " into " << options.out
               << (summary->created ? " (new)" : "") << ": now "
               << Count(summary->machines, "machine") << " (" << changes.machines_added
               << " added) and " << Count(summary->winners, "winner") << " ("
               << changes.winners_added << " added, " << changes.winners_replaced
               << " replaced by faster ones, " << changes.winners_kept << " kept)\n";
}

}  // namespace

void SetupMergeCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<MergeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "merge",
      "Fold several tuning DBs or JSON exports (e.g. one per 'mmtune tune --shard i/N' "
      "machine) into one: "
      "machines by fingerprint, and per machine and shape the winner with the most GFLOP/s "
      "(a tie keeps the one already there). Inputs are only read; merging again changes "
      "nothing. Measurements and sessions are not copied.");
  command->add_option("--out", options->out,
                      "DB to merge into: an existing mmtune DB (its winners compete too) or a "
                      "new file, created complete or not at all")
      ->required();
  command->add_option("inputs", options->inputs,
                      "Tuning DBs or JSON exports ('mmtune export --format json') to merge, in "
                      "order of preference on ties")
      ->required()
      ->type_name("FILE");
  command->callback([options, &context]() { RunMerge(*options, context); });
}

}  // namespace mmtune::cli
