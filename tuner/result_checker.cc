#include "tuner/result_checker.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <utility>

#include "kernels/gemm_args.h"
#include "tuner/check_sampling.h"

namespace mmtune {
namespace {

// Random projection weights in +-[0.5, 1]: bounded away from zero so no element is ignored.
std::vector<double> ProjectionVector(std::int64_t count, std::mt19937_64& rng) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double& value : v) {
    const double magnitude = 0.5 + 0.5 * static_cast<double>(rng() >> 11) * 0x1.0p-53;
    value = (rng() & 1) ? magnitude : -magnitude;
  }
  return v;
}

double ToDouble(float value) { return value; }
double ToDouble(double value) { return value; }
double ToDouble(BFloat16 value) { return ToFloat(value); }

std::string Describe(double value) {
  std::ostringstream text;
  text.precision(9);
  text << value;
  return text.str();
}

}  // namespace

template <typename T, typename In>
ResultChecker<T, In>::ResultChecker(const Problem& problem, const In* a, std::int64_t lda,
                                    const In* b, std::int64_t ldb, const T* c_initial,
                                    std::int64_t ldc, std::uint64_t seed)
    : problem_(problem), ldc_(ldc), c_initial_(c_initial) {
  const std::int64_t m = problem.m, n = problem.n, k = problem.k;
  const Layout layout = problem.layout;
  auto op_a = [&](std::int64_t i, std::int64_t p) -> double {
    return ToDouble(problem.trans_a == Trans::kNo ? a[StoredOffset(layout, i, p, lda)]
                                                  : a[StoredOffset(layout, p, i, lda)]);
  };
  auto op_b = [&](std::int64_t p, std::int64_t j) -> double {
    return ToDouble(problem.trans_b == Trans::kNo ? b[StoredOffset(layout, p, j, ldb)]
                                                  : b[StoredOffset(layout, j, p, ldb)]);
  };
  full_ = ChecksInFull(m, n, k);
  std::mt19937_64 rng(seed ^ 0xC0FFEEull);
  CheckedLines lines = PickCheckedLines(m, n, full_, rng);
  rows_ = std::move(lines.rows);
  cols_ = std::move(lines.cols);

  // Whole rows: loop over k outside so B is read along its rows when it is row-major.
  row_exact_.assign(rows_.size() * static_cast<std::size_t>(n), Exact{});
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    Exact* out = row_exact_.data() + r * static_cast<std::size_t>(n);
    for (std::int64_t p = 0; p < k; ++p) {
      const double a_ip = op_a(rows_[r], p);
      for (std::int64_t j = 0; j < n; ++j) {
        const double b_pj = op_b(p, j);
        out[j].product += a_ip * b_pj;
        out[j].magnitude += std::abs(a_ip) * std::abs(b_pj);
      }
    }
  }
  col_exact_.assign(cols_.size() * static_cast<std::size_t>(m), Exact{});
  for (std::size_t s = 0; s < cols_.size(); ++s) {
    Exact* out = col_exact_.data() + s * static_cast<std::size_t>(m);
    for (std::int64_t p = 0; p < k; ++p) {
      const double b_pj = op_b(p, cols_[s]);
      for (std::int64_t i = 0; i < m; ++i) {
        const double a_ip = op_a(i, p);
        out[i].product += a_ip * b_pj;
        out[i].magnitude += std::abs(a_ip) * std::abs(b_pj);
      }
    }
  }
  if (full_) return;

  // Freivalds: A (B x) and (y^T A) B in O(k (m + n)), and the same projections of C_initial.
  x_ = ProjectionVector(n, rng);
  y_ = ProjectionVector(m, rng);
  std::vector<Exact> b_x(static_cast<std::size_t>(k)), y_a(static_cast<std::size_t>(k));
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double b_pj = op_b(p, j);
      b_x[p].product += b_pj * x_[j];
      b_x[p].magnitude += std::abs(b_pj) * std::abs(x_[j]);
    }
  }
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      const double a_ip = op_a(i, p);
      y_a[p].product += y_[i] * a_ip;
      y_a[p].magnitude += std::abs(y_[i]) * std::abs(a_ip);
    }
  }
  ab_x_.assign(static_cast<std::size_t>(m), Exact{});
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      const double a_ip = op_a(i, p);
      ab_x_[i].product += a_ip * b_x[p].product;
      ab_x_[i].magnitude += std::abs(a_ip) * b_x[p].magnitude;
    }
  }
  y_ab_.assign(static_cast<std::size_t>(n), Exact{});
  for (std::int64_t p = 0; p < k; ++p) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double b_pj = op_b(p, j);
      y_ab_[j].product += y_a[p].product * b_pj;
      y_ab_[j].magnitude += y_a[p].magnitude * std::abs(b_pj);
    }
  }
  c0_x_.assign(static_cast<std::size_t>(m), 0.0);
  c0_x_abs_.assign(static_cast<std::size_t>(m), 0.0);
  y_c0_.assign(static_cast<std::size_t>(n), 0.0);
  y_c0_abs_.assign(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double c_ij = CAt(c_initial_, i, j);
      c0_x_[i] += c_ij * x_[j];
      c0_x_abs_[i] += std::abs(c_ij) * std::abs(x_[j]);
      y_c0_[j] += y_[i] * c_ij;
      y_c0_abs_[j] += std::abs(y_[i]) * std::abs(c_ij);
    }
  }
}

