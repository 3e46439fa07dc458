// The k groups of a row-major B's strips interleaved with 64-byte vectors (packing_wide.h),
// compiled for the avx512 level only (flags in kernels/CMakeLists.txt).
// GCC 12 reports the _mm512_undefined_* source operand inside its own shuffle intrinsics as
// "may be used uninitialized" once they are inlined here; it is their deliberate don't-care.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <immintrin.h>

#include "kernels/packing_wide.h"

namespace mmtune::wide {
namespace {

// bf16 pairs: 32 columns of two rows make two vectors of 16 (k, k + 1) pairs, one permute each.
void InterleavePairs(const BFloat16* first, std::int64_t ld, std::int64_t groups, int columns,
                     int strips, std::int64_t out_stride, BFloat16* out, std::int64_t ahead,
                     std::int64_t prefetch_bytes) {
  const __m512i low = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40,
                                       8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
  for (std::int64_t g = 0; g < groups; ++g) {
    const BFloat16* row0 = first + 2 * g * ld;
    const BFloat16* row1 = row0 + ld;
    if (g + ahead < groups) PrefetchStrips(row0 + 2 * ahead * ld, ld, 2, prefetch_bytes);
    for (int s = 0; s < strips; ++s) {
      BFloat16* strip_out = out + s * out_stride + 2 * g * columns;
      for (int l = s * columns; l < (s + 1) * columns; l += 32, strip_out += 64) {
        const __m512i x = _mm512_loadu_si512(row0 + l);
        const __m512i y = _mm512_loadu_si512(row1 + l);
        _mm512_storeu_si512(strip_out, _mm512_permutex2var_epi16(x, low, y));
        _mm512_storeu_si512(strip_out + 32, _mm512_permutex2var_epi16(x, high, y));
      }
    }
  }
}

// Byte quads: 64 columns of four rows. Byte then 16-bit unpacks leave each 128-bit lane with
// four columns' quads of its own 16 columns; a 4 x 4 transpose of the lanes puts 16
// consecutive columns in each vector. Columns [first_column, first_column + columns) of the
// rows from `row0`, `ld` apart.
[[gnu::always_inline]] inline void InterleaveQuadStrip(const std::int8_t* row0, std::int64_t ld,
                                                       int first_column, int columns,
                                                       std::int8_t* out) {
  for (int l = first_column; l < first_column + columns; l += 64, out += 256) {
    const __m512i r0 = _mm512_loadu_si512(row0 + l);
    const __m512i r1 = _mm512_loadu_si512(row0 + ld + l);
    const __m512i r2 = _mm512_loadu_si512(row0 + 2 * ld + l);
    const __m512i r3 = _mm512_loadu_si512(row0 + 3 * ld + l);
    const __m512i a = _mm512_unpacklo_epi8(r0, r1);
    const __m512i b = _mm512_unpackhi_epi8(r0, r1);
    const __m512i c = _mm512_unpacklo_epi8(r2, r3);
    const __m512i d = _mm512_unpackhi_epi8(r2, r3);
    const __m512i q0 = _mm512_unpacklo_epi16(a, c);  // lane j: columns 16j .. 16j + 3
    const __m512i q1 = _mm512_unpackhi_epi16(a, c);  // 16j + 4 .. 16j + 7
    const __m512i q2 = _mm512_unpacklo_epi16(b, d);
    const __m512i q3 = _mm512_unpackhi_epi16(b, d);
    const __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44);  // q0 lanes 0, 1; q1 lanes 0, 1
    const __m512i t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
    const __m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xEE);  // lanes 2, 3
    const __m512i t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE);
    _mm512_storeu_si512(out, _mm512_shuffle_i32x4(t0, t1, 0x88));
    _mm512_storeu_si512(out + 64, _mm512_shuffle_i32x4(t0, t1, 0xDD));
    _mm512_storeu_si512(out + 128, _mm512_shuffle_i32x4(t2, t3, 0x88));
    _mm512_storeu_si512(out + 192, _mm512_shuffle_i32x4(t2, t3, 0xDD));
  }
}

// Byte quads, group after group, strip after strip.
void InterleaveQuads(const std::int8_t* first, std::int64_t ld, std::int64_t groups, int columns,
                     int strips, std::int64_t out_stride, std::int8_t* out, std::int64_t ahead,
                     std::int64_t prefetch_bytes) {
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int8_t* row0 = first + 4 * g * ld;
    if (g + ahead < groups) PrefetchStrips(row0 + 4 * ahead * ld, ld, 4, prefetch_bytes);
    for (int s = 0; s < strips; ++s) {
      InterleaveQuadStrip(row0, ld, s * columns, columns, out + s * out_stride + 4 * g * columns);
    }
  }
}

}  // namespace

StripFn<BFloat16> Avx512PairStrips() { return &InterleavePairs; }
StripFn<std::int8_t> Avx512QuadStrips() { return &InterleaveQuads; }

}  // namespace mmtune::wide
