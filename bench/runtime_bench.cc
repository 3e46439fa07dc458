// What the runtime costs on top of the kernel it picks.
//
//   lookup/<tier>            one cold lookup in the winner index (what a first call of a shape
//                            pays), with 200 winners loaded
//   overhead/MxNxK           runtime Gemm, and the same problem bound once (Runtime::Bind, a
//                            FixedGemm), vs the same config's GemmPlan::Run called directly,
//                            rotated in batches of about 1 ms (401 rounds) so all see the same
//                            machine state; counters: direct_ns, runtime_ns, fixed_ns,
//                            overhead_pct and fixed_pct (medians of the per-round ratios to
//                            direct; negative: faster than GemmPlan::Run)
//   overhead/control_...     the same comparison of direct against direct: the noise floor
//
//   ./build/bench/runtime_bench [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "machine/machine.h"
#include "mmtune/runtime.h"
#include "runtime/winner_index.h"

namespace mmtune {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRounds = 401;  // batch rounds per overhead benchmark (odd: a true median)

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void BM_Lookup(benchmark::State& state, const Machine* machine, LookupTier want) {
  // 200 winners over f32 row NN shapes between 16 and 4096.
  std::vector<WinnerRecord> winners;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> dim(16, 4096);
  for (int i = 0; i < 200; ++i) {
    WinnerRecord w;
    w.fingerprint = machine->fingerprint;
    w.problem = Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, dim(rng), dim(rng),
                        dim(rng), 1};
    w.config = ModelConfig(w.problem, *machine);
    w.gflops = 50.0;
    winners.push_back(w);
  }
  const WinnerIndex index = WinnerIndex::Build(winners, *machine, nullptr);
  Problem asked = want == LookupTier::kExact ? winners[123].problem
                                             : Problem{DType::kF32, Layout::kRowMajor, Trans::kNo,
                                                       Trans::kNo, 333, 777, 555, 1};
  if (want == LookupTier::kDefault) asked.dtype = DType::kF64;
  for (auto _ : state) {
    const Lookup found = index.Find(asked);
    benchmark::DoNotOptimize(found.config.mr);
    if (found.tier != want) {
      state.SkipWithError("unexpected tier");
      break;
    }
  }
}

void BM_Overhead(benchmark::State& state, std::int64_t size, bool control) {
  RuntimeOptions options;
  options.max_threads = 1;
  auto runtime = Runtime::Open(options);
  if (!runtime) {
    state.SkipWithError(runtime.error().message.c_str());
    return;
  }
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size, size,
                        1};
  const LookupReport report = (*runtime)->Lookup(problem);
  auto config = KernelConfigFromJson(nlohmann::json::parse(report.config_json, nullptr, false));
  auto plan = config ? GemmPlan<float>::Create(*config) : Result<GemmPlan<float>>(config.error());
  if (!plan) {
    state.SkipWithError(plan.error().message.c_str());
    return;
  }
  const std::size_t n = static_cast<std::size_t>(size * size);
  std::vector<float> a(n, 0.5f), b(n, 0.25f), c(n, 0.0f);
  const GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size, size, 1.0f,
                             a.data(), size, b.data(), size, 0.0f, c.data(), size, {}};
  // Batches of about 1 ms, many of them: a short batch rarely holds an interrupt or a
  // frequency step, and the median over hundreds of pairs ignores the ones that do.
  int calls = 1;
  {
    const auto start = Clock::now();
    for (int i = 0; i < 100; ++i) (void)plan->Run(args);
    const double per_call =
        std::chrono::duration<double, std::nano>(Clock::now() - start).count() / 100;
    calls = static_cast<int>(std::clamp(1e6 / std::max(1.0, per_call), 10.0, 1e6));
  }
  // ns a call over one batch of `calls` calls of `call`.
  auto batch = [&](auto&& call) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
  };
  auto direct_batch = [&] { return batch([&] { (void)plan->Run(args); }); };
  auto runtime_batch = [&] {
    if (control) return direct_batch();  // A/A: the noise floor of this comparison
    return batch([&] {
      (void)(*runtime)->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size, size, 1.0f,
                             a.data(), size, b.data(), size, 0.0f, c.data(), size);
    });
  };
  auto fixed = (*runtime)->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size, size, 1.0f,
                                size, size, 0.0f, size);
  if (!fixed) {
    state.SkipWithError(fixed.error().message.c_str());
    return;
  }
  auto fixed_batch = [&] {
    if (control) return direct_batch();
    return batch([&] { static_cast<void>(fixed->Run(a.data(), b.data(), c.data())); });
  };
  direct_batch();
  runtime_batch();
  fixed_batch();
  std::vector<double> direct, through, bound, through_ratio, bound_ratio;
  for (auto _ : state) {
    for (int round = 0; round < kRounds; ++round) {
      // Rotate the order, so that none always runs on the warmest machine.
      double ns[3] = {0, 0, 0};  // direct, runtime, fixed
      for (int slot = 0; slot < 3; ++slot) {
        const int which = (round + slot) % 3;
        ns[which] = which == 0 ? direct_batch() : which == 1 ? runtime_batch() : fixed_batch();
      }
      direct.push_back(ns[0]);
      through.push_back(ns[1]);
      bound.push_back(ns[2]);
      through_ratio.push_back(ns[1] / ns[0]);
      bound_ratio.push_back(ns[2] / ns[0]);
    }
  }
  state.counters["direct_ns"] = Median(direct);
  state.counters["runtime_ns"] = Median(through);
  state.counters["fixed_ns"] = Median(bound);
  state.counters["overhead_pct"] = (Median(through_ratio) - 1.0) * 100.0;
  state.counters["fixed_pct"] = (Median(bound_ratio) - 1.0) * 100.0;
  state.SetLabel(std::string(ToString(report.tier)) + " " + report.config_text);
}

}  // namespace
}  // namespace mmtune

int main(int argc, char** argv) {
  using namespace mmtune;
  benchmark::Initialize(&argc, argv);
  static auto machine = DetectHostMachine();
  if (!machine) {
    std::cerr << "runtime_bench: " << machine.error().message << "\n";
    return 1;
  }
  for (LookupTier tier : {LookupTier::kExact, LookupTier::kNearest, LookupTier::kDefault}) {
    benchmark::RegisterBenchmark((std::string("lookup/") + ToString(tier)).c_str(), BM_Lookup,
                                 &*machine, tier);
  }
  for (std::int64_t size : {8, 16, 32, 128}) {
    const std::string name = "overhead/" + std::to_string(size) + "x" + std::to_string(size) +
                             "x" + std::to_string(size);
    benchmark::RegisterBenchmark(name.c_str(), BM_Overhead, size, false)
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("overhead/control_direct_vs_direct/32x32x32", BM_Overhead,
                               std::int64_t{32}, true)
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
