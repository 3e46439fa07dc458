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
  static Acc Step(Acc acc) {
    return _mm256_dpbusd_avx_epi32(acc, _mm256_set1_epi8(1), _mm256_set1_epi8(1));
  }
  static double Reduce(Acc acc) { return _mm256_extract_epi32(acc, 0); }
};

}  // namespace

PeakLoop AvxVnniInt8Loop() { return &peak_detail::ThroughputLoop<AvxVnniInt8, 12>; }

}  // namespace mmtune
