// `mmtune tune` as users run it: bad input is refused before any file is touched, foreign and
// newer files are left byte-identical, a real tune stores winners, a tune killed with SIGKILL
// resumes without re-running what it measured, and two tunes can share one DB.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_test_util.h"

namespace {

using mmtune::testing::ExpectOneLineError;
using mmtune::testing::FreshTestDir;
using mmtune::testing::Lines;
using mmtune::testing::RunMmtune;
using mmtune::testing::RunResult;
using mmtune::testing::Slurp;

// Runs one SQL query that returns a single integer; -1 on any error.
std::int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::int64_t value = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      value = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return value;
}

std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  std::string result = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return result;
}

void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(TuneCliTest, BadInputIsRefusedBeforeTheDbIsCreated) {
  const std::string dir = FreshTestDir("tune_bad_input");
  const std::string db = dir + "/never.db";
  for (const char* args :
       {"--shapes 12x", "--shapes -1x2x3", "--shapes axbxc", "--shapes 1x1x99999999999",
        "--shapes 8x8x8,", "--dtype f16", "--preset nope", "--strategy telepathy",
        "--trans XY", "--threads 0", "--threads 99999", "--threads two", "--threads 1,",
        "--threads auto,1", "--threads 1,0", "--threads ,2", "--shard 3/2",
        "--shard x", "--shapes 8x8x8 --preset quick", "--budget -1", "--evals -3",
        "--layout diagonal", "--shapes-file /no/such/file.csv", "--bogus",
        "--shapes 8x8x8 --dtype int4", "--shapes 0x64x64", "--shapes 8x8x8,64x0x64",
        "--shapes 64x64x0", "--shapes 0..8x8x8", "--shapes 8..4x8x8", "--shapes 1..x8x8",
        "--shapes 1..99999999999x8x8", "--shapes 1..8x8x8 --buckets pow3",
        "--shapes 1..8x8x8 --buckets step:0", "--shapes 1..100000x8x8 --buckets step:1",
        "--shapes 1..8x8x8 --validate -1", "--shapes 1..8x8x8 --validate x",
        "--shapes 1..8x8x8 --validate 1001",
        "--shapes 8x8x8 --validate 2", "--shapes 1..8x8x8 --validate 2 --shard 0/2",
        "--from-record /no/such.csv --validate 1", "--shapes 1..64x64x64 --packed-b",
        "--from-record /no/such.csv --packed-b", "--shapes 8x8x8 --batch 0",
        "--shapes 8x8x8 --batch -2", "--shapes 8x8x8 --batch x",
        "--shapes 8x8x8 --batch 4 --packed-b", "--shapes 1..64x64x64 --batch 4",
        "--from-record /no/such.csv --batch 4"}) {
    SCOPED_TRACE(args);
    const RunResult r = RunMmtune("tune --db '" + db + "' " + args);
    ExpectOneLineError(r, 2);
    EXPECT_FALSE(std::filesystem::exists(db));
  }
}

