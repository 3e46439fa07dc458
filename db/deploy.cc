#include "db/deploy.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "db/sqlite.h"
#include "mmtune/version.h"

namespace mmtune {
namespace {

constexpr std::size_t kFingerprintDigits = 16;
// How many fingerprints an "unknown machine" error lists before it says "and N more".
constexpr std::size_t kMachinesNamedInErrors = 8;
// SQLite keeps these next to a DB file; see `RemoveSqliteCompanions`.
constexpr const char* kSqliteCompanionSuffixes[] = {"-journal", "-wal", "-shm"};

std::string ParentDirectory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// A stale hot journal or WAL left next to a path belongs to whatever file was there before:
// SQLite would replay it into the new file we put at that path, corrupting it. Missing files are
// fine; this is best effort because a leftover we cannot remove fails loudly on open anyway.
void RemoveSqliteCompanions(const std::string& path) {
  for (const char* suffix : kSqliteCompanionSuffixes) {
    (void)::unlink((path + suffix).c_str());
  }
}

// Makes a rename durable: the new directory entry survives a power cut only once the directory
// itself is synced. Best effort: the file is already in place when this runs.
void SyncDirectory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// The output of an export or of a merge into a new file, written under a temporary name next to
// its final path (same directory, so the final rename is atomic and never crosses file systems).
// Destroying it before `Commit` removes it with everything SQLite left beside it, so a failure
// never leaves a half-written output or litter behind.
class PendingFile {
 public:
  static Result<PendingFile> Create(const std::string& final_path) {
    const std::filesystem::path final_name(final_path);
    const std::string stem = (final_name.parent_path() /
                              ("." + final_name.filename().string() + ".tmp-" +
                               std::to_string(::getpid()) + "-"))
                                 .string();
    // O_EXCL never reuses a name, so concurrent exports to one directory cannot collide; 0666
    // lets the umask decide the permissions, as for any file a tool creates.
    for (int attempt = 0; attempt < 100; ++attempt) {
      const std::string path = stem + std::to_string(attempt);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        ::close(fd);
        return PendingFile(path, final_path);
      }
      if (errno != EEXIST) {
        return MakeError(ErrorCode::kIo, "cannot create a temporary file in " +
                                             ParentDirectory(final_path) + ": " +
                                             std::strerror(errno));
      }
    }
    return MakeError(ErrorCode::kIo,
                     "cannot create a temporary file in " + ParentDirectory(final_path) +
                         ": too many leftover temporary files named " + stem + "*");
  }

  PendingFile(PendingFile&& other) noexcept
      : path_(std::move(other.path_)), final_path_(std::move(other.final_path_)),
        active_(std::exchange(other.active_, false)) {}
  PendingFile& operator=(PendingFile&&) = delete;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile() {
    if (!active_) return;
    (void)::unlink(path_.c_str());
    RemoveSqliteCompanions(path_);
  }

  const std::string& path() const { return path_; }

  // Syncs the finished file and renames it to its final path. Without `replace`, a file that
  // appeared at the final path since the caller checked is left alone and reported.
  Status Commit(bool replace) {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const int error = errno;
      if (fd >= 0) ::close(fd);
      return MakeError(ErrorCode::kIo, "cannot sync " + path_ + ": " + std::strerror(error));
    }
    ::close(fd);
    struct stat info {};
    if (!replace && ::lstat(final_path_.c_str(), &info) == 0) {
      return MakeError(ErrorCode::kIo, "output " + final_path_ + " appeared while it was written");
    }
    RemoveSqliteCompanions(final_path_);
    if (::rename(path_.c_str(), final_path_.c_str()) != 0) {
      return MakeError(ErrorCode::kIo,
                       "cannot rename " + path_ + " to " + final_path_ + ": " + std::strerror(errno));
    }
    active_ = false;
    SyncDirectory(ParentDirectory(final_path_));
    return OkStatus();
  }

 private:
  PendingFile(std::string path, std::string final_path)
      : path_(std::move(path)), final_path_(std::move(final_path)), active_(true) {}

  std::string path_;
  std::string final_path_;
  bool active_ = false;
};

// What stands at an output path before anything is written there.
struct OutputPath {
  bool exists = false;
  struct stat info {};
};

