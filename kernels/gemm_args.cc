#include "kernels/gemm_args.h"

#include <algorithm>
#include <string>

namespace mmtune {

Status DescribeGemmArgumentError(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                                 std::int64_t n, std::int64_t k, std::int64_t lda,
                                 std::int64_t ldb, std::int64_t ldc) {
  auto fail = [](const std::string& message) {
    return Status(MakeError(ErrorCode::kInvalidArgument, message));
  };
  if (m < 0) return fail("M = " + std::to_string(m) + " must be >= 0");
  if (n < 0) return fail("N = " + std::to_string(n) + " must be >= 0");
  if (k < 0) return fail("K = " + std::to_string(k) + " must be >= 0");
  const auto check_ld = [&](const char* name, std::int64_t ld, std::int64_t min) -> Status {
    if (ld < min) {
      return fail(std::string(name) + " = " + std::to_string(ld) + " is below its minimum " +
                  std::to_string(min));
    }
    return OkStatus();
  };
  if (auto s = check_ld("lda", lda, MinLeadingDimension(layout, trans_a, m, k)); !s) return s;
  if (auto s = check_ld("ldb", ldb, MinLeadingDimension(layout, trans_b, k, n)); !s) return s;
  return check_ld("ldc", ldc, MinLeadingDimension(layout, Trans::kNo, m, n));
}

Status CheckBArguments(Layout layout, Trans trans_b, std::int64_t k, std::int64_t n,
                       const void* b, std::int64_t ldb) {
  // B's own checks, with an A and a C of no rows.
  if (auto status = CheckGemmArguments(layout, Trans::kNo, trans_b, 0, n, k,
                                       MinLeadingDimension(layout, Trans::kNo, 0, k), ldb,
                                       MinLeadingDimension(layout, Trans::kNo, 0, n));
      !status) {
    return status;
  }
  if (b == nullptr && n > 0 && k > 0) {
    return MakeError(ErrorCode::kInvalidArgument, "B is NULL");
  }
  return OkStatus();
}

}  // namespace mmtune
