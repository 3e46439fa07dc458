// Shape ranges and their buckets. Serving stacks see shapes that change every call (prefill
// length, batch size); a range such as 1..2048x4096x4096 names all of them, and a bucket policy
// picks the few shapes that stand for the rest: each problem inside the range runs the winner of
// its bucket, the smallest bucket shape at least as large in every ranged dimension (the shape a
// graph-capture system would pad it to).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

// Which sizes of a ranged dimension are buckets, besides the range's two ends.
struct BucketPolicy {
  enum class Kind : std::uint8_t {
    kPow2,  // the powers of two
    kStep,  // the multiples of `step`
  };
  Kind kind = Kind::kPow2;
  std::int64_t step = 0;  // kStep only: at least 1

  std::string ToString() const;  // "pow2" or "step:S"
  friend bool operator==(const BucketPolicy&, const BucketPolicy&) = default;
};
// "pow2" or "step:S" with 1 <= S < 2^31; anything else is kInvalidArgument naming the text.
Result<BucketPolicy> ParseBucketPolicy(std::string_view text);

// The sizes [lo, hi] of one dimension; lo == hi for a fixed size.
struct DimRange {
  std::int64_t lo = 1;
  std::int64_t hi = 1;
  friend bool operator==(const DimRange&, const DimRange&) = default;
};

struct ShapeRange {
  DimRange m, n, k;

  bool IsSingleShape() const { return m.lo == m.hi && n.lo == n.hi && k.lo == k.hi; }
  bool Contains(const Shape& shape) const;
  // "MxNxK" with "LO..HI" for a ranged dimension, e.g. "1..2048x4096x4096".
  std::string ToString() const;
  friend bool operator==(const ShapeRange&, const ShapeRange&) = default;
};

// Most bucket shapes one range may stand for: more is a typo (step:1 over a long range) rather
// than a tune anybody means to run.
inline constexpr std::size_t kMaxBucketShapes = 4096;

// "MxNxK" where each of M, N and K is a size or "LO..HI" (inclusive), every size in [1, 2^31).
// A zero size, LO > HI, a malformed or too large number are kInvalidArgument, one line that
// names the text.
Result<ShapeRange> ParseShapeRange(std::string_view text);

// One dimension of a shape: decimal digits only, below 2^31 so that every product of two
// dimensions fits the kernels' 64-bit index arithmetic. `whole` is the text errors quote.
Result<std::int64_t> ParseShapeDimension(std::string_view text, std::string_view whole);

// The buckets of one dimension in increasing order: lo, each power of two (or multiple of the
// step) strictly between lo and hi, and hi.
std::vector<std::int64_t> BucketsOf(const DimRange& range, const BucketPolicy& policy);

// Every bucket shape of `range`: each combination of its dimensions' buckets, M slowest. The
// error says how many there would be when that is more than kMaxBucketShapes.
Result<std::vector<Shape>> BucketShapes(const ShapeRange& range, const BucketPolicy& policy);

// The bucket shape of `shape`, which `range` must contain: per dimension the smallest bucket at
// least as large.
Shape BucketShapeOf(const Shape& shape, const ShapeRange& range, const BucketPolicy& policy);

// The sizes of one ranged dimension that run with the winner of bucket size `bucket`, one of
// BucketsOf(range, policy): those above the next smaller bucket, up to `bucket`.
DimRange SizesServedBy(std::int64_t bucket, const DimRange& range, const BucketPolicy& policy);

}  // namespace mmtune
