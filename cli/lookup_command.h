#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune lookup`: which config the runtime would run for a problem, from which tier (exact
// winner, nearest tuned problem, analytical default), and its measured speed (see docs/cli.md).
void SetupLookupCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
