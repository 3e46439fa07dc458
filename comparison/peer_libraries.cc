#include "comparison/peer_libraries.h"

#if MMTUNE_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if MMTUNE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int);
#endif
#if MMTUNE_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace mmtune {
namespace {

#if MMTUNE_HAVE_OPENBLAS
bool OpenBlasSgemm(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                   const float* b, float* c) {
  openblas_set_num_threads(threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(k), b,
              static_cast<int>(n), 0.0f, c, static_cast<int>(n));
  return true;
}
bool OpenBlasDgemm(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                   const double* b, double* c) {
  openblas_set_num_threads(threads);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(k), b,
              static_cast<int>(n), 0.0, c, static_cast<int>(n));
  return true;
}
#endif

#if MMTUNE_HAVE_ONEDNN
bool OneDnnSgemm(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                 const float* b, float* c) {
  omp_set_num_threads(threads);
  return dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n) == dnnl_success;
}

// oneDNN's integer GEMM: C = alpha (A - ao)(B - bo) + beta C + co, with zero offsets here.
bool OneDnnU8s8s32(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                   const std::uint8_t* a, const std::int8_t* b, std::int32_t* c) {
  omp_set_num_threads(threads);
  const std::int32_t no_offset = 0;
  return dnnl_gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, k, 0, b, n, 0, 0.0f, c, n,
                           &no_offset) == dnnl_success;
}

template <typename T>
constexpr dnnl::memory::data_type OneDnnType() {
  using dt = dnnl::memory::data_type;
  if constexpr (std::is_same_v<T, float>) return dt::f32;
  if constexpr (std::is_same_v<T, BFloat16>) return dt::bf16;
  if constexpr (std::is_same_v<T, std::uint8_t>) return dt::u8;
  if constexpr (std::is_same_v<T, std::int8_t>) return dt::s8;
  if constexpr (std::is_same_v<T, std::int32_t>) return dt::s32;
}

// oneDNN's matmul primitive, made once per shape and cached, as an application would. With
// `packed_weights` B is given to it in the layout it chooses (format "any"), reordered from the
// caller's B on the first call with that B and reused by later calls: oneDNN's answer to weights
// that do not change. With `batch` > 1 it is the batched matmul of that many items, each
// operand's items one after another (3-D tensors). False when this CPU has no such matmul
// (e.g. bf16 without AVX-512).
// The eltwise post-op of an activation (silu is swish with alpha 1).
void AppendActivation(dnnl::post_ops& ops, Activation activation) {
  using dnnl::algorithm;
  const algorithm kind = activation == Activation::kRelu   ? algorithm::eltwise_relu
                         : activation == Activation::kGelu ? algorithm::eltwise_gelu_tanh
                                                           : algorithm::eltwise_swish;
  const float alpha = activation == Activation::kSilu ? 1.0f : 0.0f;
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(kind, alpha, 0.0f);
#else
  ops.append_eltwise(1.0f, kind, alpha, 0.0f);
#endif
}

