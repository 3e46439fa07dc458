// The BFDOT peak loop, compiled with BF16 in a translation unit of its own so that no other NEON
// code can pick it up.
#include <arm_neon.h>

#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

struct NeonBf16 {
  using Acc = float32x4_t;
  static constexpr double kOpsPerStep = 2.0 * 8;  // 4 lanes x 2 bf16 products, mul + add
  static Acc Init(int chain) { return vdupq_n_f32(0.001f * static_cast<float>(chain)); }
  static Acc Step(Acc acc) {
    // 0x3A83 is bf16 for about 0.001: small enough that no chain overflows.
    const bfloat16x8_t small = vreinterpretq_bf16_u16(vdupq_n_u16(0x3A83));
    return vbfdotq_f32(acc, small, small);
  }
  static double Reduce(Acc acc) { return vgetq_lane_f32(acc, 0); }
};

}  // namespace

PeakLoop NeonBfdotLoop() { return &peak_detail::ThroughputLoop<NeonBf16, 16>; }

}  // namespace mmtune
