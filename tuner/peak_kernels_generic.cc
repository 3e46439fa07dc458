// Portable peak loops (GCC vector extensions, no ISA flags): the ceiling of the generic kernels.
// Vectors are 16 bytes, the width every x86-64 (SSE2) and AArch64 (NEON) target has natively;
// wider ones would be split by the compiler and change the calling convention.
#include <cstring>

#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

typedef float F32x4 __attribute__((vector_size(16)));
typedef double F64x2 __attribute__((vector_size(16)));

struct GenericF32 {
  using Acc = F32x4;
  static constexpr double kOpsPerStep = 2.0 * 4;
  static Acc Init(int chain) { return Acc{} + 0.001f * static_cast<float>(chain); }
  // acc * a + b with a < 1 converges instead of overflowing, however long the loop runs.
  static Acc Step(Acc acc) { return acc * 0.999999f + 1e-6f; }
  static double Reduce(Acc acc) { return acc[0] + acc[3]; }
};

struct GenericF64 {
  using Acc = F64x2;
  static constexpr double kOpsPerStep = 2.0 * 2;
  static Acc Init(int chain) { return Acc{} + 0.001 * chain; }
  static Acc Step(Acc acc) { return acc * 0.999999 + 1e-6; }
  static double Reduce(Acc acc) { return acc[0] + acc[1]; }
};

// Eight independent sums so that the adds never limit the load stream.
double GenericReadSum(const double* data, std::size_t count) {
  F64x2 s[8] = {};
  for (std::size_t i = 0; i + 16 <= count; i += 16) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      F64x2 v;
      std::memcpy(&v, data + i + 2 * j, sizeof(v));
      s[j] += v;
    }
  }
  const F64x2 total = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  return total[0] + total[1];
}

}  // namespace

PeakKernels PeakKernelsGeneric() {
  PeakKernels kernels;
  kernels.f32_fma = &peak_detail::ThroughputLoop<GenericF32, 12>;
  kernels.f64_fma = &peak_detail::ThroughputLoop<GenericF64, 12>;
  kernels.read_sum = &GenericReadSum;
  return kernels;
}

PeakKernels PeakKernelsFor([[maybe_unused]] IsaLevel level,
                           [[maybe_unused]] const CpuFeatures& cpu) {
#if MMTUNE_X86_KERNELS
  switch (level) {
    case IsaLevel::kAvx512: return PeakKernelsAvx512(cpu);
    case IsaLevel::kAvx2: return PeakKernelsAvx2(cpu);
    default: break;
  }
#elif MMTUNE_NEON_KERNELS
  if (level != IsaLevel::kGeneric && IsaWithin(level, cpu.MaxIsaLevel())) {
    return PeakKernelsNeon(level);
  }
#endif
  return PeakKernelsGeneric();
}

}  // namespace mmtune
