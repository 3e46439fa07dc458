// The low-precision kernels at their analytical default beside the f32 default on the same
// shape, one thread: what the bf16 and s8 paths reach on this CPU (the AVX-512 dot-product
// kernels where the CPU has AVX512_BF16 / AVX512_VNNI, the AVX2 widening kernels elsewhere).
// Counter gops: 2*M*N*K per second, whatever the element type.
//
//   ./build/bench/lowp_bench --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true
//       [--mmtune_configs='CONFIG;CONFIG...'] [--mmtune_placement=page|malloc]
//
// --mmtune_configs adds one series per named config (`config1`, ...; the text form of
// KernelConfig::ToString) on every shape of each low-precision type it is valid for, checked
// against the default's result first: an A/B of configs interleaved with the defaults.
// The operands start on pages, as in `mmtune bench`; with `malloc` 16 bytes past (glibc's
// malloc, std::vector), where kernels that read A or write C in place in whole cache lines take
// slower paths (the tuner times both: docs/tuning.md, Operands).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "common/text.h"
#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "kernels/thread_pool.h"
#include "machine/machine.h"
#include "tuner/problem_buffers.h"

namespace mmtune {
namespace {

struct BenchShape {
  std::int64_t m, n, k;
};

// Which of ProblemBuffers' two operand copies runs (--mmtune_placement): 0 starts on pages,
// 1 ProblemBuffers::kMallocOffsetBytes past.
int placement_copy = 0;

void Finish(benchmark::State& state, BenchShape s, const KernelConfig& config) {
  state.SetLabel(config.ToString());
  state.counters["gops"] = benchmark::Counter(2.0 * static_cast<double>(s.m * s.n * s.k),
                                              benchmark::Counter::kIsIterationInvariantRate);
}

// Whether `got` is the default config's C: bit for bit for s8 (exact), to a relative 1e-4 for
// bf16 (another kc sums k in other blocks).
template <typename C>
bool SameResult(std::span<const C> got, const std::vector<C>& want) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_same_v<C, float>) {
      if (!(std::fabs(got[i] - want[i]) <= 1e-4f * (1.0f + std::fabs(want[i])))) return false;
    } else if (got[i] != want[i]) {
      return false;
    }
  }
  return true;
}

