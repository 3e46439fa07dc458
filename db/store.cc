#include "db/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "common/log.h"
#include "db/schema.h"
#include "db/sqlite.h"

namespace mmtune {
namespace {

// SQLite waits this long inside a statement for another process's lock before it answers
// SQLITE_BUSY; a measurement commit holds the lock for well under a millisecond, so reaching it
// means another process hung while holding the lock.
constexpr int kBusyTimeoutMs = 10'000;
constexpr std::string_view kInMemoryPath = ":memory:";
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// ---- Values <-> text ----------------------------------------------------------------------------

std::string NowIso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                          now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const std::size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof(text) - length, ".%03dZ", static_cast<int>(millis));
  return text;
}

// JSON text as stored: compact, keys sorted (nlohmann objects are ordered maps), and invalid
// UTF-8 replaced instead of thrown, so dumping can never fail.
std::string DumpJson(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string CanonicalConfigJson(const KernelConfig& config) {
  nlohmann::json json;
  to_json(json, config);
  return DumpJson(json);
}

// Parses JSON from the DB without exceptions; a malformed document is an error naming `what`.
// Neither call below is documented to throw for bad input; the catch keeps that promise at this
// boundary should a future nlohmann or `KernelConfigFromJson` change break it.
Result<nlohmann::json> ParseStoredJson(const std::string& text, std::string_view what) {
  try {
    nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_discarded()) return json;
  } catch (const nlohmann::json::exception&) {
  }
  return MakeError(ErrorCode::kCorrupt, std::string(what) + " is not valid JSON");
}

Result<KernelConfig> ParseStoredConfig(const std::string& text) {
  auto json = ParseStoredJson(text, "config");
  if (!json) return json.error();
  try {
    return KernelConfigFromJson(*json);
  } catch (const nlohmann::json::exception& e) {
    return MakeError(ErrorCode::kCorrupt, std::string("config: ") + e.what());
  }
}

Result<MeasurementStatus> ParseMeasurementStatus(std::string_view text) {
  for (MeasurementStatus status :
       {MeasurementStatus::kOk, MeasurementStatus::kFailed, MeasurementStatus::kSkipped}) {
    if (text == ToString(status)) return status;
  }
  return MakeError(ErrorCode::kCorrupt, "unknown measurement status '" + std::string(text) + "'");
}

Result<MeasurementStage> ParseMeasurementStage(std::string_view text) {
  for (MeasurementStage stage :
       {MeasurementStage::kDefault, MeasurementStage::kSearch, MeasurementStage::kConfirm}) {
    if (text == ToString(stage)) return stage;
  }
  return MakeError(ErrorCode::kCorrupt, "unknown measurement stage '" + std::string(text) + "'");
}

Result<Trans> ParseTransLetter(char letter) {
  if (letter == 'N') return Trans::kNo;
  if (letter == 'T') return Trans::kYes;
  return MakeError(ErrorCode::kCorrupt, std::string("unknown transpose letter '") + letter + "'");
}

bool IsSessionEndStatus(std::string_view status) {
  return status == "finished" || status == "interrupted" || status == "failed";
}

// Rows the store could not decode are skipped, never fatal: one corrupt measurement must not stop
// a tune or a lookup. One warning per read names how many were dropped and why the first was.
class SkippedRows {
 public:
  explicit SkippedRows(std::string what) : what_(std::move(what)) {}
  void Add(const std::string& row, const std::string& why) {
    if (count_++ == 0) first_ = row + ": " + why;
  }
  void Report(const std::string& path) const {
    if (count_ == 0) return;
    Log(LogLevel::kWarning, path + ": skipped " + std::to_string(count_) + " unreadable " + what_ +
                                " (first: " + first_ + ")");
  }

 private:
  std::string what_;
  std::string first_;
  std::int64_t count_ = 0;
};

// Whether a shape range can be stored: what ParseShapeRange and ParseBucketPolicy would accept.
Status ValidateShapeRange(const ShapeRangeRecord& record) {
  const std::string name = "shape range " + record.range.ToString();
  if (record.fingerprint.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, name + " has no machine");
  }
  if (record.threads < 1) {
    return MakeError(ErrorCode::kInvalidArgument, name + " has threads < 1");
  }
  // Parsing the range's text checks every bound as a command line's range is checked.
  if (auto parsed = ParseShapeRange(record.range.ToString()); !parsed || !(*parsed == record.range)) {
    return MakeError(ErrorCode::kInvalidArgument, name + " has a bound outside 1..2^31-1 or "
                                                         "LO > HI");
  }
  if (auto policy = ParseBucketPolicy(record.buckets.ToString()); !policy) {
    return MakeError(ErrorCode::kInvalidArgument, name + ": " + policy.error().message);
  }
  return OkStatus();
}

// Binds parameters 1 to 12 of an insert into shape_ranges (all but updated_at).
sqlite::Statement& BindShapeRange(sqlite::Statement& statement, std::int64_t machine_id,
                                  const ShapeRangeRecord& record) {
  const ShapeRange& r = record.range;
  return statement.Bind(1, machine_id)
      .Bind(2, ToString(record.dtype))
      .Bind(3, ToString(record.layout))
      .Bind(4, TransPairToString(record.trans_a, record.trans_b))
      .Bind(5, record.threads)
      .Bind(6, r.m.lo).Bind(7, r.m.hi).Bind(8, r.n.lo).Bind(9, r.n.hi).Bind(10, r.k.lo)
      .Bind(11, r.k.hi)
      .Bind(12, record.buckets.ToString());
}

// The columns a shape range is read from (table alias r, machines alias ma), in the order
// ReadShapeRangeColumns expects them.
constexpr std::string_view kShapeRangeColumns =
    "ma.fingerprint, r.dtype, r.layout, r.trans, r.threads, r.m_lo, r.m_hi, r.n_lo, r.n_hi, "
    "r.k_lo, r.k_hi, r.buckets";
constexpr int kShapeRangeColumnCount = 12;

