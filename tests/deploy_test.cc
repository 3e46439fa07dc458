// Deployment of tuning DBs: an export holds the chosen machines and their winners and nothing
// else, in a file the runtime can open read-only anywhere; a merge keeps the faster winner per
// machine and shape, is idempotent, never changes its inputs, and writes nothing when any file is
// wrong. The CLI is exercised through the real binary, as users and scripts run it.
#include "db/deploy.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"
#include "tests/synthetic_machine.h"

namespace mmtune {
namespace {

using testing::Lines;
using testing::RunMmtune;
using testing::RunResult;
using testing::Slurp;

// ---- Fixtures -------------------------------------------------------------------------------

// A fresh directory under the system temp dir, removed with everything in it when the test ends.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    path_ = (std::filesystem::temp_directory_path() / ("mmtune_deploy_" + name + "_XXXXXX"))
                .string();
    EXPECT_NE(::mkdtemp(path_.data()), nullptr) << path_;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path_, ignored)) {
      if (entry.is_directory(ignored)) {
        std::filesystem::permissions(entry.path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
      }
    }
    std::filesystem::remove_all(path_, ignored);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The names in `directory`. SQLite leaves `-wal` and `-shm` files beside a WAL-mode DB that a
// read-only connection opened (the main file stays byte-identical); they are left out unless
// `with_sqlite_side_files`.
std::set<std::string> FilesIn(const std::string& directory, bool with_sqlite_side_files = false) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    const bool side_file = name.ends_with("-wal") || name.ends_with("-shm");
    if (with_sqlite_side_files || !side_file) names.insert(name);
  }
  return names;
}

// Raw SQL through the plain sqlite3 API, as a foreign tool would write it.
void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(code, SQLITE_OK) << (message != nullptr ? message : "") << "\n" << sql;
  sqlite3_free(message);
  sqlite3_close(db);
}

std::string QueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string result = "<error>";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK) {
      const int code = sqlite3_step(statement);
      if (code == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(statement, 0);
        result = text != nullptr ? reinterpret_cast<const char*>(text) : "<null>";
      } else if (code == SQLITE_DONE) {
        result = "<no rows>";
      }
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return result;
}

std::int64_t QueryInt(const std::string& path, const std::string& sql) {
  const std::string text = QueryText(path, sql);
  return text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))
             ? -1
             : std::strtoll(text.c_str(), nullptr, 10);
}

Machine TestMachine(int model) { return testing::SyntheticZen3Machine(model); }

// `mc` tells configs apart in these tests.
KernelConfig TestConfig(int mc) {
  KernelConfig config;
  config.family = KernelFamily::kPacked;
  config.isa = IsaLevel::kAvx2;
  config.mr = 6;
  config.nr = 16;
  config.k_unroll = 4;
  config.kc = 256;
  config.mc = mc;
  config.nc = 4080;
  config.parallel_loop = ParallelLoop::kIc;
  config.threads = 1;
  return config;
}

Problem TestProblem(std::int64_t m) {
  Problem problem;
  problem.m = m;
  problem.n = 96;
  problem.k = 64;
  return problem;
}

nlohmann::json TestPeaks() { return {{"f32_fma_gflops", {{"one_core", 99.5}}}}; }

// One winner as a tune leaves it.
struct Tuned {
  Machine machine;
  std::int64_t m = 128;  // the problem
  int mc = 120;          // the config
  double gflops = 10.0;
  nlohmann::json peaks = nullptr;  // stored with the machine unless null
  CallForm form = CallForm::kPlain;
  std::int64_t batch = 1;
};

// Writes a tuning DB the way `mmtune tune` does: for every entry a session with a measurement
// and the winner; then, per machine, a measured problem and config that never won, which an
// export or merge must leave out.
void WriteTuningDb(const std::string& path, const std::vector<Tuned>& entries) {
  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  for (const Tuned& entry : entries) {
    auto machine_id = store->UpsertMachine(entry.machine, entry.peaks);
    ASSERT_TRUE(machine_id.ok()) << machine_id.error().message;
    auto session_id = store->BeginSession(*machine_id, SessionInfo{"0.1.0", "abc", "random", 1.0,
                                                                   4, 1, "mmtune tune"});
    ASSERT_TRUE(session_id.ok()) << session_id.error().message;
    for (const auto& [m, mc, won] : {std::tuple{entry.m, entry.mc, true},
                                     std::tuple<std::int64_t, int, bool>{9999, 480, false}}) {
      Problem problem = TestProblem(m);
      problem.form = entry.form;
      problem.batch = entry.batch;
      auto problem_id = store->UpsertProblem(problem);
      ASSERT_TRUE(problem_id.ok()) << problem_id.error().message;
      MeasurementRecord measurement;
      measurement.config = TestConfig(mc);
      measurement.stage = MeasurementStage::kConfirm;
      measurement.median_seconds = 1e-4;
      measurement.samples = 5;
      measurement.gflops = entry.gflops;
      ASSERT_TRUE(store->RecordMeasurement(*session_id, *machine_id, *problem_id, measurement)
                      .ok());
      if (!won) continue;
      WinnerRecord winner;
      winner.fingerprint = entry.machine.fingerprint;
      winner.problem = problem;
      winner.config = TestConfig(mc);
      winner.gflops = entry.gflops;
      winner.median_seconds = 1e-4;
      winner.default_gflops = entry.gflops / 2;
      ASSERT_TRUE(store->SetWinner(*machine_id, *problem_id, *session_id, winner).ok());
    }
    ASSERT_TRUE(store->FinishSession(*session_id, "finished").ok());
  }
}

// Two machines, three winners, and (per machine) a problem and a config that never won.
std::vector<Tuned> TwoMachines() {
  return {Tuned{TestMachine(1), 128, 120, 10.0, TestPeaks()},
          Tuned{TestMachine(1), 256, 240, 20.0, nullptr},
          Tuned{TestMachine(2), 128, 60, 7.0, nullptr}};
}

std::vector<WinnerRecord> ReadWinners(const std::string& path) {
  auto store = TuningStore::Open(path, DbOpenMode::kReadOnly);
  EXPECT_TRUE(store.ok()) << store.error().message;
  if (!store.ok()) return {};
  auto winners = store->Winners("");
  EXPECT_TRUE(winners.ok()) << winners.error().message;
  return winners.ok() ? *winners : std::vector<WinnerRecord>{};
}

// Everything a winner says, for comparing lists; `with_session` adds its session id.
std::vector<std::string> Describe(const std::vector<WinnerRecord>& winners,
                                  bool with_session = false) {
  std::vector<std::string> lines;
  for (const WinnerRecord& w : winners) {
    lines.push_back(w.fingerprint + " " + w.problem.ToString() + " " + w.config.ToString() + " " +
                    std::to_string(w.gflops) + " " + std::to_string(w.median_seconds) + " " +
                    std::to_string(w.default_gflops) + " " + w.updated_at +
                    (with_session ? " s" + std::to_string(w.session_id) : ""));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

const WinnerRecord* FindWinner(const std::vector<WinnerRecord>& winners, const Machine& machine,
                               std::int64_t m) {
  for (const WinnerRecord& winner : winners) {
    if (winner.fingerprint == machine.fingerprint && winner.problem == TestProblem(m)) {
      return &winner;
    }
  }
  return nullptr;
}

ExportOptions ExportAll(ExportFormat format = ExportFormat::kSqlite) {
  ExportOptions options;
  options.machines.kind = MachineSelection::Kind::kAll;
  options.format = format;
  return options;
}

// ---- Parsing --------------------------------------------------------------------------------

TEST(DeployParseTest, MachineSelectionAndFormat) {
  auto current = ParseMachineSelection("current");
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->kind, MachineSelection::Kind::kCurrent);
  auto all = ParseMachineSelection("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->kind, MachineSelection::Kind::kAll);
  auto named = ParseMachineSelection("0123456789ABCDEF");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->kind, MachineSelection::Kind::kFingerprint);
  EXPECT_EQ(named->fingerprint, "0123456789abcdef");
  for (const char* bad : {"", "Current", "abc", "0123456789abcdeg", "0123456789abcdef0"}) {
    SCOPED_TRACE(bad);
    auto parsed = ParseMachineSelection(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(*ParseExportFormat("sqlite"), ExportFormat::kSqlite);
  EXPECT_EQ(*ParseExportFormat("json"), ExportFormat::kJson);
  EXPECT_FALSE(ParseExportFormat("xml").ok());
  EXPECT_FALSE(ParseExportFormat("SQLITE").ok());
}

// ---- Export ---------------------------------------------------------------------------------

TEST(DeployExportTest, SqliteHoldsOnlyMachinesWinnersAndWhatTheyUse) {
  ScratchDir dir("sqlite");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());
  const std::string before = Slurp(source);
  const std::string out = dir / "deploy.db";

  auto summary = ExportWinners(source, out, ExportAll());
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_EQ(summary->machines, 2);
  EXPECT_EQ(summary->winners, 3);

  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM machines"), 2);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM winners"), 3);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM winners WHERE session_id IS NULL"), 3);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM measurements"), 0);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM sessions"), 0);
  // Only what the winners use: the problem and config that never won stay behind.
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM problems"), 2);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM problems WHERE m = 9999"), 0);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM configs"), 3);
  EXPECT_EQ(QueryText(out, "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(QueryText(out, "SELECT peaks IS NOT NULL FROM machines WHERE fingerprint = '" +
                               TestMachine(1).fingerprint + "'"),
            "1");

  // Same winners as the source, tune times included, but no sessions.
  std::vector<WinnerRecord> expected = ReadWinners(source);
  ASSERT_EQ(expected.size(), 3u);
  const std::vector<WinnerRecord> exported = ReadWinners(out);
  EXPECT_EQ(Describe(exported), Describe(expected));
  for (const WinnerRecord& winner : exported) EXPECT_EQ(winner.session_id, 0);
  EXPECT_EQ(Slurp(source), before);
  EXPECT_EQ(FilesIn(dir.path()), (std::set<std::string>{"tuning.db", "deploy.db"}));
}

TEST(DeployExportTest, MachineSelectionPicksCurrentAllOrOne) {
  ScratchDir dir("select");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());

  ExportOptions current;
  current.current_fingerprint = TestMachine(2).fingerprint;
  auto mine = ExportWinners(source, dir / "current.db", current);
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  EXPECT_EQ(mine->machines, 1);
  EXPECT_EQ(mine->winners, 1);
  EXPECT_EQ(QueryText(dir / "current.db", "SELECT group_concat(fingerprint) FROM machines"),
            TestMachine(2).fingerprint);
  EXPECT_EQ(QueryInt(dir / "current.db", "SELECT COUNT(*) FROM winners"), 1);

  std::string upper = TestMachine(1).fingerprint;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ExportOptions one;
  one.machines = *ParseMachineSelection(upper);
  auto named = ExportWinners(source, dir / "one.db", one);
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->winners, 2);
  EXPECT_EQ(QueryText(dir / "one.db", "SELECT group_concat(fingerprint) FROM machines"),
            TestMachine(1).fingerprint);
  EXPECT_EQ(QueryInt(dir / "one.db", "SELECT COUNT(*) FROM winners"), 2);

  auto all = ExportWinners(source, dir / "all.db", ExportAll());
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(QueryInt(dir / "all.db", "SELECT COUNT(*) FROM machines"), 2);

  // A machine the DB does not hold is an error that names the ones it does, and writes nothing.
  ExportOptions unknown;
  unknown.machines = *ParseMachineSelection("0123456789abcdef");
  auto missing = ExportWinners(source, dir / "unknown.db", unknown);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("0123456789abcdef"), std::string::npos);
  EXPECT_NE(missing.error().message.find(TestMachine(1).fingerprint), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "unknown.db"));

  ExportOptions elsewhere;
  elsewhere.current_fingerprint = TestMachine(3).fingerprint;
  auto not_here = ExportWinners(source, dir / "elsewhere.db", elsewhere);
  ASSERT_FALSE(not_here.ok());
  EXPECT_NE(not_here.error().message.find("this machine"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "elsewhere.db"));

  ExportOptions no_fingerprint;  // `current` without the caller's fingerprint
  EXPECT_FALSE(ExportWinners(source, dir / "none.db", no_fingerprint).ok());
}

TEST(DeployExportTest, JsonDocumentHasTheDocumentedFields) {
  ScratchDir dir("json");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());
  const std::string out = dir / "winners.json";
  auto summary = ExportWinners(source, out, ExportAll(ExportFormat::kJson));
  ASSERT_TRUE(summary.ok()) << summary.error().message;

  const nlohmann::json doc = nlohmann::json::parse(Slurp(out), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc.value("schema_version", 0), 2);
  EXPECT_EQ(doc.value("generator", "").rfind("mmtune ", 0), 0u);
  EXPECT_FALSE(doc.contains("measurements"));
  EXPECT_FALSE(doc.contains("sessions"));
  ASSERT_TRUE(doc.at("machines").is_array());
  ASSERT_EQ(doc.at("machines").size(), 2u);
  for (const nlohmann::json& machine : doc.at("machines")) {
    const int model = machine.at("fingerprint") == TestMachine(1).fingerprint ? 1 : 2;
    nlohmann::json description;
    to_json(description, TestMachine(model));
    EXPECT_EQ(machine.at("fingerprint"), TestMachine(model).fingerprint);
    EXPECT_EQ(machine.at("fingerprint_basis"), TestMachine(model).fingerprint_basis);
    EXPECT_EQ(machine.at("description"), description);
    EXPECT_EQ(machine.at("peaks"), model == 1 ? TestPeaks() : nlohmann::json(nullptr));
  }
  ASSERT_TRUE(doc.at("winners").is_array());
  ASSERT_EQ(doc.at("winners").size(), 3u);
  bool saw_fastest = false;
  for (const nlohmann::json& winner : doc.at("winners")) {
    for (const char* key : {"fingerprint", "dtype", "layout", "trans", "m", "n", "k", "threads",
                            "form", "config", "gflops", "median_seconds", "default_gflops"}) {
      EXPECT_TRUE(winner.contains(key)) << key << " missing in " << winner.dump();
    }
    EXPECT_EQ(winner.at("dtype"), "f32");
    EXPECT_EQ(winner.at("trans"), "NN");
    EXPECT_EQ(winner.at("form"), "plain");
    EXPECT_EQ(winner.at("n"), 96);
    auto config = KernelConfigFromJson(winner.at("config"));
    ASSERT_TRUE(config.ok());
    if (winner.at("m") == 256) {
      saw_fastest = true;
      EXPECT_EQ(winner.at("fingerprint"), TestMachine(1).fingerprint);
      EXPECT_EQ(*config, TestConfig(240));
      EXPECT_EQ(winner.at("gflops"), 20.0);
      EXPECT_EQ(winner.at("default_gflops"), 10.0);
    }
  }
  EXPECT_TRUE(saw_fastest);
}

TEST(DeployExportTest, ExistingOutputIsReplacedOnlyWithForce) {
  ScratchDir dir("force");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());
  const std::string out = dir / "deploy.db";
  { std::ofstream(out) << "precious\n"; }

  auto refused = ExportWinners(source, out, ExportAll());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("--force"), std::string::npos);
  EXPECT_EQ(Slurp(out), "precious\n");

  // A stale journal beside the old file would be replayed into the new one; it must go.
  { std::ofstream(out + "-journal") << "stale journal of the old file"; }
  ExportOptions forced = ExportAll();
  forced.force = true;
  auto replaced = ExportWinners(source, out, forced);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  EXPECT_FALSE(std::filesystem::exists(out + "-journal"));
  EXPECT_EQ(ReadWinners(out).size(), 3u);

  // Not even --force may replace the source with its own export.
  const std::string before = Slurp(source);
  auto onto_source = ExportWinners(source, source, forced);
  ASSERT_FALSE(onto_source.ok());
  EXPECT_EQ(Slurp(source), before);
  EXPECT_EQ(ReadWinners(source).size(), 3u);
}

TEST(DeployExportTest, DeployedFileOpensReadOnlyFromAReadOnlyDirectory) {
  ScratchDir dir("read_only");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());
  const std::string deploy_dir = dir / "deploy";
  std::filesystem::create_directory(deploy_dir);
  const std::string out = deploy_dir + "/mmtune.db";
  ASSERT_TRUE(ExportWinners(source, out, ExportAll()).ok());
  ASSERT_EQ(::chmod(deploy_dir.c_str(), 0555), 0);

  {
    auto store = TuningStore::Open(out, DbOpenMode::kReadOnly);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto winners = store->Winners(TestMachine(1).fingerprint);
    ASSERT_TRUE(winners.ok()) << winners.error().message;
    EXPECT_EQ(winners->size(), 2u);
  }
  // Neither the export nor the read left anything beside the file (no temp, WAL or shm files).
  EXPECT_EQ(FilesIn(deploy_dir, /*with_sqlite_side_files=*/true),
            std::set<std::string>{"mmtune.db"});
  ::chmod(deploy_dir.c_str(), 0755);
}

TEST(DeployExportTest, BadSourceOrOutputWritesNothing) {
  ScratchDir dir("bad");
  const std::string text = dir / "notes.db";
  { std::ofstream(text) << "not a database\n"; }
  const std::string foreign = dir / "foreign.db";
  ExecSql(foreign, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');");
  const std::string good = dir / "tuning.db";
  WriteTuningDb(good, TwoMachines());
  const std::set<std::string> files = FilesIn(dir.path());

  struct Case {
    std::string source;
    std::string out;
    ErrorCode code;
  };
  for (const Case& c : {Case{text, dir / "a.db", ErrorCode::kCorrupt},
                        Case{foreign, dir / "b.db", ErrorCode::kCorrupt},
                        Case{dir / "missing.db", dir / "c.db", ErrorCode::kNotFound},
                        Case{good, dir / "no/such/dir/d.db", ErrorCode::kNotFound},
                        Case{good, dir.path(), ErrorCode::kIo}}) {
    SCOPED_TRACE(c.source + " -> " + c.out);
    auto result = ExportWinners(c.source, c.out, ExportAll());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, c.code) << result.error().message;
    EXPECT_EQ(FilesIn(dir.path()), files);
  }
}

// ---- Import (the store's part of merge) -----------------------------------------------------

TEST(DeployImportTest, IsAllOrNothing) {
  ScratchDir dir("import");
  const std::string path = dir / "out.db";
  WriteTuningDb(path, {Tuned{TestMachine(1), 128, 120, 10.0, nullptr}});
  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  MachineRecord second;
  second.fingerprint = TestMachine(2).fingerprint;
  second.fingerprint_basis = TestMachine(2).fingerprint_basis;
  to_json(second.description, TestMachine(2));
  WinnerRecord winner;
  winner.fingerprint = TestMachine(2).fingerprint;
  winner.problem = TestProblem(512);
  winner.config = TestConfig(60);
  winner.gflops = 5.0;
  WinnerRecord orphan = winner;
  orphan.fingerprint = TestMachine(3).fingerprint;  // neither stored nor imported

  auto counts = store->ImportWinners({{second}, {winner, orphan}, {}});
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.error().code, ErrorCode::kInvalidArgument);
  auto machines = store->Machines();
  ASSERT_TRUE(machines.ok());
  EXPECT_EQ(machines->size(), 1u) << "the machine added before the failure was not rolled back";
  EXPECT_EQ(store->Winners("")->size(), 1u);

  counts = store->ImportWinners({{second}, {winner}, {}});
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->machines_added, 1);
  EXPECT_EQ(counts->winners_added, 1);
}

// ---- Merge ----------------------------------------------------------------------------------

TEST(DeployMergeTest, FasterWinnerStaysAndProblemsOfAllMachinesAreKept) {
  ScratchDir dir("faster");
  const std::string a = dir / "a.db";
  const std::string b = dir / "b.db";
  const std::string c = dir / "c.db";
  WriteTuningDb(a, {Tuned{TestMachine(1), 128, 120, 10.0, nullptr},
                    Tuned{TestMachine(1), 256, 240, 5.0, nullptr}});
  WriteTuningDb(b, {Tuned{TestMachine(1), 128, 60, 20.0, TestPeaks()},
                    Tuned{TestMachine(2), 512, 480, 7.0, nullptr}});
  WriteTuningDb(c, {Tuned{TestMachine(1), 256, 30, 5.0, nullptr}});  // ties with a.db
  const std::string out = dir / "fleet.db";

  auto summary = MergeStores(out, {a, b, c});
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_TRUE(summary->created);
  EXPECT_EQ(summary->inputs, 3);
  EXPECT_EQ(summary->machines, 2);
  EXPECT_EQ(summary->winners, 3);
  EXPECT_EQ(summary->changes.machines_added, 2);
  EXPECT_EQ(summary->changes.winners_added, 3);

  const std::vector<WinnerRecord> winners = ReadWinners(out);
  ASSERT_EQ(winners.size(), 3u);
  const WinnerRecord* faster = FindWinner(winners, TestMachine(1), 128);
  ASSERT_NE(faster, nullptr);
  EXPECT_EQ(faster->config, TestConfig(60));
  EXPECT_EQ(faster->gflops, 20.0);
  const WinnerRecord* tie = FindWinner(winners, TestMachine(1), 256);
  ASSERT_NE(tie, nullptr);
  EXPECT_EQ(tie->config, TestConfig(240)) << "a tie must keep the earlier input's winner";
  const WinnerRecord* other = FindWinner(winners, TestMachine(2), 512);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->config, TestConfig(480));
  for (const WinnerRecord& winner : winners) EXPECT_EQ(winner.session_id, 0);

  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM measurements"), 0);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM sessions"), 0);
  // Machine 1 had no peaks in a.db; b.db measured them.
  EXPECT_EQ(QueryText(out, "SELECT peaks FROM machines WHERE fingerprint = '" +
                               TestMachine(1).fingerprint + "'"),
            TestPeaks().dump());
}

TEST(DeployMergeTest, MergingAgainChangesNothingAndInputsStayByteIdentical) {
  ScratchDir dir("idempotent");
  const std::string a = dir / "a.db";
  const std::string b = dir / "b.db";
  WriteTuningDb(a, TwoMachines());
  WriteTuningDb(b, {Tuned{TestMachine(1), 128, 60, 30.0, nullptr},
                    Tuned{TestMachine(3), 64, 30, 3.0, TestPeaks()}});
  const std::string a_before = Slurp(a);
  const std::string b_before = Slurp(b);
  const std::string out = dir / "fleet.db";

  auto first = MergeStores(out, {a, b});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->winners, 4);
  const std::vector<std::string> merged = Describe(ReadWinners(out), /*with_session=*/true);
  ASSERT_EQ(merged.size(), 4u);
  const std::string out_before = Slurp(out);

  auto second = MergeStores(out, {a, b});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->changes.machines_added, 0);
  EXPECT_EQ(second->changes.machines_given_peaks, 0);
  EXPECT_EQ(second->changes.winners_added, 0);
  EXPECT_EQ(second->changes.winners_replaced, 0);
  EXPECT_EQ(second->changes.winners_kept, 4);
  EXPECT_EQ(Describe(ReadWinners(out), true), merged);
  EXPECT_EQ(Slurp(out), out_before);

  EXPECT_EQ(Slurp(a), a_before);
  EXPECT_EQ(Slurp(b), b_before);
  for (const std::string& name : FilesIn(dir.path())) {
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name << " left behind";
  }
}

TEST(DeployMergeTest, ExistingOutputCompetesAndKeepsItsOwnData) {
  ScratchDir dir("existing");
  const std::string out = dir / "fleet.db";
  WriteTuningDb(out, {Tuned{TestMachine(1), 128, 120, 30.0, nullptr}});
  const std::int64_t measurements = QueryInt(out, "SELECT COUNT(*) FROM measurements");
  ASSERT_GT(measurements, 0);
  const std::string slower = dir / "slower.db";
  WriteTuningDb(slower, {Tuned{TestMachine(1), 128, 60, 20.0, TestPeaks()},
                         Tuned{TestMachine(1), 256, 240, 5.0, nullptr}});

  auto merged = MergeStores(out, {slower});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_FALSE(merged->created);
  EXPECT_EQ(merged->changes.winners_added, 1);
  EXPECT_EQ(merged->changes.winners_kept, 1);
  EXPECT_EQ(merged->changes.machines_given_peaks, 1);
  std::vector<WinnerRecord> winners = ReadWinners(out);
  const WinnerRecord* kept = FindWinner(winners, TestMachine(1), 128);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->config, TestConfig(120));
  EXPECT_NE(kept->session_id, 0) << "the output's own winner was rewritten";
  EXPECT_NE(FindWinner(winners, TestMachine(1), 256), nullptr);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM measurements"), measurements);
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM sessions"), 1);
  EXPECT_EQ(QueryText(out, "SELECT peaks FROM machines"), TestPeaks().dump());

  const std::string faster = dir / "faster.db";
  WriteTuningDb(faster, {Tuned{TestMachine(1), 128, 30, 40.0, nullptr}});
  merged = MergeStores(out, {faster});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->changes.winners_replaced, 1);
  winners = ReadWinners(out);
  const WinnerRecord* replaced = FindWinner(winners, TestMachine(1), 128);
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->config, TestConfig(30));
  EXPECT_EQ(replaced->gflops, 40.0);
  EXPECT_EQ(replaced->session_id, 0);
  EXPECT_EQ(QueryText(out, "SELECT peaks FROM machines"), TestPeaks().dump());
}

TEST(DeployMergeTest, AnyBadFileWritesNothing) {
  ScratchDir dir("bad_input");
  const std::string good = dir / "good.db";
  WriteTuningDb(good, TwoMachines());
  const std::string text = dir / "notes.db";
  { std::ofstream(text) << "not a database\n"; }
  const std::string foreign = dir / "foreign.db";
  ExecSql(foreign, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');");
  const std::string newer = dir / "newer.db";
  WriteTuningDb(newer, {Tuned{TestMachine(2), 64, 30, 3.0, nullptr}});
  ExecSql(newer, "PRAGMA user_version = 99;");
  const std::string existing = dir / "existing.db";
  WriteTuningDb(existing, {Tuned{TestMachine(1), 32, 30, 1.0, nullptr}});
  const std::set<std::string> files = FilesIn(dir.path());

  struct Case {
    std::string bad;
    ErrorCode code;
  };
  for (const Case& c : {Case{text, ErrorCode::kCorrupt}, Case{foreign, ErrorCode::kCorrupt},
                        Case{newer, ErrorCode::kUnsupported},
                        Case{dir / "missing.db", ErrorCode::kNotFound}}) {
    SCOPED_TRACE(c.bad);
    std::map<std::string, std::string> before;
    for (const std::string& name : files) before[name] = Slurp(dir / name);
    // The bad file comes last, so a merge that wrote as it went would have written good.db's.
    auto into_new = MergeStores(dir / "new.db", {good, c.bad});
    ASSERT_FALSE(into_new.ok());
    EXPECT_EQ(into_new.error().code, c.code) << into_new.error().message;
    auto into_existing = MergeStores(existing, {good, c.bad});
    ASSERT_FALSE(into_existing.ok());
    EXPECT_EQ(FilesIn(dir.path()), files);
    for (const std::string& name : files) EXPECT_EQ(Slurp(dir / name), before[name]) << name;
  }

  // A foreign or newer output is refused unchanged, after the inputs were read.
  for (const std::string& out : {foreign, newer, text}) {
    SCOPED_TRACE(out);
    const std::string before = Slurp(out);
    EXPECT_FALSE(MergeStores(out, {good}).ok());
    EXPECT_EQ(Slurp(out), before);
  }
  EXPECT_EQ(FilesIn(dir.path()), files);

  auto itself = MergeStores(good, {good});
  ASSERT_FALSE(itself.ok());
  EXPECT_EQ(itself.error().code, ErrorCode::kInvalidArgument);
  auto nothing = MergeStores(dir / "new.db", {});
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir / "new.db"));
}

// The winners of `path` as comparable text: machine, problem, config, speeds and tuning time.
std::vector<std::string> WinnerRows(const std::string& path) {
  std::vector<std::string> rows;
  for (const WinnerRecord& w : ReadWinners(path)) {
    rows.push_back(w.fingerprint + " " + w.problem.ToString() + " " + w.config.ToString() + " " +
                   std::to_string(w.gflops) + " " + std::to_string(w.median_seconds) + " " +
                   std::to_string(w.default_gflops) + " " + w.updated_at);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(DeployMergeTest, JsonExportsMergeLikeTheDbsTheyCameFrom) {
  ScratchDir dir("json_merge");
  const std::string a = dir / "a.db";
  const std::string b = dir / "b.db";
  WriteTuningDb(a, TwoMachines());
  WriteTuningDb(b, {Tuned{TestMachine(1), 128, 60, 25.0, TestPeaks()},
                    Tuned{TestMachine(2), 1024, 480, 7.0, nullptr}});
  const std::string a_json = dir / "a.json";
  ASSERT_TRUE(ExportWinners(a, a_json, ExportAll(ExportFormat::kJson)).ok());
  // Leading white space, as an editor or a pipe may leave, does not hide the JSON.
  const std::string document = Slurp(a_json);
  { std::ofstream(a_json, std::ios::trunc) << "\n  " << document; }

  const std::string from_dbs = dir / "from_dbs.db";
  auto expected = MergeStores(from_dbs, {a, b});
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  const std::string from_json = dir / "from_json.db";
  auto merged = MergeStores(from_json, {a_json, b});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->machines, expected->machines);
  EXPECT_EQ(merged->winners, expected->winners);
  EXPECT_EQ(WinnerRows(from_json), WinnerRows(from_dbs));
  EXPECT_EQ(QueryText(from_json, "SELECT peaks FROM machines WHERE fingerprint = '" +
                                     TestMachine(1).fingerprint + "'"),
            TestPeaks().dump());
  EXPECT_EQ(QueryText(from_json, "SELECT description FROM machines WHERE fingerprint = '" +
                                     TestMachine(2).fingerprint + "'"),
            QueryText(from_dbs, "SELECT description FROM machines WHERE fingerprint = '" +
                                    TestMachine(2).fingerprint + "'"));
  EXPECT_EQ(Slurp(a_json), "\n  " + document) << "an input was changed";

  // Merging the JSON again into the result changes nothing.
  auto again = MergeStores(from_json, {a_json});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->changes.winners_added + again->changes.winners_replaced, 0);
}

// A winner tuned with B packed beforehand (`tune --packed-b`), one tuned for batches of 64
// (`tune --batch 64`) and the plain winner of the same shape are three winners: through a SQLite
// or JSON export and a merge, each keeps its form. A JSON export of version 1, which had no
// "form", holds plain winners.
TEST(DeployMergeTest, PackedBAndBatchWinnersTravelApartFromPlainOnes) {
  ScratchDir dir("forms");
  const std::string source = dir / "tuned.db";
  WriteTuningDb(source,
                {Tuned{TestMachine(1), 128, 120, 10.0, nullptr},
                 Tuned{TestMachine(1), 128, 60, 12.0, nullptr, CallForm::kPackedB},
                 Tuned{TestMachine(1), 128, 66, 14.0, nullptr, CallForm::kPlain, 64}});
  auto forms_of = [](const std::string& path) {
    std::map<std::string, int> mc_by_form;
    for (const WinnerRecord& winner : ReadWinners(path)) {
      EXPECT_EQ(mc_by_form.count(FormName(winner.problem)), 0u) << winner.problem.ToString();
      mc_by_form[FormName(winner.problem)] = winner.config.mc;
    }
    return mc_by_form;
  };
  const std::map<std::string, int> expected = {
      {"plain", 120}, {"packed-b", 60}, {"batch:64", 66}};
  ASSERT_EQ(forms_of(source), expected);

  const std::string json = dir / "tuned.json";
  ASSERT_TRUE(ExportWinners(source, json, ExportAll(ExportFormat::kJson)).ok());
  const nlohmann::json document = nlohmann::json::parse(Slurp(json));
  std::multiset<std::string> written_forms;
  for (const nlohmann::json& winner : document.at("winners")) {
    written_forms.insert(winner.at("form").get<std::string>());
  }
  EXPECT_EQ(written_forms, (std::multiset<std::string>{"batch:64", "packed-b", "plain"}));
  const std::string exported = dir / "exported.db";
  ASSERT_TRUE(ExportWinners(source, exported, ExportAll(ExportFormat::kSqlite)).ok());
  EXPECT_EQ(forms_of(exported), expected);
  ASSERT_TRUE(MergeStores(dir / "from_json.db", {json}).ok());
  EXPECT_EQ(forms_of(dir / "from_json.db"), expected);

  nlohmann::json version1 = document;
  version1["schema_version"] = 1;
  for (nlohmann::json& winner : version1["winners"]) {
    winner.erase("form");
    winner["m"] = winner.at("config").at("mc").get<int>();  // three plain shapes
  }
  const std::string old_json = dir / "version1.json";
  { std::ofstream(old_json) << version1.dump(); }
  ASSERT_TRUE(MergeStores(dir / "from_version1.db", {old_json}).ok());
  const std::vector<WinnerRecord> old_winners = ReadWinners(dir / "from_version1.db");
  ASSERT_EQ(old_winners.size(), 3u);
  for (const WinnerRecord& winner : old_winners) EXPECT_EQ(FormName(winner.problem), "plain");
}

// The shape ranges that winners stand for travel with them: into a SQLite or JSON export (of the
// selected machines only) and through a merge, each range once.
TEST(DeployMergeTest, ShapeRangesTravelWithTheirWinners) {
  ScratchDir dir("ranges");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());
  auto range = ParseShapeRange("1..256x96x64");
  ASSERT_TRUE(range.ok());
  {
    auto store = TuningStore::Open(source, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store.ok());
    for (int model : {1, 2}) {
      auto machine = store->FindMachine(TestMachine(model).fingerprint);
      ASSERT_TRUE(machine.ok() && machine->has_value());
      ShapeRangeRecord record{TestMachine(model).fingerprint, DType::kF32, Layout::kRowMajor,
                              Trans::kNo, Trans::kNo, 1, *range,
                              BucketPolicy{BucketPolicy::Kind::kStep, 64 * model}, ""};
      ASSERT_TRUE(store->RecordShapeRange((*machine)->id, record).ok());
    }
  }
  auto ranges_of = [](const std::string& path) {
    auto store = TuningStore::Open(path, DbOpenMode::kReadOnly);
    EXPECT_TRUE(store.ok()) << store.error().message;
    std::vector<std::string> rows;
    if (!store.ok()) return rows;
    auto ranges = store->ShapeRanges("");
    EXPECT_TRUE(ranges.ok());
    if (!ranges.ok()) return rows;
    for (const ShapeRangeRecord& r : *ranges) {
      rows.push_back(r.fingerprint + " " + r.range.ToString() + " " + r.buckets.ToString());
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  const std::vector<std::string> both = ranges_of(source);
  ASSERT_EQ(both.size(), 2u);

  const std::string all = dir / "all.db";
  ASSERT_TRUE(ExportWinners(source, all, ExportAll()).ok());
  EXPECT_EQ(ranges_of(all), both);
  ExportOptions one = ExportAll();
  one.machines = *ParseMachineSelection(TestMachine(2).fingerprint);
  const std::string second = dir / "second.db";
  ASSERT_TRUE(ExportWinners(source, second, one).ok());
  EXPECT_EQ(ranges_of(second),
            std::vector<std::string>{TestMachine(2).fingerprint + " 1..256x96x64 step:128"});

  const std::string json = dir / "all.json";
  ASSERT_TRUE(ExportWinners(source, json, ExportAll(ExportFormat::kJson)).ok());
  const nlohmann::json document = nlohmann::json::parse(Slurp(json));
  ASSERT_EQ(document.at("ranges").size(), 2u);
  EXPECT_EQ(document.at("ranges")[0].at("range"), "1..256x96x64");
  const std::string from_json = dir / "from_json.db";
  auto merged = MergeStores(from_json, {json, all, second});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->changes.ranges_added, 2);
  EXPECT_EQ(ranges_of(from_json), both);
  auto again = MergeStores(from_json, {json});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->changes.ranges_added, 0);

  // A document without "ranges" (written before ranges existed) still merges.
  nlohmann::json old = document;
  old.erase("ranges");
  const std::string old_json = dir / "old.json";
  { std::ofstream(old_json) << old.dump(); }
  ASSERT_TRUE(MergeStores(dir / "from_old.db", {old_json}).ok());
  EXPECT_TRUE(ranges_of(dir / "from_old.db").empty());
}

TEST(DeployMergeTest, BadJsonInputsWriteNothingAndNameTheFault) {
  ScratchDir dir("bad_json");
  const std::string good = dir / "good.db";
  WriteTuningDb(good, TwoMachines());
  const std::string json = dir / "good.json";
  ASSERT_TRUE(ExportWinners(good, json, ExportAll(ExportFormat::kJson)).ok());
  const nlohmann::json document = nlohmann::json::parse(Slurp(json));

  struct Case {
    std::string name;
    std::string text;
    ErrorCode code;
    std::string says;
  };
  auto edited = [&](auto&& edit) {
    nlohmann::json copy = document;
    edit(copy);
    return copy.dump();
  };
  const std::vector<Case> cases = {
      {"truncated", document.dump().substr(0, 40), ErrorCode::kCorrupt, "not valid JSON"},
      {"not_an_export", "{\"a\": 1}", ErrorCode::kCorrupt, "schema_version"},
      {"newer", edited([](auto& d) { d["schema_version"] = 3; }), ErrorCode::kUnsupported,
       "schema version 3"},
      {"form", edited([](auto& d) { d["winners"][0]["form"] = "packed-a"; }),
       ErrorCode::kCorrupt, "call form 'packed-a'"},
      {"no_winners", edited([](auto& d) { d.erase("winners"); }), ErrorCode::kCorrupt,
       "\"winners\""},
      {"dtype", edited([](auto& d) { d["winners"][1]["dtype"] = "f128"; }), ErrorCode::kCorrupt,
       "winner 1"},
      {"m_zero", edited([](auto& d) { d["winners"][0]["m"] = 0; }), ErrorCode::kCorrupt, "\"m\""},
      {"m_text", edited([](auto& d) { d["winners"][0]["m"] = "64"; }), ErrorCode::kCorrupt,
       "\"m\""},
      {"config", edited([](auto& d) { d["winners"][0]["config"]["family"] = "magic"; }),
       ErrorCode::kCorrupt, "config"},
      {"negative", edited([](auto& d) { d["winners"][2]["gflops"] = -1.0; }),
       ErrorCode::kCorrupt, "gflops"},
      {"orphan", edited([](auto& d) { d["machines"].erase(0); }), ErrorCode::kCorrupt,
       "does not hold"},
      {"twice", edited([](auto& d) { d["machines"].push_back(d["machines"][0]); }),
       ErrorCode::kCorrupt, "twice"},
      {"no_fingerprint", edited([](auto& d) { d["machines"][0].erase("fingerprint"); }),
       ErrorCode::kCorrupt, "machine 0"},
      {"bad_range", edited([&](auto& d) {
         d["ranges"] = nlohmann::json::array({{{"fingerprint", d["machines"][0]["fingerprint"]},
                                               {"dtype", "f32"}, {"layout", "row"},
                                               {"trans", "NN"}, {"threads", 1},
                                               {"range", "9..4x8x8"}, {"buckets", "pow2"}}});
       }),
       ErrorCode::kCorrupt, "range 0"},
      {"range_orphan", edited([&](auto& d) {
         d["ranges"] = nlohmann::json::array({{{"fingerprint", "0123456789abcdef"},
                                               {"dtype", "f32"}, {"layout", "row"},
                                               {"trans", "NN"}, {"threads", 1},
                                               {"range", "1..4x8x8"}, {"buckets", "pow2"}}});
       }),
       ErrorCode::kCorrupt, "does not hold"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string bad = dir / (c.name + ".json");
    { std::ofstream(bad) << c.text; }
    const std::set<std::string> files = FilesIn(dir.path());
    const std::string before = Slurp(good);
    auto merged = MergeStores(dir / "new.db", {good, bad});
    ASSERT_FALSE(merged.ok());
    EXPECT_EQ(merged.error().code, c.code) << merged.error().message;
    EXPECT_NE(merged.error().message.find(c.says), std::string::npos) << merged.error().message;
    EXPECT_NE(merged.error().message.find(bad), std::string::npos) << merged.error().message;
    EXPECT_EQ(merged.error().message.find('\n'), std::string::npos);
    EXPECT_EQ(FilesIn(dir.path()), files);
    EXPECT_EQ(Slurp(good), before);
  }
}

// ---- CLI ------------------------------------------------------------------------------------

// ExpectOneLineError comes from tests/cli_test_util.h (shared by the CLI tests).
using mmtune::testing::ExpectOneLineError;

std::string Quote(const std::string& path) { return "'" + path + "'"; }

TEST(DeployCliTest, ExportCurrentAllAndOneMachine) {
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok()) << host.error().message;
  // The synthetic machine may be modelled on the very host the tests run on.
  int model = 1;
  while (TestMachine(model).fingerprint == host->fingerprint) ++model;
  const Machine other = TestMachine(model);
  ScratchDir dir("cli_export");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, {Tuned{*host, 128, 120, 10.0, TestPeaks()},
                         Tuned{other, 256, 240, 20.0, nullptr},
                         Tuned{other, 512, 60, 30.0, nullptr}});

  const RunResult current =
      RunMmtune("export --db " + Quote(source) + " --out " + Quote(dir / "current.db"));
  ASSERT_EQ(current.exit_code, 0) << current.err;
  EXPECT_TRUE(current.err.empty()) << current.err;
  EXPECT_EQ(Lines(current.out), 1) << current.out;
  EXPECT_NE(current.out.find("1 machine and 1 winner "), std::string::npos) << current.out;
  EXPECT_EQ(QueryText(dir / "current.db", "SELECT group_concat(fingerprint) FROM machines"),
            host->fingerprint);

  const RunResult all = RunMmtune("export --db " + Quote(source) + " --out " +
                                  Quote(dir / "all.json") + " --machine all --format json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("2 machines and 3 winners"), std::string::npos) << all.out;
  const nlohmann::json doc = nlohmann::json::parse(Slurp(dir / "all.json"), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc.at("schema_version"), 2);
  EXPECT_EQ(doc.at("machines").size(), 2u);
  EXPECT_EQ(doc.at("winners").size(), 3u);

  const RunResult one = RunMmtune("export --db " + Quote(source) + " --out " +
                                  Quote(dir / "one.db") + " --machine " + other.fingerprint);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(QueryInt(dir / "one.db", "SELECT COUNT(*) FROM winners"), 2);
  EXPECT_EQ(QueryInt(dir / "one.db", "SELECT COUNT(*) FROM measurements"), 0);
}

TEST(DeployCliTest, ExportErrorsAreOneLineWithTheRightExitCode) {
  ScratchDir dir("cli_export_errors");
  const std::string source = dir / "tuning.db";
  WriteTuningDb(source, TwoMachines());
  const std::string foreign = dir / "foreign.db";
  ExecSql(foreign, "CREATE TABLE recipes(name TEXT);");
  const std::string out = dir / "out.db";
  const std::string db = " --db " + Quote(source);

  struct Case {
    std::string args;
    int exit_code;
  };
  for (const Case& c : {Case{db + " --out " + Quote(out) + " --format xml", 2},
                        Case{db + " --out " + Quote(out) + " --machine bogus", 2},
                        Case{db, 2},  // --out is required
                        Case{db + " --out " + Quote(out) + " --machine 0123456789abcdef", 1},
                        Case{" --db " + Quote(dir / "missing.db") + " --out " + Quote(out) +
                                 " --machine all", 1},
                        Case{" --db " + Quote(foreign) + " --out " + Quote(out) +
                                 " --machine all", 1}}) {
    SCOPED_TRACE(c.args);
    ExpectOneLineError(RunMmtune("export" + c.args), c.exit_code);
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  EXPECT_NE(RunMmtune("export" + db + " --out " + Quote(out) + " --machine 0123456789abcdef")
                .err.find("not in"),
            std::string::npos);

  { std::ofstream(out) << "keep me\n"; }
  const RunResult refused = RunMmtune("export" + db + " --out " + Quote(out) + " --machine all");
  ExpectOneLineError(refused, 2);
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_EQ(Slurp(out), "keep me\n");
  const RunResult forced =
      RunMmtune("export" + db + " --out " + Quote(out) + " --machine all --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(QueryInt(out, "SELECT COUNT(*) FROM winners"), 3);
}

TEST(DeployCliTest, MergeSummarisesAndIsIdempotent) {
  ScratchDir dir("cli_merge");
  const std::string a = dir / "a.db";
  const std::string b = dir / "b.db";
  WriteTuningDb(a, {Tuned{TestMachine(1), 128, 120, 10.0, nullptr}});
  WriteTuningDb(b, {Tuned{TestMachine(1), 128, 60, 20.0, nullptr},
                    Tuned{TestMachine(2), 256, 240, 5.0, nullptr}});
  const std::string fleet = dir / "fleet.db";
  const std::string merge = "merge --out " + Quote(fleet) + " " + Quote(a) + " " + Quote(b);

  const RunResult first = RunMmtune(merge);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Lines(first.out), 1) << first.out;
  EXPECT_NE(first.out.find("merged 2 DBs"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("2 machines"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("2 winners (2 added"), std::string::npos) << first.out;
  EXPECT_EQ(QueryText(fleet, "SELECT gflops FROM winners WHERE problem_id = "
                             "(SELECT id FROM problems WHERE m = 128)"),
            "20.0");

  const RunResult again = RunMmtune(merge);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("(0 added, 0 replaced by faster ones, 2 kept)"), std::string::npos)
      << again.out;

  ExpectOneLineError(RunMmtune("merge --out " + Quote(dir / "x.db")), 2);  // no inputs
  ExpectOneLineError(RunMmtune("merge " + Quote(a)), 2);                   // no --out
  ExpectOneLineError(RunMmtune("merge --out " + Quote(a) + " " + Quote(a)), 2);
  const std::string foreign = dir / "foreign.db";
  ExecSql(foreign, "CREATE TABLE recipes(name TEXT);");
  ExpectOneLineError(
      RunMmtune("merge --out " + Quote(dir / "new.db") + " " + Quote(a) + " " + Quote(foreign)),
      1);
  ExpectOneLineError(
      RunMmtune("merge --out " + Quote(dir / "new.db") + " " + Quote(dir / "missing.db")), 1);
  const std::string broken = dir / "broken.json";
  { std::ofstream(broken) << "{\"schema_version\": 1, \"machines\": ["; }
  ExpectOneLineError(
      RunMmtune("merge --out " + Quote(dir / "new.db") + " " + Quote(broken)), 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "new.db"));

  // A JSON export merges like the DB it came from.
  const std::string exported = dir / "b.json";
  const RunResult export_run =
      RunMmtune("export --machine all --format json --db " + Quote(b) + " --out " +
                Quote(exported));
  ASSERT_EQ(export_run.exit_code, 0) << export_run.err;
  const RunResult from_json =
      RunMmtune("merge --out " + Quote(dir / "from_json.db") + " " + Quote(exported));
  ASSERT_EQ(from_json.exit_code, 0) << from_json.err;
  EXPECT_NE(from_json.out.find("2 machines (2 added) and 2 winners (2 added"), std::string::npos)
      << from_json.out;
}

TEST(DeployCliTest, HelpExplainsTheOptions) {
  const RunResult top = RunMmtune("--help");
  ASSERT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("export"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("merge"), std::string::npos) << top.out;
  const RunResult export_help = RunMmtune("export --help");
  ASSERT_EQ(export_help.exit_code, 0) << export_help.err;
  for (const char* text : {"--db", "--out", "--machine", "current", "--format", "json",
                           "--force"}) {
    EXPECT_NE(export_help.out.find(text), std::string::npos) << text << "\n" << export_help.out;
  }
  const RunResult merge_help = RunMmtune("merge --help");
  ASSERT_EQ(merge_help.exit_code, 0) << merge_help.err;
  for (const char* text : {"--out", "GFLOP/s", "inputs FILE", "JSON"}) {
    EXPECT_NE(merge_help.out.find(text), std::string::npos) << text << "\n" << merge_help.out;
  }
}

}  // namespace
}  // namespace mmtune
