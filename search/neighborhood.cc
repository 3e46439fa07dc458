#include "search/neighborhood.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <tuple>

namespace mmtune {
namespace {

std::int64_t FixedLog2(int value) {
  return value <= 0 ? 0
                    : static_cast<std::int64_t>(
                          std::lround(std::log2(static_cast<double>(value)) *
                                      static_cast<double>(Neighborhood::kUnit)));
}

// Interns keys in order of first appearance, so ids depend only on the space's order.
template <typename Key>
class Interner {
 public:
  int Id(const Key& key) {
    const auto [it, inserted] = ids_.emplace(key, static_cast<int>(ids_.size()));
    return it->second;
  }
  int count() const { return static_cast<int>(ids_.size()); }

 private:
  std::map<Key, int> ids_;
};

bool IsBlockAxis(SearchAxis axis) {
  return axis == SearchAxis::kKc || axis == SearchAxis::kMc || axis == SearchAxis::kNc;
}
bool IsKernelAxis(SearchAxis axis) {
  return axis == SearchAxis::kIsa || axis == SearchAxis::kMr || axis == SearchAxis::kNr ||
         axis == SearchAxis::kKUnroll;
}
bool IsScheduleAxis(SearchAxis axis) {
  return axis == SearchAxis::kFamily || axis == SearchAxis::kPrefetch ||
         axis == SearchAxis::kParallelLoop;
}

// One neighbour slot of a config being filled: the best candidate seen so far.
struct Slot {
  SearchAxis axis;
  int slot;
  std::uint32_t index;
  std::int64_t score;     // what the slot minimizes
  std::int64_t distance;  // from the config, for ordering the final list
};

// A "balanced" neighbour weighs off-axis changes four times as much as the step along the axis:
// it moves along its axis and stays put elsewhere, even if that takes a longer step.
constexpr std::int64_t kOffAxisWeight = 4;
// A "step" neighbour takes the smallest step along its axis first and then the least change
// elsewhere, so that every value of an ordered axis is reachable one step at a time (in a
// generated space the balanced neighbour can skip a kc whose mc candidates differ).
constexpr std::int64_t kStepWeight = std::int64_t{1} << 32;
// Slot numbers: ordered axes use the four below, categorical axes kCategoricalSlot + value.
constexpr int kBalancedDown = 0;
constexpr int kBalancedUp = 1;
constexpr int kStepDown = 2;
constexpr int kStepUp = 3;
constexpr int kCategoricalSlot = 4;

}  // namespace

Neighborhood::Neighborhood(const std::vector<KernelConfig>& space) {
  // Configs without cache blocks (direct, GEMV) get the blocks of the first packed config (the
  // analytical default when it is packed). Then a jump from direct to packed lands on blocks
  // near the model's, and two direct configs do not differ in blocks at all, except in kc where
  // the space splits K into direct blocks: the whole K then counts as twice the longest block,
  // one step past it along kc.
  int ref_kc = 0, ref_mc = 0, ref_nc = 0;
  for (const KernelConfig& c : space) {
    if (c.family == KernelFamily::kPacked) {
      ref_kc = c.kc;
      ref_mc = c.mc;
      ref_nc = c.nc;
      break;
    }
  }
  int longest_direct_block = 0;
  for (const KernelConfig& c : space) {
    if (c.family == KernelFamily::kDirect) {
      longest_direct_block = std::max(longest_direct_block, c.kc);
    }
  }
  const int whole_k_kc = longest_direct_block > 0 ? 2 * longest_direct_block : ref_kc;
  Interner<std::tuple<int, int, int>> prefetches;
  Interner<std::tuple<int, int, int, int>> loops;  // (loop, tile order, A in place, C sums buffer)
  Interner<std::tuple<int, int, int, int>> kernels;
  Interner<std::tuple<int, int, int, int>> schedules;
  points_.reserve(space.size());
  for (const KernelConfig& c : space) {
    const bool packed = c.family == KernelFamily::kPacked;
    Point p;
    p.family = static_cast<int>(c.family);
    p.isa = static_cast<int>(c.isa);
    p.mr = c.mr;
    p.nr = c.nr;
    p.k_unroll = c.k_unroll;
    p.log_mr = FixedLog2(c.mr);
    p.log_nr = FixedLog2(c.nr);
    p.log_k_unroll = FixedLog2(c.k_unroll);
    const bool direct = c.family == KernelFamily::kDirect;
    p.log_kc = FixedLog2(packed ? c.kc : direct ? (c.kc > 0 ? c.kc : whole_k_kc) : ref_kc);
    p.log_mc = FixedLog2(packed ? c.mc : ref_mc);
    p.log_nc = FixedLog2(packed ? c.nc : ref_nc);
    p.prefetch = prefetches.Id({c.prefetch_a, c.prefetch_b, c.prefetch_c ? 1 : 0});
    p.loop = loops.Id({static_cast<int>(c.parallel_loop), static_cast<int>(c.tile_order),
                       c.a_in_place ? 1 : 0, c.c_buffer ? 1 : 0});
    p.log_threads = FixedLog2(c.threads);
    p.kernel_key = kernels.Id({p.isa, c.mr, c.nr, c.k_unroll});
    p.schedule_key = schedules.Id({p.family, p.prefetch, p.loop, c.threads});
    points_.push_back(p);
  }
  ComputeNeighbors();
}

Neighborhood::AxisComponents Neighborhood::Components(const Point& a, const Point& b,
                                                      std::int64_t* threads_term) {
  auto abs_diff = [](std::int64_t x, std::int64_t y) { return x > y ? x - y : y - x; };
  AxisComponents parts{};
  // A family change redoes everything about how the loops run, so it weighs like four doublings;
  // an ISA level changes register count and width, like two.
  parts[static_cast<int>(SearchAxis::kFamily)] = a.family != b.family ? 4 * kUnit : 0;
  parts[static_cast<int>(SearchAxis::kIsa)] = 2 * kUnit * abs_diff(a.isa, b.isa);
  parts[static_cast<int>(SearchAxis::kMr)] = abs_diff(a.log_mr, b.log_mr);
  parts[static_cast<int>(SearchAxis::kNr)] = abs_diff(a.log_nr, b.log_nr);
  // k unroll only trades loop overhead for code size: the 1 -> 4 step counts as one doubling.
  parts[static_cast<int>(SearchAxis::kKUnroll)] = abs_diff(a.log_k_unroll, b.log_k_unroll) / 2;
  parts[static_cast<int>(SearchAxis::kKc)] = abs_diff(a.log_kc, b.log_kc);
  parts[static_cast<int>(SearchAxis::kMc)] = abs_diff(a.log_mc, b.log_mc);
  parts[static_cast<int>(SearchAxis::kNc)] = abs_diff(a.log_nc, b.log_nc);
  parts[static_cast<int>(SearchAxis::kPrefetch)] = a.prefetch != b.prefetch ? kUnit : 0;
  parts[static_cast<int>(SearchAxis::kParallelLoop)] = a.loop != b.loop ? kUnit : 0;
  *threads_term = 2 * abs_diff(a.log_threads, b.log_threads);
  return parts;
}

std::int64_t Neighborhood::PointDistance(const Point& a, const Point& b) {
  std::int64_t total = 0;
  for (std::int64_t part : Components(a, b, &total)) total += part;
  return total;
}

std::int64_t Neighborhood::Distance(std::size_t a, std::size_t b) const {
  assert(a < size() && b < size());
  return PointDistance(points_[a], points_[b]);
}

int Neighborhood::SlotOf(SearchAxis axis, const Point& from, const Point& to) {
  auto ordered = [](auto from_value, auto to_value) {
    return from_value == to_value ? -1 : (to_value < from_value ? kBalancedDown : kBalancedUp);
  };
  auto categorical = [](int from_value, int to_value) {
    return from_value == to_value ? -1 : kCategoricalSlot + to_value;
  };
  switch (axis) {
    case SearchAxis::kFamily: return categorical(from.family, to.family);
    case SearchAxis::kIsa: return ordered(from.isa, to.isa);
    case SearchAxis::kMr: return ordered(from.mr, to.mr);
    case SearchAxis::kNr: return ordered(from.nr, to.nr);
    case SearchAxis::kKUnroll: return ordered(from.k_unroll, to.k_unroll);
    case SearchAxis::kKc: return ordered(from.log_kc, to.log_kc);
    case SearchAxis::kMc: return ordered(from.log_mc, to.log_mc);
    case SearchAxis::kNc: return ordered(from.log_nc, to.log_nc);
    case SearchAxis::kPrefetch: return categorical(from.prefetch, to.prefetch);
    case SearchAxis::kParallelLoop: return categorical(from.loop, to.loop);
  }
  return -1;
}

void Neighborhood::ComputeNeighbors() {
  const std::size_t n = points_.size();
  // Buckets hold the configs of one (kernel, schedule) pair; they differ only in blocks.
  std::map<std::pair<int, int>, std::size_t> bucket_of_keys;
  std::vector<std::vector<std::uint32_t>> buckets;
  std::vector<std::size_t> bucket_of(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, inserted] = bucket_of_keys.emplace(
        std::pair{points_[i].kernel_key, points_[i].schedule_key}, buckets.size());
    if (inserted) buckets.emplace_back();
    buckets[it->second].push_back(static_cast<std::uint32_t>(i));
    bucket_of[i] = it->second;
  }
  int kernel_count = 0;
  int schedule_count = 0;
  for (const Point& p : points_) {
    kernel_count = std::max(kernel_count, p.kernel_key + 1);
    schedule_count = std::max(schedule_count, p.schedule_key + 1);
  }
  std::vector<std::vector<std::size_t>> buckets_by_kernel(static_cast<std::size_t>(kernel_count));
  std::vector<std::vector<std::size_t>> buckets_by_schedule(
      static_cast<std::size_t>(schedule_count));
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Point& first = points_[buckets[b].front()];
    buckets_by_kernel[static_cast<std::size_t>(first.kernel_key)].push_back(b);
    buckets_by_schedule[static_cast<std::size_t>(first.schedule_key)].push_back(b);
  }
  auto block_distance = [](const Point& a, const Point& b) {
    auto abs_diff = [](std::int64_t x, std::int64_t y) { return x > y ? x - y : y - x; };
    return abs_diff(a.log_kc, b.log_kc) + abs_diff(a.log_mc, b.log_mc) +
           abs_diff(a.log_nc, b.log_nc);
  };

  // The slot table is dense (axis x slot number), so filling a slot is one lookup; this loop
  // runs for every candidate pair and dominates the cost.
  int max_value = 0;
  for (const Point& p : points_) {
    max_value = std::max({max_value, p.family, p.prefetch, p.loop});
  }
  const std::size_t slots_per_axis = static_cast<std::size_t>(kCategoricalSlot + max_value + 1);
  constexpr std::uint32_t kEmpty = static_cast<std::uint32_t>(-1);
  std::vector<Slot> table(kSearchAxisCount * slots_per_axis);
  std::vector<Slot> slots;

  neighbor_offsets_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Point& from = points_[i];
    for (Slot& s : table) s.index = kEmpty;
    auto update = [&](SearchAxis axis, int slot, std::uint32_t j, std::int64_t score,
                      std::int64_t distance) {
      Slot& s = table[static_cast<std::size_t>(axis) * slots_per_axis +
                      static_cast<std::size_t>(slot)];
      if (s.index == kEmpty || score < s.score || (score == s.score && j < s.index)) {
        s = Slot{axis, slot, j, score, distance};
      }
    };
    // Offers `j` for every axis of `accepts` along which it moves away from `i`.
    auto offer = [&](std::uint32_t j, bool (*accepts)(SearchAxis)) {
      const Point& to = points_[j];
      std::int64_t total = 0;
      const AxisComponents parts = Components(from, to, &total);
      for (std::int64_t part : parts) total += part;
      for (int a = 0; a < kSearchAxisCount; ++a) {
        const auto axis = static_cast<SearchAxis>(a);
        if (!accepts(axis)) continue;
        const int slot = SlotOf(axis, from, to);
        if (slot < 0) continue;
        const std::int64_t off_axis = total - parts[a];
        update(axis, slot, j, kOffAxisWeight * off_axis + parts[a], total);
        if (slot < kCategoricalSlot) {
          update(axis, slot == kBalancedDown ? kStepDown : kStepUp, j,
                 kStepWeight * parts[a] + off_axis, total);
        }
      }
    };
    // Block axes: the other configs of the same bucket.
    for (std::uint32_t j : buckets[bucket_of[i]]) {
      if (j != i) offer(j, IsBlockAxis);
    }
    // Kernel and schedule axes: within another bucket every config is the same distance from
    // `i` except for the blocks, so only its config with the nearest blocks can win a slot.
    auto offer_nearest_of = [&](std::size_t bucket, bool (*accepts)(SearchAxis)) {
      std::uint32_t nearest = buckets[bucket].front();
      std::int64_t nearest_distance = block_distance(from, points_[nearest]);
      for (std::uint32_t j : buckets[bucket]) {
        const std::int64_t distance = block_distance(from, points_[j]);
        if (distance < nearest_distance) {
          nearest = j;
          nearest_distance = distance;
        }
      }
      offer(nearest, accepts);
    };
    for (std::size_t b : buckets_by_schedule[static_cast<std::size_t>(from.schedule_key)]) {
      if (b != bucket_of[i]) offer_nearest_of(b, IsKernelAxis);
    }
    for (std::size_t b : buckets_by_kernel[static_cast<std::size_t>(from.kernel_key)]) {
      if (b != bucket_of[i]) offer_nearest_of(b, IsScheduleAxis);
    }
    slots.clear();
    for (const Slot& s : table) {
      if (s.index != kEmpty) slots.push_back(s);
    }
    std::sort(slots.begin(), slots.end(), [](const Slot& x, const Slot& y) {
      return std::tie(x.distance, x.index) < std::tie(y.distance, y.index);
    });
    const std::size_t begin = neighbor_indices_.size();
    for (const Slot& s : slots) {
      const auto first = neighbor_indices_.begin() + static_cast<std::ptrdiff_t>(begin);
      if (std::find(first, neighbor_indices_.end(), s.index) == neighbor_indices_.end()) {
        neighbor_indices_.push_back(s.index);
      }
    }
    neighbor_offsets_[i + 1] = static_cast<std::uint32_t>(neighbor_indices_.size());
  }
}

