#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune report`: the JSON report and the self-contained HTML report of a tuning DB, optionally
// with a bench file's comparison (see docs/cli.md and docs/report.md).
void SetupReportCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
