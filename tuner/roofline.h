// The speed a problem can reach on this machine: min(compute peak, arithmetic intensity x memory
// bandwidth), from the measured peaks. "% of peak" in tables and reports is relative to this, so
// a memory-bound GEMV at full bandwidth shows as ~100%, not as 5% of the FMA peak.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "mmtune/types.h"

namespace mmtune {

struct Roofline {
  double compute_gflops = 0.0;    // FMA peak for the dtype and thread count; 0 = unknown
  double bandwidth_gbs = 0.0;     // read bandwidth for the thread count; 0 = unknown
  double intensity = 0.0;         // flops per byte of compulsory traffic (A, B read; C written)
  double attainable_gflops = 0.0; // min of the two ceilings; 0 = unknown
};

// `peaks` is to_json(PeakReport) (may be null: then everything is 0). The ceilings for t threads
// scale the one-core peak by t, capped by the all-cores measurement.
Roofline RooflineOf(const Problem& problem, const nlohmann::json& peaks);

}  // namespace mmtune
