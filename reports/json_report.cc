#include "reports/json_report.h"

#include <cmath>
#include <map>

namespace mmtune {
namespace {

using nlohmann::json;

// Unknown or meaningless numbers are null rather than 0, so a reader cannot mistake "not
// measured" for "measured as zero".
json Number(double value) { return std::isfinite(value) ? json(value) : json(); }
json PositiveOrNull(double value) { return value > 0.0 ? Number(value) : json(); }
json Optional(const std::optional<double>& value) { return value ? Number(*value) : json(); }
json TextOrNull(const std::string& text) { return text.empty() ? json() : json(text); }

json ProblemJson(const Problem& problem) {
  return {{"dtype", ToString(problem.dtype)},
          {"layout", ToString(problem.layout)},
          {"trans", TransPairToString(problem.trans_a, problem.trans_b)},
          {"m", problem.m},
          {"n", problem.n},
          {"k", problem.k},
          {"threads", problem.threads},
          {"form", FormName(problem)}};
}

json ConfigJson(const KernelConfig& config) {
  json out;
  to_json(out, config);
  return out;
}

// The stored description is hostile input like everything in the DB: only objects are passed on.
json Section(const json& description, const char* key) {
  if (!description.is_object()) return json();
  const auto it = description.find(key);
  return it != description.end() && it->is_object() ? *it : json();
}

json MachineJson(const ReportMachine& machine) {
  return {{"fingerprint", machine.fingerprint},
          {"fingerprint_basis", machine.fingerprint_basis},
          {"cpu", Section(machine.description, "cpu")},
          {"isa", Section(machine.description, "isa")},
          {"topology", Section(machine.description, "topology")},
          {"peaks", machine.peaks.is_object() ? machine.peaks : json()}};
}

json SessionJson(const SessionRecord& session,
                 const std::map<std::int64_t, std::string>& fingerprints) {
  const auto machine = fingerprints.find(session.machine_id);
  return {{"id", session.id},
          {"machine", machine == fingerprints.end() ? json() : json(machine->second)},
          {"strategy", session.info.strategy},
          {"budget_seconds", Number(session.info.budget_seconds)},
          {"max_evals", session.info.max_evals},
          {"seed", session.info.seed},
          {"status", session.status},
          {"started_at", session.started_at},
          {"finished_at", TextOrNull(session.finished_at)},
          {"command", session.info.command},
          {"mmtune_version", session.info.mmtune_version},
          {"git_revision", session.info.git_revision}};
}

json SearchJson(const SearchTrace& trace) {
  json gflops = json::array();
  json best = json::array();
  for (const auto& value : trace.gflops) gflops.push_back(Optional(value));
  for (const auto& value : trace.best_gflops) best.push_back(Optional(value));
  return {{"session_id", trace.session_id},
          {"strategy", trace.strategy},
          {"eval_index", trace.eval_index},
          {"gflops", std::move(gflops)},
          {"best_gflops", std::move(best)}};
}

json ProblemReportJson(const TunedProblem& tuned) {
  json searches = json::array();
  for (const SearchTrace& trace : tuned.searches) searches.push_back(SearchJson(trace));
  json landscape = json::array();
  for (const LandscapePoint& point : tuned.landscape) {
    landscape.push_back({{"config", ConfigJson(point.config)},
                         {"stage", ToString(point.stage)},
                         {"session_id", point.session_id},
                         {"gflops", Number(point.gflops)}});
  }
  const Roofline& roof = tuned.roofline;
  return {{"machine", tuned.fingerprint},
          {"key", ProblemKey(tuned.problem)},
          {"problem", ProblemJson(tuned.problem)},
          {"winner", ConfigJson(tuned.winner)},
          {"winner_text", tuned.winner.ToString()},
          {"gflops", Number(tuned.gflops)},
          {"median_seconds", Number(tuned.median_seconds)},
          {"default_gflops", PositiveOrNull(tuned.default_gflops)},
          {"speedup_vs_default", Optional(tuned.speedup_vs_default)},
          {"pct_of_roofline", Optional(tuned.pct_of_roofline)},
          {"roofline",
           {{"intensity", Number(roof.intensity)},
            {"compute_gflops", PositiveOrNull(roof.compute_gflops)},
            {"bandwidth_gbs", PositiveOrNull(roof.bandwidth_gbs)},
            {"attainable_gflops", PositiveOrNull(roof.attainable_gflops)},
            {"cache_resident", roof.cache_resident}}},
          {"session_id", tuned.session_id > 0 ? json(tuned.session_id) : json()},
          {"updated_at", tuned.updated_at},
          {"measurements",
           {{"total", tuned.measurements}, {"failed", tuned.failed}, {"skipped", tuned.skipped}}},
          {"searches", std::move(searches)},
          {"landscape", std::move(landscape)}};
}

json BenchJson(const BenchResults& bench) {
  json context = json::object();
  for (const auto& [key, value] : bench.context) context[key] = value;
  json problems = json::array();
  for (const BenchProblem& problem : bench.problems) {
    json results = json::array();
    for (const BenchImplResult& result : problem.results) {
      results.push_back({{"impl", result.impl},
                         {"gflops", Optional(result.gflops)},
                         {"pct_peak", Optional(result.pct_peak)},
                         {"from", result.from_median_aggregate ? "median aggregate"
                                                               : "median of runs"},
                         {"runs", result.runs},
                         {"label", result.label},
                         {"error", TextOrNull(result.error)}});
    }
    problems.push_back({{"key", problem.key},
                        {"problem", ProblemJson(problem.problem)},
                        {"results", std::move(results)}});
  }
  return {{"file", bench.path}, {"context", std::move(context)}, {"problems", std::move(problems)}};
}

json ValidationGroupJson(const RangeValidationGroup& group) {
  const ShapeRangeRecord& r = group.range;
  json shapes = json::array();
  for (const RangeValidationRecord& v : group.shapes) {
    shapes.push_back({{"m", v.shape.m},
                      {"n", v.shape.n},
                      {"k", v.shape.k},
                      {"runtime_tier", v.runtime_tier},
                      {"own_gflops", PositiveOrNull(v.own_gflops)},
                      {"runtime_gflops", PositiveOrNull(v.runtime_gflops)},
                      {"nearest_gflops", PositiveOrNull(v.nearest_gflops)},
                      {"default_gflops", PositiveOrNull(v.default_gflops)},
                      {"padded_gflops", PositiveOrNull(v.padded_gflops)},
                      {"own_tune_seconds", Number(v.own_tune_seconds)},
                      {"measured_at", v.measured_at}});
  }
  const ValidationSummary& s = group.summary;
  return {{"machine", r.fingerprint},
          {"dtype", ToString(r.dtype)},
          {"layout", ToString(r.layout)},
          {"trans", TransPairToString(r.trans_a, r.trans_b)},
          {"threads", r.threads},
          {"range", r.range.ToString()},
          {"buckets", r.buckets.ToString()},
          {"session_id", group.session_id > 0 ? json(group.session_id) : json()},
          {"geomean", {{"shapes", s.shapes},
                       {"runtime_vs_own", PositiveOrNull(s.runtime_vs_own)},
                       {"nearest_vs_own", PositiveOrNull(s.nearest_vs_own)},
                       {"default_vs_own", PositiveOrNull(s.default_vs_own)},
                       {"padded_measured", s.padded_measured},
                       {"padding_pays", s.padding_pays},
                       {"own_tune_seconds", s.shapes > 0 ? Number(s.own_tune_seconds) : json()}}},
          {"shapes", std::move(shapes)}};
}

}  // namespace

json ReportJson(const ReportData& data) {
  std::map<std::int64_t, std::string> fingerprints;
  json machines = json::array();
  for (const ReportMachine& machine : data.machines) {
    fingerprints[machine.id] = machine.fingerprint;
    machines.push_back(MachineJson(machine));
  }
  json sessions = json::array();
  for (const SessionRecord& session : data.sessions) {
    sessions.push_back(SessionJson(session, fingerprints));
  }
  json problems = json::array();
  for (const TunedProblem& tuned : data.problems) problems.push_back(ProblemReportJson(tuned));
  json validations = json::array();
  for (const RangeValidationGroup& group : data.validations) {
    validations.push_back(ValidationGroupJson(group));
  }
  return {{"schema_version", kReportSchemaVersion},
          {"generated_at", data.generated_at},
          {"generator", {{"mmtune_version", data.mmtune_version},
                         {"git_revision", data.git_revision}}},
          {"db", {{"path", data.db_path}, {"schema_version", data.schema_version}}},
          {"machines", std::move(machines)},
          {"sessions", std::move(sessions)},
          {"problems", std::move(problems)},
          {"range_validations", std::move(validations)},
          {"bench", data.bench ? BenchJson(*data.bench) : json()}};
}

Status WriteJsonReport(const ReportData& data, std::ostream& out) {
  out << ReportJson(data).dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  if (!out) return MakeError(ErrorCode::kIo, "writing the JSON report failed");
  return OkStatus();
}

}  // namespace mmtune
