// Decides whether a candidate computed the right s32 C of the u8 x s8 GEMM: exactly, bit for bit,
// since the s8 kernels are exact modulo 2^32 (lowp_microkernel.h). The same plan as the floating
// checker (result_checker.h) in the ring of integers modulo 2^32 instead of with rounding bounds:
// small problems element by element; large ones on sampled whole rows and columns plus
// Freivalds' projections C x and y^T C. With odd weights x and y, one wrong element always moves
// its row's and its column's projection (an odd number is invertible modulo 2^32), so a single
// wrong element anywhere is caught for certain, not only with high probability.
#pragma once

#include <cstdint>
#include <vector>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

class S8ResultChecker {
 public:
  // Precomputes what `Check` compares against, from the operands of `problem` stored with the
  // minimal leading dimensions; `c_initial` is the C that beta != 0 runs start from.
  S8ResultChecker(const Problem& problem, const std::uint8_t* a, std::int64_t lda,
                  const std::int8_t* b, std::int64_t ldb, const std::int32_t* c_initial,
                  std::int64_t ldc, std::uint64_t seed);

  // OK when `c` equals alpha * op(A) op(B) + beta * C_initial modulo 2^32; the error names the
  // first wrong element (or projection) with the expected and the computed value.
  Status Check(std::int32_t alpha, std::int32_t beta, const std::int32_t* c) const;

  bool full() const { return full_; }

 private:
  std::uint32_t CAt(const std::int32_t* c, std::int64_t i, std::int64_t j) const;
  // alpha * product + beta * c0 modulo 2^32 (beta = 0: C_initial plays no part).
  static std::uint32_t Combine(std::int32_t alpha, std::uint32_t product, std::int32_t beta,
                               std::uint32_t c0);

  Problem problem_;
  std::int64_t ldc_ = 1;
  const std::int32_t* c_initial_ = nullptr;
  bool full_ = false;
  std::vector<std::int64_t> rows_, cols_;
  std::vector<std::uint32_t> row_exact_;  // rows_.size() x n products op(A) op(B), mod 2^32
  std::vector<std::uint32_t> col_exact_;  // cols_.size() x m
  // Freivalds: odd weights x over columns and y over rows, and the projections of op(A) op(B)
  // and of C_initial with them, all modulo 2^32.
  std::vector<std::uint32_t> x_, y_;
  std::vector<std::uint32_t> ab_x_, y_ab_, c0_x_, y_c0_;
};

}  // namespace mmtune
