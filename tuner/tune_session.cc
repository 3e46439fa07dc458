#include "tuner/tune_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>

#include "kernels/default_config.h"
#include "mmtune/version.h"
#include "search/space.h"
#include "search/strategy.h"
#include "tuner/bucket_tile_use.h"
#include "tuner/candidate_cost.h"
#include "tuner/confirmed_winner.h"

namespace mmtune {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

double LogDistance(const Problem& a, const Problem& b) {
  auto term = [](std::int64_t x, std::int64_t y) {
    return std::abs(std::log(static_cast<double>(std::max<std::int64_t>(1, x))) -
                    std::log(static_cast<double>(std::max<std::int64_t>(1, y))));
  };
  return term(a.m, b.m) + term(a.n, b.n) + term(a.k, b.k);
}

// What is known about a config on this problem: from the DB (an earlier session) or measured in
// this one.
struct Known {
  MeasurementStatus status = MeasurementStatus::kOk;
  double gflops = 0.0;
  double median_seconds = 0.0;
  bool resumed = false;
};

// The confirmation's rounds past its minimum samples stop after this share of the budget: on
// shapes whose calls take a tenth of a second, rounds up to the maximum take twice the search.
constexpr double kConfirmShareOfBudget = 0.25;

// What the strategy learns: the GFLOP/s of a timed candidate, including the one-round estimate
// of a skipped one (it ranks it well enough: it was clearly slow); nothing for a failed one.
std::optional<double> ScoreFor(const Known& result) {
  if (result.status == MeasurementStatus::kFailed || result.gflops <= 0.0) return std::nullopt;
  return result.gflops;
}

MeasurementRecord ToRecord(const CandidateMeasurement& m, MeasurementStage stage,
                           int eval_index) {
  MeasurementRecord record;
  record.config = m.config;
  record.status = m.status;
  record.stage = stage;
  record.error = m.error;
  record.median_seconds = m.stats.median;
  record.min_seconds = m.stats.min;
  record.mad_seconds = m.stats.mad;
  record.samples = m.stats.count;
  record.gflops = m.gflops;
  record.eval_index = eval_index;
  return record;
}

class ProblemTuner {
 public:
  ProblemTuner(TuningStore& store, std::int64_t machine_id, std::int64_t session_id,
               const Machine& machine, const TuneRequest& request, ThreadPool& pool,
               const TuneEventHandler& on_event, const std::atomic<bool>* stop,
               const std::vector<WinnerRecord>& winners)
      : store_(store), machine_id_(machine_id), session_id_(session_id), machine_(machine),
        request_(request), pool_(pool), on_event_(on_event), stop_(stop), winners_(winners) {}

  // Tunes one problem. An error is a DB failure (the run stops); a problem that cannot be
  // measured is reported in the outcome instead.
  Status Tune(const Problem& problem, TuneEvent event_base, double& eta_per_problem,
              Clock::time_point run_start, ProblemOutcome& outcome, bool& interrupted);

 private:
  // Measures `configs` and commits each result to the store the moment it is final, so that a
  // killed tune loses only the candidates still being timed. `eval_indices` are the configs'
  // positions in the search order (0 for the baseline and the confirmation).
  Result<std::vector<CandidateMeasurement>> MeasureAndRecord(
      CandidateRunner& runner, const std::vector<KernelConfig>& configs, double best_seconds,
      TimingMode mode, MeasurementStage stage, std::int64_t problem_id,
      const std::vector<int>& eval_indices);
  void Emit(TuneEvent event) const {
    if (on_event_) on_event_(event);
  }
  bool StopRequested() const { return stop_ != nullptr && stop_->load(); }

