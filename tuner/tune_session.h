// One `mmtune tune` run: for each problem, search the kernel space with a strategy, verify and
// time every proposed candidate, commit each measurement to the DB as soon as it is made,
// re-measure the top few beside the analytical default, and store the confirmed winner.
//
// Resuming: candidates already measured for this machine and problem (by any earlier session,
// e.g. one killed with SIGKILL) are not re-run; their stored result is handed to the strategy, so
// re-running the same command continues where the last one stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/kernel_config.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"
#include "tuner/candidate_runner.h"

namespace mmtune {

struct TuneRequest {
  std::vector<Problem> problems;
  // The ranges whose bucket shapes are among `problems`: a bucket's confirmation weighs its
  // finalists by how well their tiles fit the sizes it serves (tuner/bucket_tile_use.h).
  std::vector<ShapeRangeRecord> ranges;
  std::string strategy = "auto";
  double budget_seconds = 20.0;  // per problem; 0 = no time limit
  std::int64_t max_evals = 0;    // per problem; 0 = no limit
  std::uint64_t seed = 1;
  // Each problem's `threads` is the most a config may use, and the search tries fewer too
  // (SpaceOptions::search_threads); else every candidate uses exactly that many.
  bool search_threads = false;
  MeasureOptions measure;
  int batch_size = 4;            // candidates timed together (interleaved)
  int confirm_top = 3;           // finalists re-measured beside the default
  double warm_up_seconds = 0.3;       // untimed runs of the default before its baseline timing
  double drift_check_seconds = 10.0;  // re-time the default this often to detect clock drift
  double drift_warn_ratio = 0.08;     // warn when it moved more than this
  std::string command;           // for the session record
  int warm_start_neighbours = 3; // winners of this many nearest tuned problems seed the search
};

struct TuneEvent {
  enum class Kind { kProblemStart, kProgress, kProblemDone, kWarning };
  Kind kind = Kind::kProgress;
  std::size_t problem_index = 0;  // 0-based
  std::size_t problem_count = 0;
  Problem problem;
  std::size_t space_size = 0;
  std::int64_t evaluations = 0;  // this problem, resumed ones included
  std::int64_t planned = 0;      // the evaluations this problem may take at most
  std::int64_t resumed = 0;
  double best_gflops = 0.0;
  double elapsed_seconds = 0.0;  // whole run
  double eta_seconds = 0.0;      // whole run, rough
  std::string message;           // kWarning (and a note on kProblemDone)
};
using TuneEventHandler = std::function<void(const TuneEvent&)>;

struct ProblemOutcome {
  Problem problem;
  std::size_t space_size = 0;
  std::int64_t evaluations = 0;
  std::int64_t resumed = 0;
  std::int64_t failed = 0;
  std::int64_t skipped = 0;
  KernelConfig default_config;
  double default_gflops = 0.0;  // from the confirm round
  std::optional<KernelConfig> winner;
  double winner_gflops = 0.0;
  double seconds = 0.0;
  std::vector<double> best_so_far;  // best GFLOP/s after each evaluation
  std::string error;                // set when the problem could not be tuned
};

struct TuneSummary {
  std::int64_t session_id = 0;
  bool interrupted = false;
  std::vector<ProblemOutcome> outcomes;
};

// `stop`, when set, is polled between batches: the run ends early, keeps what it measured, and
// records the session as interrupted.
Result<TuneSummary> RunTuning(TuningStore& store, std::int64_t machine_id, const Machine& machine,
                              const TuneRequest& request, ThreadPool& pool,
                              const TuneEventHandler& on_event,
                              const std::atomic<bool>* stop = nullptr);

// A tune into a private in-memory DB that nothing else reads: for measurements whose tunes must
// not become winners anywhere (range validation, benchmarks). Returns the summary and that DB's
// winners.
struct PrivateTune {
  TuneSummary summary;
  std::vector<WinnerRecord> winners;
};
Result<PrivateTune> RunTuningInMemory(const Machine& machine, const TuneRequest& request,
                                      ThreadPool& pool, const TuneEventHandler& on_event,
                                      const std::atomic<bool>* stop = nullptr);

// Winners of the tuned problems nearest to `problem` (same dtype, layout, transposes and
// threads; distance in log space over M, N, K), nearest first, re-validated for `problem`.
std::vector<KernelConfig> NearestWinnerConfigs(const std::vector<WinnerRecord>& winners,
                                               const Problem& problem, const Machine& machine,
                                               int count);

}  // namespace mmtune
