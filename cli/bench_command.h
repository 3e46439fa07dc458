#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune bench`: the tuned runtime, the analytical default and the peer libraries, timed side by
// side in one process (Google Benchmark), with GFLOP/s and % of peak (see docs/cli.md).
void SetupBenchCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
