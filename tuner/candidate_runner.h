// Measures kernel configs on one problem: verify each against the reference first, once (a wrong
// or failing config is recorded as failed and never timed), then time a batch of them in
// interleaved rounds so that slow drifts of the machine hit every candidate alike.
//
// Timing protocol: one untimed warm-up call and one calibration call per candidate; a sample
// repeats the call until it lasts at least `min_sample_seconds` and records the time per call;
// each round takes one sample of every active candidate, in an order that never times the same
// candidate twice in a row (when two or more are active); after the first round, candidates
// slower than `skip_ratio` x the best known time are dropped as skipped; a candidate is done when
// it has `min_samples` samples with a relative MAD under `target_spread`, or `max_samples`. The
// confirmation of the finalists takes longer samples and more of them (`confirm_*`), and stops
// after `confirm_max_seconds` once each has its minimum.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/measurement_status.h"
#include "kernels/kernel_config.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"
#include "tuner/sample_stats.h"

namespace mmtune {

struct MeasureOptions {
  double min_sample_seconds = 0.002;
  int min_samples = 3;
  int max_samples = 12;
  double target_spread = 0.02;  // relative MAD at which timing counts as stable
  double skip_ratio = 1.25;     // early skip: slower than this x the best after round one
  // The confirmation decides between a few candidates often within a few percent of each other,
  // where a few short samples scatter the same configs by several percent either way from run
  // to run (docs/tuning.md, Timing). Its cost is a few candidates, once per problem.
  double confirm_min_sample_seconds = 0.02;
  int confirm_min_samples = 9;
  int confirm_max_samples = 21;
  // Past confirm_min_samples, the confirmation stops taking rounds once it has lasted this long
  // (0: no limit), so that a shape whose calls take a tenth of a second does not spend many
  // times its search budget confirming. The tune sets it from its budget.
  double confirm_max_seconds = 0.0;
  bool cold_cache = false;      // rotate operand copies larger than the last-level cache
  std::uint64_t data_seed = 1;  // operand values
};

struct CandidateMeasurement {
  KernelConfig config;
  MeasurementStatus status = MeasurementStatus::kOk;
  std::string error;  // kFailed only
  SampleStats stats;  // seconds per call
  double gflops = 0.0;
  double seconds_spent = 0.0;  // wall time verifying and timing it
};

// Receives each config's measurement the moment it is final (failed verification, skipped after
// round one, stable, or out of rounds), with its index in the batch: the tuner commits it then,
// so that a process killed mid-batch loses only the candidates still being timed.
using MeasurementSink = std::function<void(std::size_t index, const CandidateMeasurement&)>;

// How a batch is timed.
enum class TimingMode {
  kSearch,   // early skip of clearly slower candidates after round one
  kWhole,    // every verified candidate timed to the end (baselines)
  kConfirm,  // as kWhole, with the confirmation's longer and more samples
};

class CandidateRunner {
 public:
  // Allocates and fills the operands (and the reference data for verification). Fails when the
  // problem is invalid or its operands do not fit in memory.
  static Result<std::unique_ptr<CandidateRunner>> Create(const Problem& problem,
                                                         const Machine& machine,
                                                         const MeasureOptions& options,
                                                         ThreadPool& pool);
  virtual ~CandidateRunner() = default;

  virtual const Problem& problem() const = 0;
  // Whether the checker compares all of C (small problems) or samples plus projections.
  virtual bool full_check() const = 0;

  // Runs `config` twice (alpha 1, beta 0 on a poisoned C: NaN, or garbage for s8; then a general
  // alpha and beta on a random C: -1.5 and 0.5, or -3 and 2 for s8) and checks both results and
  // the canaries around C.
  virtual Status Verify(const KernelConfig& config) = 0;

  // Runs `config` untimed for about `seconds`, so that the cores reach their steady clock and the
  // operands' pages and the workspace exist before anything is timed: without it the first
  // candidate of a problem (the default baseline) times markedly slow (docs/tuning.md, Timing).
  // A config that cannot run is ignored here (Measure reports it).
  virtual void WarmUp(const KernelConfig& config, double seconds) = 0;
  // Verifies every config this runner has not verified before (the confirmation's finalists
  // were, in the search), then times the verified ones together as described above.
  // `best_seconds` is the best median known before this batch (0 = none), for the early skip;
  // `mode` says whether candidates may be skipped and how long they are timed.
  // `on_final`, when set, sees every result as soon as it is final, each exactly once.
  virtual std::vector<CandidateMeasurement> Measure(const std::vector<KernelConfig>& configs,
                                                    double best_seconds, TimingMode mode,
                                                    const MeasurementSink& on_final = {}) = 0;
  // The configs Measure has verified so far, each counted once.
  virtual int verified_configs() const = 0;
};

}  // namespace mmtune
