#include "cli/bench_command.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command_helpers.h"
#include "comparison/comparison_bench.h"
#include "comparison/peer_libraries.h"
#include "db/store.h"
#include "tuner/peak.h"
#include "tuner/shape_sets.h"

namespace mmtune::cli {
namespace {

struct BenchOptions {
  std::string db = "mmtune.db";
  std::string shapes;
  std::string shapes_file;
  std::string preset;
  std::string dtype = "f32";
  std::string threads = "1";
  std::string against = "all";
  std::string json;
  int repetitions = 3;
  double min_time = 0.2;
  bool keep_openblas_core = false;
  bool packed_b = false;
  std::int64_t batch = 0;
  std::string epilogue;
  bool dequantize = false;
  bool db_given = false;
};

// "all", "none" or a comma-separated list of peer names.
Result<std::vector<std::string>> ParsePeers(const std::string& text) {
  const auto versions = PeerVersions();
  std::vector<std::string> names;
  if (text == "all") {
    for (const auto& [name, version] : versions) names.push_back(name);
    return names;
  }
  if (text == "none") return names;
  std::stringstream list(text);
  std::string name;
  const std::set<std::string> known = {"openblas", "onednn", "libxsmm"};
  while (std::getline(list, name, ',')) {
    if (known.count(name) == 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--against: unknown peer '" + name +
                           "' (expected openblas, onednn, libxsmm, all or none)");
    }
    names.push_back(name);
  }
  return names;
}

void RunBench(const BenchOptions& options, Context& context) {
  const int sources =
      !options.shapes.empty() + !options.shapes_file.empty() + !options.preset.empty();
  if (sources > 1) {
    return context.Fail(kExitUsage, "give only one of --shapes, --shapes-file and --preset");
  }
  const std::string preset = options.preset.empty() ? "quick" : options.preset;
  auto shapes = !options.shapes.empty()        ? ParseShapeList(options.shapes)
                : !options.shapes_file.empty() ? ReadShapesFile(options.shapes_file)
                                               : PresetShapes(preset);
  if (!shapes) return context.Fail(kExitUsage, shapes.error().message);
  auto dtype = ParseDType(options.dtype);
  if (!dtype) return context.Fail(kExitUsage, dtype.error().message);
  auto peers = ParsePeers(options.against);
  if (!peers) return context.Fail(kExitUsage, peers.error().message);
  if (options.repetitions < 1 || !(options.min_time > 0.0)) {
    return context.Fail(kExitUsage, "--repetitions must be >= 1 and --min-time > 0");
  }
  auto machine = DetectHostMachineOrFail(context);
  if (!machine) return;
  auto threads = ParseThreads(options.threads, std::max(1, machine->topology.cores));
  if (!threads) return context.Fail(kExitUsage, threads.error().message);

  ComparisonRequest request;
  for (const Shape& shape : *shapes) {
    request.problems.push_back(Problem{*dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, shape.m,
                                       shape.n, shape.k, *threads});
  }
  request.db_path = DbToReadOrNone(options.db, options.db_given);
  request.peers = *peers;
  request.repetitions = options.repetitions;
  request.min_time_seconds = options.min_time;
  request.json_path = options.json;
  request.packed_b = options.packed_b;
  request.batch = options.batch;
  request.dequantize = options.dequantize;
  if (!options.epilogue.empty()) {
    if (auto status = ParseEpilogue(options.epilogue, &request); !status) {
      return context.Fail(kExitUsage, status.error().message);
    }
  }

  if (auto status = CheckComparisonRequest(request); !status) {
    return context.Fail(kExitUsage, status.error().message);
  }

  // Peaks for "% of peak": the ones tuning stored, else measured below (not stored: the DB is
  // only read here). Read before the re-execution, so that a missing or foreign DB is one error
  // line wherever OPENBLAS_CORETYPE is set; the store is closed before it.
  nlohmann::json peaks;
  if (!request.db_path.empty()) {
    auto store = TuningStore::Open(options.db, DbOpenMode::kReadOnly);
    if (!store) return context.Fail(kExitFailure, store.error().message);
    auto known = store->FindMachine(machine->fingerprint);
    if (!known) return context.Fail(kExitFailure, known.error().message);
    peaks = *known ? (*known)->peaks : nlohmann::json(nullptr);
    // The default rows of single GEMMs size their blocks as the runtime reading this DB does;
    // those of packed weights and batches come from a runtime without a DB, which has no
    // measured facts.
    TakeMeasuredFacts(peaks, &*machine);
  }

  // OpenBLAS picks its kernels when it loads; a forced core would be compared, not OpenBLAS.
  const bool with_openblas =
      std::find(peers->begin(), peers->end(), "openblas") != peers->end();
  if (with_openblas) {
    std::vector<std::string> argv_text = {"mmtune"};
    argv_text.insert(argv_text.end(), context.args.begin(), context.args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_text) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ReexecWithoutForcedOpenBlasCore("mmtune bench", options.keep_openblas_core, argv.data());
  }

  // After the re-execution, so that the line is said once.
  if (request.db_path.empty()) SayNoDb(options.db, context);
  if (peaks.is_null()) {
    *context.err << "measuring this machine's peaks ("
                 << (request.db_path.empty() ? "no DB" : options.db + " has none for it")
                 << ") ...\n";
    auto report = MeasurePeaks(*machine, PeakOptions{});
    if (!report) return context.Fail(kExitFailure, report.error().message);
    peaks = *report;
  }

  std::string found;
  for (const auto& [name, version] : PeerVersions()) {
    found += "\n  " + name + ": " + version;
  }
  *context.err << "peers in this build:" << (found.empty() ? " none" : found) << "\n";
  if (auto status = RunComparison(request, *machine, peaks); !status) {
    const bool usage = status.error().code == ErrorCode::kUnsupported ||
                       status.error().code == ErrorCode::kInvalidArgument;
    return context.Fail(usage ? kExitUsage : kExitFailure, status.error().message);
  }
  if (!options.json.empty()) *context.err << "wrote " << options.json << "\n";
}

}  // namespace

void SetupBenchCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Time the tuned runtime, the analytical default and the peer libraries (OpenBLAS, oneDNN, "
      "libxsmm, those in this build) side by side, in one process on the same buffers, with "
      "GFLOP/s and % of the measured peak. Row-major, no transposes.");
  bench->add_option("--db", options->db, "Tuning DB the runtime reads (never modified)")
      ->capture_default_str();
  bench->add_option("--shapes", options->shapes, "Shapes: MxNxK[,MxNxK...]");
  bench->add_option("--shapes-file", options->shapes_file, "CSV or JSON shape list (as for tune)");
  bench->add_option("--preset", options->preset, "Built-in shape set (default quick)");
  bench->add_option("--dtype", options->dtype,
                    "Element type: f32, f64, bf16 (A and B bf16, C f32) or s8 (A u8, B s8, C s32)")
      ->capture_default_str();
  bench->add_option("--threads", options->threads, "Threads per GEMM: a number or 'all'")
      ->capture_default_str();
  bench->add_option("--against", options->against,
                    "Peers: openblas,onednn,libxsmm (comma-separated), all (those in this build) "
                    "or none")
      ->capture_default_str();
  bench->add_option("--json", options->json,
                    "Also write Google Benchmark's JSON here (for `mmtune report --bench` and "
                    "Google Benchmark's compare.py)");
  bench->add_option("--repetitions", options->repetitions,
                    "Repetitions per implementation, interleaved at random")
      ->capture_default_str();
  bench->add_option("--min-time", options->min_time, "Seconds per repetition")
      ->capture_default_str();
  bench->add_flag("--packed-b", options->packed_b,
                  "B as constant weights, packed once before timing: mmtune's packed weights "
                  "against oneDNN's matmul with prepacked weights (other peers run unpacked; "
                  "'unpacked' is mmtune's plain call)");
  bench->add_option("--batch", options->batch,
                    "Time batches of this many GEMMs of each shape: mmtune's batched call "
                    "against oneDNN's batched matmul ('loop' is one mmtune call per item; other "
                    "peers loop too)");
  bench->add_option("--epilogue", options->epilogue,
                    "Follow each GEMM with a bias per column and/or an activation (bias, relu, "
                    "gelu, silu; e.g. bias+gelu): mmtune's fused epilogue against oneDNN's "
                    "matmul with a bias and a post-op ('plain' is the GEMM alone, 'separate' "
                    "the GEMM then a pass over C; other peers run that pass too); with --batch, "
                    "on every item");
  bench->add_flag("--dequantize", options->dequantize,
                  "s8: dequantize each u8 x s8 product to f32 C in the same pass (a scale for A, "
                  "one per column of B; --epilogue adds a bias and any activation): mmtune's "
                  "fused form against oneDNN's matmul with output scales ('plain' is the s32 "
                  "GEMM, 'separate' the s32 GEMM then a pass over C)");
  bench->add_flag("--keep-openblas-core", options->keep_openblas_core,
                  "Keep an OPENBLAS_CORETYPE from the environment (default: re-run without it so "
                  "OpenBLAS uses this CPU's own kernels)");
  bench->callback([options, &context, bench]() {
    options->db_given = bench->get_option("--db")->count() > 0;
    RunBench(*options, context);
  });
}

}  // namespace mmtune::cli
