// Shapes that were never tuned, inside a tuned range: what the runtime runs for them (the bucket
// tier, and for comparison the nearest tier and the analytical default) against tuning each of
// them on its own, timed interleaved on the same operands. Also what the range's tune cost
// against one shape's tune.
//
//   ./build/bench/bucket_bench [--range=1..2048x4096x4096] [--buckets=pow2|step:S]
//       [--held_out=N] [--shapes=MxNxK,...] [--dtype=f32|f64|bf16|s8] [--threads=N]
//       [--budget=SECONDS] [--seed=N]
//
// The bucket shapes are tuned into an in-memory DB, then N held-out shapes (log-uniform random
// sizes in the ranged dimensions, buckets excluded; or --shapes) are tuned each into a DB of
// their own with the same strategy and budget. Per held-out shape the four configs are verified
// and timed together (the confirm round's timing); the table gives GFLOP/s and the ratio of each
// to the shape's own winner, and the geometric means close it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/shape_range.h"
#include "db/store.h"
#include "kernels/default_config.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "runtime/winner_index.h"
#include "tuner/candidate_runner.h"
#include "tuner/shape_sets.h"
#include "tuner/tune_session.h"

namespace mmtune {
namespace {

struct Options {
  std::string range = "1..2048x4096x4096";
  std::string buckets = "pow2";
  int held_out = 8;
  std::string shapes;
  std::string dtype = "f32";
  int threads = 1;
  double budget = 10.0;
  std::uint64_t seed = 1;
};

std::optional<Options> ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    try {
      if (flag == "--range") {
        options.range = value;
      } else if (flag == "--buckets") {
        options.buckets = value;
      } else if (flag == "--held_out") {
        options.held_out = std::stoi(value);
      } else if (flag == "--shapes") {
        options.shapes = value;
      } else if (flag == "--dtype") {
        options.dtype = value;
      } else if (flag == "--threads") {
        options.threads = std::stoi(value);
      } else if (flag == "--budget") {
        options.budget = std::stod(value);
      } else if (flag == "--seed") {
        options.seed = std::stoull(value);
      } else {
        std::cerr << "bucket_bench: unknown option '" << arg << "'\n";
        return std::nullopt;
      }
    } catch (const std::exception&) {
      std::cerr << "bucket_bench: bad value in '" << arg << "'\n";
      return std::nullopt;
    }
  }
  return options;
}

// Random sizes in [lo, hi], log-uniform, that are not buckets.
std::vector<Shape> HeldOutShapes(const ShapeRange& range, const BucketPolicy& policy, int count,
                                 std::uint64_t seed) {
  std::mt19937_64 random(seed);
  auto draw = [&](const DimRange& dim) {
    if (dim.lo == dim.hi) return dim.lo;
    std::uniform_real_distribution<double> u(std::log(static_cast<double>(dim.lo)),
                                             std::log(static_cast<double>(dim.hi) + 1.0));
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(u(random))), dim.lo,
                                    dim.hi);
  };
  const auto buckets = BucketShapes(range, policy);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> taken;
  for (const Shape& b : *buckets) taken.insert({b.m, b.n, b.k});
  std::vector<Shape> shapes;
  for (int attempt = 0; attempt < 1000 && static_cast<int>(shapes.size()) < count; ++attempt) {
    const Shape shape{draw(range.m), draw(range.n), draw(range.k)};
    if (taken.insert({shape.m, shape.n, shape.k}).second) shapes.push_back(shape);
  }
  std::sort(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) {
    return std::tie(a.m, a.n, a.k) < std::tie(b.m, b.n, b.k);
  });
  return shapes;
}

struct Tuned {
  std::vector<WinnerRecord> winners;
  double seconds = 0.0;
};

// Tunes `problems` into a fresh in-memory DB and returns its winners.
Result<Tuned> TuneInMemory(const std::vector<Problem>& problems, const Machine& machine,
                           const Options& options, ThreadPool& pool) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  if (!store) return store.error();
  auto machine_id = store->UpsertMachine(machine, nullptr);
  if (!machine_id) return machine_id.error();
  TuneRequest request;
  request.problems = problems;
  request.budget_seconds = options.budget;
  request.seed = options.seed;
  request.command = "bucket_bench";
  const auto start = std::chrono::steady_clock::now();
  auto summary = RunTuning(*store, *machine_id, machine, request, pool, [](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::kProblemDone) {
      std::cerr << "  tuned " << e.problem.ToString() << ": " << e.evaluations << " evals, "
                << std::fixed << std::setprecision(1) << e.best_gflops << " GFLOP/s\n";
    }
  });
  if (!summary) return summary.error();
  Tuned tuned;
  tuned.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto winners = store->Winners(machine.fingerprint);
  if (!winners) return winners.error();
  tuned.winners = std::move(*winners);
  return tuned;
}

