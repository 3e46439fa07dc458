// The JSON form of an export: the winners of some machines, with those machines, in one document
// that tools and people can read and that `mmtune merge` reads back. The SQLite form is the one
// the runtime opens; this one is for moving winners through text-only channels (review, config
// repositories, HTTP) and back into a DB.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "mmtune/result.h"

namespace mmtune {

// The JSON export's layout version, written as "schema_version". Version 2:
//   {"schema_version": 2, "generator": "mmtune X.Y.Z (rev)",
//    "machines": [{"fingerprint", "fingerprint_basis", "description", "peaks"}],
//    "winners": [{"fingerprint", "dtype", "layout", "trans", "m", "n", "k", "threads", "form",
//                 "config", "gflops", "median_seconds", "default_gflops", "updated_at"}],
//    "ranges": [{"fingerprint", "dtype", "layout", "trans", "threads", "range", "buckets",
//                "updated_at"}]}
// ("ranges", the shape ranges the winners stand for, may be absent: none.) Version 1 had no
// "form": every winner a plain call's; a reader of version 1 would take a packed-b winner for a
// plain one, hence the new version. Both are read.
// A reader must refuse a version it does not know; fields may be added within a version.
inline constexpr int kExportJsonSchemaVersion = 2;

nlohmann::json ExportDocumentOf(const WinnerSet& content);

// The inverse of `ExportDocumentOf`, for a document read from `origin` (named in errors). Never
// throws: another "schema_version" is kUnsupported; a document that is not an object, lacks a
// field, has a field of the wrong type or an unknown dtype, layout, transpose or kernel name, a
// problem or range that does not validate, or a winner or range of a machine the document does
// not hold, is kCorrupt naming the first thing wrong.
Result<WinnerSet> ParseExportDocument(const nlohmann::json& document, const std::string& origin);

// True when the file at `path` starts (after white space) with '{': a JSON document rather than
// an SQLite DB, whose header is "SQLite format 3". A file that cannot be read is not JSON.
bool LooksLikeJson(const std::string& path);

// Reads and parses the JSON export at `path` (kNotFound when it is missing, kIo when unreadable,
// kCorrupt for bad JSON or a bad document, kUnsupported for another schema version).
Result<WinnerSet> ReadExportDocument(const std::string& path);

}  // namespace mmtune
