// Throughput of the peak loops themselves, per ISA level the CPU supports, one thread. Compare
// with `mmtune info --measure` (which adds pinning, warm-up and the all-core figure).
#include <benchmark/benchmark.h>

#include "tuner/peak_kernels.h"

namespace mmtune {
namespace {

void BM_PeakLoop(benchmark::State& state, IsaLevel level, PeakLoop PeakKernels::*which) {
  const CpuFeatures& cpu = HostCpuFeatures();
  if (level > cpu.MaxIsaLevel()) {
    state.SkipWithError("CPU lacks this ISA level");
    return;
  }
  PeakLoop loop = PeakKernelsFor(level, cpu).*which;
  if (loop == nullptr) {
    state.SkipWithError("CPU lacks this instruction");
    return;
  }
  double ops = 0.0;
  for (auto _ : state) ops += loop(1 << 16);
  state.counters["Gop/s"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_PeakLoop, f32_generic, IsaLevel::kGeneric, &PeakKernels::f32_fma);
BENCHMARK_CAPTURE(BM_PeakLoop, f32_avx2, IsaLevel::kAvx2, &PeakKernels::f32_fma);
BENCHMARK_CAPTURE(BM_PeakLoop, f32_avx512, IsaLevel::kAvx512, &PeakKernels::f32_fma);
BENCHMARK_CAPTURE(BM_PeakLoop, f64_avx2, IsaLevel::kAvx2, &PeakKernels::f64_fma);
BENCHMARK_CAPTURE(BM_PeakLoop, f64_avx512, IsaLevel::kAvx512, &PeakKernels::f64_fma);
BENCHMARK_CAPTURE(BM_PeakLoop, bf16_avx512, IsaLevel::kAvx512, &PeakKernels::bf16_dot);
BENCHMARK_CAPTURE(BM_PeakLoop, int8_avx512, IsaLevel::kAvx512, &PeakKernels::int8_dot);

}  // namespace
}  // namespace mmtune

BENCHMARK_MAIN();
