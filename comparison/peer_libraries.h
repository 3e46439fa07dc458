// The peer libraries mmtune is compared with, each behind the same call: OpenBLAS (cblas), oneDNN
// (dnnl_sgemm, dnnl_gemm_u8s8s32, its matmul primitive for bf16, prepacked weights, batches and
// fused epilogues) and
// libxsmm (JIT kernel for its sizes, its BLAS fallback otherwise). Each is optional: compiled in
// when CMake found it (MMTUNE_HAVE_<PEER>), absent otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mmtune/bf16.h"
#include "mmtune/types.h"

namespace mmtune {

struct Peer {
  std::string name;     // "openblas", "onednn", "libxsmm"
  std::string version;  // and, for OpenBLAS, the active core
  // Row-major, no transposes: C = A * B (beta = 0). Returns false when the peer cannot do it.
  bool (*sgemm)(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                const float* b, float* c) = nullptr;
  bool (*dgemm)(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                const double* b, double* c) = nullptr;
  // The low-precision GEMMs, same convention: bf16 x bf16 -> f32 and u8 x s8 -> s32.
  bool (*bf16_gemm)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                    const BFloat16* a, const BFloat16* b, float* c) = nullptr;
  bool (*u8s8s32_gemm)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                       const std::uint8_t* a, const std::int8_t* b, std::int32_t* c) = nullptr;
  // The same with B taken as constant weights (`mmtune bench --packed-b`): the peer prepares B
  // in its own layout on its first call with a given B and shape, outside the timed calls, and
  // reuses it after. Null where the peer has no such API (only oneDNN's matmul has).
  bool (*sgemm_packed_b)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                         const float* a, const float* b, float* c) = nullptr;
  bool (*bf16_gemm_packed_b)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                             const BFloat16* a, const BFloat16* b, float* c) = nullptr;
  bool (*u8s8s32_gemm_packed_b)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                                const std::uint8_t* a, const std::int8_t* b,
                                std::int32_t* c) = nullptr;
  // A batch of `batch` GEMMs of one shape, each operand's items one after another (`mmtune
  // bench --batch`), each followed by a bias per column (N values shared by every item; null:
  // none) and an activation, fused into the call (`--batch --epilogue`). Null where the peer
  // has no batched call (only oneDNN's matmul has).
  bool (*sgemm_batch)(int threads, std::int64_t batch, std::int64_t m, std::int64_t n,
                      std::int64_t k, const float* a, const float* b, float* c,
                      const float* bias, Activation activation) = nullptr;
  bool (*bf16_gemm_batch)(int threads, std::int64_t batch, std::int64_t m, std::int64_t n,
                          std::int64_t k, const BFloat16* a, const BFloat16* b, float* c,
                          const float* bias, Activation activation) = nullptr;
  bool (*u8s8s32_gemm_batch)(int threads, std::int64_t batch, std::int64_t m, std::int64_t n,
                             std::int64_t k, const std::uint8_t* a, const std::int8_t* b,
                             std::int32_t* c, const std::int32_t* bias,
                             Activation activation) = nullptr;
  // The GEMM followed by a bias per column of C (N values; null: none) and an activation, fused
  // into the call (`mmtune bench --epilogue`); with `packed_weights`, B taken as constant
  // weights as above (`--packed-b --epilogue`). Null where the peer has no such API (only
  // oneDNN's matmul, with its bias and an eltwise post-op, has).
  bool (*sgemm_epilogue)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                         const float* a, const float* b, float* c, const float* bias,
                         Activation activation, bool packed_weights) = nullptr;
  bool (*bf16_gemm_epilogue)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                             const BFloat16* a, const BFloat16* b, float* c, const float* bias,
                             Activation activation, bool packed_weights) = nullptr;
  bool (*u8s8s32_gemm_epilogue)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                                const std::uint8_t* a, const std::int8_t* b, std::int32_t* c,
                                const std::int32_t* bias, Activation activation,
                                bool packed_weights) = nullptr;
  // The u8 x s8 GEMM dequantized to f32 in the call: C = act(scales[j] * (A B)(i, j) + bias[j])
  // (`mmtune bench --dequantize`; bias null: none), B as constant weights where
  // `packed_weights`. Null where the peer has none (only oneDNN's matmul, with output scales
  // per column, has; it takes the scales of a shape's first call).
  bool (*u8s8f32_gemm)(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                       const std::uint8_t* a, const std::int8_t* b, float* c,
                       const float* scales, const float* bias, Activation activation,
                       bool packed_weights) = nullptr;
};

// The peers this build found, in a fixed order.
std::vector<Peer> AvailablePeers();

// OpenBLAS reads OPENBLAS_CORETYPE once, when it loads, and that variable can force a core that is
// not this CPU's (this project's environment sets Haswell, AVX2 kernels on an AVX-512 CPU). Unless
// `keep` is set, a process that has the variable re-executes itself without it so OpenBLAS runs
// its native core; `argv` is the process's full argument vector. Says what it does on stderr,
// prefixed with `who`. Returns only when no re-execution happened.
void ReexecWithoutForcedOpenBlasCore(const char* who, bool keep, char** argv);

}  // namespace mmtune
