#include "tuner/range_validation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "kernels/default_config.h"
#include "runtime/winner_index.h"
#include "tuner/candidate_runner.h"

namespace mmtune {
namespace {

using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

ShapeKey KeyOf(const Shape& shape) { return {shape.m, shape.n, shape.k}; }

std::string ShapeText(const Shape& shape) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
}

// Median seconds per call of `config` timed alone by `runner`.
Result<double> SecondsOf(CandidateRunner& runner, const KernelConfig& config,
                         const Problem& problem) {
  const std::vector<CandidateMeasurement> measured =
      runner.Measure({config}, 0.0, TimingMode::kConfirm);
  if (measured.empty() || measured.front().status != MeasurementStatus::kOk ||
      !(measured.front().stats.median > 0.0)) {
    return MakeError(ErrorCode::kWrongResult,
                     problem.ToString() + ": " + config.ToString() + " failed: " +
                         (measured.empty() ? std::string("not measured") : measured.front().error));
  }
  return measured.front().stats.median;
}

// Rounds of the padded comparison; the medians of the alternating timings are compared.
constexpr int kPaddedRounds = 3;

// What running the bucket's stored winner on a zero-padded copy of the held-out problem could
// reach at best (the copies not counted), in the held-out problem's flops: `runtime_gflops`
// scaled by the runtime config's time on the problem (`runner`) over the winner's time on the
// bucket shape. The two are timed in alternation, since they cannot share one interleaved round.
Result<double> PaddedGflops(CandidateRunner& runner, const Problem& problem,
                            const KernelConfig& runtime_config, double runtime_gflops,
                            const Problem& bucket, const std::vector<WinnerRecord>& winners,
                            const Machine& machine, const TuneRequest& request,
                            ThreadPool& pool) {
  const auto winner = std::find_if(winners.begin(), winners.end(),
                                   [&](const WinnerRecord& w) { return w.problem == bucket; });
  if (winner == winners.end()) {
    return MakeError(ErrorCode::kInternal, "no stored winner for the bucket " + bucket.ToString());
  }
  auto bucket_runner = CandidateRunner::Create(bucket, machine, request.measure, pool);
  if (!bucket_runner) return bucket_runner.error();
  (*bucket_runner)->WarmUp(winner->config, request.warm_up_seconds);
  std::vector<double> in_place, padded;
  for (int round = 0; round < kPaddedRounds; ++round) {
    auto direct = SecondsOf(runner, runtime_config, problem);
    if (!direct) return direct.error();
    auto on_bucket = SecondsOf(**bucket_runner, winner->config, bucket);
    if (!on_bucket) return on_bucket.error();
    in_place.push_back(*direct);
    padded.push_back(*on_bucket);
  }
  auto median = [](std::vector<double>& values) {
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
  };
  return runtime_gflops * median(in_place) / median(padded);
}

// Attempts per wanted shape before a range is taken to hold no more held-out shapes.
constexpr int kDrawAttemptsPerShape = 200;

}  // namespace

std::vector<Shape> HeldOutShapes(const ShapeRange& range, const BucketPolicy& policy, int count,
                                 std::uint64_t seed, const std::vector<Shape>& exclude) {
  std::vector<Shape> shapes;
  if (count < 1) return shapes;
  std::mt19937_64 random(seed);
  auto draw = [&](const DimRange& dim) {
    if (dim.lo == dim.hi) return dim.lo;
    std::uniform_real_distribution<double> u(std::log(static_cast<double>(dim.lo)),
                                             std::log(static_cast<double>(dim.hi) + 1.0));
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(u(random))), dim.lo,
                                    dim.hi);
  };
  std::set<ShapeKey> taken;
  for (const Shape& shape : exclude) taken.insert(KeyOf(shape));
  // A range too large to list its buckets has none to avoid (ExpandRanges refuses it anyway).
  if (auto buckets = BucketShapes(range, policy)) {
    for (const Shape& bucket : *buckets) taken.insert(KeyOf(bucket));
  }
  const std::int64_t attempts = std::int64_t{kDrawAttemptsPerShape} * count;
  for (std::int64_t attempt = 0;
       attempt < attempts && static_cast<std::int64_t>(shapes.size()) < count; ++attempt) {
    const Shape shape{draw(range.m), draw(range.n), draw(range.k)};
    if (taken.insert(KeyOf(shape)).second) shapes.push_back(shape);
  }
  std::sort(shapes.begin(), shapes.end(),
            [](const Shape& a, const Shape& b) { return KeyOf(a) < KeyOf(b); });
  return shapes;
}

Result<RangeValidationRecord> ValidateHeldOutShape(const ShapeRangeRecord& range,
                                                   const Shape& shape,
                                                   const std::vector<WinnerRecord>& winners,
                                                   const std::vector<ShapeRangeRecord>& ranges,
                                                   const Machine& machine,
                                                   const TuneRequest& request, ThreadPool& pool,
                                                   const std::atomic<bool>* stop) {
  if (!range.range.Contains(shape)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     ShapeText(shape) + " is not inside " + range.range.ToString());
  }
  const Problem problem = range.ProblemOf(shape);

  // Its own tune goes to a private DB: a held-out shape must not become a winner the runtime
  // would answer with, or the next validation would measure the exact tier.
  TuneRequest own_request = request;
  own_request.problems = {problem};
  own_request.ranges.clear();  // its winner is for this one shape, not the sizes of a bucket
  const auto start = std::chrono::steady_clock::now();
  auto own_tune = RunTuningInMemory(machine, own_request, pool, nullptr, stop);
  if (!own_tune) return own_tune.error();
  const TuneSummary& own = own_tune->summary;
  const double own_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (own.outcomes.empty() || !own.outcomes.front().winner) {
    return MakeError(ErrorCode::kInternal,
                     "tuning " + problem.ToString() + " on its own found no winner" +
                         (own.outcomes.empty() ? "" : ": " + own.outcomes.front().error));
  }

  const Lookup runtime = WinnerIndex::Build(winners, machine, nullptr, ranges).Find(problem);
  const Lookup nearest = WinnerIndex::Build(winners, machine, nullptr).Find(problem);
  const std::vector<KernelConfig> configs = {*own.outcomes.front().winner, runtime.config,
                                             nearest.config, UntunedConfig(problem, machine)};
  auto runner = CandidateRunner::Create(problem, machine, request.measure, pool);
  if (!runner) return runner.error();
  (*runner)->WarmUp(configs.front(), request.warm_up_seconds);
  const std::vector<CandidateMeasurement> measured =
      (*runner)->Measure(configs, 0.0, TimingMode::kConfirm);
  for (const CandidateMeasurement& m : measured) {
    if (m.status != MeasurementStatus::kOk) {
      return MakeError(ErrorCode::kWrongResult, problem.ToString() + ": " + m.config.ToString() +
                                                    " failed: " + m.error);
    }
  }
  RangeValidationRecord record;
  record.range = range;
  record.shape = shape;
  record.runtime_tier = ToString(runtime.tier);
  record.own_gflops = measured[0].gflops;
  record.runtime_gflops = measured[1].gflops;
  record.nearest_gflops = measured[2].gflops;
  record.default_gflops = measured[3].gflops;
  record.own_tune_seconds = own_seconds;
  if (runtime.tier == LookupTier::kBucket) {
    auto padded = PaddedGflops(**runner, problem, runtime.config, record.runtime_gflops,
                               runtime.tuned, winners, machine, request, pool);
    if (!padded) return padded.error();
    record.padded_gflops = *padded;
  }
  return record;
}

Result<std::vector<RangeValidationRecord>> ValidateRanges(
    TuningStore& store, std::int64_t machine_id, std::int64_t session_id, const Machine& machine,
    const std::vector<ShapeRangeRecord>& ranges, int count, const TuneRequest& request,
    ThreadPool& pool, const ValidationHandler& on_validated, const std::atomic<bool>* stop) {
  auto winners = store.Winners(machine.fingerprint);
  if (!winners) return winners.error();
  auto stored_ranges = store.ShapeRanges(machine.fingerprint);
  if (!stored_ranges) return stored_ranges.error();

  struct Planned {
    const ShapeRangeRecord* range;
    Shape shape;
  };
  std::vector<Planned> planned;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const ShapeRangeRecord& range = ranges[i];
    if (range.range.IsSingleShape()) continue;
    // A shape tuned for this kind and thread budget is answered by the exact tier, not measured.
    std::vector<Shape> tuned;
    for (const WinnerRecord& winner : *winners) {
      const Problem& p = winner.problem;
      if (range.ProblemOf(Shape{p.m, p.n, p.k}) == p) tuned.push_back(Shape{p.m, p.n, p.k});
    }
    for (const Shape& shape :
         HeldOutShapes(range.range, range.buckets, count, request.seed + i, tuned)) {
      planned.push_back(Planned{&range, shape});
    }
  }

  std::vector<RangeValidationRecord> records;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    if (stop != nullptr && stop->load()) break;
    auto record = ValidateHeldOutShape(*planned[i].range, planned[i].shape, *winners,
                                       *stored_ranges, machine, request, pool, stop);
    // A stop cut the shape's own tune short: what it found says nothing, so it is not kept.
    if (stop != nullptr && stop->load()) break;
    if (!record) return record.error();
    record->session_id = session_id;
    if (Status status = store.RecordRangeValidation(machine_id, *record); !status) {
      return status.error();
    }
    if (on_validated) on_validated(*record, i, planned.size());
    records.push_back(std::move(*record));
  }
  return records;
}

}  // namespace mmtune