// --threads: a list tunes each shape once per count; auto (the default) tunes for what the
// runtime uses, here capped by MMTUNE_NUM_THREADS, as the runtime's own budget is.
TEST(TuneCliTest, ThreadListsAndAutoChooseTheProblemsThreads) {
  const std::string dir = FreshTestDir("tune_threads");
  const std::string listed = dir + "/listed.db";
  const RunResult list =
      RunMmtune("tune --db '" + listed + "' --shapes 8x8x8 --threads 1,all,1 --strategy model "
                "--budget 0");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const RunResult info = RunMmtune("info --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const int cores = nlohmann::json::parse(info.out).at("machine").at("topology").at("cores").get<int>();
  EXPECT_NE(list.out.find("f32 row NN 8x8x8 t1 "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("f32 row NN 8x8x8 t" + std::to_string(cores) + " "),
            std::string::npos) << list.out;
  // "1" twice is one problem; "all" is the cores.
  EXPECT_EQ(QueryInt(listed, "SELECT COUNT(*) FROM problems"), cores > 1 ? 2 : 1);
  EXPECT_EQ(QueryInt(listed, "SELECT MAX(threads) FROM problems"), cores);
  EXPECT_EQ(QueryInt(listed, "SELECT COUNT(*) FROM winners"), cores > 1 ? 2 : 1);

  const std::string automatic = dir + "/auto.db";
  const RunResult one = RunMmtune(
      "tune --db '" + automatic + "' --shapes 8x8x8 --strategy model --budget 0",
      "MMTUNE_NUM_THREADS=1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("f32 row NN 8x8x8 t1 "), std::string::npos) << one.out;
  EXPECT_EQ(QueryInt(automatic, "SELECT MAX(threads) FROM problems"), 1);
}

TEST(TuneCliTest, ForeignAndNewerFilesAreLeftUntouched) {
  const std::string dir = FreshTestDir("tune_foreign");
  const std::string text = dir + "/notes.db";
  { std::ofstream(text) << "not a database, just notes\n"; }
  const std::string foreign = dir + "/foreign.db";
  ExecSql(foreign, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');");
  const std::string newer = dir + "/newer.db";
  // A real mmtune DB from a real (tiny) tune, then marked as written by a future version.
  ASSERT_EQ(RunMmtune("tune --db '" + newer + "' --shapes 8x8x8 --strategy model --budget 0")
                .exit_code,
            0);
  ExecSql(newer, "PRAGMA user_version = 99;");
  for (const std::string& path : {text, foreign, newer}) {
    SCOPED_TRACE(path);
    const std::string before = Slurp(path);
    const RunResult r = RunMmtune("tune --db '" + path + "' --shapes 8x8x8 --budget 0");
    ExpectOneLineError(r, 1);
    EXPECT_EQ(Slurp(path), before);
  }
  EXPECT_NE(RunMmtune("tune --db '" + newer + "' --shapes 8x8x8").err.find("newer"),
            std::string::npos);
  const RunResult dir_as_db = RunMmtune("tune --db '" + dir + "' --shapes 8x8x8 --budget 0");
  ExpectOneLineError(dir_as_db, 1);
}

TEST(TuneCliTest, ReadOnlyDbIsAnErrorAndUnchanged) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  const std::string dir = FreshTestDir("tune_read_only");
  const std::string db = dir + "/tuned.db";
  ASSERT_EQ(RunMmtune("tune --db '" + db + "' --shapes 8x8x8 --strategy model --budget 0")
                .exit_code,
            0);
  ::chmod(db.c_str(), 0444);
  const std::string before = Slurp(db);
  ExpectOneLineError(RunMmtune("tune --db '" + db + "' --shapes 9x9x9 --budget 0"), 1);
  EXPECT_EQ(Slurp(db), before);
}

// bf16 and s8 go through the same pipeline: candidates verified and timed, winners stored per
// dtype, and lookup finds them as exact winners.
TEST(TuneCliTest, LowPrecisionDtypesAreTunedAndLookedUp) {
  const std::string dir = FreshTestDir("tune_lowp");
  const std::string db = dir + "/tuned.db";
  for (const char* dtype : {"bf16", "s8"}) {
    SCOPED_TRACE(dtype);
    const RunResult r = RunMmtune("tune --db '" + db + "' --dtype " + dtype +
                                  " --shapes 40x56x72 --trans TN --strategy random --evals 6 "
                                  "--budget 0 --seed 2 --threads 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string(dtype) + " row TN 40x56x72 t1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("packed"), std::string::npos) << r.out;
    const RunResult found = RunMmtune("lookup --db '" + db + "' --dtype " + dtype +
                                      " --shape 40x56x72 --trans TN --threads 1");
    ASSERT_EQ(found.exit_code, 0) << found.err;
    EXPECT_NE(found.out.find("tier:    exact"), std::string::npos) << found.out;
  }
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM measurements WHERE status = 'failed'"), 0);
  EXPECT_GE(QueryInt(db, "SELECT COUNT(*) FROM measurements"), 2 * 6);
}

// `tune --packed-b` keeps its winners apart from the plain call's of the same shape; `lookup
// --packed-b` shows them, and the plain lookup still shows the plain winner.
TEST(TuneCliTest, PackedBWinnersAreStoredApartAndLookedUp) {
  const std::string dir = FreshTestDir("tune_packed_b");
  const std::string db = dir + "/tuned.db";
  for (const char* shapes_and_form : {"40x56x72,24x56x72", "40x56x72 --packed-b"}) {
    SCOPED_TRACE(shapes_and_form);
    const RunResult r = RunMmtune("tune --db '" + db + "' --dtype s8 --strategy random --evals 4 "
                                  "--budget 0 --seed 2 --threads 1 --shapes " +
                                  std::string(shapes_and_form));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 3);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM problems WHERE form = 'packed-b'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM measurements WHERE status = 'failed'"), 0);
  const std::string lookup = "lookup --db '" + db + "' --dtype s8 --shape 40x56x72 --threads 1";
  const RunResult weights = RunMmtune(lookup + " --packed-b");
  ASSERT_EQ(weights.exit_code, 0) << weights.err;
  EXPECT_NE(weights.out.find("s8 row NN 40x56x72 t1 packed-b\n  tier:    exact (tuned winner "
                             "of this problem)"),
            std::string::npos)
      << weights.out;
  const RunResult plain = RunMmtune(lookup);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("measured on s8 row NN 40x56x72 t1\n"), std::string::npos)
      << plain.out;
  // Weights of a shape tuned only plain run the plain winner, and say so.
  const RunResult borrowed = RunMmtune("lookup --db '" + db +
                                       "' --dtype s8 --shape 24x56x72 --threads 1 --packed-b");
  ASSERT_EQ(borrowed.exit_code, 0) << borrowed.err;
  EXPECT_NE(borrowed.out.find("tier:    exact (tuned winner of this shape called plain"),
            std::string::npos)
      << borrowed.out;
  EXPECT_NE(borrowed.out.find("measured on s8 row NN 24x56x72 t1\n"), std::string::npos)
      << borrowed.out;
}

// `tune --batch B` times batches of B and keeps their winners apart from a single call's;
// `lookup --batch B` shows them, and other counts and single calls do not run them.
TEST(TuneCliTest, BatchWinnersAreStoredApartAndLookedUp) {
  const std::string dir = FreshTestDir("tune_batch");
  const std::string db = dir + "/tuned.db";
  const RunResult r = RunMmtune("tune --db '" + db + "' --dtype bf16 --strategy random --evals 4 "
                                "--budget 0 --seed 2 --threads 1 --shapes 40x56x72 --batch 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bf16 row NN 40x56x72 t1 batch:8"), std::string::npos) << r.out;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM problems WHERE form = 'batch:8'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM measurements WHERE status = 'failed'"), 0);
  const std::string lookup = "lookup --db '" + db + "' --dtype bf16 --shape 40x56x72 --threads 1";
  const RunResult batch = RunMmtune(lookup + " --batch 8");
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.out.find("bf16 row NN 40x56x72 t1 batch:8\n  tier:    exact (tuned winner "
                           "of this problem)"),
            std::string::npos)
      << batch.out;
  for (const char* other : {" --batch 4", ""}) {
    const RunResult untuned = RunMmtune(lookup + other);
    ASSERT_EQ(untuned.exit_code, 0) << untuned.err;
    EXPECT_NE(untuned.out.find("tier:    default"), std::string::npos) << other << untuned.out;
  }
  for (const char* bad : {" --batch 0", " --batch 2 --packed-b", " --batch many"}) {
    ExpectOneLineError(RunMmtune(lookup + bad), 2);
  }
}

