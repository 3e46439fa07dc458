#include "runtime/signed_int8.h"

#include <new>
#include <vector>

#include "kernels/gemm_args.h"

namespace mmtune {
namespace {

// Reused by each thread's calls: the shifted copy of A and the column sums of op(B).
thread_local std::vector<std::uint8_t> tls_shifted_a;
thread_local std::vector<std::uint32_t> tls_column_sums;

}  // namespace

Status SignedInt8Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                      std::int64_t n, std::int64_t k, std::int32_t alpha, const std::int8_t* a,
                      std::int64_t lda, const std::int8_t* b, std::int64_t ldb,
                      std::int64_t ldc, const U8S8S32Gemm& u8s8s32) {
  if (auto status = CheckGemmArguments(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
      !status) {
    return status;
  }
  if (m == 0 || n == 0 || k == 0 || alpha == 0) {
    // Nothing of A is read: the u8s8s32 GEMM only scales C by beta.
    return u8s8s32(lda, reinterpret_cast<const std::uint8_t*>(a), {});
  }
  // A as stored (rows x cols, leading dimension lda), compacted and shifted by +128.
  const bool a_rows_are_m = (layout == Layout::kRowMajor) == (trans_a == Trans::kNo);
  const std::int64_t lines = layout == Layout::kRowMajor ? (trans_a == Trans::kNo ? m : k)
                                                         : (trans_a == Trans::kNo ? k : m);
  const std::int64_t line_length = a_rows_are_m ? k : m;
  try {
    tls_shifted_a.resize(static_cast<std::size_t>(lines * line_length));
    tls_column_sums.assign(static_cast<std::size_t>(n), 0u);
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kIo, "not enough memory for the shifted copy of A (" +
                                         std::to_string(lines * line_length) + " bytes)");
  }
  std::uint8_t* shifted = tls_shifted_a.data();
  for (std::int64_t line = 0; line < lines; ++line) {
    const std::int8_t* from = a + line * lda;
    std::uint8_t* to = shifted + line * line_length;
    for (std::int64_t i = 0; i < line_length; ++i) {
      to[i] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(from[i]) ^ 0x80u);
    }
  }
  // Column sums of op(B) (k x n), in the order B is stored.
  std::uint32_t* sums = tls_column_sums.data();
  const bool b_rows_are_k = (layout == Layout::kRowMajor) == (trans_b == Trans::kNo);
  if (b_rows_are_k) {
    for (std::int64_t p = 0; p < k; ++p) {
      const std::int8_t* line = b + p * ldb;
      for (std::int64_t j = 0; j < n; ++j) sums[j] += static_cast<std::uint32_t>(line[j]);
    }
  } else {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int8_t* line = b + j * ldb;
      std::uint32_t sum = 0;
      for (std::int64_t p = 0; p < k; ++p) sum += static_cast<std::uint32_t>(line[p]);
      sums[j] = sum;
    }
  }

  // The bias: minus alpha * 128 * colsum, modulo 2^32.
  const auto scale = static_cast<std::uint32_t>(alpha) * 128u;
  for (std::int64_t j = 0; j < n; ++j) sums[j] = 0u - sums[j] * scale;
  Epilogue<std::int32_t> compensation;
  compensation.bias_kind = BiasKind::kPerColumn;
  compensation.bias = reinterpret_cast<const std::int32_t*>(sums);
  return u8s8s32(line_length, shifted, compensation);
}

}  // namespace mmtune
