// The tile micro-kernel of the low-precision family on AMX (AMX_BF16 TDPBF16PS, AMX_INT8
// TDPBUSD): a C block of MT x NT tiles of 16 x 16 32-bit sums, each k step multiplying MT A tiles
// (16 rows of 64 bytes of k) by NT B tiles (16 k groups of 16 columns). Included only by
// ukernels_avx512_lowp.cc; it runs only where CpuRunsLowpTiles said the CPU has the instructions
// and the OS granted the tile registers.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/lowp_microkernel.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/amx_tiles.h"
#include "kernels/simd/unroll.h"

namespace mmtune::ukernel {

// C (MR = 16 MT rows, NR = 16 NT columns) = alpha * A panel * B panel + beta * C. The A panel
// holds k in runs of a tile row (64 bytes: 32 bf16, 64 u8) per row, the B panel k groups of
// Kind::kGroup per column (the VNNI layout the tile dot products read); both are zero-padded to
// whole runs, so args.groups is a multiple of 16. A row-major A's rows are such runs already:
// with args.a_row_stride, its MR rows are read in place. Runs between EnterTiles and LeaveTiles.
// A whole tile of a row-major C with alpha 1 and beta 0 or 1 (every k block after a GEMM's
// first is beta 1) accumulates in the C tiles in place: loaded from C (beta 1) or zeroed, and
// stored back, with no pass through a buffer; other tiles go through WriteTile. Only where C's
// rows start on cache lines: a tile row straddling two lines stores slower than the buffer's
// pass (docs/low-precision.md). With args.sums the tiles start from those sums instead (then
// only beta 0 stores in place).
template <class Kind, int MT, int NT>
void AmxMicroKernel(const LowpMicroKernelArgs<Kind>& args) {
  using A = typename Kind::A;
  using B = typename Kind::B;
  using C = typename Kind::C;
  constexpr int kRows = 16;
  constexpr int MR = kRows * MT;
  constexpr int NR = kRows * NT;
  constexpr int G = Kind::kGroup;
  constexpr int kRunBytes = 64;
  constexpr int KS = kRunBytes / static_cast<int>(sizeof(A));  // k per step
  constexpr int kGroupsPerStep = KS / G;
  static_assert(kGroupsPerStep == kRows);
  constexpr int kFirstA = MT * NT;
  constexpr int kFirstB = kFirstA + MT;
  static_assert(kFirstB + NT <= 8, "eight tile registers");

  const std::int64_t c_stride = args.row_stride * std::int64_t{sizeof(C)};
  const bool from_sums = args.sums != nullptr;
  const bool in_place = args.m == MR && args.n == NR && args.col_stride == 1 && args.alpha == 1 &&
                        (args.beta == 0 || (args.beta == 1 && !from_sums)) &&
                        (reinterpret_cast<std::uintptr_t>(args.c) | c_stride) % 64 == 0;
  auto c_tile = [&](int i, int j) { return args.c + i * kRows * args.row_stride + j * kRows; };
  if (from_sums) {
    const std::int64_t sums_stride = args.sums_row_stride * std::int64_t{sizeof(C)};
    simd::Unroll<MT * NT>([&](auto t) {
      constexpr int T = decltype(t)::value;
      simd::amx::Load<T>(args.sums + (T / NT) * kRows * args.sums_row_stride + (T % NT) * kRows,
                         sums_stride);
    });
  } else if (in_place && args.beta == 1) {
    simd::Unroll<MT * NT>([&](auto t) {
      constexpr int T = decltype(t)::value;
      simd::amx::Load<T>(c_tile(T / NT, T % NT), c_stride);
    });
  } else {
    simd::Unroll<MT * NT>([&](auto t) { simd::amx::Zero<decltype(t)::value>(); });
  }

  // The next tile's C lines (args.next_c), a share of its rows before each k step, so that the
  // prefetches and the tile loads take turns with the line fill buffers. Plain reads: PREFETCHW
  // ran no faster.
  const char* next_c = in_place && args.beta == 0 && !from_sums
                           ? reinterpret_cast<const char*>(args.next_c)
                           : nullptr;
  constexpr int kLinesPerRow = NR * static_cast<int>(sizeof(C)) / kRunBytes;
  const A* a = args.a;
  const B* b = args.b;
  // A panel's tile rows are one run apart, and a step moves past its MR runs; A read in place
  // has them a row of A apart, and a step moves one run along them.
  const bool a_in_place = args.a_row_stride != 0;
  const std::int64_t a_row = a_in_place ? args.a_row_stride : KS;  // elements between tile rows
  const std::int64_t a_step = a_in_place ? KS : MR * KS;
  const std::int64_t a_stride = a_row * std::int64_t{sizeof(A)};
  constexpr std::int64_t kBStride = NR * G * static_cast<std::int64_t>(sizeof(B));
  const std::int64_t steps = args.groups / kGroupsPerStep;
  for (std::int64_t s = 0; s < steps; ++s) {
    if (next_c != nullptr) {
      const auto rows_end = static_cast<int>((s + 1) * MR / steps);
      for (auto r = static_cast<int>(s * MR / steps); r < rows_end; ++r) {
        for (int l = 0; l < kLinesPerRow; ++l) {
          _mm_prefetch(next_c + r * c_stride + l * kRunBytes, _MM_HINT_T0);
        }
      }
    }
    simd::Unroll<MT>([&](auto i) {
      simd::amx::Load<kFirstA + decltype(i)::value>(a + i * kRows * a_row, a_stride);
    });
    simd::Unroll<NT>([&](auto j) {
      simd::amx::Load<kFirstB + decltype(j)::value>(b + j * kRows * G, kBStride);
    });
    simd::Unroll<MT>([&](auto i) {
      simd::Unroll<NT>([&](auto j) {
        constexpr int I = decltype(i)::value;
        constexpr int J = decltype(j)::value;
        simd::amx::Dot<Kind, I * NT + J, kFirstA + I, kFirstB + J>();
      });
    });
    if (args.interleave != nullptr) args.interleave(args.interleave_context, s, steps);
    a += a_step;
    b += kGroupsPerStep * NR * G;
  }

  if (in_place) {
    simd::Unroll<MT * NT>([&](auto t) {
      constexpr int T = decltype(t)::value;
      simd::amx::Store<T>(c_tile(T / NT, T % NT), c_stride);
    });
    return;
  }
  alignas(64) C tile[MR][NR];
  simd::Unroll<MT>([&](auto i) {
    simd::Unroll<NT>([&](auto j) {
      constexpr int I = decltype(i)::value;
      constexpr int J = decltype(j)::value;
      simd::amx::Store<I * NT + J>(&tile[I * kRows][J * kRows], NR * std::int64_t{sizeof(C)});
    });
  });
  WriteTile<Kind, NR>(args, &tile[0][0]);
}

template <class Kind, int MT, int NT>
constexpr LowpMicroKernelEntry<Kind> AmxEntry() {
  constexpr int kStepK = 64 / static_cast<int>(sizeof(typename Kind::A));
  return {IsaLevel::kAvx512, 16 * MT,          16 * NT,           1, &AmxMicroKernel<Kind, MT, NT>,
          kStepK,           true, &simd::amx::EnterTiles, &simd::amx::LeaveTiles};
}

}  // namespace mmtune::ukernel
