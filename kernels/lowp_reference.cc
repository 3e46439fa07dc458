#include "kernels/lowp_reference.h"

#include <type_traits>

#include "kernels/gemm_args.h"

namespace mmtune {
namespace {

double Widen(BFloat16 x) { return ToFloat(x); }
std::int64_t Widen(std::uint8_t x) { return x; }
std::int64_t Widen(std::int8_t x) { return x; }

std::int32_t Wrap(std::uint64_t bits) { return static_cast<std::int32_t>(bits & 0xffffffffu); }

}  // namespace

template <class Kind>
Status ReferenceLowpGemm(const GemmArgs<Kind>& args) {
  if (auto status = CheckGemmArguments(args.layout, args.trans_a, args.trans_b, args.m, args.n,
                                       args.k, args.lda, args.ldb, args.ldc);
      !status) {
    return status;
  }
  const Layout layout = args.layout;
  auto op_a = [&](std::int64_t i, std::int64_t p) {
    return Widen(args.trans_a == Trans::kNo ? args.a[StoredOffset(layout, i, p, args.lda)]
                                            : args.a[StoredOffset(layout, p, i, args.lda)]);
  };
  auto op_b = [&](std::int64_t p, std::int64_t j) {
    return Widen(args.trans_b == Trans::kNo ? args.b[StoredOffset(layout, p, j, args.ldb)]
                                            : args.b[StoredOffset(layout, j, p, args.ldb)]);
  };
  const bool skip_product = args.alpha == 0 || args.k == 0;
  for (std::int64_t i = 0; i < args.m; ++i) {
    for (std::int64_t j = 0; j < args.n; ++j) {
      auto& out = args.c[StoredOffset(layout, i, j, args.ldc)];
      if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
        double sum = 0.0;
        if (!skip_product) {
          for (std::int64_t p = 0; p < args.k; ++p) sum += op_a(i, p) * op_b(p, j);
        }
        const double scaled_c = args.beta == 0.0f ? 0.0 : static_cast<double>(args.beta) * out;
        out = static_cast<float>((skip_product ? 0.0 : args.alpha * sum) + scaled_c);
      } else {
        std::int64_t sum = 0;
        if (!skip_product) {
          for (std::int64_t p = 0; p < args.k; ++p) sum += op_a(i, p) * op_b(p, j);
        }
        // Unsigned 64-bit arithmetic: the low 32 bits are the s32 result modulo 2^32.
        std::uint64_t value = skip_product ? 0
                                           : static_cast<std::uint64_t>(args.alpha) *
                                                 static_cast<std::uint64_t>(sum);
        if (args.beta != 0) {
          value += static_cast<std::uint64_t>(args.beta) * static_cast<std::uint64_t>(out);
        }
        out = Wrap(value);
      }
    }
  }
  return OkStatus();
}

template Status ReferenceLowpGemm<Bf16Gemm>(const GemmArgs<Bf16Gemm>&);
template Status ReferenceLowpGemm<S8Gemm>(const GemmArgs<S8Gemm>&);

}  // namespace mmtune
