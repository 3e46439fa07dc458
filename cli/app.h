// The whole command line: builds the CLI11 app from the subcommands, parses `args` (without the
// program name) and runs the chosen command. `main` only forwards to this, so tests run the CLI
// in-process with captured streams.
#pragma once

#include <string>
#include <vector>

#include "cli/context.h"

namespace mmtune::cli {

int RunMmtune(const std::vector<std::string>& args, Context& context);

}  // namespace mmtune::cli
