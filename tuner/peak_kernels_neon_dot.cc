// The SDOT peak loop, compiled with the dot product in a translation unit of its own so that no
// other NEON code can pick it up. USDOT (I8MM), which the s8 kernels run where the CPU has it,
// issues at SDOT's rate on the cores that have both.
#include <arm_neon.h>

#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

struct NeonInt8 {
  using Acc = int32x4_t;
  static constexpr double kOpsPerStep = 2.0 * 16;  // 4 lanes x 4 s8 products, mul + add
  static Acc Init(int chain) { return vdupq_n_s32(chain); }
  static Acc Step(Acc acc) { return vdotq_s32(acc, vdupq_n_s8(1), vdupq_n_s8(1)); }
  static double Reduce(Acc acc) { return vgetq_lane_s32(acc, 0); }
};

}  // namespace

PeakLoop NeonSdotLoop() { return &peak_detail::ThroughputLoop<NeonInt8, 16>; }

}  // namespace mmtune
