// The BLAS GEMM argument contract, checked once for every entry point (reference, kernels,
// runtime, BLAS shim) so they agree on what is valid.
#pragma once

#include <cstdint>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

// Offset of element (row, col) of a matrix stored with leading dimension `ld`.
inline std::int64_t StoredOffset(Layout layout, std::int64_t row, std::int64_t col,
                                 std::int64_t ld) {
  return layout == Layout::kRowMajor ? row * ld + col : row + col * ld;
}

// The smallest valid leading dimension of a matrix whose op() is `rows x cols`, given how it is
// stored: BLAS requires ld >= max(1, stored rows) column-major, max(1, stored cols) row-major.
inline std::int64_t MinLeadingDimension(Layout layout, Trans trans, std::int64_t rows,
                                        std::int64_t cols) {
  // The stored matrix is op()'s transpose when `trans` is set.
  const std::int64_t stored_rows = trans == Trans::kYes ? cols : rows;
  const std::int64_t stored_cols = trans == Trans::kYes ? rows : cols;
  const std::int64_t stored = layout == Layout::kRowMajor ? stored_cols : stored_rows;
  return stored > 1 ? stored : 1;
}

// The error for arguments that CheckGemmArguments rejects (OK when they are valid after all).
Status DescribeGemmArgumentError(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                                 std::int64_t n, std::int64_t k, std::int64_t lda,
                                 std::int64_t ldb, std::int64_t ldc);

// Checks dimensions and leading dimensions: M, N, K >= 0; lda, ldb, ldc >= their minimum. The
// error message names the first offending argument and both values. Inline because every GEMM
// call passes here: the valid case is a handful of compares, messages are built out of line.
inline Status CheckGemmArguments(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                                 std::int64_t n, std::int64_t k, std::int64_t lda,
                                 std::int64_t ldb, std::int64_t ldc) {
  if (m >= 0 && n >= 0 && k >= 0 && lda >= MinLeadingDimension(layout, trans_a, m, k) &&
      ldb >= MinLeadingDimension(layout, trans_b, k, n) &&
      ldc >= MinLeadingDimension(layout, Trans::kNo, m, n)) [[likely]] {
    return OkStatus();
  }
  return DescribeGemmArgumentError(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
}

// The checks of a B given alone, K x N (weights packed once): K, N >= 0, ldb at least its
// minimum, and B not null where it has elements.
Status CheckBArguments(Layout layout, Trans trans_b, std::int64_t k, std::int64_t n,
                       const void* b, std::int64_t ldb);

}  // namespace mmtune