// Reads the columns of kShapeRangeColumns, from column 0, into `record`. Returns why the row is
// unreadable, or an empty string.
std::string ReadShapeRangeColumns(sqlite::RowReader& reader, ShapeRangeRecord& record) {
  record.fingerprint = reader.Text(0);
  const std::string dtype = reader.Text(1);
  const std::string layout = reader.Text(2);
  const std::string trans = reader.Text(3);
  record.threads = reader.Int(4, 1, kMaxInt);
  record.range = ShapeRange{{reader.Int64(5), reader.Int64(6)},
                            {reader.Int64(7), reader.Int64(8)},
                            {reader.Int64(9), reader.Int64(10)}};
  const std::string buckets = reader.Text(11);
  if (!reader.ok()) return reader.error();
  auto parsed_dtype = ParseDType(dtype);
  auto parsed_layout = ParseLayout(layout);
  auto parsed_trans = ParseTransPair(trans);
  auto policy = ParseBucketPolicy(buckets);
  if (!parsed_dtype || !parsed_layout || !parsed_trans || !policy) {
    return "kind '" + dtype + " " + layout + " " + trans + "' or buckets '" + buckets +
           "' is not readable";
  }
  record.dtype = *parsed_dtype;
  record.layout = *parsed_layout;
  std::tie(record.trans_a, record.trans_b) = *parsed_trans;
  record.buckets = *policy;
  if (Status valid = ValidateShapeRange(record); !valid) return valid.error().message;
  return "";
}

// Whether a validation can be stored: a storable range, a shape inside it, finite speeds >= 0.
Status ValidateRangeValidation(const RangeValidationRecord& record) {
  if (Status status = ValidateShapeRange(record.range); !status) return status;
  const Shape& s = record.shape;
  const std::string name = "validation of " + std::to_string(s.m) + "x" + std::to_string(s.n) +
                           "x" + std::to_string(s.k);
  if (!record.range.range.Contains(s)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     name + " is not inside " + record.range.range.ToString());
  }
  if (record.runtime_tier.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, name + " has no runtime tier");
  }
  for (double value : {record.own_gflops, record.runtime_gflops, record.nearest_gflops,
                       record.default_gflops, record.padded_gflops, record.own_tune_seconds}) {
    if (!std::isfinite(value) || value < 0.0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       name + " has a speed or time that is negative or not finite");
    }
  }
  return OkStatus();
}

// Reads `SELECT id, fingerprint, fingerprint_basis, description, peaks FROM machines`.
Result<MachineRecord> ReadMachineRow(const sqlite::Statement& row) {
  sqlite::RowReader reader(row);
  MachineRecord record;
  record.id = reader.Int64(0);
  record.fingerprint = reader.Text(1);
  record.fingerprint_basis = reader.Text(2);
  const std::string description = reader.Text(3);
  const std::optional<std::string> peaks = reader.OptionalText(4);
  if (!reader.ok()) return MakeError(ErrorCode::kCorrupt, reader.error());
  auto description_json = ParseStoredJson(description, "description");
  if (!description_json) return description_json.error();
  record.description = std::move(*description_json);
  if (peaks) {
    auto peaks_json = ParseStoredJson(*peaks, "peaks");
    if (!peaks_json) return peaks_json.error();
    record.peaks = std::move(*peaks_json);
  }
  return record;
}

// ---- Checks before SQLite touches the file ------------------------------------------------------

std::string ParentDirectory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Catches what SQLite would report late or vaguely ("unable to open database file"), or not at
// all: SQLite silently opens a read-only file read-only even when asked for read-write, and would
// then fail on the first write, after the caller had started work.
Status CheckPathBeforeOpening(const std::string& path, DbOpenMode mode) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error != ENOENT) {
      return MakeError(ErrorCode::kIo, "cannot access " + path + ": " + std::strerror(error));
    }
    if (mode == DbOpenMode::kReadOnly) {
      return MakeError(ErrorCode::kNotFound, "DB file " + path + " does not exist");
    }
    const std::string directory = ParentDirectory(path);
    struct stat directory_info {};
    if (::stat(directory.c_str(), &directory_info) != 0 || !S_ISDIR(directory_info.st_mode)) {
      return MakeError(ErrorCode::kNotFound,
                       "cannot create " + path + ": directory " + directory + " does not exist");
    }
    if (::access(directory.c_str(), W_OK | X_OK) != 0) {
      return MakeError(ErrorCode::kIo,
                       "cannot create " + path + ": directory " + directory + " is read-only");
    }
    return OkStatus();
  }
  if (S_ISDIR(info.st_mode)) {
    return MakeError(ErrorCode::kIo, path + " is a directory, not a DB file");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return MakeError(ErrorCode::kIo, "cannot read " + path + ": " + std::strerror(errno));
  }
  if (mode == DbOpenMode::kReadWrite) {
    if (::access(path.c_str(), W_OK) != 0) {
      return MakeError(ErrorCode::kIo, path + " is read-only");
    }
    // WAL mode keeps `-wal` and `-shm` files next to the DB, so its directory must be writable.
    const std::string directory = ParentDirectory(path);
    if (::access(directory.c_str(), W_OK | X_OK) != 0) {
      return MakeError(ErrorCode::kIo, path + " is read-only: its directory " + directory +
                                           " is not writable");
    }
  }
  return OkStatus();
}

}  // namespace

const char* ToString(MeasurementStage stage) {
  switch (stage) {
    case MeasurementStage::kDefault: return "default";
    case MeasurementStage::kSearch: return "search";
    case MeasurementStage::kConfirm: return "confirm";
  }
  return "?";
}

std::string ConfigHash(const KernelConfig& config) {
  // The same 64-bit FNV-1a as machine fingerprints: pinned by published test vectors, identical on
  // every platform, and the canonical JSON it hashes is what the `configs` table stores.
  return FingerprintOf(CanonicalConfigJson(config));
}

// ---- TuningStore ------------------------------------------------------------------------------

struct TuningStore::Impl {
  Impl(sqlite::Database database, int version)
      : db(std::move(database)), schema_version(version), statements(db) {}

