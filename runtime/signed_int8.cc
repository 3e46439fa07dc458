#include "runtime/signed_int8.h"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "kernels/gemm_args.h"

namespace mmtune {
namespace {

// Reused by each thread's calls: the shifted copy of A, the column sums of op(B), and the
// per-column scales of a dequantized GEMM.
thread_local std::vector<std::uint8_t> tls_shifted_a;
thread_local std::vector<std::uint32_t> tls_column_sums;
thread_local std::vector<float> tls_column_scales;

// A as stored, compacted and shifted by +128 into tls_shifted_a; its leading dimension.
Result<std::int64_t> ShiftA(Layout layout, Trans trans_a, std::int64_t m, std::int64_t k,
                            const std::uint8_t* a, std::int64_t lda) {
  const bool a_rows_are_m = (layout == Layout::kRowMajor) == (trans_a == Trans::kNo);
  const std::int64_t lines = a_rows_are_m ? m : k;
  const std::int64_t line_length = a_rows_are_m ? k : m;
  try {
    tls_shifted_a.resize(static_cast<std::size_t>(lines * line_length));
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kIo, "not enough memory for the shifted copy of A (" +
                                         std::to_string(lines * line_length) + " bytes)");
  }
  std::uint8_t* shifted = tls_shifted_a.data();
  for (std::int64_t line = 0; line < lines; ++line) {
    const std::uint8_t* from = a + line * lda;
    std::uint8_t* to = shifted + line * line_length;
    for (std::int64_t i = 0; i < line_length; ++i) to[i] = from[i] ^ 0x80u;
  }
  return line_length;
}

// tls_column_sums = -factor * (column sums of op(B)), modulo 2^32: the column term of an
// operand A shifted by `factor`. The sums are `b_column_sums` where given, else read from B.
Status ColumnTerm(Layout layout, Trans trans_b, std::int64_t n, std::int64_t k,
                  const std::int8_t* b, std::int64_t ldb, const std::uint32_t* b_column_sums,
                  std::uint32_t factor) {
  try {
    tls_column_sums.assign(static_cast<std::size_t>(n), 0u);
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kIo, "not enough memory for the column sums of B (" +
                                         std::to_string(n) + " values)");
  }
  std::uint32_t* sums = tls_column_sums.data();
  if (factor != 0) {
    if (b_column_sums != nullptr) {
      std::copy(b_column_sums, b_column_sums + n, sums);
    } else {
      ColumnSumsOf(layout, trans_b, n, k, b, ldb, sums);
    }
  }
  for (std::int64_t j = 0; j < n; ++j) sums[j] = 0u - sums[j] * factor;
  return OkStatus();
}

}  // namespace

void ColumnSumsOf(Layout layout, Trans trans_b, std::int64_t n, std::int64_t k,
                  const std::int8_t* b, std::int64_t ldb, std::uint32_t* sums) {
  const bool b_rows_are_k = (layout == Layout::kRowMajor) == (trans_b == Trans::kNo);
  if (b_rows_are_k) {
    std::fill(sums, sums + n, 0u);
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
}

Status SignedInt8Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                      std::int64_t n, std::int64_t k, std::int32_t alpha, const std::int8_t* a,
                      std::int64_t lda, const std::int8_t* b, std::int64_t ldb,
                      std::int64_t ldc, const U8S8S32Gemm& u8s8s32) {
  if (auto status = CheckGemmArguments(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
      !status) {
    return status;
  }
  const auto* a_bytes = reinterpret_cast<const std::uint8_t*>(a);
  if (m == 0 || n == 0 || k == 0 || alpha == 0) {
    // Nothing of A is read: the u8s8s32 GEMM only scales C by beta.
    return u8s8s32(lda, a_bytes, {});
  }
  auto shifted_lda = ShiftA(layout, trans_a, m, k, a_bytes, lda);
  if (!shifted_lda) return shifted_lda.error();
  const std::uint32_t factor = static_cast<std::uint32_t>(alpha) * 128u;
  if (auto status = ColumnTerm(layout, trans_b, n, k, b, ldb, nullptr, factor); !status) {
    return status;
  }
  Epilogue<std::int32_t> compensation;
  compensation.bias_kind = BiasKind::kPerColumn;
  compensation.bias = reinterpret_cast<const std::int32_t*>(tls_column_sums.data());
  return u8s8s32(*shifted_lda, tls_shifted_a.data(), compensation);
}

Status DequantizedInt8Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                           std::int64_t n, std::int64_t k, const std::uint8_t* a, bool a_signed,
                           std::int64_t lda, const std::int8_t* b, std::int64_t ldb, float* c,
                           std::int64_t ldc, const Dequantization& dequantization,
                           const Epilogue<float>& epilogue, const DequantizedU8S8Gemm& u8s8s32,
                           const std::uint32_t* b_column_sums) {
  if (auto status = CheckGemmArguments(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
      !status) {
    return status;
  }
  if (auto status = CheckEpilogue(epilogue); !status) return status;
  if (m == 0 || n == 0) return OkStatus();
  const std::uint8_t* a_read = a;
  std::int64_t a_ld = lda;
  if (a_signed && k > 0) {
    auto shifted_lda = ShiftA(layout, trans_a, m, k, a, lda);
    if (!shifted_lda) return shifted_lda.error();
    a_read = tls_shifted_a.data();
    a_ld = *shifted_lda;
  }
  const std::uint32_t shift = static_cast<std::uint32_t>(dequantization.a_zero_point) +
                              (a_signed ? 128u : 0u);
  if (auto status = ColumnTerm(layout, trans_b, n, k, b, ldb, b_column_sums, shift); !status) {
    return status;
  }
  try {
    tls_column_scales.resize(static_cast<std::size_t>(n));
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kIo, "not enough memory for the column scales (" +
                                         std::to_string(n) + " values)");
  }
  for (std::int64_t j = 0; j < n; ++j) {
    const float b_scale = dequantization.b_scales != nullptr ? dequantization.b_scales[j]
                                                             : dequantization.b_scale;
    tls_column_scales[static_cast<std::size_t>(j)] = dequantization.a_scale * b_scale;
  }
  const DequantizeToF32 dequantize{
      tls_column_scales.data(), reinterpret_cast<const std::int32_t*>(tls_column_sums.data()),
      epilogue};
  GemmArgs<S8Gemm> args{layout, trans_a, trans_b, m, n, k, 1, a_read, a_ld, b, ldb, 0,
                        reinterpret_cast<std::int32_t*>(c), ldc, {}};
  args.dequantize = &dequantize;
  return u8s8s32(args);
}

}  // namespace mmtune
