// The reports library: what is read from a tuning DB (winners, search history, landscape,
// roofline), the JSON report against a golden file, the bench-file contract, and that no string
// from a DB or a bench file can become markup in the HTML report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "reports/bench_results.h"
#include "reports/embedded_assets.h"
#include "reports/html_escape.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/report_data.h"
#include "tests/synthetic_machine.h"
#include "tuner/peak.h"

namespace mmtune {
namespace {

using nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

json SyntheticPeaks() {
  PeakReport peaks;
  peaks.isa = IsaLevel::kAvx2;
  peaks.cores = 2;
  peaks.f32_fma = Throughput{100.0, 190.0};
  peaks.f64_fma = Throughput{50.0, 95.0};
  peaks.memory_read_gbs = Throughput{20.0, 30.0};
  json out;
  to_json(out, peaks);
  return out;
}

MeasurementRecord Timed(const KernelConfig& config, MeasurementStage stage, int eval_index,
                        double gflops) {
  MeasurementRecord m;
  m.config = config;
  m.stage = stage;
  m.eval_index = eval_index;
  m.gflops = gflops;
  m.median_seconds = m.min_seconds = 1e-3;
  m.mad_seconds = 1e-5;
  m.samples = 5;
  return m;
}

MeasurementRecord Failed(const KernelConfig& config, int eval_index) {
  MeasurementRecord m;
  m.config = config;
  m.status = MeasurementStatus::kFailed;
  m.stage = MeasurementStage::kSearch;
  m.eval_index = eval_index;
  m.error = "wrong result";
  return m;
}

// The config the synthetic machine's model picks, with its cache blocks changed.
KernelConfig Blocked(const KernelConfig& base, int mc, int kc) {
  KernelConfig config = base;
  config.mc = mc;
  config.kc = kc;
  return config;
}

// One machine, one finished `auto` session over one packed problem: the default at evaluation 0,
// four search candidates (one failed), a drift re-timing of the default, a confirm round and the
// winner. Values are chosen so every derived number is easy to check by hand.
struct Fixture {
  Machine machine = testing::SyntheticZen3Machine();
  Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 256, 256, 256, 1};
  KernelConfig base;
  KernelConfig winner;
  std::int64_t session_id = 0;

  std::string command = "mmtune tune --shapes 256x256x256";

  Status Fill(TuningStore& store) {
    // Spelt out rather than taken from the analytical model, so the golden file changes only
    // with the report's schema.
    base.family = KernelFamily::kPacked;
    base.isa = IsaLevel::kAvx2;
    base.mr = 6;
    base.nr = 16;
    base.mc = 252;
    base.kc = 256;
    base.nc = 256;
    base.prefetch_c = true;
    winner = Blocked(base, base.mc / 2, base.kc);
    auto machine_id = store.UpsertMachine(machine, SyntheticPeaks());
    if (!machine_id) return machine_id.error();
    SessionInfo info;
    info.mmtune_version = "test";
    info.git_revision = "abc123";
    info.strategy = "auto";
    info.budget_seconds = 20.0;
    info.max_evals = 10;
    info.seed = 7;
    info.command = command;
    auto session = store.BeginSession(*machine_id, info);
    if (!session) return session.error();
    session_id = *session;
    auto problem_id = store.UpsertProblem(problem);
    if (!problem_id) return problem_id.error();
    const std::vector<MeasurementRecord> measurements = {
        Timed(base, MeasurementStage::kDefault, 0, 40.0),
        Timed(Blocked(base, base.mc, base.kc / 2), MeasurementStage::kSearch, 1, 30.0),
        Failed(Blocked(base, base.mc * 2, base.kc), 2),
        Timed(winner, MeasurementStage::kSearch, 3, 60.0),
        Timed(base, MeasurementStage::kDefault, 4, 41.0),  // drift check: not an evaluation
        Timed(Blocked(base, base.mc / 2, base.kc / 2), MeasurementStage::kSearch, 4, 50.0),
        Timed(winner, MeasurementStage::kConfirm, 0, 64.0),
        Timed(base, MeasurementStage::kConfirm, 0, 40.0),
    };
    for (const MeasurementRecord& m : measurements) {
      if (Status status = store.RecordMeasurement(session_id, *machine_id, *problem_id, m);
          !status) {
        return status;
      }
    }
    WinnerRecord record;
    record.fingerprint = machine.fingerprint;
    record.problem = problem;
    record.config = winner;
    record.gflops = 64.0;
    record.median_seconds = 2.0 * 256 * 256 * 256 / 64e9;
    record.default_gflops = 40.0;
    if (Status status = store.SetWinner(*machine_id, *problem_id, session_id, record); !status) {
      return status;
    }
    // Two held-out shapes of a range the session validated (`tune --validate 2`).
    const ShapeRangeRecord range{machine.fingerprint, DType::kF32,  Layout::kRowMajor,
                                 Trans::kNo,          Trans::kNo,   1,
                                 ShapeRange{{1, 512}, {256, 256}, {256, 256}},
                                 BucketPolicy{},      ""};
    for (const auto& [m, own, runtime] : {std::tuple{37, 50.0, 45.0}, std::tuple{300, 64.0, 80.0}}) {
      RangeValidationRecord validation;
      validation.range = range;
      validation.shape = Shape{m, 256, 256};
      validation.runtime_tier = "bucket";
      validation.own_gflops = own;
      validation.runtime_gflops = runtime;
      validation.nearest_gflops = own / 2.0;
      validation.default_gflops = own / 4.0;
      validation.padded_gflops = m == 37 ? 40.0 : 0.0;  // measured for one, below the runtime
      validation.own_tune_seconds = 20.0;
      validation.session_id = session_id;
      if (Status status = store.RecordRangeValidation(*machine_id, validation); !status) {
        return status;
      }
    }
    return store.FinishSession(session_id, "finished");
  }
};

// The report of a fresh in-memory DB filled by `fixture`.
Result<ReportData> ReportOf(Fixture& fixture) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  if (!store) return store.error();
  if (Status status = fixture.Fill(*store); !status) return status.error();
  return CollectReportData(*store);
}

