#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune export`: write the winners of chosen machines from a tuning DB into a new compact file
// (an mmtune DB or JSON) for deployment (see docs/deploy.md).
void SetupExportCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
