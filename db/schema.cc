#include "db/schema.h"

#include <sqlite3.h>

#include <iterator>
#include <string>
#include <string_view>

namespace mmtune {
namespace {

// Version 1. Times are ISO 8601 UTC text; JSON documents are text; enums are their `ToString`
// names, so the file reads well in the sqlite3 shell. Ids are INTEGER PRIMARY KEY (rowid
// aliases): ordering by id is insertion order. No CHECK constraints on enum text: adding a value
// later would need a table rebuild in SQLite, and the store validates every row it reads anyway.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE machines (
  id                INTEGER PRIMARY KEY,
  fingerprint       TEXT NOT NULL UNIQUE,
  fingerprint_basis TEXT NOT NULL,
  description       TEXT NOT NULL,
  peaks             TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL
);

CREATE TABLE sessions (
  id             INTEGER PRIMARY KEY,
  machine_id     INTEGER NOT NULL REFERENCES machines(id),
  mmtune_version TEXT NOT NULL,
  git_revision   TEXT NOT NULL,
  strategy       TEXT NOT NULL,
  budget_seconds REAL NOT NULL,
  max_evals      INTEGER NOT NULL,
  seed           INTEGER NOT NULL,
  command        TEXT NOT NULL,
  started_at     TEXT NOT NULL,
  finished_at    TEXT,
  status         TEXT NOT NULL
);
CREATE INDEX sessions_by_machine ON sessions(machine_id);

CREATE TABLE problems (
  id      INTEGER PRIMARY KEY,
  dtype   TEXT NOT NULL,
  layout  TEXT NOT NULL,
  trans   TEXT NOT NULL,
  m       INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  k       INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  UNIQUE (dtype, layout, trans, m, n, k, threads)
);

CREATE TABLE configs (
  id   INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  json TEXT NOT NULL
);

CREATE TABLE measurements (
  id             INTEGER PRIMARY KEY,
  session_id     INTEGER NOT NULL REFERENCES sessions(id),
  machine_id     INTEGER NOT NULL REFERENCES machines(id),
  problem_id     INTEGER NOT NULL REFERENCES problems(id),
  config_id      INTEGER NOT NULL REFERENCES configs(id),
  status         TEXT NOT NULL,
  stage          TEXT NOT NULL,
  error          TEXT NOT NULL,
  median_seconds REAL NOT NULL,
  min_seconds    REAL NOT NULL,
  mad_seconds    REAL NOT NULL,
  samples        INTEGER NOT NULL,
  gflops         REAL NOT NULL,
  eval_index     INTEGER NOT NULL,
  measured_at    TEXT NOT NULL
);
CREATE INDEX measurements_by_machine_problem ON measurements(machine_id, problem_id);
CREATE INDEX measurements_by_session ON measurements(session_id);

CREATE TABLE winners (
  machine_id     INTEGER NOT NULL REFERENCES machines(id),
  problem_id     INTEGER NOT NULL REFERENCES problems(id),
  config_id      INTEGER NOT NULL REFERENCES configs(id),
  gflops         REAL NOT NULL,
  median_seconds REAL NOT NULL,
  default_gflops REAL NOT NULL,
  session_id     INTEGER REFERENCES sessions(id),
  updated_at     TEXT NOT NULL,
  PRIMARY KEY (machine_id, problem_id)
) WITHOUT ROWID;
)sql";

// Version 2 adds the shape ranges that tunes stood for with bucket shapes (`tune --shapes
// 1..2048x4096x4096`), which the runtime's bucket tier reads. Keyed like a winner's problem, with
// the range in place of the shape; `buckets` is the policy's text ("pow2", "step:S").
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE shape_ranges (
  machine_id INTEGER NOT NULL REFERENCES machines(id),
  dtype      TEXT NOT NULL,
  layout     TEXT NOT NULL,
  trans      TEXT NOT NULL,
  threads    INTEGER NOT NULL,
  m_lo       INTEGER NOT NULL,
  m_hi       INTEGER NOT NULL,
  n_lo       INTEGER NOT NULL,
  n_hi       INTEGER NOT NULL,
  k_lo       INTEGER NOT NULL,
  k_hi       INTEGER NOT NULL,
  buckets    TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (machine_id, dtype, layout, trans, threads, m_lo, m_hi, n_lo, n_hi, k_lo, k_hi)
) WITHOUT ROWID;
)sql";