template <typename T, typename In>
T ResultChecker<T, In>::CAt(const T* c, std::int64_t i, std::int64_t j) const {
  return c[StoredOffset(problem_.layout, i, j, ldc_)];
}

template <typename T, typename In>
Status ResultChecker<T, In>::CheckElement(std::int64_t i, std::int64_t j, const Exact& exact,
                                          T alpha, T beta, const T* c) const {
  constexpr double eps = std::numeric_limits<T>::epsilon();
  const double c0 = beta == T(0) ? 0.0 : static_cast<double>(CAt(c_initial_, i, j));
  const double want = static_cast<double>(alpha) * exact.product + static_cast<double>(beta) * c0;
  const double bound = static_cast<double>(problem_.k + 4) * eps *
                           (std::abs(static_cast<double>(alpha)) * exact.magnitude +
                            std::abs(static_cast<double>(beta)) * std::abs(c0)) +
                       eps;
  const double got = CAt(c, i, j);
  if (std::isfinite(got) && std::abs(got - want) <= bound) return OkStatus();
  return MakeError(ErrorCode::kWrongResult,
                   "wrong result: C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " +
                       Describe(got) + ", expected " + Describe(want) + " (bound " +
                       Describe(bound) + ")");
}

template <typename T, typename In>
Status ResultChecker<T, In>::Check(T alpha, T beta, const T* c) const {
  const std::int64_t m = problem_.m, n = problem_.n;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (std::int64_t j = 0; j < n; ++j) {
      const Exact& exact = row_exact_[r * static_cast<std::size_t>(n) + j];
      if (auto status = CheckElement(rows_[r], j, exact, alpha, beta, c); !status) return status;
    }
  }
  for (std::size_t s = 0; s < cols_.size(); ++s) {
    for (std::int64_t i = 0; i < m; ++i) {
      const Exact& exact = col_exact_[s * static_cast<std::size_t>(m) + i];
      if (auto status = CheckElement(i, cols_[s], exact, alpha, beta, c); !status) return status;
    }
  }
  if (full_) return OkStatus();

  // The projections: each element's bound, weighted by |x_j| (or |y_i|), summed.
  constexpr double eps = std::numeric_limits<T>::epsilon();
  const double abs_alpha = std::abs(static_cast<double>(alpha));
  const double abs_beta = std::abs(static_cast<double>(beta));
  const double k_factor = static_cast<double>(problem_.k + 4) * eps;
  double x_abs_sum = 0.0, y_abs_sum = 0.0;
  for (double v : x_) x_abs_sum += std::abs(v);
  for (double v : y_) y_abs_sum += std::abs(v);
  std::vector<double> c_x(static_cast<std::size_t>(m), 0.0);
  std::vector<double> y_c(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double c_ij = CAt(c, i, j);
      c_x[i] += c_ij * x_[j];
      y_c[j] += y_[i] * c_ij;
    }
  }
  auto check_projection = [&](const char* what, std::int64_t index, double got, const Exact& ab,
                              double c0, double c0_abs, double weight_sum) -> Status {
    const double want = static_cast<double>(alpha) * ab.product +
                        (beta == T(0) ? 0.0 : static_cast<double>(beta) * c0);
    const double bound =
        k_factor * (abs_alpha * ab.magnitude + (beta == T(0) ? 0.0 : abs_beta * c0_abs)) +
        eps * weight_sum;
    if (std::isfinite(got) && std::abs(got - want) <= bound) return OkStatus();
    return MakeError(ErrorCode::kWrongResult,
                     std::string("wrong result: projection ") + what + "[" +
                         std::to_string(index) + "] = " + Describe(got) + ", expected " +
                         Describe(want) + " (bound " + Describe(bound) + ")");
  };
  for (std::int64_t i = 0; i < m; ++i) {
    if (auto status = check_projection("C x", i, c_x[i], ab_x_[i], c0_x_[i], c0_x_abs_[i],
                                       x_abs_sum);
        !status) {
      return status;
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    if (auto status = check_projection("y^T C", j, y_c[j], y_ab_[j], y_c0_[j], y_c0_abs_[j],
                                       y_abs_sum);
        !status) {
      return status;
    }
  }
  return OkStatus();
}

template class ResultChecker<float>;
template class ResultChecker<double>;
template class ResultChecker<float, BFloat16>;

}  // namespace mmtune