// With a `bias` (N values, one per column of C) and an `activation`, oneDNN adds the bias and
// applies the activation as a post-op inside the matmul: its fused epilogue.
// With `column_scales` (N values) each column of the s32 product is scaled into f32 C before the
// bias: output scales, fixed when the primitive of the shape is made.
template <typename TA, typename TB, typename TC>
bool OneDnnMatmul(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const TA* a,
                  const TB* b, TC* c, bool packed_weights, std::int64_t batch = 1,
                  const TC* bias = nullptr, Activation activation = Activation::kNone,
                  const float* column_scales = nullptr) {
  using dnnl::memory;
  struct Prepared {
    std::unique_ptr<dnnl::matmul> primitive;
    std::unique_ptr<memory> weights;  // packed_weights: B in oneDNN's layout
    const TB* packed_from = nullptr;  // the B it holds
  };
  static std::mutex mutex;
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t, bool,
                             Activation, bool>,
                  Prepared>
      cache;
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  // Row-major matrices, or a row-major stack of them.
  auto desc = [batch](std::int64_t rows, std::int64_t cols, memory::data_type type,
                      bool any = false) {
    if (batch > 1) {
      return memory::desc({batch, rows, cols}, type,
                          any ? memory::format_tag::any : memory::format_tag::abc);
    }
    return memory::desc({rows, cols}, type, any ? memory::format_tag::any : memory::format_tag::ab);
  };
  const memory::desc a_md = desc(m, k, OneDnnType<TA>());
  const memory::desc b_md = desc(k, n, OneDnnType<TB>());
  const memory::desc c_md = desc(m, n, OneDnnType<TC>());
  // One bias row, broadcast over the rows and over a batch's items.
  const memory::desc bias_desc =
      batch > 1 ? memory::desc({1, 1, n}, OneDnnType<TC>(), memory::format_tag::abc)
                : desc(1, n, OneDnnType<TC>());
  try {
    omp_set_num_threads(threads);
    dnnl::stream stream(engine);
    memory b_mem(b_md, engine, const_cast<TB*>(b));
    Prepared* prepared = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      Prepared& slot = cache[std::make_tuple(m, n, k, packed_weights, batch, bias != nullptr,
                                             activation, column_scales != nullptr)];
      if (!slot.primitive) {
        const memory::desc weights_md =
            packed_weights ? desc(k, n, OneDnnType<TB>(), true) : b_md;
        dnnl::primitive_attr attr;
        if (activation != Activation::kNone) {
          dnnl::post_ops ops;
          AppendActivation(ops, activation);
          attr.set_post_ops(ops);
        }
        if (column_scales != nullptr) {
#if DNNL_VERSION_MAJOR >= 3
          attr.set_scales_mask(DNNL_ARG_WEIGHTS, 1 << 1);
#else
          attr.set_output_scales(1 << 1, std::vector<float>(column_scales, column_scales + n));
#endif
        }
        const memory::desc bias_md = bias != nullptr ? bias_desc : memory::desc();
#if DNNL_VERSION_MAJOR >= 3
        const dnnl::matmul::primitive_desc pd(engine, a_md, weights_md, bias_md, c_md, attr);
#else
        const dnnl::matmul::primitive_desc pd(
            dnnl::matmul::desc(a_md, weights_md, bias_md, c_md), attr, engine);
#endif
        slot.primitive = std::make_unique<dnnl::matmul>(pd);
        if (packed_weights) slot.weights = std::make_unique<memory>(pd.weights_desc(), engine);
      }
      if (packed_weights && slot.packed_from != b) {
        dnnl::reorder(b_mem, *slot.weights).execute(stream, b_mem, *slot.weights);
        stream.wait();
        slot.packed_from = b;
      }
      prepared = &slot;
    }
    memory a_mem(a_md, engine, const_cast<TA*>(a));
    memory c_mem(c_md, engine, c);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, a_mem},
        {DNNL_ARG_WEIGHTS, packed_weights ? *prepared->weights : b_mem},
        {DNNL_ARG_DST, c_mem}};
    if (bias != nullptr) {
      args.emplace(DNNL_ARG_BIAS, memory(bias_desc, engine, const_cast<TC*>(bias)));
    }
#if DNNL_VERSION_MAJOR >= 3
    if (column_scales != nullptr) {
      args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS,
                   memory({{n}, memory::data_type::f32, memory::format_tag::a}, engine,
                          const_cast<float*>(column_scales)));
    }
#endif
    prepared->primitive->execute(stream, args);
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// oneDNN has no bf16 GEMM function, so its matmul primitive (bf16 x bf16 -> f32) stands in.
bool OneDnnBf16(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const BFloat16* a,
                const BFloat16* b, float* c) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, false);
}

bool OneDnnSgemmPackedB(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                        const float* a, const float* b, float* c) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, true);
}
bool OneDnnBf16PackedB(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                       const BFloat16* a, const BFloat16* b, float* c) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, true);
}
bool OneDnnU8s8s32PackedB(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                          const std::uint8_t* a, const std::int8_t* b, std::int32_t* c) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, true);
}

bool OneDnnSgemmEpilogue(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                         const float* a, const float* b, float* c, const float* bias,
                         Activation activation, bool packed_weights) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, packed_weights, 1, bias, activation);
}
bool OneDnnBf16Epilogue(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                        const BFloat16* a, const BFloat16* b, float* c, const float* bias,
                        Activation activation, bool packed_weights) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, packed_weights, 1, bias, activation);
}
bool OneDnnU8s8s32Epilogue(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                           const std::uint8_t* a, const std::int8_t* b, std::int32_t* c,
                           const std::int32_t* bias, Activation activation,
                           bool packed_weights) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, packed_weights, 1, bias, activation);
}

// oneDNN 2 adds an int8 matmul's bias before the output scales, dst = scale * (acc + bias), so
// it is given the bias over the scales (kept per shape, made on its first call); oneDNN 3 adds
// it after them.
bool OneDnnU8s8f32(int threads, std::int64_t m, std::int64_t n, std::int64_t k,
                   const std::uint8_t* a, const std::int8_t* b, float* c, const float* scales,
                   const float* bias, Activation activation, bool packed_weights) {
#if DNNL_VERSION_MAJOR < 3
  if (bias != nullptr) {
    static std::mutex mutex;
    static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::vector<float>>
        unscaled;
    std::vector<float>* mine = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      mine = &unscaled[std::make_tuple(m, n, k)];
      if (mine->empty()) {
        for (std::int64_t j = 0; j < n; ++j) mine->push_back(bias[j] / scales[j]);
      }
    }
    bias = mine->data();
  }
#endif
  return OneDnnMatmul(threads, m, n, k, a, b, c, packed_weights, 1, bias, activation, scales);
}

