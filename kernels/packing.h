// Packing copies a block of op(A) or op(B) into the micro-panel order the micro-kernels stream,
// for every GEMM: k runs in groups of `group` consecutive values (1 for f32 and f64; the k group
// of the low-precision dot-product instructions, gemm_types.h). A panel of `mr` rows holds, for
// group g and row i, its values at (g * mr + i) * group; a B panel of `nr` columns those of
// column j at (g * nr + j) * group. With group 1 that is element (i, p) of A at p * mr + i and
// (p, j) of B at p * nr + j. Rows, columns and k past the matrix edge are zero-filled, so the
// micro-kernel always runs a full tile of whole groups and only its store is masked. Written
// once, ISA-independent, but for the AVX-512 interleaves of a row-major B's k groups
// (packing_wide.h).
#pragma once

#include <cstdint>

#include "kernels/cache_line.h"
#include "mmtune/types.h"

namespace mmtune {

// How much of each row of a row-major B PackB reads at a time where it packs k groups: a few
// lines of a row rather than one, across at most kPackBMaxPanelsAtOnce panels, no more than
// their writes leave L1 ways for (docs/low-precision.md, Kernels).
inline constexpr std::int64_t kPackBRowStepBytes = 4 * kCacheLineBytes;
inline constexpr std::int64_t kPackBMaxPanelsAtOnce = 4;

// Matrix views in row-major terms: element (i, p) of op(X) is x[i * ld + p], or x[p * ld + i]
// when `trans` is set.
template <typename T>
struct MatrixView {
  const T* data = nullptr;
  std::int64_t ld = 0;
  Trans trans = Trans::kNo;

  const T& At(std::int64_t row, std::int64_t col) const {
    return trans == Trans::kNo ? data[row * ld + col] : data[col * ld + row];
  }
};

// Packs rows [row0, row0 + rows) x columns [col0, col0 + depth) of op(A) into ceil(rows / mr)
// panels of mr x padded_depth, the last one zero-padded. `padded_depth`, a multiple of `group`
// and at least depth, is k zero-filled past the matrix (0: RoundUp(depth, group)); the AMX tile
// kernels take both panels padded to a whole tile row.
template <typename T>
void PackA(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0,
           std::int64_t depth, int mr, int group, T* packed, std::int64_t padded_depth = 0);

// Packs rows [row0, row0 + depth) x columns [col0, col0 + cols) of op(B) into ceil(cols / nr)
// panels of padded_depth x nr (as for PackA), the last one zero-padded.
template <typename T>
void PackB(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0,
           std::int64_t cols, int nr, int group, T* packed, std::int64_t padded_depth = 0);

}  // namespace mmtune