  Result<sqlite::StatementCache::Lease> Prepare(const std::string& sql) {
    return statements.Get(sql);
  }
  // The id of the config's row, inserting it on first use. Runs inside the caller's transaction.
  Result<std::int64_t> InternConfig(const KernelConfig& config);
  // The problems' call form as a column of `alias` ("p." or ""): a file older than version 4,
  // read as it is, has plain problems only.
  std::string FormColumn(const std::string& alias) const {
    return schema_version >= 4 ? alias + "form" : std::string("'plain'");
  }
  // The id of the problem's row, inserting it on first use. Runs inside the caller's transaction;
  // the caller has validated the problem.
  Result<std::int64_t> InternProblem(const Problem& problem);
  // The id of the machine's row, inserting it from its stored description on first use and giving
  // it `record.peaks` when it has none. Runs inside the caller's transaction.
  Result<std::int64_t> ImportMachine(const MachineRecord& record, const std::string& now,
                                     ImportCounts& counts);

  sqlite::Database db;
  int schema_version;
  sqlite::StatementCache statements;  // after `db`: destroyed first
};

Result<std::int64_t> TuningStore::Impl::InternConfig(const KernelConfig& config) {
  const std::string json = CanonicalConfigJson(config);
  const std::string hash = FingerprintOf(json);
  {
    auto insert = Prepare("INSERT OR IGNORE INTO configs (hash, json) VALUES (?1, ?2)");
    if (!insert) return insert.error();
    if (Status status = (*insert)->Bind(1, hash).Bind(2, json).Run(); !status) {
      return status.error();
    }
  }
  auto select = Prepare("SELECT id, json FROM configs WHERE hash = ?1");
  if (!select) return select.error();
  auto row = (*select)->Bind(1, hash).Step();
  if (!row) return row.error();
  if (!*row) return MakeError(ErrorCode::kInternal, db.path() + ": config " + hash + " vanished");
  sqlite::RowReader reader(**select);
  const std::int64_t id = reader.Int64(0);
  const std::string stored = reader.Text(1);
  // Either a 64-bit hash collision or a row someone edited: storing measurements under it would
  // silently attribute them to another config.
  if (!reader.ok() || stored != json) {
    return MakeError(ErrorCode::kCorrupt, db.path() + ": config row " + hash +
                                              " does not hold the config it is keyed by");
  }
  return id;
}