// Problems recorded on packed weights or as a batch of a tuned count carry their form, and
// `tune --from-record` tunes each in it.
TEST(TuneCliTest, RecordedFormsAreTunedInTheirForm) {
  const std::string dir = FreshTestDir("tune_record_forms");
  const std::string db = dir + "/tuned.db";
  const std::string record = dir + "/calls.json";
  std::ofstream(record)
      << R"({"mmtune_record": 1, "problems": [)"
         R"({"dtype": "f32", "layout": "row", "trans": "NN", "m": 7, "n": 40, "k": 30,)"
         R"( "threads": 1, "calls": 3, "seconds": 0.1, "form": "packed-b"},)"
         R"({"dtype": "f32", "layout": "row", "trans": "NN", "m": 16, "n": 24, "k": 20,)"
         R"( "threads": 1, "calls": 3, "seconds": 0.05, "form": "batch:6"}]})";
  const RunResult r = RunMmtune("tune --db '" + db + "' --from-record '" + record +
                                "' --strategy random --evals 3 --budget 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM problems WHERE form = 'packed-b' AND m = 7"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM problems WHERE form = 'batch:6' AND m = 16"), 1);
}

TEST(TuneCliTest, TuneStoresAWinnerPerShapeAndPrintsATable) {
  const std::string dir = FreshTestDir("tune_tiny");
  const std::string db = dir + "/tuned.db";
  const RunResult r = RunMmtune("tune --db '" + db +
                                "' --shapes 16x16x16,1x64x64 --strategy random --evals 5 "
                                "--budget 0 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("16x16x16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1x64x64"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[2/2]"), std::string::npos) << r.err;  // plain progress lines
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 2);
  EXPECT_GE(QueryInt(db, "SELECT COUNT(*) FROM measurements"), 2 * 5);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM sessions WHERE status = 'finished'"), 1);
}

