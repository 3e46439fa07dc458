// The registry tables of the low-precision micro-kernels, instantiated by ukernels_<isa>_lowp.cc.
// Without native dot products (generic, AVX2) each row's A group and each B vector take two
// registers once widened, so a 16-register tile (MR, NV) is listed when
// MR * NV + 2 * NV + 2 <= 16; traits that count what else their loop keeps say which tiles still
// fit (LowpMicroKernelEntry::fits_registers). AVX-512 kernels use the f32 32-register list:
// VDPBF16PS and VPDPBUSD read their operands as they are. NEON's use it too: BFDOT, SDOT and
// USDOT as AVX-512's, the widened bf16 with fits_registers saying which tiles its halves leave
// room for; the widened NEON s8 uses the 16-register list. Every tile comes with k unroll 1 and 4
// (in groups).
// The GEMV kernels (R rows, NV vectors per step) are listed when R * NV accumulators and the
// widened operands fit.
#pragma once

#include <span>

#include "kernels/kernel_tables.h"
#include "kernels/lowp_microkernel.h"

#define MMTUNE_LOWP_TILES_16_REGISTERS(X)                                                  \
  X(1, 1) X(2, 1) X(4, 1) X(6, 1) X(8, 1) X(12, 1) X(1, 2) X(2, 2) X(3, 2) X(4, 2) X(5, 2) \
  X(1, 3) X(2, 3)

#define MMTUNE_LOWP_GEMV_16_REGISTERS(X) X(1, 1) X(1, 2) X(2, 1) X(2, 2) X(4, 1) X(4, 2) X(8, 1)
#define MMTUNE_LOWP_GEMV_32_REGISTERS(X) \
  MMTUNE_LOWP_GEMV_16_REGISTERS(X) X(1, 4) X(2, 4) X(4, 4) X(8, 2)

#define MMTUNE_LOWP_ENTRIES(MR, NV) \
  ::mmtune::ukernel::LowpEntry<Vec, MR, NV, 1>(), ::mmtune::ukernel::LowpEntry<Vec, MR, NV, 4>(),
#define MMTUNE_LOWP_GEMV_ENTRIES(R, NV) ::mmtune::ukernel::LowpGemvEntry<Vec, R, NV>(),

// AMX tile kernels (amx_microkernel_impl.h), in tiles of 16 x 16 sums: MT x NT of C with MT A
// and NT B tiles in the eight tile registers. Their tile shapes are none of the vector lists',
// so that (mr, nr, k unroll) names one kernel.
#define MMTUNE_LOWP_AMX_TILES(X) X(2, 2) X(1, 2) X(2, 1) X(1, 3) X(3, 1)
#define MMTUNE_LOWP_NO_TILES(X)

// Paired tiles (NEON USMMLA, BFMMLA: 2 x 2 blocks of C, lowp_microkernel_impl.h: PairedKLoop):
// even rows, listed when MR * NV accumulators, 2 * NV column pairs, a row pair and a spare fit
// 32 registers; k unroll 2, the two groups of one step, which no vector tile has.
#define MMTUNE_LOWP_PAIRED_TILES(X)                                                         \
  X(2, 1) X(4, 1) X(8, 1) X(12, 1) X(16, 1) X(2, 2) X(4, 2) X(6, 2) X(8, 2) X(10, 2) X(12, 2) \
  X(2, 3) X(4, 3) X(6, 3) X(8, 3) X(2, 4) X(4, 4)
#define MMTUNE_LOWP_PAIRED_ENTRIES(MR, NV) ::mmtune::ukernel::LowpEntry<Vec, MR, NV, 2>(),

// Defines `FUNCTION_PREFIX##MicroKernels()`, the paired tiles of the traits `TRAITS<KIND>`.
#define MMTUNE_DEFINE_LOWP_PAIRED_TABLE(KIND, TRAITS, FUNCTION_PREFIX)                   \
  namespace FUNCTION_PREFIX##_table {                                                  \
  using Vec = TRAITS<::mmtune::KIND>;                                                  \
  constexpr ::mmtune::LowpMicroKernelEntry<::mmtune::KIND> kEntries[] = {              \
      MMTUNE_LOWP_PAIRED_TILES(MMTUNE_LOWP_PAIRED_ENTRIES)};                           \
  }                                                                                    \
  std::span<const ::mmtune::LowpMicroKernelEntry<::mmtune::KIND>>                      \
      FUNCTION_PREFIX##MicroKernels() {                                                \
    return FUNCTION_PREFIX##_table::kEntries;                                          \
  }