Result<std::int64_t> TuningStore::Impl::InternProblem(const Problem& problem) {
  const std::string trans = TransPairToString(problem.trans_a, problem.trans_b);
  auto bind_key = [&](sqlite::Statement& statement) -> sqlite::Statement& {
    return statement.Bind(1, ToString(problem.dtype)).Bind(2, ToString(problem.layout))
        .Bind(3, trans).Bind(4, problem.m).Bind(5, problem.n).Bind(6, problem.k)
        .Bind(7, problem.threads).Bind(8, FormName(problem));
  };
  {
    auto insert = Prepare(
        "INSERT OR IGNORE INTO problems (dtype, layout, trans, m, n, k, threads, form) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!insert) return insert.error();
    if (Status status = bind_key(**insert).Run(); !status) return status.error();
  }
  auto select = Prepare(
      "SELECT id FROM problems WHERE dtype = ?1 AND layout = ?2 AND trans = ?3 AND m = ?4 "
      "AND n = ?5 AND k = ?6 AND threads = ?7 AND form = ?8");
  if (!select) return select.error();
  auto row = bind_key(**select).Step();
  if (!row) return row.error();
  if (!*row) return MakeError(ErrorCode::kInternal, db.path() + ": upserted problem vanished");
  return (*select)->ColumnInt64(0);
}

Result<std::int64_t> TuningStore::Impl::ImportMachine(const MachineRecord& record,
                                                      const std::string& now,
                                                      ImportCounts& counts) {
  std::optional<std::int64_t> id;
  bool has_peaks = false;
  {
    auto select = Prepare("SELECT id, peaks IS NOT NULL FROM machines WHERE fingerprint = ?1");
    if (!select) return select.error();
    auto row = (*select)->Bind(1, record.fingerprint).Step();
    if (!row) return row.error();
    if (*row) {
      id = (*select)->ColumnInt64(0);
      has_peaks = (*select)->ColumnInt64(1) != 0;
    }
  }
  if (!id) {
    auto insert = Prepare(
        "INSERT INTO machines (fingerprint, fingerprint_basis, description, peaks, created_at, "
        "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)");
    if (!insert) return insert.error();
    (*insert)->Bind(1, record.fingerprint).Bind(2, record.fingerprint_basis)
        .Bind(3, DumpJson(record.description)).Bind(5, now);
    if (record.peaks.is_null()) {
      (*insert)->BindNull(4);
    } else {
      (*insert)->Bind(4, DumpJson(record.peaks));
    }
    if (Status status = (*insert)->Run(); !status) return status.error();
    ++counts.machines_added;
    return sqlite3_last_insert_rowid(db.handle());
  }
  // The description stays: the stored one describes the same machine type (same fingerprint), and
  // peaks measured on this side are never overwritten by another machine's measurement.
  if (!has_peaks && !record.peaks.is_null()) {
    auto update = Prepare("UPDATE machines SET peaks = ?2, updated_at = ?3 WHERE id = ?1");
    if (!update) return update.error();
    if (Status status = (*update)->Bind(1, *id).Bind(2, DumpJson(record.peaks)).Bind(3, now).Run();
        !status) {
      return status.error();
    }
    ++counts.machines_given_peaks;
  }
  return *id;
}

TuningStore::TuningStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TuningStore::TuningStore(TuningStore&&) noexcept = default;
TuningStore& TuningStore::operator=(TuningStore&&) noexcept = default;
TuningStore::~TuningStore() = default;

int TuningStore::schema_version() const { return impl_->schema_version; }
const std::string& TuningStore::path() const { return impl_->db.path(); }

Result<TuningStore> TuningStore::Open(const std::string& path, DbOpenMode mode) {
  if (path.empty()) return MakeError(ErrorCode::kInvalidArgument, "empty DB path");
  const bool in_memory = path == kInMemoryPath;
  const bool read_write = mode == DbOpenMode::kReadWrite;
  if (!in_memory) {
    if (Status status = CheckPathBeforeOpening(path, mode); !status) return status.error();
  }
  auto db = sqlite::Database::Open(
      path, read_write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY);
  if (!db) return db.error();
  // The access() checks above pass for root on a 0444 file, and a file can change in between;
  // SQLite's own verdict is the last word.
  if (read_write && db->IsReadOnly()) {
    return MakeError(ErrorCode::kIo, path + " is read-only");
  }
  sqlite3_busy_timeout(db->handle(), kBusyTimeoutMs);

  // Everything up to here only read the file; it is written only once it is known to be ours.
  auto identity = ReadDbIdentity(*db);
  if (!identity) return identity.error();
  auto version = CheckDbIdentity(*identity, path);
  if (!version) return version.error();

  if (!read_write) {
    if (identity->IsBlank()) {
      return MakeError(ErrorCode::kCorrupt, path + " is empty, not an mmtune database");
    }
    return TuningStore(std::make_unique<Impl>(std::move(*db), *version));
  }

  if (!in_memory) {
    // WAL lets readers (a `lookup`, a progress query) run while a tune commits, and makes each
    // commit one append. NORMAL sync in WAL mode survives a killed process, which is the failure
    // the tuner must survive; only a power cut may lose the last few commits.
    if (Status status = db->ExecuteWithBusyRetry("PRAGMA journal_mode = WAL",
                                                 sqlite::Transaction::kDefaultPatienceMs);
        !status) {
      return status.error();
    }
    if (Status status = db->Execute("PRAGMA synchronous = NORMAL"); !status) return status.error();
  }
  if (Status status = db->Execute("PRAGMA foreign_keys = ON"); !status) return status.error();
  if (*version < kDbSchemaVersion) {
    if (Status status = MigrateToCurrentSchema(*db); !status) return status.error();
  }
  return TuningStore(std::make_unique<Impl>(std::move(*db), kDbSchemaVersion));
}

Result<std::int64_t> TuningStore::UpsertMachine(const Machine& machine,
                                                const nlohmann::json& peaks) {
  nlohmann::json description;
  to_json(description, machine);
  const std::string now = NowIso8601();
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  {
    // COALESCE keeps measured peaks when this call has none, so re-registering the machine at the
    // start of every tune does not forget them.
    auto upsert = impl_->Prepare(
        "INSERT INTO machines (fingerprint, fingerprint_basis, description, peaks, created_at, "
        "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5) "
        "ON CONFLICT (fingerprint) DO UPDATE SET fingerprint_basis = excluded.fingerprint_basis, "
        "description = excluded.description, peaks = COALESCE(excluded.peaks, peaks), "
        "updated_at = excluded.updated_at");
    if (!upsert) return upsert.error();
    (*upsert)->Bind(1, machine.fingerprint).Bind(2, machine.fingerprint_basis)
        .Bind(3, DumpJson(description)).Bind(5, now);
    if (peaks.is_null()) {
      (*upsert)->BindNull(4);
    } else {
      (*upsert)->Bind(4, DumpJson(peaks));
    }
    if (Status status = (*upsert)->Run(); !status) return status.error();
  }
  std::int64_t id = 0;
  {
    auto select = impl_->Prepare("SELECT id FROM machines WHERE fingerprint = ?1");
    if (!select) return select.error();
    auto row = (*select)->Bind(1, machine.fingerprint).Step();
    if (!row) return row.error();
    if (!*row) return MakeError(ErrorCode::kInternal, path() + ": upserted machine vanished");
    id = (*select)->ColumnInt64(0);
  }
  if (Status status = transaction->Commit(); !status) return status.error();
  return id;
}

Result<std::optional<MachineRecord>> TuningStore::FindMachine(std::string_view fingerprint) const {
  auto select = impl_->Prepare(
      "SELECT id, fingerprint, fingerprint_basis, description, peaks FROM machines "
      "WHERE fingerprint = ?1");
  if (!select) return select.error();
  auto row = (*select)->Bind(1, fingerprint).Step();
  if (!row) return row.error();
  if (!*row) return std::optional<MachineRecord>();
  auto record = ReadMachineRow(**select);
  if (!record) {
    return MakeError(ErrorCode::kCorrupt, path() + ": machine " + std::string(fingerprint) +
                                              ": " + record.error().message);
  }
  return std::optional<MachineRecord>(std::move(*record));
}

Result<std::vector<MachineRecord>> TuningStore::Machines() const {
  auto select = impl_->Prepare(
      "SELECT id, fingerprint, fingerprint_basis, description, peaks FROM machines ORDER BY id");
  if (!select) return select.error();
  std::vector<MachineRecord> machines;
  SkippedRows skipped("machines");
  while (true) {
    auto row = (*select)->Step();
    if (!row) return row.error();
    if (!*row) break;
    auto record = ReadMachineRow(**select);
    if (record) {
      machines.push_back(std::move(*record));
    } else {
      skipped.Add("id " + std::to_string((*select)->ColumnInt64(0)), record.error().message);
    }
  }
  skipped.Report(path());
  return machines;
}

Result<std::int64_t> TuningStore::BeginSession(std::int64_t machine_id, const SessionInfo& info) {
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  {
    auto insert = impl_->Prepare(
        "INSERT INTO sessions (machine_id, mmtune_version, git_revision, strategy, "
        "budget_seconds, max_evals, seed, command, started_at, status) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'running')");
    if (!insert) return insert.error();
    // SQLite integers are signed: the seed is stored as the int64 with the same bits.
    (*insert)->Bind(1, machine_id).Bind(2, info.mmtune_version).Bind(3, info.git_revision)
        .Bind(4, info.strategy).Bind(5, info.budget_seconds).Bind(6, info.max_evals)
        .Bind(7, static_cast<std::int64_t>(info.seed)).Bind(8, info.command)
        .Bind(9, NowIso8601());
    if (Status status = (*insert)->Run(); !status) return status.error();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(impl_->db.handle());
  if (Status status = transaction->Commit(); !status) return status.error();
  return id;
}

Status TuningStore::FinishSession(std::int64_t session_id, std::string_view status) {
  if (!IsSessionEndStatus(status)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "session status '" + std::string(status) +
                         "' is not one of finished, interrupted, failed");
  }
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  {
    auto update = impl_->Prepare(
        "UPDATE sessions SET status = ?2, finished_at = ?3 WHERE id = ?1");
    if (!update) return update.error();
    if (Status result = (*update)->Bind(1, session_id).Bind(2, status).Bind(3, NowIso8601()).Run();
        !result) {
      return result;
    }
  }
  if (sqlite3_changes(impl_->db.handle()) != 1) {
    return MakeError(ErrorCode::kNotFound,
                     path() + ": no session " + std::to_string(session_id) + " to finish");
  }
  return transaction->Commit();
}

Result<std::vector<SessionRecord>> TuningStore::Sessions() const {
  auto select = impl_->Prepare(
      "SELECT id, machine_id, mmtune_version, git_revision, strategy, budget_seconds, max_evals, "
      "seed, command, started_at, finished_at, status FROM sessions ORDER BY id");
  if (!select) return select.error();
  std::vector<SessionRecord> sessions;
  SkippedRows skipped("sessions");
  while (true) {
    auto row = (*select)->Step();
    if (!row) return row.error();
    if (!*row) break;
    sqlite::RowReader reader(**select);
    SessionRecord record;
    record.id = reader.Int64(0);
    record.machine_id = reader.Int64(1);
    record.info.mmtune_version = reader.Text(2);
    record.info.git_revision = reader.Text(3);
    record.info.strategy = reader.Text(4);
    record.info.budget_seconds = reader.Double(5);
    record.info.max_evals = reader.Int64(6);
    // Stored as the int64 with the same bits (see `BeginSession`).
    record.info.seed = static_cast<std::uint64_t>(reader.Int64(7));
    record.info.command = reader.Text(8);
    record.started_at = reader.Text(9);
    record.finished_at = reader.OptionalText(10).value_or("");
    record.status = reader.Text(11);
    if (!reader.ok()) {
      skipped.Add("id " + std::to_string((*select)->ColumnInt64(0)), reader.error());
      continue;
    }
    sessions.push_back(std::move(record));
  }
  skipped.Report(path());
  return sessions;
}

Result<std::int64_t> TuningStore::UpsertProblem(const Problem& problem) {
  if (Status status = problem.Validate(); !status) return status.error();
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  auto id = impl_->InternProblem(problem);
  if (!id) return id.error();
  if (Status status = transaction->Commit(); !status) return status.error();
  return *id;
}

Result<std::optional<std::int64_t>> TuningStore::FindProblem(const Problem& problem) const {
  auto select = impl_->Prepare(
      "SELECT id FROM problems WHERE dtype = ?1 AND layout = ?2 AND trans = ?3 AND m = ?4 "
      "AND n = ?5 AND k = ?6 AND threads = ?7 AND " + impl_->FormColumn("") + " = ?8");
  if (!select) return select.error();
  (*select)->Bind(1, ToString(problem.dtype)).Bind(2, ToString(problem.layout))
      .Bind(3, TransPairToString(problem.trans_a, problem.trans_b)).Bind(4, problem.m)
      .Bind(5, problem.n).Bind(6, problem.k).Bind(7, problem.threads)
      .Bind(8, FormName(problem));
  auto row = (*select)->Step();
  if (!row) return row.error();
  if (!*row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>((*select)->ColumnInt64(0));
}

Status TuningStore::RecordMeasurement(std::int64_t session_id, std::int64_t machine_id,
                                      std::int64_t problem_id,
                                      const MeasurementRecord& measurement) {
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  auto config_id = impl_->InternConfig(measurement.config);
  if (!config_id) return config_id.error();
  {
    auto insert = impl_->Prepare(
        "INSERT INTO measurements (session_id, machine_id, problem_id, config_id, status, stage, "
        "error, median_seconds, min_seconds, mad_seconds, samples, gflops, eval_index, "
        "measured_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    if (!insert) return insert.error();
    (*insert)->Bind(1, session_id).Bind(2, machine_id).Bind(3, problem_id).Bind(4, *config_id)
        .Bind(5, ToString(measurement.status)).Bind(6, ToString(measurement.stage))
        .Bind(7, measurement.error).Bind(8, measurement.median_seconds)
        .Bind(9, measurement.min_seconds).Bind(10, measurement.mad_seconds)
        .Bind(11, measurement.samples).Bind(12, measurement.gflops)
        .Bind(13, measurement.eval_index).Bind(14, NowIso8601());
    if (Status status = (*insert)->Run(); !status) return status;
  }
  return transaction->Commit();
}

Result<std::vector<MeasurementRecord>> TuningStore::Measurements(std::int64_t machine_id,
                                                                 std::int64_t problem_id) const {
  auto select = impl_->Prepare(
      "SELECT ms.id, c.json, ms.status, ms.stage, ms.error, ms.median_seconds, ms.min_seconds, "
      "ms.mad_seconds, ms.samples, ms.gflops, ms.eval_index, ms.session_id "
      "FROM measurements AS ms JOIN configs AS c ON c.id = ms.config_id "
      "WHERE ms.machine_id = ?1 AND ms.problem_id = ?2 ORDER BY ms.id");
  if (!select) return select.error();
  (*select)->Bind(1, machine_id).Bind(2, problem_id);
  std::vector<MeasurementRecord> measurements;
  SkippedRows skipped("measurements");
  while (true) {
    auto row = (*select)->Step();
    if (!row) return row.error();
    if (!*row) break;
    sqlite::RowReader reader(**select);
    const std::string row_id = "id " + std::to_string((*select)->ColumnInt64(0));
    const std::string config_json = reader.Text(1);
    const std::string status_text = reader.Text(2);
    const std::string stage_text = reader.Text(3);
    MeasurementRecord record;
    record.error = reader.Text(4);
    record.median_seconds = reader.Double(5);
    record.min_seconds = reader.Double(6);
    record.mad_seconds = reader.Double(7);
    record.samples = reader.Int(8, 0, kMaxInt);
    record.gflops = reader.Double(9);
    record.eval_index = reader.Int(10, 0, kMaxInt);
    record.session_id = reader.Int64(11);
    if (!reader.ok()) {
      skipped.Add(row_id, reader.error());
      continue;
    }
    auto config = ParseStoredConfig(config_json);
    auto status = ParseMeasurementStatus(status_text);
    auto stage = ParseMeasurementStage(stage_text);
    if (!config || !status || !stage) {
      skipped.Add(row_id, !config ? config.error().message
                          : !status ? status.error().message
                                    : stage.error().message);
      continue;
    }
    record.config = *config;
    record.status = *status;
    record.stage = *stage;
    measurements.push_back(std::move(record));
  }
  skipped.Report(path());
  return measurements;
}

Status TuningStore::SetWinner(std::int64_t machine_id, std::int64_t problem_id,
                              std::int64_t session_id, const WinnerRecord& winner) {
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  auto config_id = impl_->InternConfig(winner.config);
  if (!config_id) return config_id.error();
  {
    auto upsert = impl_->Prepare(
        "INSERT INTO winners (machine_id, problem_id, config_id, gflops, median_seconds, "
        "default_gflops, session_id, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
        "ON CONFLICT (machine_id, problem_id) DO UPDATE SET config_id = excluded.config_id, "
        "gflops = excluded.gflops, median_seconds = excluded.median_seconds, "
        "default_gflops = excluded.default_gflops, session_id = excluded.session_id, "
        "updated_at = excluded.updated_at");
    if (!upsert) return upsert.error();
    (*upsert)->Bind(1, machine_id).Bind(2, problem_id).Bind(3, *config_id)
        .Bind(4, winner.gflops).Bind(5, winner.median_seconds).Bind(6, winner.default_gflops)
        .Bind(8, NowIso8601());
    // A winner merged in from another DB has no session here; 0 stands for "none".
    if (session_id > 0) {
      (*upsert)->Bind(7, session_id);
    } else {
      (*upsert)->BindNull(7);
    }
    if (Status status = (*upsert)->Run(); !status) return status;
  }
  return transaction->Commit();
}

Result<std::vector<WinnerRecord>> TuningStore::Winners(std::string_view fingerprint) const {
  // Two texts rather than `?1 = '' OR ...`, so that the one-machine query can use the
  // fingerprint's unique index.
  const std::string select_all =
      "SELECT ma.fingerprint, p.dtype, p.layout, p.trans, p.m, p.n, p.k, p.threads, c.json, "
      "w.gflops, w.median_seconds, w.default_gflops, w.session_id, w.updated_at, w.problem_id, " +
      impl_->FormColumn("p.") +
      " FROM winners AS w JOIN machines AS ma ON ma.id = w.machine_id "
      "JOIN problems AS p ON p.id = w.problem_id JOIN configs AS c ON c.id = w.config_id";
  auto select = fingerprint.empty()
                    ? impl_->Prepare(select_all + " ORDER BY w.machine_id, w.problem_id")
                    : impl_->Prepare(select_all +
                                     " WHERE ma.fingerprint = ?1 ORDER BY w.problem_id");
  if (!select) return select.error();
  if (!fingerprint.empty()) (*select)->Bind(1, fingerprint);
  std::vector<WinnerRecord> winners;
  SkippedRows skipped("winners");
  while (true) {
    auto row = (*select)->Step();
    if (!row) return row.error();
    if (!*row) break;
    sqlite::RowReader reader(**select);
    WinnerRecord record;
    record.fingerprint = reader.Text(0);
    const std::string dtype = reader.Text(1);
    const std::string layout = reader.Text(2);
    const std::string trans = reader.Text(3);
    record.problem.m = reader.Int64In(4, 0, kMaxInt64);
    record.problem.n = reader.Int64In(5, 0, kMaxInt64);
    record.problem.k = reader.Int64In(6, 0, kMaxInt64);
    record.problem.threads = reader.Int(7, 1, kMaxInt);
    const std::string config_json = reader.Text(8);
    record.gflops = reader.Double(9);
    record.median_seconds = reader.Double(10);
    record.default_gflops = reader.Double(11);
    record.session_id = reader.OptionalInt64(12).value_or(0);
    record.updated_at = reader.Text(13);
    // The winners table is WITHOUT ROWID; its key names the row in the warning.
    const std::string row_id = "machine " + record.fingerprint + " problem " +
                               std::to_string((*select)->ColumnInt64(14));
    const std::string form = reader.Text(15);
    if (!reader.ok()) {
      skipped.Add(row_id, reader.error());
      continue;
    }
    auto parsed_dtype = ParseDType(dtype);
    auto parsed_layout = ParseLayout(layout);
    if (!parsed_dtype || !parsed_layout || trans.size() != 2) {
      skipped.Add(row_id, "problem '" + dtype + " " + layout + " " + trans + "' is not readable");
      continue;
    }
    auto trans_a = ParseTransLetter(trans[0]);
    auto trans_b = ParseTransLetter(trans[1]);
    auto config = ParseStoredConfig(config_json);
    const Status parsed_form = ParseFormName(form, record.problem);
    if (!trans_a || !trans_b || !config || !parsed_form) {
      skipped.Add(row_id, !config        ? config.error().message
                          : !parsed_form ? parsed_form.error().message
                                         : "transpose '" + trans + "'");
      continue;
    }
    record.problem.dtype = *parsed_dtype;
    record.problem.layout = *parsed_layout;
    record.problem.trans_a = *trans_a;
    record.problem.trans_b = *trans_b;
    record.config = *config;
    winners.push_back(std::move(record));
  }
  skipped.Report(path());
  return winners;
}

Status TuningStore::RecordShapeRange(std::int64_t machine_id, const ShapeRangeRecord& range) {
  if (Status status = ValidateShapeRange(range); !status) return status;
  auto upsert = impl_->Prepare(
      "INSERT INTO shape_ranges (machine_id, dtype, layout, trans, threads, m_lo, m_hi, n_lo, "
      "n_hi, k_lo, k_hi, buckets, updated_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
      "ON CONFLICT DO UPDATE SET buckets = excluded.buckets, updated_at = excluded.updated_at");
  if (!upsert) return upsert.error();
  BindShapeRange(**upsert, machine_id, range).Bind(13, NowIso8601());
  return (*upsert)->Run();
}

Result<std::vector<ShapeRangeRecord>> TuningStore::ShapeRanges(
    std::string_view fingerprint) const {
  // A file of the first schema opened read-only (not migrated) has no ranges table.
  if (impl_->schema_version < 2) return std::vector<ShapeRangeRecord>{};
  const std::string select_all = "SELECT " + std::string(kShapeRangeColumns) +
                                 ", r.updated_at "
                                 "FROM shape_ranges AS r JOIN machines AS ma ON ma.id = r.machine_id";
  const std::string order = " ORDER BY r.machine_id, r.dtype, r.layout, r.trans, r.threads, "
                            "r.m_lo, r.m_hi, r.n_lo, r.n_hi, r.k_lo, r.k_hi";
  auto select = fingerprint.empty()
                    ? impl_->Prepare(select_all + order)
                    : impl_->Prepare(select_all + " WHERE ma.fingerprint = ?1" + order);
  if (!select) return select.error();
  if (!fingerprint.empty()) (*select)->Bind(1, fingerprint);
  std::vector<ShapeRangeRecord> ranges;
  SkippedRows skipped("shape ranges");
  while (true) {
    auto row = (*select)->Step();
    if (!row) return row.error();
    if (!*row) break;
    sqlite::RowReader reader(**select);
    ShapeRangeRecord record;
    std::string why = ReadShapeRangeColumns(reader, record);
    record.updated_at = reader.Text(kShapeRangeColumnCount);
    if (why.empty() && !reader.ok()) why = reader.error();
    if (!why.empty()) {
      skipped.Add("machine " + record.fingerprint + " range " + record.range.ToString(), why);
      continue;
    }
    ranges.push_back(std::move(record));
  }
  skipped.Report(path());
  return ranges;
}

Status TuningStore::RecordRangeValidation(std::int64_t machine_id,
                                          const RangeValidationRecord& record) {
  if (Status status = ValidateRangeValidation(record); !status) return status;
  auto insert = impl_->Prepare(
      "INSERT INTO range_validations (machine_id, dtype, layout, trans, threads, m_lo, m_hi, "
      "n_lo, n_hi, k_lo, k_hi, buckets, session_id, m, n, k, runtime_tier, own_gflops, "
      "runtime_gflops, nearest_gflops, default_gflops, own_tune_seconds, measured_at, "
      "padded_gflops) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20, ?21, ?22, ?23, ?24)");
  if (!insert) return insert.error();
  BindShapeRange(**insert, machine_id, record.range)
      .Bind(14, record.shape.m).Bind(15, record.shape.n).Bind(16, record.shape.k)
      .Bind(17, record.runtime_tier)
      .Bind(18, record.own_gflops).Bind(19, record.runtime_gflops)
      .Bind(20, record.nearest_gflops).Bind(21, record.default_gflops)
      .Bind(22, record.own_tune_seconds).Bind(23, NowIso8601());
  if (record.padded_gflops > 0.0) {
    (*insert)->Bind(24, record.padded_gflops);
  } else {
    (*insert)->BindNull(24);
  }
  // A validation outside a tune session (a test, a tool) has no session; 0 stands for "none".
  if (record.session_id > 0) {
    (*insert)->Bind(13, record.session_id);
  } else {
    (*insert)->BindNull(13);
  }
  return (*insert)->Run();
}

Result<std::vector<RangeValidationRecord>> TuningStore::RangeValidations(
    std::string_view fingerprint) const {
  // A file older than schema 3 opened read-only (not migrated) has no validations table.
  if (impl_->schema_version < 3) return std::vector<RangeValidationRecord>{};
  const std::string select_all =
      "SELECT " + std::string(kShapeRangeColumns) +
      ", r.session_id, r.m, r.n, r.k, r.runtime_tier, r.own_gflops, r.runtime_gflops, "
      "r.nearest_gflops, r.default_gflops, r.own_tune_seconds, r.measured_at, r.id, "
      "r.padded_gflops "
      "FROM range_validations AS r JOIN machines AS ma ON ma.id = r.machine_id";
  auto select = fingerprint.empty()
                    ? impl_->Prepare(select_all + " ORDER BY r.id")
                    : impl_->Prepare(select_all + " WHERE ma.fingerprint = ?1 ORDER BY r.id");
  if (!select) return select.error();
  if (!fingerprint.empty()) (*select)->Bind(1, fingerprint);
  std::vector<RangeValidationRecord> validations;
  SkippedRows skipped("range validations");
  while (true) {
    auto row = (*select)->Step();
    if (!row) return row.error();
    if (!*row) break;
    sqlite::RowReader reader(**select);
    RangeValidationRecord record;
    const int c = kShapeRangeColumnCount;
    const std::string row_id = "validation " + std::to_string((*select)->ColumnInt64(c + 11));
    if (auto why = ReadShapeRangeColumns(reader, record.range); !why.empty()) {
      skipped.Add(row_id, why);
      continue;
    }
    record.session_id = reader.OptionalInt64(c).value_or(0);
    record.shape = Shape{reader.Int64In(c + 1, 1, kMaxInt64), reader.Int64In(c + 2, 1, kMaxInt64),
                         reader.Int64In(c + 3, 1, kMaxInt64)};
    record.runtime_tier = reader.Text(c + 4);
    record.own_gflops = reader.Double(c + 5);
    record.runtime_gflops = reader.Double(c + 6);
    record.nearest_gflops = reader.Double(c + 7);
    record.default_gflops = reader.Double(c + 8);
    record.own_tune_seconds = reader.Double(c + 9);
    record.measured_at = reader.Text(c + 10);
    record.padded_gflops = reader.OptionalDouble(c + 12).value_or(0.0);
    if (!reader.ok()) {
      skipped.Add(row_id, reader.error());
      continue;
    }
    if (Status valid = ValidateRangeValidation(record); !valid) {
      skipped.Add(row_id, valid.error().message);
      continue;
    }
    validations.push_back(std::move(record));
  }
  skipped.Report(path());
  return validations;
}

Result<ImportCounts> TuningStore::ImportWinners(const WinnerSet& content) {
  const std::vector<MachineRecord>& machines = content.machines;
  const std::vector<WinnerRecord>& winners = content.winners;
  // Checked before the transaction starts, so a bad record cannot leave half an import behind
  // even if a rollback were to fail.
  for (const MachineRecord& machine : machines) {
    if (machine.fingerprint.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "imported machine without a fingerprint");
    }
  }
  for (const WinnerRecord& winner : winners) {
    if (Status status = winner.problem.Validate(); !status) return status.error();
    // NaN would reach the NOT NULL column as NULL and fail the whole import late.
    if (!(winner.gflops >= 0.0) || !(winner.median_seconds >= 0.0) ||
        !(winner.default_gflops >= 0.0)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "imported winner of " + winner.problem.ToString() +
                           " has a negative or NaN speed");
    }
  }
  for (const ShapeRangeRecord& range : content.ranges) {
    if (Status status = ValidateShapeRange(range); !status) return status.error();
  }
  const std::string now = NowIso8601();
  ImportCounts counts;
  auto transaction = sqlite::Transaction::Begin(impl_->db);
  if (!transaction) return transaction.error();
  std::map<std::string, std::int64_t, std::less<>> machine_ids;
  for (const MachineRecord& machine : machines) {
    auto id = impl_->ImportMachine(machine, now, counts);
    if (!id) return id.error();
    machine_ids[machine.fingerprint] = *id;
  }
  // The id of an imported record's machine: imported just now, or stored already.
  auto machine_id_of = [&](const std::string& fingerprint,
                           const std::string& what) -> Result<std::int64_t> {
    auto known = machine_ids.find(fingerprint);
    if (known != machine_ids.end()) return known->second;
    auto select = impl_->Prepare("SELECT id FROM machines WHERE fingerprint = ?1");
    if (!select) return select.error();
    auto row = (*select)->Bind(1, fingerprint).Step();
    if (!row) return row.error();
    if (!*row) {
      return MakeError(ErrorCode::kInvalidArgument, "imported " + what + " names machine " +
                                                        fingerprint + ", which is not imported");
    }
    return machine_ids.emplace(fingerprint, (*select)->ColumnInt64(0)).first->second;
  };
  for (const ShapeRangeRecord& range : content.ranges) {
    auto machine_id = machine_id_of(range.fingerprint, "range " + range.range.ToString());
    if (!machine_id) return machine_id.error();
    auto insert = impl_->Prepare(
        "INSERT INTO shape_ranges (machine_id, dtype, layout, trans, threads, m_lo, m_hi, n_lo, "
        "n_hi, k_lo, k_hi, buckets, updated_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT DO NOTHING");
    if (!insert) return insert.error();
    BindShapeRange(**insert, *machine_id, range)
        .Bind(13, range.updated_at.empty() ? now : range.updated_at);
    if (Status status = (*insert)->Run(); !status) return status.error();
    counts.ranges_added += impl_->db.Changes();
  }
  for (const WinnerRecord& winner : winners) {
    auto found_machine = machine_id_of(winner.fingerprint, "winner of " + winner.problem.ToString());
    if (!found_machine) return found_machine.error();
    const std::int64_t machine_id = *found_machine;
    auto problem_id = impl_->InternProblem(winner.problem);
    if (!problem_id) return problem_id.error();

    bool stored = false;
    bool faster = true;
    {
      auto select = impl_->Prepare(
          "SELECT gflops FROM winners WHERE machine_id = ?1 AND problem_id = ?2");
      if (!select) return select.error();
      auto row = (*select)->Bind(1, machine_id).Bind(2, *problem_id).Step();
      if (!row) return row.error();
      if (*row) {
        stored = true;
        sqlite::RowReader reader(**select);
        const double stored_gflops = reader.Double(0);
        // A stored row that cannot be read is worth nothing (`Winners` skips it): replace it.
        faster = !reader.ok() || winner.gflops > stored_gflops;
      }
    }
    if (!faster) {
      ++counts.winners_kept;
      continue;
    }
    auto config_id = impl_->InternConfig(winner.config);
    if (!config_id) return config_id.error();
    auto upsert = impl_->Prepare(
        "INSERT INTO winners (machine_id, problem_id, config_id, gflops, median_seconds, "
        "default_gflops, session_id, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7) "
        "ON CONFLICT (machine_id, problem_id) DO UPDATE SET config_id = excluded.config_id, "
        "gflops = excluded.gflops, median_seconds = excluded.median_seconds, "
        "default_gflops = excluded.default_gflops, session_id = NULL, "
        "updated_at = excluded.updated_at");
    if (!upsert) return upsert.error();
    (*upsert)->Bind(1, machine_id).Bind(2, *problem_id).Bind(3, *config_id)
        .Bind(4, winner.gflops).Bind(5, winner.median_seconds).Bind(6, winner.default_gflops)
        .Bind(7, winner.updated_at.empty() ? now : winner.updated_at);
    if (Status status = (*upsert)->Run(); !status) return status.error();
    if (stored) {
      ++counts.winners_replaced;
    } else {
      ++counts.winners_added;
    }
  }
  if (Status status = transaction->Commit(); !status) return status.error();
  return counts;
}

}  // namespace mmtune
