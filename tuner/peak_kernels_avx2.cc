// AVX2 + FMA peak loops (compiled with -mavx2 -mfma). 12 chains: Zen and Intel cores have two
// FMA pipes with latency 4-5, so at least 10 chains are needed; 12 leave 4 of 16 ymm free.
#include <immintrin.h>

#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

struct Avx2F32 {
  using Acc = __m256;
  static constexpr double kOpsPerStep = 2.0 * 8;
  static Acc Init(int chain) { return _mm256_set1_ps(0.001f * static_cast<float>(chain)); }
  static Acc Step(Acc acc) {
    return _mm256_fmadd_ps(acc, _mm256_set1_ps(0.999999f), _mm256_set1_ps(1e-6f));
  }
  static double Reduce(Acc acc) { return _mm256_cvtss_f32(acc); }
};

struct Avx2F64 {
  using Acc = __m256d;
  static constexpr double kOpsPerStep = 2.0 * 4;
  static Acc Init(int chain) { return _mm256_set1_pd(0.001 * chain); }
  static Acc Step(Acc acc) {
    return _mm256_fmadd_pd(acc, _mm256_set1_pd(0.999999), _mm256_set1_pd(1e-6));
  }
  static double Reduce(Acc acc) { return _mm256_cvtsd_f64(acc); }
};

double Avx2ReadSum(const double* data, std::size_t count) {
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
  for (std::size_t i = 0; i + 16 <= count; i += 16) {
    s0 = _mm256_add_pd(s0, _mm256_load_pd(data + i));
    s1 = _mm256_add_pd(s1, _mm256_load_pd(data + i + 4));
    s2 = _mm256_add_pd(s2, _mm256_load_pd(data + i + 8));
    s3 = _mm256_add_pd(s3, _mm256_load_pd(data + i + 12));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

}  // namespace

PeakKernels PeakKernelsAvx2(const CpuFeatures& cpu) {
  PeakKernels kernels;
  kernels.f32_fma = &peak_detail::ThroughputLoop<Avx2F32, 12>;
  kernels.f64_fma = &peak_detail::ThroughputLoop<Avx2F64, 12>;
  kernels.read_sum = &Avx2ReadSum;
  if (cpu.avx_vnni) kernels.int8_dot = AvxVnniInt8Loop();
  return kernels;
}

}  // namespace mmtune