// The default config on `s`, or `named` where it is given: then checked against the default's
// result first, into a poisoned C (NaN for bf16) so that an element it skips shows. Either
// runs once before it is timed.
template <class Kind>
void BM_Lowp(benchmark::State& state, const Machine* machine, BenchShape s,
             const KernelConfig* named) {
  const Problem problem{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 1};
  ProblemBuffers<typename Kind::A, typename Kind::B, typename Kind::C> buffers(problem, 2, 1,
                                                                               DefaultThreadPool());
  const KernelConfig model = ModelConfig(problem, *machine);
  const KernelConfig config = named != nullptr ? *named : model;
  auto plan = GemmPlan<Kind>::Create(config);
  if (!plan) {
    state.SkipWithError(plan.error().message.c_str());
    return;
  }
  const auto args = buffers.template ArgsFor<GemmArgs<Kind>>(placement_copy, 1, 0);
  if (named != nullptr) {
    auto reference = GemmPlan<Kind>::Create(model);
    if (!reference || !reference->Run(args).ok()) {
      state.SkipWithError("the default config does not run");
      return;
    }
    using C = typename Kind::C;
    const std::span<const C> got(buffers.c(placement_copy),
                                 static_cast<std::size_t>(buffers.c_elements()));
    const std::vector<C> want(got.begin(), got.end());
    buffers.PoisonC(placement_copy);
    if (!plan->Run(args).ok() || !SameResult<C>(got, want)) {
      state.SkipWithError(("wrong result: " + config.ToString()).c_str());
      return;
    }
  } else if (!plan->Run(args).ok()) {
    state.SkipWithError(("failed: " + config.ToString()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(plan->Run(args));
  Finish(state, s, config);
}

// Takes --mmtune_configs and --mmtune_placement out of argv (Google Benchmark rejects flags it
// does not know); a config or placement that does not parse ends the program with its error.
std::vector<KernelConfig> ParseFlags(int* argc, char** argv) {
  constexpr std::string_view kFlag = "--mmtune_configs=";
  constexpr std::string_view kPlacementFlag = "--mmtune_placement=";
  std::vector<KernelConfig> configs;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with(kPlacementFlag)) {
      const std::string_view placement = arg.substr(kPlacementFlag.size());
      if (placement != "page" && placement != "malloc") {
        std::fprintf(stderr,
                     "lowp_bench: error: --mmtune_placement takes page or malloc, not '%s'\n",
                     std::string(placement).c_str());
        std::exit(2);
      }
      placement_copy = placement == "malloc" ? 1 : 0;
      continue;
    }
    if (!arg.starts_with(kFlag)) {
      argv[out++] = argv[i];
      continue;
    }
    for (std::string_view text : Split(arg.substr(kFlag.size()), ';')) {
      auto config = ParseKernelConfig(text);
      if (!config) {
        std::fprintf(stderr, "lowp_bench: error: %s\n", config.error().message.c_str());
        std::exit(2);
      }
      configs.push_back(*config);
    }
  }
  *argc = out;
  return configs;
}

void BM_F32(benchmark::State& state, const Machine* machine, BenchShape s) {
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 1};
  ProblemBuffers<float> buffers(problem, 2, 1, DefaultThreadPool());
  const KernelConfig config = ModelConfig(problem, *machine);
  auto plan = GemmPlan<float>::Create(config);
  if (!plan) {
    state.SkipWithError(plan.error().message.c_str());
    return;
  }
  const auto args = buffers.ArgsFor<GemmArgs<float>>(placement_copy, 1.0f, 0.0f);
  // Run once before it is timed, as the low-precision series are.
  if (!plan->Run(args).ok()) {
    state.SkipWithError(("failed: " + config.ToString()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(plan->Run(args));
  Finish(state, s, config);
}

}  // namespace
}  // namespace mmtune

int main(int argc, char** argv) {
  static const std::vector<mmtune::KernelConfig> configs = mmtune::ParseFlags(&argc, argv);
  benchmark::Initialize(&argc, argv);
  auto machine = mmtune::DetectHostMachine();
  if (!machine) {
    std::cerr << "lowp_bench: " << machine.error().message << "\n";
    return 1;
  }
  static const mmtune::Machine host = *machine;
  constexpr mmtune::BenchShape kShapes[] = {
      {256, 256, 256}, {512, 512, 512}, {128, 768, 768}, {1024, 1024, 1024}};
  for (const mmtune::BenchShape s : kShapes) {
    const std::string name =
        std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    benchmark::RegisterBenchmark(("f32/" + name).c_str(), mmtune::BM_F32, &host, s)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("bf16/" + name).c_str(), mmtune::BM_Lowp<mmtune::Bf16Gemm>,
                                 &host, s, nullptr)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("s8/" + name).c_str(), mmtune::BM_Lowp<mmtune::S8Gemm>, &host,
                                 s, nullptr)
        ->UseRealTime();
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const std::string series = "/config" + std::to_string(i + 1);
      if (configs[i].ValidateFor(mmtune::DType::kBF16).ok()) {
        benchmark::RegisterBenchmark(("bf16/" + name + series).c_str(),
                                     mmtune::BM_Lowp<mmtune::Bf16Gemm>, &host, s, &configs[i])
            ->UseRealTime();
      }
      if (configs[i].ValidateFor(mmtune::DType::kS8).ok()) {
        benchmark::RegisterBenchmark(("s8/" + name + series).c_str(),
                                     mmtune::BM_Lowp<mmtune::S8Gemm>, &host, s, &configs[i])
            ->UseRealTime();
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
