// The kernel space of one problem on one machine: every configuration the search may propose,
// generated from the kernel registry and the cache sizes, with the constraints applied (only
// kernels the machine's ISA level runs, blocks that are multiples of the tile and no larger than
// the problem, families that fit the shape). Every config returned passes
// KernelConfig::Validate.
#pragma once

#include <vector>

#include "kernels/kernel_config.h"
#include "machine/machine.h"
#include "mmtune/types.h"

namespace mmtune {

struct SpaceOptions {
  bool all_isa_levels = false;  // also the levels below the machine's kernel level
  bool prefetch_variants = true;
  // Also the configs of every power-of-two thread count below the problem's `threads`, so that
  // the search chooses how many of them to use (`mmtune tune --threads auto`).
  bool search_threads = false;
};

std::vector<KernelConfig> GenerateSpace(const Problem& problem, const Machine& machine,
                                        const SpaceOptions& options = {});

}  // namespace mmtune
