#include "db/sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

namespace mmtune::sqlite {

ErrorCode ErrorCodeFor(int sqlite_code) {
  switch (sqlite_code & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
    case SQLITE_SCHEMA:
      return ErrorCode::kCorrupt;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOLFS:
    case SQLITE_PROTOCOL:
      return ErrorCode::kIo;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return ErrorCode::kInvalidArgument;
    case SQLITE_NOTFOUND:
      return ErrorCode::kNotFound;
    default:
      return ErrorCode::kInternal;
  }
}

Error SqliteError(sqlite3* db, const std::string& path, int code, std::string_view what) {
  // `sqlite3_errmsg` describes the connection's latest failure, which is not `code` when the
  // failure came from elsewhere (a bind reported late); `sqlite3_errstr` always matches `code`.
  const char* detail = db != nullptr && sqlite3_errcode(db) == code ? sqlite3_errmsg(db)
                                                                     : sqlite3_errstr(code);
  std::string message = path + ": " + std::string(what) + ": " + detail;
  std::replace(message.begin(), message.end(), '\n', ' ');
  return MakeError(ErrorCodeFor(code), std::move(message));
}

// ---- Database ---------------------------------------------------------------------------------

Result<Database> Database::Open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  const int code = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (code != SQLITE_OK) {
    Error error = SqliteError(db, path, code, "cannot open");
    sqlite3_close(db);  // SQLite allocates a handle even when opening fails
    return error;
  }
  // Extended codes tell SQLITE_READONLY_DBMOVED from a plain read-only file, for messages only.
  sqlite3_extended_result_codes(db, 1);
  return Database(db, path);
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() {
  // close_v2 defers the close until every statement is finalized, so destruction order between a
  // connection and cached statements cannot leak or crash.
  sqlite3_close_v2(db_);
}

std::int64_t Database::Changes() const { return sqlite3_changes64(db_); }

bool Database::IsReadOnly() const { return sqlite3_db_readonly(db_, "main") == 1; }

Status Database::Execute(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int code = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);  // the same text is available from sqlite3_errmsg
  if (code != SQLITE_OK) return ErrorFor(code, "cannot run '" + text.substr(0, 60) + "'");
  return OkStatus();
}

Status Database::ExecuteWithBusyRetry(std::string_view sql, int patience_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(patience_ms);
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    Status status = Execute(sql);
    const int code = sqlite3_errcode(db_) & 0xff;
    if (status.ok() || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
        Clock::now() >= deadline) {
      return status;
    }
    // Growing pauses keep many waiting writers from hammering the lock; the cap keeps the
    // reaction time short once the holder commits.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

// ---- Statement --------------------------------------------------------------------------------

Result<Statement> Statement::Prepare(Database& db, std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  if (sql.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return MakeError(ErrorCode::kInvalidArgument, db.path() + ": SQL text too long");
  }
  const int code = sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (code != SQLITE_OK) {
    sqlite3_finalize(statement);
    return db.ErrorFor(code, "cannot prepare '" + std::string(sql.substr(0, 60)) + "'");
  }
  return Statement(db.handle(), db.path(), statement);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      path_(std::move(other.path_)),
      statement_(std::exchange(other.statement_, nullptr)),
      bind_error_(other.bind_error_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    statement_ = std::exchange(other.statement_, nullptr);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::Bind(int index, std::int64_t value) {
  const int code = sqlite3_bind_int64(statement_, index, value);
  if (code != SQLITE_OK && bind_error_ == 0) bind_error_ = code;
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  const int code = sqlite3_bind_double(statement_, index, value);
  if (code != SQLITE_OK && bind_error_ == 0) bind_error_ = code;
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT copies the text, so the caller's temporary may die before `Step`.
  const int code = sqlite3_bind_text64(statement_, index, text.data(), text.size(),
                                       SQLITE_TRANSIENT, SQLITE_UTF8);
  if (code != SQLITE_OK && bind_error_ == 0) bind_error_ = code;
  return *this;
}

Statement& Statement::BindNull(int index) {
  const int code = sqlite3_bind_null(statement_, index);
  if (code != SQLITE_OK && bind_error_ == 0) bind_error_ = code;
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_error_ != 0) {
    return SqliteError(db_, path_, bind_error_,
                       std::string("cannot bind a value to '") + sqlite3_sql(statement_) + "'");
  }
  const int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  std::string sql = sqlite3_sql(statement_);
  if (sql.size() > 60) sql = sql.substr(0, 60) + "...";
  return SqliteError(db_, path_, code, "'" + sql + "' failed");
}

Status Statement::Run() {
  auto row = Step();
  if (!row) return row.error();
  return OkStatus();
}

void Statement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bind_error_ = 0;
}

int Statement::ColumnType(int column) const { return sqlite3_column_type(statement_, column); }

std::int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(statement_, column);
}

