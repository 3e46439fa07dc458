// The speed a problem can reach on this machine: min(compute peak, arithmetic intensity x memory
// bandwidth), from the measured peaks. "% of peak" in tables and reports is relative to this, so
// a memory-bound GEMV at full bandwidth shows as ~100%, not as 5% of the FMA peak.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>

#include "machine/topology.h"
#include "mmtune/types.h"

namespace mmtune {

struct Roofline {
  double compute_gflops = 0.0;    // FMA peak for the dtype and thread count; 0 = unknown
  double bandwidth_gbs = 0.0;     // read bandwidth for the thread count; 0 = unknown
  double intensity = 0.0;         // flops per byte of compulsory traffic (A, B read; C written)
  double attainable_gflops = 0.0; // min of the two ceilings; 0 = unknown
  bool cache_resident = false;    // operands fit the warm cache: the memory ceiling does not apply
};

// `peaks` is to_json(PeakReport) (may be null: then everything is 0). The ceilings for t threads
// scale the one-core peak by t, capped by the all-cores measurement. `warm_cache_bytes` is the
// cache a warm-cache timing runs from (the last-level cache; 0 for cold-cache timings): operands
// that fit in it are not read from memory, so only the compute ceiling bounds them (a roof
// computed from the memory bandwidth would put a warm small GEMM above 100%).
Roofline RooflineOf(const Problem& problem, const nlohmann::json& peaks,
                    std::uint64_t warm_cache_bytes = 0);

// The size of one instance of the last-level data cache (0 when the topology lists none).
std::uint64_t LastLevelCacheBytes(const Topology& topology);

// The cache a warm-cache timing runs from: the effective last-level cache that the read sweep of
// `peaks` found ("effective_llc_bytes", tuner/peak.h), else hwloc's LastLevelCacheBytes.
std::uint64_t WarmCacheBytes(const Topology& topology, const nlohmann::json& peaks);

}  // namespace mmtune
