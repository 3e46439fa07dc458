// The test oracle: a plain triple loop that accumulates in double whatever the element type, so
// its own rounding error is far below that of any kernel it judges. Slow on purpose; never tuned.
#pragma once

#include <cstdint>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

// C = alpha * op(A) * op(B) + beta * C with full BLAS semantics: M or N = 0 does nothing;
// alpha = 0 or K = 0 only scales C by beta; beta = 0 never reads C (NaN or Inf there does not
// leak into the result). Elements outside the M x N window of C are never touched. Returns an
// error, and touches nothing, when `CheckGemmArguments` rejects the arguments.
template <typename T>
Status ReferenceGemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b,
                     std::int64_t ldb, T beta, T* c, std::int64_t ldc);

extern template Status ReferenceGemm<float>(Layout, Trans, Trans, std::int64_t, std::int64_t,
                                            std::int64_t, float, const float*, std::int64_t,
                                            const float*, std::int64_t, float, float*,
                                            std::int64_t);
extern template Status ReferenceGemm<double>(Layout, Trans, Trans, std::int64_t, std::int64_t,
                                             std::int64_t, double, const double*, std::int64_t,
                                             const double*, std::int64_t, double, double*,
                                             std::int64_t);

// An epilogue's activation (mmtune/types.h) in double: relu, and gelu and silu as x / (1 + e^z),
// gelu's tanh form 0.5 x (1 + tanh(u)) written x / (1 + e^(-2u)), the same function without the
// cancellation of 1 + tanh(u) for negative x; 0 for -inf.
double ReferenceActivation(Activation activation, double x);

}  // namespace mmtune
