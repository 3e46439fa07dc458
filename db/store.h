// The tuning database: one SQLite file holding the machines, tuning sessions, problems, kernel
// configs, EVERY measurement (failures included, so searches can be replayed and compared
// offline) and the winner per machine and problem. Writes are committed one measurement at a
// time, so a tuner killed with SIGKILL loses at most what it was measuring; WAL mode and busy
// retries let several `mmtune tune` processes share one file.
//
// Opening never modifies a file that is not an mmtune DB of this or an older schema version:
// a non-SQLite file, a foreign SQLite DB or a newer schema is reported as an error and left as it
// was.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/measurement_status.h"
#include "common/shape_range.h"
#include "db/schema.h"
#include "kernels/kernel_config.h"
#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

enum class DbOpenMode {
  kReadWrite,  // create the file if missing, migrate an older schema
  kReadOnly,   // never writes; a missing file is kNotFound, an older schema is fine to read
};

// What a session was asked to do, for the record.
struct SessionInfo {
  std::string mmtune_version;
  std::string git_revision;
  std::string strategy;
  double budget_seconds = 0.0;  // per problem; 0 = none
  std::int64_t max_evals = 0;   // per problem; 0 = none
  std::uint64_t seed = 0;
  std::string command;          // the command line, for people
};

// A session as read back (reports): what it was asked to do and how it ended.
struct SessionRecord {
  std::int64_t id = 0;
  std::int64_t machine_id = 0;
  SessionInfo info;
  std::string started_at;   // ISO 8601 UTC
  std::string finished_at;  // empty while running (or when the tuner was killed)
  std::string status;       // "running", "finished", "interrupted", "failed"
};

// Which step of a tune produced a measurement.
enum class MeasurementStage : std::uint8_t {
  kDefault,  // the analytical default, timed first as the baseline
  kSearch,   // a candidate proposed by the search strategy
  kConfirm,  // the final interleaved re-measurement of the top few and the default
};
const char* ToString(MeasurementStage stage);

struct MeasurementRecord {
  KernelConfig config;
  MeasurementStatus status = MeasurementStatus::kOk;
  MeasurementStage stage = MeasurementStage::kSearch;
  std::string error;            // empty unless kFailed
  double median_seconds = 0.0;  // per GEMM call; 0 when failed
  double min_seconds = 0.0;
  double mad_seconds = 0.0;     // median absolute deviation of the samples
  int samples = 0;
  double gflops = 0.0;          // from the median; 0 when failed
  int eval_index = 0;           // position in the session's search order for this problem
  std::int64_t session_id = 0;  // filled in when read back
};

struct WinnerRecord {
  std::string fingerprint;      // machine
  Problem problem;
  KernelConfig config;
  double gflops = 0.0;
  double median_seconds = 0.0;
  double default_gflops = 0.0;  // the analytical default measured in the same confirm round
  std::int64_t session_id = 0;
  std::string updated_at;       // ISO 8601 UTC, filled in when read back
};

// A shape range that a tune stood for with its bucket shapes (`tune --shapes 1..2048x4096x4096`):
// the runtime runs a problem inside it with the winner of its bucket. Per machine, problem kind
// (dtype, layout, transposes) and thread budget, as the bucket shapes' winners are.
struct ShapeRangeRecord {
  std::string fingerprint;  // machine
  DType dtype = DType::kF32;
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  int threads = 1;
  ShapeRange range;
  BucketPolicy buckets;
  std::string updated_at;  // ISO 8601 UTC, filled in when read back

  // The problem of `shape` in this range's kind and thread budget.
  Problem ProblemOf(const Shape& shape) const {
    return Problem{dtype, layout, trans_a, trans_b, shape.m, shape.n, shape.k, threads};
  }
};

// A shape inside a tuned range that is not one of its buckets, tuned on its own purely to measure
// what the runtime gives up by running it with its bucket's winner (`tune --validate N`). The
// four speeds come from one interleaved timing round on the same operands.
struct RangeValidationRecord {
  ShapeRangeRecord range;    // machine, kind, threads, range and bucket policy
  Shape shape;               // the held-out shape, inside `range.range`
  std::string runtime_tier;  // the lookup tier that answered for it ("bucket", or "exact", ...)
  double own_gflops = 0.0;       // its own tune's winner
  double runtime_gflops = 0.0;   // what the runtime runs for it
  double nearest_gflops = 0.0;   // what the nearest tier would run, were the range not stored
  double default_gflops = 0.0;   // the analytical default
  // The bucket's winner run on the bucket shape, in this shape's flops per second: what running
  // it on a zero-padded copy could reach at best (the copies not counted). Timed in alternation
  // with the runtime's config on this shape and scaled onto `runtime_gflops`. 0 = not measured
  // (the runtime did not answer with a bucket).
  double padded_gflops = 0.0;
  double own_tune_seconds = 0.0; // what its own tune cost
  std::int64_t session_id = 0;   // the validating tune; 0 when unknown
  std::string measured_at;       // ISO 8601 UTC, filled in when read back
};

struct MachineRecord {
  std::int64_t id = 0;
  std::string fingerprint;
  std::string fingerprint_basis;
  nlohmann::json description;   // to_json(Machine): topology, ISA, features
  nlohmann::json peaks;         // to_json(PeakReport), or null when not measured
};

