// AVX-512 peak loops (compiled with -mavx512f/bw/vl/dq/bf16/vnni), and AMX's where it runs. 16
// chains cover two 512-bit FMA pipes of latency 4 with room to spare and leave 16 of 32 zmm free.
#include <immintrin.h>

#include <cstdint>

#include "kernels/lowp_microkernel.h"
#include "kernels/simd/amx_tiles.h"
#include "tuner/peak_kernels.h"
#include "tuner/peak_loop.h"

namespace mmtune {
namespace {

struct Avx512F32 {
  using Acc = __m512;
  static constexpr double kOpsPerStep = 2.0 * 16;
  static Acc Init(int chain) { return _mm512_set1_ps(0.001f * static_cast<float>(chain)); }
  static Acc Step(Acc acc) {
    return _mm512_fmadd_ps(acc, _mm512_set1_ps(0.999999f), _mm512_set1_ps(1e-6f));
  }
  static double Reduce(Acc acc) { return _mm512_cvtss_f32(acc); }
};

struct Avx512F64 {
  using Acc = __m512d;
  static constexpr double kOpsPerStep = 2.0 * 8;
  static Acc Init(int chain) { return _mm512_set1_pd(0.001 * chain); }
  static Acc Step(Acc acc) {
    return _mm512_fmadd_pd(acc, _mm512_set1_pd(0.999999), _mm512_set1_pd(1e-6));
  }
  static double Reduce(Acc acc) { return _mm512_cvtsd_f64(acc); }
};

// VDPBF16PS: 16 f32 lanes, each accumulating two bf16 products.
struct Avx512Bf16 {
  using Acc = __m512;
  static constexpr double kOpsPerStep = 2.0 * 32;
  static Acc Init(int chain) { return _mm512_set1_ps(0.001f * static_cast<float>(chain)); }
  static Acc Step(Acc acc) {
    // 0x3A83 is bf16 for about 0.001: small enough that no chain overflows.
    const __m512bh small = (__m512bh)_mm512_set1_epi16(0x3A83);
    return _mm512_dpbf16_ps(acc, small, small);
  }
  static double Reduce(Acc acc) { return _mm512_cvtss_f32(acc); }
};

// VPDPBUSD: 16 s32 lanes, each accumulating four u8 x s8 products.
struct Avx512Int8 {
  using Acc = __m512i;
  static constexpr double kOpsPerStep = 2.0 * 64;
  static Acc Init(int chain) { return _mm512_set1_epi32(chain); }
  // In assembly: around the intrinsic GCC 12 copied every chain through another register and
  // stored one to the stack each step, which ran the loop at two thirds of the unit's rate.
  static Acc Step(Acc acc) {
    const __m512i ones = _mm512_set1_epi8(1);
    asm("vpdpbusd %1, %1, %0" : "+v"(acc) : "v"(ones));
    return acc;
  }
  static double Reduce(Acc acc) {
    alignas(64) std::int32_t lanes[16];
    _mm512_store_si512(lanes, acc);
    return lanes[0];
  }
};

double Avx512ReadSum(const double* data, std::size_t count) {
  __m512d s0 = _mm512_setzero_pd(), s1 = s0;
  for (std::size_t i = 0; i + 16 <= count; i += 16) {
    s0 = _mm512_add_pd(s0, _mm512_load_pd(data + i));
    s1 = _mm512_add_pd(s1, _mm512_load_pd(data + i + 8));
  }
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, _mm512_add_pd(s0, s1));
  double sum = 0.0;
  for (double lane : lanes) sum += lane;
  return sum;
}

// AMX: the tile unit's throughput, which the tile kernels run at, not a vector pipe's. Four
// accumulator tiles each take a tile dot product per step from operand tiles loaded once (as
// the 32 x 32 kernel's k loop does between its loads).
template <class Kind>
double AmxDotLoop(std::int64_t iterations) {
  // Operand values do not change the tile unit's speed; zeros keep the sums finite.
  alignas(64) static const std::uint8_t kZeros[16 * 64] = {};
  simd::amx::EnterTiles();
  simd::amx::Load<4>(kZeros, 64);
  simd::amx::Load<5>(kZeros, 64);
  simd::amx::Load<6>(kZeros, 64);
  simd::amx::Load<7>(kZeros, 64);
  simd::amx::Zero<0>();
  simd::amx::Zero<1>();
  simd::amx::Zero<2>();
  simd::amx::Zero<3>();
  for (std::int64_t it = 0; it < iterations; ++it) {
    simd::amx::Dot<Kind, 0, 4, 6>();
    simd::amx::Dot<Kind, 1, 4, 7>();
    simd::amx::Dot<Kind, 2, 5, 6>();
    simd::amx::Dot<Kind, 3, 5, 7>();
  }
  simd::amx::LeaveTiles();
  // 16 x 16 sums of 64 bytes of products each: 32 bf16 or 64 int8 multiply-adds.
  constexpr double kMacsPerDot = 16.0 * 16.0 * (64.0 / sizeof(typename Kind::A));
  return static_cast<double>(iterations) * 4 * 2 * kMacsPerDot;
}

}  // namespace

PeakKernels PeakKernelsAvx512(const CpuFeatures& cpu) {
  PeakKernels kernels;
  kernels.f32_fma = &peak_detail::ThroughputLoop<Avx512F32, 16>;
  kernels.f64_fma = &peak_detail::ThroughputLoop<Avx512F64, 16>;
  kernels.read_sum = &Avx512ReadSum;
  if (cpu.avx512_bf16) kernels.bf16_dot = &peak_detail::ThroughputLoop<Avx512Bf16, 16>;
  if (cpu.avx512_vnni) {
    kernels.int8_dot = &peak_detail::ThroughputLoop<Avx512Int8, 16>;
  } else if (cpu.avx_vnni) {
    kernels.int8_dot = AvxVnniInt8Loop();
  }
  // The dot-product peak is that of the fastest unit the kernels use: AMX's where it runs.
  if (cpu.avx512_bf16 && CpuRunsLowpTiles<Bf16Gemm>(cpu)) {
    kernels.bf16_dot = &AmxDotLoop<Bf16Gemm>;
  }
  if (cpu.avx512_vnni && CpuRunsLowpTiles<S8Gemm>(cpu)) kernels.int8_dot = &AmxDotLoop<S8Gemm>;
  return kernels;
}

}  // namespace mmtune
