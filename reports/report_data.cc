#include "reports/report_data.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>
#include <map>
#include <utility>

#include "mmtune/version.h"

namespace mmtune {

SearchTrace TraceOfSession(std::int64_t session_id, const std::string& strategy,
                           const std::vector<MeasurementRecord>& measurements) {
  std::vector<const MeasurementRecord*> evaluations;
  for (const MeasurementRecord& m : measurements) {
    if (m.session_id != session_id) continue;
    const bool baseline = m.stage == MeasurementStage::kDefault && m.eval_index == 0;
    if (m.stage == MeasurementStage::kSearch || baseline) evaluations.push_back(&m);
  }
  // Stable: measurements of one batch keep the order they were stored in.
  std::stable_sort(evaluations.begin(), evaluations.end(),
                   [](const MeasurementRecord* a, const MeasurementRecord* b) {
                     return a->eval_index < b->eval_index;
                   });
  SearchTrace trace;
  trace.session_id = session_id;
  trace.strategy = strategy;
  std::optional<double> best;
  for (const MeasurementRecord* m : evaluations) {
    std::optional<double> gflops;
    if (m->status == MeasurementStatus::kOk) {
      gflops = m->gflops;
      if (!best || m->gflops > *best) best = m->gflops;
    }
    trace.eval_index.push_back(m->eval_index);
    trace.gflops.push_back(gflops);
    trace.best_gflops.push_back(best);
  }
  return trace;
}

namespace {

std::string NowUtc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The cache the winner's timing ran from (see RooflineOf): the machine's effective last-level
// cache, unless the session that measured it rotated cold buffers (recorded only in its command
// line) or the stored topology cannot be read.
std::uint64_t WarmCacheBytes(const ReportMachine& machine, const SessionRecord* session) {
  if (session != nullptr && session->info.command.find("--cold-cache") != std::string::npos) {
    return 0;
  }
  try {
    return WarmCacheBytes(machine.description.at("topology").get<Topology>(), machine.peaks);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
}

Result<TunedProblem> Collect(const TuningStore& store, const WinnerRecord& winner,
                             const ReportMachine& machine,
                             const std::map<std::int64_t, const SessionRecord*>& sessions) {
  TunedProblem tuned;
  tuned.fingerprint = winner.fingerprint;
  tuned.problem = winner.problem;
  tuned.winner = winner.config;
  tuned.gflops = winner.gflops;
  tuned.default_gflops = winner.default_gflops;
  tuned.median_seconds = winner.median_seconds;
  if (winner.default_gflops > 0.0) tuned.speedup_vs_default = winner.gflops / winner.default_gflops;
  const auto winner_session = sessions.find(winner.session_id);
  tuned.roofline = RooflineOf(
      winner.problem, machine.peaks,
      WarmCacheBytes(machine,
                     winner_session == sessions.end() ? nullptr : winner_session->second));
  if (tuned.roofline.attainable_gflops > 0.0) {
    tuned.pct_of_roofline = 100.0 * winner.gflops / tuned.roofline.attainable_gflops;
  }
  tuned.session_id = winner.session_id;
  tuned.updated_at = winner.updated_at;

  auto problem_id = store.FindProblem(winner.problem);
  if (!problem_id) return problem_id.error();
  if (!*problem_id) return tuned;  // cannot happen for a stored winner; nothing more to show
  auto measurements = store.Measurements(machine.id, **problem_id);
  if (!measurements) return measurements.error();

  std::vector<std::int64_t> session_order;
  for (const MeasurementRecord& m : *measurements) {
    ++tuned.measurements;
    if (m.status == MeasurementStatus::kFailed) ++tuned.failed;
    if (m.status == MeasurementStatus::kSkipped) ++tuned.skipped;
    if (m.status == MeasurementStatus::kOk) {
      tuned.landscape.push_back(LandscapePoint{m.config, m.stage, m.session_id, m.gflops});
    }
    if (std::find(session_order.begin(), session_order.end(), m.session_id) ==
        session_order.end()) {
      session_order.push_back(m.session_id);
    }
  }
  // Session ids grow with time, so sorting them orders the searches oldest first.
  std::sort(session_order.begin(), session_order.end());
  for (std::int64_t session_id : session_order) {
    const auto session = sessions.find(session_id);
    const std::string strategy =
        session == sessions.end() ? std::string() : session->second->info.strategy;
    SearchTrace trace = TraceOfSession(session_id, strategy, *measurements);
    if (!trace.eval_index.empty()) tuned.searches.push_back(std::move(trace));
  }
  return tuned;
}

}  // namespace

Result<ReportData> CollectReportData(const TuningStore& store) {
  ReportData data;
  data.generated_at = NowUtc();
  data.mmtune_version = kVersion;
  data.git_revision = kGitRevision;
  data.db_path = store.path();
  data.schema_version = store.schema_version();

  auto machines = store.Machines();
  if (!machines) return machines.error();
  for (MachineRecord& record : *machines) {
    data.machines.push_back(ReportMachine{record.id, std::move(record.fingerprint),
                                          std::move(record.fingerprint_basis),
                                          std::move(record.description),
                                          std::move(record.peaks)});
  }
  auto sessions = store.Sessions();
  if (!sessions) return sessions.error();
  data.sessions = std::move(*sessions);
  std::map<std::int64_t, const SessionRecord*> sessions_by_id;
  for (const SessionRecord& session : data.sessions) sessions_by_id[session.id] = &session;

  auto winners = store.Winners("");
  if (!winners) return winners.error();
  for (const WinnerRecord& winner : *winners) {
    const auto machine =
        std::find_if(data.machines.begin(), data.machines.end(),
                     [&](const ReportMachine& m) { return m.fingerprint == winner.fingerprint; });
    // `Winners` joins on the machines table, so its machine is there unless its row was unreadable
    // (then `Machines` already warned and skipped it).
    if (machine == data.machines.end()) continue;
    auto tuned = Collect(store, winner, *machine, sessions_by_id);
    if (!tuned) return tuned.error();
    data.problems.push_back(std::move(*tuned));
  }

  auto validations = store.RangeValidations("");
  if (!validations) return validations.error();
  for (RangeValidationRecord& record : *validations) {
    auto group = std::find_if(
        data.validations.begin(), data.validations.end(), [&](const RangeValidationGroup& g) {
          const ShapeRangeRecord& a = g.range;
          const ShapeRangeRecord& b = record.range;
          return g.session_id == record.session_id && a.fingerprint == b.fingerprint &&
                 a.dtype == b.dtype && a.layout == b.layout && a.trans_a == b.trans_a &&
                 a.trans_b == b.trans_b && a.threads == b.threads && a.range == b.range &&
                 a.buckets == b.buckets;
        });
    if (group == data.validations.end()) {
      data.validations.push_back(RangeValidationGroup{record.range, record.session_id, {}, {}});
      group = std::prev(data.validations.end());
    }
    group->shapes.push_back(std::move(record));
  }
  for (RangeValidationGroup& group : data.validations) {
    group.summary = SummarizeValidations(group.shapes);
  }
  return data;
}

}  // namespace mmtune
