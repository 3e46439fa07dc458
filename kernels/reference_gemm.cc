#include "kernels/reference_gemm.h"

#include <cmath>
#include <limits>

#include "kernels/gemm_args.h"

namespace mmtune {

template <typename T>
Status ReferenceGemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b,
                     std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (auto status = CheckGemmArguments(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
      !status) {
    return status;
  }
  // op(X)(row, col) is X(col, row) when X is transposed.
  auto op_a = [&](std::int64_t i, std::int64_t p) {
    return trans_a == Trans::kNo ? a[StoredOffset(layout, i, p, lda)]
                                 : a[StoredOffset(layout, p, i, lda)];
  };
  auto op_b = [&](std::int64_t p, std::int64_t j) {
    return trans_b == Trans::kNo ? b[StoredOffset(layout, p, j, ldb)]
                                 : b[StoredOffset(layout, j, p, ldb)];
  };
  const bool skip_product = alpha == T(0) || k == 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      if (!skip_product) {
        for (std::int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(op_a(i, p)) * static_cast<double>(op_b(p, j));
        }
      }
      T& out = c[StoredOffset(layout, i, j, ldc)];
      const double scaled_c = beta == T(0) ? 0.0 : static_cast<double>(beta) * out;
      out = static_cast<T>((skip_product ? 0.0 : static_cast<double>(alpha) * sum) + scaled_c);
    }
  }
  return OkStatus();
}

template Status ReferenceGemm<float>(Layout, Trans, Trans, std::int64_t, std::int64_t,
                                     std::int64_t, float, const float*, std::int64_t,
                                     const float*, std::int64_t, float, float*, std::int64_t);
template Status ReferenceGemm<double>(Layout, Trans, Trans, std::int64_t, std::int64_t,
                                      std::int64_t, double, const double*, std::int64_t,
                                      const double*, std::int64_t, double, double*,
                                      std::int64_t);

double ReferenceActivation(Activation activation, double x) {
  if (x == -std::numeric_limits<double>::infinity() && activation != Activation::kNone) {
    return 0;  // the limit (the formulas give inf / inf)
  }
  switch (activation) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x < 0 ? 0.0 : x;
    case Activation::kGelu: {
      const double u = std::sqrt(2.0 / std::acos(-1.0)) * (x + 0.044715 * x * x * x);
      return x / (1.0 + std::exp(-2.0 * u));
    }
    case Activation::kSilu: return x / (1.0 + std::exp(-x));
  }
  return x;
}

}  // namespace mmtune