int Run(const Options& options) {
  auto range = ParseShapeRange(options.range);
  auto policy = ParseBucketPolicy(options.buckets);
  auto dtype = ParseDType(options.dtype);
  if (!range || !policy || !dtype) {
    std::cerr << "bucket_bench: "
              << (!range ? range.error().message
                         : !policy ? policy.error().message : dtype.error().message)
              << "\n";
    return 2;
  }
  auto machine = DetectHostMachine();
  if (!machine) {
    std::cerr << "bucket_bench: " << machine.error().message << "\n";
    return 1;
  }
  ThreadPool& pool = DefaultThreadPool();
  auto problem_of = [&](const Shape& s) {
    return Problem{*dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k,
                   options.threads};
  };
  auto buckets = BucketShapes(*range, *policy);
  if (!buckets) {
    std::cerr << "bucket_bench: " << buckets.error().message << "\n";
    return 2;
  }
  std::vector<Shape> held_out;
  if (!options.shapes.empty()) {
    auto listed = ParseShapeList(options.shapes);
    if (!listed) {
      std::cerr << "bucket_bench: " << listed.error().message << "\n";
      return 2;
    }
    held_out = *listed;
  } else {
    held_out = HeldOutShapes(*range, *policy, options.held_out, options.seed);
  }
  for (const Shape& shape : held_out) {
    if (!range->Contains(shape)) {
      std::cerr << "bucket_bench: " << shape.m << "x" << shape.n << "x" << shape.k
                << " is not inside " << range->ToString() << "\n";
      return 2;
    }
  }

  std::cerr << "bucket_bench: tuning the " << buckets->size() << " bucket shapes of "
            << range->ToString() << " (" << policy->ToString() << ")\n";
  std::vector<Problem> bucket_problems;
  for (const Shape& shape : *buckets) bucket_problems.push_back(problem_of(shape));
  auto range_tune = TuneInMemory(bucket_problems, *machine, options, pool);
  if (!range_tune) {
    std::cerr << "bucket_bench: " << range_tune.error().message << "\n";
    return 1;
  }
  const ShapeRangeRecord record{machine->fingerprint, *dtype, Layout::kRowMajor, Trans::kNo,
                                Trans::kNo, options.threads, *range, *policy, ""};
  const WinnerIndex with_ranges =
      WinnerIndex::Build(range_tune->winners, *machine, nullptr, {record});
  const WinnerIndex without_ranges = WinnerIndex::Build(range_tune->winners, *machine, nullptr);

  struct Row {
    Problem problem;
    double own = 0, bucket = 0, nearest = 0, fallback = 0;
    double own_tune_seconds = 0;
  };
  std::vector<Row> rows;
  double own_seconds = 0.0;
  for (const Shape& shape : held_out) {
    const Problem problem = problem_of(shape);
    std::cerr << "bucket_bench: held-out " << problem.ToString() << "\n";
    auto own = TuneInMemory({problem}, *machine, options, pool);
    if (!own || own->winners.empty()) {
      std::cerr << "bucket_bench: tuning " << problem.ToString() << " failed\n";
      return 1;
    }
    own_seconds += own->seconds;
    const Lookup bucket = with_ranges.Find(problem);
    const Lookup nearest = without_ranges.Find(problem);
    const std::vector<KernelConfig> configs = {own->winners.front().config, bucket.config,
                                               nearest.config, UntunedConfig(problem, *machine)};
    auto runner = CandidateRunner::Create(problem, *machine, MeasureOptions{}, pool);
    if (!runner) {
      std::cerr << "bucket_bench: " << runner.error().message << "\n";
      return 1;
    }
    (*runner)->WarmUp(configs[0], 0.3);
    const auto measured = (*runner)->Measure(configs, 0.0, TimingMode::kConfirm);
    for (const CandidateMeasurement& m : measured) {
      if (m.status != MeasurementStatus::kOk) {
        std::cerr << "bucket_bench: " << m.config.ToString() << " failed: " << m.error << "\n";
        return 1;
      }
    }
    rows.push_back(Row{problem, measured[0].gflops, measured[1].gflops, measured[2].gflops,
                       measured[3].gflops, own->seconds});
    if (bucket.tier != LookupTier::kBucket) {
      std::cerr << "bucket_bench: warning: " << problem.ToString() << " got the "
                << ToString(bucket.tier) << " tier, not its bucket\n";
    }
  }

  std::cout << "\n" << machine->cpu.brand << ", " << ToString(machine->kernel_isa) << ", "
            << options.dtype << ", " << options.threads << " thread(s), range "
            << range->ToString() << " (" << policy->ToString() << "), budget " << options.budget
            << " s per shape\n\n";
  std::cout << std::left << std::setw(30) << "held-out problem" << std::right << std::setw(10)
            << "own GF/s" << std::setw(10) << "bucket" << std::setw(10) << "nearest"
            << std::setw(10) << "default" << "\n";
  double log_bucket = 0, log_nearest = 0, log_default = 0;
  for (const Row& row : rows) {
    log_bucket += std::log(row.bucket / row.own);
    log_nearest += std::log(row.nearest / row.own);
    log_default += std::log(row.fallback / row.own);
    std::cout << std::left << std::setw(30) << row.problem.ToString() << std::right << std::fixed
              << std::setprecision(1) << std::setw(10) << row.own << std::setprecision(3)
              << std::setw(10) << row.bucket / row.own << std::setw(10) << row.nearest / row.own
              << std::setw(10) << row.fallback / row.own << "\n";
  }
  const double n = static_cast<double>(rows.size());
  std::cout << std::left << std::setw(30) << "geomean (x own winner)" << std::right
            << std::setw(10) << "1.000" << std::setprecision(3) << std::setw(10)
            << std::exp(log_bucket / n) << std::setw(10) << std::exp(log_nearest / n)
            << std::setw(10) << std::exp(log_default / n) << "\n\n";
  const double per_shape = own_seconds / n;
  std::cout << "range tune: " << std::setprecision(1) << range_tune->seconds << " s for "
            << buckets->size() << " bucket shapes = " << std::setprecision(2)
            << range_tune->seconds / per_shape << "x one held-out shape's tune (" << std::setprecision(1)
            << per_shape << " s)\n";
  return 0;
}

}  // namespace
}  // namespace mmtune

int main(int argc, char** argv) {
  const auto options = mmtune::ParseOptions(argc, argv);
  if (!options) return 2;
  return mmtune::Run(*options);
}
