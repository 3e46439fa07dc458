#include "tuner/s8_result_checker.h"

#include <random>
#include <string>
#include <utility>

#include "kernels/gemm_args.h"
#include "tuner/check_sampling.h"

namespace mmtune {
namespace {

// Random odd weights: invertible modulo 2^32, so no wrong element is multiplied away.
std::vector<std::uint32_t> OddWeights(std::int64_t count, std::mt19937_64& rng) {
  std::vector<std::uint32_t> weights(static_cast<std::size_t>(count));
  for (std::uint32_t& w : weights) w = static_cast<std::uint32_t>(rng() >> 32) | 1u;
  return weights;
}

std::string Signed(std::uint32_t value) {
  return std::to_string(static_cast<std::int32_t>(value));
}

}  // namespace

S8ResultChecker::S8ResultChecker(const Problem& problem, const std::uint8_t* a, std::int64_t lda,
                                 const std::int8_t* b, std::int64_t ldb,
                                 const std::int32_t* c_initial, std::int64_t ldc,
                                 std::uint64_t seed)
    : problem_(problem), ldc_(ldc), c_initial_(c_initial) {
  const std::int64_t m = problem.m, n = problem.n, k = problem.k;
  const Layout layout = problem.layout;
  // Unsigned arithmetic wraps modulo 2^32 by definition; a negative B value converts to its
  // residue, so every sum below is the exact result reduced modulo 2^32.
  auto op_a = [&](std::int64_t i, std::int64_t p) -> std::uint32_t {
    return problem.trans_a == Trans::kNo ? a[StoredOffset(layout, i, p, lda)]
                                         : a[StoredOffset(layout, p, i, lda)];
  };
  auto op_b = [&](std::int64_t p, std::int64_t j) -> std::uint32_t {
    return static_cast<std::uint32_t>(
        static_cast<std::int32_t>(problem.trans_b == Trans::kNo
                                      ? b[StoredOffset(layout, p, j, ldb)]
                                      : b[StoredOffset(layout, j, p, ldb)]));
  };
  full_ = ChecksInFull(m, n, k);
  std::mt19937_64 rng(seed ^ 0xC0FFEEull);
  CheckedLines lines = PickCheckedLines(m, n, full_, rng);
  rows_ = std::move(lines.rows);
  cols_ = std::move(lines.cols);

  const auto un = static_cast<std::size_t>(n), um = static_cast<std::size_t>(m);
  row_exact_.assign(rows_.size() * un, 0u);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    std::uint32_t* out = row_exact_.data() + r * un;
    for (std::int64_t p = 0; p < k; ++p) {
      const std::uint32_t a_ip = op_a(rows_[r], p);
      for (std::int64_t j = 0; j < n; ++j) out[j] += a_ip * op_b(p, j);
    }
  }
  col_exact_.assign(cols_.size() * um, 0u);
  for (std::size_t s = 0; s < cols_.size(); ++s) {
    std::uint32_t* out = col_exact_.data() + s * um;
    for (std::int64_t p = 0; p < k; ++p) {
      const std::uint32_t b_pj = op_b(p, cols_[s]);
      for (std::int64_t i = 0; i < m; ++i) out[i] += op_a(i, p) * b_pj;
    }
  }
  if (full_) return;

  // Freivalds: A (B x) and (y^T A) B in O(k (m + n)), and the same projections of C_initial.
  x_ = OddWeights(n, rng);
  y_ = OddWeights(m, rng);
  std::vector<std::uint32_t> b_x(static_cast<std::size_t>(k), 0u), y_a(b_x.size(), 0u);
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t j = 0; j < n; ++j) b_x[p] += op_b(p, j) * x_[j];
  }
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) y_a[p] += y_[i] * op_a(i, p);
  }
  ab_x_.assign(um, 0u);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) ab_x_[i] += op_a(i, p) * b_x[p];
  }
  y_ab_.assign(un, 0u);
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t j = 0; j < n; ++j) y_ab_[j] += y_a[p] * op_b(p, j);
  }
  c0_x_.assign(um, 0u);
  y_c0_.assign(un, 0u);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint32_t c_ij = CAt(c_initial_, i, j);
      c0_x_[i] += c_ij * x_[j];
      y_c0_[j] += y_[i] * c_ij;
    }
  }
}

std::uint32_t S8ResultChecker::CAt(const std::int32_t* c, std::int64_t i, std::int64_t j) const {
  return static_cast<std::uint32_t>(c[StoredOffset(problem_.layout, i, j, ldc_)]);
}

std::uint32_t S8ResultChecker::Combine(std::int32_t alpha, std::uint32_t product,
                                       std::int32_t beta, std::uint32_t c0) {
  const std::uint32_t scaled = static_cast<std::uint32_t>(alpha) * product;
  return beta == 0 ? scaled : scaled + static_cast<std::uint32_t>(beta) * c0;
}

Status S8ResultChecker::Check(std::int32_t alpha, std::int32_t beta,
                              const std::int32_t* c) const {
  const std::int64_t m = problem_.m, n = problem_.n;
  auto check_element = [&](std::int64_t i, std::int64_t j, std::uint32_t product) -> Status {
    const std::uint32_t want = Combine(alpha, product, beta, CAt(c_initial_, i, j));
    const std::uint32_t got = CAt(c, i, j);
    if (got == want) return OkStatus();
    return MakeError(ErrorCode::kWrongResult,
                     "wrong result: C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " +
                         Signed(got) + ", expected " + Signed(want) + " (exact)");
  };
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (std::int64_t j = 0; j < n; ++j) {
      if (auto status = check_element(rows_[r], j, row_exact_[r * static_cast<std::size_t>(n) + j]);
          !status) {
        return status;
      }
    }
  }
  for (std::size_t s = 0; s < cols_.size(); ++s) {
    for (std::int64_t i = 0; i < m; ++i) {
      if (auto status = check_element(i, cols_[s], col_exact_[s * static_cast<std::size_t>(m) + i]);
          !status) {
        return status;
      }
    }
  }
  if (full_) return OkStatus();

  std::vector<std::uint32_t> c_x(static_cast<std::size_t>(m), 0u);
  std::vector<std::uint32_t> y_c(static_cast<std::size_t>(n), 0u);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint32_t c_ij = CAt(c, i, j);
      c_x[i] += c_ij * x_[j];
      y_c[j] += y_[i] * c_ij;
    }
  }
  auto check_projection = [&](const char* what, std::int64_t index, std::uint32_t got,
                              std::uint32_t ab, std::uint32_t c0) -> Status {
    const std::uint32_t want = Combine(alpha, ab, beta, c0);
    if (got == want) return OkStatus();
    return MakeError(ErrorCode::kWrongResult,
                     std::string("wrong result: projection ") + what + "[" +
                         std::to_string(index) + "] = " + Signed(got) + ", expected " +
                         Signed(want) + " (exact, modulo 2^32)");
  };
  for (std::int64_t i = 0; i < m; ++i) {
    if (auto status = check_projection("C x", i, c_x[i], ab_x_[i], c0_x_[i]); !status) {
      return status;
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    if (auto status = check_projection("y^T C", j, y_c[j], y_ab_[j], y_c0_[j]); !status) {
      return status;
    }
  }
  return OkStatus();
}

}  // namespace mmtune
