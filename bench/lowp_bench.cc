// The low-precision kernels at their analytical default beside the f32 default on the same
// shape, one thread: what the bf16 and s8 paths reach on this CPU (the AVX-512 dot-product
// kernels where the CPU has AVX512_BF16 / AVX512_VNNI, the AVX2 widening kernels elsewhere).
// Counter gops: 2*M*N*K per second, whatever the element type.
//
//   ./build/bench/lowp_bench --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "machine/machine.h"

namespace mmtune {
namespace {

struct BenchShape {
  std::int64_t m, n, k;
};

void Fill(std::vector<float>& values, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : values) x = dist(rng);
}
void Fill(std::vector<BFloat16>& values, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (BFloat16& x : values) x = ToBFloat16(dist(rng));
}
void Fill(std::vector<std::uint8_t>& values, std::mt19937& rng) {
  for (std::uint8_t& x : values) x = static_cast<std::uint8_t>(rng());
}
void Fill(std::vector<std::int8_t>& values, std::mt19937& rng) {
  for (std::int8_t& x : values) x = static_cast<std::int8_t>(rng());
}

template <typename A, typename B, typename C>
struct Buffers {
  std::vector<A> a;
  std::vector<B> b;
  std::vector<C> c;
  explicit Buffers(BenchShape s)
      : a(static_cast<std::size_t>(s.m * s.k)),
        b(static_cast<std::size_t>(s.k * s.n)),
        c(static_cast<std::size_t>(s.m * s.n)) {
    std::mt19937 rng(1);
    Fill(a, rng);
    Fill(b, rng);
  }
};

void Finish(benchmark::State& state, BenchShape s, const KernelConfig& config) {
  state.SetLabel(config.ToString());
  state.counters["gops"] = benchmark::Counter(2.0 * static_cast<double>(s.m * s.n * s.k),
                                              benchmark::Counter::kIsIterationInvariantRate);
}

template <class Kind>
void BM_Lowp(benchmark::State& state, const Machine* machine, BenchShape s) {
  Buffers<typename Kind::A, typename Kind::B, typename Kind::C> buffers(s);
  const Problem problem{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 1};
  const KernelConfig config = ModelConfig(problem, *machine);
  auto plan = GemmPlan<Kind>::Create(config);
  if (!plan) {
    state.SkipWithError(plan.error().message.c_str());
    return;
  }
  const GemmArgs<Kind> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 1,
                            buffers.a.data(), s.k, buffers.b.data(), s.n, 0,
                            buffers.c.data(), s.n, {}};
  for (auto _ : state) benchmark::DoNotOptimize(plan->Run(args));
  Finish(state, s, config);
}

void BM_F32(benchmark::State& state, const Machine* machine, BenchShape s) {
  Buffers<float, float, float> buffers(s);
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 1};
  const KernelConfig config = ModelConfig(problem, *machine);
  auto plan = GemmPlan<float>::Create(config);
  if (!plan) {
    state.SkipWithError(plan.error().message.c_str());
    return;
  }
  const GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 1.0f,
                             buffers.a.data(), s.k, buffers.b.data(), s.n, 0.0f,
                             buffers.c.data(), s.n, {}};
  for (auto _ : state) benchmark::DoNotOptimize(plan->Run(args));
  Finish(state, s, config);
}

}  // namespace
}  // namespace mmtune

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto machine = mmtune::DetectHostMachine();
  if (!machine) {
    std::cerr << "lowp_bench: " << machine.error().message << "\n";
    return 1;
  }
  static const mmtune::Machine host = *machine;
  for (const mmtune::BenchShape s : {mmtune::BenchShape{256, 256, 256}, mmtune::BenchShape{512, 512, 512},
                                mmtune::BenchShape{128, 768, 768}, mmtune::BenchShape{1024, 1024, 1024}}) {
    const std::string name =
        std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    benchmark::RegisterBenchmark(("f32/" + name).c_str(), mmtune::BM_F32, &host, s)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("bf16/" + name).c_str(), mmtune::BM_Lowp<mmtune::Bf16Gemm>,
                                 &host, s)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("s8/" + name).c_str(), mmtune::BM_Lowp<mmtune::S8Gemm>, &host,
                                 s)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
