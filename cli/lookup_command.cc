#include "cli/lookup_command.h"

#include <iomanip>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command_helpers.h"
#include "mmtune/runtime.h"

namespace mmtune::cli {
namespace {

struct LookupOptions {
  std::string db = "mmtune.db";
  std::string shape;
  ProblemKindText kind;
  std::string threads = "all";
  bool allow_compatible = false;
  bool packed_b = false;
  std::int64_t batch = 1;
  bool json = false;
  bool db_given = false;
};

void RunLookup(const LookupOptions& options, Context& context) {
  auto shape = ParseShape(options.shape);
  if (!shape) return context.Fail(kExitUsage, "--shape: " + shape.error().message);
  if (Status forms = CheckCallFormOptions(options.packed_b, options.batch); !forms) {
    return context.Fail(kExitUsage, forms.error().message);
  }
  auto kind = ParseProblemKind(options.kind);
  if (!kind) return context.Fail(kExitUsage, kind.error().message);
  auto machine = DetectHostMachineOrFail(context);
  if (!machine) return;
  auto threads = ParseThreads(options.threads, std::max(1, machine->topology.cores));
  if (!threads) return context.Fail(kExitUsage, threads.error().message);

  RuntimeOptions runtime_options;
  runtime_options.db_path = DbToReadOrNone(options.db, options.db_given);
  if (runtime_options.db_path.empty()) SayNoDb(options.db, context);
  runtime_options.max_threads = *threads;
  runtime_options.allow_compatible = options.allow_compatible;
  auto runtime = Runtime::Open(runtime_options);
  if (!runtime) return context.Fail(kExitFailure, runtime.error().message);

  const Problem problem{kind->dtype, kind->layout, kind->trans_a, kind->trans_b,
                        shape->m, shape->n, shape->k, (*runtime)->max_threads(),
                        options.packed_b ? CallForm::kPackedB : CallForm::kPlain,
                        options.batch};
  const LookupReport report = (*runtime)->Lookup(problem);
  const bool tuned = report.tier != LookupTier::kDefault;

  if (options.json) {
    nlohmann::json out = {
        {"problem", problem.ToString()},
        {"tier", ToString(report.tier)},
        {"threads", report.threads},
        {"threads_reason", report.threads_reason},
        {"config", nlohmann::json::parse(report.config_json, nullptr, false)},
        {"tuned_problem", tuned ? nlohmann::json(report.tuned.ToString()) : nlohmann::json()},
        {"bucket_range", report.bucket_range.empty() ? nlohmann::json()
                                                     : nlohmann::json(report.bucket_range)},
        {"runs", report.runs_text.empty() ? nlohmann::json() : nlohmann::json(report.runs_text)},
        {"gflops", tuned ? nlohmann::json(report.gflops) : nlohmann::json()},
        {"fingerprint", machine->fingerprint},
        {"winners_loaded", (*runtime)->winners_loaded()},
        {"winners_skipped", (*runtime)->skipped_winners().size()},
    };
    *context.out << out.dump(2) << "\n";
    return;
  }
  std::ostringstream gflops;
  gflops << std::fixed << std::setprecision(1) << report.gflops;
  *context.out << problem.ToString() << "\n"
               << "  tier:    " << ToString(report.tier);
  switch (report.tier) {
    case LookupTier::kExact:
      // Weights with no winner tuned for them run the plain call's, and a batch of a count
      // nothing was tuned for runs one item's winner.
      if (report.tuned.form == problem.form && report.tuned.batch == problem.batch) {
        *context.out << " (tuned winner of this problem)\n";
      } else if (problem.batch > 1) {
        *context.out << " (tuned winner of one item, " << report.tuned.ToString()
                     << "; none tuned for batches of " << problem.batch << ")\n";
      } else {
        *context.out << " (tuned winner of this shape called plain; none tuned with B packed "
                        "beforehand)\n";
      }
      break;
    case LookupTier::kBucket:
      *context.out << " (winner of its bucket " << report.tuned.ToString()
                   << " in the tuned range " << report.bucket_range << ")\n";
      break;
    case LookupTier::kNearest:
      *context.out << " (winner of the closest tuned problem, " << report.tuned.ToString()
                   << ")\n";
      break;
    case LookupTier::kDefault:
      if (runtime_options.db_path.empty()) {
        *context.out << " (analytical default: no DB)\n";
      } else {
        *context.out << " (analytical default: no usable winner for this dtype, layout and "
                        "transposes in "
                     << options.db << ")\n";
      }
      break;
  }
  *context.out << "  config:  " << report.config_text << "\n";
  if (!report.runs_text.empty()) {
    *context.out << "  runs:    " << report.runs_text << " (a GEMM of " << problem.m
                 << (problem.m == 1 ? " row" : " rows") << " on the panels of that config)\n";
  }
  *context.out << "  threads: " << report.threads << " of " << (*runtime)->max_threads()
               << " allowed (" << report.threads_reason << ")\n"
               << "  speed:   "
               << (tuned ? gflops.str() + " GFLOP/s measured on " + report.tuned.ToString()
                         : std::string("not measured"))
               << "\n"
               << "  DB:      " << (*runtime)->winners_loaded() << " winners for this machine ("
               << machine->fingerprint << ")";
  if (!(*runtime)->skipped_winners().empty()) {
    *context.out << ", " << (*runtime)->skipped_winners().size() << " skipped as unusable";
  }
  *context.out << "\n";
}

}  // namespace

void SetupLookupCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<LookupOptions>();
  CLI::App* lookup = app.add_subcommand(
      "lookup",
      "Show which kernel config the runtime would run for a problem on this machine: the tuned "
      "winner of that exact problem, else the winner of the nearest tuned problem, else the "
      "analytical default.");
  lookup->add_option("--db", options->db, "Tuning DB or export to read (never modified)")
      ->capture_default_str();
  lookup->add_option("--shape", options->shape, "The problem: MxNxK")->required();
  AddProblemKindOptions(*lookup, options->kind);
  lookup->add_option("--threads", options->threads,
                     "Most threads the call may use: a number or 'all' (as the runtime; "
                     "MMTUNE_NUM_THREADS caps it too)")
      ->capture_default_str();
  lookup->add_flag("--allow-compatible", options->allow_compatible,
                   "Also use winners of machines with the same ISA level and cache sizes");
  lookup->add_flag("--packed-b", options->packed_b,
                   "The config weights packed once (Runtime::PackB) run with: winners of `tune "
                   "--packed-b`, else the plain call's winner, else the packed default");
  lookup->add_option("--batch", options->batch,
                     "The config a batch of B GEMMs of the shape (Runtime::GemmBatch) runs "
                     "with: winners of `tune --batch B`, else what its items run")
      ->capture_default_str();
  lookup->add_flag("--json", options->json, "Print JSON instead of text");
  lookup->callback([options, &context, lookup]() {
    options->db_given = lookup->get_option("--db")->count() > 0;
    RunLookup(*options, context);
  });
}

}  // namespace mmtune::cli