bool OneDnnSgemmBatch(int threads, std::int64_t batch, std::int64_t m, std::int64_t n,
                      std::int64_t k, const float* a, const float* b, float* c,
                      const float* bias, Activation activation) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, false, batch, bias, activation);
}
bool OneDnnBf16Batch(int threads, std::int64_t batch, std::int64_t m, std::int64_t n,
                     std::int64_t k, const BFloat16* a, const BFloat16* b, float* c,
                     const float* bias, Activation activation) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, false, batch, bias, activation);
}
bool OneDnnU8s8s32Batch(int threads, std::int64_t batch, std::int64_t m, std::int64_t n,
                        std::int64_t k, const std::uint8_t* a, const std::int8_t* b,
                        std::int32_t* c, const std::int32_t* bias, Activation activation) {
  return OneDnnMatmul(threads, m, n, k, a, b, c, false, batch, bias, activation);
}
#endif

#if MMTUNE_HAVE_LIBXSMM
// libxsmm is column-major: row-major C = A * B is column-major C^T = B^T * A^T. JIT kernels are
// generated once per shape and cached; shapes it has no kernel for go to its BLAS fallback.
// A call of the shape before takes its kernel from a per-thread slot, without the lock and the
// map: an application dispatches once and keeps the function, and mmtune's side is timed with
// its plan made once too. Through the map, a small call takes noticeably longer.
bool LibxsmmSgemm(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                  const float* b, float* c) {
  struct LastShape {
    std::int64_t m = -1, n = -1, k = -1;
    libxsmm_smmfunction kernel = nullptr;
  };
  thread_local LastShape last;
  static std::mutex mutex;
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, libxsmm_smmfunction>
      kernels;
  libxsmm_smmfunction kernel = nullptr;
  if (last.m == m && last.n == n && last.k == k) {
    kernel = last.kernel;
  } else {
    std::lock_guard<std::mutex> lock(mutex);
    auto key = std::make_tuple(m, n, k);
    auto it = kernels.find(key);
    if (it == kernels.end()) {
      const float alpha = 1.0f, beta = 0.0f;
      it = kernels
               .emplace(key, libxsmm_smmdispatch(n, m, k, nullptr, nullptr, nullptr, &alpha,
                                                 &beta, nullptr, nullptr))
               .first;
    }
    kernel = it->second;
    last = {m, n, k, kernel};
  }
  if (kernel != nullptr && threads == 1) {
    kernel(b, a, c);
    return true;
  }
  const libxsmm_blasint mm = n, nn = m, kk = k;
  const float alpha = 1.0f, beta = 0.0f;
  libxsmm_sgemm("N", "N", &mm, &nn, &kk, &alpha, b, &mm, a, &kk, &beta, c, &mm);
  return true;
}
#endif

}  // namespace

std::vector<Peer> AvailablePeers() {
  std::vector<Peer> peers;
#if MMTUNE_HAVE_OPENBLAS
  peers.push_back({"openblas",
                   std::string(openblas_get_config()) + ", core " + openblas_get_corename(),
                   &OpenBlasSgemm, &OpenBlasDgemm});
#endif
#if MMTUNE_HAVE_ONEDNN
  const dnnl_version_t* v = dnnl_version();
  peers.push_back({"onednn",
                   std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                       std::to_string(v->patch) +
                       (v->cpu_runtime == DNNL_RUNTIME_OMP ? " (OpenMP)" : ""),
                   &OneDnnSgemm, nullptr, &OneDnnBf16, &OneDnnU8s8s32, &OneDnnSgemmPackedB,
                   &OneDnnBf16PackedB, &OneDnnU8s8s32PackedB, &OneDnnSgemmBatch,
                   &OneDnnBf16Batch, &OneDnnU8s8s32Batch, &OneDnnSgemmEpilogue,
                   &OneDnnBf16Epilogue, &OneDnnU8s8s32Epilogue, &OneDnnU8s8f32});
#endif
#if MMTUNE_HAVE_LIBXSMM
  libxsmm_init();
  peers.push_back({"libxsmm", LIBXSMM_VERSION, &LibxsmmSgemm, nullptr});
#endif
  return peers;
}

void ReexecWithoutForcedOpenBlasCore(const char* who, bool keep, char** argv) {
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced == nullptr) return;
  if (keep) {
    std::fprintf(stderr, "%s: keeping OPENBLAS_CORETYPE=%s as asked\n", who, forced);
    return;
  }
  std::fprintf(stderr,
               "%s: warning: OPENBLAS_CORETYPE=%s forces a non-native OpenBLAS core; re-running "
               "without it so OpenBLAS uses this CPU's own kernels\n",
               who, forced);
  ::unsetenv("OPENBLAS_CORETYPE");
  ::execv("/proc/self/exe", argv);
  std::perror("re-exec failed; continuing with the forced OpenBLAS core");
}

}  // namespace mmtune