// What deployment moves between DBs: machines, the winners of those machines and the shape ranges
// their winners stand for.
struct WinnerSet {
  std::vector<MachineRecord> machines;
  std::vector<WinnerRecord> winners;
  std::vector<ShapeRangeRecord> ranges;
};

// What `TuningStore::ImportWinners` changed.
struct ImportCounts {
  std::int64_t machines_added = 0;        // fingerprints new to this DB
  std::int64_t machines_given_peaks = 0;  // stored without peaks, now with the imported ones
  std::int64_t ranges_added = 0;          // shape ranges new to this DB
  std::int64_t winners_added = 0;         // (machine, problem) pairs new to this DB
  std::int64_t winners_replaced = 0;      // the imported winner was strictly faster
  std::int64_t winners_kept = 0;          // the stored winner was as fast or faster
};

// A stable identity for a config: hex digest of its canonical JSON.
std::string ConfigHash(const KernelConfig& config);

class TuningStore {
 public:
  // ":memory:" opens a private in-memory DB (tests).
  static Result<TuningStore> Open(const std::string& path, DbOpenMode mode);

  TuningStore(TuningStore&&) noexcept;
  TuningStore& operator=(TuningStore&&) noexcept;
  ~TuningStore();

  int schema_version() const;
  const std::string& path() const;

  // Inserts the machine or refreshes its description; `peaks` may be null (keeps the stored
  // peaks). Returns the machine id.
  Result<std::int64_t> UpsertMachine(const Machine& machine, const nlohmann::json& peaks);
  Result<std::optional<MachineRecord>> FindMachine(std::string_view fingerprint) const;
  Result<std::vector<MachineRecord>> Machines() const;

  Result<std::int64_t> BeginSession(std::int64_t machine_id, const SessionInfo& info);
  // status: "finished", "interrupted", "failed".
  Status FinishSession(std::int64_t session_id, std::string_view status);
  // Every session of every machine, oldest first. Read-only: works on a read-only store.
  Result<std::vector<SessionRecord>> Sessions() const;

  Result<std::int64_t> UpsertProblem(const Problem& problem);
  // The id of a stored problem, or nullopt when this DB has none. Unlike `UpsertProblem` it never
  // writes, so reports can use it on a read-only store.
  Result<std::optional<std::int64_t>> FindProblem(const Problem& problem) const;

  // Committed before it returns (its own transaction).
  Status RecordMeasurement(std::int64_t session_id, std::int64_t machine_id,
                           std::int64_t problem_id, const MeasurementRecord& measurement);
  // Every measurement of `problem_id` on `machine_id`, all sessions, oldest first.
  Result<std::vector<MeasurementRecord>> Measurements(std::int64_t machine_id,
                                                      std::int64_t problem_id) const;

  // Replaces the winner of (machine, problem): the newest tune's confirmed winner is the one
  // that counts on this machine. Committed before it returns.
  Status SetWinner(std::int64_t machine_id, std::int64_t problem_id, std::int64_t session_id,
                   const WinnerRecord& winner);
  // Winners of one machine (by fingerprint), or of all machines when `fingerprint` is empty.
  Result<std::vector<WinnerRecord>> Winners(std::string_view fingerprint) const;

  // Brings machines and winners read from another mmtune DB in (export, merge), all in ONE
  // transaction: on any error this DB is left as it was. A machine new here is added with its
  // stored description and peaks; one already here keeps its description and peaks and only gains
  // the imported peaks when it has none. A winner is added where its machine and problem have
  // none and replaces the stored one only when its gflops are strictly higher; a tie keeps the
  // stored one, so importing the same winners again changes nothing. Imported winners have no
  // session here (session_id NULL) and keep their `updated_at` (when they were tuned) if set.
  // A shape range is added where this DB lacks it (the same machine, kind, threads and range; a
  // stored one keeps its bucket policy). Each winner's and range's fingerprint must be stored
  // already or be among the imported machines (kInvalidArgument).
  Result<ImportCounts> ImportWinners(const WinnerSet& content);

  // Stores (or, with a new bucket policy, updates) a shape range of `machine_id`. Committed
  // before it returns.
  Status RecordShapeRange(std::int64_t machine_id, const ShapeRangeRecord& range);
  // The shape ranges of one machine (by fingerprint), or of all machines when it is empty. Rows
  // that cannot be read are skipped with a warning, as for winners.
  Result<std::vector<ShapeRangeRecord>> ShapeRanges(std::string_view fingerprint) const;

  // Appends one measured held-out shape (kInvalidArgument when the shape is not inside its range
  // or a speed is negative or not finite). Committed before it returns. Validations are
  // measurements of this DB's machines: export and merge do not carry them.
  Status RecordRangeValidation(std::int64_t machine_id, const RangeValidationRecord& record);
  // The validations of one machine (by fingerprint), or of all machines when it is empty, oldest
  // first. Empty for a file older than schema 3 opened read-only.
  Result<std::vector<RangeValidationRecord>> RangeValidations(std::string_view fingerprint) const;

 private:
  struct Impl;
  explicit TuningStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmtune
