// The tuning store: every record round-trips through ":memory:" and through a file that is
// reopened; files that are not this build's mmtune DB are refused and left byte-identical;
// hostile rows are skipped instead of crashing; concurrent writer processes lose nothing.
#include "db/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/schema.h"
#include "tests/synthetic_machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

// ---- Fixtures -------------------------------------------------------------------------------

// A fresh directory under the system temp dir, removed with everything in it (permissions
// restored first) when the test ends.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    path_ =
        (std::filesystem::temp_directory_path() / ("mmtune_store_" + name + "_XXXXXX")).string();
    EXPECT_NE(::mkdtemp(path_.data()), nullptr) << path_;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Raw SQL through the plain sqlite3 API, as a foreign tool (or an attacker) would write it.
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
    sqlite3_busy_timeout(db, 5000);
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
  return std::strtoll(QueryText(path, sql).c_str(), nullptr, 10);
}

Machine TestMachine(int model = 1) { return testing::SyntheticZen3Machine(model); }

KernelConfig TestConfig(int mc = 120) {
  KernelConfig config;
  config.family = KernelFamily::kPacked;
  config.isa = IsaLevel::kAvx2;
  config.mr = 6;
  config.nr = 16;
  config.k_unroll = 4;
  config.kc = 256;
  config.mc = mc;
  config.nc = 4080;
  config.prefetch_a = 2;
  config.prefetch_b = 1;
  config.prefetch_c = true;
  config.parallel_loop = ParallelLoop::kIc;
  config.threads = 2;
  return config;
}

Problem TestProblem(std::int64_t m = 128, Trans trans_b = Trans::kNo) {
  Problem problem;
  problem.dtype = DType::kF64;
  problem.layout = Layout::kColMajor;
  problem.trans_a = Trans::kNo;
  problem.trans_b = trans_b;
  problem.m = m;
  problem.n = 96;
  problem.k = 64;
  problem.threads = 2;
  return problem;
}

MeasurementRecord OkMeasurement(int eval_index, int mc = 120) {
  MeasurementRecord record;
  record.config = TestConfig(mc);
  record.status = MeasurementStatus::kOk;
  record.stage = MeasurementStage::kSearch;
  record.median_seconds = 1.25e-4;
  record.min_seconds = 1.125e-4;
  record.mad_seconds = 3.5e-6;
  record.samples = 7;
  record.gflops = 12.5;
  record.eval_index = eval_index;
  return record;
}

MeasurementRecord FailedMeasurement(int eval_index) {
  MeasurementRecord record;
  record.config = TestConfig(240);
  record.status = MeasurementStatus::kFailed;
  record.stage = MeasurementStage::kDefault;
  record.error = "wrong result: C[3,4] = 1.5, expected 2.5 (it's \"off\")";
  record.eval_index = eval_index;
  return record;
}

void ExpectSameMeasurement(const MeasurementRecord& got, const MeasurementRecord& want,
                           std::int64_t session_id) {
  EXPECT_EQ(got.config, want.config);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.stage, want.stage);
  EXPECT_EQ(got.error, want.error);
  EXPECT_EQ(got.median_seconds, want.median_seconds);
  EXPECT_EQ(got.min_seconds, want.min_seconds);
  EXPECT_EQ(got.mad_seconds, want.mad_seconds);
  EXPECT_EQ(got.samples, want.samples);
  EXPECT_EQ(got.gflops, want.gflops);
  EXPECT_EQ(got.eval_index, want.eval_index);
  EXPECT_EQ(got.session_id, session_id);
}

// What one tune writes: a machine, a session, two problems, three measurements, one winner.
struct Written {
  std::int64_t machine_id = 0;
  std::int64_t session_id = 0;
  std::int64_t problem_id = 0;
  std::vector<MeasurementRecord> measurements;
  WinnerRecord winner;
};

Written WriteOneTune(TuningStore& store) {
  Written w;
  const Machine machine = TestMachine();
  auto machine_id = store.UpsertMachine(machine, nlohmann::json{{"f64_gflops", 37.5}});
  EXPECT_TRUE(machine_id.ok()) << machine_id.error().message;
  w.machine_id = machine_id.ok() ? *machine_id : 0;
  SessionInfo info{"0.1.0", "abc123def456", "random", 2.5, 40, 0xfedcba9876543210ull,
                   "mmtune tune --db x.db"};
  auto session_id = store.BeginSession(w.machine_id, info);
  EXPECT_TRUE(session_id.ok()) << session_id.error().message;
  w.session_id = session_id.ok() ? *session_id : 0;
  auto problem_id = store.UpsertProblem(TestProblem());
  EXPECT_TRUE(problem_id.ok()) << problem_id.error().message;
  w.problem_id = problem_id.ok() ? *problem_id : 0;

  MeasurementRecord skipped = OkMeasurement(2, 60);
  skipped.status = MeasurementStatus::kSkipped;
  MeasurementRecord confirm = OkMeasurement(0);
  confirm.stage = MeasurementStage::kConfirm;
  w.measurements = {FailedMeasurement(0), OkMeasurement(1), skipped, confirm};
  for (const MeasurementRecord& record : w.measurements) {
    Status status = store.RecordMeasurement(w.session_id, w.machine_id, w.problem_id, record);
    EXPECT_TRUE(status.ok()) << status.error().message;
  }
  w.winner.fingerprint = machine.fingerprint;
  w.winner.problem = TestProblem();
  w.winner.config = TestConfig();
  w.winner.gflops = 12.5;
  w.winner.median_seconds = 1.25e-4;
  w.winner.default_gflops = 8.0;
  w.winner.session_id = w.session_id;
  Status winner = store.SetWinner(w.machine_id, w.problem_id, w.session_id, w.winner);
  EXPECT_TRUE(winner.ok()) << winner.error().message;
  Status finished = store.FinishSession(w.session_id, "finished");
  EXPECT_TRUE(finished.ok()) << finished.error().message;
  return w;
}

void ExpectTuneReadsBack(const TuningStore& store, const Written& w) {
  auto machine = store.FindMachine(TestMachine().fingerprint);
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  ASSERT_TRUE(machine->has_value());
  const MachineRecord& record = **machine;
  EXPECT_EQ(record.id, w.machine_id);
  EXPECT_EQ(record.fingerprint, TestMachine().fingerprint);
  EXPECT_EQ(record.fingerprint_basis, TestMachine().fingerprint_basis);
  nlohmann::json description;
  to_json(description, TestMachine());
  EXPECT_EQ(record.description, description);
  EXPECT_EQ(record.peaks, (nlohmann::json{{"f64_gflops", 37.5}}));

  auto measurements = store.Measurements(w.machine_id, w.problem_id);
  ASSERT_TRUE(measurements.ok()) << measurements.error().message;
  ASSERT_EQ(measurements->size(), w.measurements.size());
  for (std::size_t i = 0; i < w.measurements.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectSameMeasurement((*measurements)[i], w.measurements[i], w.session_id);
  }

  auto winners = store.Winners(w.winner.fingerprint);
  ASSERT_TRUE(winners.ok()) << winners.error().message;
  ASSERT_EQ(winners->size(), 1u);
  const WinnerRecord& winner = (*winners)[0];
  EXPECT_EQ(winner.fingerprint, w.winner.fingerprint);
  EXPECT_EQ(winner.problem, w.winner.problem);
  EXPECT_EQ(winner.config, w.winner.config);
  EXPECT_EQ(winner.gflops, w.winner.gflops);
  EXPECT_EQ(winner.median_seconds, w.winner.median_seconds);
  EXPECT_EQ(winner.default_gflops, w.winner.default_gflops);
  EXPECT_EQ(winner.session_id, w.session_id);
  // ISO 8601 UTC: "2024-05-01T12:34:56.789Z".
  EXPECT_EQ(winner.updated_at.size(), 24u) << winner.updated_at;
  EXPECT_EQ(winner.updated_at.back(), 'Z') << winner.updated_at;
  EXPECT_EQ(winner.updated_at[10], 'T') << winner.updated_at;
}

// ---- Identity of configs ----------------------------------------------------------------------

TEST(ConfigHashTest, StableHexAndDistinguishesEveryField) {
  const std::string hash = ConfigHash(TestConfig());
  EXPECT_EQ(hash, ConfigHash(TestConfig()));
  EXPECT_EQ(hash.size(), 16u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
  std::set<std::string> hashes = {hash};
  KernelConfig changed = TestConfig();
  changed.prefetch_c = false;
  hashes.insert(ConfigHash(changed));
  changed = TestConfig();
  changed.parallel_loop = ParallelLoop::kJr;
  hashes.insert(ConfigHash(changed));
  changed = TestConfig();
  changed.threads = 1;
  hashes.insert(ConfigHash(changed));
  hashes.insert(ConfigHash(TestConfig(60)));
  EXPECT_EQ(hashes.size(), 5u);
}

// ---- Round trips ------------------------------------------------------------------------------

TEST(TuningStoreTest, InMemoryRoundTrip) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(store->schema_version(), kDbSchemaVersion);
  EXPECT_EQ(store->path(), ":memory:");
  const Written w = WriteOneTune(*store);
  ExpectTuneReadsBack(*store, w);
}

TEST(TuningStoreTest, MachinesAreUpsertedByFingerprintAndKeepTheirPeaks) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok());
  auto first = store->UpsertMachine(TestMachine(), nlohmann::json{{"peak", 1.0}});
  ASSERT_TRUE(first.ok());
  // Re-registering without peaks (a tune that skipped the microbenchmark) keeps them.
  auto again = store->UpsertMachine(TestMachine(), nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  auto other = store->UpsertMachine(TestMachine(/*model=*/2), nullptr);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *first);

  auto machines = store->Machines();
  ASSERT_TRUE(machines.ok());
  ASSERT_EQ(machines->size(), 2u);
  EXPECT_EQ((*machines)[0].id, *first);
  EXPECT_EQ((*machines)[0].peaks, (nlohmann::json{{"peak", 1.0}}));
  EXPECT_EQ((*machines)[1].fingerprint, TestMachine(2).fingerprint);
  EXPECT_TRUE((*machines)[1].peaks.is_null());

  auto updated = store->UpsertMachine(TestMachine(), nlohmann::json{{"peak", 2.0}});
  ASSERT_TRUE(updated.ok());
  auto found = store->FindMachine(TestMachine().fingerprint);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->peaks, (nlohmann::json{{"peak", 2.0}}));
  auto missing = store->FindMachine("0000000000000000");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST(TuningStoreTest, ProblemsAreKeyedByEveryField) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok());
  auto base = store->UpsertProblem(TestProblem());
  ASSERT_TRUE(base.ok());
  auto same = store->UpsertProblem(TestProblem());
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, *base);
  std::set<std::int64_t> ids = {*base};
  Problem p = TestProblem();
  p.dtype = DType::kF32;
  ids.insert(*store->UpsertProblem(p));
  p = TestProblem();
  p.layout = Layout::kRowMajor;
  ids.insert(*store->UpsertProblem(p));
  ids.insert(*store->UpsertProblem(TestProblem(128, Trans::kYes)));
  ids.insert(*store->UpsertProblem(TestProblem(129)));
  p = TestProblem();
  p.threads = 1;
  ids.insert(*store->UpsertProblem(p));
  p = TestProblem();
  p.form = CallForm::kPackedB;
  ids.insert(*store->UpsertProblem(p));
  EXPECT_EQ(ids.size(), 7u);
  auto packed_id = store->FindProblem(p);
  ASSERT_TRUE(packed_id.ok() && packed_id->has_value());
  auto plain_id = store->FindProblem(TestProblem());
  ASSERT_TRUE(plain_id.ok() && plain_id->has_value());
  EXPECT_NE(**packed_id, **plain_id);

  Problem negative = TestProblem(-1);
  auto refused = store->UpsertProblem(negative);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

TEST(TuningStoreTest, WinnersAreReplacedAndListedPerMachineOrAll) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok());
  const Written w = WriteOneTune(*store);
  // A newer tune's winner replaces the old one on the same machine and problem.
  WinnerRecord newer = w.winner;
  newer.config = TestConfig(60);
  newer.gflops = 20.0;
  ASSERT_TRUE(store->SetWinner(w.machine_id, w.problem_id, w.session_id, newer).ok());
  // Another machine with a winner for a transposed problem, without a session (merged in).
  auto other_machine = store->UpsertMachine(TestMachine(2), nullptr);
  ASSERT_TRUE(other_machine.ok());
  auto other_problem = store->UpsertProblem(TestProblem(128, Trans::kYes));
  ASSERT_TRUE(other_problem.ok());
  WinnerRecord merged = newer;
  merged.problem = TestProblem(128, Trans::kYes);
  ASSERT_TRUE(store->SetWinner(*other_machine, *other_problem, 0, merged).ok());

  auto mine = store->Winners(w.winner.fingerprint);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ((*mine)[0].config, TestConfig(60));
  EXPECT_EQ((*mine)[0].gflops, 20.0);

  auto all = store->Winners("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].fingerprint, TestMachine(2).fingerprint);
  EXPECT_EQ((*all)[1].problem, TestProblem(128, Trans::kYes));
  EXPECT_EQ((*all)[1].session_id, 0);

  // A winner for the same shape called with B packed beforehand is a winner of its own.
  Problem packed = w.winner.problem;
  packed.form = CallForm::kPackedB;
  auto packed_problem = store->UpsertProblem(packed);
  ASSERT_TRUE(packed_problem.ok());
  WinnerRecord packed_winner = w.winner;
  packed_winner.problem = packed;
  packed_winner.config = TestConfig(96);
  ASSERT_TRUE(store->SetWinner(w.machine_id, *packed_problem, w.session_id, packed_winner).ok());
  auto both = store->Winners(w.winner.fingerprint);
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].problem.form, CallForm::kPlain);
  EXPECT_EQ((*both)[0].config, TestConfig(60));
  EXPECT_EQ((*both)[1].problem, packed);
  EXPECT_EQ((*both)[1].config, TestConfig(96));

  // So is a winner for batches of the shape, one per batch count.
  for (std::int64_t count : {64, 8}) {
    Problem batch = w.winner.problem;
    batch.batch = count;
    auto batch_problem = store->UpsertProblem(batch);
    ASSERT_TRUE(batch_problem.ok());
    WinnerRecord batch_winner = w.winner;
    batch_winner.problem = batch;
    batch_winner.config = TestConfig(count == 64 ? 66 : 12);
    ASSERT_TRUE(store->SetWinner(w.machine_id, *batch_problem, w.session_id, batch_winner).ok());
    auto found = store->FindProblem(batch);
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(*found, std::optional<std::int64_t>(*batch_problem));
  }
  auto all_forms = store->Winners(w.winner.fingerprint);
  ASSERT_TRUE(all_forms.ok());
  ASSERT_EQ(all_forms->size(), 4u);
  EXPECT_EQ((*all_forms)[2].problem.batch, 64);
  EXPECT_EQ((*all_forms)[2].config, TestConfig(66));
  EXPECT_EQ((*all_forms)[3].problem.batch, 8);
  EXPECT_EQ((*all_forms)[3].config, TestConfig(12));

  auto nobody = store->Winners("ffffffffffffffff");
  ASSERT_TRUE(nobody.ok());
  EXPECT_TRUE(nobody->empty());
}

TEST(TuningStoreTest, BadIdsAndStatusesAreErrorsNotRows) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok());
  const Written w = WriteOneTune(*store);
  Status unknown_session = store->RecordMeasurement(w.session_id + 100, w.machine_id,
                                                    w.problem_id, OkMeasurement(9));
  ASSERT_FALSE(unknown_session.ok());
  EXPECT_NE(unknown_session.error().message.find("FOREIGN KEY"), std::string::npos)
      << unknown_session.error().message;
  auto measurements = store->Measurements(w.machine_id, w.problem_id);
  ASSERT_TRUE(measurements.ok());
  EXPECT_EQ(measurements->size(), w.measurements.size());  // nothing half-written

  EXPECT_FALSE(store->BeginSession(w.machine_id + 100, SessionInfo{}).ok());
  Status bad_status = store->FinishSession(w.session_id, "exploded");
  ASSERT_FALSE(bad_status.ok());
  EXPECT_EQ(bad_status.error().code, ErrorCode::kInvalidArgument);
  Status no_session = store->FinishSession(w.session_id + 100, "finished");
  ASSERT_FALSE(no_session.ok());
  EXPECT_EQ(no_session.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(store->SetWinner(w.machine_id, w.problem_id + 100, w.session_id, w.winner).ok());
}

TEST(TuningStoreTest, FileRoundTripSurvivesReopening) {
  ScratchDir file_dir("file");
  const std::string path = file_dir.path() + "/tuned.db";
  Written w;
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store.ok()) << store.error().message;
    EXPECT_EQ(store->path(), path);
    w = WriteOneTune(*store);
    ExpectTuneReadsBack(*store, w);
  }
  EXPECT_EQ(QueryInt(path, "PRAGMA application_id"), kMmtuneApplicationId);
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kDbSchemaVersion);
  EXPECT_EQ(QueryText(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(path, "SELECT status FROM sessions"), "finished");
  EXPECT_EQ(QueryText(path, "SELECT strategy || ' ' || budget_seconds || ' ' || max_evals || ' ' "
                            "|| command FROM sessions"),
            "random 2.5 40 mmtune tune --db x.db");
  EXPECT_EQ(static_cast<std::uint64_t>(QueryInt(path, "SELECT seed FROM sessions")),
            0xfedcba9876543210ull);
  EXPECT_NE(QueryText(path, "SELECT finished_at FROM sessions"), "<null>");
  EXPECT_EQ(QueryText(path, "SELECT git_revision FROM sessions"), "abc123def456");
  EXPECT_EQ(QueryText(path, "SELECT trans || dtype || layout FROM problems"), "NNf64col");
  // The failed and the passing measurement share no config; the confirm re-measurement does.
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM configs"), 3);

  auto reopened = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  ExpectTuneReadsBack(*reopened, w);
  auto read_only = TuningStore::Open(path, DbOpenMode::kReadOnly);
  ASSERT_TRUE(read_only.ok()) << read_only.error().message;
  EXPECT_EQ(read_only->schema_version(), kDbSchemaVersion);
  ExpectTuneReadsBack(*read_only, w);
}

// tests/data/schema_v1.db was written by the first schema's mmtune (`tune --shapes 8x8x8,1x16x16
// --threads 1`, then the same for bf16 8x8x8). Every later build must open it, migrating it in
// read-write mode, without losing a row; a read-only open reads it as it is.
TEST(TuningStoreTest, AFileOfTheFirstSchemaOpensWithEveryRow) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  ScratchDir scratch("schema_v1");
  const std::string path = scratch.path() + "/v1.db";
  std::filesystem::copy_file(MMTUNE_TEST_DATA_DIR "/schema_v1.db", path);
  ASSERT_EQ(QueryInt(path, "PRAGMA user_version"), 1);
  // Version 4 rebuilds the problems table: every id must survive, as measurements and winners
  // point at them.
  const std::int64_t id_sum = QueryInt(path, "SELECT sum(id * id) FROM problems");
  std::map<std::string, std::int64_t> rows;
  for (const char* table : {"machines", "sessions", "problems", "configs", "measurements",
                            "winners"}) {
    rows[table] = QueryInt(path, std::string("SELECT count(*) FROM ") + table);
    EXPECT_GT(rows[table], 0) << table;
  }

  for (DbOpenMode mode : {DbOpenMode::kReadOnly, DbOpenMode::kReadWrite}) {
    SCOPED_TRACE(mode == DbOpenMode::kReadOnly ? "read-only" : "read-write");
    auto store = TuningStore::Open(path, mode);
    ASSERT_TRUE(store.ok()) << store.error().message;
    // Read-only reads the file as it is; read-write migrates it.
    EXPECT_EQ(store->schema_version(), mode == DbOpenMode::kReadOnly ? 1 : kDbSchemaVersion);
    auto ranges = store->ShapeRanges("");
    ASSERT_TRUE(ranges.ok()) << ranges.error().message;
    EXPECT_TRUE(ranges->empty()) << "the first schema has no shape ranges";
    auto validations = store->RangeValidations("");
    ASSERT_TRUE(validations.ok()) << validations.error().message;
    EXPECT_TRUE(validations->empty()) << "the first schema has no range validations";
    auto winners = store->Winners("");
    ASSERT_TRUE(winners.ok()) << winners.error().message;
    ASSERT_EQ(winners->size(), 3u);
    std::set<std::string> problems;
    for (const WinnerRecord& winner : *winners) {
      problems.insert(winner.problem.ToString());
      EXPECT_TRUE(winner.config.Validate(winner.problem, *DetectHostMachine()).ok())
          << winner.config.ToString();
      EXPECT_GT(winner.gflops, 0.0);
      EXPECT_EQ(winner.problem.form, CallForm::kPlain);
    }
    EXPECT_EQ(problems.size(), 3u);
    auto sessions = store->Sessions();
    ASSERT_TRUE(sessions.ok());
    ASSERT_EQ(sessions->size(), 2u);
    for (const SessionRecord& session : *sessions) EXPECT_EQ(session.status, "finished");
    auto machines = store->Machines();
    ASSERT_TRUE(machines.ok());
    ASSERT_EQ(machines->size(), 1u);
    auto problem_id = store->FindProblem(winners->front().problem);
    ASSERT_TRUE(problem_id.ok() && problem_id->has_value());
    auto measurements = store->Measurements(machines->front().id, **problem_id);
    ASSERT_TRUE(measurements.ok());
    EXPECT_FALSE(measurements->empty());
  }
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kDbSchemaVersion);
  for (const auto& [table, count] : rows) {
    EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM " + table), count) << table << " lost rows";
  }
  EXPECT_EQ(QueryInt(path, "SELECT sum(id * id) FROM problems"), id_sum);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM problems WHERE form = 'plain'"),
            rows["problems"]);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

// The migration turns foreign keys off around its table rebuild; the store's connection must
// enforce them again afterwards.
TEST(TuningStoreTest, AMigratedFileStillEnforcesForeignKeys) {
  ScratchDir scratch("migrated_keys");
  const std::string path = scratch.path() + "/v1.db";
  std::filesystem::copy_file(MMTUNE_TEST_DATA_DIR "/schema_v1.db", path);
  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto machines = store->Machines();
  ASSERT_TRUE(machines.ok() && !machines->empty());
  auto winners = store->Winners("");
  ASSERT_TRUE(winners.ok() && !winners->empty());
  const std::int64_t missing_problem = QueryInt(path, "SELECT max(id) + 1 FROM problems");
  Status refused = store->SetWinner(machines->front().id, missing_problem, 0, winners->front());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("FOREIGN KEY"), std::string::npos)
      << refused.error().message;
}

// A copy of tests/data/schema_v1.db in `scratch`, opened read-write (so migrated), with its one
// machine.
struct MigratedV1 {
  std::string path;
  TuningStore store;
  MachineRecord machine;
};
std::optional<MigratedV1> OpenMigratedV1(const ScratchDir& scratch) {
  const std::string path = scratch.path() + "/v1.db";
  std::filesystem::copy_file(MMTUNE_TEST_DATA_DIR "/schema_v1.db", path);
  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  EXPECT_TRUE(store.ok()) << store.error().message;
  if (!store.ok()) return std::nullopt;
  auto machines = store->Machines();
  EXPECT_TRUE(machines.ok() && machines->size() == 1u);
  if (!machines.ok() || machines->size() != 1u) return std::nullopt;
  return MigratedV1{path, std::move(*store), machines->front()};
}

// Shape ranges: stored per machine, kind, threads and range; recording one again with another
// bucket policy updates it; bad ones are refused; a migrated file of the first schema takes them.
TEST(TuningStoreTest, ShapeRangesRoundTripAndUpdateTheirPolicy) {
  ScratchDir scratch("ranges");
  auto v1 = OpenMigratedV1(scratch);
  ASSERT_TRUE(v1.has_value());
  const std::string& path = v1->path;
  auto* store = &v1->store;
  const MachineRecord& machine = v1->machine;
  auto range = ParseShapeRange("1..2048x4096x11008");
  ASSERT_TRUE(range.ok());
  ShapeRangeRecord record{machine.fingerprint, DType::kBF16, Layout::kColMajor, Trans::kYes,
                          Trans::kNo, 2, *range, BucketPolicy{}, ""};
  ASSERT_TRUE(store->RecordShapeRange(machine.id, record).ok());
  ShapeRangeRecord other = record;
  other.threads = 1;
  ASSERT_TRUE(store->RecordShapeRange(machine.id, other).ok());
  record.buckets = BucketPolicy{BucketPolicy::Kind::kStep, 128};
  ASSERT_TRUE(store->RecordShapeRange(machine.id, record).ok());

  auto ranges = store->ShapeRanges(machine.fingerprint);
  ASSERT_TRUE(ranges.ok()) << ranges.error().message;
  ASSERT_EQ(ranges->size(), 2u);
  const ShapeRangeRecord& two = (*ranges)[0].threads == 2 ? (*ranges)[0] : (*ranges)[1];
  EXPECT_EQ(two.fingerprint, machine.fingerprint);
  EXPECT_EQ(two.dtype, DType::kBF16);
  EXPECT_EQ(two.layout, Layout::kColMajor);
  EXPECT_EQ(two.trans_a, Trans::kYes);
  EXPECT_EQ(two.trans_b, Trans::kNo);
  EXPECT_EQ(two.range, *range);
  EXPECT_EQ(two.buckets, (BucketPolicy{BucketPolicy::Kind::kStep, 128}));
  EXPECT_FALSE(two.updated_at.empty());
  EXPECT_EQ(store->ShapeRanges("0000000000000000")->size(), 0u);
  EXPECT_EQ(store->ShapeRanges("")->size(), 2u);

  ShapeRangeRecord bad = record;
  bad.range.m = DimRange{9, 4};
  EXPECT_FALSE(store->RecordShapeRange(machine.id, bad).ok());
  bad = record;
  bad.range.k = DimRange{0, 4};
  EXPECT_FALSE(store->RecordShapeRange(machine.id, bad).ok());
  bad = record;
  bad.threads = 0;
  EXPECT_FALSE(store->RecordShapeRange(machine.id, bad).ok());
  bad = record;
  bad.buckets.step = 0;
  EXPECT_FALSE(store->RecordShapeRange(machine.id, bad).ok());
  EXPECT_EQ(store->ShapeRanges("")->size(), 2u);

  // A row another tool wrote badly is skipped when read, not fatal.
  ExecSql(path, "INSERT INTO shape_ranges VALUES (" + std::to_string(machine.id) +
                    ", 'f32', 'row', 'NN', 1, 5, 2, 1, 1, 1, 1, 'pow2', 'x')");
  EXPECT_EQ(store->ShapeRanges("")->size(), 2u);
  // So is one whose time is a blob, not text.
  ExecSql(path, "INSERT INTO shape_ranges VALUES (" + std::to_string(machine.id) +
                    ", 'f32', 'row', 'NN', 1, 1, 2, 1, 1, 1, 1, 'pow2', X'05')");
  EXPECT_EQ(store->ShapeRanges("")->size(), 2u);
}

// Range validations (`tune --validate N`): appended per held-out shape, read back in order with
// every field; a shape outside its range, a bad speed or a bad range is refused; a migrated file
// of the first schema takes them; an unreadable row is skipped when read.
TEST(TuningStoreTest, RangeValidationsRoundTripInOrder) {
  ScratchDir scratch("validations");
  auto v1 = OpenMigratedV1(scratch);
  ASSERT_TRUE(v1.has_value());
  const std::string& path = v1->path;
  auto* store = &v1->store;
  const MachineRecord& machine = v1->machine;
  auto sessions = store->Sessions();
  ASSERT_TRUE(sessions.ok() && !sessions->empty());
  RangeValidationRecord record;
  record.range = ShapeRangeRecord{machine.fingerprint, DType::kBF16, Layout::kColMajor,
                                  Trans::kNo, Trans::kYes, 2, *ParseShapeRange("1..2048x64x32"),
                                  BucketPolicy{BucketPolicy::Kind::kStep, 64}, ""};
  record.shape = Shape{37, 64, 32};
  record.runtime_tier = "bucket";
  record.own_gflops = 100.0;
  record.runtime_gflops = 95.5;
  record.nearest_gflops = 90.25;
  record.default_gflops = 80.125;
  record.padded_gflops = 70.5;
  record.own_tune_seconds = 12.5;
  record.session_id = sessions->back().id;
  ASSERT_TRUE(store->RecordRangeValidation(machine.id, record).ok());
  RangeValidationRecord second = record;
  second.shape = Shape{1000, 64, 32};
  second.session_id = 0;  // none
  second.runtime_tier = "nearest";
  second.padded_gflops = 0.0;  // not measured
  ASSERT_TRUE(store->RecordRangeValidation(machine.id, second).ok());

  auto read = store->RangeValidations(machine.fingerprint);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  const RangeValidationRecord& first = (*read)[0];
  EXPECT_EQ(first.range.fingerprint, machine.fingerprint);
  EXPECT_EQ(first.range.dtype, DType::kBF16);
  EXPECT_EQ(first.range.layout, Layout::kColMajor);
  EXPECT_EQ(first.range.trans_a, Trans::kNo);
  EXPECT_EQ(first.range.trans_b, Trans::kYes);
  EXPECT_EQ(first.range.threads, 2);
  EXPECT_EQ(first.range.range, record.range.range);
  EXPECT_EQ(first.range.buckets, record.range.buckets);
  EXPECT_EQ(first.shape.m, 37);
  EXPECT_EQ(first.shape.n, 64);
  EXPECT_EQ(first.shape.k, 32);
  EXPECT_EQ(first.runtime_tier, "bucket");
  EXPECT_DOUBLE_EQ(first.own_gflops, 100.0);
  EXPECT_DOUBLE_EQ(first.runtime_gflops, 95.5);
  EXPECT_DOUBLE_EQ(first.nearest_gflops, 90.25);
  EXPECT_DOUBLE_EQ(first.default_gflops, 80.125);
  EXPECT_DOUBLE_EQ(first.padded_gflops, 70.5);
  EXPECT_DOUBLE_EQ(first.own_tune_seconds, 12.5);
  EXPECT_EQ(first.session_id, record.session_id);
  EXPECT_FALSE(first.measured_at.empty());
  EXPECT_EQ((*read)[1].shape.m, 1000);
  EXPECT_EQ((*read)[1].session_id, 0);
  EXPECT_EQ((*read)[1].runtime_tier, "nearest");
  EXPECT_EQ((*read)[1].padded_gflops, 0.0);
  EXPECT_EQ(QueryInt(path, "SELECT COUNT(*) FROM range_validations WHERE padded_gflops IS NULL"),
            1);
  EXPECT_EQ(store->RangeValidations("0000000000000000")->size(), 0u);

  RangeValidationRecord bad = record;
  bad.shape = Shape{37, 65, 32};  // outside the range
  EXPECT_EQ(store->RecordRangeValidation(machine.id, bad).error().code,
            ErrorCode::kInvalidArgument);
  bad = record;
  bad.runtime_gflops = -1.0;
  EXPECT_FALSE(store->RecordRangeValidation(machine.id, bad).ok());
  bad = record;
  bad.own_gflops = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(store->RecordRangeValidation(machine.id, bad).ok());
  bad = record;
  bad.padded_gflops = -2.0;
  EXPECT_FALSE(store->RecordRangeValidation(machine.id, bad).ok());
  bad = record;
  bad.runtime_tier.clear();
  EXPECT_FALSE(store->RecordRangeValidation(machine.id, bad).ok());
  bad = record;
  bad.range.threads = 0;
  EXPECT_FALSE(store->RecordRangeValidation(machine.id, bad).ok());
  EXPECT_EQ(store->RangeValidations("")->size(), 2u);

  // A row another tool wrote badly (a shape outside its range) is skipped when read.
  ExecSql(path, "INSERT INTO range_validations (machine_id, dtype, layout, trans, threads, m_lo, "
                "m_hi, n_lo, n_hi, k_lo, k_hi, buckets, m, n, k, runtime_tier, own_gflops, "
                "runtime_gflops, nearest_gflops, default_gflops, own_tune_seconds, measured_at) "
                "VALUES (" + std::to_string(machine.id) +
                    ", 'f32', 'row', 'NN', 1, 1, 8, 4, 4, 4, 4, 'pow2', 9, 4, 4, 'bucket', 1, 1, "
                    "1, 1, 1, 'x')");
  EXPECT_EQ(store->RangeValidations("")->size(), 2u);
}

TEST(TuningStoreTest, ReadOnlyModeNeverWrites) {
  ScratchDir scratch("read_only_mode");
  const std::string& dir = scratch.path();
  const std::string missing = dir + "/missing.db";
  auto none = TuningStore::Open(missing, DbOpenMode::kReadOnly);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(missing));

  const std::string path = dir + "/tuned.db";
  Written w;
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store.ok());
    w = WriteOneTune(*store);
  }
  const std::string before = Slurp(path);
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadOnly);
    ASSERT_TRUE(store.ok()) << store.error().message;
    Status write = store->RecordMeasurement(w.session_id, w.machine_id, w.problem_id,
                                            OkMeasurement(5));
    ASSERT_FALSE(write.ok());
    EXPECT_EQ(write.error().code, ErrorCode::kIo) << write.error().message;
  }
  EXPECT_EQ(Slurp(path), before);
}

// ---- Files that are not ours --------------------------------------------------------------------

TEST(TuningStoreTest, EmptyFileBecomesANewDb) {
  ScratchDir empty_dir("empty");
  const std::string path = empty_dir.path() + "/empty.db";
  { std::ofstream touch(path); }
  ASSERT_EQ(std::filesystem::file_size(path), 0u);
  auto read_only = TuningStore::Open(path, DbOpenMode::kReadOnly);
  ASSERT_FALSE(read_only.ok());
  EXPECT_EQ(read_only.error().code, ErrorCode::kCorrupt);
  EXPECT_EQ(std::filesystem::file_size(path), 0u);

  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(store->schema_version(), kDbSchemaVersion);
  const Written w = WriteOneTune(*store);
  ExpectTuneReadsBack(*store, w);
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), kDbSchemaVersion);
  EXPECT_EQ(QueryText(path, "PRAGMA integrity_check"), "ok");
}

struct RefusedFile {
  const char* name;
  ErrorCode code;
  const char* message_part;
};

void ExpectRefusedAndUntouched(const std::string& path, const RefusedFile& expected) {
  SCOPED_TRACE(expected.name);
  const std::string before = Slurp(path);
  ASSERT_FALSE(before.empty());
  for (DbOpenMode mode : {DbOpenMode::kReadWrite, DbOpenMode::kReadOnly}) {
    auto store = TuningStore::Open(path, mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().code, expected.code) << store.error().message;
    EXPECT_NE(store.error().message.find(expected.message_part), std::string::npos)
        << store.error().message;
    EXPECT_NE(store.error().message.find(path), std::string::npos) << store.error().message;
    EXPECT_EQ(store.error().message.find('\n'), std::string::npos) << store.error().message;
    EXPECT_EQ(Slurp(path), before);
  }
  // Reading a WAL-mode file makes SQLite create an empty `-wal` beside it; it must hold nothing.
  if (std::filesystem::exists(path + "-wal")) {
    EXPECT_EQ(std::filesystem::file_size(path + "-wal"), 0u);
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(TuningStoreTest, NewerSchemaIsRefusedAndUntouched) {
  ScratchDir newer_dir("newer");
  const std::string path = newer_dir.path() + "/newer.db";
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store.ok());
    (void)WriteOneTune(*store);
  }
  ExecSql(path, "PRAGMA user_version = 99");
  const std::string message =
      "schema version 99 is newer than this mmtune supports (" + std::to_string(kDbSchemaVersion) +
      ")";
  ExpectRefusedAndUntouched(path, {"newer", ErrorCode::kUnsupported, message.c_str()});
}

TEST(TuningStoreTest, TextFileIsRefusedAndUntouched) {
  ScratchDir text_dir("text");
  const std::string path = text_dir.path() + "/notes.db";
  { std::ofstream(path) << "not a database, just notes\n"; }
  ExpectRefusedAndUntouched(path, {"text", ErrorCode::kCorrupt, "is not an SQLite database"});

  // Bigger than a page, so SQLite reads a whole header's worth of garbage.
  ScratchDir text_big_dir("text_big");
  const std::string big = text_big_dir.path() + "/big.db";
  { std::ofstream(big) << std::string(8192, 'x'); }
  ExpectRefusedAndUntouched(big, {"big text", ErrorCode::kCorrupt, "is not an SQLite database"});
}

TEST(TuningStoreTest, ForeignSqliteDbIsRefusedAndUntouched) {
  ScratchDir foreign_dir("foreign");
  const std::string path = foreign_dir.path() + "/foreign.db";
  ExecSql(path, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');");
  ExpectRefusedAndUntouched(path, {"foreign", ErrorCode::kCorrupt, "not an mmtune database"});

  // Another application's id without any table is foreign too.
  ScratchDir foreign_id_dir("foreign_id");
  const std::string marked = foreign_id_dir.path() + "/marked.db";
  ExecSql(marked, "PRAGMA application_id = 1234; PRAGMA user_version = 1;");
  ExpectRefusedAndUntouched(marked, {"marked", ErrorCode::kCorrupt, "not an mmtune database"});
}

TEST(TuningStoreTest, ReadOnlyFileIsAnIoErrorAndUntouched) {
  ScratchDir scratch("read_only_file");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/tuned.db";
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store.ok());
    (void)WriteOneTune(*store);
  }
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  if (::access(path.c_str(), W_OK) == 0) {
    GTEST_SKIP() << "this user (root?) may write to a 0444 file";
  }
  const std::string before = Slurp(path);
  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kIo);
  EXPECT_NE(store.error().message.find(path + " is read-only"), std::string::npos)
      << store.error().message;
  EXPECT_EQ(Slurp(path), before);
  // Reading is still fine.
  auto read_only = TuningStore::Open(path, DbOpenMode::kReadOnly);
  ASSERT_TRUE(read_only.ok()) << read_only.error().message;

  // A read-only directory cannot hold the WAL files: refused before anything is written too.
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  auto in_read_only_dir = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_FALSE(in_read_only_dir.ok());
  EXPECT_EQ(in_read_only_dir.error().code, ErrorCode::kIo);
  auto create_there = TuningStore::Open(dir + "/new.db", DbOpenMode::kReadWrite);
  EXPECT_FALSE(create_there.ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/new.db"));
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  EXPECT_EQ(Slurp(path), before);
}

TEST(TuningStoreTest, DirectoryAndMissingDirectoryAreErrors) {
  ScratchDir scratch("directory");
  const std::string& dir = scratch.path();
  for (DbOpenMode mode : {DbOpenMode::kReadWrite, DbOpenMode::kReadOnly}) {
    auto store = TuningStore::Open(dir, mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().code, ErrorCode::kIo);
    EXPECT_NE(store.error().message.find(dir), std::string::npos) << store.error().message;
  }
  auto nowhere = TuningStore::Open(dir + "/no/such/dir/x.db", DbOpenMode::kReadWrite);
  ASSERT_FALSE(nowhere.ok());
  EXPECT_EQ(nowhere.error().code, ErrorCode::kNotFound);
  auto empty = TuningStore::Open("", DbOpenMode::kReadWrite);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
}

// ---- Hostile content --------------------------------------------------------------------------

TEST(TuningStoreTest, HostileRowsAreSkippedOrReported) {
  ScratchDir hostile_dir("hostile");
  const std::string path = hostile_dir.path() + "/hostile.db";
  Written w;
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store.ok());
    w = WriteOneTune(*store);
  }
  const std::string ids = std::to_string(w.session_id) + ", " + std::to_string(w.machine_id) +
                          ", " + std::to_string(w.problem_id);
  const std::string row_tail = ", 'ok', 'search', '', 1e-4, 1e-4, 0, 3, 9.0, 7, 'now')";
  ExecSql(path,
          "INSERT INTO configs (id, hash, json) VALUES (100, 'bad1', '{not json'), "
          "(101, 'bad2', '{\"family\": 3}'), (102, 'bad3', '[1, 2, 3]'), "
          "(103, 'bad4', '{\"family\": \"packed\", \"mr\": \"six\"}'), "
          "(104, 'bad5', '" + std::string(2000, '[') + "');"
          "INSERT INTO measurements (session_id, machine_id, problem_id, config_id, status, "
          "stage, error, median_seconds, min_seconds, mad_seconds, samples, gflops, eval_index, "
          "measured_at) VALUES "
          "(" + ids + ", 100" + row_tail + ", (" + ids + ", 101" + row_tail +
          ", (" + ids + ", 102" + row_tail + ", (" + ids + ", 103" + row_tail +
          ", (" + ids + ", 104" + row_tail +
          ", (" + ids + ", 999" + row_tail +  // a config that does not exist
          ", (" + ids + ", 1, 'ok', 'bogus-stage', '', 1, 1, 0, 3, 9.0, 7, 'now')"
          ", (" + ids + ", 1, 'ok', 'search', '', 'fast', 1, 0, 3, 9.0, 7, 'now')"
          ", (" + ids + ", 1, 'ok', 'search', x'ff00', 1, 1, 0, 3, 9.0, 7, 'now')"
          ", (" + ids + ", 1, 'ok', 'search', '', 1, 1, 0, 99999999999, 9.0, 7, 'now');"
          "UPDATE winners SET config_id = 100;"
          "INSERT INTO problems (id, dtype, layout, trans, m, n, k, threads, form) "
          "VALUES (50, 'f16', 'row', 'NN', 1, 1, 1, 1, 'plain'), "
          "(51, 'f32', 'row', 'XY', 1, 1, 1, 1, 'plain'), "
          "(52, 'f32', 'row', 'NN', 1, 1, 1, 1, 'packed-z');"
          "INSERT INTO winners VALUES (" + std::to_string(w.machine_id) +
          ", 50, 1, 1, 1, 1, NULL, 'now'), (" + std::to_string(w.machine_id) +
          ", 51, 1, 1, 1, 1, NULL, 'now'), (" + std::to_string(w.machine_id) +
          ", 52, 1, 1, 1, 1, NULL, 'now');"
          "INSERT INTO machines (fingerprint, fingerprint_basis, description, peaks, created_at, "
          "updated_at) VALUES ('badbadbadbadbad0', 'x', '{broken', NULL, 'now', 'now');");

  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto measurements = store->Measurements(w.machine_id, w.problem_id);
  ASSERT_TRUE(measurements.ok()) << measurements.error().message;
  ASSERT_EQ(measurements->size(), w.measurements.size());
  for (std::size_t i = 0; i < w.measurements.size(); ++i) {
    ExpectSameMeasurement((*measurements)[i], w.measurements[i], w.session_id);
  }

  auto winners = store->Winners("");
  ASSERT_TRUE(winners.ok()) << winners.error().message;
  EXPECT_TRUE(winners->empty());  // the real winner's config is now garbage, the others too

  auto machines = store->Machines();
  ASSERT_TRUE(machines.ok());
  ASSERT_EQ(machines->size(), 1u);
  EXPECT_EQ((*machines)[0].fingerprint, TestMachine().fingerprint);
  auto broken = store->FindMachine("badbadbadbadbad0");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, ErrorCode::kCorrupt);

  // Writing still works; a config row altered to hold another config is refused, not trusted.
  EXPECT_TRUE(store->RecordMeasurement(w.session_id, w.machine_id, w.problem_id,
                                       OkMeasurement(8, 480))
                  .ok());
  ExecSql(path, "UPDATE configs SET json = '{}' WHERE hash = '" + ConfigHash(TestConfig(480)) +
                    "'");
  Status altered = store->RecordMeasurement(w.session_id, w.machine_id, w.problem_id,
                                            OkMeasurement(9, 480));
  ASSERT_FALSE(altered.ok());
  EXPECT_EQ(altered.error().code, ErrorCode::kCorrupt);
}

// ---- Concurrency ------------------------------------------------------------------------------

// Each child process opens the file itself (so they race to create the schema too), then commits
// its measurements one at a time as fast as it can. Exit code 0 means every call succeeded.
[[noreturn]] void WriterProcess(const std::string& path, int writer, int count) {
  auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
  if (!store) {
    std::fprintf(stderr, "writer %d: %s\n", writer, store.error().message.c_str());
    ::_exit(10);
  }
  auto machine_id = store->UpsertMachine(TestMachine(), nullptr);
  auto problem_id = store->UpsertProblem(TestProblem());
  if (!machine_id || !problem_id) ::_exit(11);
  auto session_id = store->BeginSession(*machine_id, SessionInfo{"0.1.0", "", "random", 0, 0,
                                                                 static_cast<std::uint64_t>(
                                                                     writer), "writer"});
  if (!session_id) ::_exit(12);
  for (int i = 0; i < count; ++i) {
    // A few distinct configs per writer, shared between writers, to race the config upsert.
    if (!store->RecordMeasurement(*session_id, *machine_id, *problem_id,
                                  OkMeasurement(writer * count + i, 24 * (1 + i % 5)))) {
      ::_exit(13);
    }
  }
  if (!store->FinishSession(*session_id, "finished")) ::_exit(14);
  ::_exit(0);
}

TEST(TuningStoreTest, ConcurrentWriterProcessesLoseNothing) {
  ScratchDir concurrent_dir("concurrent");
  const std::string path = concurrent_dir.path() + "/shared.db";
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 200;
  std::vector<pid_t> children;
  for (int writer = 0; writer < kWriters; ++writer) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) WriterProcess(path, writer, kPerWriter);
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "writer " << child << " failed";
  }

  auto store = TuningStore::Open(path, DbOpenMode::kReadOnly);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto machine = store->FindMachine(TestMachine().fingerprint);
  ASSERT_TRUE(machine.ok() && machine->has_value());
  auto machines = store->Machines();
  ASSERT_TRUE(machines.ok());
  EXPECT_EQ(machines->size(), 1u);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM problems"), 1);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM configs"), 5);
  EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM sessions WHERE status = 'finished'"), kWriters);
  auto measurements = store->Measurements((*machine)->id, 1);
  ASSERT_TRUE(measurements.ok());
  ASSERT_EQ(measurements->size(), static_cast<std::size_t>(kWriters * kPerWriter));
  std::set<int> eval_indices;
  for (const MeasurementRecord& record : *measurements) eval_indices.insert(record.eval_index);
  EXPECT_EQ(eval_indices.size(), static_cast<std::size_t>(kWriters * kPerWriter));
  EXPECT_EQ(*eval_indices.begin(), 0);
  EXPECT_EQ(*eval_indices.rbegin(), kWriters * kPerWriter - 1);
  EXPECT_EQ(QueryText(path, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(QueryText(path, "PRAGMA foreign_key_check"), "<no rows>");
}

}  // namespace
}  // namespace mmtune
