// mmtune's kernels against the peers, in one process, on the same buffers: per shape, the
// analytical default (through GemmPlan::Run and, where it is the direct family, also bound to
// the shape once: `mmtune_bound`), the best config of a two-stage sweep (every micro-kernel
// with model blocks, then every block/prefetch/loop variant of the two fastest kernels), and
// each peer library found at build time. Counters: GFLOP/s and % of the measured peak (`mmtune info --measure`).
//
//   ./build/bench/gemm_bench [--mmtune_threads=1,2] [--mmtune_dtypes=f32,f64]
//       [--mmtune_shapes=anchors|small|large|transformer|MxNxK,...] [--mmtune_sweep=quick|none]
//       [--mmtune_keep_openblas_core] [--mmtune_configs='CONFIG;CONFIG...']
//       [Google Benchmark flags]
//
// --mmtune_configs adds one series per named config (`mmtune_config1`, ...; the text form of
// KernelConfig::ToString, e.g. 'packed avx2 6x16 ku1 mc132 kc512 nc2048 pf0/0/c jc t1'), run on
// every shape where it is valid with its threads set to each --mmtune_threads value: an A/B of
// configs interleaved with the default and the peers on the same buffers.
//
// Interleaving: run with --benchmark_enable_random_interleaving=true and
// --benchmark_repetitions=N so that implementations alternate (the default here: 3).
// OpenBLAS: if OPENBLAS_CORETYPE is set (it forces e.g. the Haswell kernels), the benchmark
// re-executes itself without it so OpenBLAS runs its native core, unless
// --mmtune_keep_openblas_core is given. The active core is printed in the context.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "comparison/peer_libraries.h"
#include "common/log.h"
#include "common/text.h"
#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "machine/machine.h"
#include "search/space.h"
#include "tuner/peak.h"

namespace mmtune::bench {
namespace {

const std::map<std::string, std::vector<Shape>>& ShapeSets() {
  static const std::map<std::string, std::vector<Shape>> sets = {
      {"small", {{8, 8, 8}, {16, 16, 16}, {24, 24, 24}, {32, 32, 32}, {48, 48, 48}, {64, 64, 64}}},
      {"large", {{128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
                 {2048, 2048, 2048}, {1000, 1000, 1000}, {127, 257, 509}}},
      {"transformer", {{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}, {512, 4096, 4096},
                       {33, 4096, 17}, {1, 4096, 4096}, {1, 11008, 4096}}},
  };
  return sets;
}

std::vector<Shape> ShapesFor(const std::string& name) {
  const auto& sets = ShapeSets();
  if (name == "anchors") {
    std::vector<Shape> all;
    for (const char* set : {"small", "large", "transformer"}) {
      const auto& shapes = sets.at(set);
      all.insert(all.end(), shapes.begin(), shapes.end());
    }
    return all;
  }
  if (auto it = sets.find(name); it != sets.end()) return it->second;
  std::vector<Shape> shapes;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t comma = name.find(',', start);
    auto shape = ParseShape(name.substr(start, comma - start));
    if (!shape) {
      std::fprintf(stderr, "gemm_bench: error: %s\n", shape.error().message.c_str());
      std::exit(2);
    }
    shapes.push_back(*shape);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shapes;
}

struct Options {
  std::vector<int> threads = {1};
  std::vector<DType> dtypes = {DType::kF32};
  std::vector<Shape> shapes = ShapesFor("anchors");
  bool sweep = true;
  std::vector<KernelConfig> configs;  // --mmtune_configs, in the order given
};

// Appends the items of `list`, `separator`-separated, each through `parse`, to `out`; the first
// item that does not parse (an empty one included: "", "1,,2", "1,") ends the program with its
// error (exit status 2, a command-line error).
template <typename T, typename Parse>
void ParseEach(std::string_view list, char separator, Parse parse, std::vector<T>& out) {
  for (std::string_view text : Split(list, separator)) {
    auto item = parse(text);
    if (!item) {
      std::fprintf(stderr, "gemm_bench: error: %s\n", item.error().message.c_str());
      std::exit(2);
    }
    out.push_back(*item);
  }
}

// One --mmtune_threads item: a whole number of threads from 1 to kMaxThreads. (More threads
// than cores is allowed: an oversubscription experiment is a benchmark's business.)
Result<int> ParseThreadCount(std::string_view text) {
  constexpr int kMaxThreads = 1024;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1 ||
      value > kMaxThreads) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--mmtune_threads takes numbers from 1 to " + std::to_string(kMaxThreads) +
                         " separated by commas, not '" + std::string(text) + "'");
  }
  return value;
}

