#include "tuner/problem_buffers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <type_traits>

#include "kernels/gemm_args.h"

namespace mmtune {
namespace {

// Canary values: unlikely results of any GEMM on the random operands.
template <typename T>
constexpr T kCanary = T(-98765.25);
template <>
constexpr std::int32_t kCanary<std::int32_t> = -0x5A5A5A5B;

// A NaN C: beta = 0 must not read it. Integers have no NaN; garbage makes the point in a dump.
template <typename T>
constexpr T kPoison = std::numeric_limits<T>::quiet_NaN();
template <>
constexpr std::int32_t kPoison<std::int32_t> = 0x7EADBEEF;

std::int64_t StoredElements(Layout layout, Trans trans, std::int64_t rows, std::int64_t cols,
                            std::int64_t ld) {
  const std::int64_t stored_rows = trans == Trans::kYes ? cols : rows;
  const std::int64_t stored_cols = trans == Trans::kYes ? rows : cols;
  const std::int64_t outer = layout == Layout::kRowMajor ? stored_rows : stored_cols;
  return std::max<std::int64_t>(1, outer * ld);
}

// One random value from 64 random bits. Floating: 24 random bits centred in [-1, 1), exact in
// float and double and never all zero; bf16 rounds that to nearest even. Integers: uniform over
// the type.
template <typename T>
T RandomValue(std::uint64_t bits) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return ToBFloat16(RandomValue<float>(bits));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(bits >> (64 - 8 * sizeof(T)));
  } else {
    const auto top = static_cast<std::int64_t>(bits >> 40);
    return static_cast<T>(static_cast<double>(top - (1 << 23)) / (1 << 23));
  }
}

// Each pool member writes its contiguous share first, so the OS places those pages near it.
// Values come from a generator seeded per (seed, member): reproducible for a given thread count.
template <typename T>
void FirstTouchRandom(T* data, std::int64_t count, std::uint64_t seed, ThreadPool& pool,
                      int team) {
  const std::int64_t share = (count + team - 1) / team;
  pool.Run(team, [&](int member) {
    const std::int64_t begin = std::min(count, member * share);
    const std::int64_t end = std::min(count, begin + share);
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(member));
    for (std::int64_t i = begin; i < end; ++i) data[i] = RandomValue<T>(rng());
  });
}

}  // namespace

template <typename T>
AlignedArray<T>::AlignedArray(std::size_t count) : size_(count) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  const std::size_t bytes = std::max<std::size_t>(
      kAlignment, (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment);
  void* memory = std::aligned_alloc(kAlignment, bytes);
  if (memory == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<T*>(memory));
}

template <typename T>
void AlignedArray<T>::Free::operator()(T* pointer) const {
  std::free(pointer);
}

