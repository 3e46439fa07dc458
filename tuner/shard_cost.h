// What tuning one problem costs, estimated the same way on every machine, so that the shards of
// `mmtune tune --shard i/N` split one list by cost without talking to each other.
#pragma once

#include "mmtune/types.h"

namespace mmtune {

// The problem's flops (floored at those of 32^3, below which the timing overhead dominates)
// times the number of candidates its search space holds at the generic ISA level of a fixed
// reference machine: not this machine's, whose space differs between machine types.
double EstimatedTuneCost(const Problem& problem);

}  // namespace mmtune
