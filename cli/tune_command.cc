#include "cli/tune_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command_helpers.h"
#include "db/store.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "machine/roofline.h"
#include "mmtune/runtime.h"
#include "search/strategy.h"
#include "tuner/range_validation.h"
#include "tuner/shape_sets.h"
#include "tuner/shard_cost.h"
#include "tuner/tune_lock.h"
#include "tuner/tune_session.h"
#include "tuner/tune_setup.h"

namespace mmtune::cli {
namespace {

struct TuneOptions {
  std::string db = "mmtune.db";
  std::string shapes;
  std::string shapes_file;
  std::string preset;
  std::string buckets = "pow2";
  ProblemKindText kind;
  std::string threads = "auto";
  std::string strategy = "auto";
  double budget = 20.0;
  std::int64_t evals = 0;
  std::uint64_t seed = 1;
  bool cold_cache = false;
  bool packed_b = false;
  std::int64_t batch = 1;
  bool no_wait = false;
  int validate = 0;
  std::string shard;
  std::string from_record;
  // Whether the per-problem options were given (they clash with --from-record, whose problems
  // carry their own).
  bool problem_options_given = false;
  std::string command_line;
};

// Set by SIGINT/SIGTERM: the tune stops after the batch in flight, keeps what it measured and
// marks the session interrupted. A second signal kills the process (default action restored).
std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int signal_number) {
  g_stop.store(true);
  std::signal(signal_number, SIG_DFL);
}

// Routes SIGINT and SIGTERM to g_stop while it lives.
class StopSignals {
 public:
  StopSignals() {
    g_stop.store(false);
    std::signal(SIGINT, OnStopSignal);
    std::signal(SIGTERM, OnStopSignal);
  }
  ~StopSignals() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

std::string FormatDuration(double seconds) {
  const long total = static_cast<long>(seconds + 0.5);
  std::ostringstream text;
  if (total >= 3600) text << total / 3600 << "h";
  if (total >= 60) text << std::setw(total >= 3600 ? 2 : 1) << std::setfill('0') << (total / 60) % 60 << "m";
  text << std::setw(total >= 60 ? 2 : 1) << std::setfill('0') << total % 60 << "s";
  return text.str();
}

std::string Fixed(double value, int precision) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(precision) << value;
  return text.str();
}

Result<std::vector<ShapeRange>> ChooseRanges(const TuneOptions& options) {
  const int sources = !options.shapes.empty() + !options.shapes_file.empty() +
                      !options.preset.empty() + !options.from_record.empty();
  if (sources > 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "give only one of --shapes, --shapes-file, --preset and --from-record");
  }
  if (!options.from_record.empty()) {
    return std::vector<ShapeRange>{};  // problems come from the record
  }
  if (!options.shapes.empty()) return ParseShapeRangeList(options.shapes);
  if (!options.shapes_file.empty()) return ReadShapeRangesFile(options.shapes_file);
  return PresetRanges(options.preset.empty() ? "quick" : options.preset);
}

// Progress: one line rewritten in place on a terminal, plain lines (one per shape, plus
// warnings) otherwise so logs stay readable.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::ostream& err) : err_(err), tty_(isatty(fileno(stderr)) != 0) {}

  void operator()(const TuneEvent& event) {
    const std::string shape = "[" + std::to_string(event.problem_index + 1) + "/" +
                              std::to_string(event.problem_count) + "] " +
                              event.problem.ToString();
    switch (event.kind) {
      case TuneEvent::Kind::kProblemStart:
        if (!tty_) {
          err_ << shape << ": " << event.space_size << " candidates in the space, up to "
               << event.planned << " to evaluate\n";
        }
        break;
      case TuneEvent::Kind::kProgress:
        if (tty_) {
          const double fraction = event.planned > 0 ? static_cast<double>(event.evaluations) /
                                                          static_cast<double>(event.planned)
                                                    : 0.0;
          const int filled = static_cast<int>(std::min(1.0, fraction) * 20);
          err_ << "\r\033[K" << shape << " [" << std::string(filled, '#')
               << std::string(20 - filled, '.') << "] " << event.evaluations << "/"
               << event.planned << " evals, best " << Fixed(event.best_gflops, 1)
               << " GFLOP/s, ETA " << FormatDuration(event.eta_seconds) << std::flush;
        }
        break;
      case TuneEvent::Kind::kProblemDone:
        if (tty_) err_ << "\r\033[K";
        err_ << shape << ": " << event.evaluations << " evals"
             << (event.resumed > 0 ? " (" + std::to_string(event.resumed) + " resumed)" : "")
             << ", winner " << Fixed(event.best_gflops, 1) << " GFLOP/s, "
             << FormatDuration(event.elapsed_seconds) << " elapsed\n";
        break;
      case TuneEvent::Kind::kWarning:
        if (tty_) err_ << "\r\033[K";
        err_ << "mmtune: warning: " << event.message << "\n";
        break;
    }
  }

 private:
  std::ostream& err_;
  bool tty_;
};