// Five shards of a three-shape list, as a Slurm array of five tasks runs them: every shard exits
// 0, the two with nothing to do say so in one line and still leave an (empty) DB, and merging
// all five DBs gives every shape its winner.
TEST(TuneCliTest, MoreShardsThanShapesAllSucceedAndMergeToEveryShape) {
  const std::string dir = FreshTestDir("tune_shards");
  std::string inputs;
  int idle = 0;
  for (int index = 0; index < 5; ++index) {
    const std::string db = dir + "/tune-" + std::to_string(index) + ".db";
    const RunResult r =
        RunMmtune("tune --db '" + db + "' --shapes 8x8x8,24x24x24,1x64x64 --strategy model " +
                  "--budget 0 --threads 1 --shard " + std::to_string(index) + "/5");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (r.err.find("has nothing to tune") != std::string::npos) {
      ++idle;
      EXPECT_EQ(Lines(r.err), 1) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 0);
    } else {
      EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 1) << r.err;
    }
    inputs += " '" + db + "'";
  }
  EXPECT_EQ(idle, 2);
  const std::string fleet = dir + "/fleet.db";
  const RunResult merged = RunMmtune("merge --out '" + fleet + "'" + inputs);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(QueryInt(fleet, "SELECT COUNT(*) FROM winners"), 3);
}

// A range tunes its bucket shapes, records the range, and the runtime then runs every shape
// inside it with its bucket's winner; sharded, every shard records the range and the merge of
// the shards holds every bucket.
TEST(TuneCliTest, RangesTuneTheirBucketsAndLookupNamesTheBucket) {
  const std::string dir = FreshTestDir("tune_ranges");
  const std::string db = dir + "/ranges.db";
  const std::string common = " --strategy model --budget 0 --threads 1";
  const RunResult r = RunMmtune("tune --db '" + db + "' --shapes 1..8x16x16,24x24x24" + common);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Buckets 1, 2, 4 and 8 of the range, and the single shape.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 5);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM shape_ranges WHERE m_lo = 1 AND m_hi = 8 AND "
                         "n_lo = 16 AND n_hi = 16 AND k_lo = 16 AND k_hi = 16 AND threads = 1 "
                         "AND buckets = 'pow2'"),
            1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM shape_ranges"), 1) << "a single shape is no range";

  const RunResult bucket = RunMmtune("lookup --db '" + db + "' --shape 5x16x16 --threads 1");
  ASSERT_EQ(bucket.exit_code, 0) << bucket.err;
  EXPECT_NE(bucket.out.find("tier:    bucket (winner of its bucket f32 row NN 8x16x16 t1 in the "
                            "tuned range 1..8x16x16 (pow2))"),
            std::string::npos)
      << bucket.out;
  const RunResult json =
      RunMmtune("lookup --db '" + db + "' --shape 3x16x16 --threads 1 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json parsed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << json.out;
  EXPECT_EQ(parsed.value("tier", ""), "bucket");
  EXPECT_EQ(parsed.value("tuned_problem", ""), "f32 row NN 4x16x16 t1");
  EXPECT_EQ(parsed.value("bucket_range", ""), "1..8x16x16 (pow2)");
  const RunResult outside = RunMmtune("lookup --db '" + db + "' --shape 9x16x16 --threads 1");
  EXPECT_NE(outside.out.find("tier:    nearest"), std::string::npos) << outside.out;

  // step:S, sharded three ways: each shard records the range, the merge holds every bucket.
  std::string inputs;
  for (int index = 0; index < 3; ++index) {
    const std::string shard = dir + "/step-" + std::to_string(index) + ".db";
    const RunResult s = RunMmtune("tune --db '" + shard + "' --shapes 1..8x16x16 --buckets step:3" +
                                  common + " --shard " + std::to_string(index) + "/3");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(QueryInt(shard, "SELECT COUNT(*) FROM shape_ranges WHERE buckets = 'step:3'"), 1);
    inputs += " '" + shard + "'";
  }
  const std::string fleet = dir + "/fleet.db";
  ASSERT_EQ(RunMmtune("merge --out '" + fleet + "'" + inputs).exit_code, 0);
  EXPECT_EQ(QueryInt(fleet, "SELECT COUNT(*) FROM winners"), 4);  // 1, 3, 6, 8
  EXPECT_EQ(QueryInt(fleet, "SELECT COUNT(*) FROM shape_ranges"), 1);
  const RunResult stepped = RunMmtune("lookup --db '" + fleet + "' --shape 4x16x16 --threads 1");
  EXPECT_NE(stepped.out.find("bucket f32 row NN 6x16x16 t1 in the tuned range 1..8x16x16 "
                             "(step:3)"),
            std::string::npos)
      << stepped.out;
}

