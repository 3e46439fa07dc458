#include "mmtune/bf16.h"

#include <string>

namespace mmtune {
namespace {

Status SameSize(std::size_t in, std::size_t out) {
  if (in == out) return OkStatus();
  return MakeError(ErrorCode::kInvalidArgument, "conversion of " + std::to_string(in) +
                                                    " values into a buffer of " +
                                                    std::to_string(out));
}

}  // namespace

Status ToBFloat16(std::span<const float> values, std::span<BFloat16> out) {
  if (auto status = SameSize(values.size(), out.size()); !status) return status;
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = ToBFloat16(values[i]);
  return OkStatus();
}

Status ToFloat(std::span<const BFloat16> values, std::span<float> out) {
  if (auto status = SameSize(values.size(), out.size()); !status) return status;
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = ToFloat(values[i]);
  return OkStatus();
}

}  // namespace mmtune
