// Deployment of tuning DBs. A tuning DB holds every measurement of every session; what a
// production machine needs is only the winner per shape for its machine type. `ExportWinners`
// writes exactly that into a new compact file (an mmtune DB the runtime opens, or a JSON
// document), and `MergeStores` folds the DBs of several tuning machines (`mmtune tune --shard
// i/N` on each) into one, keeping the faster winner where two machines tuned the same shape.
//
// Sources are only ever opened read-only. Outputs are written so that a failure never leaves a
// half-written file: an export (and a merge into a new file) is built in a temporary file next to
// the output and renamed over it at the end; a merge into an existing DB is one transaction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/export_document.h"
#include "db/store.h"
#include "mmtune/result.h"

namespace mmtune {

enum class ExportFormat : std::uint8_t {
  kSqlite,  // an mmtune DB (current schema) in rollback-journal mode, readable from read-only dirs
  kJson,    // one JSON document, see `kExportJsonSchemaVersion` (db/export_document.h)
};
const char* ToString(ExportFormat format);
// "sqlite" or "json".
Result<ExportFormat> ParseExportFormat(std::string_view text);

// Which machines' winners an export keeps.
struct MachineSelection {
  enum class Kind : std::uint8_t {
    kCurrent,      // the machine the export runs on (its fingerprint comes from the caller)
    kAll,          // every machine in the DB
    kFingerprint,  // one named machine
  };
  Kind kind = Kind::kCurrent;
  std::string fingerprint;  // kFingerprint only: 16 lowercase hex digits
};
// "current", "all" or a machine fingerprint (16 hex digits, either case). Anything else is
// kInvalidArgument, so a typo is caught before any file is opened.
Result<MachineSelection> ParseMachineSelection(std::string_view text);

struct ExportOptions {
  MachineSelection machines;
  std::string current_fingerprint;  // this machine's fingerprint; needed for kCurrent only
  ExportFormat format = ExportFormat::kSqlite;
  bool force = false;  // replace an existing output file instead of refusing
};

struct ExportSummary {
  std::int64_t machines = 0;  // written to the output
  std::int64_t winners = 0;
};

// Writes the winners of the selected machines in `db_path` to the new file `out_path`, with those
// machines and the problems and configs the winners use; no sessions and no measurements, and
// winners have no session (session_id NULL). The source is opened read-only and never changed.
// Errors, all before the output is touched: the source is missing or not an mmtune DB of this or
// an older schema; the selected machine is not in it (kNotFound, naming the machines it holds);
// `out_path` exists and `force` is off, is a directory, is the source itself, or its directory
// does not exist.
Result<ExportSummary> ExportWinners(const std::string& db_path, const std::string& out_path,
                                    const ExportOptions& options);

struct MergeSummary {
  std::int64_t inputs = 0;
  bool created = false;     // the output did not exist before
  ImportCounts changes;     // what the merge changed in the output
  std::int64_t machines = 0;  // in the output afterwards
  std::int64_t winners = 0;   // in the output afterwards
};

// Folds the machines and winners of `inputs` (mmtune DBs or JSON exports, opened read-only and
// left byte-identical) into `out_path`, an existing mmtune DB whose own winners compete too, or a new
// file. Machines are matched by fingerprint; one keeps its description and gains measured peaks
// only when it has none. For each machine and problem the winner with the highest gflops stays
// (a tie keeps the one already in the output, or the earlier input), so merging the same inputs
// again changes nothing. Only machines, problems, configs and winners are written; the whole
// merge is one transaction. Every input and the output are checked before anything is written:
// a missing, foreign, non-SQLite or newer-schema file, or a JSON document that is not a readable
// export, is an error and nothing changes. An input starting with '{' is read as JSON.
Result<MergeSummary> MergeStores(const std::string& out_path,
                                 const std::vector<std::string>& inputs);

}  // namespace mmtune
