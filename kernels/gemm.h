// Runs one GEMM with one kernel configuration: the entry point the tuner times and the runtime
// calls. BLAS semantics (see reference_gemm.h), any layout, transposes and leading dimensions.
#pragma once

#include <cstdint>

#include "kernels/kernel_config.h"
#include "kernels/thread_pool.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

template <typename T>
struct GemmArgs {
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  T alpha = 1;
  const T* a = nullptr;
  std::int64_t lda = 0;
  const T* b = nullptr;
  std::int64_t ldb = 0;
  T beta = 0;
  T* c = nullptr;
  std::int64_t ldc = 0;
};

// Computes C = alpha * op(A) * op(B) + beta * C with `config`. Checks the arguments (as BLAS
// does) and that the config can run here: its kernel exists, its ISA does not exceed what this
// CPU supports, its blocks and family fit the problem. An error means nothing was written.
// `config.threads` members of `pool` work on it (capped at the pool's size).
template <typename T>
Status Gemm(const KernelConfig& config, const GemmArgs<T>& args, ThreadPool& pool);

template <typename T>
Status Gemm(const KernelConfig& config, const GemmArgs<T>& args) {
  return Gemm(config, args, DefaultThreadPool());
}

extern template Status Gemm<float>(const KernelConfig&, const GemmArgs<float>&, ThreadPool&);
extern template Status Gemm<double>(const KernelConfig&, const GemmArgs<double>&, ThreadPool&);

}  // namespace mmtune
