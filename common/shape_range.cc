#include "common/shape_range.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace mmtune {
namespace {

constexpr std::int64_t kMaxDimension = std::numeric_limits<std::int32_t>::max();

Error Malformed(std::string_view whole, const std::string& why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "malformed shape '" + std::string(whole) + "': " + why);
}

// The next bucket above `value` (not included), or past hi when there is none.
std::int64_t NextBucketAbove(std::int64_t value, const BucketPolicy& policy) {
  if (policy.kind == BucketPolicy::Kind::kStep) return (value / policy.step + 1) * policy.step;
  std::int64_t power = 1;
  while (power <= value) power *= 2;
  return power;
}

Result<DimRange> ParseDimRange(std::string_view text, std::string_view whole, char name) {
  const std::size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    auto size = ParseShapeDimension(text, whole);
    if (!size) return size.error();
    if (*size == 0) {
      return Malformed(whole, std::string(1, name) + " is 0: there is nothing to tune");
    }
    return DimRange{*size, *size};
  }
  auto lo = ParseShapeDimension(text.substr(0, dots), whole);
  if (!lo) return lo.error();
  auto hi = ParseShapeDimension(text.substr(dots + 2), whole);
  if (!hi) return hi.error();
  if (*lo == 0) {
    return Malformed(whole, std::string(1, name) + " range " + std::string(text) +
                                " includes 0: there is nothing to tune (start it at 1)");
  }
  if (*lo > *hi) {
    return Malformed(whole, std::string(1, name) + " range " + std::string(text) +
                                " is empty (LO..HI needs LO <= HI)");
  }
  return DimRange{*lo, *hi};
}

std::string DimToString(const DimRange& range) {
  return range.lo == range.hi ? std::to_string(range.lo)
                              : std::to_string(range.lo) + ".." + std::to_string(range.hi);
}

}  // namespace

std::string BucketPolicy::ToString() const {
  return kind == Kind::kPow2 ? std::string("pow2") : "step:" + std::to_string(step);
}

Result<BucketPolicy> ParseBucketPolicy(std::string_view text) {
  if (text == "pow2") return BucketPolicy{};
  auto bad = [&] {
    return MakeError(ErrorCode::kInvalidArgument,
                     "unknown bucket policy '" + std::string(text) +
                         "' (expected pow2 or step:S with S a positive integer, e.g. step:64)");
  };
  if (!text.starts_with("step:")) return bad();
  const std::string_view digits = text.substr(5);
  std::int64_t step = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || step < 1 ||
      step > kMaxDimension) {
    return bad();
  }
  return BucketPolicy{BucketPolicy::Kind::kStep, step};
}

bool ShapeRange::Contains(const Shape& shape) const {
  return shape.m >= m.lo && shape.m <= m.hi && shape.n >= n.lo && shape.n <= n.hi &&
         shape.k >= k.lo && shape.k <= k.hi;
}

std::string ShapeRange::ToString() const {
  return DimToString(m) + "x" + DimToString(n) + "x" + DimToString(k);
}

Result<std::int64_t> ParseShapeDimension(std::string_view text, std::string_view whole) {
  if (text.empty()) return Malformed(whole, "empty dimension (expected MxNxK, e.g. 128x768x768)");
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Malformed(whole, "'" + std::string(text) + "' is not a non-negative integer");
    }
  }
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range || value > kMaxDimension) {
    return Malformed(whole, "dimension " + std::string(text) + " is too large (max " +
                                std::to_string(kMaxDimension) + ")");
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Malformed(whole, "'" + std::string(text) + "' is not a non-negative integer");
  }
  return value;
}

Result<ShapeRange> ParseShapeRange(std::string_view text) {
  DimRange dims[3];
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    const std::size_t cut = i < 2 ? rest.find_first_of("xX") : std::string_view::npos;
    if (i < 2 && cut == std::string_view::npos) {
      return Malformed(text, "expected three dimensions MxNxK, each a size or LO..HI, e.g. "
                             "1..2048x4096x4096");
    }
    auto dim = ParseDimRange(rest.substr(0, cut), text, "MNK"[i]);
    if (!dim) return dim.error();
    dims[i] = *dim;
    if (i < 2) rest.remove_prefix(cut + 1);
  }
  return ShapeRange{dims[0], dims[1], dims[2]};
}

std::vector<std::int64_t> BucketsOf(const DimRange& range, const BucketPolicy& policy) {
  std::vector<std::int64_t> buckets = {range.lo};
  for (std::int64_t size = NextBucketAbove(range.lo, policy); size < range.hi;
       size = NextBucketAbove(size, policy)) {
    buckets.push_back(size);
  }
  if (range.hi != range.lo) buckets.push_back(range.hi);
  return buckets;
}

Result<std::vector<Shape>> BucketShapes(const ShapeRange& range, const BucketPolicy& policy) {
  const std::vector<std::int64_t> ms = BucketsOf(range.m, policy);
  const std::vector<std::int64_t> ns = BucketsOf(range.n, policy);
  const std::vector<std::int64_t> ks = BucketsOf(range.k, policy);
  const double count = static_cast<double>(ms.size()) * static_cast<double>(ns.size()) *
                       static_cast<double>(ks.size());
  if (count > static_cast<double>(kMaxBucketShapes)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "range " + range.ToString() + " has " + std::to_string(ms.size()) + " x " +
                         std::to_string(ns.size()) + " x " + std::to_string(ks.size()) +
                         " buckets with " + policy.ToString() + ", more than " +
                         std::to_string(kMaxBucketShapes) + " shapes to tune (use a coarser "
                         "--buckets or a narrower range)");
  }
  std::vector<Shape> shapes;
  for (std::int64_t m : ms) {
    for (std::int64_t n : ns) {
      for (std::int64_t k : ks) shapes.push_back(Shape{m, n, k});
    }
  }
  return shapes;
}

DimRange SizesServedBy(std::int64_t bucket, const DimRange& range, const BucketPolicy& policy) {
  if (bucket <= range.lo) return DimRange{range.lo, range.lo};
  // The policy's largest size below `bucket`; lo when none lies above lo.
  std::int64_t below = 0;
  if (policy.kind == BucketPolicy::Kind::kStep) {
    below = (bucket - 1) / policy.step * policy.step;
  } else {
    below = 1;
    while (below * 2 < bucket) below *= 2;
  }
  return DimRange{std::max(below, range.lo) + 1, bucket};
}

Shape BucketShapeOf(const Shape& shape, const ShapeRange& range, const BucketPolicy& policy) {
  auto bucket = [&](std::int64_t value, const DimRange& dim) {
    if (value <= dim.lo) return dim.lo;
    // The buckets above lo are the policy's sizes, then hi: the first one at least `value`.
    const std::int64_t above = NextBucketAbove(value - 1, policy);
    return above < dim.hi ? above : dim.hi;
  };
  return Shape{bucket(shape.m, range.m), bucket(shape.n, range.n), bucket(shape.k, range.k)};
}

}  // namespace mmtune
