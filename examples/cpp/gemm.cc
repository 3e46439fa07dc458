// C = A * B in f32 and in bf16 through mmtune's C++ API, again with B packed once as a layer's
// weights, and as a batch of two GEMMs (each half of A's rows times the shared B), with what the
// runtime chose for them.
// Usage: gemm [DB]
#include <cmath>
#include <cstdio>
#include <vector>

#include <mmtune/runtime.h>

int main(int argc, char** argv) {
  constexpr std::int64_t m = 128, n = 96, k = 160;
  std::vector<float> a(m * k), b(k * n), c(m * n), c16(m * n), c_packed(m * n), c_batch(m * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2.0f;
  std::vector<mmtune::BFloat16> a16(a.size()), b16(b.size());
  if (!mmtune::ToBFloat16(a, a16).ok() || !mmtune::ToBFloat16(b, b16).ok()) return 1;

  mmtune::RuntimeOptions options;
  if (argc > 1) options.db_path = argv[1];
  auto runtime = mmtune::Runtime::Open(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "gemm: %s\n", runtime.error().message.c_str());
    return 1;
  }
  using mmtune::Layout, mmtune::Trans;
  mmtune::Status f32 = (*runtime)->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1.0f,
                                        a.data(), k, b.data(), n, 0.0f, c.data(), n);
  mmtune::Status bf16 = (*runtime)->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                         1.0f, a16.data(), k, b16.data(), n, 0.0f, c16.data(), n);
  if (!f32.ok() || !bf16.ok()) {
    std::fprintf(stderr, "gemm: %s\n", (f32.ok() ? bf16 : f32).error().message.c_str());
    return 1;
  }
  // B as weights: packed once, then any number of GEMMs (of any M) skip packing it.
  auto weights = (*runtime)->PackB(Layout::kRowMajor, Trans::kNo, m, n, k, b.data(), n);
  if (!weights.ok()) {
    std::fprintf(stderr, "gemm: %s\n", weights.error().message.c_str());
    return 1;
  }
  mmtune::Status packed = (*runtime)->Gemm(Layout::kRowMajor, Trans::kNo, m, 1.0f, a.data(), k,
                                           *weights, 0.0f, c_packed.data(), n);
  if (!packed.ok()) {
    std::fprintf(stderr, "gemm: %s\n", packed.error().message.c_str());
    return 1;
  }
  // A batch: item i is rows [i * m / 2, (i + 1) * m / 2) of A times B (shared: stride 0).
  mmtune::Status batch = (*runtime)->GemmBatch(
      Layout::kRowMajor, Trans::kNo, Trans::kNo, m / 2, n, k, 1.0f, a.data(), k, b.data(), n,
      0.0f, c_batch.data(), n, mmtune::BatchStrides{2, m / 2 * k, 0, m / 2 * n});
  if (!batch.ok()) {
    std::fprintf(stderr, "gemm: %s\n", batch.error().message.c_str());
    return 1;
  }
  // The inputs are small integers: exact in bf16, and every sum is exact in f32.
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float want = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
      if (c[i * n + j] != want || c16[i * n + j] != want || c_packed[i * n + j] != want ||
          c_batch[i * n + j] != want) {
        std::fprintf(stderr,
                     "gemm: C[%lld][%lld] = %g (bf16 %g, packed B %g, batch %g), expected %g\n",
                     static_cast<long long>(i), static_cast<long long>(j), c[i * n + j],
                     c16[i * n + j], c_packed[i * n + j], c_batch[i * n + j], want);
        return 1;
      }
    }
  }
  const mmtune::Problem problem{mmtune::DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo,
                                m, n, k, 1};
  const mmtune::LookupReport report = (*runtime)->Lookup(problem);
  std::printf("C++ API: %s matches the reference (f32, bf16, packed B, batch); %s tier: %s\n",
              problem.ToString().c_str(), mmtune::ToString(report.tier),
              report.config_text.c_str());
  return 0;
}
