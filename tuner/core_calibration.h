// Calibrates the boolean core facts of the analytical model (machine/core_facts.h) on the machine
// itself: each fact is whether one f32 kernel config runs a probe shape (or a batch of them)
// faster than another, the A/B its core family's row was written from, timed interleaved. Most
// matter only to AVX-512 kernels on two zmm FMA pipes, and only such machines probe those. The
// peaks carry the results (tuner/peak.h), and TakeMeasuredFacts hands them to the model in place
// of the row's.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "machine/core_facts.h"
#include "machine/machine.h"

namespace mmtune {

// One fact's measurement: the variant's speed over the baseline's on the probe shapes (the
// geometric mean over them of the fastest samples' ratio), and what that shows (FactShown).
struct CoreFactProbe {
  std::string_view fact;  // a kMeasuredCoreFactFields name
  double speedup = 0.0;
  double threshold = 0.0;
  std::optional<bool> holds;  // unset: too close to the threshold to tell
};

// The facts `machine` probes, in the order CalibrateCoreFacts times them: those of two zmm FMA
// pipes only with AVX-512 kernels on a core whose zmm pipes were measured as two
// (`zmm_fmas_per_cycle`; they apply nowhere else), the others everywhere.
std::vector<std::string_view> ProbedCoreFacts(const Machine& machine, double zmm_fmas_per_cycle);

// The fact a speed-up shows: it holds from kUndecidedBand above its threshold up, and not from
// kUndecidedBand below it down. Between the two the samples of a shared machine cannot tell,
// and the row's fact stays.
inline constexpr double kUndecidedBand = 0.03;
std::optional<bool> FactShown(double speedup, double threshold);

// Times the probes of ProbedCoreFacts on one pinned thread, `samples` rounds of at least
// `sample_seconds` per config each. A probe whose configs cannot run here is left out.
std::vector<CoreFactProbe> CalibrateCoreFacts(const Machine& machine, double zmm_fmas_per_cycle,
                                              int samples, double sample_seconds);

// The probes as the machine's measured facts (the undecided ones unset).
MeasuredCoreFacts MeasuredFactsOf(const std::vector<CoreFactProbe>& probes);

}  // namespace mmtune