#define MMTUNE_LOWP_AMX_ENTRIES(MT, NT) ::mmtune::ukernel::AmxEntry<Kind, MT, NT>(),

// Defines `FUNCTION_PREFIX##MicroKernels()` and `FUNCTION_PREFIX##GemvKernels()` for the traits
// type `TRAITS<KIND>`, the vector tiles TILES followed by the AMX tiles AMX_TILES.
#define MMTUNE_DEFINE_LOWP_KERNEL_TABLE(KIND, TRAITS, FUNCTION_PREFIX, TILES, GEMVS, AMX_TILES) \
  namespace FUNCTION_PREFIX##_table {                                                  \
  using Kind = ::mmtune::KIND;                                                         \
  using Vec = TRAITS<Kind>;                                                            \
  constexpr ::mmtune::LowpMicroKernelEntry<::mmtune::KIND> kEntries[] = {              \
      TILES(MMTUNE_LOWP_ENTRIES) AMX_TILES(MMTUNE_LOWP_AMX_ENTRIES)};                  \
  constexpr ::mmtune::LowpGemvKernelEntry<::mmtune::KIND> kGemvEntries[] = {           \
      GEMVS(MMTUNE_LOWP_GEMV_ENTRIES)};                                                \
  }                                                                                    \
  std::span<const ::mmtune::LowpMicroKernelEntry<::mmtune::KIND>>                      \
      FUNCTION_PREFIX##MicroKernels() {                                                \
    return FUNCTION_PREFIX##_table::kEntries;                                          \
  }                                                                                    \
  std::span<const ::mmtune::LowpGemvKernelEntry<::mmtune::KIND>>                       \
      FUNCTION_PREFIX##GemvKernels() {                                                 \
    return FUNCTION_PREFIX##_table::kGemvEntries;                                      \
  }

namespace mmtune {

std::span<const LowpMicroKernelEntry<Bf16Gemm>> GenericBf16MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> GenericS8MicroKernels();
std::span<const LowpMicroKernelEntry<Bf16Gemm>> Avx2Bf16MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> Avx2S8MicroKernels();
// AVX-VNNI (VEX VPDPBUSD) at the AVX2 level; the registry's AVX2 s8 table where the CPU has it.
std::span<const LowpMicroKernelEntry<S8Gemm>> AvxVnniS8MicroKernels();
std::span<const LowpMicroKernelEntry<Bf16Gemm>> Avx512Bf16MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> Avx512S8MicroKernels();
std::span<const LowpGemvKernelEntry<Bf16Gemm>> GenericBf16GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> GenericS8GemvKernels();
std::span<const LowpGemvKernelEntry<Bf16Gemm>> Avx2Bf16GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> Avx2S8GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> AvxVnniS8GemvKernels();
std::span<const LowpGemvKernelEntry<Bf16Gemm>> Avx512Bf16GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> Avx512S8GemvKernels();
// AArch64 (lowp_vec_neon.h): widening at the neon level, SDOT or USDOT (I8MM) for s8 and BFDOT
// for bf16 above it, and the paired tiles of USMMLA (I8MM) and BFMMLA beside those.
std::span<const LowpMicroKernelEntry<Bf16Gemm>> NeonBf16MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> NeonS8MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> SdotS8MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> UsdotS8MicroKernels();
std::span<const LowpMicroKernelEntry<Bf16Gemm>> BfdotBf16MicroKernels();
std::span<const LowpMicroKernelEntry<S8Gemm>> UsmmlaS8MicroKernels();  // paired tiles, I8MM
std::span<const LowpMicroKernelEntry<Bf16Gemm>> BfmmlaBf16MicroKernels();  // paired tiles
std::span<const LowpGemvKernelEntry<Bf16Gemm>> NeonBf16GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> NeonS8GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> SdotS8GemvKernels();
std::span<const LowpGemvKernelEntry<S8Gemm>> UsdotS8GemvKernels();
std::span<const LowpGemvKernelEntry<Bf16Gemm>> BfdotBf16GemvKernels();

}  // namespace mmtune