// Checks `path` as a place to write a new file or a DB to merge into; says whether a file is
// already there. A directory is never an output, and a missing file needs an existing directory.
Result<OutputPath> InspectOutputPath(const std::string& path) {
  if (path.empty()) return MakeError(ErrorCode::kInvalidArgument, "empty output path");
  OutputPath output;
  if (::stat(path.c_str(), &output.info) == 0) {
    if (S_ISDIR(output.info.st_mode)) {
      return MakeError(ErrorCode::kIo, "output " + path + " is a directory");
    }
    output.exists = true;
    return output;
  }
  if (errno != ENOENT) {
    return MakeError(ErrorCode::kIo, "cannot access " + path + ": " + std::strerror(errno));
  }
  const std::string directory = ParentDirectory(path);
  struct stat directory_info {};
  if (::stat(directory.c_str(), &directory_info) != 0 || !S_ISDIR(directory_info.st_mode)) {
    return MakeError(ErrorCode::kNotFound,
                     "cannot create " + path + ": directory " + directory + " does not exist");
  }
  return output;
}

// True when `path` names the same file as the existing output (hard links and `./x` included).
bool IsSameFileAs(const std::string& path, const OutputPath& output) {
  struct stat info {};
  return output.exists && ::stat(path.c_str(), &info) == 0 && SameFile(info, output.info);
}

std::string NameMachines(const std::vector<MachineRecord>& machines) {
  if (machines.empty()) return "it holds no machines";
  std::string names = "it holds ";
  for (std::size_t i = 0; i < machines.size() && i < kMachinesNamedInErrors; ++i) {
    names += (i == 0 ? "" : ", ") + machines[i].fingerprint;
  }
  if (machines.size() > kMachinesNamedInErrors) {
    names += " and " + std::to_string(machines.size() - kMachinesNamedInErrors) + " more";
  }
  return names;
}

Result<WinnerSet> SelectForExport(const TuningStore& source, const ExportOptions& options) {
  auto machines = source.Machines();
  if (!machines) return machines.error();
  WinnerSet selection;
  if (options.machines.kind == MachineSelection::Kind::kAll) {
    selection.machines = std::move(*machines);
    auto winners = source.Winners("");
    if (!winners) return winners.error();
    // `Winners` names a machine by its fingerprint alone, so it still returns the winners of a
    // machine whose row `Machines` skipped as unreadable; those cannot be written without it.
    std::set<std::string, std::less<>> known;
    for (const MachineRecord& machine : selection.machines) known.insert(machine.fingerprint);
    std::int64_t orphans = 0;
    for (WinnerRecord& winner : *winners) {
      if (known.count(winner.fingerprint) == 0) {
        ++orphans;
        continue;
      }
      selection.winners.push_back(std::move(winner));
    }
    if (orphans > 0) {
      Log(LogLevel::kWarning, source.path() + ": left out " + std::to_string(orphans) +
                                  " winners of machines whose rows could not be read");
    }
    auto ranges = source.ShapeRanges("");
    if (!ranges) return ranges.error();
    for (ShapeRangeRecord& range : *ranges) {
      if (known.count(range.fingerprint) > 0) selection.ranges.push_back(std::move(range));
    }
    return selection;
  }

  const bool current = options.machines.kind == MachineSelection::Kind::kCurrent;
  const std::string& wanted = current ? options.current_fingerprint : options.machines.fingerprint;
  for (MachineRecord& machine : *machines) {
    if (machine.fingerprint == wanted) selection.machines.push_back(std::move(machine));
  }
  if (selection.machines.empty()) {
    const std::string which =
        current ? "this machine (" + wanted + ")" : "machine " + wanted;
    return MakeError(ErrorCode::kNotFound, which + " is not in " + source.path() + " (" +
                                               NameMachines(*machines) + ")");
  }
  auto winners = source.Winners(wanted);
  if (!winners) return winners.error();
  selection.winners = std::move(*winners);
  auto ranges = source.ShapeRanges(wanted);
  if (!ranges) return ranges.error();
  selection.ranges = std::move(*ranges);
  return selection;
}

// The export as an mmtune DB. The store creates the schema and writes everything in one
// transaction; the file then leaves WAL mode, because a WAL file cannot be opened read-only from
// a read-only directory (SQLite must create its `-shm` beside it), which is where deployed files
// tend to live.
Status WriteSqliteExport(const std::string& path, const WinnerSet& selection) {
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    if (!store) return store.error();
    auto counts = store->ImportWinners(selection);
    if (!counts) return counts.error();
  }  // closing the only connection checkpoints the WAL into the file and removes it
  auto db = sqlite::Database::Open(path, SQLITE_OPEN_READWRITE);
  if (!db) return db.error();
  auto statement = sqlite::Statement::Prepare(*db, "PRAGMA journal_mode = DELETE");
  if (!statement) return statement.error();
  auto row = statement->Step();
  if (!row) return row.error();
  // SQLite answers with the mode it is in, which stays "wal" when it could not switch.
  if (!*row || statement->ColumnText(0) != "delete") {
    return MakeError(ErrorCode::kIo, path + ": cannot leave WAL journal mode");
  }
  return OkStatus();
}