// --validate N: N held-out shapes per range, each tuned on its own, timed against what the runtime
// runs, stored in the DB (never as winners), summarised on stdout and shown by the report.
TEST(TuneCliTest, ValidateMeasuresHeldOutShapesOfEachRange) {
  const std::string dir = FreshTestDir("tune_validate");
  const std::string db = dir + "/validated.db";
  const RunResult r = RunMmtune("tune --db '" + db + "' --shapes 1..16x16x16,24x24x24 --strategy "
                                "model --budget 0 --threads 1 --validate 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 6) << "held-out shapes are no winners";
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM range_validations"), 3);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM range_validations WHERE runtime_tier = 'bucket' "
                         "AND m_lo = 1 AND m_hi = 16 AND m NOT IN (1, 2, 4, 8, 16) AND n = 16 "
                         "AND own_gflops > 0 AND runtime_gflops > 0 AND nearest_gflops > 0 AND "
                         "default_gflops > 0 AND padded_gflops > 0 AND session_id IS NOT NULL"),
            3);
  EXPECT_NE(r.out.find("validated range"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1..16x16x16 pow2 t1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("range tune (s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pad pays"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[3/3] f32 row NN "), std::string::npos) << r.err;

  const std::string json_path = dir + "/report.json";
  const std::string html_path = dir + "/report.html";
  const RunResult report = RunMmtune("report --db '" + db + "' --json '" + json_path +
                                     "' --html '" + html_path + "'");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::ifstream json_file(json_path);
  const nlohmann::json parsed = nlohmann::json::parse(json_file, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded());
  ASSERT_EQ(parsed["range_validations"].size(), 1u);
  const nlohmann::json& group = parsed["range_validations"][0];
  EXPECT_EQ(group["range"], "1..16x16x16");
  EXPECT_EQ(group["buckets"], "pow2");
  EXPECT_EQ(group["shapes"].size(), 3u);
  EXPECT_EQ(group["geomean"]["shapes"], 3);
  EXPECT_GT(group["geomean"]["runtime_vs_own"].get<double>(), 0.0);
  std::ifstream html_file(html_path);
  const std::string html((std::istreambuf_iterator<char>(html_file)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"validation-table\""), std::string::npos);
}

// Counts measurements of the search (not the confirm round) that were repeated for the same
// problem and config: resuming must never re-run one.
std::int64_t RepeatedSearchMeasurements(const std::string& db) {
  return QueryInt(db,
                  "SELECT COUNT(*) FROM (SELECT problem_id, config_id, COUNT(*) AS n "
                  "FROM measurements WHERE stage != 'confirm' "
                  "GROUP BY machine_id, problem_id, config_id HAVING n > 1)");
}

TEST(TuneCliTest, KilledTuneResumesWithoutRerunningCandidates) {
  const std::string dir = FreshTestDir("tune_resume");
  const std::string db = dir + "/tuned.db";
  const std::vector<std::string> args = {
      MMTUNE_BINARY, "tune",    "--db",        db,   "--shapes", "40x40x40,56x56x56",
      "--strategy",  "exhaustive", "--evals", "40", "--budget", "0"};
  // A private machine lock, so that the resumed run below (--no-wait) meets only the killed
  // tune's lock, which the kernel released with it.
  const std::string locks = dir + "/locks";
  std::filesystem::create_directories(locks);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("MMTUNE_LOCK_DIR", locks.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // Kill it once a few search measurements are committed, in the middle of the first shape.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::int64_t measured = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    measured = QueryInt(db, "SELECT COUNT(*) FROM measurements WHERE stage = 'search'");
    if (measured >= 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the tune finished before it could be killed";
  ASSERT_GE(measured, 5);
  EXPECT_EQ(IntegrityCheck(db), "ok");
  const std::int64_t kept = QueryInt(db, "SELECT COUNT(*) FROM measurements");
  EXPECT_GE(kept, measured);

  std::string command;
  for (std::size_t i = 1; i < args.size(); ++i) command += "'" + args[i] + "' ";
  const RunResult resumed = RunMmtune(command + "--no-wait", "MMTUNE_LOCK_DIR='" + locks + "'");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resumed"), std::string::npos) << resumed.err;
  EXPECT_EQ(RepeatedSearchMeasurements(db), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 2);
  EXPECT_EQ(IntegrityCheck(db), "ok");
}

// The machine-wide lock file of `fingerprint` in `lock_dir`, held by this process (flock) with
// its pid written as a tune writes its own; -1 when it cannot be taken.
int HoldLock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A second tune on one machine waits for the first (or, with --no-wait, exits 1 at once and
// touches nothing), whichever DB it uses; a tune on a DB that a tune on another machine holds
// does the same.
TEST(TuneCliTest, OneTuneAtATimePerMachineAndPerDb) {
  const std::string dir = FreshTestDir("tune_lock");
  const std::string locks = dir + "/locks";
  std::filesystem::create_directories(locks);
  const std::string env = "MMTUNE_LOCK_DIR='" + locks + "'";
  const RunResult info = RunMmtune("info --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const std::string fingerprint =
      nlohmann::json::parse(info.out).at("machine").at("fingerprint").get<std::string>();
  const std::string machine_lock = locks + "/mmtune-tune-" + fingerprint + ".lock";

  int held = HoldLock(machine_lock);
  ASSERT_GE(held, 0);
  const std::string db = dir + "/tuned.db";
  const std::string tune =
      "tune --db '" + db + "' --shapes 8x8x8 --strategy model --budget 0 --threads 1";
  const RunResult refused = RunMmtune(tune + " --no-wait", env);
  ExpectOneLineError(refused, 1);
  EXPECT_NE(refused.err.find("another mmtune tune (pid " + std::to_string(::getpid()) + ")"),
            std::string::npos) << refused.err;
  // The DB was opened (checked) first, but nothing was measured or registered.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM machines"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM measurements"), 0);

  RunResult waited;
  std::thread waiting([&] { waited = RunMmtune(tune, env); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM machines"), 0)
      << "the tune did not wait for the machine lock";
  ::close(held);
  waiting.join();
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_NE(waited.err.find("waiting for it to finish"), std::string::npos) << waited.err;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 1);

  // The DB's own lock, as a tune on another machine sharing the file would hold it.
  held = ::open(db.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  const RunResult db_refused = RunMmtune(tune + " --no-wait", env);
  ExpectOneLineError(db_refused, 1);
  EXPECT_NE(db_refused.err.find("the DB"), std::string::npos) << db_refused.err;
  ::close(held);
  EXPECT_EQ(RunMmtune(tune + " --no-wait", env).exit_code, 0);
}

TEST(TuneCliTest, TwoTunesShareOneDb) {
  const std::string dir = FreshTestDir("tune_concurrent");
  const std::string db = dir + "/shared.db";
  auto run = [&](const std::string& shapes, RunResult* result) {
    *result = RunMmtune("tune --db '" + db + "' --shapes " + shapes +
                        " --strategy random --evals 12 --budget 0");
  };
  RunResult first, second;
  std::thread a(run, "24x24x24,1x96x96", &first);
  std::thread b(run, "32x32x32,2x80x40", &second);
  a.join();
  b.join();
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(IntegrityCheck(db), "ok");
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM winners"), 4);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM machines"), 1);
}

}  // namespace
