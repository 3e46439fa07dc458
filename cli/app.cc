#include "cli/app.h"

#include <algorithm>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/export_command.h"
#include "cli/info_command.h"
#include "cli/lookup_command.h"
#include "cli/merge_command.h"
#include "cli/report_command.h"
#include "cli/tune_command.h"
#include "mmtune/version.h"

namespace mmtune::cli {

int RunMmtune(const std::vector<std::string>& args, Context& context) {
  CLI::App app(
      "mmtune: auto-tuned matrix multiplication. Times a family of parameterized GEMM kernels on "
      "this machine, keeps the winners per shape in a SQLite DB, and reports how close they get "
      "to the machine's peak.",
      "mmtune");
  app.set_version_flag("--version", std::string("mmtune ") + kVersion + " (" + kGitRevision + ")");
  app.require_subcommand(1);
  app.footer("Run 'mmtune COMMAND --help' for the options of a command. Environment: "
             "MMTUNE_ISA caps the kernel ISA level, MMTUNE_LOG sets the log level "
             "(error|warning|info|debug).");
  context.args = args;
  context.command_line = "mmtune";
  for (const std::string& arg : args) context.command_line += " " + arg;
  SetupInfoCommand(app, context);
  SetupTuneCommand(app, context);
  SetupExportCommand(app, context);
  SetupMergeCommand(app, context);
  SetupLookupCommand(app, context);
  SetupBenchCommand(app, context);
  SetupReportCommand(app, context);

  // A misspelt command would otherwise surface as CLI11's generic "arguments were not expected".
  if (!args.empty() && !args.front().empty() && args.front()[0] != '-') {
    const auto subcommands = app.get_subcommands([](CLI::App*) { return true; });
    const bool known = std::any_of(subcommands.begin(), subcommands.end(),
                                   [&](CLI::App* sub) { return sub->get_name() == args.front(); });
    if (!known) {
      std::string names;
      for (CLI::App* sub : subcommands) names += (names.empty() ? "" : ", ") + sub->get_name();
      context.Fail(kExitUsage, "unknown command '" + args.front() + "' (commands: " + names +
                                   "; see 'mmtune --help')");
      return context.exit_code;
    }
  }

  // CLI11 wants the arguments last-first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    *context.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    *context.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    *context.out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::string where = "mmtune";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    context.Fail(kExitUsage, std::string(e.what()) + " (see '" + where + " --help')");
    return context.exit_code;
  }
  return context.exit_code;
}

}  // namespace mmtune::cli
