// A thin RAII layer over the SQLite C API: a connection, prepared statements with typed bind and
// checked column reads, a cache that prepares each statement once, and an IMMEDIATE transaction
// that rolls back unless committed. Every failure becomes an `Error` that names the DB path, so
// the store above never touches a raw return code.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "mmtune/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mmtune::sqlite {

// Maps an SQLite result code (primary or extended) to mmtune's error vocabulary.
ErrorCode ErrorCodeFor(int sqlite_code);
// "<path>: <what>: <SQLite's message>", one line, with the code mapped by `ErrorCodeFor`.
Error SqliteError(sqlite3* db, const std::string& path, int code, std::string_view what);

class Database {
 public:
  // `flags` are `SQLITE_OPEN_*` flags. Opening does not read the file yet: SQLite looks at the
  // header only on the first statement, so a foreign file is reported then.
  static Result<Database> Open(const std::string& path, int flags);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  bool IsReadOnly() const;
  // Rows inserted, updated or deleted by the last statement that ran to completion.
  std::int64_t Changes() const;

  // Runs one or more statements that return no rows we need (DDL, pragmas that set).
  Status Execute(std::string_view sql);
  // Runs `sql` until it stops answering SQLITE_BUSY, sleeping between tries, for at most
  // `patience_ms` in all. `busy_timeout` already waits inside SQLite, but some paths (BEGIN
  // IMMEDIATE racing another writer's upgrade, switching to WAL) return SQLITE_BUSY at once.
  Status ExecuteWithBusyRetry(std::string_view sql, int patience_ms);

  Error ErrorFor(int code, std::string_view what) const {
    return SqliteError(db_, path_, code, what);
  }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

// One prepared statement. Bind indices are 1-based and column indices 0-based, as in SQLite.
class Statement {
 public:
  static Result<Statement> Prepare(Database& db, std::string_view sql);

  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, std::int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& BindNull(int index);

  // true: a row is ready to read; false: the statement is done. A failed bind surfaces here.
  Result<bool> Step();
  // Steps a statement that must not return rows (INSERT, UPDATE).
  Status Run();
  // Makes the statement ready to run again with new bindings, and ends its read of the DB (in WAL
  // mode an unfinished statement would pin an old snapshot).
  void Reset();

  int ColumnType(int column) const;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, ...
  std::int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::string_view ColumnName(int column) const;

 private:
  Statement(sqlite3* db, std::string path, sqlite3_stmt* statement)
      : db_(db), path_(std::move(path)), statement_(statement) {}
  // The raw connection, not the `Database`, because the `Database` object may move while the
  // connection (and so this statement) stays valid.
  sqlite3* db_ = nullptr;
  std::string path_;
  sqlite3_stmt* statement_ = nullptr;
  int bind_error_ = 0;  // the first failed bind, reported by `Step`
};

// Reads the columns of the current row with type checks, because a DB file is outside input: a
// column holding the wrong type (or NULL where a value belongs) sets a sticky error that names the
// column instead of being silently read as 0.
class RowReader {
 public:
  explicit RowReader(const Statement& statement) : statement_(statement) {}

  std::int64_t Int64(int column);
  // An integer that must lie in [min, max] (an `int` field, a non-negative dimension).
  std::int64_t Int64In(int column, std::int64_t min, std::int64_t max);
  int Int(int column, int min, int max) { return static_cast<int>(Int64In(column, min, max)); }
  double Double(int column);  // INTEGER is accepted too (REAL affinity stores 3.0 as 3)
  std::string Text(int column);
  std::optional<std::string> OptionalText(int column);  // NULL -> nullopt
  std::optional<std::int64_t> OptionalInt64(int column);
  std::optional<double> OptionalDouble(int column);

  bool ok() const { return error_.empty(); }
  // "column 'm' holds TEXT, not an integer"; empty when ok.
  const std::string& error() const { return error_; }

 private:
  void Fail(int column, std::string_view problem);
  const Statement& statement_;
  std::string error_;
};

// Prepares each distinct SQL text once per connection. A lease resets its statement when it goes
// out of scope, so an early return can never leave a read open.
class StatementCache {
 public:
  class Lease {
   public:
    explicit Lease(Statement* statement) : statement_(statement) {}
    Lease(Lease&& other) noexcept : statement_(other.statement_) { other.statement_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (statement_ != nullptr) statement_->Reset();
    }
    Statement& operator*() const { return *statement_; }
    Statement* operator->() const { return statement_; }

   private:
    Statement* statement_;
  };

  explicit StatementCache(Database& db) : db_(&db) {}
  Result<Lease> Get(const std::string& sql);

 private:
  Database* db_;
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

// BEGIN IMMEDIATE takes the write lock up front, so a transaction never fails halfway with
// SQLITE_BUSY because another process wrote first; the destructor rolls back unless `Commit`
// succeeded.
class Transaction {
 public:
  static constexpr int kDefaultPatienceMs = 30'000;
  static Result<Transaction> Begin(Database& db, int patience_ms = kDefaultPatienceMs);

  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;  // null once committed or rolled back
};

}  // namespace mmtune::sqlite