// Version 3 adds what `tune --validate N` measured: shapes inside a tuned range that were not
// buckets, each tuned on its own and timed beside what the runtime runs for it. One row per
// held-out shape and validating tune; the range is stored as in shape_ranges.
constexpr std::string_view kSchemaV3 = R"sql(
CREATE TABLE range_validations (
  id               INTEGER PRIMARY KEY,
  machine_id       INTEGER NOT NULL REFERENCES machines(id),
  session_id       INTEGER REFERENCES sessions(id),
  dtype            TEXT NOT NULL,
  layout           TEXT NOT NULL,
  trans            TEXT NOT NULL,
  threads          INTEGER NOT NULL,
  m_lo             INTEGER NOT NULL,
  m_hi             INTEGER NOT NULL,
  n_lo             INTEGER NOT NULL,
  n_hi             INTEGER NOT NULL,
  k_lo             INTEGER NOT NULL,
  k_hi             INTEGER NOT NULL,
  buckets          TEXT NOT NULL,
  m                INTEGER NOT NULL,
  n                INTEGER NOT NULL,
  k                INTEGER NOT NULL,
  runtime_tier     TEXT NOT NULL,
  own_gflops       REAL NOT NULL,
  runtime_gflops   REAL NOT NULL,
  nearest_gflops   REAL NOT NULL,
  default_gflops   REAL NOT NULL,
  padded_gflops    REAL,
  own_tune_seconds REAL NOT NULL,
  measured_at      TEXT NOT NULL
);
CREATE INDEX range_validations_by_machine ON range_validations(machine_id);
)sql";

// Version 4 keys problems by how the GEMM is called as well (`form`: `plain`, `packed-b`), so
// that `tune --packed-b` keeps its winners apart from a plain call's. SQLite cannot change a
// UNIQUE constraint in place: the table is rebuilt with the same ids, which the other tables
// reference, and every existing problem becomes a plain one. Runs with foreign keys off (the
// drop would otherwise check every measurement and winner against a vanishing table);
// MigrateToCurrentSchema checks them all before it commits.
constexpr std::string_view kSchemaV4 = R"sql(
CREATE TABLE problems_v4 (
  id      INTEGER PRIMARY KEY,
  dtype   TEXT NOT NULL,
  layout  TEXT NOT NULL,
  trans   TEXT NOT NULL,
  m       INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  k       INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  form    TEXT NOT NULL DEFAULT 'plain',
  UNIQUE (dtype, layout, trans, m, n, k, threads, form)
);
INSERT INTO problems_v4 (id, dtype, layout, trans, m, n, k, threads)
  SELECT id, dtype, layout, trans, m, n, k, threads FROM problems;
DROP TABLE problems;
ALTER TABLE problems_v4 RENAME TO problems;
)sql";

// Step i takes a file from version i to version i + 1, with statements that keep every existing
// row (tests/data/schema_v1.db is a file of version 1 that every build must migrate).
constexpr std::string_view kMigrations[] = {
    kSchemaV1,
    kSchemaV2,
    kSchemaV3,
    kSchemaV4,
};
static_assert(std::size(kMigrations) == static_cast<std::size_t>(kDbSchemaVersion),
              "every schema version needs exactly one migration step");

}  // namespace