double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(statement_, column);
}

std::string Statement::ColumnText(int column) const {
  // Text first, then its length: the documented order that avoids a second conversion.
  const unsigned char* text = sqlite3_column_text(statement_, column);
  const int bytes = sqlite3_column_bytes(statement_, column);
  if (text == nullptr || bytes <= 0) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(bytes));
}

std::string_view Statement::ColumnName(int column) const {
  const char* name = sqlite3_column_name(statement_, column);
  return name == nullptr ? std::string_view("?") : std::string_view(name);
}

// ---- RowReader --------------------------------------------------------------------------------

void RowReader::Fail(int column, std::string_view problem) {
  if (!error_.empty()) return;  // the first problem is the one worth reporting
  error_ = "column '" + std::string(statement_.ColumnName(column)) + "' " + std::string(problem);
}

std::int64_t RowReader::Int64(int column) {
  if (statement_.ColumnType(column) != SQLITE_INTEGER) {
    Fail(column, "is not an integer");
    return 0;
  }
  return statement_.ColumnInt64(column);
}

std::int64_t RowReader::Int64In(int column, std::int64_t min, std::int64_t max) {
  const std::int64_t value = Int64(column);
  if (ok() && (value < min || value > max)) {
    Fail(column, "holds " + std::to_string(value) + ", outside [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
    return min;
  }
  return value;
}

double RowReader::Double(int column) {
  const int type = statement_.ColumnType(column);
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) {
    Fail(column, "is not a number");
    return 0.0;
  }
  return statement_.ColumnDouble(column);
}

std::string RowReader::Text(int column) {
  if (statement_.ColumnType(column) != SQLITE_TEXT) {
    Fail(column, "is not text");
    return {};
  }
  return statement_.ColumnText(column);
}

std::optional<std::string> RowReader::OptionalText(int column) {
  if (statement_.ColumnType(column) == SQLITE_NULL) return std::nullopt;
  return Text(column);
}

std::optional<std::int64_t> RowReader::OptionalInt64(int column) {
  if (statement_.ColumnType(column) == SQLITE_NULL) return std::nullopt;
  return Int64(column);
}

std::optional<double> RowReader::OptionalDouble(int column) {
  if (statement_.ColumnType(column) == SQLITE_NULL) return std::nullopt;
  return Double(column);
}

// ---- StatementCache ---------------------------------------------------------------------------

Result<StatementCache::Lease> StatementCache::Get(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    auto statement = Statement::Prepare(*db_, sql);
    if (!statement) return statement.error();
    it = statements_.emplace(sql, std::make_unique<Statement>(std::move(*statement))).first;
  }
  return Lease(it->second.get());
}

// ---- Transaction ------------------------------------------------------------------------------

Result<Transaction> Transaction::Begin(Database& db, int patience_ms) {
  if (Status status = db.ExecuteWithBusyRetry("BEGIN IMMEDIATE", patience_ms); !status) {
    return status.error();
  }
  return Transaction(&db);
}

Transaction::~Transaction() {
  // A failed statement may already have rolled the transaction back (SQLITE_FULL, SQLITE_IOERR);
  // ROLLBACK then fails harmlessly, which is why its result is ignored.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->handle()) == 0) {
    (void)db_->Execute("ROLLBACK");
  }
}

Status Transaction::Commit() {
  if (db_ == nullptr) {
    return MakeError(ErrorCode::kInternal, "transaction committed twice");
  }
  // In rollback-journal mode (a file not yet switched to WAL) COMMIT needs an exclusive lock and
  // meets SQLITE_BUSY while others read; the transaction stays open then, so retrying is safe.
  Status status = db_->ExecuteWithBusyRetry("COMMIT", kDefaultPatienceMs);
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace mmtune::sqlite