// Fields that change from run to run (clocks, versions, paths) are replaced before comparing.
json Normalized(json report) {
  report["generated_at"] = "<time>";
  report["generator"] = "<generator>";
  report["db"]["path"] = "<path>";
  for (json& session : report["sessions"]) {
    session["started_at"] = "<time>";
    if (!session["finished_at"].is_null()) session["finished_at"] = "<time>";
  }
  for (json& problem : report["problems"]) problem["updated_at"] = "<time>";
  for (json& group : report["range_validations"]) {
    for (json& shape : group["shapes"]) shape["measured_at"] = "<time>";
  }
  return report;
}

// A winner measured by a --cold-cache session read its operands from memory: its roofline keeps
// the memory ceiling (for a problem small enough to be bound by it).
TEST(ReportDataTest, ColdCacheWinnersKeepTheMemoryCeiling) {
  Fixture fixture;
  fixture.problem.m = fixture.problem.n = fixture.problem.k = 16;
  fixture.command = "mmtune tune --shapes 16x16x16 --cold-cache";
  auto cold = ReportOf(fixture);
  ASSERT_TRUE(cold) << cold.error().message;
  ASSERT_EQ(cold->problems.size(), 1u);
  EXPECT_FALSE(cold->problems[0].roofline.cache_resident);
  // 16^3: 2.7 flop per byte x 20 GB/s of SyntheticPeaks.
  EXPECT_NEAR(cold->problems[0].roofline.attainable_gflops, 20.0 * 2.0 * 16 / 12.0, 1e-9);

  Fixture warm_fixture;
  warm_fixture.problem = fixture.problem;
  warm_fixture.command = "mmtune tune --shapes 16x16x16";
  auto warm = ReportOf(warm_fixture);
  ASSERT_TRUE(warm) << warm.error().message;
  ASSERT_EQ(warm->problems.size(), 1u);
  EXPECT_TRUE(warm->problems[0].roofline.cache_resident);
  EXPECT_DOUBLE_EQ(warm->problems[0].roofline.attainable_gflops, 100.0);
}

