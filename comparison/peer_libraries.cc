#include "comparison/peer_libraries.h"

#if MMTUNE_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if MMTUNE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
extern "C" void omp_set_num_threads(int);
#endif
#if MMTUNE_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

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
#endif

#if MMTUNE_HAVE_LIBXSMM
// libxsmm is column-major: row-major C = A * B is column-major C^T = B^T * A^T. JIT kernels are
// generated once per shape and cached; shapes it has no kernel for go to its BLAS fallback.
bool LibxsmmSgemm(int threads, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                  const float* b, float* c) {
  static std::mutex mutex;
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, libxsmm_smmfunction>
      kernels;
  libxsmm_smmfunction kernel = nullptr;
  {
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
                   &OneDnnSgemm, nullptr});
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