Status WriteJsonExport(const std::string& path, const WinnerSet& selection) {
  // Invalid UTF-8 from a hostile description is replaced rather than thrown, so dumping cannot
  // fail.
  const std::string text =
      ExportDocumentOf(selection).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError(ErrorCode::kIo, "cannot write " + path);
  return OkStatus();
}

// The union of several DBs' machines, winners and shape ranges, before it meets the output: one
// record per fingerprint, per machine and problem the fastest winner (the earlier on a tie), and
// each range once (the earliest input's bucket policy).
class MergedContent {
 public:
  void Add(WinnerSet content) {
    std::vector<MachineRecord>& machines = content.machines;
    std::vector<WinnerRecord>& winners = content.winners;
    for (ShapeRangeRecord& range : content.ranges) {
      const std::string key = range.fingerprint + " " + ToString(range.dtype) + " " +
                              ToString(range.layout) + " " +
                              TransPairToString(range.trans_a, range.trans_b) + " t" +
                              std::to_string(range.threads) + " " + range.range.ToString();
      if (range_keys_.insert(key).second) ranges_.push_back(std::move(range));
    }
    for (MachineRecord& machine : machines) {
      auto [found, added] = machine_index_.emplace(machine.fingerprint, machines_.size());
      if (added) {
        machines_.push_back(std::move(machine));
      } else if (machines_[found->second].peaks.is_null()) {
        machines_[found->second].peaks = std::move(machine.peaks);
      }
    }
    for (WinnerRecord& winner : winners) {
      const std::string key = winner.fingerprint + " " + winner.problem.ToString();
      auto [found, added] = winner_index_.emplace(key, winners_.size());
      if (added) {
        winners_.push_back(std::move(winner));
      } else if (winner.gflops > winners_[found->second].gflops) {
        winners_[found->second] = std::move(winner);
      }
    }
  }

  // What is written: the machines, and the winners and ranges of those machines. A winner or
  // range whose machine row no input could read cannot be written (its machine would be
  // missing); `dropped` counts those.
  WinnerSet Content(std::int64_t& dropped) const {
    WinnerSet content;
    content.machines = machines_;
    dropped = 0;
    for (const WinnerRecord& winner : winners_) {
      if (machine_index_.count(winner.fingerprint) == 0) {
        ++dropped;
        continue;
      }
      content.winners.push_back(winner);
    }
    for (const ShapeRangeRecord& range : ranges_) {
      if (machine_index_.count(range.fingerprint) == 0) {
        ++dropped;
        continue;
      }
      content.ranges.push_back(range);
    }
    return content;
  }

 private:
  std::vector<MachineRecord> machines_;
  std::map<std::string, std::size_t, std::less<>> machine_index_;
  std::vector<WinnerRecord> winners_;
  std::map<std::string, std::size_t, std::less<>> winner_index_;
  std::vector<ShapeRangeRecord> ranges_;
  std::set<std::string, std::less<>> range_keys_;
};

// The machines and winners of one merge input: an mmtune DB, or a JSON export.
Result<WinnerSet> ReadMergeInput(const std::string& path) {
  if (LooksLikeJson(path)) return ReadExportDocument(path);
  auto store = TuningStore::Open(path, DbOpenMode::kReadOnly);
  if (!store) return store.error();
  WinnerSet content;
  auto machines = store->Machines();
  if (!machines) return machines.error();
  content.machines = std::move(*machines);
  auto winners = store->Winners("");
  if (!winners) return winners.error();
  content.winners = std::move(*winners);
  auto ranges = store->ShapeRanges("");
  if (!ranges) return ranges.error();
  content.ranges = std::move(*ranges);
  return content;
}

// Imports `content` into `store` and counts what the output holds afterwards.
Result<MergeSummary> ImportMerged(TuningStore& store, const MergedContent& content) {
  std::int64_t dropped = 0;
  const WinnerSet merged = content.Content(dropped);
  if (dropped > 0) {
    Log(LogLevel::kWarning, "merge: left out " + std::to_string(dropped) +
                                " winners or ranges of machines whose rows could not be read");
  }
  auto changes = store.ImportWinners(merged);
  if (!changes) return changes.error();
  MergeSummary summary;
  summary.changes = *changes;
  auto machines = store.Machines();
  if (!machines) return machines.error();
  auto all_winners = store.Winners("");
  if (!all_winners) return all_winners.error();
  summary.machines = static_cast<std::int64_t>(machines->size());
  summary.winners = static_cast<std::int64_t>(all_winners->size());
  return summary;
}

}  // namespace