// One --mmtune_dtypes item: f32 or f64, the types whose peers this benchmark calls (bf16 and s8:
// lowp_bench, or `mmtune bench --dtype`).
Result<DType> ParseRealDType(std::string_view text) {
  auto dtype = ParseDType(text);
  if (dtype && *dtype != DType::kF32 && *dtype != DType::kF64) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--mmtune_dtypes takes f32 and f64, not '" + std::string(text) +
                         "' (bf16 and s8: lowp_bench or mmtune bench --dtype)");
  }
  return dtype;
}

// Removes the --mmtune_* flags from argv (Google Benchmark rejects flags it does not know).
Options ParseOptions(int* argc, char** argv) {
  Options options;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const std::size_t len = std::strlen(flag);
      return arg.compare(0, len, flag) == 0 ? argv[i] + len : nullptr;
    };
    if (const char* list = value("--mmtune_threads=")) {
      options.threads.clear();
      ParseEach<int>(list, ',', ParseThreadCount, options.threads);
    } else if (const char* dtypes = value("--mmtune_dtypes=")) {
      options.dtypes.clear();
      ParseEach<DType>(dtypes, ',', ParseRealDType, options.dtypes);
    } else if (const char* shapes = value("--mmtune_shapes=")) {
      options.shapes = ShapesFor(shapes);  // a malformed list exits here
    } else if (const char* sweep = value("--mmtune_sweep=")) {
      options.sweep = std::string(sweep) != "none";
    } else if (const char* configs = value("--mmtune_configs=")) {
      ParseEach<KernelConfig>(configs, ';', ParseKernelConfig, options.configs);
    } else if (arg == "--mmtune_keep_openblas_core") {
      // Handled before re-execution; nothing to do here.
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return options;
}

// Operands shared by every implementation of one (dtype, shape): random values in [-1, 1).
template <typename T>
struct Buffers {
  std::vector<T> a, b, c;
};

template <typename T>
Buffers<T>& BuffersFor(const Shape& s) {
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>,
                  std::unique_ptr<Buffers<T>>>
      cache;
  auto& slot = cache[{s.m, s.n, s.k}];
  if (!slot) {
    slot = std::make_unique<Buffers<T>>();
    std::mt19937_64 rng(static_cast<std::uint64_t>(s.m * 131 + s.n * 7 + s.k));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    auto fill = [&](std::vector<T>& v, std::int64_t count) {
      v.resize(static_cast<std::size_t>(count));
      for (T& x : v) x = static_cast<T>(dist(rng));
    };
    fill(slot->a, s.m * s.k);
    fill(slot->b, s.k * s.n);
    fill(slot->c, s.m * s.n);
  }
  return *slot;
}

template <typename T>
GemmArgs<T> ArgsFor(const Shape& s, Buffers<T>& buf) {
  return GemmArgs<T>{Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, T(1),
                     buf.a.data(), s.k, buf.b.data(), s.n, T(0), buf.c.data(), s.n, {}};
}

// A fast wrong kernel must never be reported: 64 sampled elements of C against a double-precision
// dot product.
template <typename T>
bool SampledCheck(const Shape& s, const Buffers<T>& buf) {
  std::mt19937_64 rng(1);
  const double eps = std::numeric_limits<T>::epsilon();
  for (int sample = 0; sample < 64; ++sample) {
    const std::int64_t i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.m));
    const std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.n));
    double sum = 0.0, bound = 0.0;
    for (std::int64_t p = 0; p < s.k; ++p) {
      const double term = static_cast<double>(buf.a[i * s.k + p]) * buf.b[p * s.n + j];
      sum += term;
      bound += std::abs(term);
    }
    if (std::abs(buf.c[i * s.n + j] - sum) > (s.k + 4) * eps * bound + eps) return false;
  }
  return true;
}