TEST(ReportDataTest, CollectsWinnerSpeedupRooflineAndHistory) {
  Fixture fixture;
  auto data = ReportOf(fixture);
  ASSERT_TRUE(data) << data.error().message;

  ASSERT_EQ(data->machines.size(), 1u);
  ASSERT_EQ(data->sessions.size(), 1u);
  EXPECT_EQ(data->sessions[0].status, "finished");
  EXPECT_EQ(data->sessions[0].info.strategy, "auto");
  ASSERT_EQ(data->problems.size(), 1u);
  const TunedProblem& tuned = data->problems[0];
  EXPECT_EQ(tuned.winner, fixture.winner);
  EXPECT_DOUBLE_EQ(tuned.gflops, 64.0);
  ASSERT_TRUE(tuned.speedup_vs_default);
  EXPECT_DOUBLE_EQ(*tuned.speedup_vs_default, 1.6);
  // 256^3 f32 on one core: intensity 2*256^3 / (3 * 256^2 * 4 B) = 42.7 flop/B, so compute-bound
  // at the one-core f32 peak of 100 GFLOP/s.
  EXPECT_NEAR(tuned.roofline.intensity, 2.0 * 256 / 12.0, 1e-9);
  EXPECT_DOUBLE_EQ(tuned.roofline.attainable_gflops, 100.0);
  ASSERT_TRUE(tuned.pct_of_roofline);
  EXPECT_DOUBLE_EQ(*tuned.pct_of_roofline, 64.0);
  EXPECT_TRUE(tuned.roofline.cache_resident);  // 768 KiB of operands, 32 MiB of L3, warm timing
  EXPECT_EQ(tuned.measurements, 8);
  EXPECT_EQ(tuned.failed, 1);
  EXPECT_EQ(tuned.landscape.size(), 7u);  // every timed measurement, any stage

  // Evaluations 0..4: the baseline default, then the search; the drift re-timing is not one.
  ASSERT_EQ(tuned.searches.size(), 1u);
  const SearchTrace& trace = tuned.searches[0];
  EXPECT_EQ(trace.strategy, "auto");
  EXPECT_EQ(trace.eval_index, (std::vector<int>{0, 1, 2, 3, 4}));
  const std::vector<std::optional<double>> gflops = {40.0, 30.0, std::nullopt, 60.0, 50.0};
  const std::vector<std::optional<double>> best = {40.0, 40.0, 40.0, 60.0, 60.0};
  EXPECT_EQ(trace.gflops, gflops);
  EXPECT_EQ(trace.best_gflops, best);
}

// Validations are grouped by machine, kind, threads, range and session, with their geometric
// means of each tier's speed over the shape's own winner.
TEST(ReportDataTest, GroupsRangeValidationsWithTheirGeometricMeans) {
  Fixture fixture;
  auto data = ReportOf(fixture);
  ASSERT_TRUE(data) << data.error().message;
  ASSERT_EQ(data->validations.size(), 1u);
  const RangeValidationGroup& group = data->validations[0];
  EXPECT_EQ(group.session_id, fixture.session_id);
  EXPECT_EQ(group.range.range.ToString(), "1..512x256x256");
  ASSERT_EQ(group.shapes.size(), 2u);
  EXPECT_EQ(group.shapes[0].shape.m, 37);
  EXPECT_EQ(group.shapes[1].shape.m, 300);
  EXPECT_EQ(group.summary.shapes, 2u);
  EXPECT_NEAR(group.summary.runtime_vs_own, std::sqrt(0.9 * 1.25), 1e-12);
  EXPECT_NEAR(group.summary.nearest_vs_own, 0.5, 1e-12);
  EXPECT_NEAR(group.summary.default_vs_own, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(group.summary.own_tune_seconds, 20.0);

  std::ostringstream html;
  ASSERT_TRUE(WriteHtmlReport(*data, html));
  EXPECT_NE(html.str().find("id=\"validation-table\""), std::string::npos);
  EXPECT_NE(html.str().find("<code>37x256x256</code>"), std::string::npos);
  EXPECT_NE(html.str().find(">1.061x<"), std::string::npos);  // the runtime's geometric mean
  EXPECT_NE(html.str().find(">pays 0 of 1<"), std::string::npos);
  EXPECT_NE(html.str().find(">0.800x<"), std::string::npos);  // 37's padded ratio, 40 / 50

  // A DB without validations has no such section.
  data->validations.clear();
  std::ostringstream plain;
  ASSERT_TRUE(WriteHtmlReport(*data, plain));
  EXPECT_EQ(plain.str().find("validation-table"), std::string::npos);
}

TEST(ReportDataTest, TraceKeepsToItsSessionAndStartsEmpty) {
  const KernelConfig config;
  std::vector<MeasurementRecord> measurements = {
      Failed(config, 0),
      Timed(config, MeasurementStage::kSearch, 1, 10.0),
      Timed(config, MeasurementStage::kSearch, 2, 99.0),
      Timed(config, MeasurementStage::kConfirm, 0, 500.0),
  };
  measurements[0].session_id = measurements[1].session_id = measurements[3].session_id = 1;
  measurements[2].session_id = 2;  // another session's evaluation 2
  const SearchTrace trace = TraceOfSession(1, "random", measurements);
  EXPECT_EQ(trace.eval_index, (std::vector<int>{0, 1}));
  EXPECT_EQ(trace.best_gflops, (std::vector<std::optional<double>>{std::nullopt, 10.0}));
}

TEST(ReportDataTest, WorksOnAReadOnlyStoreAndLeavesTheFileAlone) {
  const std::string dir = ::testing::TempDir() + "/mmtune_report_ro_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tuned.db";
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store) << store.error().message;
    Fixture fixture;
    ASSERT_TRUE(fixture.Fill(*store));
  }
  const std::string before = ReadFile(path);
  {
    auto store = TuningStore::Open(path, DbOpenMode::kReadOnly);
    ASSERT_TRUE(store) << store.error().message;
    auto data = CollectReportData(*store);
    ASSERT_TRUE(data) << data.error().message;
    EXPECT_EQ(data->problems.size(), 1u);
  }
  EXPECT_EQ(ReadFile(path), before);
  std::filesystem::remove_all(dir);
}

