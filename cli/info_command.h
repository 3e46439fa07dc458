#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune info [--json] [--measure]`: topology, ISA, fingerprint and (optionally) measured peaks.
void SetupInfoCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