// `warm_cache_bytes`: the cache warm-cache timings run from (0 for --cold-cache), see RooflineOf.
void PrintSummary(std::ostream& out, const TuneSummary& summary, const nlohmann::json& peaks,
                  std::uint64_t warm_cache_bytes) {
  std::size_t problem_width = 28;
  for (const ProblemOutcome& o : summary.outcomes) {
    problem_width = std::max(problem_width, o.problem.ToString().size() + 2);
  }
  const int width = static_cast<int>(problem_width);
  out << "\n" << std::left << std::setw(width) << "problem" << std::setw(54) << "winner"
      << std::right << std::setw(9) << "GFLOP/s" << std::setw(8) << "% roof" << std::setw(10)
      << "vs dflt" << std::setw(16) << "evals (f/s/r)" << "\n";
  for (const ProblemOutcome& o : summary.outcomes) {
    out << std::left << std::setw(width) << o.problem.ToString();
    if (!o.winner) {
      out << "not tuned: " << o.error << "\n";
      continue;
    }
    const Roofline roof = RooflineOf(o.problem, peaks, warm_cache_bytes);
    const std::string percent =
        roof.attainable_gflops > 0.0 ? Fixed(100.0 * o.winner_gflops / roof.attainable_gflops, 0)
                                     : "?";
    const std::string speedup =
        o.default_gflops > 0.0 ? Fixed(o.winner_gflops / o.default_gflops, 2) + "x" : "?";
    out << std::setw(54) << o.winner->ToString() << std::right << std::setw(9)
        << Fixed(o.winner_gflops, 1) << std::setw(8) << percent << std::setw(10) << speedup
        << std::setw(16)
        << (std::to_string(o.evaluations) + " (" + std::to_string(o.failed) + "/" +
            std::to_string(o.skipped) + "/" + std::to_string(o.resumed) + ")")
        << "\n";
  }
  out << "(% roof: of min(measured arithmetic peak, intensity x measured bandwidth), of the peak "
         "alone when the operands fit the last-level cache of a warm-cache timing, ? where no "
         "peak is known; vs dflt: speed-up "
         "over the analytical default in the same confirm round; f/s/r: failed verification, "
         "skipped as slow, resumed from the DB)\n";
}

// More held-out shapes than anyone would wait for: each is a whole tune.
constexpr int kMaxValidate = 1000;