  TuningStore& store_;
  std::int64_t machine_id_;
  std::int64_t session_id_;
  const Machine& machine_;
  const TuneRequest& request_;
  ThreadPool& pool_;
  const TuneEventHandler& on_event_;
  const std::atomic<bool>* stop_;
  const std::vector<WinnerRecord>& winners_;
};

Result<std::vector<CandidateMeasurement>> ProblemTuner::MeasureAndRecord(
    CandidateRunner& runner, const std::vector<KernelConfig>& configs, double best_seconds,
    TimingMode mode, MeasurementStage stage, std::int64_t problem_id,
    const std::vector<int>& eval_indices) {
  Status recorded = OkStatus();
  auto commit = [&](std::size_t index, const CandidateMeasurement& measured) {
    if (!recorded) return;  // the store failed once: keep its first error, write no more
    recorded = store_.RecordMeasurement(session_id_, machine_id_, problem_id,
                                        ToRecord(measured, stage, eval_indices[index]));
  };
  std::vector<CandidateMeasurement> measured =
      runner.Measure(configs, best_seconds, mode, commit);
  if (!recorded) return recorded.error();
  return measured;
}

Status ProblemTuner::Tune(const Problem& problem, TuneEvent event, double& eta_per_problem,
                          Clock::time_point run_start, ProblemOutcome& outcome,
                          bool& interrupted) {
  const Clock::time_point start = Clock::now();
  outcome.problem = problem;
  auto problem_id = store_.UpsertProblem(problem);
  if (!problem_id) return problem_id.error();

  // Earlier measurements of this problem on this machine: never re-run them.
  std::unordered_map<std::string, Known> known;
  auto prior = store_.Measurements(machine_id_, *problem_id);
  if (!prior) return prior.error();
  for (const MeasurementRecord& record : *prior) {
    if (record.stage == MeasurementStage::kConfirm) continue;
    known[ConfigHash(record.config)] =
        Known{record.status, record.gflops, record.median_seconds, /*resumed=*/true};
  }

  // The default is what the runtime runs for this shape untuned: on as many of the problem's
  // threads as the work pays for (a 16^3 on one of two). It is measured and confirmed like any
  // candidate, so a stored winner is never slower than leaving the shape untuned. A default on
  // all the threads would let a small shape store a multi-thread winner that only beats that,
  // which the runtime would then prefer to its faster 1-thread default (docs/tuning.md, The
  // default).
  outcome.default_config = UntunedConfig(problem, machine_);
  SpaceOptions space_options;
  space_options.search_threads = request_.search_threads;
  std::vector<KernelConfig> space = GenerateSpace(problem, machine_, space_options);
  // Seeds after the default: the model's other candidates near a family boundary, then the
  // winners of the nearest shapes already tuned here (warm start).
  std::vector<KernelConfig> seeds = AnalyticalAlternatives(problem, machine_);
  for (const KernelConfig& config :
       NearestWinnerConfigs(winners_, problem, machine_, request_.warm_start_neighbours)) {
    seeds.push_back(config);
  }
  SearchContext context = BuildSearchSpace(outcome.default_config, seeds, std::move(space),
                                           request_.seed, request_.max_evals);
  outcome.space_size = context.space.size();
  const std::vector<KernelConfig> candidates = context.space;
  auto strategy = MakeStrategy(request_.strategy, std::move(context));
  if (!strategy) return strategy.error();

  const std::int64_t planned =
      request_.max_evals > 0
          ? std::min<std::int64_t>(request_.max_evals,
                                   static_cast<std::int64_t>(outcome.space_size))
          : static_cast<std::int64_t>(outcome.space_size);
  event.kind = TuneEvent::Kind::kProblemStart;
  event.space_size = outcome.space_size;
  event.planned = planned;
  Emit(event);

  MeasureOptions measure = request_.measure;
  if (measure.confirm_max_seconds == 0.0 && request_.budget_seconds > 0.0) {
    measure.confirm_max_seconds = kConfirmShareOfBudget * request_.budget_seconds;
  }
  auto runner = CandidateRunner::Create(problem, machine_, measure, pool_);
  if (!runner) {
    outcome.error = runner.error().message;
    return OkStatus();
  }

  double best_seconds = 0.0;
  double best_gflops = 0.0;
  auto note = [&](const Known& result) {
    ++outcome.evaluations;
    if (result.resumed) ++outcome.resumed;
    if (result.status == MeasurementStatus::kFailed) ++outcome.failed;
    if (result.status == MeasurementStatus::kSkipped) ++outcome.skipped;
    if (result.status == MeasurementStatus::kOk && result.gflops > best_gflops) {
      best_gflops = result.gflops;
      best_seconds = result.median_seconds;
    }
    outcome.best_so_far.push_back(best_gflops);
  };
  auto progress = [&]() {
    const double elapsed = SecondsBetween(start, Clock::now());
    double remaining = eta_per_problem > 0.0 ? std::max(0.0, eta_per_problem - elapsed) : 0.0;
    if (request_.budget_seconds > 0.0) {
      remaining = std::max(0.0, request_.budget_seconds - elapsed);
    }
    if (outcome.evaluations > outcome.resumed && planned > outcome.evaluations) {
      const double per_eval = elapsed / static_cast<double>(outcome.evaluations - outcome.resumed);
      const double by_evals = per_eval * static_cast<double>(planned - outcome.evaluations);
      remaining = request_.budget_seconds > 0.0 ? std::min(remaining, by_evals) : by_evals;
    }
    TuneEvent update = event;
    update.kind = TuneEvent::Kind::kProgress;
    update.evaluations = outcome.evaluations;
    update.resumed = outcome.resumed;
    update.best_gflops = best_gflops;
    update.elapsed_seconds = SecondsBetween(run_start, Clock::now());
    const double later = static_cast<double>(event.problem_count - event.problem_index - 1);
    update.eta_seconds = remaining + later * std::max(eta_per_problem, elapsed + remaining);
    Emit(update);
  };

  // The baseline: the analytical default, timed to the end (no skip).
  double default_seconds = 0.0;
  CandidateCost cost;
  {
    const std::string hash = ConfigHash(outcome.default_config);
    if (known.find(hash) == known.end()) {
      (*runner)->WarmUp(outcome.default_config, request_.warm_up_seconds);
      auto measured = MeasureAndRecord(**runner, {outcome.default_config}, 0.0,
                                       TimingMode::kWhole, MeasurementStage::kDefault,
                                       *problem_id, {0});
      if (!measured) return measured.error();
      const CandidateMeasurement& baseline = (*measured)[0];
      known[hash] = Known{baseline.status, baseline.gflops, baseline.stats.median, false};
      cost.Add(baseline.seconds_spent);
    }
    default_seconds = known[hash].median_seconds;
  }

  // The search.
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(request_.budget_seconds));
  Clock::time_point last_drift_check = Clock::now();
  bool drift_reported = false;
  int eval_index = 0;
  while (true) {
    if (StopRequested()) {
      interrupted = true;
      break;
    }
    if (request_.max_evals > 0 && outcome.evaluations >= request_.max_evals) break;
    if (request_.budget_seconds > 0.0 && Clock::now() >= deadline) break;
    std::size_t want = static_cast<std::size_t>(std::max(1, request_.batch_size));
    if (request_.max_evals > 0) {
      want = std::min<std::size_t>(want,
                                   static_cast<std::size_t>(request_.max_evals - outcome.evaluations));
    }
    if (request_.budget_seconds > 0.0) {
      want = std::min(want, cost.FitIn(SecondsBetween(Clock::now(), deadline)));
    }
    const std::vector<std::size_t> proposed = (*strategy)->Propose(want);
    if (proposed.empty()) break;

    std::vector<std::size_t> to_measure;
    for (std::size_t index : proposed) {
      const auto it = known.find(ConfigHash(candidates[index]));
      if (it == known.end()) {
        to_measure.push_back(index);
        continue;
      }
      (*strategy)->Observe(index, ScoreFor(it->second));
      note(it->second);
      ++eval_index;
    }
    if (!to_measure.empty()) {
      std::vector<KernelConfig> configs;
      std::vector<int> indices;
      for (std::size_t index : to_measure) {
        configs.push_back(candidates[index]);
        indices.push_back(++eval_index);
      }
      auto measured = MeasureAndRecord(**runner, configs, best_seconds, TimingMode::kSearch,
                                       MeasurementStage::kSearch, *problem_id, indices);
      if (!measured) return measured.error();
      for (std::size_t i = 0; i < measured->size(); ++i) {
        const CandidateMeasurement& m = (*measured)[i];
        const Known result{m.status, m.gflops, m.stats.median, false};
        known[ConfigHash(configs[i])] = result;
        (*strategy)->Observe(to_measure[i], ScoreFor(result));
        note(result);
        cost.Add(m.seconds_spent);
      }
    }
    progress();

    // Clock drift: the default, re-timed now and then, should take as long as at the start.
    if (default_seconds > 0.0 &&
        SecondsBetween(last_drift_check, Clock::now()) >= request_.drift_check_seconds) {
      last_drift_check = Clock::now();
      // Stored like the baseline, at the current position in the search order, so that an
      // offline replay (bench/search_bench) can correct the search's timings for the drift.
      auto again = MeasureAndRecord(**runner, {outcome.default_config}, 0.0,
                                    TimingMode::kWhole, MeasurementStage::kDefault,
                                    *problem_id, {eval_index});
      if (!again) return again.error();
      const double ratio = (*again)[0].stats.median / default_seconds;
      if ((*again)[0].status == MeasurementStatus::kOk &&
          std::abs(ratio - 1.0) > request_.drift_warn_ratio && !drift_reported) {
        drift_reported = true;
        TuneEvent warning = event;
        warning.kind = TuneEvent::Kind::kWarning;
        warning.message = "clock drift on " + problem.ToString() + ": the default config now " +
                          "takes " + std::to_string(static_cast<int>(std::lround(ratio * 100))) +
                          "% of its time at the start; timings of this shape may be skewed";
        Emit(warning);
      }
    }
  }