Result<DbIdentity> ReadDbIdentity(sqlite::Database& db) {
  // One statement, so one read transaction: read one at a time, the three values could straddle
  // another process's schema creation (no tables yet, but already a version). Preparing it makes
  // SQLite read and check the header, so a file that is not a database fails here.
  auto statement = sqlite::Statement::Prepare(
      db,
      "SELECT (SELECT count(*) FROM sqlite_master), "
      "(SELECT application_id FROM pragma_application_id), "
      "(SELECT user_version FROM pragma_user_version)");
  Result<bool> row = statement ? statement->Step() : Result<bool>(statement.error());
  if (!row) {
    if ((sqlite3_errcode(db.handle()) & 0xff) == SQLITE_NOTADB) {
      return MakeError(ErrorCode::kCorrupt, db.path() + " is not an SQLite database");
    }
    return row.error();
  }
  sqlite::RowReader reader(*statement);
  DbIdentity identity;
  identity.schema_objects = reader.Int64(0);
  identity.application_id = reader.Int64(1);
  identity.user_version = reader.Int64(2);
  if (!*row || !reader.ok()) {
    return MakeError(ErrorCode::kInternal, db.path() + ": cannot read the schema version");
  }
  return identity;
}

Result<int> CheckDbIdentity(const DbIdentity& identity, const std::string& path) {
  if (identity.IsBlank()) return 0;
  if (identity.application_id != kMmtuneApplicationId) {
    return MakeError(ErrorCode::kCorrupt,
                     path + " is not an mmtune database (an SQLite database with application_id " +
                         std::to_string(identity.application_id) + ")");
  }
  if (identity.user_version > kDbSchemaVersion) {
    return MakeError(ErrorCode::kUnsupported,
                     path + ": schema version " + std::to_string(identity.user_version) +
                         " is newer than this mmtune supports (" +
                         std::to_string(kDbSchemaVersion) + ")");
  }
  if (identity.user_version < 0) {
    return MakeError(ErrorCode::kCorrupt, path + ": invalid schema version " +
                                              std::to_string(identity.user_version));
  }
  return static_cast<int>(identity.user_version);
}

namespace {

// The steps proper, in one transaction.
Status MigrateInTransaction(sqlite::Database& db) {
  auto transaction = sqlite::Transaction::Begin(db);
  if (!transaction) return transaction.error();
  // Read again under the write lock: the check before the lock may be stale.
  auto identity = ReadDbIdentity(db);
  if (!identity) return identity.error();
  auto version = CheckDbIdentity(*identity, db.path());
  if (!version) return version.error();
  if (*version == kDbSchemaVersion) return OkStatus();  // someone else migrated it; nothing to do

  for (int step = *version; step < kDbSchemaVersion; ++step) {
    if (Status status = db.Execute(kMigrations[step]); !status) {
      return MakeError(status.error().code, db.path() + ": migrating the schema to version " +
                                                std::to_string(step + 1) + " failed: " +
                                                status.error().message);
    }
  }
  // Pragmas take no bound parameters; both values are compile-time integers.
  if (Status status = db.Execute("PRAGMA application_id = " +
                                 std::to_string(kMmtuneApplicationId) + ";PRAGMA user_version = " +
                                 std::to_string(kDbSchemaVersion));
      !status) {
    return status;
  }
  // A rebuilt table must still hold every id that the other tables reference.
  auto violations = sqlite::Statement::Prepare(db, "PRAGMA foreign_key_check");
  if (!violations) return violations.error();
  auto violation = violations->Step();
  if (!violation) return violation.error();
  if (*violation) {
    return MakeError(ErrorCode::kCorrupt,
                     db.path() + ": migrating the schema left a row of table " +
                         violations->ColumnText(0) + " referencing a missing row");
  }
  violations->Reset();
  return transaction->Commit();
}

}  // namespace

Status MigrateToCurrentSchema(sqlite::Database& db) {
  // Foreign keys cannot be switched inside a transaction, so they are switched around it, and
  // the connection's setting comes back whatever happened.
  bool enforced = false;
  {
    auto pragma = sqlite::Statement::Prepare(db, "PRAGMA foreign_keys");
    if (!pragma) return pragma.error();
    auto row = pragma->Step();
    if (!row) return row.error();
    enforced = *row && pragma->ColumnInt64(0) != 0;
  }
  if (Status status = db.Execute("PRAGMA foreign_keys = OFF"); !status) return status;
  Status migrated = MigrateInTransaction(db);
  if (enforced) {
    if (Status status = db.Execute("PRAGMA foreign_keys = ON"); !status && migrated) {
      return status;
    }
  }
  return migrated;
}

}  // namespace mmtune