// `tune --validate N` after the ranges' buckets are tuned: measures N held-out shapes per range
// and prints each, then the geometric means per range. False when it failed (reported).
bool RunValidation(TuningStore& store, const TuneSummary& tuned, std::int64_t machine_id,
                   const Machine& machine, const std::vector<ShapeRangeRecord>& ranges,
                   int count, const TuneRequest& request, Context& context) {
  *context.err << "validating: " << count << " held-out shape" << (count == 1 ? "" : "s")
               << " per range, each tuned on its own with the same strategy and budget\n";
  auto records = ValidateRanges(
      store, machine_id, tuned.session_id, machine, ranges, count, request, DefaultThreadPool(),
      [&](const RangeValidationRecord& r, std::size_t index, std::size_t total) {
        const double own = r.own_gflops;
        *context.err << "[" << index + 1 << "/" << total << "] "
                     << r.range.ProblemOf(r.shape).ToString() << ": own winner "
                     << Fixed(own, 1) << " GFLOP/s; runtime (" << r.runtime_tier << ") "
                     << Fixed(r.runtime_gflops / own, 3) << "x, nearest "
                     << Fixed(r.nearest_gflops / own, 3) << "x, default "
                     << Fixed(r.default_gflops / own, 3) << "x"
                     << (r.padded_gflops > 0.0
                             ? ", padded at best " + Fixed(r.padded_gflops / own, 3) + "x"
                             : std::string())
                     << "\n";
      },
      &g_stop);
  if (!records) {
    context.Fail(kExitFailure, "validation failed: " + records.error().message);
    return false;
  }
  std::ostream& out = *context.out;
  out << "\n" << std::left << std::setw(44) << "validated range" << std::right << std::setw(8)
      << "shapes" << std::setw(10) << "runtime" << std::setw(10) << "nearest" << std::setw(10)
      << "default" << std::setw(11) << "pad pays" << std::setw(14) << "own tune (s)"
      << std::setw(16) << "range tune (s)" << "\n";
  for (const ShapeRangeRecord& range : ranges) {
    std::vector<RangeValidationRecord> of_range;
    for (const RangeValidationRecord& r : *records) {
      if (r.range.range == range.range && r.range.threads == range.threads) of_range.push_back(r);
    }
    if (of_range.empty()) continue;
    // What this run spent on the shapes the range's lookups answer with.
    double range_seconds = 0.0;
    for (const ProblemOutcome& outcome : tuned.outcomes) {
      const Problem& p = outcome.problem;
      if (range.range.Contains(Shape{p.m, p.n, p.k}) && range.ProblemOf({p.m, p.n, p.k}) == p) {
        range_seconds += outcome.seconds;
      }
    }
    const ValidationSummary s = SummarizeValidations(of_range);
    const std::string ratio =
        s.own_tune_seconds > 0.0 ? " (" + Fixed(range_seconds / s.own_tune_seconds, 1) + "x)" : "";
    out << std::left << std::setw(44)
        << (range.range.ToString() + " " + range.buckets.ToString() + " t" +
            std::to_string(range.threads))
        << std::right << std::setw(8) << s.shapes << std::setw(10) << Fixed(s.runtime_vs_own, 3)
        << std::setw(10) << Fixed(s.nearest_vs_own, 3) << std::setw(10)
        << Fixed(s.default_vs_own, 3) << std::setw(11)
        << (std::to_string(s.padding_pays) + "/" + std::to_string(s.padded_measured))
        << std::setw(14) << Fixed(s.own_tune_seconds, 1)
        << std::setw(16) << Fixed(range_seconds, 1) + ratio << "\n";
  }
  out << "(geometric means of each held-out shape's speed as a fraction of its own tuned winner, "
         "timed together: runtime = what the runtime runs for it, nearest = the nearest tier "
         "without the range, default = the analytical default; pad pays: shapes where the "
         "bucket's winner on the bucket shape, as a zero-padded copy would run it (copies not "
         "counted), beat the runtime, of those measured; own tune: mean seconds of a "
         "held-out shape's own tune; range tune: seconds this run spent on the range's shapes, "
         "and that as a multiple of one own tune)\n";
  return true;
}

