// Interleaves of a row-major B's k groups with the widest vectors the CPU runs, for PackB
// (packing.cc): its whole strips go through these where their bytes fill whole 64-byte
// vectors, the rest through the portable 16-byte interleaves. Packed the same either way.
#pragma once

#include <cstdint>

#include "mmtune/bf16.h"

namespace mmtune::wide {

// One k group of `strips` strips of `columns` columns side by side in B: rows[t] holds row t's
// values of the first strip (t < the group's G), the next strip's follow them; strip s's
// interleave, each column's G values together column after column, goes to out + s *
// out_stride. columns * sizeof(T) is a multiple of kStripBytes.
template <typename T>
using StripFn = void (*)(const T* const* rows, int columns, int strips, std::int64_t out_stride,
                         T* out);
inline constexpr int kStripBytes = 64;

// The AVX-512 (AVX512BW) interleaves: bf16 pairs and byte quads (kernels/packing_avx512.cc).
StripFn<BFloat16> Avx512PairStrips();
StripFn<std::int8_t> Avx512QuadStrips();

}  // namespace mmtune::wide