// The JSON report's schema is a contract (docs/report.md): any change to it shows up here. After
// an intended change, regenerate with MMTUNE_UPDATE_GOLDEN=1 and raise kReportSchemaVersion when
// a field was renamed or removed.
TEST(JsonReportTest, MatchesTheGoldenDocument) {
  Fixture fixture;
  auto data = ReportOf(fixture);
  ASSERT_TRUE(data) << data.error().message;
  auto bench = ParseBenchResults(R"({
    "context": {"mmtune_fingerprint": "f", "peer_openblas": "0.3.21, core Zen", "num_cpus": 2},
    "benchmarks": [
      {"name": "f32/row/NN/256x256x256/t1/openblas/real_time", "run_name":
       "f32/row/NN/256x256x256/t1/openblas/real_time", "run_type": "iteration",
       "gflops": 70.0, "pct_peak": 70.0, "label": "OpenBLAS"},
      {"name": "f32/row/NN/256x256x256/t1/tuned/real_time", "run_name":
       "f32/row/NN/256x256x256/t1/tuned/real_time", "run_type": "iteration",
       "gflops": 63.0, "pct_peak": 63.0, "label": "exact: packed"}
    ]})", "bench.json");
  ASSERT_TRUE(bench) << bench.error().message;
  data->bench = *bench;
  const json report = Normalized(ReportJson(*data));
  EXPECT_EQ(report["schema_version"], kReportSchemaVersion);

  const std::string golden_path = std::string(MMTUNE_TEST_DATA_DIR) + "/report_golden.json";
  if (std::getenv("MMTUNE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path) << report.dump(2) << '\n';
  }
  const json golden = json::parse(ReadFile(golden_path), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(golden.is_discarded()) << golden_path << " is not JSON";
  EXPECT_EQ(report, golden) << "diff (golden -> now): " << json::diff(golden, report).dump(1);
}

TEST(JsonReportTest, UnknownNumbersAreNullNotZero) {
  Fixture fixture;
  auto data = ReportOf(fixture);
  ASSERT_TRUE(data) << data.error().message;
  data->problems[0].default_gflops = 0.0;  // as after a merge of a winner without a default
  data->problems[0].speedup_vs_default.reset();
  data->problems[0].pct_of_roofline.reset();
  const json report = ReportJson(*data);
  const json& problem = report["problems"][0];
  EXPECT_TRUE(problem["default_gflops"].is_null());
  EXPECT_TRUE(problem["speedup_vs_default"].is_null());
  EXPECT_TRUE(problem["pct_of_roofline"].is_null());
  EXPECT_TRUE(report["bench"].is_null());
}

// ---- The bench file contract ----

TEST(BenchResultsTest, PrefersTheMedianAggregateAndStripsGoogleBenchmarkSuffixes) {
  auto bench = ParseBenchResults(R"({"benchmarks": [
    {"name": "f64/col/TN/5x7x9/t2/onednn/real_time", "run_type": "iteration", "gflops": 1.0,
     "pct_peak": 1.0},
    {"name": "f64/col/TN/5x7x9/t2/onednn/real_time", "run_type": "iteration", "gflops": 3.0,
     "pct_peak": 3.0},
    {"name": "f64/col/TN/5x7x9/t2/onednn/real_time_mean", "run_name":
     "f64/col/TN/5x7x9/t2/onednn/real_time", "run_type": "aggregate", "aggregate_name": "mean",
     "gflops": 2.0, "pct_peak": 2.0},
    {"name": "f64/col/TN/5x7x9/t2/onednn/real_time_median", "run_name":
     "f64/col/TN/5x7x9/t2/onednn/real_time", "run_type": "aggregate", "aggregate_name": "median",
     "gflops": 2.5, "pct_peak": 2.5},
    {"name": "f64/col/TN/5x7x9/t2/default/repeats:3/real_time", "gflops": 4.0, "pct_peak": 4.0},
    {"name": "f64/col/TN/5x7x9/t2/default/repeats:3/real_time", "gflops": 6.0},
    {"name": "f64/col/TN/5x7x9/t2/tuned", "error_occurred": true,
     "error_message": "wrong result"}
  ]})", "b.json");
  ASSERT_TRUE(bench) << bench.error().message;
  ASSERT_EQ(bench->problems.size(), 1u);
  const BenchProblem& problem = bench->problems[0];
  EXPECT_EQ(problem.key, "f64/col/TN/5x7x9/t2");
  EXPECT_EQ(problem.problem.trans_a, Trans::kYes);
  EXPECT_EQ(problem.problem.threads, 2);
  ASSERT_EQ(problem.results.size(), 3u);
  // mmtune's own rows first, whatever order the runs were interleaved in.
  EXPECT_EQ(problem.results[0].impl, "tuned");
  EXPECT_FALSE(problem.results[0].gflops);
  EXPECT_EQ(problem.results[0].error, "wrong result");
  EXPECT_EQ(problem.results[1].impl, "default");
  EXPECT_EQ(problem.results[1].gflops, 5.0);  // median of two plain runs
  EXPECT_EQ(problem.results[1].pct_peak, 4.0);  // only one run had the counter
  EXPECT_EQ(problem.results[2].impl, "onednn");
  EXPECT_TRUE(problem.results[2].from_median_aggregate);
  EXPECT_EQ(problem.results[2].gflops, 2.5);
}