void RunTune(const TuneOptions& options, Context& context) {
  // Everything the user typed is checked before the DB is touched.
  // Ranges and shapes have sizes of at least 1 (a 0 has nothing to tune): the parser says so.
  auto ranges = ChooseRanges(options);
  if (!ranges) return context.Fail(kExitUsage, ranges.error().message);
  auto buckets = ParseBucketPolicy(options.buckets);
  if (!buckets) return context.Fail(kExitUsage, buckets.error().message);
  auto shapes = ExpandRanges(*ranges, *buckets);
  if (!shapes) return context.Fail(kExitUsage, shapes.error().message);
  Shard shard;
  if (!options.shard.empty()) {
    auto parsed = ParseShard(options.shard);
    if (!parsed) return context.Fail(kExitUsage, parsed.error().message);
    shard = *parsed;
  }
  auto kind = ParseProblemKind(options.kind);
  if (!kind) return context.Fail(kExitUsage, kind.error().message);
  if (auto status = CheckStrategyName(options.strategy); !status) {
    return context.Fail(kExitUsage, status.error().message);
  }
  if (options.budget < 0.0 || options.evals < 0) {
    return context.Fail(kExitUsage, "--budget and --evals must not be negative");
  }
  if (options.validate < 0 || options.validate > kMaxValidate) {
    return context.Fail(kExitUsage, "--validate must be between 0 and " +
                                        std::to_string(kMaxValidate) + " shapes per range");
  }
  if (options.validate > 0) {
    // Held-out shapes are measured against every bucket's winner, which a shard lacks.
    if (!options.shard.empty() || !options.from_record.empty()) {
      return context.Fail(kExitUsage, "--validate needs the whole range tuned in one run: do not "
                                      "give it with --shard or --from-record");
    }
    if (std::all_of(ranges->begin(), ranges->end(),
                    [](const ShapeRange& range) { return range.IsSingleShape(); })) {
      return context.Fail(kExitUsage, "--validate measures shapes inside a range: give one in "
                                      "--shapes (e.g. 1..2048x4096x4096) or a preset with ranges");
    }
  }
  if (Status forms = CheckCallFormOptions(options.packed_b, options.batch); !forms) {
    return context.Fail(kExitUsage, forms.error().message);
  }
  const bool single_shapes = std::all_of(ranges->begin(), ranges->end(),
                                         [](const ShapeRange& r) { return r.IsSingleShape(); });
  if ((options.packed_b || options.batch > 1) && !single_shapes) {
    return context.Fail(kExitUsage, std::string(options.packed_b ? "--packed-b" : "--batch") +
                                        " tunes single shapes, not ranges: the runtime answers "
                                        "shapes inside a range for plain single calls only");
  }
  auto machine = DetectHostMachineOrFail(context);
  if (!machine) return;
  auto threads = ParseTuneThreads(options.threads, DefaultRuntimeThreads(),
                                  std::max(1, machine->topology.cores));
  if (!threads) return context.Fail(kExitUsage, threads.error().message);

  std::vector<Problem> problems;
  std::size_t listed = 0;  // shapes or recorded problems before sharding
  if (!options.from_record.empty()) {
    // The record's problems carry their dtype, layout, transposes and threads; most
    // time-consuming first, so an interrupted or budget-limited run tunes what matters most.
    if (options.problem_options_given) {
      return context.Fail(kExitUsage, "--dtype, --layout, --trans, --threads, --packed-b and "
                                      "--batch come from the record file; do not give them "
                                      "with --from-record");
    }
    auto recorded = RecordedProblemsToTune(options.from_record, machine->topology.cores);
    if (!recorded) return context.Fail(kExitUsage, recorded.error().message);
    listed = recorded->size();
    problems = ApplyShard(*recorded, shard, EstimatedTuneCost);
  } else {
    auto problems_of = [&](const Shape& shape) {
      std::vector<Problem> of_shape;
      for (int count : threads->counts) {
        of_shape.push_back(Problem{kind->dtype, kind->layout, kind->trans_a, kind->trans_b,
                                   shape.m, shape.n, shape.k, count,
                                   options.packed_b ? CallForm::kPackedB : CallForm::kPlain,
                                   options.batch});
      }
      return of_shape;
    };
    auto cost = [&](const Shape& shape) {
      double sum = 0.0;
      for (const Problem& problem : problems_of(shape)) sum += EstimatedTuneCost(problem);
      return sum;
    };
    listed = shapes->size();
    for (const Shape& shape : ApplyShard(*shapes, shard, cost)) {
      for (const Problem& problem : problems_of(shape)) problems.push_back(problem);
    }
  }
  if (problems.empty() && (listed == 0 || shard.count == 1)) {
    return context.Fail(kExitUsage, "nothing to tune: the list is empty");
  }
  if (problems.empty()) {
    // More shards than items: this shard's DB is still created, empty, so that a merge of every
    // shard's DB (docs/deploy.md) finds one file per shard.
    auto store = TuningStore::Open(options.db, DbOpenMode::kReadWrite);
    if (!store) return context.Fail(kExitFailure, store.error().message);
    const char* what = options.from_record.empty() ? " shape" : " recorded problem";
    *context.err << "mmtune: shard " << options.shard << " has nothing to tune (" << listed
                 << what << (listed == 1 ? "" : "s") << " for " << shard.count << " shards); "
                 << options.db << " holds no winners\n";
    return;
  }

  // The DB is opened (and so checked) before any wait for another tune; the lock is released
  // after the DB closes, hence declared before it (see TuneLock).
  std::optional<TuneLock> lock;
  auto store = TuningStore::Open(options.db, DbOpenMode::kReadWrite);
  if (!store) return context.Fail(kExitFailure, store.error().message);
  TuneLockOptions lock_options;
  lock_options.wait = !options.no_wait;
  lock_options.on_wait = [&](const std::string& message) {
    *context.err << "mmtune: " << message << " (--no-wait to exit instead)\n";
  };
  auto acquired = TuneLock::Acquire(machine->fingerprint, options.db, lock_options);
  if (!acquired) return context.Fail(kExitFailure, acquired.error().message);
  lock.emplace(std::move(*acquired));

  auto registered = RegisterTuneMachine(*store, &*machine, [&](const std::string& what) {
    *context.err << what << "\n";
  });
  if (!registered) return context.Fail(kExitFailure, registered.error().message);
  if (!registered->note.empty()) *context.err << "mmtune: warning: " << registered->note << "\n";
  const nlohmann::json& peaks = registered->peaks;
  const std::int64_t machine_id = registered->id;
  // Every shard records every range: the merged DB then maps each problem of a range to its
  // bucket whichever shard tuned that bucket.
  std::vector<ShapeRangeRecord> range_records;
  for (const ShapeRange& range : *ranges) {
    if (range.IsSingleShape()) continue;
    for (int count : threads->counts) {
      ShapeRangeRecord record{machine->fingerprint, kind->dtype, kind->layout, kind->trans_a,
                              kind->trans_b, count, range, *buckets, ""};
      if (Status status = store->RecordShapeRange(machine_id, record); !status) {
        return context.Fail(kExitFailure, status.error().message);
      }
      range_records.push_back(record);
    }
  }

  TuneRequest request;
  request.problems = problems;
  request.ranges = range_records;
  request.strategy = options.strategy;
  request.budget_seconds = options.budget;
  request.max_evals = options.evals;
  request.seed = options.seed;
  // A recorded problem's threads are its runtime's budget, which the search spends as it finds.
  request.search_threads = threads->search || !options.from_record.empty();
  request.measure.cold_cache = options.cold_cache;
  request.command = options.command_line;

  *context.err << "tuning " << problems.size() << (problems.size() == 1 ? " shape" : " shapes")
               << " on " << machine->cpu.brand << " (" << machine->fingerprint << "), "
               << ToString(machine->kernel_isa) << " kernels, strategy " << options.strategy
               << ", budget " << (options.budget > 0 ? FormatDuration(options.budget) : "none")
               << " per shape" << (options.evals > 0 ? ", at most " +
                                                           std::to_string(options.evals) +
                                                           " evals per shape"
                                                     : "")
               << ", DB " << options.db << "\n";
  const StopSignals stop_signals;
  ProgressPrinter printer(*context.err);
  auto summary = RunTuning(*store, machine_id, *machine, request, DefaultThreadPool(),
                           [&](const TuneEvent& event) { printer(event); }, &g_stop);
  if (!summary) return context.Fail(kExitFailure, summary.error().message);
  PrintSummary(*context.out, *summary, peaks,
               options.cold_cache ? 0 : WarmCacheBytes(machine->topology, peaks));
  if (summary->interrupted) {
    return context.Fail(130, "interrupted; measurements so far are in " + options.db +
                                 " (run the same command again to resume)");
  }
  if (options.validate > 0 &&
      RunValidation(*store, *summary, machine_id, *machine, range_records, options.validate,
                    request, context) &&
      g_stop.load()) {
    context.Fail(130, "interrupted; the winners and the shapes validated so far are in " +
                          options.db);
  }
}

}  // namespace

void SetupTuneCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Find the fastest kernel config for each shape on this machine: verify every candidate "
      "against the reference, time it, and store all measurements and the winners in the DB. "
      "Interrupted or repeated runs resume: measured candidates are not re-run.");
  tune->add_option("--db", options->db, "SQLite tuning DB (created if missing)")
      ->capture_default_str();
  tune->add_option("--shapes", options->shapes,
                   "Shapes to tune: MxNxK[,MxNxK...], each of M, N, K a size or a range LO..HI "
                   "(e.g. 1..2048x4096x4096), which tunes its bucket shapes (--buckets) and lets "
                   "the runtime run any shape inside it with its bucket's winner");
  tune->add_option("--shapes-file", options->shapes_file,
                   "CSV (MxNxK or M,N,K per line, ranges allowed) or JSON (array of \"MxNxK\" "
                   "or {m,n,k})");
  tune->add_option("--buckets", options->buckets,
                   "Bucket shapes of a range: pow2 (its ends and the powers of two between) or "
                   "step:S (its ends and the multiples of S between)")
      ->capture_default_str();
  std::string preset_help = "Built-in shape set (default quick):";
  for (const ShapePreset& preset : ShapePresets()) {
    preset_help += "\n  " + preset.name + ": " + preset.description;
  }
  tune->add_option("--preset", options->preset, preset_help);
  AddProblemKindOptions(*tune, options->kind);
  tune->add_option("--threads", options->threads,
                   "Threads per GEMM: 'auto' (as many as the runtime uses, MMTUNE_NUM_THREADS "
                   "included, the count searched like any other parameter), or a list of "
                   "numbers and 'all', each tuned as given (e.g. 1,2)")
      ->capture_default_str();
  std::string strategy_help = "Search strategy:";
  for (const std::string& name : StrategyNames()) strategy_help += " " + name;
  strategy_help += " (auto: analytical seed + warm start from the nearest tuned shapes + local "
                   "and evolutionary search; see docs/search.md)";
  tune->add_option("--strategy", options->strategy, strategy_help)->capture_default_str();
  tune->add_option("--budget", options->budget,
                   "Seconds of search per shape, 0 = no limit (the confirm round comes on "
                   "top, at most a quarter of it past its minimum samples)")
      ->capture_default_str();
  tune->add_option("--evals", options->evals, "At most this many candidates per shape, 0 = no limit")
      ->capture_default_str();
  tune->add_option("--seed", options->seed, "Random seed of the search (reproducible proposals)")
      ->capture_default_str();
  tune->add_flag("--cold-cache", options->cold_cache,
                 "Time with operands evicted from the caches (rotating copies larger than the "
                 "last-level cache) instead of warm");
  tune->add_flag("--packed-b", options->packed_b,
                 "Tune for weights packed once (Runtime::PackB, `bench --packed-b`): time each "
                 "candidate with B packed beforehand, untimed, and keep these winners apart "
                 "from a plain call's (single shapes only)");
  tune->add_option("--batch", options->batch,
                   "Tune for batches of B GEMMs of each shape (Runtime::GemmBatch, `bench "
                   "--batch`): time the batch as a whole, each item on operands of its own, and "
                   "keep these winners apart from a single call's (single shapes only)")
      ->capture_default_str();
  tune->add_flag("--no-wait", options->no_wait,
                 "Exit with an error at once when another tune runs on this machine or this DB, "
                 "instead of waiting for it (one tune at a time keeps timings undisturbed)");
  tune->add_option("--validate", options->validate,
                   "After the tune, measure N random shapes inside each range that are not "
                   "buckets: tune each on its own (not stored as a winner) and time it beside "
                   "what the runtime runs for it; stored in the DB, shown by `mmtune report`")
      ->capture_default_str();
  tune->add_option("--shard", options->shard,
                   "Tune only part i of N of the shape list (i/N, 0-based), for N machines; "
                   "parts are balanced by estimated cost");
  tune->add_option("--from-record", options->from_record,
                   "Tune the problems an application recorded with MMTUNE_RECORD (most "
                   "time-consuming first; each keeps its dtype, layout, transposes and threads, "
                   "capped at this machine's cores)");
  tune->callback([options, &context, tune]() {
    options->command_line = context.command_line;
    options->problem_options_given = false;
    for (const char* name :
         {"--dtype", "--layout", "--trans", "--threads", "--packed-b", "--batch"}) {
      if (tune->get_option(name)->count() > 0) options->problem_options_given = true;
    }
    RunTune(*options, context);
  });
}

}  // namespace mmtune::cli