std::span<const std::uint32_t> Neighborhood::Neighbors(std::size_t index) const {
  assert(index < size());
  return std::span<const std::uint32_t>(neighbor_indices_)
      .subspan(neighbor_offsets_[index], neighbor_offsets_[index + 1] - neighbor_offsets_[index]);
}

std::size_t Neighborhood::NearestMix(std::size_t a, std::size_t b, std::uint32_t groups_from_b,
                                     const std::function<bool(std::size_t)>& allowed) const {
  assert(a < size() && b < size());
  auto from_b = [&](ParameterGroup group) {
    return (groups_from_b >> static_cast<int>(group)) & 1u;
  };
  Point target = points_[a];
  const Point& other = points_[b];
  if (from_b(ParameterGroup::kFamily)) target.family = other.family;
  if (from_b(ParameterGroup::kKernel)) {
    target.isa = other.isa;
    target.log_mr = other.log_mr;
    target.log_nr = other.log_nr;
    target.log_k_unroll = other.log_k_unroll;
  }
  if (from_b(ParameterGroup::kKc)) target.log_kc = other.log_kc;
  if (from_b(ParameterGroup::kMc)) target.log_mc = other.log_mc;
  if (from_b(ParameterGroup::kNc)) target.log_nc = other.log_nc;
  if (from_b(ParameterGroup::kPrefetch)) target.prefetch = other.prefetch;
  if (from_b(ParameterGroup::kParallelLoop)) target.loop = other.loop;

  std::size_t best = size();
  std::int64_t best_distance = 0;
  for (std::size_t j = 0; j < size(); ++j) {
    if (!allowed(j)) continue;
    const std::int64_t distance = PointDistance(target, points_[j]);
    if (best == size() || distance < best_distance) {
      best = j;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace mmtune
