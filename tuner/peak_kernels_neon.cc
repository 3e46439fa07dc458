// AArch64 NEON peak loops (FMLA; the dot products' loops are in their own translation units,
// compiled with those instructions). 16 chains cover four 128-bit pipes of latency 4 and leave
// half of the 32 registers free.
#include <arm_neon.h>

#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

struct NeonF32 {
  using Acc = float32x4_t;
  static constexpr double kOpsPerStep = 2.0 * 4;
  static Acc Init(int chain) { return vdupq_n_f32(0.001f * static_cast<float>(chain)); }
  // acc * a + b with a < 1 converges instead of overflowing, however long the loop runs.
  static Acc Step(Acc acc) { return vfmaq_f32(vdupq_n_f32(1e-6f), acc, vdupq_n_f32(0.999999f)); }
  static double Reduce(Acc acc) { return vgetq_lane_f32(acc, 0); }
};

struct NeonF64 {
  using Acc = float64x2_t;
  static constexpr double kOpsPerStep = 2.0 * 2;
  static Acc Init(int chain) { return vdupq_n_f64(0.001 * chain); }
  static Acc Step(Acc acc) { return vfmaq_f64(vdupq_n_f64(1e-6), acc, vdupq_n_f64(0.999999)); }
  static double Reduce(Acc acc) { return vgetq_lane_f64(acc, 0); }
};

// Eight independent sums so that the adds never limit the load stream.
double NeonReadSum(const double* data, std::size_t count) {
  float64x2_t s[8];
  for (auto& sum : s) sum = vdupq_n_f64(0.0);
  for (std::size_t i = 0; i + 16 <= count; i += 16) {
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) s[j] = vaddq_f64(s[j], vld1q_f64(data + i + 2 * j));
  }
  const float64x2_t total = vaddq_f64(vaddq_f64(vaddq_f64(s[0], s[1]), vaddq_f64(s[2], s[3])),
                                      vaddq_f64(vaddq_f64(s[4], s[5]), vaddq_f64(s[6], s[7])));
  return vaddvq_f64(total);
}

}  // namespace

PeakKernels PeakKernelsNeon(IsaLevel level) {
  PeakKernels kernels;
  kernels.f32_fma = &peak_detail::ThroughputLoop<NeonF32, 16>;
  kernels.f64_fma = &peak_detail::ThroughputLoop<NeonF64, 16>;
  kernels.read_sum = &NeonReadSum;
  if (IsaWithin(IsaLevel::kNeonDot, level)) kernels.int8_dot = NeonSdotLoop();
  if (IsaWithin(IsaLevel::kNeonBf16, level)) kernels.bf16_dot = NeonBfdotLoop();
  return kernels;
}

}  // namespace mmtune