// Seconds per call of `config`: the fastest of up to three timed batches (each >= ~5 ms). A
// config whose first call is already `give_up` times slower than `best_so_far` is not timed
// further (early skip, as the tuner does), so hopeless candidates cost one call.
template <typename T>
double TimeConfig(const KernelConfig& config, const Shape& s, Buffers<T>& buf,
                  double best_so_far = 1e30, double give_up = 1.5) {
  GemmArgs<T> args = ArgsFor(s, buf);
  auto plan = GemmPlan<T>::Create(config);
  if (!plan) return 1e30;
  const auto first_start = std::chrono::steady_clock::now();
  if (!plan->Run(args).ok()) return 1e30;
  const double first =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count();
  if (first > give_up * best_so_far && first > 1e-4) return first;
  const double flops = 2.0 * s.m * s.n * s.k;
  const int reps = std::max(1, static_cast<int>(5e7 / std::max(1.0, flops)));
  double best = first;
  for (int batch = 0; batch < 3; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) static_cast<void>(plan->Run(args));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
    best = std::min(best, seconds);
  }
  return best;
}

// Two stages, starting from the runtime's untuned default (the model, on DefaultThreadCount's
// threads), which stays where nothing beats it: every kernel (family x tile x unroll) on
// `problem.threads` once with the blocks nearest the model's, then every block, prefetch and
// loop variant of the two fastest kernels. Candidates slower than the best so far by 1.5x after
// one call are dropped.
template <typename T>
KernelConfig SweepBest(const Problem& problem, const Machine& machine, const Shape& s) {
  Buffers<T>& buf = BuffersFor<T>(s);
  const std::vector<KernelConfig> space = GenerateSpace(problem, machine);
  const KernelConfig model = UntunedConfig(problem, machine);
  auto distance = [&](const KernelConfig& c) {
    return std::abs(c.kc - model.kc) + std::abs(c.mc - model.mc) + std::abs(c.nc - model.nc) +
           c.prefetch_a + c.prefetch_b + (c.parallel_loop == model.parallel_loop ? 0 : 1);
  };
  std::map<std::tuple<int, int, int, int>, KernelConfig> per_kernel;
  for (const KernelConfig& c : space) {
    const auto key = std::make_tuple(static_cast<int>(c.family), c.mr, c.nr, c.k_unroll);
    auto it = per_kernel.find(key);
    if (it == per_kernel.end() || distance(c) < distance(it->second)) per_kernel[key] = c;
  }
  double best_time = TimeConfig<T>(model, s, buf);
  KernelConfig best = model;
  std::vector<std::pair<double, KernelConfig>> ranked;
  for (auto& [key, config] : per_kernel) {
    const double t = TimeConfig<T>(config, s, buf, best_time);
    ranked.push_back({t, config});
    if (t < best_time) {
      best_time = t;
      best = config;
    }
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  const std::size_t finalists = std::min<std::size_t>(2, ranked.size());
  for (const KernelConfig& c : space) {
    for (std::size_t f = 0; f < finalists; ++f) {
      const KernelConfig& r = ranked[f].second;
      if (c.family == r.family && c.mr == r.mr && c.nr == r.nr && c.k_unroll == r.k_unroll &&
          !(c == r)) {
        const double t = TimeConfig<T>(c, s, buf, best_time);
        if (t < best_time) {
          best_time = t;
          best = c;
        }
      }
    }
  }
  return best;
}

struct Setup {
  Machine machine;
  PeakReport peaks;
  std::vector<Peer> peers;
};

Setup& Global() {
  static Setup setup;
  return setup;
}

double PeakGflops(DType dtype, int threads) {
  const PeakReport& p = Global().peaks;
  const std::optional<Throughput>& t = dtype == DType::kF32 ? p.f32_fma : p.f64_fma;
  if (!t) return 0.0;
  return threads > 1 ? t->all_cores * threads / std::max(1, p.cores) : t->one_core;
}

// GFLOP/s and % of peak from our own wall-clock reading of the timed loop (plain counters, so
// the console shows the numbers without a "/s" suffix and the JSON holds them as they are).
void SetCounters(benchmark::State& state, const Shape& s, DType dtype, int threads,
                 double seconds) {
  if (seconds <= 0.0 || state.iterations() == 0) return;
  const double gflops = 2.0 * s.m * s.n * s.k * static_cast<double>(state.iterations()) /
                        seconds * 1e-9;
  state.counters["GFLOP/s"] = gflops;
  const double peak = PeakGflops(dtype, threads);
  if (peak > 0) state.counters["%peak"] = 100.0 * gflops / peak;
}

// How mmtune's side is called: through GemmPlan::Run with the arguments on each call, or
// through a plan bound to the shape once (GemmPlan::Bind), passing only the three matrices, as
// libxsmm's kernel is dispatched once and then called with pointers.
enum class CallPath { kPlan, kBound };

// Times `config` on `s`: checked against a sampled reference first (also through the bound
// plan where `path` is kBound), then the timed loop; the label names the config.
template <typename T>
void RunConfig(benchmark::State& state, Shape s, int threads, const KernelConfig& config,
               CallPath path = CallPath::kPlan) {
  const DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  Buffers<T>& buf = BuffersFor<T>(s);
  GemmArgs<T> args = ArgsFor(s, buf);
  auto plan = GemmPlan<T>::Create(config);
  if (!plan || !plan->Run(args).ok() || !SampledCheck(s, buf)) {
    state.SkipWithError(("wrong result or invalid config: " + config.ToString()).c_str());
    return;
  }
  auto start = std::chrono::steady_clock::now();
  if (path == CallPath::kBound) {
    auto bound = plan->Bind(args);
    if (!bound) {
      state.SkipWithError(bound.error().message.c_str());
      return;
    }
    std::fill(buf.c.begin(), buf.c.end(), T(0));
    if (!bound->Run(args.a, args.b, args.c).ok() || !SampledCheck(s, buf)) {
      state.SkipWithError(("wrong result through the bound plan: " + config.ToString()).c_str());
      return;
    }
    start = std::chrono::steady_clock::now();
    for (auto _ : state) {
      static_cast<void>(bound->Run(args.a, args.b, args.c));
      benchmark::ClobberMemory();
    }
  } else {
    for (auto _ : state) {
      static_cast<void>(plan->Run(args));
      benchmark::ClobberMemory();
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.SetLabel(config.ToString());
  SetCounters(state, s, dtype, threads, seconds);
}

template <typename T>
void RunMmtune(benchmark::State& state, Shape s, int threads, bool best,
               CallPath path = CallPath::kPlan) {
  const DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  const Problem problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, threads};
  // The default runs as the runtime runs an untuned shape with `threads` to spend
  // (UntunedConfig: a 16^3 stays on one thread). The sweep searches configs of exactly
  // `threads` from that default, which it keeps where none beats it (as the tuner does).
  static std::map<std::string, KernelConfig> chosen;
  const std::string key = problem.ToString() + (best ? " best" : " default");
  if (!chosen.count(key)) {
    chosen[key] = best ? SweepBest<T>(problem, Global().machine, s)
                       : UntunedConfig(problem, Global().machine);
  }
  RunConfig<T>(state, s, threads, chosen[key], path);
}

template <typename T>
void RunPeer(benchmark::State& state, Shape s, int threads, const Peer& peer) {
  const DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  Buffers<T>& buf = BuffersFor<T>(s);
  auto call = [&]() {
    if constexpr (sizeof(T) == 4) {
      return peer.sgemm(threads, s.m, s.n, s.k, buf.a.data(), buf.b.data(), buf.c.data());
    } else {
      return peer.dgemm(threads, s.m, s.n, s.k, buf.a.data(), buf.b.data(), buf.c.data());
    }
  };
  if (!call() || !SampledCheck(s, buf)) {
    state.SkipWithError("peer failed or returned a wrong result");
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    call();
    benchmark::ClobberMemory();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SetCounters(state, s, dtype, threads, seconds);
}

template <typename T>
void Register(const Options& options, DType dtype) {
  for (int threads : options.threads) {
    for (const Shape& s : options.shapes) {
      const std::string prefix = std::string(ToString(dtype)) + "/t" + std::to_string(threads) +
                                 "/" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                 std::to_string(s.k) + "/";
      benchmark::RegisterBenchmark((prefix + "mmtune_default").c_str(),
                                   [=](benchmark::State& st) { RunMmtune<T>(st, s, threads, false); })
          ->UseRealTime();
      // Where the call itself shows: the small problems the direct family runs.
      const Problem problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k,
                            threads};
      if (UntunedConfig(problem, Global().machine).family == KernelFamily::kDirect) {
        benchmark::RegisterBenchmark(
            (prefix + "mmtune_bound").c_str(),
            [=](benchmark::State& st) { RunMmtune<T>(st, s, threads, false, CallPath::kBound); })
            ->UseRealTime();
      }
      if (options.sweep) {
        benchmark::RegisterBenchmark((prefix + "mmtune_best").c_str(),
                                     [=](benchmark::State& st) { RunMmtune<T>(st, s, threads, true); })
            ->UseRealTime();
      }
      for (std::size_t i = 0; i < options.configs.size(); ++i) {
        KernelConfig config = options.configs[i];
        config.threads = threads;
        if (const Status valid = config.Validate(problem, Global().machine); !valid) {
          Log(LogLevel::kWarning, "mmtune_config" + std::to_string(i + 1) + " skipped on " +
                                      problem.ToString() + ": " + valid.error().message);
          continue;
        }
        benchmark::RegisterBenchmark(
            (prefix + "mmtune_config" + std::to_string(i + 1)).c_str(),
            [=](benchmark::State& st) { RunConfig<T>(st, s, threads, config); })
            ->UseRealTime();
      }
      for (const Peer& peer : Global().peers) {
        if ((sizeof(T) == 4 ? peer.sgemm == nullptr : peer.dgemm == nullptr)) continue;
        benchmark::RegisterBenchmark((prefix + peer.name).c_str(),
                                     [=](benchmark::State& st) { RunPeer<T>(st, s, threads, peer); })
            ->UseRealTime();
      }
    }
  }
}

}  // namespace
}  // namespace mmtune::bench