template <typename TA, typename TB, typename TC>
ProblemBuffers<TA, TB, TC>::ProblemBuffers(const Problem& problem, int copies, std::uint64_t seed,
                                           ThreadPool& pool)
    : problem_(problem) {
  const Layout layout = problem.layout;
  lda_ = MinLeadingDimension(layout, problem.trans_a, problem.m, problem.k);
  ldb_ = MinLeadingDimension(layout, problem.trans_b, problem.k, problem.n);
  ldc_ = MinLeadingDimension(layout, Trans::kNo, problem.m, problem.n);
  a_elements_ = StoredElements(layout, problem.trans_a, problem.m, problem.k, lda_);
  b_elements_ = StoredElements(layout, problem.trans_b, problem.k, problem.n, ldb_);
  c_elements_ = StoredElements(layout, Trans::kNo, problem.m, problem.n, ldc_);
  const int team = std::clamp(problem.threads, 1, pool.size());
  sets_.resize(static_cast<std::size_t>(std::max(1, copies)));
  std::uint64_t stream = seed;
  for (int copy = 0; copy < static_cast<int>(sets_.size()); ++copy) {
    OperandSet& set = sets_[static_cast<std::size_t>(copy)];
    set.a = AlignedArray<TA>(static_cast<std::size_t>(Shift<TA>(copy) + a_elements_));
    set.b = AlignedArray<TB>(static_cast<std::size_t>(Shift<TB>(copy) + b_elements_));
    set.c = AlignedArray<TC>(
        static_cast<std::size_t>(kCOffset + Shift<TC>(copy) + c_elements_ + kCanaryElements));
    TA* a_at = set.a.data() + Shift<TA>(copy);
    TB* b_at = set.b.data() + Shift<TB>(copy);
    FirstTouchRandom(a_at, a_elements_, ++stream, pool, team);
    FirstTouchRandom(b_at, b_elements_, ++stream, pool, team);
    FirstTouchRandom(c(copy), c_elements_, ++stream, pool, team);
    std::fill_n(c(copy) - kCanaryElements, kCanaryElements, kCanary<TC>);
    std::fill_n(c(copy) + c_elements_, kCanaryElements, kCanary<TC>);
    // Every copy holds the same operands, so any copy verifies like the first.
    if (copy > 0) {
      std::memcpy(a_at, a(0), sizeof(TA) * static_cast<std::size_t>(a_elements_));
      std::memcpy(b_at, b(0), sizeof(TB) * static_cast<std::size_t>(b_elements_));
    }
  }
  c_initial_ = AlignedArray<TC>(static_cast<std::size_t>(c_elements_));
  FirstTouchRandom(c_initial_.data(), c_elements_, ++stream, pool, team);
}

template <typename TA, typename TB, typename TC>
typename ProblemBuffers<TA, TB, TC>::ItemPointers ProblemBuffers<TA, TB, TC>::Items() {
  ItemPointers items;
  for (int copy = 0; copy < copies(); ++copy) {
    items.a.push_back(a(copy));
    items.b.push_back(b(copy));
    items.c.push_back(c(copy));
  }
  return items;
}

template <typename TA, typename TB, typename TC>
void ProblemBuffers<TA, TB, TC>::ResetC(int copy) {
  std::memcpy(c(copy), c_initial_.data(), sizeof(TC) * static_cast<std::size_t>(c_elements_));
}

template <typename TA, typename TB, typename TC>
void ProblemBuffers<TA, TB, TC>::PoisonC(int copy) {
  std::fill_n(c(copy), c_elements_, kPoison<TC>);
}

template <typename TA, typename TB, typename TC>
bool ProblemBuffers<TA, TB, TC>::CanariesIntact(int copy) const {
  const TC* before = c(copy) - kCanaryElements;
  const TC* after = before + kCanaryElements + c_elements_;
  for (std::int64_t i = 0; i < kCanaryElements; ++i) {
    if (before[i] != kCanary<TC> || after[i] != kCanary<TC>) return false;
  }
  return true;
}

int ColdCacheCopies(const Problem& problem, std::uint64_t llc_bytes,
                    std::uint64_t memory_limit_bytes) {
  const double footprint = problem.OperandBytes();
  const double wanted = std::ceil(2.0 * static_cast<double>(llc_bytes) / std::max(1.0, footprint));
  const double affordable = static_cast<double>(memory_limit_bytes) / std::max(1.0, footprint);
  return static_cast<int>(std::clamp(std::min(wanted + 1.0, affordable), 2.0, 4096.0));
}

template class AlignedArray<float>;
template class AlignedArray<double>;
template class AlignedArray<BFloat16>;
template class AlignedArray<std::uint8_t>;
template class AlignedArray<std::int8_t>;
template class AlignedArray<std::int32_t>;
template class ProblemBuffers<float>;
template class ProblemBuffers<double>;
template class ProblemBuffers<BFloat16, BFloat16, float>;
template class ProblemBuffers<std::uint8_t, std::int8_t, std::int32_t>;

}  // namespace mmtune