TEST(BenchResultsTest, RefusesWhatDoesNotFollowTheContractInOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "is not valid JSON"},
      {"[]", "is not a JSON object"},
      {R"({"benchmarks": 3})", "has no \"benchmarks\" array"},
      {R"({"benchmarks": [{"name": "BM_Foo"}]})", "has too few parts"},
      {R"({"benchmarks": [{"name": "f32/row/NN/1x2/t1/tuned", "gflops": 1}]})",
       "malformed shape"},
      {R"({"benchmarks": [{"name": "f16/row/NN/1x2x3/t1/tuned", "gflops": 1}]})",
       "unknown dtype"},
      {R"({"benchmarks": [{"name": "f32/row/NN/1x2x3/tx/tuned", "gflops": 1}]})",
       "malformed thread count"},
      {R"({"benchmarks": [{"name": "f32/row/NN/1x2x3/t1/Tuned<b>", "gflops": 1}]})",
       "malformed implementation name"},
      {R"({"benchmarks": [{"name": "f32/row/NN/1x2x3/t1/tuned/extra", "gflops": 1}]})",
       "unexpected part"},
      {R"({"benchmarks": [{"name": "f32/row/NN/1x2x3/t1/tuned"}]})", "no \"gflops\" counter"},
      {R"({"benchmarks": [{"name": "f32/row/NN/1x2x3/t1/tuned", "gflops": "fast"}]})",
       "is not a number"},
  };
  for (const auto& [text, why] : cases) {
    auto bench = ParseBenchResults(text, "b.json");
    ASSERT_FALSE(bench) << text;
    EXPECT_EQ(bench.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(bench.error().message.find(why), std::string::npos) << bench.error().message;
    EXPECT_NE(bench.error().message.find("b.json"), std::string::npos) << bench.error().message;
    EXPECT_EQ(bench.error().message.find('\n'), std::string::npos) << bench.error().message;
  }
}