  // Confirmation: the best few and the default, re-measured together.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [hash, result] : known) {
    if (result.status == MeasurementStatus::kOk) ranked.emplace_back(result.gflops, hash);
  }
  std::sort(ranked.begin(), ranked.end(), std::greater<>());
  std::vector<KernelConfig> finalists;
  std::map<std::string, KernelConfig> by_hash;
  for (const KernelConfig& config : candidates) by_hash.emplace(ConfigHash(config), config);
  for (const auto& [gflops, hash] : ranked) {
    if (finalists.size() >= static_cast<std::size_t>(std::max(1, request_.confirm_top))) break;
    const auto it = by_hash.find(hash);
    if (it != by_hash.end()) finalists.push_back(it->second);
  }
  if (std::find(finalists.begin(), finalists.end(), outcome.default_config) == finalists.end()) {
    finalists.push_back(outcome.default_config);
  }
  auto confirmed =
      MeasureAndRecord(**runner, finalists, 0.0, TimingMode::kConfirm, MeasurementStage::kConfirm,
                       *problem_id, std::vector<int>(finalists.size(), 0));
  if (!confirmed) return confirmed.error();
  // A bucket shape's winner runs every size its bucket serves: finalists rank by their speed
  // here times their tiles' fit over those sizes; any other shape's by their speed alone. The
  // default stays unless beaten by more than the round's noise (ConfirmedWinner).
  const std::optional<ServedSizes> served = SizesServedByProblem(problem, request_.ranges);
  for (const CandidateMeasurement& m : *confirmed) {
    if (m.status == MeasurementStatus::kOk && m.config == outcome.default_config) {
      outcome.default_gflops = m.gflops;
    }
  }
  const CandidateMeasurement* winner = ConfirmedWinner(
      *confirmed, outcome.default_config, [&](const CandidateMeasurement& m) {
        return m.gflops * (served ? ServedTileUse(m.config, problem, *served) : 1.0);
      });
  if (winner != nullptr) {
    outcome.winner = winner->config;
    outcome.winner_gflops = winner->gflops;
    WinnerRecord record;
    record.fingerprint = machine_.fingerprint;
    record.problem = problem;
    record.config = winner->config;
    record.gflops = winner->gflops;
    record.median_seconds = winner->stats.median;
    record.default_gflops = outcome.default_gflops;
    record.session_id = session_id_;
    if (auto status = store_.SetWinner(machine_id_, *problem_id, session_id_, record); !status) {
      return status;
    }
  } else {
    outcome.error = "no candidate passed verification";
  }
  outcome.seconds = SecondsBetween(start, Clock::now());
  event.kind = TuneEvent::Kind::kProblemDone;
  event.evaluations = outcome.evaluations;
  event.resumed = outcome.resumed;
  event.best_gflops = outcome.winner_gflops;
  event.elapsed_seconds = SecondsBetween(run_start, Clock::now());
  Emit(event);
  return OkStatus();
}

}  // namespace

