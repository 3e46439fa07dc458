// AMX tile registers (AMX_TILE, AMX_BF16, AMX_INT8) as inline assembly: the configuration every
// mmtune tile loop uses (eight tiles of 16 rows of 64 bytes), loads, stores and the tile dot
// products. Inline assembly needs no compiler flags; run it only where the CPU has AMX and the OS
// granted the tile registers (CpuRunsLowpTiles, machine/amx_permission.h).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/gemm_types.h"

namespace mmtune::simd {
namespace amx {

// LDTILECFG's 64-byte operand, palette 1: per tile its rows and bytes per row.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// The tile instructions name their registers in the mnemonic, so the register number is a
// template argument printed into the instruction (%c: a constant without its '$').
template <int T>
[[gnu::always_inline]] inline void Load(const void* base, std::int64_t stride) {
  asm volatile("tileloadd (%0,%1,1), %%tmm%c2" : : "r"(base), "r"(stride), "n"(T) : "memory");
}
template <int T>
[[gnu::always_inline]] inline void Store(void* base, std::int64_t stride) {
  asm volatile("tilestored %%tmm%c2, (%0,%1,1)" : : "r"(base), "r"(stride), "n"(T) : "memory");
}
template <int T>
[[gnu::always_inline]] inline void Zero() {
  asm volatile("tilezero %%tmm%c0" : : "n"(T));
}
// tmm C += tmm A * tmm B (AT&T operand order: B, A, C).
template <class Kind, int C, int A, int B>
[[gnu::always_inline]] inline void Dot() {
  if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
    asm volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "n"(C), "n"(A), "n"(B));
  } else {
    asm volatile("tdpbusd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "n"(C), "n"(A), "n"(B));
  }
}

// Every tile of every kernel: 16 rows of 64 bytes.
inline void EnterTiles() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = 16;
    config.bytes_per_row[t] = 64;
  }
  // Not _tile_loadconfig: GCC 12's builtin does not tell the optimizer that it reads the
  // config, which then drops the stores that fill it in.
  asm volatile("ldtilecfg %0" : : "m"(config));
}

inline void LeaveTiles() { asm volatile("tilerelease"); }

}  // namespace amx

}  // namespace mmtune::simd
