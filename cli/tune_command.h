#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mmtune::cli {

// `mmtune tune`: search the kernel space for each shape on this machine and store every
// measurement and the winners in the DB (see docs/cli.md).
void SetupTuneCommand(CLI::App& app, Context& context);

}  // namespace mmtune::cli