const char* ToString(ExportFormat format) {
  switch (format) {
    case ExportFormat::kSqlite: return "sqlite";
    case ExportFormat::kJson: return "json";
  }
  return "?";
}

Result<ExportFormat> ParseExportFormat(std::string_view text) {
  for (ExportFormat format : {ExportFormat::kSqlite, ExportFormat::kJson}) {
    if (text == ToString(format)) return format;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown export format '" + std::string(text) + "' (expected sqlite or json)");
}

Result<MachineSelection> ParseMachineSelection(std::string_view text) {
  MachineSelection selection;
  if (text == "current") return selection;
  if (text == "all") {
    selection.kind = MachineSelection::Kind::kAll;
    return selection;
  }
  const bool hex = text.size() == kFingerprintDigits &&
                   std::all_of(text.begin(), text.end(), [](char c) {
                     return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                   });
  if (!hex) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "machine '" + std::string(text) +
                         "' is not 'current', 'all' or a fingerprint (16 hex digits, as "
                         "'mmtune info' prints)");
  }
  selection.kind = MachineSelection::Kind::kFingerprint;
  // Fingerprints are stored in lowercase (`FingerprintOf`).
  for (char c : text) {
    selection.fingerprint += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return selection;
}

Result<ExportSummary> ExportWinners(const std::string& db_path, const std::string& out_path,
                                    const ExportOptions& options) {
  if (options.machines.kind == MachineSelection::Kind::kCurrent &&
      options.current_fingerprint.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "exporting the current machine needs its fingerprint");
  }
  auto output = InspectOutputPath(out_path);
  if (!output) return output.error();
  if (IsSameFileAs(db_path, *output)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "output " + out_path + " is the source DB itself; export to a new file");
  }
  if (output->exists && !options.force) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "output " + out_path + " already exists (--force replaces it)");
  }

  auto source = TuningStore::Open(db_path, DbOpenMode::kReadOnly);
  if (!source) return source.error();
  auto selection = SelectForExport(*source, options);
  if (!selection) return selection.error();

  auto pending = PendingFile::Create(out_path);
  if (!pending) return pending.error();
  Status written = options.format == ExportFormat::kSqlite
                       ? WriteSqliteExport(pending->path(), *selection)
                       : WriteJsonExport(pending->path(), *selection);
  if (!written) return written.error();
  if (Status status = pending->Commit(options.force); !status) return status.error();

  ExportSummary summary;
  summary.machines = static_cast<std::int64_t>(selection->machines.size());
  summary.winners = static_cast<std::int64_t>(selection->winners.size());
  return summary;
}

Result<MergeSummary> MergeStores(const std::string& out_path,
                                 const std::vector<std::string>& inputs) {
  if (inputs.empty()) return MakeError(ErrorCode::kInvalidArgument, "no input DBs to merge");
  auto output = InspectOutputPath(out_path);
  if (!output) return output.error();

  // Every input is opened and read before the output is touched, so a bad input anywhere in the
  // list leaves the output exactly as it was.
  MergedContent content;
  for (const std::string& input : inputs) {
    if (IsSameFileAs(input, *output)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "input " + input + " is the output itself (its winners take part in the "
                       "merge anyway)");
    }
    auto input_content = ReadMergeInput(input);
    if (!input_content) return input_content.error();
    content.Add(std::move(*input_content));
  }

  if (output->exists) {
    // Opening read-write checks the file first and refuses (unchanged) a foreign, non-SQLite or
    // newer-schema one; the import is then one transaction.
    auto store = TuningStore::Open(out_path, DbOpenMode::kReadWrite);
    if (!store) return store.error();
    auto summary = ImportMerged(*store, content);
    if (!summary) return summary.error();
    summary->inputs = static_cast<std::int64_t>(inputs.size());
    return summary;
  }

  // A new output appears complete or not at all.
  auto pending = PendingFile::Create(out_path);
  if (!pending) return pending.error();
  Result<MergeSummary> summary = MakeError(ErrorCode::kInternal, "merge did not run");
  {
    auto store = TuningStore::Open(pending->path(), DbOpenMode::kReadWrite);
    if (!store) return store.error();
    summary = ImportMerged(*store, content);
    if (!summary) return summary.error();
  }  // closed before the rename, so its WAL is folded into the file
  if (Status status = pending->Commit(/*replace=*/false); !status) return status.error();
  summary->inputs = static_cast<std::int64_t>(inputs.size());
  summary->created = true;
  return summary;
}

}  // namespace mmtune
