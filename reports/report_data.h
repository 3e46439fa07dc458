// Everything a report shows, read from a tuning DB into plain structs: the machines with their
// descriptions and measured peaks, the sessions, and every tuned problem with its winner, its
// place under the machine's roofline, its speed-up over the analytical default, how each search
// converged and the parameter landscape it measured. The JSON and HTML reports only format this;
// nothing here writes to the DB, so it works on a store opened read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "db/validation_summary.h"
#include "kernels/kernel_config.h"
#include "machine/roofline.h"
#include "mmtune/result.h"
#include "mmtune/types.h"
#include "reports/bench_results.h"

namespace mmtune {

struct ReportMachine {
  std::int64_t id = 0;
  std::string fingerprint;
  std::string fingerprint_basis;
  nlohmann::json description;  // to_json(Machine) as stored: cpu, isa, topology
  nlohmann::json peaks;        // to_json(PeakReport) as stored, or null when never measured
};

// How one session's search of one problem converged. Evaluation 0 is the analytical default (the
// baseline); search candidates follow in the order the strategy proposed them. Numbers missing
// from `eval_index` were answered from an earlier session's measurements (a resumed tune stores
// nothing new for them).
struct SearchTrace {
  std::int64_t session_id = 0;
  std::string strategy;
  std::vector<int> eval_index;
  std::vector<std::optional<double>> gflops;       // this evaluation; nullopt unless status ok
  std::vector<std::optional<double>> best_gflops;  // best ok so far; nullopt before the first
};

// One timed config of the problem (status ok, any stage), for the landscape charts.
struct LandscapePoint {
  KernelConfig config;
  MeasurementStage stage = MeasurementStage::kSearch;
  std::int64_t session_id = 0;
  double gflops = 0.0;
};

struct TunedProblem {
  std::string fingerprint;  // the machine it was tuned on
  Problem problem;
  KernelConfig winner;
  double gflops = 0.0;          // the winner, measured in the confirm round
  double default_gflops = 0.0;  // the analytical default, same round; 0 = not measured
  double median_seconds = 0.0;
  std::optional<double> speedup_vs_default;  // gflops / default_gflops
  Roofline roofline;                         // from the machine's peaks; zeros when unknown
  std::optional<double> pct_of_roofline;     // 100 * gflops / attainable
  std::int64_t session_id = 0;               // 0 = merged in from another DB
  std::string updated_at;
  std::int64_t measurements = 0;  // stored for this machine and problem, every stage
  std::int64_t failed = 0;
  std::int64_t skipped = 0;
  std::vector<SearchTrace> searches;   // one per session that searched it, oldest first
  std::vector<LandscapePoint> landscape;
};

// The held-out shapes one tune measured inside one of its ranges (`tune --validate N`), and the
// geometric means they come to.
struct RangeValidationGroup {
  ShapeRangeRecord range;  // machine, kind, threads, range, bucket policy
  std::int64_t session_id = 0;
  std::vector<RangeValidationRecord> shapes;  // in the order they were measured
  ValidationSummary summary;
};

struct ReportData {
  std::string generated_at;    // ISO 8601 UTC, when the data was read
  std::string mmtune_version;  // of the mmtune that wrote the report
  std::string git_revision;
  std::string db_path;
  int schema_version = 0;      // of the DB file
  std::vector<ReportMachine> machines;  // all machines of the DB, by id
  std::vector<SessionRecord> sessions;  // all sessions, oldest first
  std::vector<TunedProblem> problems;   // every winner, by machine then problem
  std::vector<RangeValidationGroup> validations;  // in the order they were measured
  std::optional<BenchResults> bench;    // given with --bench
};

// Reads everything the reports need. Problems with measurements but no winner (a tune stopped
// before its confirm round) are not listed. Never writes to `store`.
Result<ReportData> CollectReportData(const TuningStore& store);

// Builds one session's convergence trace from its measurements of one problem (any order; only
// the search stage and the baseline default at evaluation 0 count: later default measurements
// are drift checks of the same config, not evaluations).
SearchTrace TraceOfSession(std::int64_t session_id, const std::string& strategy,
                           const std::vector<MeasurementRecord>& measurements);

}  // namespace mmtune
