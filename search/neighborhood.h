// The shape of a search space as the strategies see it: which configs are "next to" which.
//
// Configs of a generated space rarely differ in exactly one field, because the space ties fields
// together (the candidate `mc` values are derived from `kc`, `kc` from the tile's `nr`, and blocks
// are multiples of the tile). So the neighbourhood is defined by a distance instead: each config
// is a point of (family, ISA level, log2 of `mr`, `nr` and `k_unroll`, log2 of `kc`, `mc` and
// `nc`, prefetch variant, parallel loop and tile order, threads), and a neighbour of config `i`
// along an axis (say "`kc` up") is the config that moves along that axis while changing the rest
// as little as possible. docs/search.md describes the weights.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/kernel_config.h"

namespace mmtune {

// The axes along which neighbours are taken. Ordered axes have one neighbour per direction (the
// nearest smaller and the nearest larger value); categorical ones one per other value.
enum class SearchAxis : std::uint8_t {
  kFamily,        // categorical
  kIsa,           // ordered
  kMr,            // ordered; the tile (mr, nr, k_unroll) is one parameter group of three axes
  kNr,            // ordered
  kKUnroll,       // ordered
  kKc,            // ordered (log2)
  kMc,            // ordered (log2)
  kNc,            // ordered (log2)
  kPrefetch,      // categorical: the (prefetch_a, prefetch_b, prefetch_c) variant
  kParallelLoop,  // categorical: the parallel loop and, for direct, the tile order
};
inline constexpr int kSearchAxisCount = 10;

// The groups that crossover takes from one parent or the other: the micro-kernel (ISA and tile)
// travels as a unit because a tile of one ISA rarely exists at another.
enum class ParameterGroup : std::uint8_t {
  kFamily,
  kKernel,
  kKc,
  kMc,
  kNc,
  kPrefetch,
  kParallelLoop,
};
inline constexpr int kParameterGroupCount = 7;

class Neighborhood {
 public:
  // Precomputes every config's neighbours once. Configs are grouped in buckets of one kernel and
  // one schedule (family, prefetch, loop, threads), which differ only in blocks: block axes look
  // inside the config's own bucket, kernel axes at the buckets of the same schedule, schedule
  // axes at the buckets of the same kernel, and from another bucket only its config with the
  // nearest blocks can win. That is O(n * (bucket size + buckets)), not O(n^2): about 0.1 s for
  // a 6,000-config space and 0.35 s for 18,000 (AVX-512, all ISA levels, 8 threads).
  explicit Neighborhood(const std::vector<KernelConfig>& space);

  std::size_t size() const { return points_.size(); }

  // The neighbours of `index`, closest first, without duplicates and without `index` itself.
  std::span<const std::uint32_t> Neighbors(std::size_t index) const;

  // An id shared by the configs with the same micro-kernel (ISA, mr, nr, k_unroll).
  int KernelOf(std::size_t index) const { return points_[index].kernel_key; }

  // The weighted distance between two configs of the space (0 for identical points).
  std::int64_t Distance(std::size_t a, std::size_t b) const;

  // The config nearest to a mix of two configs: the groups in `groups_from_b` (bit
  // `1 << ParameterGroup`) taken from `b`, the rest from `a`, among the indices `allowed` accepts
  // (ties go to the lower index). `size()` when none is allowed. With `a == b` this is "the
  // nearest allowed config to `a`". O(n).
  std::size_t NearestMix(std::size_t a, std::size_t b, std::uint32_t groups_from_b,
                         const std::function<bool(std::size_t)>& allowed) const;

  // One unit of distance: a factor of two in one block size or tile dimension.
  static constexpr std::int64_t kUnit = 256;

 private:
  // A config as coordinates. Logs are fixed point (kUnit per doubling) so that distances are
  // integers and identical on every platform and standard library.
  struct Point {
    int family = 0;
    int isa = 0;
    int mr = 0, nr = 0, k_unroll = 0;  // raw values, for the direction of ordered axes
    std::int64_t log_mr = 0, log_nr = 0, log_k_unroll = 0;
    std::int64_t log_kc = 0, log_mc = 0, log_nc = 0;  // "effective" blocks, see the .cc
    int prefetch = 0;  // interned (prefetch_a, prefetch_b, prefetch_c) variant
    int loop = 0;      // interned (parallel loop, tile order)
    std::int64_t log_threads = 0;
    int kernel_key = 0;    // interned (isa, mr, nr, k_unroll)
    int schedule_key = 0;  // interned (family, prefetch variant, loop, threads)
  };
  using AxisComponents = std::array<std::int64_t, kSearchAxisCount>;

  // The per-axis parts of the distance; their sum plus the threads term is the distance.
  static AxisComponents Components(const Point& a, const Point& b, std::int64_t* threads_term);
  static std::int64_t PointDistance(const Point& a, const Point& b);
  // Which neighbour slot of `from` the point `to` would fill along `axis`; -1 when `to` does not
  // move along that axis.
  static int SlotOf(SearchAxis axis, const Point& from, const Point& to);

  void ComputeNeighbors();

  std::vector<Point> points_;
  std::vector<std::uint32_t> neighbor_offsets_;  // size() + 1 entries into neighbor_indices_
  std::vector<std::uint32_t> neighbor_indices_;
};

}  // namespace mmtune