int main(int argc, char** argv) {
  using namespace mmtune;
  using namespace mmtune::bench;
  bool keep_core = false;
  for (int i = 1; i < argc; ++i) keep_core |= std::strcmp(argv[i], "--mmtune_keep_openblas_core") == 0;
  // Options are checked before the re-execution, so that a bad command line is one error line
  // wherever OPENBLAS_CORETYPE is set; ParseOptions compacts argv, so the re-execution gets a copy.
  std::vector<char*> original_argv(argv, argv + argc + 1);
  const Options options = ParseOptions(&argc, argv);
  ReexecWithoutForcedOpenBlasCore("gemm_bench", keep_core, original_argv.data());
  // Interleave implementations and repeat by default; explicit flags override these.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  std::string repetitions = "--benchmark_repetitions=3";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  args.insert(args.begin() + 1, {interleave.data(), repetitions.data(), aggregates.data()});
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;

  auto machine = DetectHostMachine();
  if (!machine) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", machine.error().message.c_str());
    return 1;
  }
  Global().machine = *machine;
  PeakOptions peak_options;
  peak_options.bandwidth_bytes = 64u << 20;
  auto peaks = MeasurePeaks(*machine, peak_options);
  if (!peaks) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", peaks.error().message.c_str());
    return 1;
  }
  Global().peaks = *peaks;
  Global().peers = AvailablePeers();

  benchmark::AddCustomContext("mmtune_fingerprint", machine->fingerprint);
  benchmark::AddCustomContext("mmtune_kernel_isa", ToString(machine->kernel_isa));
  benchmark::AddCustomContext(
      "peak_f32_gflops_1core",
      std::to_string(peaks->f32_fma ? peaks->f32_fma->one_core : 0.0));
  benchmark::AddCustomContext(
      "peak_f64_gflops_1core",
      std::to_string(peaks->f64_fma ? peaks->f64_fma->one_core : 0.0));
  benchmark::AddCustomContext(
      "peak_f32_gflops_all_cores",
      std::to_string(peaks->f32_fma ? peaks->f32_fma->all_cores : 0.0));
  std::string peer_names;
  for (const Peer& peer : Global().peers) {
    benchmark::AddCustomContext("peer_" + peer.name, peer.version);
    peer_names += (peer_names.empty() ? "" : ", ") + peer.name;
  }
  if (peer_names.empty()) {
    Log(LogLevel::kWarning, "no peer library found at build time: comparisons are missing");
  }
  for (DType dtype : options.dtypes) {
    if (dtype == DType::kF32) {
      Register<float>(options, dtype);
    } else {
      Register<double>(options, dtype);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