TEST(BenchResultsTest, AMissingFileIsNotFound) {
  auto bench = ReadBenchResults("/nonexistent/mmtune/bench.json");
  ASSERT_FALSE(bench);
  EXPECT_EQ(bench.error().code, ErrorCode::kNotFound);
}

// ---- Escaping ----

TEST(HtmlEscapeTest, EscapesMarkupAndReplacesWhatIsNotText) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x">'&'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("tab\tline\n"), "tab\tline\n");
  EXPECT_EQ(HtmlEscape(std::string("nul\0bel\x07", 8)), "nul\xEF\xBF\xBD" "bel\xEF\xBF\xBD");
  EXPECT_EQ(HtmlEscape("caf\xC3\xA9"), "caf\xC3\xA9");               // valid UTF-8 stays
  EXPECT_EQ(HtmlEscape("bad\xC3"), "bad\xEF\xBF\xBD");               // truncated sequence
  EXPECT_EQ(HtmlEscape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");     // overlong '/'
  EXPECT_EQ(HtmlEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(HtmlEscapeTest, JsonForScriptCannotCloseTheElementAndMeansTheSame) {
  const json value = {{"command", "</script><script>alert(1)</script><!-- & \xE2\x80\xA8"},
                      {"bad", "\xFF"}};
  const std::string text = JsonForScript(value);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(text.find('>'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xE2\x80\xA8"), std::string::npos) << text;
  const json back = json::parse(text);
  EXPECT_EQ(back["command"], value["command"]);
  EXPECT_EQ(back["bad"], "\xEF\xBF\xBD");  // invalid UTF-8 replaced, not thrown
}

TEST(HtmlReportTest, StringsFromTheDbAndTheBenchFileNeverBecomeMarkup) {
  Fixture fixture;
  fixture.machine.cpu.brand = "<img src=x onerror=alert(1)>";
  fixture.command = "mmtune tune </script><script>alert(2)</script>";
  auto data = ReportOf(fixture);
  ASSERT_TRUE(data) << data.error().message;
  auto bench = ParseBenchResults(R"({"context": {"peer_x": "<b>bold</b>"}, "benchmarks": [
    {"name": "f32/row/NN/256x256x256/t1/openblas", "gflops": 1.0, "label": "\"><i>"}]})",
                                 "<u>bench.json</u>");
  ASSERT_TRUE(bench) << bench.error().message;
  data->bench = *bench;

  std::ostringstream out;
  ASSERT_TRUE(WriteHtmlReport(*data, out));
  const std::string html = out.str();
  for (const char* raw : {"<img", "alert(2)</script>", "<b>bold", "<i>", "<u>"}) {
    EXPECT_EQ(html.find(raw), std::string::npos) << raw;
  }
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;bold&lt;/b&gt;"), std::string::npos);
  // Exactly the page's own four script elements: error capture, data, Chart.js, the page script.
  const int embedded = Count(EmbeddedChartJs() + EmbeddedReportScript(), "<script");
  EXPECT_EQ(Count(html, "<script") - embedded, 4);
  EXPECT_EQ(Count(html, "</script>"), 4);
}

TEST(HtmlReportTest, IsSelfContained) {
  Fixture fixture;
  auto data = ReportOf(fixture);
  ASSERT_TRUE(data) << data.error().message;
  std::ostringstream out;
  ASSERT_TRUE(WriteHtmlReport(*data, out));
  const std::string html = out.str();
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(html.find(EmbeddedChartJs()), std::string::npos);
  for (const char* fetch : {"src=\"http", "href=\"http", "<link", "src=\"//", "@import"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  for (const char* id : {"chart-speed", "chart-roofline", "chart-convergence", "chart-landscape",
                         "winners-table", "report-data"}) {
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  }
}

}  // namespace
}  // namespace mmtune
