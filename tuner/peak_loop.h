// One template for every compute-peak microbenchmark: `kAccumulators` independent dependency
// chains of one instruction (FMA, dot product), enough chains to cover the instruction's latency
// on every pipe, so the loop runs at the pipes' throughput. Included only by the per-ISA
// translation units (peak_kernels_<isa>.cc), each compiled with its own `-m` flags; `Op` wraps
// that ISA's intrinsics.
//
// An `Op` provides:
//   using Acc;                                   the accumulator register type
//   static Acc Init(int chain);                  distinct start values per chain
//   static Acc Step(Acc acc);                    acc = acc op (constant operands)
//   static double Reduce(Acc acc);               to a scalar, so the work cannot be removed
//   static constexpr double kOpsPerStep;         arithmetic operations per Step (FMA = 2 per lane)
#pragma once

#include <cstdint>

namespace mmtune::peak_detail {

// Written once per run so the compiler must compute every chain.
inline volatile double g_peak_sink = 0.0;

template <typename Op, int kAccumulators>
double ThroughputLoop(std::int64_t iterations) {
  typename Op::Acc acc[kAccumulators];
#pragma GCC unroll 32
  for (int c = 0; c < kAccumulators; ++c) acc[c] = Op::Init(c);
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int c = 0; c < kAccumulators; ++c) acc[c] = Op::Step(acc[c]);
  }
  double sum = 0.0;
#pragma GCC unroll 32
  for (int c = 0; c < kAccumulators; ++c) sum += Op::Reduce(acc[c]);
  g_peak_sink = sum;
  return static_cast<double>(iterations) * kAccumulators * Op::kOpsPerStep;
}

}  // namespace mmtune::peak_detail
