// The tuning DB's schema, how a file is recognised as an mmtune DB, and the migrations that bring
// an older file up to `kDbSchemaVersion`. The version lives in `PRAGMA user_version` and the
// file's identity in `PRAGMA application_id`, both in the SQLite header, so recognising a file
// reads no table and writes nothing.
#pragma once

#include <cstdint>

#include "db/sqlite.h"
#include "mmtune/result.h"

namespace mmtune {

// The schema this build writes. Older files are migrated on open (read-write mode only).
inline constexpr int kDbSchemaVersion = 4;

// 'mmtu' in ASCII. Below 2^31 because SQLite stores the application id as a signed 32-bit int.
inline constexpr std::int32_t kMmtuneApplicationId = 0x6D6D7475;

// What the SQLite header and catalogue say about a file, read without writing.
struct DbIdentity {
  std::int64_t application_id = 0;
  std::int64_t user_version = 0;
  std::int64_t schema_objects = 0;  // tables, indexes, views and triggers

  // A file SQLite could open that nobody has put anything into yet: a new or 0-byte file.
  bool IsBlank() const { return application_id == 0 && user_version == 0 && schema_objects == 0; }
};

// Fails with kCorrupt "<path> is not an SQLite database" for a file that is something else.
Result<DbIdentity> ReadDbIdentity(sqlite::Database& db);

// Whether this build may use the file: blank, or an mmtune DB at `kDbSchemaVersion` or older.
// kCorrupt for a foreign SQLite DB, kUnsupported for a newer schema. Returns the file's schema
// version (0 for a blank file).
Result<int> CheckDbIdentity(const DbIdentity& identity, const std::string& path);

// Creates the schema in a blank file or migrates an older one, in one IMMEDIATE transaction that
// re-reads the version first: when several processes open a new file at once, one creates the
// schema and the others find it done.
Status MigrateToCurrentSchema(sqlite::Database& db);

}  // namespace mmtune
