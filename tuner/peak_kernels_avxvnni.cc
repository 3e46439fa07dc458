// AVX-VNNI peak loop (VEX-encoded VPDPBUSD on ymm), compiled with -mavx2 -mfma -mavxvnni in a
// translation unit of its own so that no other AVX2 code can pick up VNNI instructions.
#include <immintrin.h>

#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

struct AvxVnniInt8 {
  using Acc = __m256i;
  static constexpr double kOpsPerStep = 2.0 * 32;  // 8 lanes x 4 u8*s8 products, mul + add
  static Acc Init(int chain) { return _mm256_set1_epi32(chain); }
  // In assembly, as for AVX-512 (peak_kernels_avx512.cc): around the intrinsic GCC 12 copied
  // the chains through other registers and the stack every step.
  static Acc Step(Acc acc) {
    const __m256i ones = _mm256_set1_epi8(1);
    asm("%{vex%} vpdpbusd %1, %1, %0" : "+x"(acc) : "x"(ones));
    return acc;
  }
  static double Reduce(Acc acc) { return _mm256_extract_epi32(acc, 0); }
};

}  // namespace

PeakLoop AvxVnniInt8Loop() { return &peak_detail::ThroughputLoop<AvxVnniInt8, 12>; }

}  // namespace mmtune
