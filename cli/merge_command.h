#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune merge`: fold several tuning DBs into one, keeping the faster winner per machine and
// shape (see docs/deploy.md).
void SetupMergeCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