std::vector<KernelConfig> NearestWinnerConfigs(const std::vector<WinnerRecord>& winners,
                                               const Problem& problem, const Machine& machine,
                                               int count) {
  std::vector<std::pair<double, const WinnerRecord*>> near;
  for (const WinnerRecord& winner : winners) {
    const Problem& other = winner.problem;
    if (winner.fingerprint != machine.fingerprint || other.dtype != problem.dtype ||
        other.layout != problem.layout || other.trans_a != problem.trans_a ||
        other.trans_b != problem.trans_b || other.threads != problem.threads) {
      continue;
    }
    near.emplace_back(LogDistance(other, problem), &winner);
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<KernelConfig> configs;
  for (const auto& [distance, winner] : near) {
    if (static_cast<int>(configs.size()) >= count) break;
    if (!winner->config.Validate(problem, machine).ok()) continue;
    if (std::find(configs.begin(), configs.end(), winner->config) != configs.end()) continue;
    configs.push_back(winner->config);
  }
  return configs;
}

Result<PrivateTune> RunTuningInMemory(const Machine& machine, const TuneRequest& request,
                                      ThreadPool& pool, const TuneEventHandler& on_event,
                                      const std::atomic<bool>* stop) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  if (!store) return store.error();
  auto machine_id = store->UpsertMachine(machine, nullptr);
  if (!machine_id) return machine_id.error();
  auto summary = RunTuning(*store, *machine_id, machine, request, pool, on_event, stop);
  if (!summary) return summary.error();
  auto winners = store->Winners(machine.fingerprint);
  if (!winners) return winners.error();
  return PrivateTune{std::move(*summary), std::move(*winners)};
}

