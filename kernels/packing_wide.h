// Interleaves of a row-major B's k groups with the widest vectors the CPU runs, for PackB
// (packing.cc): its whole strips go through these where their bytes fill whole 64-byte
// vectors, the rest through the portable 16-byte interleaves. Packed the same either way.
#pragma once

#include <cstdint>

#include "kernels/cache_line.h"
#include "mmtune/bf16.h"

namespace mmtune::wide {

// `groups` consecutive k groups of `strips` strips of `columns` columns side by side in B,
// rows `ld` elements apart from `first` (group g's G rows from first + g * G * ld); the next
// strip's columns follow the previous one's. Strip s's interleave of group g, each column's G
// values together column after column, goes to out + s * out_stride + g * G * columns. While
// there are groups `ahead` below a group, their rows' `prefetch_bytes` are prefetched first.
// columns * sizeof(T) is a multiple of kStripBytes. One call a run of groups rather than a
// group: on B's short strips a call per group costs more than the interleave itself
// (docs/low-precision.md, Kernels).
template <typename T>
using StripFn = void (*)(const T* first, std::int64_t ld, std::int64_t groups, int columns,
                         int strips, std::int64_t out_stride, T* out, std::int64_t ahead,
                         std::int64_t prefetch_bytes);
inline constexpr int kStripBytes = 64;

// Prefetches `bytes` bytes of each of `rows` rows `ld` elements apart, from `first` on. Always
// inlined and called in the loops themselves: GCC deems a function (or lambda) that only
// prefetches free of effects and drops the calls to it.
template <typename T>
[[gnu::always_inline]] inline void PrefetchStrips(const T* first, std::int64_t ld, int rows,
                                                  std::int64_t bytes) {
  for (int t = 0; t < rows; ++t) {
    const char* row = reinterpret_cast<const char*>(first + t * ld);
    for (std::int64_t at = 0; at < bytes; at += kCacheLineBytes) __builtin_prefetch(row + at);
    __builtin_prefetch(row + bytes - 1);
  }
}

// The AVX-512 (AVX512BW) interleaves: bf16 pairs and byte quads (kernels/packing_avx512.cc).
StripFn<BFloat16> Avx512PairStrips();
StripFn<std::int8_t> Avx512QuadStrips();

}  // namespace mmtune::wide
