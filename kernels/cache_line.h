// The cache line size the kernels and the analytical model assume at compile time: 64 bytes on
// every x86-64 core and on most ARM ones. Alignment choices (the direct driver's aligning
// panel), prefetch steps (PackA) and the model's line arithmetic use it; the topology's own
// report of the line size (machine/topology.h) is what `mmtune info` shows.
#pragma once

#include <cstdint>

namespace mmtune {

inline constexpr std::int64_t kCacheLineBytes = 64;

}  // namespace mmtune