Result<TuneSummary> RunTuning(TuningStore& store, std::int64_t machine_id, const Machine& machine,
                              const TuneRequest& request, ThreadPool& pool,
                              const TuneEventHandler& on_event, const std::atomic<bool>* stop) {
  if (auto status = CheckStrategyName(request.strategy); !status) return status.error();
  SessionInfo info;
  info.mmtune_version = kVersion;
  info.git_revision = kGitRevision;
  info.strategy = request.strategy;
  info.budget_seconds = request.budget_seconds;
  info.max_evals = request.max_evals;
  info.seed = request.seed;
  info.command = request.command;
  auto session_id = store.BeginSession(machine_id, info);
  if (!session_id) return session_id.error();

  TuneSummary summary;
  summary.session_id = *session_id;
  const Clock::time_point run_start = Clock::now();
  double eta_per_problem = request.budget_seconds;
  double finished_seconds = 0.0;
  for (std::size_t i = 0; i < request.problems.size(); ++i) {
    // Winners are re-read per problem so that shapes tuned earlier in this run warm-start the
    // later ones.
    auto winners = store.Winners(machine.fingerprint);
    if (!winners) return winners.error();
    ProblemTuner tuner(store, machine_id, *session_id, machine, request, pool, on_event, stop,
                       *winners);
    TuneEvent event;
    event.problem_index = i;
    event.problem_count = request.problems.size();
    event.problem = request.problems[i];
    ProblemOutcome outcome;
    if (auto status = tuner.Tune(request.problems[i], event, eta_per_problem, run_start,
                                 outcome, summary.interrupted);
        !status) {
      (void)store.FinishSession(*session_id, "failed");
      return status.error();
    }
    finished_seconds += outcome.seconds;
    eta_per_problem = finished_seconds / static_cast<double>(i + 1);
    summary.outcomes.push_back(std::move(outcome));
    if (summary.interrupted) break;
  }
  if (auto status =
          store.FinishSession(*session_id, summary.interrupted ? "interrupted" : "finished");
      !status) {
    return status.error();
  }
  return summary;
}

}  // namespace mmtune
