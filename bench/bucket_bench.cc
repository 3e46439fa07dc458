// Shapes that were never tuned, inside a tuned range: what the runtime runs for them (the bucket
// tier, and for comparison the nearest tier and the analytical default) against tuning each of
// them on its own, timed interleaved on the same operands. Also what the range's tune cost
// against one shape's tune.
//
//   ./build/bench/bucket_bench [--range=1..2048x4096x4096] [--buckets=pow2|step:S]
//       [--held_out=N] [--shapes=MxNxK,...] [--dtype=f32|f64|bf16|s8] [--threads=N]
//       [--budget=SECONDS] [--seed=N]
//
// The bucket shapes are tuned into an in-memory DB, then N held-out shapes (HeldOutShapes, or
// --shapes) are measured as `tune --validate` measures them (tuner/range_validation.h): each
// tuned into a DB of its own with the same strategy and budget, and its four configs verified and
// timed together. The table gives GFLOP/s and the ratio of each to the shape's own winner, and
// the geometric means close it.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/shape_range.h"
#include "db/store.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "db/validation_summary.h"
#include "mmtune/runtime.h"
#include "tuner/range_validation.h"
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

// The strategy, budget and seed every tune of the bench runs with.
TuneRequest RequestOf(const Options& options) {
  TuneRequest request;
  request.budget_seconds = options.budget;
  request.seed = options.seed;
  request.command = "bucket_bench";
  return request;
}

struct Tuned {
  std::vector<WinnerRecord> winners;
  double seconds = 0.0;
};

// Tunes the bucket shapes of `range` into a fresh in-memory DB and returns their winners.
Result<Tuned> TuneInMemory(const std::vector<Problem>& problems, const ShapeRangeRecord& range,
                           const Machine& machine, const Options& options, ThreadPool& pool) {
  TuneRequest request = RequestOf(options);
  request.problems = problems;
  request.ranges = {range};
  const auto start = std::chrono::steady_clock::now();
  auto tune = RunTuningInMemory(machine, request, pool, [](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::kProblemDone) {
      std::cerr << "  tuned " << e.problem.ToString() << ": " << e.evaluations << " evals, "
                << std::fixed << std::setprecision(1) << e.best_gflops << " GFLOP/s\n";
    }
  });
  if (!tune) return tune.error();
  Tuned tuned;
  tuned.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  tuned.winners = std::move(tune->winners);
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
  const ShapeRangeRecord record{machine->fingerprint, *dtype, Layout::kRowMajor, Trans::kNo,
                                Trans::kNo, options.threads, *range, *policy, ""};
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
  for (const Shape& shape : *buckets) bucket_problems.push_back(record.ProblemOf(shape));
  auto range_tune = TuneInMemory(bucket_problems, record, *machine, options, pool);
  if (!range_tune) {
    std::cerr << "bucket_bench: " << range_tune.error().message << "\n";
    return 1;
  }

  std::vector<RangeValidationRecord> rows;
  for (const Shape& shape : held_out) {
    std::cerr << "bucket_bench: held-out " << record.ProblemOf(shape).ToString() << "\n";
    auto row = ValidateHeldOutShape(record, shape, range_tune->winners, {record}, *machine,
                                    RequestOf(options), pool);
    if (!row) {
      std::cerr << "bucket_bench: " << row.error().message << "\n";
      return 1;
    }
    if (row->runtime_tier != std::string(ToString(LookupTier::kBucket))) {
      std::cerr << "bucket_bench: warning: " << record.ProblemOf(shape).ToString() << " got the "
                << row->runtime_tier << " tier, not its bucket\n";
    }
    rows.push_back(std::move(*row));
  }

  std::cout << "\n" << machine->cpu.brand << ", " << ToString(machine->kernel_isa) << ", "
            << options.dtype << ", " << options.threads << " thread(s), range "
            << range->ToString() << " (" << policy->ToString() << "), budget " << options.budget
            << " s per shape\n\n";
  std::cout << std::left << std::setw(30) << "held-out problem" << std::right << std::setw(10)
            << "own GF/s" << std::setw(10) << "bucket" << std::setw(10) << "nearest"
            << std::setw(10) << "default" << "\n";
  for (const RangeValidationRecord& row : rows) {
    std::cout << std::left << std::setw(30) << record.ProblemOf(row.shape).ToString() << std::right
              << std::fixed << std::setprecision(1) << std::setw(10) << row.own_gflops
              << std::setprecision(3) << std::setw(10) << row.runtime_gflops / row.own_gflops
              << std::setw(10) << row.nearest_gflops / row.own_gflops << std::setw(10)
              << row.default_gflops / row.own_gflops << "\n";
  }
  const ValidationSummary summary = SummarizeValidations(rows);
  std::cout << std::left << std::setw(30) << "geomean (x own winner)" << std::right
            << std::setw(10) << "1.000" << std::setprecision(3) << std::setw(10)
            << summary.runtime_vs_own << std::setw(10) << summary.nearest_vs_own << std::setw(10)
            << summary.default_vs_own << "\n\n";
  std::cout << "range tune: " << std::setprecision(1) << range_tune->seconds << " s for "
            << buckets->size() << " bucket shapes = " << std::setprecision(2)
            << range_tune->seconds / summary.own_tune_seconds << "x one held-out shape's tune ("
            << std::setprecision(1) << summary.own_tune_seconds << " s)\n";
  return 0;
}

}  // namespace
}  // namespace mmtune

int main(int argc, char** argv) {
  const auto options = mmtune::ParseOptions(argc, argv);
  if (!options) return 2;
  return mmtune::Run(*options);
}
