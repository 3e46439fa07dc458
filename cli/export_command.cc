#include "cli/export_command.h"

#include <cstdint>
#include <memory>
#include <string>

#include "cli/command_helpers.h"
#include "db/deploy.h"

namespace mmtune::cli {
namespace {

struct ExportCommandOptions {
  std::string db = "mmtune.db";
  std::string out;
  std::string machine = "current";
  std::string format = "sqlite";
  bool force = false;
};

std::string Count(std::int64_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

void RunExport(const ExportCommandOptions& options, Context& context) {
  // The command line is checked before any file is opened or the machine is probed.
  auto format = ParseExportFormat(options.format);
  if (!format) return context.Fail(kExitUsage, "--format: " + format.error().message);
  auto selection = ParseMachineSelection(options.machine);
  if (!selection) return context.Fail(kExitUsage, "--machine: " + selection.error().message);

  ExportOptions export_options;
  export_options.machines = *selection;
  export_options.format = *format;
  export_options.force = options.force;
  // Only `current` needs the host: exporting for other machines must work on any box, even one
  // where hwloc cannot read the topology.
  if (selection->kind == MachineSelection::Kind::kCurrent) {
    auto machine = DetectHostMachineOrFail(context);
    if (!machine) return;
    export_options.current_fingerprint = machine->fingerprint;
  }
  auto summary = ExportWinners(options.db, options.out, export_options);
  if (!summary) {
    // The library answers kInvalidArgument only for what the command line must change (an
    // existing output without --force, the source as output); files that are wrong are work
    // that failed.
    const bool usage = summary.error().code == ErrorCode::kInvalidArgument;
    return context.Fail(usage ? kExitUsage : kExitFailure, summary.error().message);
  }
  *context.out << "exported " << Count(summary->machines, "machine") << " and "
               << Count(summary->winners, "winner") << " from " << options.db << " to "
               << options.out << " (" << ToString(*format) << ")\n";
}

}  // namespace

void SetupExportCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<ExportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "export",
      "Write the winners of a tuning DB into a new compact file for deployment: the chosen "
      "machines, their winners and the problems and configs those use; no sessions, no "
      "measurements. The source DB is only read.");
  command->add_option("--db", options->db, "Tuning DB to read (never modified)")
      ->capture_default_str();
  command->add_option("--out", options->out,
                      "File to write; written under a temporary name and renamed at the end, so "
                      "it is complete or absent")
      ->required();
  command->add_option("--machine", options->machine,
                      "Whose winners: 'current' (this machine's fingerprint), 'all', or a "
                      "fingerprint as 'mmtune info' prints it")
      ->capture_default_str();
  command->add_option("--format", options->format,
                      "sqlite: an mmtune DB the runtime opens (rollback journal, so it opens "
                      "read-only from a read-only directory); json: one document with "
                      "schema_version 1 (see docs/deploy.md)")
      ->capture_default_str();
  command->add_flag("--force", options->force,
                    "Replace the output file if it exists (otherwise that is an error)");
  command->callback([options, &context]() { RunExport(*options, context); });
}

}  // namespace mmtune::cli
